"""Meshes for the built-in rod/shell/solid scenes: tetrahedra from Gmsh, triangles of simple
surfaces.

Solids are tetrahedralised by Gmsh (the ``gmsh`` wheel, imported when a solid is meshed), with
a structured (transfinite) mesh for boxes so that beam tests converge cleanly and surfaces of
other parts can meet a box on its grid lines.  Every tetrahedron is returned with positive volume
in its vertex order (:mod:`strandlab.sim.simplicial`).
"""
from __future__ import annotations

import math

import numpy as np

from ..geometry.tetmesh import gmsh_tets, orient_tets

__all__ = ["box_tets", "ball_tets", "ellipsoid_tets", "grid_triangles", "strip_triangles",
           "disk_triangles", "cylinder_triangles", "orient_tets", "merge_vertices",
           "rotation_between", "surface_path"]


def box_tets(lo, hi, divisions) -> tuple[np.ndarray, np.ndarray]:
    """A structured tetrahedral mesh of the box ``lo``..``hi`` [m] with ``divisions``
    ``(nx, ny, nz)`` cells along the axes (Gmsh transfinite volume): vertices [V, 3], tets
    [K, 4].  The grid's vertices lie at ``lo + (i, j, k) * (hi - lo) / divisions``."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    n = [int(d) for d in divisions]
    if len(n) != 3 or min(n) < 1 or not np.all(hi > lo):
        raise ValueError(f"box_tets needs hi > lo and three divisions >= 1, got {lo}, {hi}, {n}")

    def build(gmsh):
        geo = gmsh.model.geo
        pts = [geo.addPoint(*(lo + (hi - lo) * np.array([i, j, k])))
               for k in (0, 1) for j in (0, 1) for i in (0, 1)]
        # lines along x, y, z
        def line(a, b):
            return geo.addLine(pts[a], pts[b])
        ex = [line(0, 1), line(2, 3), line(4, 5), line(6, 7)]
        ey = [line(0, 2), line(1, 3), line(4, 6), line(5, 7)]
        ez = [line(0, 4), line(1, 5), line(2, 6), line(3, 7)]
        faces = [(ex[0], ey[1], -ex[1], -ey[0]), (ex[2], ey[3], -ex[3], -ey[2]),
                 (ex[0], ez[1], -ex[2], -ez[0]), (ex[1], ez[3], -ex[3], -ez[2]),
                 (ey[0], ez[2], -ey[2], -ez[0]), (ey[1], ez[3], -ey[3], -ez[1])]
        surf = [geo.addPlaneSurface([geo.addCurveLoop(list(f))]) for f in faces]
        vol = geo.addVolume([geo.addSurfaceLoop(surf)])
        geo.synchronize()
        mesh = gmsh.model.mesh
        for lines, k in ((ex, n[0]), (ey, n[1]), (ez, n[2])):
            for c in lines:
                mesh.setTransfiniteCurve(c, k + 1)
        for s in surf:
            mesh.setTransfiniteSurface(s)
        mesh.setTransfiniteVolume(vol)

    return gmsh_tets(build)


def ball_tets(center, radius: float, size: float) -> tuple[np.ndarray, np.ndarray]:
    """An unstructured tetrahedral mesh of a ball (Gmsh, target edge length ``size`` [m]; Gmsh
    keeps at least a few elements around, so a large ``size`` saturates).  The poles
    ``center +- radius e_z`` are vertices (the built-in objects attach rods there)."""
    c = np.asarray(center, dtype=np.float64)
    if not (radius > 0 and size > 0):
        raise ValueError(f"ball_tets needs radius > 0 and size > 0, got {radius}, {size}")

    def build(gmsh):
        gmsh.model.occ.addSphere(float(c[0]), float(c[1]), float(c[2]), float(radius))
        gmsh.model.occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMax", float(size))
        gmsh.option.setNumber("Mesh.MeshSizeMin", float(size) / 3.0)

    return gmsh_tets(build)


def ellipsoid_tets(center, radii, size: float) -> tuple[np.ndarray, np.ndarray]:
    """An unstructured tetrahedral mesh of the ellipsoid with semi-axes ``radii`` (along x, y,
    z) [m] about ``center`` (a Gmsh ball of radius 1 scaled along the axes; target edge
    length ``size`` [m] on the unit ball before scaling times the largest semi-axis).  The two
    poles ``center +- radii_z e_z`` are vertices, as in :func:`ball_tets`."""
    c = np.asarray(center, dtype=np.float64)
    r = np.asarray(radii, dtype=np.float64)
    if r.shape != (3,) or not np.all(r > 0) or not size > 0:
        raise ValueError(f"ellipsoid_tets needs three radii > 0 and size > 0, got {radii}, "
                         f"{size}")
    x, tets = ball_tets((0.0, 0.0, 0.0), 1.0, size / float(r.max()))
    return c + x * r, orient_tets(c + x * r, tets)


def rotation_between(a, b) -> np.ndarray:
    """The rotation [3, 3] of least angle that turns the direction ``a`` onto ``b``."""
    a = np.asarray(a, dtype=np.float64) / np.linalg.norm(a)
    b = np.asarray(b, dtype=np.float64) / np.linalg.norm(b)
    v, c = np.cross(a, b), float(np.dot(a, b))
    if c < -1.0 + 1e-12:                                 # half a turn about any normal of a
        n = np.cross(a, np.eye(3)[int(np.argmin(np.abs(a)))])
        n /= np.linalg.norm(n)
        return 2.0 * np.outer(n, n) - np.eye(3)
    k = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.eye(3) + k + k @ k / (1.0 + c)


def surface_path(x: np.ndarray, faces: np.ndarray, start: int, end: int,
                 weight=None) -> np.ndarray:
    """The shortest path of surface edges (the edges of ``faces`` [F, 3]) from vertex ``start``
    to vertex ``end``: vertex indices in order.  ``weight(a, b)`` [E] -> [E] (default: edge
    length) prices each edge ``a[k] -> b[k]``."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import dijkstra

    f = np.asarray(faces, dtype=np.int64)
    e = np.unique(np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1),
                  axis=0)
    w = np.linalg.norm(x[e[:, 1]] - x[e[:, 0]], axis=1) if weight is None else \
        np.asarray(weight(e[:, 0], e[:, 1]), dtype=np.float64)
    n = len(x)
    g = coo_matrix((np.r_[w, w], (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])),
                   shape=(n, n)).tocsr()
    dist, pred = dijkstra(g, indices=int(start), return_predecessors=True)
    if not np.isfinite(dist[end]):
        raise ValueError(f"no path of surface edges from vertex {start} to vertex {end}")
    path = [int(end)]
    while path[-1] != start:
        path.append(int(pred[path[-1]]))
    return np.asarray(path[::-1], dtype=np.int64)


