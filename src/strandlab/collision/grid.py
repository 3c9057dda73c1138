"""Uniform-grid broad phase for capsule contacts between segments (section 6 of
Rungjiratananon et al. 2011).

The grid stores **particle** indices, not segments: every particle on a segment is put in the
voxel (cube of side ``voxel`` [m]) that contains it.  Each particle looks at the particles in
the voxels around its own and tests its (at most two) segments against theirs, as in the
paper: a segment pair is a candidate when some end particle of the one sees some end particle of
the other.  Two neighbourhoods:

- ``27``: the particle's voxel and the 26 around it (every voxel whose integer coordinates differ
  by at most 1 on each axis).  With ``voxel >= l_max + 2 r_max + margin`` (longest segment,
  largest radius) it finds every pair closer than ``r_i + r_j + margin``: the end particle
  nearest to each closest point is within ``l / 2`` of it, so two such end particles are at
  most ``l_max + r_i + r_j + margin`` apart on every axis, hence in neighbouring voxels.
- ``7``: the paper's search, the particle's own voxel and its six face neighbours (top, bottom,
  left, right, front, back: coordinates differing by 1 on one axis only).  Exact only for
  centrelines that actually intersect and ``voxel >= l_i + l_j`` (two segment lengths): then
  each axis puts all four end particles within two adjacent layers of voxels, and in a 2 x 2 x 2
  block some end pair always agrees on two axes (see docs/collision.md).  It misses pairs whose
  end particles all lie in voxels meeting only along an edge or at a corner: with voxel = one
  segment length even some intersecting pairs (the paper's claim holds in 2-D, not in 3-D), and
  for capsules of any thickness, near pairs whose centrelines do not cross, whatever the voxel.
  How often is measured in ``tests/collision/test_grid.py`` and docs/collision.md.

The grid is a hashed uniform grid, so it has no bounds: voxel ``(i, j, k)`` goes to bucket
``hash(i, j, k) & (T - 1)`` of a table of ``T`` (a power of two >= twice the number of grid
particles) buckets.  Each rebuild is a counting sort of the particles by bucket into
``cell_start`` [T + 1] and ``cell_items`` [G], arrays allocated once (:func:`make_grid`).  A
lookup compares each particle's stored voxel coordinates with the voxel wanted, so two voxels
sharing a bucket never mix.

Each candidate pair ``(i, j)``, ``i < j``, is tested and reported once, by the first of its
four end pairs, in the order ``(a_i, a_j), (a_i, b_j), (b_i, a_j), (b_i, b_j)``, whose particles
see each other.  With 27 voxels, particles see each other when closer than ``voxel`` (then
their voxels are neighbours; the nearest end particles of two segments in contact are closer
than ``l_max + 2 r_max + margin <= voxel``), which skips most of the 27 voxels' particles
before any segment test; with 7 voxels, when their voxels are the same or face neighbours, as
in the paper.  Pairs go into a caller's buffer ``pairs_out`` [K, 2] in a deterministic order;
the count returned is the number found, which exceeds ``K`` when the buffer overflowed (the
caller grows it and searches again, outside its step).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .segment_contact import SegmentSet, pair_excluded, pair_gap, project_pairs

__all__ = ["SEARCH_7", "SEARCH_27", "SEARCH_OK", "SEARCH_VOXEL", "SEARCH_NONFINITE", "GridArrays",
           "make_grid", "make_point_grid", "voxel_needed", "build_grid", "build_point_grid",
           "voxel_bucket", "find_pairs", "SegmentGrid"]

SEARCH_7 = 7      #: Own voxel and the six face neighbours (the paper's search)
SEARCH_27 = 27    #: Own voxel and all 26 neighbours
SEARCH_OK = 0
SEARCH_VOXEL = 1      #: The voxel is smaller than :func:`voxel_needed` (item: longest segment)
SEARCH_NONFINITE = 2  #: A particle position is not finite or too far out (item: the particle)
_FAR = 1e15  # |x| / voxel beyond this cannot be a voxel coordinate


class GridArrays(NamedTuple):
    """Work memory of the grid, allocated once by :func:`make_grid` (``T`` buckets, ``G`` grid
    particles, ``P`` particles)."""

    cell_start: np.ndarray   #: First entry of each bucket in ``cell_items``, int64 [T + 1]
    cell_fill: np.ndarray    #: Fill cursor of the counting sort, int64 [T]
    cell_items: np.ndarray   #: Particle indices sorted by bucket, int64 [G]
    item_cell: np.ndarray    #: Voxel coordinates of ``cell_items`` (same order), int64 [G, 3]
    item_x: np.ndarray       #: Positions of ``cell_items`` (same order) [m], [G, 3]
    point_cell: np.ndarray   #: Integer voxel coordinates of each grid particle, int64 [P, 3]


def make_grid(segs: SegmentSet) -> GridArrays:
    """The grid's arrays for the particles of ``segs``."""
    return make_point_grid(len(segs.grid_points), segs.point_segs.shape[0])


