"""Named parts of a mesh made in a modelling tool: each part's edges and triangles, with where
in the file each came from, for messages.  :mod:`.obj_parts` fills them from Wavefront OBJ
files, :mod:`.usd_parts` from USD stages and :mod:`.abc_parts` from Alembic archives (these two
through :func:`faces_part` and :func:`curves_part`); :mod:`.simplicial` makes rods, shells and
solids of them.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..geometry.tetmesh import tet_volumes
from .selection import prim_name

__all__ = ["MeshPart", "FaceSubset", "FileParts", "fan_is_flat", "add_polygon", "check_finite",
           "faces_part", "tets_part", "face_subset", "curves_part", "name_parts", "unnamed_keys",
           "short_names"]


@dataclass
class MeshPart:
    """The elements of one part: ``edges`` [E, 2], ``triangles`` [F, 3] and ``tets`` [K, 4]
    (vertex indices from 0; tetrahedra only from a USD ``TetMesh``), where in the file each
    came from (``edge_at``, ``triangle_at``, ``tet_at``: ``"line 12"`` in an OBJ file,
    ``"/root/Flag/Plane, face 3"`` in a USD stage), where the part starts (``at``) and, for a
    USD or Alembic mesh, the face of the mesh each triangle was cut from (``triangle_face``:
    what a :class:`FaceSubset` counts); ``surface``, ``surface_at``: for tetrahedra named
    together with a face subset (a strandlab export's solid part: its tetrahedra and its
    boundary faces), that subset's triangles, which must lie on their boundary."""

    at: str
    edges: list = field(default_factory=list)
    edge_at: list = field(default_factory=list)
    triangles: list = field(default_factory=list)
    triangle_at: list = field(default_factory=list)
    triangle_face: list = field(default_factory=list)
    tets: list = field(default_factory=list)
    tet_at: list = field(default_factory=list)
    surface: list = field(default_factory=list)
    surface_at: list = field(default_factory=list)


@dataclass(frozen=True)
class FaceSubset:
    """Faces of one mesh that a tool named: a USD ``GeomSubset`` of faces (Blender writes one
    per material slot, Houdini one per exported primitive group) or an Alembic face set; or
    tetrahedra of a USD ``TetMesh`` (a ``GeomSubset`` of ``elementType = "tetrahedron"``).
    ``mesh``: the path of the mesh's part; ``faces``: the indices of its faces (or
    tetrahedra) in the mesh (sorted, each once); ``element``: ``"face"`` or
    ``"tetrahedron"``."""

    mesh: str
    faces: np.ndarray
    element: str = "face"


def fan_is_flat(p: np.ndarray) -> bool:
    """Whether every triangle of the fan of the polygon of corners ``p`` [n, 3] from its first
    corner faces the polygon's own way (its Newell normal): false for a concave polygon, whose
    fan folds.

    >>> square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    >>> fan_is_flat(square), fan_is_flat(square[[1, 0, 2, 3]])
    (True, False)
    """
    q = np.roll(p, -1, axis=0)
    normal = np.cross(p, q).sum(axis=0)          # twice the polygon's vector area
    fan = np.cross(p[1:-1] - p[0], p[2:] - p[0])
    return bool(np.all(fan @ normal > 0.0))


def add_polygon(part: MeshPart, idx: list, corners: np.ndarray, at: str, file) -> None:
    """Add the polygon of vertex indices ``idx`` and corner positions ``corners`` [n, 3] to
    ``part`` as a fan of triangles from its first vertex, each from ``at`` in ``file``;
    ValueError naming both for a polygon whose fan would fold over itself (concave or
    twisted)."""
    if len(idx) > 3 and not fan_is_flat(corners):
        raise ValueError(f"{file}, {at}: a concave or twisted polygon of {len(idx)} vertices: "
                         "a fan of triangles would fold over itself (triangulate it in the "
                         "tool: Blender's OBJ exporter, Triangulated Mesh; its USD exporter, "
                         "Triangulate Mesh)")
    part.triangles += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    part.triangle_at += [at] * (len(idx) - 2)


@dataclass(frozen=True)
class FileParts:
    """A file's points [N, 3] (``vertices``: world coordinates, file units, every part's
    points in turn), its ``parts`` (:class:`MeshPart` by the object's path), its up axis
    (``up``: ``"z"`` or ``"y"``: what the file says, or its format's convention) and
    ``meters_per_unit``; ``subsets``: the faces its tool named within its meshes
    (:class:`FaceSubset` by the subset's path, the mesh's path and its name), parts of their
    own when a material names them (:func:`name_parts`); ``others``: the paths of its subsets
    of other elements (a USD ``GeomSubset`` of points or edges), no parts, which a material
    may name to no effect."""

    vertices: np.ndarray
    parts: dict
    up: str
    meters_per_unit: float
    subsets: dict = field(default_factory=dict)
    others: tuple = ()


