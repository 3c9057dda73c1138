"""The broad phase of mesh contact (:mod:`.mesh_contact`): the point-triangle and edge-edge
pairs of triangle meshes closer than a reach, and how far the vertices moved since.

Reach.  Each vertex ``v`` has a margin ``m_v`` [m] (how far it may move while the pairs are
used); a pair's reach is ``dhat + m_A + m_B``, ``m_A`` the largest margin of its first side's
vertices (the point, or the first edge's two) and ``m_B`` that of the other side's (the
triangle's three, or the second edge's two).  A pair farther apart than its reach cannot come
within ``dhat`` while every vertex stays within its margin: each point of a side moves at most
that side's largest margin.  With one margin for all, every reach is ``dhat + 2 m``.

Broad phase: the hashed uniform grid of :mod:`.grid` over the surface vertices, voxel
``l_max + r_max`` (``l_max`` the longest surface edge, ``r_max`` the largest reach).  A point
within ``r_max`` of a triangle is within ``l_max + r_max`` of one of its vertices, and two edges
within ``r_max`` have endpoints within ``l_max + r_max`` of each other, so searching each
vertex's 27 voxels for vertices closer than the voxel finds every pair; each pair is reported
once, by the first of its vertex pairs (in a fixed order) that are that close, and kept when the
bounding boxes of its two primitives are closer than its reach (the distance between the boxes,
a lower bound of the pair's; the same bound skips the exact distance of a pair farther than
``dhat`` in an evaluation and of a move too short to reach it) and its exact distance is below
its reach.  The search allocates nothing; its buffers grow outside the step when they overflow.

Pairs (:data:`POINT_TRIANGLE`: vertices ``(p, t0, t1, t2)``; :data:`EDGE_EDGE_PAIR`: ``(a0, a1,
b0, b1)``) never hold a vertex and a triangle that contains it, or two edges that share a
vertex.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .grid import build_point_grid, voxel_bucket
from .triangle_distance import (
    edge_edge_coefficients,
    point_triangle_coefficients,
    squared_distance,
)

__all__ = ["box_gap2", "find_mesh_pairs", "max_moved", "margin_excess", "surface_edges",
           "vertex_incidence", "POINT_TRIANGLE", "EDGE_EDGE_PAIR"]

POINT_TRIANGLE = 0   #: Pair kind: vertices (p, t0, t1, t2)
EDGE_EDGE_PAIR = 1   #: Pair kind: vertices (a0, a1, b0, b1)


@njit(cache=True, _nrt=False)
def box_gap2(q, i0, i1, i2, i3, kind):
    """Squared distance [m^2] between the bounding boxes of a pair's two sides (the point at
    DOF ``i0`` against the triangle at ``i1, i2, i3``, or the edge ``i0, i1`` against ``i2,
    i3``; ``y``, ``z`` follow each ``x``): a lower bound of the pair's squared distance."""
    g2 = 0.0
    for a in range(3):
        if kind == POINT_TRIANGLE:
            lo0 = hi0 = q[i0 + a]
            lo1 = min(q[i1 + a], q[i2 + a], q[i3 + a])
            hi1 = max(q[i1 + a], q[i2 + a], q[i3 + a])
        else:
            lo0, hi0 = min(q[i0 + a], q[i1 + a]), max(q[i0 + a], q[i1 + a])
            lo1, hi1 = min(q[i2 + a], q[i3 + a]), max(q[i2 + a], q[i3 + a])
        gap = max(lo1 - hi0, lo0 - hi1, 0.0)
        g2 += gap * gap
    return g2


@njit(cache=True, _nrt=False)
def _gather(q_in, vertex_dofs, pts, x_out):
    """``x_out[v] = q[vertex_dofs[v] + 0:3]`` for the grid vertices; returns the first vertex
    with a non-finite coordinate, or -1."""
    for i in range(pts.shape[0]):
        v = pts[i]
        for a in range(3):
            x_out[v, a] = q_in[vertex_dofs[v] + a]
            if not math.isfinite(x_out[v, a]):
                return v
    return -1


@njit(cache=True, _nrt=False)
def _drift2(q_in, vertex_dofs, v, x_ref):
    """Squared distance [m^2] of vertex ``v`` at ``q_in`` from its row of ``x_ref``."""
    d2 = 0.0
    for a in range(3):
        d = q_in[vertex_dofs[v] + a] - x_ref[v, a]
        d2 += d * d
    return d2


@njit(cache=True, _nrt=False)
def max_moved(q_in, vertex_dofs, pts, x_ref):
    """Largest distance [m] of a grid vertex at ``q_in`` from its row of ``x_ref`` [V, 3] (inf
    when a coordinate is not finite)."""
    worst = 0.0
    for i in range(pts.shape[0]):
        d2 = _drift2(q_in, vertex_dofs, pts[i], x_ref)
        if not (d2 <= worst):
            if not math.isfinite(d2):
                return math.inf
            worst = d2
    return math.sqrt(worst)