def make_point_grid(n_grid: int, n_points: int) -> GridArrays:
    """The grid's arrays for ``n_grid`` grid points among ``n_points`` points."""
    g = int(n_grid)
    t = 8
    while t < 2 * g:
        t *= 2
    return GridArrays(cell_start=np.zeros(t + 1, dtype=np.int64),
                      cell_fill=np.zeros(t, dtype=np.int64),
                      cell_items=np.zeros(max(g, 1), dtype=np.int64),
                      item_cell=np.zeros((max(g, 1), 3), dtype=np.int64),
                      item_x=np.zeros((max(g, 1), 3)),
                      point_cell=np.zeros((int(n_points), 3), dtype=np.int64))


@njit(cache=True, _nrt=False)
def _bucket(i, j, k, mask):
    """Bucket of voxel ``(i, j, k)`` (spatial hash of Teschner et al. 2003)."""
    return ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & mask


voxel_bucket = _bucket
"""``voxel_bucket(i, j, k, mask)``: the bucket of voxel ``(i, j, k)`` in a table of
``mask + 1`` buckets (for other searches over a :class:`GridArrays`)."""


@njit(cache=True, _nrt=False)
def voxel_needed(x, segs, margin):
    """Smallest voxel [m] for which the 27-voxel search is exact: the longest segment plus
    twice the largest radius plus ``margin`` [m].  Returns ``(voxel, longest segment)``."""
    longest = 0.0
    which = -1
    for m in range(segs.a.shape[0]):
        a = segs.a[m]
        b = segs.b[m]
        dx = x[b, 0] - x[a, 0]
        dy = x[b, 1] - x[a, 1]
        dz = x[b, 2] - x[a, 2]
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        if which < 0 or ln > longest:
            longest = ln
            which = m
    return longest + 2.0 * segs.max_radius + margin, which


@njit(cache=True, _nrt=False)
def build_grid(x, segs, voxel, grid):
    """Sort the grid particles of ``segs`` at positions ``x`` [P, 3] [m] into voxels of side
    ``voxel`` [m] (counting sort into ``grid``).  Returns -1, or the first particle whose
    position is not finite or lies beyond ``1e15`` voxels from the origin (grid unchanged)."""
    return build_point_grid(x, segs.grid_points, voxel, grid)


@njit(cache=True, _nrt=False)
def build_point_grid(x, pts, voxel, grid):
    """Sort the points ``pts`` (int64 [G], indices into ``x`` [P, 3] [m]) into voxels of side
    ``voxel`` [m], as :func:`build_grid`."""
    cell = grid.point_cell
    mask = grid.cell_fill.shape[0] - 1
    for q in range(pts.shape[0]):
        p = pts[q]
        for r in range(3):
            u = x[p, r] / voxel
            if not abs(u) < _FAR:
                return p
            cell[p, r] = int(math.floor(u))
    start = grid.cell_start
    for c in range(start.shape[0]):
        start[c] = 0
    for q in range(pts.shape[0]):
        p = pts[q]
        start[_bucket(cell[p, 0], cell[p, 1], cell[p, 2], mask) + 1] += 1
    for c in range(mask + 1):
        start[c + 1] += start[c]
        grid.cell_fill[c] = start[c]
    for q in range(pts.shape[0]):
        p = pts[q]
        c = _bucket(cell[p, 0], cell[p, 1], cell[p, 2], mask)
        k = grid.cell_fill[c]
        grid.cell_items[k] = p
        for r in range(3):
            grid.item_cell[k, r] = cell[p, r]
            grid.item_x[k, r] = x[p, r]
        grid.cell_fill[c] += 1
    return -1


@njit(cache=True, _nrt=False)
def _far_apart(x, segs, i, j, margin):
    """Cheap rejection: the midpoints of segments ``i`` and ``j`` are farther apart than their
    half lengths plus contact distance plus ``margin``, so no points of theirs are closer."""
    ai, bi, aj, bj = segs.a[i], segs.b[i], segs.a[j], segs.b[j]
    mm = 0.0
    li = 0.0
    lj = 0.0
    for r in range(3):
        d = 0.5 * (x[ai, r] + x[bi, r] - x[aj, r] - x[bj, r])
        mm += d * d
        li += (x[bi, r] - x[ai, r]) ** 2
        lj += (x[bj, r] - x[aj, r]) ** 2
    reach = 0.5 * (math.sqrt(li) + math.sqrt(lj)) + segs.radius[i] + segs.radius[j] + margin
    return mm > reach * reach


