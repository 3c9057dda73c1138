"""Tetrahedra from Gmsh and vertex welding, shared by the built-in scenes' meshes
(:mod:`strandlab.scenes.meshing`) and the mesh files (:mod:`strandlab.io.simplicial`).

Gmsh (the ``gmsh`` wheel, the ``mesh`` extra) is imported when a solid is meshed.  Every
tetrahedron is returned with positive volume in its vertex order
(:mod:`strandlab.sim.simplicial`).
"""
from __future__ import annotations

import numpy as np

from ..extras import require

__all__ = ["orient_tets", "gmsh_tets", "surface_tets", "weld_vertices", "tet_quality",
           "enclosed_volume", "odd_edges", "tet_volumes", "shared_pieces"]


def _gmsh():
    return require("gmsh", "Meshing solids", "gmsh", "mesh")


def tet_volumes(x, tets) -> np.ndarray:
    """The signed volume of each tetrahedron ``(a, b, c, d)`` of ``tets`` [K, 4] over the
    points ``x`` [N, 3]: ``(b - a) x (c - a) . (d - a) / 6``, positive when ``d`` lies on the
    side of ``a, b, c`` their anticlockwise turn points to.

    >>> tet_volumes([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 1, 2, 3], [0, 2, 1, 3]])
    array([ 0.16666667, -0.16666667])
    """
    x = np.asarray(x, dtype=np.float64)
    t = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
    e1, e2, e3 = (x[t[:, k]] - x[t[:, 0]] for k in (1, 2, 3))
    return np.einsum("ij,ij->i", e1, np.cross(e2, e3)) / 6.0