def grid_triangles(nx: int, ny: int) -> np.ndarray:
    """Triangles [2 nx ny, 3] of a grid of ``(nx + 1) x (ny + 1)`` vertices numbered
    ``i + (nx + 1) j``, each cell cut along alternating diagonals (no preferred direction)."""
    tri = []
    for j in range(ny):
        for i in range(nx):
            a, b = i + (nx + 1) * j, i + 1 + (nx + 1) * j
            c, d = a + nx + 1, b + nx + 1
            tri += [(a, b, d), (a, d, c)] if (i + j) % 2 == 0 else [(a, b, c), (b, d, c)]
    return np.asarray(tri, dtype=np.int64)


def strip_triangles(x0: float, x1: float, rows: int, spacing: float):
    """A strip ``x0 <= x <= x1``, ``0 <= y <= rows h`` (``h = spacing sqrt(3) / 2``) of nearly
    equilateral triangles of side ``spacing`` [m] in the plane z = 0 (rows offset by half a
    side; every row also has a vertex at both ends, so the ends are straight): vertices
    [V, 3], triangles [T, 3] (normals along +z).  Hinge bending is calibrated on equilateral
    meshes (:mod:`strandlab.mixed.shell`)."""
    h = spacing * math.sqrt(3.0) / 2.0
    pts, rows_idx = [], []
    for j in range(rows + 1):
        off = 0.5 * spacing * (j % 2)
        xs = {round(x0, 12), round(x1, 12)}
        k = 0
        while x0 + off + k * spacing < x1 - 1e-9 * spacing:
            if x0 + off + k * spacing > x0 + 1e-9 * spacing:
                xs.add(round(x0 + off + k * spacing, 12))
            k += 1
        xs = sorted(xs)
        rows_idx.append(list(range(len(pts), len(pts) + len(xs))))
        pts += [[v, j * h, 0.0] for v in xs]
    x = np.asarray(pts, dtype=np.float64)
    tri = []
    for j in range(rows):
        a, b = rows_idx[j], rows_idx[j + 1]
        i = k = 0
        while i < len(a) - 1 or k < len(b) - 1:       # advance the row lagging behind in x
            if k < len(b) - 1 and (i >= len(a) - 1 or x[b[k + 1], 0] <= x[a[i + 1], 0]):
                tri.append((a[i], b[k + 1], b[k]))
                k += 1
            else:
                tri.append((a[i], a[i + 1], b[k]))
                i += 1
    return x, np.asarray(tri, dtype=np.int64)