@njit(cache=True, _nrt=False)
def _dist2(x, p, y, k):
    """Squared distance between ``x[p]`` and ``y[k]``."""
    dx = x[p, 0] - y[k, 0]
    dy = x[p, 1] - y[k, 1]
    dz = x[p, 2] - y[k, 2]
    return dx * dx + dy * dy + dz * dz


@njit(cache=True, _nrt=False)
def _linked(x, cell, p, q, full, v2):
    """Whether particles ``p`` and ``q`` see each other: closer than the voxel (``v2`` its
    square; with 27 voxels) or in the same or face-neighbouring voxels (with 7)."""
    if full:
        return _dist2(x, p, x, q) < v2
    return (abs(cell[p, 0] - cell[q, 0]) + abs(cell[p, 1] - cell[q, 1])
            + abs(cell[p, 2] - cell[q, 2])) <= 1


@njit(cache=True, _nrt=False)
def _reported_by(x, segs, cell, i, j, si, sj, full, v2):
    """Whether particles ``i`` (of segment ``si``) and ``j`` (of ``sj``) are the first of the
    four end pairs of the two segments that see each other: the one that reports the pair."""
    ai, bi, aj, bj = segs.a[si], segs.b[si], segs.a[sj], segs.b[sj]
    if _linked(x, cell, ai, aj, full, v2):
        return i == ai and j == aj
    if _linked(x, cell, ai, bj, full, v2):
        return i == ai and j == bj
    if _linked(x, cell, bi, aj, full, v2):
        return i == bi and j == aj
    return i == bi and j == bj


@njit(cache=True, _nrt=False, inline='always')
def _pairs_of(x, segs, grid, i, j, full, v2, margin, pairs_out, n):
    """Pairs between the segments of particles ``i`` and ``j`` (which see each other), both
    ways round, closer than contact distance plus ``margin``; returns the new count."""
    for o in range(2):
        p = i if o == 0 else j
        q = j if o == 0 else i
        for u in range(2):
            si = segs.point_segs[p, u]
            if si < 0:
                continue
            for v in range(2):
                sj = segs.point_segs[q, v]
                # the integer exclusion first: most candidates are neighbours along a strand
                if sj <= si or pair_excluded(segs, si, sj):
                    continue
                if not _reported_by(x, segs, grid.point_cell, p, q, si, sj, full, v2) or \
                        _far_apart(x, segs, si, sj, margin):
                    continue
                dist, contact = pair_gap(x, segs, si, sj)[5:7]
                if dist < contact + margin:
                    if n < pairs_out.shape[0]:
                        pairs_out[n, 0] = si
                        pairs_out[n, 1] = sj
                    n += 1
    return n


@njit(cache=True, _nrt=False, inline='always')
def _search_around(x, segs, grid, i, full, v2, margin, pairs_out, n):
    """Candidates between the segments of particle ``i`` and those of the particles that see it
    in half of the neighbourhood: the voxels at offsets after ``(0, 0, 0)`` in lexicographic
    order (13 of the 26 neighbours, or 3 of the 6 face neighbours) and, in its own voxel, the
    particles after ``i``.  Every pair of particles is met once, from one of them; both of
    its orderings are tested."""
    mask = grid.cell_fill.shape[0] - 1
    cell = grid.point_cell
    kc = grid.item_cell
    for dx in range(0, 2):
        for dy in range(-1 if dx > 0 else 0, 2):
            for dz in range(-1 if dx > 0 or dy > 0 else 0, 2):
                if not full and abs(dx) + abs(dy) + abs(dz) > 1:
                    continue
                own = dx == 0 and dy == 0 and dz == 0
                ci = cell[i, 0] + dx
                cj = cell[i, 1] + dy
                ck = cell[i, 2] + dz
                b = _bucket(ci, cj, ck, mask)
                for k in range(grid.cell_start[b], grid.cell_start[b + 1]):
                    if kc[k, 0] != ci or kc[k, 1] != cj or kc[k, 2] != ck:
                        continue  # another voxel in the same bucket
                    j = grid.cell_items[k]
                    if own and j <= i:
                        continue
                    if full and _dist2(x, i, grid.item_x, k) >= v2:
                        continue
                    n = _pairs_of(x, segs, grid, i, j, full, v2, margin, pairs_out, n)
    return n


