"""The chain-shape-matching model (a Scene compiled to flat arrays), its state and the named
argument groups of its kernels.

Layout: the strand vertices of the scene, concatenated strand after strand
(``strand_vertex_start``), are the first particles, then the vertices of the scene's meshes,
each mesh a shape-matched cluster (``cluster_start``; :mod:`.cluster_model`); the scene's edges
(``strand_edge_start``) are the segments; edge ``vertex_edge[v]`` joins vertex ``v`` to
``v + 1`` (-1 after a strand's last vertex and for cluster particles).  A *chain* is a run of
vertices joined by segments that are not torn: at the start every strand is one chain; a tear
splits a chain into two, which the kernels step as two independent strings (``chain_start``,
``chain_strand`` in the state).

Kernels read ``model`` (:class:`ModelArrays`, constant), ``params`` (:class:`StepParams`, this
substep's scalars), read and write ``state`` (:class:`StateArrays`) in place and use
``scratch`` (:class:`Scratch`, solver-owned work memory).  Shapes: ``V`` particles (strand
vertices and cluster particles), ``E`` edges, ``D`` driven particles, ``T`` driven (clamped)
twist angles (frames' then ties'), ``C`` clusters, ``K`` ties.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

__all__ = ["ModelArrays", "StateArrays", "Scratch", "StepParams", "CSMModel", "CSMState",
           "TENSION_IMPULSE", "TENSION_LENGTH"]

TENSION_IMPULSE = 0   #: tension from the length corrections each segment's own constraint made
TENSION_LENGTH = 1    #: tension from the unconstrained and constrained lengths (eq. 8 literally)


class ModelArrays(NamedTuple):
    """Constant model arrays (read only)."""

    gravity: np.ndarray            #: [m/s^2], [3]
    mass: np.ndarray               #: Particle masses [kg], [V]
    inv_mass: np.ndarray           #: 1 / mass, 0 for held (kinematic) particles [1/kg], [V]
    vertex_edge: np.ndarray        #: Segment from v to v + 1 or -1, int [V]
    vertex_drive: np.ndarray       #: Row of ``Scratch.drive_pos`` holding v, or -1, int [V]
    vertex_radius: np.ndarray      #: Contact radius [m], [V]
    vertex_friction: np.ndarray    #: Friction of the strand (NaN: the collider's), [V]
    sm_half_width: np.ndarray      #: Shape-matching region half-width w (>= 1), int [V]
    twist_stiffness: np.ndarray    #: beta = G J at inner vertices [N m^2], [V]
    rest_edge: np.ndarray          #: Rest segment vectors [m], [E, 3]
    rest_length: np.ndarray        #: Rest lengths L0 [m], [E]
    edge_mass: np.ndarray          #: Segment masses rho A0 L0 [kg] (twist weights), [E]
    area0: np.ndarray              #: Rest section areas [m^2], [E]
    young: np.ndarray              #: Young's modulus E [Pa], [E]
    plastic_modulus: np.ndarray    #: Plastic slope of the stress-strain curve [Pa], [E]
    yield_stress: np.ndarray       #: Yield stress [Pa] (inf: never yields), [E]
    twist_half_width: np.ndarray   #: Twist region half-width w_twist (>= 1), int [E]
    rest_theta: np.ndarray         #: Rest twist angles against the twist-free frame [rad], [E]
    edge_drive: np.ndarray         #: Row of ``Scratch.twist_target`` turning e, or -1, int [E]
    planes: np.ndarray             #: (point, unit normal), [N_plane, 6]
    spheres: np.ndarray            #: (centre, radius), [N_sphere, 4]
    capsules: np.ndarray           #: (a, b, radius), [N_capsule, 7]
    collider_friction: np.ndarray  #: Per collider (planes, spheres, capsules)
    cluster_start: np.ndarray      #: First particle of each cluster, then V, int [C + 1]
    cluster_rest: np.ndarray       #: Rest offset of a cluster particle from its centre [m], [V, 3]
    cluster_compliance: np.ndarray  #: Compliance of each cluster [m/N] (0: rigid), [C]
    vertex_cluster: np.ndarray     #: Cluster of each particle or -1, int [V]
    vertex_tie: np.ndarray         #: Tie of a strand vertex or -1, int [V]
    tie_vertex: np.ndarray         #: Strand vertex of each tie, int [K]
    tie_cluster: np.ndarray        #: Cluster it is tied to, int [K]
    tie_local: np.ndarray          #: Tie point's rest offset from the cluster centre [m], [K, 3]
    tie_edge: np.ndarray           #: The tied end segment, int [K]
    tie_sign: np.ndarray           #: +1: the strand's last vertex is tied, -1: its first, [K]
    tie_twist_local: np.ndarray    #: Material direction of the tied segment, rest frame, [K, 3]


class StateArrays(NamedTuple):
    """The state as the kernels see it (updated in place)."""

    x: np.ndarray                  #: Positions [m], [V, 3]
    v: np.ndarray                  #: Velocities [m/s], [V, 3]
    theta: np.ndarray              #: Twist angles against the twist-free frame [rad], [E]
    u: np.ndarray                  #: Twist-free (Bishop) frame directions, unit, [E, 3]
    quat: np.ndarray               #: Rotation of each shape-matching region (w, x, y, z), [V, 4]
    plastic_strain: np.ndarray     #: Permanent strain of each segment, [E]
    tension: np.ndarray            #: Stored tension (estimates followed over time) [N], [E]
    torn: np.ndarray               #: Torn segments, bool [E]
    rupture: np.ndarray            #: Rupture stress of each segment [Pa], [E]
    chain_start: np.ndarray        #: First vertex of each chain, then V, int [V + 1]
    chain_strand: np.ndarray       #: Strand of each chain, int [V]
    cluster_quat: np.ndarray       #: Rotation of each cluster from its rest shape, [C, 4]


class Scratch(NamedTuple):
    """Work memory owned by the solver, allocated once."""

    x_old: np.ndarray              #: Positions at the start of the substep [m], [V, 3]
    x_free: np.ndarray             #: Positions before strain limiting [m], [V, 3]
    goal: np.ndarray               #: Sum of goal positions [m], [V, 3]
    count: np.ndarray              #: Regions of each particle, [V]
    scale: np.ndarray              #: Maximum over rest length of each segment, [E]
    sm_mass: np.ndarray            #: Particle mass in shape matching [kg], [V]
    sm_weight: np.ndarray          #: Mass factor in shape matching (contacts: heavier), [V]
    f_twist: np.ndarray            #: Twisting force [N], [V, 3]
    k_twist: np.ndarray            #: Stiffness estimate of the twisting force [N/m], [V]
    f_load: np.ndarray             #: Point loads [N], [V, 3]
    dv: np.ndarray                 #: Rebound (flicking) velocity change [m/s], [V, 3]
    lam: np.ndarray                #: Multipliers of one length pass [m kg], [E]
    lam_total: np.ndarray          #: Length multipliers (tension h^2) [m kg], [E]
    seg_len: np.ndarray            #: Segment lengths of a Newton length pass [m], [E]
    dx: np.ndarray                 #: Position changes of a Newton length pass [m], [V, 3]
    kkt: np.ndarray                #: Eliminated blocks of a Newton length pass, [V, 16]
    tri_c: np.ndarray              #: Modified upper diagonal of the direct solve, [E]
    tri_d: np.ndarray              #: Modified right-hand side of the direct solve, [E]
    dirs: np.ndarray               #: Segment directions of the direct solve, [E, 3]
    excess: np.ndarray             #: Excess lengths of the direct solve [m], [E]
    active: np.ndarray             #: Rows of the direct solve in use (1) or not (0), [E]
    tw_goal: np.ndarray            #: Sum of region increments per segment [rad], [E]
    tw_count: np.ndarray           #: Regions of each segment, [E]
    depth: np.ndarray              #: Contact depth [m], [V]
    normal: np.ndarray             #: Contact normal, [V, 3]
    mu: np.ndarray                 #: Contact friction, [V]
    drive_pos: np.ndarray          #: Targets of the held particles [m], [D, 3]
    twist_target: np.ndarray       #: Material direction of clamped segments (world), [T, 3]
    cluster_c: np.ndarray          #: Centre of each cluster [m], [C, 3]
    cluster_c0: np.ndarray         #: Its centre before the strain limiting [m], [C, 3]
    cluster_q0: np.ndarray         #: Its rotation then, [C, 4]
    cluster_inv_inertia: np.ndarray  #: Inverse inertia about it (xx, xy, xz, yy, yz, zz), [C, 6]
    cluster_torque: np.ndarray     #: Torque of the tied strands' twist [N m], [C, 3]
    tie_mass: np.ndarray           #: Rigid-body mass of the cluster at each tie, [K, 6]
    tie_dp: np.ndarray             #: Impulse on each tie not yet applied [kg m], [K, 3]
    tie_p: np.ndarray              #: Impulse of each tie's strand in this substep [kg m], [K, 3]
    chain_flag: np.ndarray         #: Per chain: length passes done (0) or going on, [V]
    tear_at: np.ndarray            #: Per chain: vertex of the segment to tear or -1, int [V]
    tear_ratio: np.ndarray         #: Per chain: its stress over its rupture stress, [V]
    group: np.ndarray              #: Union-find of chains and clusters, int [V + C]


class StepParams(NamedTuple):
    """Scalars of one substep (types fixed, so the kernels compile once)."""

    h: float                       #: Substep [s]
    alpha: float                   #: Shape-matching stiffness in (0, 1]
    damping: float                 #: Velocity factor 1 - damping h
    sm_iterations: int             #: Shape-matching passes
    length_iterations: int         #: Strain-limiting passes
    length_solver: int             #: LENGTH_GAUSS_SEIDEL or LENGTH_DIRECT
    twist_iterations: int          #: Twist-averaging passes (eqs. 1-3)
    tension_mode: int              #: TENSION_IMPULSE or TENSION_LENGTH
    tension_scale: float           #: k_stiff / (mu / h^2)
    tension_rate: float            #: Fraction of the way the stored tension follows a substep
    warm: float                    #: Warm start of the Newton length solve: 1 / tension_scale
    flicking: bool                 #: Rebound from released tension
    flick_scale: float             #: Factor on the rebound velocity
    plasticity: bool               #: Plastic elongation past the yield stress
    tearing: bool                  #: Segments tear past their rupture stress
    n_chains: int                  #: Chains in ``StateArrays.chain_start``


@dataclass(frozen=True, eq=False)
class CSMModel:
    """Everything about a scene that does not change during a simulation (arrays read-only).

    ``arrays`` holds the kernel arrays; the rest is what the solver needs around them.
    """

    arrays: ModelArrays
    strand_vertex_start: np.ndarray  #: [S + 1]
    strand_edge_start: np.ndarray    #: [S + 1]
    x0: np.ndarray                   #: Initial positions [m], [V, 3] (all particles)
    v0: np.ndarray                   #: Initial velocities [m/s], [V, 3]
    theta0: np.ndarray               #: Initial twist angles [rad], [E]
    u0: np.ndarray                   #: Initial twist-free directions, [E, 3]
    rupture_stress: np.ndarray       #: Mean rupture stress [Pa] (inf: never tears), [E]
    rupture_variation: np.ndarray    #: Relative spread of the rupture stress, [E]
    radius0: np.ndarray              #: Rest section radius of each segment [m], [E]
    drive_vertex: np.ndarray         #: Held vertex of each drive row, int [D]
    drive_frame: np.ndarray          #: Frame of each drive row (-1: fixed in place), int [D]
    drive_local: np.ndarray          #: Position in the frame's axes [m], [D, 3]
    twist_frame: np.ndarray          #: Frame turning each clamped segment, int [T]
    twist_local: np.ndarray          #: Its material direction in the frame's axes, [T, 3]
    load_vertex: np.ndarray          #: Vertex of each scene load, int [N_load]
    scene: object = None             #: The Scene compiled

    def __post_init__(self):
        for f in fields(self):
            a = getattr(self, f.name)
            if isinstance(a, np.ndarray):
                a.setflags(write=False)
        for a in self.arrays:
            if isinstance(a, np.ndarray):
                a.setflags(write=False)

    @property
    def n_strands(self) -> int:
        return int(self.strand_vertex_start.shape[0] - 1)

    @property
    def n_vertices(self) -> int:
        """Strand vertices (the scene's vertices)."""
        return int(self.strand_vertex_start[-1])

    @property
    def n_particles(self) -> int:
        """Strand vertices and cluster particles."""
        return int(self.arrays.mass.shape[0])

    @property
    def n_clusters(self) -> int:
        return int(self.arrays.cluster_start.shape[0] - 1)

    @property
    def n_ties(self) -> int:
        return int(self.arrays.tie_vertex.shape[0])

    @property
    def n_edges(self) -> int:
        return int(self.strand_edge_start[-1])


@dataclass(eq=False)
class CSMState:
    """A simulation state: the kernel arrays, the number of chains, time [s] and step."""

    arrays: StateArrays
    n_chains: int
    time: float = 0.0
    step: int = 0

    @property
    def x(self) -> np.ndarray:
        return self.arrays.x

    @property
    def v(self) -> np.ndarray:
        return self.arrays.v

    def assign(self, other: CSMState) -> None:
        """Copy ``other`` into this state's arrays."""
        for a, b in zip(self.arrays, other.arrays):
            a[...] = b
        self.n_chains, self.time, self.step = other.n_chains, other.time, other.step

    def copy(self) -> CSMState:
        return CSMState(StateArrays(*(a.copy() for a in self.arrays)), self.n_chains,
                        self.time, self.step)
