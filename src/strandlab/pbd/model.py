"""The position-based solver's own model (a Scene compiled to flat arrays; frozen) and state.

Point layout: the centreline vertices of all strands come first, strand after strand
(``strand_vertex_start``); then one ghost point per edge, in edge order (ghost of edge ``e`` is
point ``n_vertices + e``); then the points of frames, meshes and rigid bodies.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = ["PBDModel", "PBDState", "POINT_VERTEX", "POINT_GHOST", "POINT_FRAME", "POINT_MESH",
           "POINT_BODY"]

POINT_VERTEX = 0
POINT_GHOST = 1
POINT_FRAME = 2
POINT_MESH = 3
POINT_BODY = 4


@dataclass(frozen=True, eq=False)
class PBDModel:
    """Everything about a scene that does not change during a simulation.

    Arrays are read-only.  Shapes use ``P`` points, ``S`` strands, ``E`` edges, ``O`` interior
    orientation elements, ``C`` coupling orientation constraints, ``F`` kinematic frames.
    """

    # Scene
    gravity: np.ndarray                 #: Gravitational acceleration [m/s^2], shape [3]
    # Points
    x0: np.ndarray                      #: Initial positions [m], shape [P, 3]
    v0: np.ndarray                      #: Initial velocities [m/s], shape [P, 3]
    mass: np.ndarray                    #: Point masses [kg], shape [P] (0 for kinematic points)
    inv_mass: np.ndarray                #: Inverse masses [1/kg], shape [P] (0: kinematic)
    point_kind: np.ndarray              #: POINT_* code per point, shape [P]
    point_strand: np.ndarray            #: Strand of each point or -1, shape [P]
    collide_radius: np.ndarray          #: Contact radius [m] (0: no collisions), shape [P]
    # Strands
    strand_vertex_start: np.ndarray     #: First vertex of each strand, shape [S + 1]
    strand_edge_start: np.ndarray       #: First edge of each strand, shape [S + 1]
    strand_oe_start: np.ndarray         #: First orientation element of each strand, shape [S + 1]
    strand_closed: np.ndarray           #: Closed loop flags, shape [S]
    strand_radius: np.ndarray           #: Contact radius of each strand [m], shape [S]
    strand_material: np.ndarray         #: Index into ``materials``, shape [S]
    # Edges
    edge_p0: np.ndarray                 #: First end point of each edge, shape [E]
    edge_p1: np.ndarray                 #: Second end point, shape [E]
    edge_ghost: np.ndarray              #: Ghost point of each edge, shape [E]
    edge_rest_length: np.ndarray        #: Rest length [m], shape [E]
    ghost_rest_distance: np.ndarray     #: Rest ghost distance from the edge midpoint [m], shape [E]
    edge_stretch: np.ndarray            #: Axial stiffness E A [N], shape [E]
    # Interior orientation elements (edge e, next edge)
    oe_idx: np.ndarray                  #: Points (A0, A1, A2, B0, B1, B2) of the two frames, [O, 6]
    oe_rest_omega: np.ndarray           #: Rest modified Darboux vector [1/m], shape [O, 3]
    oe_rest_length: np.ndarray          #: Rest length between edge midpoints [m], shape [O]
    oe_stiffness: np.ndarray            #: (E I1, E I2, G J) [N m^2], shape [O, 3]
    oe_alpha: np.ndarray                #: User stiffness alphas in [0, 1] or NaN (derive), [O, 3]
    # Coupling orientation constraints (frame, triangle, rigid body attachments)
    co_idx: np.ndarray                  #: Points (A0..A2 of the frame held, B0..B2 edge), [C, 6]
    co_rot: np.ndarray                  #: Constant rotation between the rest frames, [C, 3, 3]
    co_rest_length: np.ndarray          #: Half the attached edge's rest length [m], shape [C]
    co_stiffness: np.ndarray            #: (E I1, E I2, G J) [N m^2], shape [C, 3]
    co_alpha: np.ndarray                #: User alphas or NaN, shape [C, 3]
    co_strand: np.ndarray               #: Strand of each coupling, shape [C]
    # Pins: point == sum_k weight_k * target_k
    pin_point: np.ndarray               #: shape [N_pin]
    pin_targets: np.ndarray             #: shape [N_pin, 3]
    pin_weights: np.ndarray             #: Barycentric weights, shape [N_pin, 3]
    # Distance constraints between non-strand points (meshes, rigid bodies)
    dist_i: np.ndarray                  #: shape [N_dist]
    dist_j: np.ndarray                  #: shape [N_dist]
    dist_rest: np.ndarray               #: Rest distance [m], shape [N_dist]
    dist_compliance: np.ndarray         #: Compliance [m/N] (0: hard), shape [N_dist]
    # Kinematic frames: the points they drive follow x = o(t) + R(t) local
    frame_origin: np.ndarray            #: Initial origin [m], shape [F, 3]
    frame_rotation: np.ndarray          #: Initial rotation (columns = axes), shape [F, 3, 3]
    frame_moving: np.ndarray            #: Frames whose pose changes in time, bool [F]
    driven_point: np.ndarray            #: Points moved by frames, shape [N_drv]
    driven_frame: np.ndarray            #: Frame of each driven point, shape [N_drv]
    driven_local: np.ndarray            #: Position in the frame's axes [m], shape [N_drv, 3]
    # Sliding ends: point stays on the line o(t) + R(t) (local + s axis) of its frame
    slide_point: np.ndarray             #: shape [N_slide]
    slide_frame: np.ndarray             #: shape [N_slide]
    slide_local: np.ndarray             #: A point of the line in the frame's axes [m], [N_slide, 3]
    slide_axis: np.ndarray              #: Unit direction in the frame's axes, [N_slide, 3]
    co_free: np.ndarray                 #: Free coupling components (bend d1, d2, twist), [C, 3]
    # Loads
    load_point: np.ndarray              #: Point of each scene load, shape [N_load]
    # Colliders
    planes: np.ndarray                  #: (point, unit normal), shape [N_plane, 6]
    spheres: np.ndarray                 #: (centre, radius), shape [N_sphere, 4]
    capsules: np.ndarray                #: (a, b, radius), shape [N_capsule, 7]
    collider_friction: np.ndarray       #: Friction per collider (planes, spheres, capsules)
    point_friction: np.ndarray          #: Friction of each point's strand, NaN: none, shape [P]
    # Render and bookkeeping
    mesh_triangles: np.ndarray          #: Triangles of meshes (point indices), shape [T, 3]
    materials: tuple = ()               #: Materials (sim.material.Material)
    scene: object = None                #: The Scene this model was compiled from

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v.setflags(write=False)

    # -- sizes ---------------------------------------------------------------------------
    @property
    def n_points(self) -> int:
        return int(self.x0.shape[0])

    @property
    def n_strands(self) -> int:
        return int(self.strand_closed.shape[0])

    @property
    def n_vertices(self) -> int:
        return int(self.strand_vertex_start[-1])

    @property
    def n_edges(self) -> int:
        return int(self.edge_p0.shape[0])

    def strand_vertices(self, s: int) -> slice:
        """Slice of the points of strand ``s``'s centreline vertices."""
        if not 0 <= s < self.n_strands:
            raise IndexError(f"strand {s} out of range (0..{self.n_strands - 1})")
        return slice(int(self.strand_vertex_start[s]), int(self.strand_vertex_start[s + 1]))

    def strand_ghosts(self, s: int) -> slice:
        """Slice of the points of strand ``s``'s ghost points."""
        if not 0 <= s < self.n_strands:
            raise IndexError(f"strand {s} out of range (0..{self.n_strands - 1})")
        nv = self.n_vertices
        return slice(nv + int(self.strand_edge_start[s]), nv + int(self.strand_edge_start[s + 1]))

    def colliders(self) -> list[dict]:
        """Colliders as dictionaries (for rendering and scene files)."""
        out = []
        fr = list(self.collider_friction)
        k = 0
        for p in self.planes:
            out.append({"type": "plane", "point": p[:3].tolist(), "normal": p[3:].tolist(),
                        "friction": fr[k]})
            k += 1
        for s in self.spheres:
            out.append({"type": "sphere", "center": s[:3].tolist(), "radius": float(s[3]),
                        "friction": fr[k]})
            k += 1
        for c in self.capsules:
            out.append({"type": "capsule", "a": c[:3].tolist(), "b": c[3:6].tolist(),
                        "radius": float(c[6]), "friction": fr[k]})
            k += 1
        return out

    def state(self) -> PBDState:
        """A new State at the initial configuration."""
        return PBDState(x=self.x0.copy(), v=self.v0.copy(),
                     mid_v=np.full((self.n_edges, 3), np.nan), time=0.0, step=0)


@dataclass(eq=False)
class PBDState:
    """What changes during a simulation."""

    x: np.ndarray        #: Point positions [m], shape [P, 3]
    v: np.ndarray        #: Point velocities [m/s], shape [P, 3]
    mid_v: np.ndarray    #: Edge midpoint velocities of the previous step [m/s], shape [E, 3];
    #: NaN before the first step (no history for the ghost-gravity correction)
    time: float = 0.0    #: Simulated time [s]
    step: int = 0        #: Steps taken

    def copy(self) -> PBDState:
        return PBDState(self.x.copy(), self.v.copy(), self.mid_v.copy(), self.time, self.step)

    def assign(self, other: PBDState) -> None:
        """Copy ``other`` into this state's arrays (no reallocation)."""
        self.x[...] = other.x
        self.v[...] = other.v
        self.mid_v[...] = other.mid_v
        self.time = other.time
        self.step = other.step
