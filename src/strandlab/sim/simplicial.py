"""Labelled simplicial meshes: one conforming mesh whose simplices are rods, shells or solids.

The solver-neutral description of the objects of Chang et al. 2019 ("A unified simplicial model
for mixed-dimensional and non-manifold deformable elastic objects").  A mesh has vertices [m]
and three kinds of labelled simplices:

- rod edges [R, 2], each in a rod *part* whose material is a
  :class:`~strandlab.sim.material.Material` (Young's and shear moduli, density, section);
- shell triangles [T, 3], each in a shell part with a :class:`ShellMaterial` (E, nu, thickness,
  density);
- solid tetrahedra [K, 4], each in a solid part with a :class:`SolidMaterial` (E, nu, density),
  with positive volume in the vertex order given: ``(x1 - x0) . ((x2 - x0) x (x3 - x0)) > 0``.

A *part* is a labelled component (a cell tag in Gmsh or VTK files: :mod:`strandlab.io.simplicial`).
*Connections* join two parts where they meet: ``"point"`` at each vertex they share,
``"curve"`` along each edge they share (:class:`Connection`).  Vertices can be held in place or
moved by a kinematic frame (:class:`MeshHold`).

Every check names the offending simplex: :func:`check_simplicial` is run by
:class:`SimplicialSpec` on construction, so no solver sees a mesh whose labels don't fit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..geometry.tetmesh import tet_volumes
from .material import Material, positive_parameter
from .validate import show

__all__ = ["ShellMaterial", "SolidMaterial", "Part", "Connection", "MeshHold", "SimplicialBuilder",
           "SimplicialSpec", "check_simplicial", "CONNECTION_MODES", "ANGLE_UPDATES",
           "boundary_faces", "mesh_edges", "part_runs"]

#: How a connection holds its two sides: ``"elastic"`` (the energies of the paper with the given
#: stiffnesses), ``"hard"`` (a stiff penalty on the residual of the constraint, eqs. 1 and 6),
#: ``"free"`` (only the shared vertices: a ball joint or a hinge).
CONNECTION_MODES = ("elastic", "hard", "free")
#: How the angle of a twisting or curve connection is followed from step to step (section 3.1):
#: ``"incremental2"`` (pre-rotate by the stored angle, eq. 3; the default), ``"incremental1"``
#: (unwrap to the branch nearest the stored angle), ``"direct"`` (no history: 3 pi reads as pi).
ANGLE_UPDATES = ("incremental2", "incremental1", "direct")
KINDS = ("rod", "shell", "solid")


def _poisson(owner: str, value, top: float) -> float:
    v = float(value)
    if not (math.isfinite(v) and -1.0 < v < top):
        raise ValueError(f"{owner}: poisson_ratio must be in (-1, {top}), got {show(value)}")
    return v


@dataclass(frozen=True)
class ShellMaterial:
    """Material of shell triangles: Young's modulus E [Pa], Poisson ratio nu (-1 < nu < 0.5),
    thickness t [m], density rho [kg/m^3].  Membrane stiffness ``E t / (1 - nu^2)``, bending
    (plate) stiffness ``D = E t^3 / (12 (1 - nu^2))`` [N m]."""

    young_modulus: float
    poisson_ratio: float
    thickness: float
    density: float

    def __post_init__(self):
        for n in ("young_modulus", "thickness", "density"):
            positive_parameter(n, getattr(self, n), "ShellMaterial")
        _poisson("ShellMaterial", self.poisson_ratio, 0.5)

    @property
    def bending_stiffness(self) -> float:
        """Plate stiffness D [N m]."""
        nu = self.poisson_ratio
        return self.young_modulus * self.thickness ** 3 / (12.0 * (1.0 - nu * nu))


@dataclass(frozen=True)
class SolidMaterial:
    """Material of solid tetrahedra: Young's modulus E [Pa], Poisson ratio nu
    (-1 < nu < 0.5), density rho [kg/m^3]."""

    young_modulus: float
    poisson_ratio: float
    density: float

    def __post_init__(self):
        for n in ("young_modulus", "density"):
            positive_parameter(n, getattr(self, n), "SolidMaterial")
        _poisson("SolidMaterial", self.poisson_ratio, 0.5)


_MATERIAL_OF = {"rod": Material, "shell": ShellMaterial, "solid": SolidMaterial}
_SIZE_OF = {"rod": 2, "shell": 3, "solid": 4}


@dataclass(frozen=True)
class Part:
    """A labelled component: its name, kind (``"rod"``, ``"shell"``, ``"solid"``) and material."""

    name: str
    kind: str
    material: object

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"part {self.name!r}: kind must be one of {KINDS}, got "
                             f"{self.kind!r}")
        want = _MATERIAL_OF[self.kind]
        if not isinstance(self.material, want):
            raise TypeError(f"part {self.name!r}: a {self.kind} part needs a {want.__name__}, "
                            f"got {type(self.material).__name__}")


@dataclass(frozen=True)
class Connection:
    """A connection between two parts of one mesh.

    kind : ``"point"`` (at each vertex the parts share: twisting eq. 2 and bending eq. 5) or
        ``"curve"`` (along each edge they share: eq. 8).
    parts : the two part indices.
    mode : one of :data:`CONNECTION_MODES`.
    twist_stiffness : k_t of a point connection [N m / rad^2].
    bend_stiffness : k_b of a point connection [N m / rad^2]; of a curve connection, per unit
        length [N / rad^2] (eq. 8 integrates it along the curve).
    hard_stiffness : stiffness of the hard form's penalty (per shared vertex [N m] or per unit
        length of shared curve [N]); used when ``mode = "hard"``.
    angle_update : one of :data:`ANGLE_UPDATES`.
    vertices : restrict a point connection to these shared vertices (default: all of them).
    """

    kind: str
    parts: tuple
    mode: str = "elastic"
    twist_stiffness: float = 0.0
    bend_stiffness: float = 0.0
    hard_stiffness: float = 0.0
    angle_update: str = "incremental2"
    vertices: tuple | None = None

    def __post_init__(self):
        label = f"connection {self.kind!r} between parts {self.parts}"
        if self.kind not in ("point", "curve"):
            raise ValueError(f"connection kind must be 'point' or 'curve', got {self.kind!r}")
        if len(self.parts) != 2 or self.parts[0] == self.parts[1]:
            raise ValueError(f"{label}: needs two different parts")
        if self.mode not in CONNECTION_MODES:
            raise ValueError(f"{label}: mode must be one of {CONNECTION_MODES}, got "
                             f"{self.mode!r}")
        if self.angle_update not in ANGLE_UPDATES:
            raise ValueError(f"{label}: angle_update must be one of {ANGLE_UPDATES}, got "
                             f"{self.angle_update!r}")
        for n in ("twist_stiffness", "bend_stiffness", "hard_stiffness"):
            v = float(getattr(self, n))
            if not (math.isfinite(v) and v >= 0.0):
                raise ValueError(f"{label}: {n} must be finite and >= 0, got "
                                 f"{show(getattr(self, n))}")
        if self.mode == "hard" and self.hard_stiffness <= 0.0:
            raise ValueError(f"{label}: a hard connection needs hard_stiffness > 0")
        if self.mode == "elastic" and self.twist_stiffness == 0 and self.bend_stiffness == 0:
            raise ValueError(f"{label}: an elastic connection needs twist_stiffness or "
                             "bend_stiffness > 0 (use mode='free' for none)")
        if self.kind == "curve" and self.twist_stiffness:
            raise ValueError(f"{label}: a curve connection has no twisting energy; give its "
                             "stiffness as bend_stiffness")
        if self.vertices is not None:
            if self.kind == "curve":
                raise ValueError(f"{label}: vertices restrict a point connection; a curve "
                                 "connection acts along every edge the parts share")
            v = list(self.vertices)
            if not v:
                raise ValueError(f"{label}: vertices is empty (leave it out for every shared "
                                 "vertex)")
            twice = sorted({int(k) for k in v if v.count(k) > 1})
            if twice:
                raise ValueError(f"{label}: vertex {twice[0]} is named twice in vertices")


@dataclass(frozen=True)
class MeshHold:
    """Vertices held by a kinematic frame (``frame`` None: held at their initial positions).
    With ``rod_twist`` the rod edges between two held vertices turn with the frame too.
    ``until`` [s]: released (free) from that time on (None: held for ever).  With
    ``turn_only`` the vertices stay at their initial positions and the frame only turns the
    rod edges between them (each edge's material direction follows the frame's rotation,
    projected off the edge: an axial rotation of the edges when the frame turns about them)."""

    vertices: tuple
    frame: int | None = None
    rod_twist: bool = True
    until: float | None = None
    turn_only: bool = False

    def __post_init__(self):
        if self.until is not None and not (math.isfinite(self.until) and self.until > 0):
            raise ValueError(f"hold of vertices {list(self.vertices)[:4]}: until must be a "
                             f"positive time [s], got {show(self.until)}")
        if self.turn_only and (self.frame is None or not self.rod_twist):
            raise ValueError(f"hold of vertices {list(self.vertices)[:4]}: turn_only needs a "
                             "frame and rod_twist")


def mesh_edges(triangles: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """The distinct edges (sorted vertex pairs) of triangles [T, 3] and tetrahedra [K, 4]."""
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    tet = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
    pairs = [tri[:, [a, b]] for a, b in ((0, 1), (1, 2), (2, 0))]
    pairs += [tet[:, [a, b]] for a, b in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))]
    e = np.sort(np.concatenate(pairs), axis=1)
    return np.unique(e, axis=0) if len(e) else np.zeros((0, 2), np.int64)


#: The faces of a tetrahedron ``(a, b, c, d)`` by vertex slot: face ``i`` is opposite vertex
#: ``i``, ordered so that its normal points away from it (outwards for positive volume).
TET_FACES = ((1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1))


def boundary_faces(tets: np.ndarray, *, with_tets: bool = False):
    """Faces of tetrahedra [K, 4] that belong to one tetrahedron only, oriented outwards for
    positively oriented tetrahedra, int [F, 3]; with ``with_tets`` also the tetrahedron of
    each face, int [F].

    >>> boundary_faces([[0, 1, 2, 3], [1, 2, 3, 4]], with_tets=True)[1].tolist()
    [1, 0, 1, 0, 1, 0]
    """
    t = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
    if not len(t):
        return (np.zeros((0, 3), np.int64), np.zeros(0, np.int64)) if with_tets else \
            np.zeros((0, 3), np.int64)
    faces = np.concatenate([t[:, list(f)] for f in TET_FACES])
    key = np.sort(faces, axis=1)
    _, inv, count = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    once = count[inv.ravel()] == 1
    if with_tets:
        return faces[once], np.flatnonzero(once) % len(t)
    return faces[once]


def part_runs(labels) -> list:
    """The runs of equal labels of ``labels`` int [n], as ``[label, count]`` pairs in order.

    >>> part_runs([0, 0, 1, 1, 1, 0])
    [[0, 2], [1, 3], [0, 1]]
    """
    lab = np.asarray(labels, dtype=np.int64).reshape(-1)
    if not len(lab):
        return []
    starts = np.r_[0, np.flatnonzero(np.diff(lab)) + 1]
    return [[int(lab[a]), int(n)] for a, n in zip(starts, np.diff(np.r_[starts, len(lab)]))]


_SINGULAR = {"rod edges": "rod edge", "triangles": "triangle", "tetrahedra": "tetrahedron"}


def _indices(name: str, what: str, a, cols: int, n_vertices: int) -> np.ndarray:
    one = _SINGULAR[what]
    x = np.asarray(a if a is not None else np.zeros((0, cols)), dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != cols or (x.size and not np.all(x == np.round(x))):
        raise ValueError(f"mesh {name!r}: {what} must be integer vertex indices of shape "
                         f"[n, {cols}], got shape {x.shape}")
    x = x.astype(np.int64)
    bad = np.nonzero(((x < 0) | (x >= n_vertices)).any(axis=1))[0]
    if len(bad):
        raise ValueError(f"mesh {name!r}: {one} {int(bad[0])} names vertex indices "
                         f"{x[bad[0]].tolist()} outside "
                         f"0..{n_vertices - 1}")
    srt = np.sort(x, axis=1)
    rep = np.nonzero((np.diff(srt, axis=1) == 0).any(axis=1))[0]
    if len(rep):
        raise ValueError(f"mesh {name!r}: {one} {int(rep[0])} repeats a vertex "
                         f"({x[rep[0]].tolist()})")
    _, first, inv = np.unique(srt, axis=0, return_index=True, return_inverse=True)
    again = np.nonzero(first[inv.ravel()] != np.arange(len(x)))[0]
    if len(again):
        k = int(again[0])
        raise ValueError(f"mesh {name!r}: {one} {k} ({x[k].tolist()}) appears more than "
                         f"once (as {one} {int(first[inv.ravel()[k]])})")
    return x


def _measure_checks(name: str, x: np.ndarray, edges, tris, tets, scale: float) -> None:
    """Zero-length rod edges, zero-area triangles, zero-volume and inverted tetrahedra."""
    if len(edges):
        ln = np.linalg.norm(x[edges[:, 1]] - x[edges[:, 0]], axis=1)
        bad = np.nonzero(ln <= 1e-9 * scale)[0]
        if len(bad):
            raise ValueError(f"mesh {name!r}: rod edge {int(bad[0])} "
                             f"{edges[bad[0]].tolist()} has zero length")
    if len(tris):
        a = 0.5 * np.linalg.norm(np.cross(x[tris[:, 1]] - x[tris[:, 0]],
                                          x[tris[:, 2]] - x[tris[:, 0]]), axis=1)
        bad = np.nonzero(a <= 1e-12 * scale * scale)[0]
        if len(bad):
            raise ValueError(f"mesh {name!r}: triangle {int(bad[0])} {tris[bad[0]].tolist()} "
                             f"has zero area ({a[bad[0]]:.3g} m^2)")
    if len(tets):
        v = tet_volumes(x, tets)
        tiny = 1e-15 * scale ** 3
        bad = np.nonzero(np.abs(v) <= tiny)[0]
        if len(bad):
            raise ValueError(f"mesh {name!r}: tetrahedron {int(bad[0])} "
                             f"{tets[bad[0]].tolist()} has zero volume")
        bad = np.nonzero(v < 0)[0]
        if len(bad):
            raise ValueError(f"mesh {name!r}: tetrahedron {int(bad[0])} "
                             f"{tets[bad[0]].tolist()} is inverted (volume {v[bad[0]]:.3g} "
                             "m^3; swap two of its vertices)")


def _conforming(name: str, x: np.ndarray, used: np.ndarray, scale: float) -> None:
    """Distinct used vertices at one position: parts that look joined but share no vertex."""
    idx = np.nonzero(used)[0]
    if len(idx) < 2:
        return
    key = np.round(x[idx] / (1e-9 * scale)).astype(np.int64)
    _, first, inv, count = np.unique(key, axis=0, return_index=True, return_inverse=True,
                                     return_counts=True)
    dup = np.nonzero(count[inv.ravel()] > 1)[0]
    if len(dup):
        i = int(idx[dup[0]])
        j = int(idx[first[inv.ravel()[dup[0]]]])
        if i == j:
            j = int(idx[dup[1]])
        raise ValueError(f"mesh {name!r} is not conforming: vertices {min(i, j)} and "
                         f"{max(i, j)} coincide (merge them so that the simplices share the "
                         "vertex)")


def check_simplicial(spec: SimplicialSpec) -> None:
    """All checks of a labelled mesh; ValueError naming the simplex, part or connection."""
    name, x = spec.name, spec.vertices
    nv = len(x)
    scale = float(np.ptp(x, axis=0).max()) if nv else 1.0
    scale = scale if scale > 0 else 1.0
    for kind, cells, part in (("rod", spec.rod_edges, spec.rod_part),
                              ("shell", spec.triangles, spec.triangle_part),
                              ("solid", spec.tets, spec.tet_part)):
        what = {"rod": "rod edge", "shell": "triangle", "solid": "tetrahedron"}[kind]
        if part.shape != (len(cells),):
            raise ValueError(f"mesh {name!r}: one part label per {what} needed, got "
                             f"{part.shape} for {len(cells)}")
        bad = np.nonzero((part < 0) | (part >= len(spec.parts)))[0]
        if len(bad):
            raise ValueError(f"mesh {name!r}: {what} {int(bad[0])} is labelled with part "
                             f"{int(part[bad[0]])}, which does not exist ({len(spec.parts)} "
                             "parts)")
        for k in np.unique(part):
            p = spec.parts[int(k)]
            if p.kind != kind:
                s = int(np.nonzero(part == k)[0][0])
                raise ValueError(f"mesh {name!r}: {what} {s} is labelled with part "
                                 f"{p.name!r}, a {p.kind} part: a {what} can only be a "
                                 f"{kind}")
    if not (len(spec.rod_edges) or len(spec.triangles) or len(spec.tets)):
        raise ValueError(f"mesh {name!r} has no rod edge, triangle or tetrahedron")
    _measure_checks(name, x, spec.rod_edges, spec.triangles, spec.tets, scale)
    used = np.zeros(nv, dtype=bool)
    for cells in (spec.rod_edges, spec.triangles, spec.tets):
        used[cells.ravel()] = True
    _conforming(name, x, used, scale)
    for c in spec.connections:
        _check_connection(spec, c)
    _overlapping_connections(spec)
    for h in spec.holds:
        bad = [v for v in h.vertices if not 0 <= v < nv]
        if bad:
            raise ValueError(f"mesh {name!r}: held vertex {bad[0]} out of range 0..{nv - 1}")
    _conflicting_holds(spec)


def _overlapping_connections(spec: SimplicialSpec) -> None:
    """Two connections of one kind between one pair of parts act on the same vertices (point
    connections restricted to different ``vertices`` do not): ValueError naming both."""
    for j, c in enumerate(spec.connections):
        for k in range(j):
            o = spec.connections[k]
            if o.kind != c.kind or set(o.parts) != set(c.parts):
                continue
            if c.vertices is not None and o.vertices is not None and \
                    not set(c.vertices) & set(o.vertices):
                continue
            a, b = (spec.parts[p].name for p in c.parts)
            raise ValueError(f"mesh {spec.name!r}: connections {k} and {j} are both {c.kind} "
                             f"connections between parts {a!r} and {b!r} on the same "
                             "vertices (give one, with the stiffness meant)")


def _how(h: MeshHold) -> tuple:
    """How the hold ``h`` moves its vertices."""
    return h.frame, h.rod_twist, h.until, h.turn_only


def _said(h: MeshHold) -> str:
    """What the hold ``h`` does, in words (a scene file's holds are numbered otherwise)."""
    out = "in place" if h.frame is None else f"by frame {h.frame}"
    return out + (f" until {h.until:g} s" if h.until is not None else "") + \
        (", turning only" if h.turn_only else "") + ("" if h.rod_twist else ", rod_twist off")


def _conflicting_holds(spec: SimplicialSpec) -> None:
    """A vertex in two holds that move it differently (frame, twist, release, turn):
    ValueError naming the vertex and both holds."""
    first: dict = {}
    for j, h in enumerate(spec.holds):
        for v in h.vertices:
            k = first.setdefault(v, j)
            if _how(spec.holds[k]) != _how(h):
                raise ValueError(f"mesh {spec.name!r}: vertex {v} is in holds {k} and {j}, "
                                 f"which move it differently: held {_said(spec.holds[k])} and "
                                 f"{_said(h)}; hold each vertex once")


def part_vertices(spec: SimplicialSpec, p: int) -> np.ndarray:
    """Vertices of the simplices of part ``p``."""
    cells = {"rod": (spec.rod_edges, spec.rod_part), "shell": (spec.triangles, spec.triangle_part),
             "solid": (spec.tets, spec.tet_part)}[spec.parts[p].kind]
    return np.unique(cells[0][cells[1] == p])


def part_edges(spec: SimplicialSpec, p: int) -> np.ndarray:
    """Sorted vertex pairs of the edges of part ``p``'s simplices."""
    kind = spec.parts[p].kind
    if kind == "rod":
        return np.unique(np.sort(spec.rod_edges[spec.rod_part == p], axis=1), axis=0)
    if kind == "shell":
        return mesh_edges(spec.triangles[spec.triangle_part == p], np.zeros((0, 4)))
    return mesh_edges(np.zeros((0, 3)), spec.tets[spec.tet_part == p])


def _d1_across(name: str, d1: np.ndarray, x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """``d1`` [R, 3], checked to point across its rod edge: ValueError naming the first edge
    whose direction is zero or along the edge (a sine below 1e-6)."""
    t = x[edges[:, 1]] - x[edges[:, 0]]
    across, length = np.linalg.norm(np.cross(d1, t), axis=1), np.linalg.norm(t, axis=1)
    bad = np.nonzero((length > 0) & ~(across > 1e-6 * np.linalg.norm(d1, axis=1) * length))[0]
    if len(bad):
        k = int(bad[0])
        raise ValueError(f"mesh {name!r}: rod_d1 of rod edge {k} ({d1[k].tolist()}) is zero or "
                         f"along the edge ({edges[k].tolist()}); it must point across it")
    return d1


def _check_connection(spec: SimplicialSpec, c: Connection) -> None:
    name = spec.name
    for p in c.parts:
        if not 0 <= p < len(spec.parts):
            raise ValueError(f"mesh {name!r}: connection between parts {c.parts} names part "
                             f"{p}, which does not exist ({len(spec.parts)} parts)")
    a, b = (spec.parts[p].name for p in c.parts)
    if c.kind == "point":
        shared = np.intersect1d(part_vertices(spec, c.parts[0]), part_vertices(spec, c.parts[1]))
        if not len(shared):
            raise ValueError(f"mesh {name!r}: point connection between parts {a!r} and {b!r}: "
                             "they share no vertex")
        if c.vertices is not None:
            extra = np.setdiff1d(np.asarray(c.vertices, dtype=np.int64), shared)
            if len(extra):
                raise ValueError(f"mesh {name!r}: point connection between parts {a!r} and "
                                 f"{b!r} names vertex {int(extra[0])}, which they don't share")
    else:
        ea, eb = (part_edges(spec, p) for p in c.parts)
        shared = {tuple(e) for e in ea.tolist()} & {tuple(e) for e in eb.tolist()}
        if not shared:
            raise ValueError(f"mesh {name!r}: curve connection between parts {a!r} and {b!r}: "
                             "they share no edge")
        kinds = {spec.parts[p].kind for p in c.parts}
        if kinds == {"rod"}:
            raise ValueError(f"mesh {name!r}: curve connection between rod parts {a!r} and "
                             f"{b!r}: two rods sharing an edge are one rod")


def _as_parts(parts) -> tuple:
    out = tuple(parts)
    for p in out:
        if not isinstance(p, Part):
            raise TypeError(f"parts must be Part objects, got {type(p).__name__}")
    names = [p.name for p in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"part name {sorted(dup)[0]!r} is used twice")
    return out


@dataclass(frozen=True, eq=False)
class SimplicialSpec:
    """A labelled conforming simplicial mesh (frozen; see the module docstring).

    vertices [m], [n, 3]; velocities [m/s], [n, 3]; rod_edges int [R, 2] with rod_part [R];
    triangles int [T, 3] with triangle_part [T]; tets int [K, 4] with tet_part [K]; parts:
    :class:`Part` per label; connections: :class:`Connection`; holds: :class:`MeshHold`;
    rod_d1 [R, 3] material direction of each rod edge (None: chosen by the solver).
    """

    name: str
    vertices: np.ndarray
    parts: tuple
    rod_edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    rod_part: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
    triangle_part: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tets: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
    tet_part: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    connections: tuple = ()
    holds: tuple = ()
    velocities: np.ndarray | None = None
    rod_d1: np.ndarray | None = None

    def __post_init__(self):
        name = self.name
        x = np.array(self.vertices, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != 3 or not len(x):
            raise ValueError(f"mesh {name!r}: vertices must have shape [n, 3], got {x.shape}")
        bad = np.nonzero(~np.isfinite(x).all(axis=1))[0]
        if len(bad):
            raise ValueError(f"mesh {name!r}: vertex {int(bad[0])} is not finite: "
                             f"{x[bad[0]].tolist()}")
        nv = len(x)
        sets = {"vertices": x, "parts": _as_parts(self.parts),
                "rod_edges": _indices(name, "rod edges", self.rod_edges, 2, nv),
                "triangles": _indices(name, "triangles", self.triangles, 3, nv),
                "tets": _indices(name, "tetrahedra", self.tets, 4, nv)}
        for lab in ("rod_part", "triangle_part", "tet_part"):
            sets[lab] = np.asarray(getattr(self, lab), dtype=np.int64).ravel()
        v = np.zeros_like(x) if self.velocities is None else \
            np.array(self.velocities, dtype=np.float64)
        if v.shape != x.shape or not np.isfinite(v).all():
            raise ValueError(f"mesh {name!r}: velocities must be finite with shape {x.shape}")
        sets["velocities"] = v
        if self.rod_d1 is not None:
            d1 = np.array(self.rod_d1, dtype=np.float64)
            if d1.shape != (len(sets["rod_edges"]), 3) or not np.isfinite(d1).all():
                raise ValueError(f"mesh {name!r}: rod_d1 must be finite with shape "
                                 f"{(len(sets['rod_edges']), 3)}")
            sets["rod_d1"] = _d1_across(name, d1, x, sets["rod_edges"])
        for what, items, cls in (("connections", self.connections, Connection),
                                 ("holds", self.holds, MeshHold)):
            for k, item in enumerate(items):
                if not isinstance(item, cls):
                    raise TypeError(f"mesh {name!r}: {what}[{k}] must be a {cls.__name__}, "
                                    f"got {type(item).__name__}")
        for k, val in sets.items():
            if isinstance(val, np.ndarray):
                val.setflags(write=False)
            object.__setattr__(self, k, val)
        object.__setattr__(self, "connections", tuple(self.connections))
        object.__setattr__(self, "holds", tuple(self.holds))
        check_simplicial(self)

    @property
    def n_vertices(self) -> int:
        return int(len(self.vertices))

    def surface_triangles(self) -> np.ndarray:
        """Shell triangles and the boundary faces of the tetrahedra, int [F, 3] (for drawing)."""
        return np.concatenate([self.triangles, boundary_faces(self.tets)]).astype(np.int64)

    def part_index(self, name: str) -> int:
        """Index of the part called ``name`` (KeyError listing the parts)."""
        for k, p in enumerate(self.parts):
            if p.name == name:
                return k
        raise KeyError(f"mesh {self.name!r} has no part {name!r}; parts: "
                       f"{', '.join(p.name for p in self.parts)}")

    def describe(self) -> dict:
        """A JSON summary (for trajectories' metadata): counts, the parts, the parts of the
        cells the exporters write as runs of ``[part, count]`` pairs (``triangle_parts``: the
        shell triangles', ``surface_parts``: the solids' boundary faces' in the order of
        :meth:`surface_triangles`, ``edge_parts``: the rod edges', ``tet_parts``: the
        tetrahedra's; the exporters' face and tetrahedron subsets and rod curves) and the
        connections."""
        _, face_tet = boundary_faces(self.tets, with_tets=True)
        return {"name": self.name, "vertices": self.n_vertices,
                "rod_edges": len(self.rod_edges), "triangles": len(self.triangles),
                "tetrahedra": len(self.tets),
                "parts": [{"name": p.name, "kind": p.kind} for p in self.parts],
                "triangle_parts": part_runs(self.triangle_part),
                "surface_parts": part_runs(np.asarray(self.tet_part, np.int64)[face_tet]),
                "edge_parts": part_runs(self.rod_part),
                "tet_parts": part_runs(self.tet_part),
                "connections": [{"kind": c.kind, "parts": list(c.parts), "mode": c.mode}
                                for c in self.connections]}


class SimplicialBuilder:
    """Assemble a :class:`SimplicialSpec` part by part.

    >>> import numpy as np
    >>> from strandlab.sim.simplicial import SimplicialBuilder, ShellMaterial
    >>> from strandlab.sim.material import Material
    >>> x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    >>> mb = SimplicialBuilder(x, name="demo")
    >>> rod = mb.add_rods([[0, 3]], material=Material(young_modulus=1e7, density=1e3,
    ...                                               radius=0.01), name="stalk")
    >>> cloth = mb.add_shells([[0, 1, 2]], material=ShellMaterial(1e6, 0.3, 1e-3, 500.0))
    >>> mb.connect(rod, cloth, kind="point", twist_stiffness=1.0, bend_stiffness=1.0)
    >>> mb.build().describe()["parts"]
    [{'name': 'stalk', 'kind': 'rod'}, {'name': 'shell1', 'kind': 'shell'}]
    """

    def __init__(self, vertices, *, name: str = "mesh", velocities=None):
        self.name = name
        self.vertices = np.asarray(vertices, dtype=np.float64)
        self.velocities = velocities
        self._parts: list[Part] = []
        self._cells = {"rod": [], "shell": [], "solid": []}
        self._conn: list[Connection] = []
        self._holds: list[MeshHold] = []
        self._rod_d1: list = []

    def _add(self, kind: str, cells, material, name) -> int:
        p = len(self._parts)
        part = Part(name or f"{kind}{p}", kind, material)
        try:
            c = np.asarray(cells, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"mesh {self.name!r}: part {part.name!r}: its cells are not an "
                             f"array of vertex indices ({exc})") from None
        n = _SIZE_OF[kind]
        if c.ndim != 2 or c.shape[1] != n or not len(c):
            what = {"rod": "rod edges", "shell": "triangles", "solid": "tetrahedra"}[kind]
            raise ValueError(f"mesh {self.name!r}: part {part.name!r}: {what} must have shape "
                             f"[n, {n}] with n >= 1, got {c.shape}")
        self._parts.append(part)
        self._cells[kind].append((c, p))
        return p

    def add_rods(self, edges, *, material: Material, name: str | None = None, d1=None) -> int:
        """Rod edges [R, 2] of one rod part; ``d1`` [R, 3] their material directions."""
        p = self._add("rod", edges, material, name)
        self._rod_d1.append(None if d1 is None else np.asarray(d1, dtype=np.float64))
        return p

    def add_shells(self, triangles, *, material: ShellMaterial, name: str | None = None) -> int:
        """Shell triangles [T, 3] of one shell part."""
        return self._add("shell", triangles, material, name)

    def add_solids(self, tets, *, material: SolidMaterial, name: str | None = None) -> int:
        """Solid tetrahedra [K, 4] (positive volume) of one solid part."""
        return self._add("solid", tets, material, name)

    def connect(self, part_a: int, part_b: int, *, kind: str, **options) -> None:
        """Join two parts (options of :class:`Connection`)."""
        self._conn.append(Connection(kind=kind, parts=(int(part_a), int(part_b)), **options))

    def hold(self, vertices, *, frame: int | None = None, rod_twist: bool = True,
             until: float | None = None, turn_only: bool = False) -> None:
        """Hold ``vertices`` in place, or move them with kinematic ``frame``, until time
        ``until`` [s] (None: for ever); ``turn_only``: they stay in place and ``frame`` turns
        the rod edges between them (:class:`MeshHold`)."""
        self._holds.append(MeshHold(tuple(int(v) for v in np.ravel(vertices)), frame,
                                    bool(rod_twist), until, bool(turn_only)))

    def build(self) -> SimplicialSpec:
        def cat(kind, cols):
            got = self._cells[kind]
            if not got:
                return np.zeros((0, cols)), np.zeros(0, np.int64)
            return (np.concatenate([c for c, _ in got]),
                    np.concatenate([np.full(len(c), p, np.int64) for c, p in got]))
        (re, rp), (tr, tp), (te, kp) = cat("rod", 2), cat("shell", 3), cat("solid", 4)
        d1 = None
        if any(d is not None for d in self._rod_d1):
            if any(d is None for d in self._rod_d1):
                raise ValueError(f"mesh {self.name!r}: give d1 for every rod part or none")
            d1 = np.concatenate(self._rod_d1)
        return SimplicialSpec(name=self.name, vertices=self.vertices, parts=tuple(self._parts),
                              rod_edges=re, rod_part=rp, triangles=tr, triangle_part=tp,
                              tets=te, tet_part=kp, connections=tuple(self._conn),
                              holds=tuple(self._holds), velocities=self.velocities, rod_d1=d1)