def check_finite(x: np.ndarray, file, where: str) -> np.ndarray:
    """``x`` [n, 3]; ValueError naming ``file``, ``where`` and the point when one is not
    finite."""
    bad = np.nonzero(~np.isfinite(x).all(axis=1))[0]
    if len(bad):
        raise ValueError(f"{file}, {where}: point {int(bad[0])} is not finite")
    return x


def faces_part(where: str, counts, idx, x: np.ndarray, flip: bool, start: int,
               file) -> MeshPart:
    """The part of a mesh object at ``where`` (its path): polygons of ``counts`` [F] corners,
    ``idx`` the corners' points [sum(counts)] among its points ``x`` [n, 3] (world
    coordinates), each polygon's corners reversed when ``flip`` (a left-handed or clockwise
    mesh, or one mirrored by its transform), vertex indices from ``start``.  ValueError naming
    ``file``, the object and the face for a mesh without faces, a face of fewer than three
    corners, an index past the points, a polygon whose fan would fold."""
    counts = np.asarray(counts, dtype=np.int64)
    idx = np.asarray(idx, dtype=np.int64)
    if not len(counts):
        raise ValueError(f"{file}, {where}: a mesh without faces (Blender's USD and Alembic "
                         "exporters drop a mesh's loose edges: export a rod drawn as edges as "
                         "a curve, Object > Convert > Curve)")
    if counts.sum() != len(idx):
        raise ValueError(f"{file}, {where}: the face sizes sum to {int(counts.sum())} but "
                         f"there are {len(idx)} face indices")
    if counts.min() < 3:
        k = int(np.argmax(counts < 3))
        raise ValueError(f"{file}, {where}, face {k}: a face needs at least 3 corners, got "
                         f"{int(counts[k])}")
    if idx.min() < 0 or idx.max() >= len(x):
        j = int(np.argmax((idx < 0) | (idx >= len(x))))
        k = int(np.searchsorted(np.cumsum(counts), j, side="right"))
        raise ValueError(f"{file}, {where}, face {k}: point {int(idx[j])} does not exist (the "
                         f"mesh has {len(x)} points)")
    part = MeshPart(where)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for k, (a, c) in enumerate(zip(first.tolist(), counts.tolist())):
        poly = idx[a:a + c][::-1] if flip else idx[a:a + c]
        add_polygon(part, (poly + start).tolist(), x[poly], f"{where}, face {k}", file)
        part.triangle_face += [k] * (c - 2)
    return part


def tets_part(where: str, idx, x: np.ndarray, flip: bool, start: int, file) -> MeshPart:
    """The part of a tetrahedral mesh object at ``where`` (a USD ``TetMesh``): tetrahedra of
    the points ``idx`` [K, 4] among its points ``x`` [n, 3] (world coordinates), the last two
    of each swapped when ``flip`` (a left-handed mesh, or one mirrored by its transform),
    vertex indices from ``start``.  ValueError naming ``file``, the object and the
    tetrahedron for a mesh without tetrahedra, an index past the points, an inverted or flat
    tetrahedron (volume <= 0 after ``flip``: the USD convention)."""
    idx = np.asarray(idx, dtype=np.int64).reshape(-1, 4)
    if not len(idx):
        raise ValueError(f"{file}, {where}: a tetrahedral mesh without tetrahedra")
    if not (0 <= idx.min() and idx.max() < len(x)):
        k = int(np.argmax(((idx < 0) | (idx >= len(x))).any(axis=1)))
        raise ValueError(f"{file}, {where}, tetrahedron {k}: a point of {idx[k].tolist()} does "
                         f"not exist (the mesh has {len(x)} points)")
    if flip:
        idx = idx[:, [0, 1, 3, 2]]
    vol = tet_volumes(x, idx)
    if (vol <= 0.0).any():
        k = int(np.argmax(vol <= 0.0))
        raise ValueError(f"{file}, {where}, tetrahedron {k}: points {idx[k].tolist()} are "
                         f"{'inverted' if vol[k] < 0 else 'flat'} (volume {vol[k]:.3g} in "
                         "file units; a right-handed mesh's tetrahedra have positive volume: "
                         "swap two of its points, or mark the mesh left-handed)")
    part = MeshPart(where)
    part.tets = (idx + start).tolist()
    part.tet_at = [f"{where}, tetrahedron {k}" for k in range(len(idx))]
    return part