def orient_tets(x: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """``tets`` [K, 4] with the last two vertices swapped where the volume is negative."""
    t = np.array(tets, dtype=np.int64)
    neg = tet_volumes(x, t) < 0
    t[neg, 2], t[neg, 3] = t[neg, 3].copy(), t[neg, 2].copy()
    return t


def _nodes_and_tets(gmsh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gmsh's node tags [N], coordinates [N, 3] and tetrahedra (node tags) [K, 4]."""
    tags, coords, _ = gmsh.model.mesh.getNodes()
    _, nodes = gmsh.model.mesh.getElementsByType(4)
    return (np.asarray(tags, dtype=np.int64), np.asarray(coords, dtype=np.float64).reshape(-1, 3),
            np.asarray(nodes, dtype=np.int64).reshape(-1, 4))


def gmsh_tets(build) -> tuple[np.ndarray, np.ndarray]:
    """Run ``build(gmsh)`` on a new Gmsh model, mesh it in 3D and return the vertices the
    tetrahedra use [V, 3] and the tetrahedra [K, 4] (positive volumes)."""
    def collect(gmsh):
        tags, x_all, tet_tags = _nodes_and_tets(gmsh)
        used = np.unique(tet_tags)
        row = np.empty(int(tags.max()) + 1, dtype=np.int64)
        row[tags] = np.arange(len(tags))
        renum = np.empty(int(used.max()) + 1, dtype=np.int64)
        renum[used] = np.arange(len(used))
        x = x_all[row[used]]
        return x, orient_tets(x, renum[tet_tags])

    return _session(build, collect)


def _session(build, collect):
    gmsh = _gmsh()
    started = gmsh.isInitialized()
    if not started:
        gmsh.initialize(interruptible=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("strandlab")
        build(gmsh)
        gmsh.model.mesh.generate(3)
        return collect(gmsh)
    finally:
        gmsh.model.remove()
        if not started:
            gmsh.finalize()


def surface_tets(x, triangles) -> tuple[np.ndarray, np.ndarray]:
    """Tetrahedra filling the closed triangle surface ``triangles`` [F, 3] over the vertices
    ``x`` [V, 3] [m] (Gmsh's 3D Delaunay mesher, sized by the surface's own triangles, which it
    keeps): returns the new interior vertices [N, 3] and the tetrahedra [K, 4], whose indices
    below ``V`` are those of ``x`` (the surface's vertices stay where they are, so that what is
    attached to them stays attached) and from ``V`` on the new vertices.  The surface need not
    be oriented, and may be several closed pieces: each is filled, and a piece inside another
    is its cavity (a hollow solid; a piece inside that cavity is filled again).  ValueError
    naming an edge of a hole when an edge is on an odd number of the triangles (one: the rim
    of a hole), and when Gmsh finds no volume (a surface that crosses itself).

    >>> x = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    >>> new, tets = surface_tets(x, [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]])
    >>> len(new), sorted(tets[0].tolist())
    (0, [0, 1, 2, 3])
    """
    x = np.asarray(x, dtype=np.float64)
    f = np.asarray(triangles, dtype=np.int64)
    if x.ndim != 2 or x.shape[1] != 3 or f.ndim != 2 or f.shape[1] != 3 or not len(f):
        raise ValueError(f"surface_tets needs vertices [V, 3] and triangles [F, 3], got shapes "
                         f"{x.shape} and {f.shape}")
    used = np.unique(f)
    if used[0] < 0 or used[-1] >= len(x):
        raise ValueError(f"surface_tets: triangle vertex {int(used[-1])} out of range "
                         f"(0..{len(x) - 1})")

    _check_closed(x, f)
    n = len(used)
    local = np.searchsorted(used, f) + 1        # Gmsh's node tags: 1..n, so that its
    # renumbering after meshing (Mesh.Renumber) leaves the surface's nodes as they are

    piece = shared_pieces(local - 1)
    xs = x[used]
    parent = _nesting(xs, local - 1, piece)

    def build(gmsh):
        loops = []
        for k in range(len(parent)):
            s = gmsh.model.addDiscreteEntity(2)
            tri = local[piece == k]
            nodes = np.unique(tri)
            gmsh.model.mesh.addNodes(2, s, nodes.tolist(), xs[nodes - 1].ravel().tolist())
            gmsh.model.mesh.addElementsByType(s, 2, [], tri.ravel().tolist())
            loops.append(gmsh.model.geo.addSurfaceLoop([s]))
        depth = [_depth(parent, k) for k in range(len(parent))]
        for k in range(len(parent)):
            if depth[k] % 2 == 0:        # a solid's outside; its cavities are its children
                gmsh.model.geo.addVolume([loops[k]] + [loops[j] for j in range(len(parent))
                                                       if parent[j] == k])
        gmsh.model.geo.synchronize()

    def collect(gmsh):
        tags, coords, tet_tags = _nodes_and_tets(gmsh)
        index = np.empty(int(max(tags.max(), n)) + 1, dtype=np.int64)
        index[1: n + 1] = used
        kept = (tags >= 1) & (tags <= n)
        if np.count_nonzero(kept) != n or not np.array_equal(coords[kept][np.argsort(
                tags[kept])], x[used]):
            raise RuntimeError("Gmsh moved or renumbered the surface's vertices")
        new_tags = np.sort(tags[~kept])
        index[new_tags] = len(x) + np.arange(len(new_tags))
        where = np.empty(int(tags.max()) + 1, dtype=np.int64)
        where[tags] = np.arange(len(tags))
        new = coords[where[new_tags]]
        return new, orient_tets(np.concatenate([x, new]), index[tet_tags])

    try:
        new, tets = _session(build, collect)
    except Exception as exc:
        raise ValueError(f"Gmsh cannot fill the surface with tetrahedra ({exc}); it must be "
                         "closed and must not cross itself") from None
    if not len(tets):
        raise ValueError("Gmsh found no volume inside the surface; it must be closed and "
                         "must not cross itself")
    return new, tets


def odd_edges(f) -> np.ndarray:
    """The edges [k, 2] (vertex pairs, sorted) of the triangles ``f`` [F, 3] that lie on an odd
    number of them: none for a closed surface, whose edges are each on two triangles (or on an
    even number, where closed pieces touch along an edge); a hole's rim otherwise.

    >>> odd_edges([[0, 1, 2], [0, 2, 3]]).tolist()
    [[0, 1], [0, 3], [1, 2], [2, 3]]
    """
    f = np.asarray(f, dtype=np.int64).reshape(-1, 3)
    e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    edges, count = np.unique(e, axis=0, return_counts=True)
    return edges[count % 2 == 1]


def _check_closed(x: np.ndarray, f: np.ndarray) -> None:
    """ValueError naming an edge of the triangles ``f`` [F, 3] that is on an odd number of
    them (:func:`odd_edges`)."""
    odd = odd_edges(f)
    if len(odd):
        a, b = (int(v) for v in odd[0])
        mid = ", ".join(f"{c:.6g}" for c in 0.5 * (x[a] + x[b]))
        raise ValueError(f"the surface is not closed: {len(odd)} of its edges are on an "
                         f"odd number of its triangles, as the rim of a hole is (one: the edge "
                         f"of vertices {a} and {b}, its middle at ({mid})); it must be closed "
                         "and must not cross itself")


def shared_pieces(keys) -> np.ndarray:
    """The piece of each row of ``keys`` int [C, k] (rows sharing a key, or joined by a chain
    of such rows, are in one piece: triangles by their vertices, tetrahedra by their faces'
    numbers), numbered from 0 in order of first appearance, int [C].

    >>> shared_pieces([[0, 1, 2], [5, 6, 7], [2, 3, 4], [7, 8, 9]]).tolist()
    [0, 1, 0, 1]
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    keys = np.asarray(keys, dtype=np.int64)
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    _, col = np.unique(keys.ravel(), return_inverse=True)
    rows = np.repeat(np.arange(len(keys)), keys.shape[1])
    graph = coo_matrix((np.ones(rows.size), (rows, col.ravel())),
                       shape=(len(keys), int(col.max()) + 1)).tocsr()
    _, label = connected_components(graph @ graph.T, directed=False)
    _, first, inv = np.unique(label, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inv.ravel()]


def _winding(x: np.ndarray, f: np.ndarray, p: np.ndarray) -> float:
    """The winding number of the closed triangle surface ``f`` over ``x`` about the point
    ``p`` (the solid angles of its triangles over 4 pi; Van Oosterom and Strackee 1983): +-1
    inside, 0 outside."""
    a, b, c = x[f[:, 0]] - p, x[f[:, 1]] - p, x[f[:, 2]] - p
    la, lb, lc = (np.linalg.norm(v, axis=1) for v in (a, b, c))
    num = np.einsum("ij,ij->i", a, np.cross(b, c))
    den = (la * lb * lc + np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", b, c) * la
           + np.einsum("ij,ij->i", c, a) * lb)
    return float(2.0 * np.arctan2(num, den).sum() / (4.0 * np.pi))


def _nesting(x: np.ndarray, f: np.ndarray, piece: np.ndarray) -> list:
    """Per closed piece of a surface, the innermost other piece that encloses it, or -1."""
    m = int(piece.max()) + 1
    inside = np.zeros((m, m), dtype=bool)
    for k in range(m):
        p = x[f[piece == k][0, 0]]
        for j in range(m):
            inside[k, j] = j != k and abs(_winding(x, f[piece == j], p)) > 0.5
    depth = inside.sum(axis=1)
    return [int(max(np.nonzero(inside[k])[0], key=lambda j: depth[j], default=-1))
            for k in range(m)]


def enclosed_volume(x, triangles) -> float:
    """The volume [m^3] that :func:`surface_tets` fills inside the closed triangle surface
    ``triangles`` [F, 3] over ``x`` [V, 3]: each closed piece's enclosed volume, less its
    cavities' (pieces inside it), whichever way the triangles face.

    >>> x = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    >>> round(enclosed_volume(x, [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]]), 12)
    0.166666666667
    """
    x = np.asarray(x, dtype=np.float64)
    f = np.asarray(triangles, dtype=np.int64)
    piece = shared_pieces(f)
    parent = _nesting(x, f, piece)
    total = 0.0
    for k in range(len(parent)):
        a, b, c = (x[f[piece == k][:, j]] for j in range(3))
        v = abs(np.einsum("ij,ij->", a, np.cross(b, c))) / 6.0
        total += v if _depth(parent, k) % 2 == 0 else -v
    return float(total)


def _depth(parent: list, k: int) -> int:
    d = 0
    while parent[k] >= 0:
        k, d = parent[k], d + 1
    return d


def weld_vertices(x, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices ``x`` [V, 3] with every cluster of vertices within ``tol`` of each other (by
    chains of pairs; ``tol = 0``: equal vertices) made one: returns the welded vertices
    [W, 3] (each cluster's first vertex, in the order of first appearance) and the index of
    each input vertex among them [V].

    >>> w, index = weld_vertices([[0, 0, 0], [1, 0, 0], [0, 0, 1e-9]], 1e-6)
    >>> w.tolist(), index.tolist()
    ([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [0, 1, 0])
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    x = np.asarray(x, dtype=np.float64)
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"the welding distance must be a finite number >= 0, got {tol!r}")
    n = len(x)
    pairs = cKDTree(x).query_pairs(float(tol), output_type="ndarray") if n \
        else np.zeros((0, 2), dtype=np.int64)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    first = np.full(label.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(first, label, np.arange(n))
    order = np.argsort(first)          # SciPy does not promise its labels' order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return x[first[order]], rank[label]


def tet_quality(x, tets) -> np.ndarray:
    """Each tetrahedron's shape quality [K]: ``6 sqrt(2) V / l^3``, ``V`` its volume and ``l``
    the root mean square of its six edges: 1 for a regular tetrahedron, near 0 for a flat
    one (a sliver).

    >>> x = [[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1],      # regular
    ...      [0, 0, 0], [1, 0, 0], [0, 1, 0], [0.3, 0.3, 0.01]]    # nearly flat
    >>> tet_quality(x, [[0, 1, 2, 3], [4, 5, 6, 7]]).round(3).tolist()
    [1.0, 0.017]
    """
    x = np.asarray(x, dtype=np.float64)
    t = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
    vol = np.abs(tet_volumes(x, t))
    sq = sum(np.einsum("ij,ij->i", d, d) for d in
             [x[t[:, a]] - x[t[:, b]] for a in range(4) for b in range(a + 1, 4)])
    rms = np.sqrt(sq / 6.0)
    return 6.0 * np.sqrt(2.0) * vol / np.where(rms > 0.0, rms, 1.0) ** 3
