"""What a labelled mesh file holds, before materials are given: its parts, what each could be
(rod, shell or solid), and which parts touch and how (the connections they could have).  For a
mesh made in a modelling tool (OBJ, USD, Alembic: :mod:`.mesh_parts`) or Gmsh / VTU
(:mod:`.simplicial`); the ``strandlab mesh`` command prints it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..geometry.tetmesh import enclosed_volume, odd_edges, tet_volumes

__all__ = ["PartInfo", "SubsetInfo", "MeshInfo", "describe_mesh_file", "near_misses",
           "NEAR_MISS"]

#: Vertices of two parts closer than this fraction of the mesh's extent (its bounding box's
#: diagonal) that are not one vertex are a near miss: parts that look joined but are not.
NEAR_MISS = 1e-3


@dataclass(frozen=True)
class PartInfo:
    """One part: its ``name``, counts of ``lines`` (rod edges), ``triangles`` and
    ``tetrahedra``, of the ``vertices`` they use, whether its triangles are ``closed`` (no edge
    on an odd number of them: it can be a solid's surface) and the ``volume`` they enclose
    [m^3] (closed surfaces; of the tetrahedra for a part that has them), and the kinds it can
    take (``kinds``; none when it mixes lines with triangles or tetrahedra: a part is one
    kind); ``fill``: for a closed surface, the part whose tetrahedra fill it when no material
    names that part (a USD ``TetMesh``, :mod:`.tet_fill`), for such a part the surfaces it
    fills (comma-separated); else empty."""

    name: str
    lines: int
    triangles: int
    tetrahedra: int
    vertices: int
    closed: bool
    volume: float
    kinds: tuple
    fill: str = ""


@dataclass(frozen=True)
class SubsetInfo:
    """A face subset of a USD or Alembic mesh (:class:`~.mesh_parts.FaceSubset`): its path
    (``name``), its mesh's part (``mesh``), its ``triangles``, whether they are ``closed`` and
    the ``volume`` they enclose [m^3] (a solid's when closed) and the part whose tetrahedra
    fill it (``fill``, as :class:`PartInfo`'s); or a subset of a USD ``TetMesh``'s
    ``tetrahedra`` (no triangles), ``volume`` theirs.  A material that names it makes its
    faces (or tetrahedra) a part of their own."""

    name: str
    mesh: str
    triangles: int
    closed: bool
    volume: float
    fill: str = ""
    tetrahedra: int = 0


@dataclass(frozen=True)
class MeshInfo:
    """A mesh file's ``vertices`` (after welding; ``file_vertices`` as written), its extent
    ``lower``, ``upper`` [m] and ``parts``; ``touching``: per pair of parts that share vertices,
    ``(a, b, shared vertices, shared edges)``: a curve connection needs shared edges, a point
    connection a shared vertex; ``near``: per pair of parts with a near miss
    (:func:`near_misses`), ``(a, b, closest distance [m])``; ``subsets``: the face subsets of
    a USD or Alembic file's meshes (:class:`SubsetInfo`); ``groups``: whether the file has
    groups (Gmsh, VTU: a scene file's hold may name one that no material makes a part, its
    cells left out, :func:`~strandlab.io.simplicial.file_groups`), and ``points``: its groups
    of points only, ``(name, vertices)``, which can only be held."""

    path: Path
    file_vertices: int
    vertices: int
    lower: tuple
    upper: tuple
    parts: tuple
    touching: tuple
    near: tuple = ()
    subsets: tuple = ()
    groups: bool = False
    points: tuple = ()


def _edges(lines, triangles, tets) -> set:
    """The undirected edges of a part's cells, as sorted vertex pairs."""
    e = [np.asarray(lines, dtype=np.int64).reshape(-1, 2)]
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    e += [t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]
    k = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
    e += [k[:, [a, b]] for a in range(4) for b in range(a + 1, 4)]
    pairs = np.sort(np.concatenate(e), axis=1)
    return set(map(tuple, pairs.tolist()))


def _closed_volume(x, triangles) -> tuple[bool, float]:
    """(closed, enclosed volume [m^3]) of a triangle set: closed as the reader takes a solid's
    surface to be (no edge on an odd number of triangles: :func:`odd_edges`); the volume a
    solid's filling would have (cavities taken out)."""
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if not len(t) or len(odd_edges(t)):
        return False, 0.0
    return True, enclosed_volume(x, t)


def near_misses(x, members: dict, within: float | None = None) -> list:
    """Pairs of parts with vertices closer than ``within`` (default :data:`NEAR_MISS` times the
    diagonal of the bounding box of ``x``) that are not shared: ``members`` maps each part's
    name to its vertex indices into ``x`` [V, 3]; returns ``(a, b, closest distance)`` per pair
    of parts, a vertex of ``a`` that ``b`` lacks against one of ``b`` that ``a`` lacks.

    >>> near_misses([[0, 0, 0], [1, 0, 0], [1, 1e-5, 0]], {"a": [0, 1], "b": [2]})
    [('a', 'b', 1e-05)]
    """
    from scipy.spatial import cKDTree

    x = np.asarray(x, dtype=np.float64)
    if within is None:
        within = NEAR_MISS * float(np.linalg.norm(x.max(axis=0) - x.min(axis=0)))
    pairs = cKDTree(x).query_pairs(within, output_type="ndarray")
    if not len(pairs):
        return []
    names = list(members)
    inside = np.zeros((len(names), len(x)), dtype=bool)
    for k, n in enumerate(names):
        inside[k, np.asarray(members[n], dtype=np.int64)] = True
    d = np.linalg.norm(x[pairs[:, 0]] - x[pairs[:, 1]], axis=1)
    out = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            i, j = pairs[:, 0], pairs[:, 1]
            only_a, only_b = inside[a] & ~inside[b], inside[b] & ~inside[a]
            hit = (only_a[i] & only_b[j]) | (only_b[i] & only_a[j])
            if hit.any():
                out.append((names[a], names[b], float(d[hit].min())))
    return out


def _tet_volume(x, tets) -> float:
    return float(np.abs(tet_volumes(x, tets)).sum())


def describe_mesh_file(path, *, up: str | None = None, weld: float = 1e-6,
                       scale: float | None = None) -> MeshInfo:
    """A :class:`MeshInfo` of the mesh file ``path`` (``.obj``, ``.usd``, ``.abc``, ``.msh``,
    ``.vtu``), read as :func:`~strandlab.io.simplicial.read_simplicial` reads it (``up``,
    ``scale``, and ``weld`` for OBJ, USD and Alembic files; a USD or Alembic part named by its
    path) but without materials: a part's possible kinds come from its cells (lines: a rod;
    triangles: a shell, or a solid when they close; tetrahedra: a solid)."""
    from .simplicial import file_contents, file_groups

    p = Path(path)
    x_file, x, cells, file_subsets = file_contents(p, up=up, weld=weld, scale=scale)
    groups = file_groups(p, up=up, scale=scale)[1]
    parts, edges, verts = [], {}, {}
    for name, (lines, triangles, tets) in cells.items():
        closed, volume = _closed_volume(x, triangles)
        if len(tets):
            volume = _tet_volume(x, tets)
        kinds = () if len(lines) and (len(triangles) or len(tets)) else tuple(
            k for k, ok in (("rod", len(lines)), ("shell", len(triangles) and not len(tets)),
                            ("solid", closed or len(tets))) if ok)
        used = np.unique(np.concatenate([np.ravel(lines), np.ravel(triangles),
                                         np.ravel(tets)]).astype(np.int64))
        parts.append(PartInfo(name, len(lines), len(triangles), len(tets), len(used), closed,
                              volume, kinds))
        edges[name], verts[name] = _edges(lines, triangles, tets), set(used.tolist())
    names = list(cells)
    touching = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            shared = len(verts[a] & verts[b])
            if shared:
                touching.append((a, b, shared, len(edges[a] & edges[b])))
    lower, upper = x.min(axis=0), x.max(axis=0)
    near = near_misses(x, {n: sorted(v) for n, v in verts.items()})
    subsets = [SubsetInfo(name, mesh, 0, False, _tet_volume(x, c), tetrahedra=len(c))
               if c.shape[1] == 4 else SubsetInfo(name, mesh, len(c), *_closed_volume(x, c))
               for name, (mesh, c) in file_subsets.items()]
    surfaces = {pt.name: cells[pt.name][1] for pt in parts} | \
        {s.name: file_subsets[s.name][1] for s in subsets}
    fill = _fills(cells, surfaces, {pt.name for pt in parts if pt.closed}
                  | {s.name for s in subsets if s.closed})
    parts = [replace(pt, fill=fill.get(pt.name, "")) for pt in parts]
    subsets = tuple(replace(s, fill=fill.get(s.name, "")) for s in subsets)
    points = tuple((g, len(v)) for g, v in groups.items() if g not in cells)
    return MeshInfo(p, len(x_file), len(x), tuple(lower.tolist()), tuple(upper.tolist()),
                    tuple(parts), tuple(touching), tuple(near), subsets, bool(groups), points)


def _fills(cells: dict, surfaces: dict, closed) -> dict:
    """Which closed surfaces (``closed``, names of ``surfaces``: triangles by part or subset)
    the tetrahedral parts of ``cells`` fill (:class:`~.tet_fill.TetFills`): the filling part's
    name by surface, and the surfaces (comma-separated) by filling part."""
    from .tet_fill import TetFills

    fills = TetFills()
    for name, (lines, triangles, tets) in cells.items():
        if len(tets) and not len(lines) and not len(triangles):
            fills.add(name, tets)
    out: dict = {}
    for name in surfaces:
        if name in closed:
            for key in fills.take_parts(surfaces[name]) or ():
                out[name] = ", ".join(filter(None, [out.get(name, ""), key]))
                out[key] = ", ".join(filter(None, [out.get(key, ""), name]))
    return out