def face_subset(mesh: MeshPart, name: str, faces, file) -> tuple[str, FaceSubset]:
    """The path (``mesh``'s path and ``name``) and the :class:`FaceSubset` of the faces
    ``faces`` of ``mesh`` (a part :func:`faces_part` made), or of its tetrahedra when it has
    them (a part :func:`tets_part` made); ValueError naming ``file`` and the subset for a face
    or tetrahedron that the mesh does not have."""
    where = f"{mesh.at}/{name}"
    faces = np.unique(np.asarray(faces, dtype=np.int64))
    element = "tetrahedron" if mesh.tets else "face"
    n = len(mesh.tets) if mesh.tets else mesh.triangle_face[-1] + 1
    if len(faces) and (faces[0] < 0 or faces[-1] >= n):
        bad = int(faces[0] if faces[0] < 0 else faces[-1])
        many = "tetrahedra" if mesh.tets else "faces"
        raise ValueError(f"{file}, {where}: {element} {bad} does not exist (the mesh has {n} "
                         f"{many})")
    return where, FaceSubset(mesh.at, faces, element)


def curves_part(where: str, counts, closed: bool, start: int, file) -> MeshPart:
    """The part of a polyline object at ``where``: curves of ``counts`` [C] points each, in
    turn, closed when ``closed``, vertex indices from ``start``.  ValueError naming ``file``,
    the object and the curve for a curve of too few points."""
    part = MeshPart(where)
    a = start
    for k, n in enumerate(np.asarray(counts, dtype=np.int64).tolist()):
        if n < (3 if closed else 2):
            raise ValueError(f"{file}, {where}, curve {k}: {n} point{'s' * (n != 1)}: too few "
                             f"for {'a closed' if closed else 'an open'} rod")
        ids = list(range(a, a + n)) + ([a] if closed else [])
        part.edges += list(zip(ids[:-1], ids[1:]))
        part.edge_at += [f"{where}, curve {k}"] * (len(ids) - 1)
        a += n
    return part


def _lookup(key: str, paths) -> list:
    """The paths among ``paths`` that ``key`` names: the one it is, else those with ``key`` as
    one name on them."""
    return [q for q in paths if key == q] or \
        [q for q in paths if key in q.strip("/").split("/")]


def _carve(part: MeshPart, pieces: dict, subsets: dict, p) -> tuple[MeshPart, dict]:
    """``part``'s triangles (or tetrahedra) split between the named subsets ``pieces`` (subset
    path -> name) and what is left of ``part``; ValueError naming ``p`` for a face (or
    tetrahedron) in two of them."""
    word = "tetrahedron" if part.tets else "face"
    owner: dict = {}
    for path in pieces:
        for f in subsets[path].faces.tolist():
            if f in owner:
                raise ValueError(f"{p}, {part.at}, {word} {f}: in the {word} subsets "
                                 f"{owner[f]} and {path}, both named as parts (a {word} is in "
                                 "one part)")
            owner[f] = path
    rest = MeshPart(part.at)
    out = {path: MeshPart(path) for path in pieces}
    for tri, at, f in zip(part.triangles, part.triangle_at, part.triangle_face):
        to = out[owner[f]] if f in owner else rest
        to.triangles.append(tri)
        to.triangle_at.append(at)
        to.triangle_face.append(f)
    for k, (tet, at) in enumerate(zip(part.tets, part.tet_at)):
        to = out[owner[k]] if k in owner else rest
        to.tets.append(tet)
        to.tet_at.append(at)
    return rest, {pieces[path]: piece for path, piece in out.items()}


def name_parts(parts: dict, keys: Iterable, p, subsets: Mapping | None = None) -> dict:
    """``parts`` (by the path of their object or prim) renamed by the names in ``keys`` (a
    scene's part names, its materials' keys): a key that is a part's path, or one name on
    exactly one part's path, names that part; other parts keep their paths.  A key that names
    no part may name one of the face ``subsets`` (:class:`FaceSubset` by path) by its path or
    by its own name (the last on its path; Blender's material's): its faces then leave their
    mesh's part and are a part of their own, and the mesh's part keeps the faces no named
    subset takes (none left: no part).  A key that names nothing so is looked for as a prim
    name (:func:`~.selection.prim_name`: ``"rib 1"`` as ``rib_1``, as an export writes it).
    A key that names one tetrahedron subset and face
    subsets besides (a strandlab export names a solid part's tetrahedra and its boundary faces
    alike) names the tetrahedra; the faces leave their mesh as the part's ``surface``.
    ValueError naming ``p`` for a key that names several parts or subsets otherwise, a part or
    subset named twice, a face in two named subsets.

    >>> name_parts({"/root/Banner/Plane": 1, "/root/Pole/Curve": 2}, ["Banner", "x"], "f")
    {'Banner': 1, '/root/Pole/Curve': 2}
    """
    subsets = subsets or {}
    names: dict = {}
    for key in keys:
        if not isinstance(key, str):
            continue
        # a subset's path is its mesh's and its own name: a name that is on it and names no
        # part is the subset's own
        hits = _hits(key, parts, subsets)
        solid = _solid_and_surface(hits, subsets)
        if len(hits) > 1 and solid is None:
            what = "objects" if hits[0] in parts else "face subsets"
            raise ValueError(f"{p}: part name {key!r} is on the paths of several {what}: "
                             f"{', '.join(hits)}; name one by its path")
        for h in hits:
            if h in names:
                raise ValueError(f"{p}: the {'object' if h in parts else 'face subset'} "
                                 f"{h} is named twice, as {_name(names[h])!r} and {key!r}")
            names[h] = key if solid is None or h == solid else (key,)
    out, surfaces = {}, {}
    for q, part in parts.items():
        pieces = {s: key for s, key in names.items()
                  if s in subsets and subsets[s].mesh == q}
        if pieces:
            part, carved = _carve(part, pieces, subsets, p)
        if not pieces or part.edges or part.triangles or part.tets:
            out[names.get(q, q)] = part
        for key, piece in (carved.items() if pieces else ()):
            if isinstance(key, tuple):      # a solid's boundary faces: its surface
                surfaces[key[0]] = piece
            else:
                out[key] = piece
    for key, piece in surfaces.items():
        out[key].surface, out[key].surface_at = piece.triangles, piece.triangle_at
    return out