@njit(cache=True, _nrt=False)
def find_pairs(x, segs, voxel, search, margin, grid, pairs_out):
    """Segment pairs closer than ``r_i + r_j + margin`` [m], by the grid.

    x : particle positions [P, 3] [m].
    voxel : voxel side [m], at least :func:`voxel_needed` ``(x, segs, margin)``.
    search : ``SEARCH_27`` or ``SEARCH_7``.
    grid : :class:`GridArrays` of ``segs``; rebuilt here.
    pairs_out : int64 [K, 2]; the first ``min(n, K)`` rows receive pairs ``(i, j)``, ``i < j``.

    Returns ``(n, status, item)``: ``n`` pairs found (``n > K``: the buffer overflowed, grow it
    and search again); ``status`` ``SEARCH_OK``, ``SEARCH_VOXEL`` (voxel too small, ``item`` the
    longest segment; nothing searched) or ``SEARCH_NONFINITE`` (``item`` the particle).
    """
    need, longest = voxel_needed(x, segs, margin)
    if not voxel >= need:
        return 0, SEARCH_VOXEL, longest
    bad = build_grid(x, segs, voxel, grid)
    if bad >= 0:
        return 0, SEARCH_NONFINITE, bad
    full = search == SEARCH_27
    v2 = voxel * voxel
    n = 0
    pts = segs.grid_points
    for q in range(pts.shape[0]):
        n = _search_around(x, segs, grid, pts[q], full, v2, margin, pairs_out, n)
    return n, SEARCH_OK, -1


class SegmentGrid:
    """The grid search with its buffers, for callers outside Numba.

    ``SegmentGrid(segs, voxel=..., search=27, margin=0.0)``; ``find(x)`` returns the candidate
    pairs [n, 2] (a view of the buffer, valid until the next call), growing the buffer when it
    overflows; ``project(x, w, ...)`` pushes the pairs of the last ``find`` apart.  ``voxel``
    [m] must be positive; each ``find`` checks it against :func:`voxel_needed` and raises
    ValueError naming the longest segment when it is too small, or naming a particle whose
    position is not finite.
    """

    def __init__(self, segs: SegmentSet, *, voxel: float, search: int = SEARCH_27,
                 margin: float = 0.0, capacity: int | None = None):
        if not isinstance(segs, SegmentSet):
            raise TypeError(f"segs must be a SegmentSet (make_segment_set), got "
                            f"{type(segs).__name__}")
        if isinstance(voxel, bool) or not (isinstance(voxel, (int, float, np.number))
                                           and math.isfinite(voxel) and voxel > 0):
            raise ValueError(f"voxel must be a positive finite length [m], got {voxel!r}")
        if search not in (SEARCH_7, SEARCH_27):
            raise ValueError(f"search must be 7 or 27 (voxels), got {search!r}")
        if isinstance(margin, bool) or not (isinstance(margin, (int, float, np.number))
                                            and math.isfinite(margin) and margin >= 0):
            raise ValueError(f"margin must be a finite length >= 0 [m], got {margin!r}")
        self.segs, self.voxel, self.search, self.margin = segs, float(voxel), search, float(margin)
        self.grid = make_grid(segs)
        cap = 4 * len(segs.a) + 16 if capacity is None else int(capacity)
        self.pairs = np.zeros((max(cap, 1), 2), dtype=np.int64)
        self.n_pairs = 0

    def find(self, x: np.ndarray) -> np.ndarray:
        """Candidate pairs at positions ``x`` [P, 3] [m]: int64 [n, 2], ``i < j``."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.segs.point_segs.shape[0], 3):
            raise ValueError(f"x must have shape ({self.segs.point_segs.shape[0]}, 3), got "
                             f"{x.shape}")
        while True:
            n, status, item = find_pairs(x, self.segs, self.voxel, self.search, self.margin,
                                         self.grid, self.pairs)
            if status == SEARCH_VOXEL:
                need = voxel_needed(x, self.segs, self.margin)[0]
                raise ValueError(f"voxel {self.voxel:.6g} m is too small: segment {item} is "
                                 f"{need - 2 * self.segs.max_radius - self.margin:.6g} m long; "
                                 f"the voxel must be at least the longest segment plus twice "
                                 f"the largest radius plus the margin, {need:.6g} m")
            if status == SEARCH_NONFINITE:
                raise ValueError(f"particle {item} has a non-finite or far-out position "
                                 f"{x[item].tolist()}")
            if n <= len(self.pairs):
                self.n_pairs = n
                return self.pairs[:n]
            self.pairs = np.zeros((2 * n, 2), dtype=np.int64)

    def project(self, x: np.ndarray, w: np.ndarray, *, mass_scale: np.ndarray | None = None,
                heavy: float = 1.0) -> int:
        """One sweep of :func:`~.segment_contact.project_pairs` over the pairs of the last
        :meth:`find` (``x`` updated in place).  Returns the number of contacts projected."""
        n = self.segs.point_segs.shape[0]
        if not (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (n, 3)
                and x.flags.c_contiguous and x.flags.writeable):
            raise ValueError(f"x must be a writeable C-contiguous float64 array of shape "
                             f"({n}, 3) (moved in place)")
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (n,):
            raise ValueError(f"w must have shape ({n},), got {w.shape}")
        if mass_scale is None:
            mass_scale = np.ones(n)
        return int(project_pairs(x, w, self.segs, self.pairs, self.n_pairs, mass_scale,
                                 float(heavy)))
