"""The discrete-elastic-rods solver's own model (a Scene compiled to flat arrays) and state.

Generalized coordinates ``q`` interleave vertex positions and edge angles strand by strand
(Bergou et al. 2010; ``../shared/notes/sag_free_formulation.md``, "One strand"): an open strand
of ``n`` vertices holds ``[x_0 (3), theta_0, x_1 (3), theta_1, ..., x_{n-1} (3)]`` (``4n - 1``
entries), a closed one also ``theta_{n-1}`` of its closing edge (``4n``).  ``vertex_dof[v]`` is
the index of ``x_v``'s first coordinate, ``edge_dof[e]`` that of ``theta_e``.

Stencils: one stretch stencil per edge (its two vertices, 6 coordinates) and one bend-twist
stencil per inner vertex of an open strand, or per vertex of a closed one (the vertex with its
two edges: ``x_{i-1}, theta_{j0}, x_i, theta_{j1}, x_{i+1}``, 11 coordinates).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DERModel", "DERState"]


@dataclass(frozen=True, eq=False)
class DERModel:
    """Everything about a scene that does not change during a simulation (arrays read-only).

    Shapes: ``S`` strands, ``V`` vertices, ``E`` edges, ``B`` bend-twist stencils, ``N`` = n_dofs.
    """

    scene: object                       #: The Scene compiled (or None)
    gravity: np.ndarray                 #: [m/s^2], [3]
    # layout
    strand_vertex_start: np.ndarray     #: [S + 1]
    strand_edge_start: np.ndarray       #: [S + 1]
    strand_dof_start: np.ndarray        #: [S + 1]
    strand_bend_start: np.ndarray       #: [S + 1]
    strand_closed: np.ndarray           #: bool [S]
    vertex_dof: np.ndarray              #: q index of each vertex's x, [V]
    vertex_strand: np.ndarray           #: [V]
    edge_dof: np.ndarray                #: q index of each edge's angle, [E]
    edge_v0: np.ndarray                 #: First vertex of each edge, [E]
    edge_v1: np.ndarray                 #: Second vertex, [E]
    # stretching (one stencil per edge)
    stretch_dofs: np.ndarray            #: int [E, 6]
    rest_length: np.ndarray             #: lbar [m], [E]
    stretch_stiffness: np.ndarray       #: k_s = E A [N], [E]
    # bending and twisting (one stencil per inner vertex)
    bend_dofs: np.ndarray               #: int [B, 11]
    bend_edges: np.ndarray              #: The stencil's two edges (j0, j1), int [B, 2]
    bend_vertex: np.ndarray             #: Its centre vertex, [B]
    voronoi_length: np.ndarray          #: ltilde = (lbar_j0 + lbar_j1) / 2 [m], [B]
    bend_stiffness: np.ndarray          #: (k1, k2) = (E I2, E I1) [N m^2], [B, 2]
    twist_stiffness: np.ndarray         #: k_t = G J [N m^2], [B]
    rest_curvature: np.ndarray          #: kappabar (4-D curvature) [1], [B, 4]
    rest_twist: np.ndarray              #: taubar [rad], [B]
    # inertia
    mass: np.ndarray                    #: Diagonal mass [kg | kg m^2], [N]
    # initial state
    q0: np.ndarray                      #: [N]
    v0: np.ndarray                      #: [N]
    a1_0: np.ndarray                    #: Reference directors at q0, unit, [E, 3]
    ref_twist0: np.ndarray              #: Reference twist at q0 [rad], [B]
    # boundary conditions
    fixed: np.ndarray                   #: Dirichlet coordinates, bool [N]
    drive_vertex: np.ndarray            #: Vertices moved by frames, [Dv]
    drive_vertex_frame: np.ndarray      #: Their frames, [Dv]
    drive_vertex_local: np.ndarray      #: Their positions in the frame [m], [Dv, 3]
    drive_edge: np.ndarray              #: Edges whose material frame a frame turns, [De]
    drive_edge_frame: np.ndarray        #: Their frames, [De]
    drive_edge_local: np.ndarray        #: Their d1 in the frame (unit), [De, 3]
    # loads and contact
    load_vertex: np.ndarray             #: Vertex of each scene load, [L]
    vertex_radius: np.ndarray           #: Contact radius [m], [V]
    vertex_friction: np.ndarray         #: Strand friction (NaN: the collider's), [V]
    planes: np.ndarray                  #: (point, unit normal), [P, 6]
    spheres: np.ndarray                 #: (centre, radius), [Q, 4]
    capsules: np.ndarray                #: (a, b, radius), [C, 7]
    collider_friction: np.ndarray       #: [P + Q + C]

    @property
    def n_strands(self) -> int:
        return len(self.strand_closed)

    @property
    def n_vertices(self) -> int:
        return len(self.vertex_dof)

    @property
    def n_edges(self) -> int:
        return len(self.edge_dof)

    @property
    def n_dofs(self) -> int:
        return len(self.q0)

    @property
    def n_bend(self) -> int:
        return len(self.bend_vertex)

    def positions(self, q: np.ndarray) -> np.ndarray:
        """Vertex positions [V, 3] of coordinates ``q`` (a copy)."""
        return q[self.vertex_dof[:, None] + np.arange(3)]

    def state(self) -> DERState:
        """A new state at the initial configuration."""
        return DERState(q=self.q0.copy(), v=self.v0.copy(), a1=self.a1_0.copy(),
                        ref_twist=self.ref_twist0.copy(), time=0.0, step=0)


@dataclass(eq=False)
class DERState:
    """What changes during a simulation.

    q : generalized coordinates [m | rad], [N].
    v : their velocities [m/s | rad/s], [N].
    a1 : reference directors of the edges (time-parallel transported), unit, [E, 3].
    ref_twist : reference twist of each bend-twist stencil [rad], [B] (unwrapped).
    """

    q: np.ndarray
    v: np.ndarray
    a1: np.ndarray
    ref_twist: np.ndarray
    time: float = 0.0
    step: int = 0

    def assign(self, other: DERState) -> None:
        """Copy ``other`` into this state."""
        self.q[...] = other.q
        self.v[...] = other.v
        self.a1[...] = other.a1
        self.ref_twist[...] = other.ref_twist
        self.time = other.time
        self.step = other.step
