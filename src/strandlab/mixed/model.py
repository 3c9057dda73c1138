"""The mixed model's own data: a scene's simplicial meshes compiled to flat arrays, and its state.

Coordinates ``q`` [N]: ``q[3 v : 3 v + 3]`` the position [m] of vertex ``v`` (every simplicial
mesh of the scene, concatenated, ``V`` vertices), then ``q[3 V + r]`` the material angle [rad] of
rod edge ``r`` (``R`` rod edges, oriented along their chains, :mod:`strandlab.mixed.rod_graph`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["MixedModel", "MixedState"]


@dataclass(frozen=True, eq=False)
class MixedModel:
    """Everything about a scene that does not change during a simulation.

    Shapes: ``V`` vertices, ``R`` rod edges, ``B`` rod bend-twist stencils, ``T`` shell
    triangles, ``H`` shell hinges, ``K`` tetrahedra, ``N = 3 V + R`` coordinates.
    """

    scene: object                       #: The Scene compiled
    gravity: np.ndarray                 #: [m/s^2], [3]
    n_vertices: int
    mesh_vertex_start: np.ndarray       #: First vertex of each simplicial mesh, [M + 1]
    rest_positions: np.ndarray          #: [m], [V, 3]
    # rods
    rod_edges: np.ndarray               #: Oriented (v0, v1), int [R, 2]
    rod_mesh_index: np.ndarray          #: Index of each rod edge in its mesh's rod_edges, [R]
    rod_flipped: np.ndarray             #: Whether it was reversed against the input, bool [R]
    stretch_dofs: np.ndarray            #: int [R, 6]
    rest_length: np.ndarray             #: [m], [R]
    stretch_stiffness: np.ndarray       #: E A [N], [R]
    bend_dofs: np.ndarray               #: int [B, 11]
    bend_edges: np.ndarray              #: int [B, 2]
    rest_curvature: np.ndarray          #: [B, 4]
    rest_twist: np.ndarray              #: [rad], [B]
    voronoi_length: np.ndarray          #: [m], [B]
    bend_stiffness: np.ndarray          #: (E I2, E I1) [N m^2], [B, 2]
    twist_stiffness: np.ndarray         #: G J [N m^2], [B]
    a1_0: np.ndarray                    #: Reference directors at q0, [R, 3]
    rod_radius: np.ndarray              #: Contact radius [m], [R]
    rod_section_stiffness: np.ndarray   #: (E I1, E I2, G J) per rod edge [N m^2], [R, 3]
    junction_pairs: np.ndarray          #: Rod edges meeting at junctions, pairwise, int [J, 2]
    junction_vertex: np.ndarray         #: Their junction vertex, [J]
    # shells
    triangles: np.ndarray               #: int [T, 3]
    triangle_material: np.ndarray       #: (E, nu, thickness, density) per triangle, [T, 4]
    hinges: np.ndarray                  #: (x0, x1, x2, x3): edge x0-x1, wings x2, x3, int [H, 4]
    hinge_material: np.ndarray          #: (E, nu, thickness) of each hinge, [H, 3]
    # solids
    tets: np.ndarray                    #: int [K, 4]
    tet_material: np.ndarray            #: (E, nu, density) per tetrahedron, [K, 3]
    # everything
    mass: np.ndarray                    #: Diagonal mass [kg | kg m^2], [N]
    q0: np.ndarray                      #: [N]
    v0: np.ndarray                      #: [N]
    fixed: np.ndarray                   #: Held coordinates, bool [N]
    release_time: np.ndarray            #: When each held coordinate is let go [s] (inf), [N]
    drive_vertex: np.ndarray            #: Vertices moved by frames, [Dv]
    drive_vertex_frame: np.ndarray      #: Their frames, [Dv]
    drive_vertex_local: np.ndarray      #: Their positions in the frame [m], [Dv, 3]
    drive_edge: np.ndarray              #: Rod edges a frame turns, [De]
    drive_edge_frame: np.ndarray        #: Their frames, [De]
    drive_edge_local: np.ndarray        #: Their d1 in the frame (unit), [De, 3]
    check_edges: np.ndarray             #: Every mesh edge (v0, v1) for the strain bound, [G, 2]
    check_rest_length: np.ndarray       #: Their rest lengths [m], [G]
    vertex_radius: np.ndarray           #: Contact radius of each vertex [m], [V]
    planes: np.ndarray                  #: (point, unit normal), [P, 6]
    spheres: np.ndarray                 #: (centre, radius), [Q, 4]
    capsules: np.ndarray                #: (a, b, radius), [C, 7]
    collider_friction: np.ndarray       #: [P + Q + C]
    joints: dict = field(default_factory=dict)  #: Connection stencils by kind (compile.py)

    def __post_init__(self):
        for v in self.__dict__.values():
            if isinstance(v, np.ndarray):
                v.setflags(write=False)

    @property
    def n_rod_edges(self) -> int:
        return int(len(self.rod_edges))

    @property
    def n_dofs(self) -> int:
        return 3 * self.n_vertices + self.n_rod_edges

    @property
    def edge_dof(self) -> np.ndarray:
        """Slot of each rod edge's angle in ``q``, [R]."""
        return 3 * self.n_vertices + np.arange(self.n_rod_edges)

    def positions(self, q: np.ndarray) -> np.ndarray:
        """The vertex positions [V, 3] (a view of ``q``)."""
        return q[: 3 * self.n_vertices].reshape(-1, 3)

    def state(self, n_joint_angles: int = 0) -> MixedState:
        """A new state at the initial configuration."""
        return MixedState(q=self.q0.copy(), v=self.v0.copy(), a1=self.a1_0.copy(),
                          ref_twist=self.rest_twist.copy(),
                          joint_angle=np.zeros(n_joint_angles), time=0.0, step=0,
                          q_prev=self.q0.copy(), v_prev=self.v0.copy(), h_prev=0.0)


@dataclass(eq=False)
class MixedState:
    """What changes during a simulation.

    q, v : coordinates [m | rad] and velocities [m/s | rad/s], [N].
    a1 : reference directors of the rod edges, [R, 3]; ref_twist : of the rod stencils [rad], [B].
    joint_angle : the stored angle of every connection stencil with an angle history [rad]
        (the incremental updates of section 3.1), [A].
    q_prev, v_prev, h_prev : the start and length [s] of the last step, which a BDF2 step
        (``MixedSettings.integrator = "bdf2"``) reads; ``h_prev = 0``: none (a state that was
        set by hand, or a new one), and the next step is backward Euler's.  Set ``h_prev`` to 0
        after changing ``q`` or ``v`` by hand.
    """

    q: np.ndarray
    v: np.ndarray
    a1: np.ndarray
    ref_twist: np.ndarray
    joint_angle: np.ndarray
    time: float = 0.0
    step: int = 0
    q_prev: np.ndarray | None = None
    v_prev: np.ndarray | None = None
    h_prev: float = 0.0

    def __post_init__(self):
        if self.q_prev is None:
            self.q_prev = self.q.copy()
        if self.v_prev is None:
            self.v_prev = self.v.copy()

    def assign(self, other: MixedState) -> None:
        for k in ("q", "v", "a1", "ref_twist", "joint_angle", "q_prev", "v_prev"):
            getattr(self, k)[...] = getattr(other, k)
        self.time, self.step, self.h_prev = other.time, other.step, other.h_prev