@njit(cache=True, _nrt=False)
def margin_excess(q_in, vertex_dofs, pts, x_ref, margin_in, ahead_in):
    """Largest ``|x_v - x_ref[v]| + ahead_in[v] - margin_in[v]`` [m] over the grid vertices
    (``x_v`` at ``q_in``): how far the vertex that most overshoots its margin is beyond it,
    ``ahead_in`` [V] a further displacement to allow for; <= 0 when every vertex is within its
    margin (inf when a coordinate is not finite)."""
    worst = -math.inf
    for i in range(pts.shape[0]):
        v = pts[i]
        d2 = _drift2(q_in, vertex_dofs, v, x_ref)
        if not math.isfinite(d2):
            return math.inf
        worst = max(worst, math.sqrt(d2) + ahead_in[v] - margin_in[v])
    return worst


@njit(cache=True, _nrt=False)
def _d2(x, a, b):
    return ((x[a, 0] - x[b, 0]) ** 2 + (x[a, 1] - x[b, 1]) ** 2
            + (x[a, 2] - x[b, 2]) ** 2)


@njit(cache=True, _nrt=False)
def _longest_edge(x, tri, edges):
    """Longest edge [m] of the triangles and of the edge list."""
    l2 = 0.0
    for t in range(tri.shape[0]):
        for c in range(3):
            l2 = max(l2, _d2(x, tri[t, c], tri[t, (c + 1) % 3]))
    for e in range(edges.shape[0]):
        l2 = max(l2, _d2(x, edges[e, 0], edges[e, 1]))
    return math.sqrt(l2)


@njit(cache=True, _nrt=False)
def _first_near_vertex(x, i, tri, t, v2):
    """First vertex of triangle ``t`` closer than ``sqrt(v2)`` to vertex ``i``, or -1."""
    for c in range(3):
        if _d2(x, tri[t, c], i) < v2:
            return tri[t, c]
    return -1


@njit(cache=True, _nrt=False)
def _first_near_pair(x, e, f, edges, v2):
    """First end pair ``(a, b)``, ``a`` of edge ``e`` and ``b`` of ``f``, closer than
    ``sqrt(v2)``, in the order (a0 b0, a0 b1, a1 b0, a1 b1); ``(-1, -1)`` when none."""
    for u in range(2):
        for v in range(2):
            if _d2(x, edges[e, u], edges[f, v]) < v2:
                return edges[e, u], edges[f, v]
    return -1, -1


@njit(cache=True, _nrt=False)
def _put(pairs_out, kind_out, n, kind, a, b, c, d):
    if n < pairs_out.shape[0]:
        pairs_out[n, 0] = a
        pairs_out[n, 1] = b
        pairs_out[n, 2] = c
        pairs_out[n, 3] = d
        kind_out[n] = kind
    return n + 1


@njit(cache=True, _nrt=False)
def _close(q_in, vd, kind, a, b, c, d, reach, w_scratch):
    """Whether the pair's exact distance is below ``reach`` (``w_scratch[0]`` used)."""
    if kind == POINT_TRIANGLE:
        point_triangle_coefficients(q_in, vd[a], vd[b], vd[c], vd[d], w_scratch, 0)
    else:
        edge_edge_coefficients(q_in, vd[a], vd[b], vd[c], vd[d], w_scratch, 0)
    return squared_distance(q_in, vd[a], vd[b], vd[c], vd[d], w_scratch, 0) < reach * reach


@njit(cache=True, _nrt=False)
def _pairs_of(q_in, vd, x, topo, i, j, v2, reach_in, w_scratch, pairs_out, kind_out, n):
    """Pairs reported by the vertex pair ``(i, j)`` (closer than the voxel): ``i`` against the
    triangles at ``j``, the edges at ``i`` against those at ``j``; ``reach_in`` is ``(dhat,
    margins [V])`` (module docstring, "Reach")."""
    tri, edges, vt_ptr, vt_idx, ve_ptr, ve_idx = topo
    dhat, m = reach_in
    for u in range(vt_ptr[j], vt_ptr[j + 1]):
        t = vt_idx[u]
        a, b, c = tri[t, 0], tri[t, 1], tri[t, 2]
        if i == a or i == b or i == c:
            continue
        reach = dhat + m[i] + max(m[a], m[b], m[c])
        if box_gap2(q_in, vd[i], vd[a], vd[b], vd[c], POINT_TRIANGLE) >= reach * reach:
            continue
        if _first_near_vertex(x, i, tri, t, v2) != j:
            continue
        if _close(q_in, vd, POINT_TRIANGLE, i, a, b, c, reach, w_scratch):
            n = _put(pairs_out, kind_out, n, POINT_TRIANGLE, i, a, b, c)
    for u in range(ve_ptr[i], ve_ptr[i + 1]):
        e = ve_idx[u]
        a, b = edges[e, 0], edges[e, 1]
        for v in range(ve_ptr[j], ve_ptr[j + 1]):
            f = ve_idx[v]
            c, d = edges[f, 0], edges[f, 1]
            if f <= e or a == c or a == d or b == c or b == d:
                continue
            reach = dhat + max(m[a], m[b]) + max(m[c], m[d])
            if box_gap2(q_in, vd[a], vd[b], vd[c], vd[d], EDGE_EDGE_PAIR) >= reach * reach:
                continue
            ni, nj = _first_near_pair(x, e, f, edges, v2)
            if ni != i or nj != j:
                continue
            if _close(q_in, vd, EDGE_EDGE_PAIR, a, b, c, d, reach, w_scratch):
                n = _put(pairs_out, kind_out, n, EDGE_EDGE_PAIR, a, b, c, d)
    return n