def disk_triangles(radius: float, rings: int, *, center=(0.0, 0.0, 0.0)):
    """A disk of ``rings`` rings in the plane z = centre z: vertices [V, 3] (the centre first,
    ring ``r`` with ``6 r`` vertices) and triangles [T, 3] (normals along +z)."""
    x = [np.zeros(3)]
    start = [0]
    for r in range(1, rings + 1):
        start.append(len(x))
        a = 2 * np.pi * np.arange(6 * r) / (6 * r)
        x += list(np.c_[r / rings * radius * np.cos(a), r / rings * radius * np.sin(a),
                        np.zeros(6 * r)])
    tri = [(0, k % 6 + 1, (k + 1) % 6 + 1) for k in range(6)]
    for r in range(2, rings + 1):
        inner, outer = start[r - 1], start[r]
        ni, no = 6 * (r - 1), 6 * r
        i = o = 0
        while i < ni or o < no:
            # advance along whichever ring lags in angle
            if o < no and (i >= ni or (o + 1) / no <= (i + 1) / ni):
                tri.append((inner + i % ni, outer + o % no, outer + (o + 1) % no))
                o += 1
            else:
                tri.append((inner + i % ni, outer + (o % no), inner + (i + 1) % ni))
                i += 1
    return np.asarray(x) + np.asarray(center, dtype=np.float64), np.asarray(tri, dtype=np.int64)


def cylinder_triangles(radius: float, length: float, n_around: int, n_along: int):
    """An open cylinder along +x: vertices [V, 3] (ring ``j`` at ``x = j length / n_along``,
    ``n_around`` per ring) and triangles [T, 3] (normals outwards)."""
    a = 2 * np.pi * np.arange(n_around) / n_around
    x = np.concatenate([np.c_[np.full(n_around, j * length / n_along), radius * np.cos(a),
                              radius * np.sin(a)] for j in range(n_along + 1)])
    tri = []
    for j in range(n_along):
        for i in range(n_around):
            p, q = j * n_around + i, j * n_around + (i + 1) % n_around
            tri += [(p, q, q + n_around), (p, q + n_around, p + n_around)]
    return x, np.asarray(tri, dtype=np.int64)


def merge_vertices(*pieces, tol: float = 1e-9):
    """Join vertex sets: ``pieces`` are vertex arrays [n_i, 3]; returns the merged vertices and,
    per piece, the index of each of its vertices in the merged set (coincident vertices within
    ``tol`` [m] become one, so that cells built on different pieces share them)."""
    allx = np.concatenate(pieces)
    key = np.round(allx / tol).astype(np.int64)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    inv = rank[inv.ravel()]
    merged = allx[np.sort(first)]
    out, k = [], 0
    for p in pieces:
        out.append(inv[k: k + len(p)])
        k += len(p)
    return merged, out
