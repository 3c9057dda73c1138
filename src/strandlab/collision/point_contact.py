"""Contacts of particles as spheres with each other and with capsule segments, over flat arrays.

A model that any solver can hand over: particles of shape-matched clusters (a board, a crate:
the particle-based rigid bodies of Harada 2007 that Rungjiratananon et al. 2011 use in their
Fig. 9) are spheres of a radius, in *groups* (one per cluster; particles of one group never
touch each other).  :func:`make_point_set` packs them into a :class:`PointSet`.  The hashed
uniform grid of :mod:`.grid` (:func:`~.grid.make_point_grid`) finds

- sphere pairs of different groups closer than ``r_i + r_j + margin``
  (:func:`find_point_pairs`: every sphere looks at the spheres of the 27 voxels around its
  own, voxels at least ``2 r_max + margin``), and
- sphere-capsule pairs closer than ``r_p + r_s + margin`` (:func:`find_point_segment_pairs`:
  every segment looks at the spheres of the 27 voxels around its midpoint's; a sphere that
  close to a segment is within ``l / 2 + r_p + r_s + margin`` of its midpoint, so voxels of at
  least ``l_max / 2 + r_p,max + r_s,max + margin`` make the search exact).  A segment may name
  two groups it never touches (the clusters its strand is tied to, near the knots).

Both projections keep every pair on the side it had at reference positions (the start of a
step: :func:`point_pair_normals`, :func:`point_segment_normals`), so a pair that moved through
each other within the step is pushed back, not on through; the displacement is split by
inverse mass (and, on a segment, by the barycentric weights ``1 - t``, ``t`` of the closest
point), so linear momentum is kept, and the particles of every contact get
``mass_scale >= heavy`` (heavier in the shape matching that follows, as for segment contacts).
After the step, :func:`point_contact_velocities` makes the pushed pairs inelastic (no
separating normal velocity) with Coulomb friction, impulses split the same way.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .grid import build_point_grid, voxel_bucket

__all__ = ["PointSet", "make_point_set", "point_voxel_needed", "find_point_pairs",
           "find_point_segment_pairs", "point_pair_normals", "point_segment_normals",
           "project_point_pairs", "project_point_segment_pairs", "point_contact_velocities"]


class PointSet(NamedTuple):
    """Particles as spheres in groups (read only; :func:`make_point_set`); ``G`` spheres."""

    points: np.ndarray         #: Particle index of each sphere, int64 [G]
    radius: np.ndarray         #: Sphere radius [m], [G]
    group: np.ndarray          #: Group of each sphere (never in contact within one), int64 [G]
    sphere_of: np.ndarray      #: Sphere of each particle or -1, int64 [P]
    max_radius: float          #: Largest radius [m]


def make_point_set(points, radius, group, n_points: int) -> PointSet:
    """Check and pack spheres: particle indices ``points`` [G] in ``[0, n_points)`` (each at
    most once), radii [m] (one number or [G], finite and >= 0), groups (integers >= 0, [G]).
    ValueError names the offending sphere.  The set lists the spheres by ascending particle
    (pairs index that order; ``sphere_of`` maps a particle to its sphere)."""
    p = np.asarray(points)
    if p.ndim != 1 or not (np.issubdtype(p.dtype, np.integer) or p.size == 0):
        raise ValueError(f"points must be a one-dimensional integer array, got {p.dtype} "
                         f"{p.shape}")
    p = p.astype(np.int64)
    g = len(p)
    bad = np.nonzero((p < 0) | (p >= n_points))[0]
    if len(bad):
        raise ValueError(f"sphere {int(bad[0])}: particle {int(p[bad[0]])} is out of range "
                         f"[0, {n_points})")
    if len(np.unique(p)) != g:
        raise ValueError("a particle is listed as more than one sphere")
    rad = np.broadcast_to(np.asarray(radius, dtype=np.float64), (g,)).copy()
    bad = np.nonzero(~np.isfinite(rad) | (rad < 0.0))[0]
    if len(bad):
        raise ValueError(f"radius of sphere {int(bad[0])} must be finite and >= 0, got "
                         f"{rad[bad[0]]!r}")
    grp = np.asarray(group)
    if grp.shape != (g,) or not (np.issubdtype(grp.dtype, np.integer) or g == 0) or \
            (g and grp.min() < 0):
        raise ValueError(f"group must be integers >= 0, one per sphere ({g})")
    order = np.argsort(p, kind="stable")
    sphere_of = np.full(int(n_points), -1, np.int64)
    sphere_of[p[order]] = np.arange(g)
    return PointSet(points=p[order], radius=rad[order], group=grp.astype(np.int64)[order],
                    sphere_of=sphere_of, max_radius=float(rad.max()) if g else 0.0)


@njit(cache=True, _nrt=False)
def point_voxel_needed(x, ps, segs, margin, left_out):
    """Smallest voxel [m] for which both searches are exact: ``2 r_max + margin`` and
    ``l_max / 2 + r_p,max + r_s,max + margin`` (``l_max`` the longest segment now, not counting
    the segments ``m`` with ``left_out[m]`` true (bool [S]): torn segments, whose pairs are
    dropped, would otherwise grow the voxel to the distance between the pieces)."""
    longest = 0.0
    for m in range(segs.a.shape[0]):
        if left_out[m]:
            continue
        a, b = segs.a[m], segs.b[m]
        d = math.sqrt((x[b, 0] - x[a, 0]) ** 2 + (x[b, 1] - x[a, 1]) ** 2
                      + (x[b, 2] - x[a, 2]) ** 2)
        longest = max(longest, d)
    v = 2.0 * ps.max_radius + margin
    if segs.a.shape[0] > 0:
        v = max(v, 0.5 * longest + ps.max_radius + segs.max_radius + margin)
    return v


@njit(cache=True, _nrt=False, inline="always")
def _point_segment_gap(x, p, a, b):
    """Closest point ``t`` in [0, 1] of segment ``x[a] x[b]`` to ``x[p]``, the vector from it to
    ``x[p]`` and its length: ``(t, dx, dy, dz, dist)``."""
    ux = x[b, 0] - x[a, 0]
    uy = x[b, 1] - x[a, 1]
    uz = x[b, 2] - x[a, 2]
    uu = ux * ux + uy * uy + uz * uz
    t = 0.0
    if uu > 0.0:
        t = ((x[p, 0] - x[a, 0]) * ux + (x[p, 1] - x[a, 1]) * uy + (x[p, 2] - x[a, 2]) * uz) / uu
        t = min(1.0, max(0.0, t))
    dx = x[p, 0] - (x[a, 0] + t * ux)
    dy = x[p, 1] - (x[a, 1] + t * uy)
    dz = x[p, 2] - (x[a, 2] + t * uz)
    return t, dx, dy, dz, math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, _nrt=False)
def find_point_pairs(x, ps, voxel, margin, grid, pairs_out):
    """Sphere pairs ``(k, l)`` (indices into ``ps``, ``k < l``) of different groups closer
    than ``r_k + r_l + margin`` [m], by the grid (``voxel`` [m] at least
    :func:`point_voxel_needed`; ``grid`` from ``make_point_grid(len(ps.points), P)``, rebuilt
    here).  The first ``len(pairs_out)`` rows receive them; returns ``(n, bad)``: the number
    found (``n > len(pairs_out)``: overflow, grow and search again) and -1 or a particle whose
    position is not finite."""
    bad = build_point_grid(x, ps.points, voxel, grid)
    if bad >= 0:
        return 0, bad
    mask = grid.cell_fill.shape[0] - 1
    cell = grid.point_cell
    n = 0
    for k in range(ps.points.shape[0]):
        p = ps.points[k]
        for di in range(-1, 2):
            for dj in range(-1, 2):
                for dk in range(-1, 2):
                    ci, cj, ck = cell[p, 0] + di, cell[p, 1] + dj, cell[p, 2] + dk
                    b = voxel_bucket(ci, cj, ck, mask)
                    for s in range(grid.cell_start[b], grid.cell_start[b + 1]):
                        if grid.item_cell[s, 0] != ci or grid.item_cell[s, 1] != cj or \
                                grid.item_cell[s, 2] != ck:
                            continue
                        q = grid.cell_items[s]
                        if q <= p:
                            continue
                        l_ = ps.sphere_of[q]
                        if ps.group[l_] == ps.group[k]:
                            continue
                        d2 = (x[p, 0] - x[q, 0]) ** 2 + (x[p, 1] - x[q, 1]) ** 2 + \
                            (x[p, 2] - x[q, 2]) ** 2
                        reach = ps.radius[k] + ps.radius[l_] + margin
                        if d2 < reach * reach:
                            if n < pairs_out.shape[0]:
                                pairs_out[n, 0] = min(k, l_)
                                pairs_out[n, 1] = max(k, l_)
                            n += 1
    return n, -1


@njit(cache=True, _nrt=False)
def find_point_segment_pairs(x, ps, segs, seg_skip_group, voxel, margin, grid, pairs_out):
    """Sphere-capsule pairs ``(k, m)`` (sphere ``k`` of ``ps``, segment ``m`` of ``segs``)
    closer than ``r_k + r_m + margin`` [m], on the grid of the last :func:`find_point_pairs`
    (or ``build_point_grid`` of ``ps.points``) with voxels of ``voxel`` [m].  A segment never
    touches the spheres of the groups ``seg_skip_group[m, 0]`` and ``[m, 1]`` (-1: none; a
    strand tied to clusters at both ends), nor a sphere that is one of its own particles.
    Returns the number found (see :func:`find_point_pairs`)."""
    mask = grid.cell_fill.shape[0] - 1
    n = 0
    for m in range(segs.a.shape[0]):
        a, b = segs.a[m], segs.b[m]
        ci0 = int(math.floor(0.5 * (x[a, 0] + x[b, 0]) / voxel))
        cj0 = int(math.floor(0.5 * (x[a, 1] + x[b, 1]) / voxel))
        ck0 = int(math.floor(0.5 * (x[a, 2] + x[b, 2]) / voxel))
        for di in range(-1, 2):
            for dj in range(-1, 2):
                for dk in range(-1, 2):
                    ci, cj, ck = ci0 + di, cj0 + dj, ck0 + dk
                    bk = voxel_bucket(ci, cj, ck, mask)
                    for s in range(grid.cell_start[bk], grid.cell_start[bk + 1]):
                        if grid.item_cell[s, 0] != ci or grid.item_cell[s, 1] != cj or \
                                grid.item_cell[s, 2] != ck:
                            continue
                        q = grid.cell_items[s]
                        if q == a or q == b:
                            continue
                        k = ps.sphere_of[q]
                        if ps.group[k] == seg_skip_group[m, 0] or \
                                ps.group[k] == seg_skip_group[m, 1]:
                            continue
                        dist = _point_segment_gap(x, q, a, b)[4]
                        if dist < ps.radius[k] + segs.radius[m] + margin:
                            if n < pairs_out.shape[0]:
                                pairs_out[n, 0] = k
                                pairs_out[n, 1] = m
                            n += 1
    return n


@njit(cache=True, _nrt=False)
def point_pair_normals(x_ref, ps, pairs, n_pairs, normals_out):
    """Unit vector from the second sphere of each pair to the first at ``x_ref`` (zero where
    they coincide: the pair is then left alone)."""
    for r in range(n_pairs):
        p, q = ps.points[pairs[r, 0]], ps.points[pairs[r, 1]]
        dx = x_ref[p, 0] - x_ref[q, 0]
        dy = x_ref[p, 1] - x_ref[q, 1]
        dz = x_ref[p, 2] - x_ref[q, 2]
        d = math.sqrt(dx * dx + dy * dy + dz * dz)
        s = 1.0 / d if d > 0.0 else 0.0
        normals_out[r, 0], normals_out[r, 1], normals_out[r, 2] = dx * s, dy * s, dz * s


@njit(cache=True, _nrt=False)
def point_segment_normals(x_ref, ps, segs, pairs, n_pairs, normals_out):
    """Unit vector from the closest point of the segment to the sphere's centre of each pair
    at ``x_ref`` (zero where the centre lies on the segment)."""
    for r in range(n_pairs):
        q = ps.points[pairs[r, 0]]
        m = pairs[r, 1]
        t, dx, dy, dz, d = _point_segment_gap(x_ref, q, segs.a[m], segs.b[m])
        s = 1.0 / d if d > 0.0 else 0.0
        normals_out[r, 0], normals_out[r, 1], normals_out[r, 2] = dx * s, dy * s, dz * s


@njit(cache=True, _nrt=False, inline="always")
def _mark(mass_scale, p, heavy):
    if mass_scale[p] < heavy:
        mass_scale[p] = heavy


@njit(cache=True, _nrt=False)
def project_point_pairs(x, w, ps, pairs, n_pairs, normals, mass_scale, heavy, lam_out):
    """One sweep over sphere pairs: each pair whose centres are closer than ``r_k + r_l``
    along its normal (``n . (x_k - x_l)``) is pushed to that distance along it by inverse
    masses ``w`` [1/kg]; ``x`` [P, 3] [m] moved in place; each push's multiplier [kg m]
    (the particles move by ``lam w n``) is added to ``lam_out`` [K].  Returns the contacts
    projected."""
    count = 0
    for r in range(n_pairs):
        nx, ny, nz = normals[r, 0], normals[r, 1], normals[r, 2]
        if nx == 0.0 and ny == 0.0 and nz == 0.0:
            continue
        k, l_ = pairs[r, 0], pairs[r, 1]
        p, q = ps.points[k], ps.points[l_]
        gap = nx * (x[p, 0] - x[q, 0]) + ny * (x[p, 1] - x[q, 1]) + nz * (x[p, 2] - x[q, 2])
        contact = ps.radius[k] + ps.radius[l_]
        wsum = w[p] + w[q]
        if gap >= contact or wsum <= 0.0:
            continue
        lam = (contact - gap) / wsum
        lam_out[r] += lam
        x[p, 0] += lam * w[p] * nx
        x[p, 1] += lam * w[p] * ny
        x[p, 2] += lam * w[p] * nz
        x[q, 0] -= lam * w[q] * nx
        x[q, 1] -= lam * w[q] * ny
        x[q, 2] -= lam * w[q] * nz
        _mark(mass_scale, p, heavy)
        _mark(mass_scale, q, heavy)
        count += 1
    return count


@njit(cache=True, _nrt=False)
def project_point_segment_pairs(x, w, ps, segs, pairs, n_pairs, normals, mass_scale, heavy,
                                lam_out):
    """One sweep over sphere-capsule pairs: the constraint ``n . (x_p - q(t)) >= r_p + r_m``
    (``q(t)`` the segment's closest point now, ``n`` the pair's normal) projected with the
    inverse masses and the weights ``(1, 1 - t, t)``: ``dx_p = lam w_p n``,
    ``dx_a = -lam w_a (1 - t) n``, ``dx_b = -lam w_b t n`` (``lam`` [kg m] added to
    ``lam_out`` [K]).  Returns the contacts projected."""
    count = 0
    for r in range(n_pairs):
        nx, ny, nz = normals[r, 0], normals[r, 1], normals[r, 2]
        if nx == 0.0 and ny == 0.0 and nz == 0.0:
            continue
        k, m = pairs[r, 0], pairs[r, 1]
        p, a, b = ps.points[k], segs.a[m], segs.b[m]
        t, dx, dy, dz, _d = _point_segment_gap(x, p, a, b)
        gap = nx * dx + ny * dy + nz * dz
        contact = ps.radius[k] + segs.radius[m]
        wsum = w[p] + (1.0 - t) * (1.0 - t) * w[a] + t * t * w[b]
        if gap >= contact or wsum <= 0.0:
            continue
        lam = (contact - gap) / wsum
        lam_out[r] += lam
        for c in range(3):
            nc = nx if c == 0 else (ny if c == 1 else nz)
            x[p, c] += lam * w[p] * nc
            x[a, c] -= lam * w[a] * (1.0 - t) * nc
            x[b, c] -= lam * w[b] * t * nc
        _mark(mass_scale, p, heavy)
        _mark(mass_scale, a, heavy)
        _mark(mass_scale, b, heavy)
        count += 1
    return count


@njit(cache=True, _nrt=False, inline="always")
def _contact_velocity(v, n0, n1, n2, lam, friction, h, p, wp, a, ca, wa, b, cb, wb):
    """Velocity pass of one contact between particle ``p`` and the point ``ca x_a + cb x_b``
    (a sphere: ``ca = 1``, ``cb = 0``), inverse masses ``wp``, ``wa``, ``wb``: the separating
    normal velocity removed (the push made it: inelastic) and Coulomb friction on the
    tangential velocity, an impulse of at most ``friction lam / h`` (the push's normal
    impulse), split by the weights (momentum kept)."""
    wsum = wp + ca * ca * wa + cb * cb * wb
    if wsum <= 0.0:
        return
    ux = v[p, 0] - ca * v[a, 0] - cb * v[b, 0]
    uy = v[p, 1] - ca * v[a, 1] - cb * v[b, 1]
    uz = v[p, 2] - ca * v[a, 2] - cb * v[b, 2]
    un = ux * n0 + uy * n1 + uz * n2
    jn = un / wsum if un > 0.0 else 0.0
    tx, ty, tz = ux - un * n0, uy - un * n1, uz - un * n2
    ut = math.sqrt(tx * tx + ty * ty + tz * tz)
    jt = 0.0
    if ut > 0.0:
        jt = min(friction * lam / h, ut / wsum) / ut
    for r in range(3):
        d = jn * (n0 if r == 0 else (n1 if r == 1 else n2)) + \
            jt * (tx if r == 0 else (ty if r == 1 else tz))
        v[p, r] -= wp * d
        v[a, r] += ca * wa * d
        v[b, r] += cb * wb * d


@njit(cache=True, _nrt=False)
def point_contact_velocities(x, v, w, ps, segs, pp, pp_normals, pp_lam, n_pp, psg,
                             ps_normals, ps_lam, n_ps, friction, h):
    """After a step of ``h`` [s] whose sweeps pushed pairs apart (``*_lam`` [kg m] > 0): each
    pushed pair loses the normal velocity that separates it (inelastic contacts: the pushes
    stopped it, they do not throw it back) and Coulomb ``friction`` on its tangential
    velocity; ``v`` [P, 3] [m/s] in place, momentum kept (``x`` [P, 3] [m]: the positions
    giving a segment's closest point)."""
    for r in range(n_pp):
        if pp_lam[r] <= 0.0:
            continue
        p, q = ps.points[pp[r, 0]], ps.points[pp[r, 1]]
        _contact_velocity(v, pp_normals[r, 0], pp_normals[r, 1], pp_normals[r, 2], pp_lam[r],
                          friction, h, p, w[p], q, 1.0, w[q], q, 0.0, 0.0)
    for r in range(n_ps):
        if ps_lam[r] <= 0.0:
            continue
        p = ps.points[psg[r, 0]]
        m = psg[r, 1]
        a, b = segs.a[m], segs.b[m]
        t = _point_segment_gap(x, p, a, b)[0]
        _contact_velocity(v, ps_normals[r, 0], ps_normals[r, 1], ps_normals[r, 2], ps_lam[r],
                          friction, h, p, w[p], a, 1.0 - t, w[a], b, t, w[b])