@njit(cache=True, _nrt=False)
def _search_vertex(q_in, vd, x, topo, grid, i, voxel, reach_in, w_scratch, pairs_out, kind_out,
                   n):
    """Pairs reported from vertex ``i``: the vertices of its 27 voxels closer than ``voxel``."""
    mask = grid.cell_fill.shape[0] - 1
    v2 = voxel * voxel
    for dx in range(-1, 2):
        for dy in range(-1, 2):
            for dz in range(-1, 2):
                ci = grid.point_cell[i, 0] + dx
                cj = grid.point_cell[i, 1] + dy
                ck = grid.point_cell[i, 2] + dz
                b = voxel_bucket(ci, cj, ck, mask)
                for k in range(grid.cell_start[b], grid.cell_start[b + 1]):
                    if (grid.item_cell[k, 0] != ci or grid.item_cell[k, 1] != cj
                            or grid.item_cell[k, 2] != ck):
                        continue  # another voxel in the same bucket
                    j = grid.cell_items[k]
                    if j == i or _d2(x, i, j) >= v2:
                        continue
                    n = _pairs_of(q_in, vd, x, topo, i, j, v2, reach_in, w_scratch, pairs_out,
                                  kind_out, n)
    return n


@njit(cache=True, _nrt=False)
def find_mesh_pairs(q_in, vertex_dofs, pts, topo, reach_in, x_scratch, w_scratch, grid,
                    pairs_out, kind_out):
    """Point-triangle and edge-edge pairs closer than their reach (module docstring).

    q_in : positions, vertex ``v`` at ``q_in[vertex_dofs[v] + 0:3]`` [m].
    pts : int64 [G], the vertices of the surface.
    topo : ``(triangles [F, 3], edges [E, 2], vt_ptr, vt_idx, ve_ptr, ve_idx)``: the
        triangles and edges at each vertex as CSR lists.
    reach_in : ``(dhat, margins)``: the contact thickness [m] and each vertex's margin
        float64 [V] [m] (module docstring, "Reach").
    x_scratch [V, 3], w_scratch [>= 1, 12], grid (:func:`~.grid.make_point_grid` of ``pts``):
        work memory.
    pairs_out int64 [K, 4], kind_out int64 [K]: the first ``min(n, K)`` pairs and kinds.

    Returns ``(n, bad)``: ``n`` pairs (``n > K``: overflow, grow and search again) and -1, or
    ``(0, v)`` with ``v`` a vertex whose position is not finite or too far out.
    """
    bad = _gather(q_in, vertex_dofs, pts, x_scratch)
    if bad >= 0:
        return 0, bad
    top = 0.0
    for u in range(pts.shape[0]):
        top = max(top, reach_in[1][pts[u]])
    voxel = _longest_edge(x_scratch, topo[0], topo[1]) + reach_in[0] + 2.0 * top
    bad = build_point_grid(x_scratch, pts, voxel, grid)
    if bad >= 0:
        return 0, bad
    n = 0
    for u in range(pts.shape[0]):
        n = _search_vertex(q_in, vertex_dofs, x_scratch, topo, grid, pts[u], voxel, reach_in,
                           w_scratch, pairs_out, kind_out, n)
    return n, -1


def surface_edges(triangles) -> np.ndarray:
    """The distinct edges of ``triangles`` (int [F, 3]) as int64 [E, 2], ``a < b``, sorted."""
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    e = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
    return np.unique(np.sort(e, axis=1), axis=0)


def vertex_incidence(items: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR lists of the rows of ``items`` [R, c] at each of ``n`` vertices."""
    rows = np.repeat(np.arange(items.shape[0], dtype=np.int64), items.shape[1])
    verts = items.reshape(-1)
    order = np.argsort(verts, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(verts, minlength=n), out=ptr[1:])
    return ptr, np.ascontiguousarray(rows[order])
