"""The solver-neutral scene: what the user means, in physical terms.

A :class:`Scene` is what :meth:`~strandlab.sim.builder.SceneBuilder.build` returns: strands
(points, rest shape, material, per-vertex radius, material direction), kinematic frames and what
they hold, meshes, rigid bodies, attachments, loads, colliders and gravity, all frozen.  It names
no solver's parameters: each solver compiles a Scene into its own model and state, and a solver
that cannot express a part of a scene raises :class:`UnsupportedFeature` naming that part.
Solver-specific hints (e.g. the position-based solver's ghost distance) travel in a strand's
``options`` mapping, keyed by solver name, and other solvers ignore them.

Output layout, shared by every solver: strand vertices concatenated strand after strand
(``strand_vertex_offsets``), edges likewise (``strand_edge_offsets``; a closed strand of ``n``
vertices has ``n`` edges, an open one ``n - 1``), then the "extra points" of frames, meshes and
bodies (see :meth:`Scene.extra_layout`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

import numpy as np

from .material import Material
from .motion import Motion

__all__ = ["Scene", "StrandSpec", "FrameSpec", "MeshSpec", "BodySpec", "FrameAttachment",
           "TriangleAttachment", "BodyAttachment", "PointLoad", "Collider",
           "UnsupportedFeature", "options_of"]


class UnsupportedFeature(ValueError):
    """A solver cannot express a part of a scene (the message names the part and the solver)."""


def _freeze(obj) -> None:
    for f in fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, np.ndarray):
            v.setflags(write=False)


@dataclass(frozen=True, eq=False)
class StrandSpec:
    """One strand (rod, hair, cable).  Shapes: ``n`` vertices, ``e`` edges."""

    name: str
    points: np.ndarray            #: Initial vertex positions [m], [n, 3]
    rest_points: np.ndarray       #: Stress-free shape [m], [n, 3]
    closed: bool                  #: Closed loop (an edge from the last vertex to the first)
    material: Material            #: Material and cross-section
    radius: np.ndarray            #: Section radius per vertex [m], [n] (tapered hair)
    velocities: np.ndarray        #: Initial vertex velocities [m/s], [n, 3]
    d1: np.ndarray | None         #: Material direction: [3] for the first edge, [e, 3], or None
    initial_twist: float          #: Twist of the initial frames against the rest frames [rad]
    fixed: tuple                  #: Vertices held at their initial position
    friction: float | None        #: Friction coefficient of the strand (None: the collider's)
    options: Mapping              #: Solver-specific options, ``{solver name: {key: value}}``

    def label(self, s: int) -> str:
        """How messages name this strand, the scene's strand ``s``: its name and index
        (``"rope (strand 2)"``), or the index alone when the name is the default one."""
        return self.name if self.name == f"strand {s}" else f"{self.name} (strand {s})"

    def __post_init__(self):
        _freeze(self)

    @property
    def n_vertices(self) -> int:
        return int(self.points.shape[0])

    @property
    def n_edges(self) -> int:
        return self.n_vertices if self.closed else self.n_vertices - 1

    def end_vertex(self, end: int) -> int:
        """Index of the first (``end=0``) or last (``end=-1``) vertex."""
        return 0 if end == 0 else self.n_vertices - 1

    def to_dict(self) -> dict:
        return {"name": self.name, "n_vertices": self.n_vertices, "closed": self.closed,
                "material": self.material.to_dict(), "initial_twist": self.initial_twist,
                "fixed": list(self.fixed), "friction": self.friction,
                "options": {k: dict(v) for k, v in self.options.items()}}


@dataclass(frozen=True, eq=False)
class FrameSpec:
    """A kinematic frame whose pose is ``motion.pose(t)`` (rotation [3, 3], origin [3] [m])."""

    motion: Motion

    def pose(self, t: float):
        return self.motion.pose(t)


@dataclass(frozen=True, eq=False)
class MeshSpec:
    """A deformable triangle mesh of equal-mass points joined by an elastic edge network."""

    name: str
    vertices: np.ndarray          #: [m], [nv, 3]
    triangles: np.ndarray         #: Vertex indices, int [nt, 3]
    mass: float                   #: Total mass [kg]
    compliance: float             #: Compliance of each edge [m/N] (0: inextensible)
    collide_radius: float         #: Contact radius of its vertices [m]
    velocities: np.ndarray        #: [m/s], [nv, 3]
    fixed: tuple                  #: Vertices held in place

    def __post_init__(self):
        _freeze(self)


@dataclass(frozen=True, eq=False)
class BodySpec:
    """A small rigid body (a joint of a rod network)."""

    position: np.ndarray          #: Centre [m], [3]
    rotation: np.ndarray          #: Axes as columns, [3, 3]
    mass: float                   #: [kg]
    size: float                   #: Length scale [m] (points on its axes, for point-based solvers)

    def __post_init__(self):
        _freeze(self)


@dataclass(frozen=True)
class FrameAttachment:
    """A strand end held by a kinematic frame.

    ``orientation``: the end edge's material frame is held at its initial orientation relative to
    the frame (a clamp); without it the end turns freely (a ball joint).  ``free_twist``: with
    ``orientation``, the end may still turn about the rod's axis (a swivel).  ``slide_axis``
    (frame axes, unit): the end vertex may slide along the line through its initial position in
    that direction instead of being held in place.
    """

    strand: int
    frame: int
    end: int = 0
    orientation: bool = True
    free_twist: bool = False
    slide_axis: tuple | None = None


@dataclass(frozen=True)
class TriangleAttachment:
    """A strand end pinned to its barycentric position on a mesh triangle (two-way)."""

    strand: int
    mesh: int
    triangle: int
    end: int = 0
    barycentric: tuple = (1.0, 0.0, 0.0)  #: Weights of the triangle's vertices


@dataclass(frozen=True)
class BodyAttachment:
    """A strand end joined to a rigid body; with ``orientation`` torque passes through it."""

    strand: int
    body: int
    end: int = 0
    orientation: bool = True


@dataclass(frozen=True, eq=False)
class PointLoad:
    """A force on one strand vertex: a constant vector [N] or a function ``f(t) -> [3]``."""

    strand: int
    vertex: int
    force: np.ndarray | None = None
    fn: Callable | None = None

    def at(self, t: float) -> np.ndarray:
        """The force [N] at time ``t`` [s]."""
        if self.fn is None:
            return self.force
        f = np.asarray(self.fn(float(t)), dtype=np.float64)
        if f.shape != (3,) or not np.all(np.isfinite(f)):
            raise ValueError(f"load on vertex {self.vertex} of strand {self.strand}: the force "
                             f"function returned {f.tolist()} at t = {t:g} s (need 3 finite "
                             "components)")
        return f


@dataclass(frozen=True, eq=False)
class Collider:
    """A static collider: ``kind`` is ``"plane"`` (point, normal), ``"sphere"`` (center, radius)
    or ``"capsule"`` (a, b, radius); ``friction`` is its Coulomb coefficient."""

    kind: str
    params: Mapping
    friction: float = 0.0

    def to_dict(self) -> dict:
        return {"type": self.kind, **{k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                      for k, v in self.params.items()}, "friction": self.friction}


@dataclass(frozen=True, eq=False)
class Scene:
    """A frozen, solver-neutral scene description (see the module docstring)."""

    gravity: np.ndarray                       #: [m/s^2], [3]
    strands: tuple = ()                       #: StrandSpec per strand
    frames: tuple = ()                        #: FrameSpec per frame
    meshes: tuple = ()                        #: MeshSpec per mesh
    bodies: tuple = ()                        #: BodySpec per rigid body
    frame_attachments: tuple = ()             #: FrameAttachment
    triangle_attachments: tuple = ()          #: TriangleAttachment
    body_attachments: tuple = ()              #: BodyAttachment
    loads: tuple = ()                         #: PointLoad
    colliders: tuple = ()                     #: Collider
    simplicial: tuple = ()                    #: SimplicialSpec per labelled simplicial mesh
    strand_vertex_offsets: np.ndarray = field(init=False)  #: [S + 1]
    strand_edge_offsets: np.ndarray = field(init=False)    #: [S + 1]

    def __post_init__(self):
        nv = np.zeros(len(self.strands) + 1, dtype=np.int64)
        ne = np.zeros(len(self.strands) + 1, dtype=np.int64)
        for k, s in enumerate(self.strands):
            nv[k + 1] = nv[k] + s.n_vertices
            ne[k + 1] = ne[k] + s.n_edges
        object.__setattr__(self, "strand_vertex_offsets", nv)
        object.__setattr__(self, "strand_edge_offsets", ne)
        _freeze(self)

    # -- sizes -------------------------------------------------------------------------------
    @property
    def n_strands(self) -> int:
        return len(self.strands)

    @property
    def n_vertices(self) -> int:
        return int(self.strand_vertex_offsets[-1])

    @property
    def n_edges(self) -> int:
        return int(self.strand_edge_offsets[-1])

    @property
    def closed(self) -> np.ndarray:
        """Closed-loop flags, [S]."""
        return np.array([s.closed for s in self.strands], dtype=bool)

    @property
    def radii(self) -> np.ndarray:
        """Largest section radius of each strand [m], [S] (for rendering)."""
        return np.array([float(np.max(s.radius)) for s in self.strands])

    @property
    def vertex_radii(self) -> np.ndarray:
        """Section radius of every strand vertex [m], [V] (tapered strands taper)."""
        parts = [np.asarray(s.radius, dtype=np.float64) for s in self.strands]
        return np.concatenate(parts) if parts else np.zeros(0)

    def strand_vertices(self, s: int) -> slice:
        """Slice of strand ``s``'s vertices in the concatenated layout."""
        if not 0 <= s < self.n_strands:
            raise IndexError(f"strand {s} out of range (0..{self.n_strands - 1})")
        return slice(int(self.strand_vertex_offsets[s]), int(self.strand_vertex_offsets[s + 1]))

    def strand_edges(self, s: int) -> slice:
        """Slice of strand ``s``'s edges in the concatenated layout."""
        if not 0 <= s < self.n_strands:
            raise IndexError(f"strand {s} out of range (0..{self.n_strands - 1})")
        return slice(int(self.strand_edge_offsets[s]), int(self.strand_edge_offsets[s + 1]))

    @property
    def materials(self) -> tuple:
        """The distinct materials, in order of first use."""
        out = []
        for s in self.strands:
            if s.material not in out:
                out.append(s.material)
        return tuple(out)

    # -- extra points (frames, meshes, bodies): the output layout every solver reports -------
    def require_rods_only(self, solver: str) -> None:
        """:class:`UnsupportedFeature` naming ``solver`` and the first part of the scene that a
        model of strands held by kinematic frames cannot express: deformable meshes, rigid
        bodies, triangle and body attachments, ends sliding along an axis."""
        if self.meshes:
            raise UnsupportedFeature(f"solver {solver!r} has no deformable meshes (mesh "
                                     f"{self.meshes[0].name!r})")
        self.require_no_simplicial(solver)
        if self.bodies:
            raise UnsupportedFeature(f"solver {solver!r} has no rigid bodies (body 0)")
        if self.triangle_attachments:
            a = self.triangle_attachments[0]
            raise UnsupportedFeature(f"solver {solver!r} cannot attach strand {a.strand} to a "
                                     "mesh triangle")
        if self.body_attachments:
            a = self.body_attachments[0]
            raise UnsupportedFeature(f"solver {solver!r} cannot attach strand {a.strand} to a "
                                     "rigid body")
        for a in self.frame_attachments:
            if a.slide_axis is not None:
                raise UnsupportedFeature(f"solver {solver!r} cannot let the end of strand "
                                         f"{a.strand} slide along an axis (slide_axis)")

    def require_no_simplicial(self, solver: str) -> None:
        """:class:`UnsupportedFeature` naming ``solver`` and the first labelled simplicial mesh
        (rods, shells and solids are the model of the ``"mixed"`` solver)."""
        if self.simplicial:
            raise UnsupportedFeature(f"solver {solver!r} has no rod/shell/solid meshes (mesh "
                                     f"{self.simplicial[0].name!r}); use solver 'mixed'")

    def collider_arrays(self, solver: str) -> tuple:
        """The colliders as flat arrays, in the layout of :mod:`strandlab.collision.analytic`:
        planes [P, 6] (point, unit normal), spheres [Q, 4] (centre, radius), capsules [C, 7]
        (ends a and b, radius) and one friction coefficient each [P + Q + C] (planes first).
        :class:`UnsupportedFeature` naming ``solver`` for another kind of collider."""
        planes, spheres, capsules, fp, fs, fc = [], [], [], [], [], []
        for c in self.colliders:
            p = c.params
            if c.kind == "plane":
                nrm = np.asarray(p["normal"], dtype=np.float64)
                planes.append([*p["point"], *(nrm / np.linalg.norm(nrm))])
                fp.append(c.friction)
            elif c.kind == "sphere":
                spheres.append([*p["center"], p["radius"]])
                fs.append(c.friction)
            elif c.kind == "capsule":
                capsules.append([*p["a"], *p["b"], p["radius"]])
                fc.append(c.friction)
            else:
                raise UnsupportedFeature(f"solver {solver!r} has no collider of kind {c.kind!r}")
        return (np.asarray(planes, dtype=np.float64).reshape(-1, 6),
                np.asarray(spheres, dtype=np.float64).reshape(-1, 4),
                np.asarray(capsules, dtype=np.float64).reshape(-1, 7),
                np.asarray(fp + fs + fc, dtype=np.float64))

    def extra_layout(self) -> dict:
        """Offsets of the extra points: each frame contributes 3 points (origin and the tips of
        its first two axes at ``frame_size``), each mesh its vertices, each body 3 points
        (centre and the tips of its first two axes), each simplicial mesh its vertices.  Keys:
        ``frames``, ``meshes``, ``bodies``, ``simplicial`` (start offsets) and ``n`` (total)."""
        k = 0
        out = {"frames": [], "meshes": [], "bodies": [], "simplicial": []}
        for _ in self.frames:
            out["frames"].append(k)
            k += 3
        for m in self.meshes:
            out["meshes"].append(k)
            k += len(m.vertices)
        for _ in self.bodies:
            out["bodies"].append(k)
            k += 3
        for m in self.simplicial:
            out["simplicial"].append(k)
            k += m.n_vertices
        out["n"] = k
        return out

    @property
    def extra_triangles(self) -> np.ndarray:
        """Mesh triangles indexing the extra points, int [M, 3] (deformable meshes, then the
        shell triangles and solid boundary faces of the simplicial meshes)."""
        lay = self.extra_layout()
        tris = [m.triangles + lay["meshes"][k] for k, m in enumerate(self.meshes)]
        tris += [m.surface_triangles() + lay["simplicial"][k]
                 for k, m in enumerate(self.simplicial)]
        return np.concatenate(tris).astype(np.int64) if tris else np.zeros((0, 3), np.int64)

    @property
    def extra_segments(self) -> np.ndarray:
        """Rod edges of the simplicial meshes indexing the extra points, int [G, 2]."""
        lay = self.extra_layout()
        seg = [m.rod_edges + lay["simplicial"][k] for k, m in enumerate(self.simplicial)]
        return np.concatenate(seg).astype(np.int64) if seg else np.zeros((0, 2), np.int64)

    @property
    def extra_segment_radii(self) -> np.ndarray:
        """Section radius of each rod edge of :attr:`extra_segments` [m], [G]: its rod part's
        material (``contact_radius``: the radius, or half the width of a ribbon)."""
        r = [np.array([m.parts[int(p)].material.contact_radius for p in m.rod_part])
             for m in self.simplicial]
        return np.concatenate(r).astype(np.float64) if r else np.zeros(0)

    @property
    def extra_tetrahedra(self) -> np.ndarray:
        """Solid tetrahedra of the simplicial meshes indexing the extra points, int [K, 4]."""
        lay = self.extra_layout()
        tets = [m.tets + lay["simplicial"][k] for k, m in enumerate(self.simplicial)]
        return np.concatenate(tets).astype(np.int64) if tets else np.zeros((0, 4), np.int64)

    def frame_size(self, f: int) -> float:
        """Length scale of frame ``f`` [m]: the mean rest edge length of the first strand it
        holds (0.01 m if it holds none)."""
        for a in self.frame_attachments:
            if a.frame == f:
                s = self.strands[a.strand]
                e = (np.roll(s.rest_points, -1, axis=0) - s.rest_points) if s.closed \
                    else np.diff(s.rest_points, axis=0)
                return float(np.mean(np.linalg.norm(e, axis=1)))
        return 0.01

    # -- record ------------------------------------------------------------------------------
    def describe(self) -> dict:
        """A JSON-serialisable summary (for trajectories and ``scene.json``)."""
        return {
            "gravity": self.gravity.tolist(), "n_strands": self.n_strands,
            "n_vertices": self.n_vertices, "n_edges": self.n_edges,
            "strands": [s.to_dict() for s in self.strands],
            "frames": [f.motion.to_dict() for f in self.frames],
            "meshes": [{"name": m.name, "n_vertices": len(m.vertices),
                        "n_triangles": len(m.triangles), "mass": m.mass} for m in self.meshes],
            "bodies": [{"mass": b.mass, "size": b.size} for b in self.bodies],
            "attachments": [{"kind": type(a).__name__, **a.__dict__}
                            for a in (*self.frame_attachments, *self.triangle_attachments,
                                      *self.body_attachments)],
            "loads": [{"strand": ld.strand, "vertex": ld.vertex,
                       "force": None if ld.force is None else ld.force.tolist(),
                       "function": ld.fn is not None} for ld in self.loads],
            "colliders": [c.to_dict() for c in self.colliders],
            "simplicial": [m.describe() for m in self.simplicial],
        }


def options_of(spec: StrandSpec, solver: str, allowed: tuple | None = None) -> Mapping:
    """The options of ``solver`` on strand ``spec`` (an empty mapping if none).

    With ``allowed``, a key not in it raises ValueError naming the strand, the option and the
    allowed ones."""
    opts = spec.options.get(solver, MappingProxyType({}))
    if allowed is not None:
        unknown = [k for k in opts if k not in allowed]
        if unknown:
            raise ValueError(f"{spec.name}: unknown {solver} option {unknown[0]!r}; allowed: "
                             f"{', '.join(allowed)}")
    return opts
