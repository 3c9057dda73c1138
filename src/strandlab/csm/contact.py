"""Segment-segment contacts of the chain-shape-matching strings (section 6 of Rungjiratananon
et al. 2011), on the shared uniform grid and capsule projection of :mod:`strandlab.collision`.

Every untorn segment is a capsule of the mean contact radius of its two particles.  Once per
substep, at the positions after time integration, the grid (voxels at least a segment long
plus the contact distance, storing particle indices) finds the pairs of segments closer than
their contact distance plus a margin (``contact_search``: the paper's 7 voxels or all 27);
pairs within one strand closer along it than ``ceil(2 r / l_min) + 1`` segments are never
contacts (neighbours touch by construction), nor are torn segments.  Each sweep pushes every
pair closer than ``r_i + r_j`` apart along the line between their closest points ``s``, ``t``
at the start of the substep (so that a pair that moved through each other within the substep
is pushed back to its side, not on through), the displacement split between the four end
particles by inverse mass and barycentric weight (momentum kept), and makes the four
particles :attr:`CSMSettings.contact_weight` times heavier in the shape matching that follows
(the paper: three times, so that shape matching barely moves them back into the contact).
The solver sweeps ``contact_iterations`` times before shape matching and once more after the
strain limiting (which may have pulled a pair back together).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..collision.grid import (
    SEARCH_7,
    SEARCH_27,
    SEARCH_NONFINITE,
    find_pairs,
    make_grid,
    make_point_grid,
    voxel_needed,
)
from ..collision.point_contact import (
    find_point_pairs,
    find_point_segment_pairs,
    make_point_set,
    point_contact_velocities,
    point_pair_normals,
    point_segment_normals,
    point_voxel_needed,
    project_point_pairs,
    project_point_segment_pairs,
)
from ..collision.segment_contact import (
    default_skip,
    make_segment_set,
    pair_normals,
    project_pairs_along,
)
from .model import CSMModel

__all__ = ["SegmentContacts", "ClusterContacts", "drop_torn", "sweep", "drop_torn_segments",
           "sweep_points"]


@njit(cache=True, error_model="numpy")
def drop_torn(pairs, normals, n, torn):
    """Remove the pairs with a torn segment from ``pairs[:n]`` and their rows of ``normals``
    (in place, order kept); returns the new count."""
    k = 0
    for q in range(n):
        if torn[pairs[q, 0]] or torn[pairs[q, 1]]:
            continue
        for r in range(2):
            pairs[k, r] = pairs[q, r]
        for r in range(3):
            normals[k, r] = normals[q, r]
        k += 1
    return k


@njit(cache=True, error_model="numpy")
def sweep(x, inv_mass, segs, pairs, normals, n, weight, heavy, iterations):
    """``iterations`` Gauss-Seidel sweeps of the capsule projection over ``pairs[:n]``, each
    pair kept on its side of ``normals``
    (:func:`~strandlab.collision.segment_contact.project_pairs_along`); the particles of every
    contact projected get ``weight >= heavy``.  Returns the contacts projected in the last
    sweep."""
    c = 0
    for _ in range(iterations):
        c = project_pairs_along(x, inv_mass, segs, pairs, n, normals, weight, heavy)
    return c


class SegmentContacts:
    """The segments of a :class:`~strandlab.csm.model.CSMModel` as capsules, with the grid's
    work memory and the pair buffer (allocated here; grown only when a search overflows).

    ``search``: 7 or 27 voxels; ``margin`` [m]: pairs are found this much beyond contact
    distance (None: twice the largest radius); ``heavy``: mass factor of colliding particles
    in shape matching.
    """

    def __init__(self, model: CSMModel, *, search: int = SEARCH_27,
                 margin: float | None = None, heavy: float = 3.0):
        m = model.arrays
        a = np.nonzero(m.vertex_edge >= 0)[0].astype(np.int64)
        edge = m.vertex_edge[a]
        if not np.array_equal(edge, np.arange(len(a))):
            raise ValueError("the model's segments are not numbered along the chains")
        radius = 0.5 * (m.vertex_radius[a] + m.vertex_radius[a + 1])
        sv = model.strand_vertex_start
        strand = (np.searchsorted(sv, a, side="right") - 1).astype(np.int64)
        se = model.strand_edge_start
        min_len = np.array([m.rest_length[se[s]:se[s + 1]].min() if se[s + 1] > se[s] else 1.0
                            for s in range(len(se) - 1)])
        r_strand = np.array([radius[se[s]:se[s + 1]].max() if se[s + 1] > se[s] else 0.0
                             for s in range(len(se) - 1)])
        skip = default_skip(r_strand, min_len)
        self.segs = make_segment_set(a, a + 1, radius, strand, model.n_vertices, skip=skip)
        self.search = int(search)
        if self.search not in (SEARCH_7, SEARCH_27):
            raise ValueError(f"contact_search must be 7 or 27 (voxels), got {search!r}")
        self.margin = 2.0 * self.segs.max_radius if margin is None else float(margin)
        self.heavy = float(heavy)
        self.grid = make_grid(self.segs)
        self.pairs = np.zeros((4 * len(a) + 16, 2), dtype=np.int64)
        self.normals = np.zeros((len(self.pairs), 3))
        self.n_pairs = 0
        self.voxel = 0.0

    def find(self, x: np.ndarray, x_ref: np.ndarray, torn: np.ndarray) -> int:
        """Pairs at positions ``x`` [V, 3] [m] (torn segments left out), each with its
        separating direction at ``x_ref`` (the positions at the start of the substep); returns
        their count, or ``-1 - p`` when particle ``p`` is not finite."""
        while True:
            need = voxel_needed(x, self.segs, self.margin)[0]
            if not math.isfinite(need):
                bad = np.nonzero(~np.isfinite(x).all(axis=1))[0]
                return -1 - int(bad[0]) if len(bad) else -1
            self.voxel = need
            n, status, item = find_pairs(x, self.segs, need, self.search, self.margin,
                                         self.grid, self.pairs)
            if status == SEARCH_NONFINITE:
                return -1 - int(item)
            if n <= len(self.pairs):
                break
            self.pairs = np.zeros((2 * n, 2), dtype=np.int64)
            self.normals = np.zeros((2 * n, 3))
        self.n_pairs = drop_torn(self.pairs, self.normals, n, torn)
        pair_normals(x_ref, self.segs, self.pairs, self.n_pairs, self.normals)
        return self.n_pairs

    def project(self, x: np.ndarray, inv_mass: np.ndarray, weight: np.ndarray,
                torn: np.ndarray, iterations: int) -> int:
        """``iterations`` sweeps over the pairs of the last :meth:`find` (after leaving out
        segments torn since); returns the contacts projected in the last sweep."""
        self.n_pairs = drop_torn(self.pairs, self.normals, self.n_pairs, torn)
        return int(sweep(x, inv_mass, self.segs, self.pairs, self.normals, self.n_pairs, weight,
                         self.heavy, int(iterations)))


class ClusterContacts:
    """Contacts of the cluster particles (spheres of their meshes' contact radius): with the
    particles of other clusters and with the strands' segments (capsules of
    :class:`SegmentContacts`), on a hashed grid of the cluster particles
    (:mod:`strandlab.collision.point_contact`).  A strand tied to a cluster does not touch it
    within ``skip + 1`` segments of the tie (it is tied to its surface).  The pushed pairs are
    inelastic with Coulomb ``friction`` (:meth:`velocities`).  Buffers allocated here; grown
    only when a search overflows."""

    def __init__(self, model: CSMModel, segs, *, margin: float | None = None,
                 heavy: float = 3.0, friction: float = 0.0):
        m = model.arrays
        pts = np.nonzero(m.vertex_cluster >= 0)[0].astype(np.int64)
        self.points = make_point_set(pts, m.vertex_radius[pts], m.vertex_cluster[pts],
                                     model.n_particles)
        self.segs = segs
        skip_group = np.full((len(segs.a), 2), -1, np.int64)
        for t in range(model.n_ties):
            e = int(m.tie_edge[t])
            s = int(segs.strand[e])
            k = int(segs.skip[s]) + 1 if segs.skip[s] >= 0 else 2
            lo, hi = int(model.strand_edge_start[s]), int(model.strand_edge_start[s + 1])
            col = 0 if m.tie_sign[t] < 0 else 1          # the strand's first end or its last
            skip_group[max(lo, e - k):min(hi, e + k + 1), col] = m.tie_cluster[t]
        self.skip_group = skip_group
        r = max(self.points.max_radius, segs.max_radius)
        self.margin = 2.0 * r if margin is None else float(margin)
        self.heavy = float(heavy)
        self.grid = make_point_grid(len(pts), model.n_particles)
        n = len(pts)
        self.friction = float(friction)
        self._alloc_pp(4 * n + 16)
        self._alloc_ps(4 * n + 16)
        self.n_pp = self.n_ps = 0

    def _alloc_pp(self, k: int) -> None:
        self.pp = np.zeros((k, 2), np.int64)
        self.pp_normals = np.zeros((k, 3))
        self.pp_lam = np.zeros(k)

    def _alloc_ps(self, k: int) -> None:
        self.ps = np.zeros((k, 2), np.int64)
        self.ps_normals = np.zeros((k, 3))
        self.ps_lam = np.zeros(k)

    def find(self, x: np.ndarray, x_ref: np.ndarray, torn: np.ndarray) -> int:
        """Pairs at positions ``x`` [V, 3] [m], normals at ``x_ref``; returns their count, or
        ``-1 - p`` for a particle ``p`` whose position is not finite."""
        voxel = point_voxel_needed(x, self.points, self.segs, self.margin, torn)
        while True:
            n, bad = find_point_pairs(x, self.points, voxel, self.margin, self.grid, self.pp)
            if bad >= 0:
                return -1 - int(bad)
            if n <= len(self.pp):
                break
            self._alloc_pp(2 * n)
        self.n_pp = n
        while True:
            k = find_point_segment_pairs(x, self.points, self.segs, self.skip_group, voxel,
                                         self.margin, self.grid, self.ps)
            if k <= len(self.ps):
                break
            self._alloc_ps(2 * k)
        self.n_ps = drop_torn_segments(self.ps, k, torn)
        self.pp_lam[:self.n_pp] = 0.0
        self.ps_lam[:self.n_ps] = 0.0
        point_pair_normals(x_ref, self.points, self.pp, self.n_pp, self.pp_normals)
        point_segment_normals(x_ref, self.points, self.segs, self.ps, self.n_ps,
                              self.ps_normals)
        return self.n_pp + self.n_ps

    def project(self, x: np.ndarray, inv_mass: np.ndarray, weight: np.ndarray,
                torn: np.ndarray, iterations: int) -> int:
        """``iterations`` sweeps over both kinds of pairs (segments torn since left out);
        returns the contacts projected in the last sweep."""
        self.n_ps = drop_torn_segments(self.ps, self.n_ps, torn, self.ps_normals, self.ps_lam)
        return int(sweep_points(x, inv_mass, self.points, self.segs, self.pp, self.pp_normals,
                                self.pp_lam, self.n_pp, self.ps, self.ps_normals, self.ps_lam,
                                self.n_ps, weight, self.heavy, int(iterations)))

    def velocities(self, x: np.ndarray, v: np.ndarray, inv_mass: np.ndarray, h: float) -> None:
        """The velocity pass of the pairs pushed in this substep of ``h`` [s]: inelastic,
        with Coulomb friction (:func:`~strandlab.collision.point_contact.
        point_contact_velocities`)."""
        point_contact_velocities(x, v, inv_mass, self.points, self.segs, self.pp,
                                 self.pp_normals, self.pp_lam, self.n_pp, self.ps,
                                 self.ps_normals, self.ps_lam, self.n_ps, self.friction, h)


@njit(cache=True, error_model="numpy")
def drop_torn_segments(pairs, n, torn, normals=None, lam=None):
    """Remove the sphere-segment pairs of torn segments from ``pairs[:n]`` (and their rows
    of ``normals`` and ``lam``); returns the new count."""
    k = 0
    for q in range(n):
        if torn[pairs[q, 1]]:
            continue
        pairs[k, 0] = pairs[q, 0]
        pairs[k, 1] = pairs[q, 1]
        if normals is not None:
            for r in range(3):
                normals[k, r] = normals[q, r]
        if lam is not None:
            lam[k] = lam[q]
        k += 1
    return k


@njit(cache=True, error_model="numpy")
def sweep_points(x, inv_mass, points, segs, pp, pp_normals, pp_lam, n_pp, ps, ps_normals,
                 ps_lam, n_ps, weight, heavy, iterations):
    """``iterations`` sweeps over the sphere pairs and the sphere-capsule pairs (their pushes
    added up in ``pp_lam``, ``ps_lam``); returns the contacts projected in the last."""
    c = 0
    for _ in range(iterations):
        c = project_point_pairs(x, inv_mass, points, pp, n_pp, pp_normals, weight, heavy,
                                pp_lam)
        c += project_point_segment_pairs(x, inv_mass, points, segs, ps, n_ps, ps_normals,
                                         weight, heavy, ps_lam)
    return c