def _hits(key: str, parts, subsets) -> list:
    """The paths of ``parts``, else of ``subsets``, that ``key`` names (:func:`_lookup`), also
    as an export writes a prim's name (``"rib 1"`` as ``rib_1``)."""
    hits = _lookup(key, parts) or _lookup(key, subsets)
    if not hits and prim_name(key) != key:
        hits = _lookup(prim_name(key), parts) or _lookup(prim_name(key), subsets)
    return hits


def unnamed_keys(keys: Iterable, parts, subsets=(), others=()) -> list:
    """The keys among ``keys`` (a scene's part names, its materials' keys) that name none of
    ``parts``, face ``subsets`` or ``others`` (paths: a file's subsets of other elements) as
    :func:`name_parts` takes names; a key that is no string names nothing.

    >>> unnamed_keys(["Banner", "Banr", 3], ["/root/Banner/Plane"])
    ['Banr', 3]
    """
    return [k for k in keys if not isinstance(k, str)
            or not (_hits(k, parts, subsets) or _hits(k, others, ()))]


def _name(key) -> str:
    """A part name as :func:`name_parts` keeps it (a surface's as a 1-tuple)."""
    return key[0] if isinstance(key, tuple) else key


def _solid_and_surface(hits: list, subsets: Mapping):
    """The tetrahedron subset among the paths ``hits`` when they are one tetrahedron subset
    and face subsets besides (a solid part's tetrahedra and boundary faces, as a strandlab
    export names them alike); else None."""
    tets = [h for h in hits if h in subsets and subsets[h].element == "tetrahedron"]
    if len(hits) > 1 and len(tets) == 1 and all(h in subsets for h in hits):
        return tets[0]
    return None


#: Containers at the top of a path, by the name they start with, and how many names they
#: take: Blender's USD exports (``/root/<object>/<mesh>``) and strandlab's own
#: (``/strandlab/<scope>/<part>``); their names name nothing a user made.
CONTAINERS = {"root": 1, "strandlab": 2}


def short_names(paths) -> dict:
    """Per path, the name nearest the root on it that no other path has (what
    :func:`name_parts` takes for it: the object's name in Blender's and Houdini's layouts),
    else the path itself; a path's :data:`CONTAINERS` are passed over while a name after them
    will do (so ``/root/Cube/Cube`` alone is ``Cube``, not ``root``).

    >>> short_names(["/root/Banner/Plane", "/root/Pole/Pole", "/geo/x", "/geo/x/y"])
    {'/root/Banner/Plane': 'Banner', '/root/Pole/Pole': 'Pole', '/geo/x': '/geo/x', '/geo/x/y': 'y'}
    >>> short_names(["/strandlab/meshes/gadget", "/strandlab/rods/thin"])
    {'/strandlab/meshes/gadget': 'gadget', '/strandlab/rods/thin': 'thin'}
    >>> short_names(["/root/Cube/Cube"])
    {'/root/Cube/Cube': 'Cube'}
    """
    names = {q: q.strip("/").split("/") for q in paths}
    out = {}
    for q, words in names.items():
        unique = [w for w in words if not any(w in other for r, other in names.items()
                                              if r != q)]
        skip = CONTAINERS.get(words[0], 0) if len(words) > 1 else 0
        inner = [w for w in unique if w in words[skip:]]
        out[q] = (inner or unique or [q])[0]
    return out
