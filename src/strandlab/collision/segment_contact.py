"""Capsule contacts between segments of any strands, over flat arrays.

A model that any solver can hand over: ``P`` particles (flat positions ``x`` [P, 3] [m] and
inverse masses ``w`` [P] [1/kg]) and ``M`` segments, each a capsule of radius ``radius[m]`` [m]
around the centreline from particle ``a[m]`` to particle ``b[m]``, belonging to strand
``strand[m]`` at position ``index[m]`` along it.  :func:`make_segment_set` checks and packs these
into a :class:`SegmentSet`; the grid of :mod:`.grid` finds the pairs of segments closer than
their contact distance, and :func:`project_pairs` pushes them apart.

Pairs that are never contacts (:func:`pair_excluded`): two segments sharing a particle, and two
segments of one strand within ``skip[strand]`` segments of each other along it (across the seam
of a closed strand too); ``skip < 0`` excludes every pair within that strand (contacts between
strands only).  Neighbours along a strand touch by construction: the default skip
(:func:`default_skip`) is that of :mod:`.self_contact`, ``ceil(2 r / l_min) + 1``.

The projection of one pair is that of :mod:`.self_contact`: ``C = |p(s) - q(t)| - (r_1 + r_2)
>= 0`` at the closest points ``p(s)``, ``q(t)`` (section 6 of Rungjiratananon et al. 2011,
"Twisting, tearing and flicking effects in string animations"), the displacement split between
the four end particles by inverse mass and the barycentric weights ``(1 - s, s, 1 - t, t)``, so
that linear and angular momentum are conserved.  Each contact also raises the mass scale of its
four particles to ``heavy`` (the paper makes colliding particles three times heavier while shape
matching, so that shape matching barely undoes the contact); solvers that do not need it pass
``heavy = 1``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .self_contact import capsule_gap, move_capsule_pair, push_capsule_pair

__all__ = ["SegmentSet", "make_segment_set", "chain_segments", "default_skip", "pair_excluded",
           "pair_gap", "project_pairs", "pair_normals", "project_pairs_along",
           "reset_mass_scale", "brute_force_pairs", "HEAVY"]

#: Mass factor of colliding particles during shape matching (section 6 of the paper).
HEAVY = 3.0


class SegmentSet(NamedTuple):
    """Segments as capsules over flat particle arrays (read only; see :func:`make_segment_set`).

    ``M`` segments, ``S`` strands, ``P`` particles, ``G`` particles on at least one segment.
    """

    a: np.ndarray              #: First particle of each segment, int64 [M]
    b: np.ndarray              #: Second particle, int64 [M]
    radius: np.ndarray         #: Capsule radius [m], [M]
    strand: np.ndarray         #: Strand of each segment, int64 [M]
    index: np.ndarray          #: Position of the segment along its strand, int64 [M]
    strand_count: np.ndarray   #: Segments of each strand, int64 [S]
    strand_closed: np.ndarray  #: Closed strands (last segment meets the first), bool [S]
    skip: np.ndarray           #: Pairs within ``skip`` segments along a strand are ignored
    #:                            (< 0: no pair within the strand), int64 [S]
    point_segs: np.ndarray     #: The (at most two) segments of each particle, -1: none, [P, 2]
    grid_points: np.ndarray    #: Particles on a segment, ascending, int64 [G]
    max_radius: float          #: Largest radius [m]


def _as_index(name, v, n, bound):
    arr = np.asarray(v)
    if arr.shape != (n,) or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise ValueError(f"{name} must be an integer array of shape ({n},), got "
                         f"{arr.dtype} {arr.shape}")
    arr = arr.astype(np.int64)
    bad = np.nonzero((arr < 0) | (arr >= bound))[0]
    if len(bad):
        raise ValueError(f"{name}[{int(bad[0])}] = {int(arr[bad[0]])} is out of range "
                         f"[0, {bound})")
    return arr


def _per_strand(name, v, n_strands, dtype, default):
    if v is None:
        return np.full(n_strands, default, dtype=dtype)
    arr = np.asarray(v, dtype=dtype)
    if arr.shape not in ((), (n_strands,)):
        raise ValueError(f"{name} must be one value or one per strand ({n_strands}), got "
                         f"shape {arr.shape}")
    return np.broadcast_to(arr, (n_strands,)).copy()


def make_segment_set(a, b, radius, strand, n_points: int, *, closed=None,
                     skip=-1) -> SegmentSet:
    """Check and pack a set of segments.

    a, b : end particles of each segment, integers in ``[0, n_points)``, [M] each.
    radius : capsule radius of each segment [m], finite and >= 0, [M] (or one number).
    strand : strand of each segment, integers >= 0, [M]; the segments of a strand are listed in
        order along it (their rank within the strand is their ``index``).
    n_points : number of particles ``P``.
    closed : closed strands, bool [S] (default none).
    skip : within-strand neighbours ignored, one integer or [S]; < 0: no contacts within a
        strand (the default).

    Raises ValueError naming the offending segment or particle: an index out of range, a
    segment from a particle to itself, a negative or non-finite radius, a particle on more
    than two segments.
    """
    a = np.asarray(a)
    m = a.shape[0] if a.ndim == 1 else -1
    if m < 0:
        raise ValueError(f"a must be a one-dimensional array of particle indices, got shape "
                         f"{a.shape}")
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 0:
        raise ValueError(f"n_points must be an integer >= 0, got {n_points!r}")
    a = _as_index("a", a, m, n_points)
    b = _as_index("b", b, m, n_points)
    same = np.nonzero(a == b)[0]
    if len(same):
        raise ValueError(f"segment {int(same[0])} joins particle {int(a[same[0]])} to itself")
    rad = np.asarray(radius, dtype=np.float64)
    if rad.shape not in ((), (m,)):
        raise ValueError(f"radius must be one number or one per segment ({m}), got shape "
                         f"{rad.shape}")
    rad = np.broadcast_to(rad, (m,)).copy()
    bad = np.nonzero(~np.isfinite(rad) | (rad < 0.0))[0]
    if len(bad):
        raise ValueError(f"radius of segment {int(bad[0])} must be finite and >= 0, got "
                         f"{rad[bad[0]]!r}")
    strand = _as_index("strand", strand, m, np.iinfo(np.int64).max)
    n_strands = int(strand.max()) + 1 if m else 0
    count = np.bincount(strand, minlength=n_strands).astype(np.int64)
    index = np.zeros(m, dtype=np.int64)
    seen = np.zeros(n_strands, dtype=np.int64)
    for k in range(m):
        index[k] = seen[strand[k]]
        seen[strand[k]] += 1
    point_segs = np.full((n_points, 2), -1, dtype=np.int64)
    fill = np.zeros(n_points, dtype=np.int64)
    for k in range(m):
        for p in (a[k], b[k]):
            if fill[p] == 2:
                raise ValueError(f"particle {int(p)} is on more than two segments (segment "
                                 f"{k} and segments {point_segs[p].tolist()})")
            point_segs[p, fill[p]] = k
            fill[p] += 1
    closed = _per_strand("closed", closed, n_strands, np.bool_, False)
    skip = _per_strand("skip", skip, n_strands, np.int64, -1)
    return SegmentSet(a=a, b=b, radius=rad, strand=strand, index=index, strand_count=count,
                      strand_closed=closed, skip=skip, point_segs=point_segs,
                      grid_points=np.nonzero(fill)[0].astype(np.int64),
                      max_radius=float(rad.max()) if m else 0.0)


def chain_segments(strand_start, radius, *, n_points: int | None = None, closed=None,
                   skip=-1) -> SegmentSet:
    """Segments of strands stored as chains: strand ``s`` is particles
    ``strand_start[s]:strand_start[s + 1]`` [S + 1], each joined to the next (and the last to
    the first when ``closed[s]``).  ``radius``: one number, [S] per strand or [M] per segment
    [m].  Other arguments as :func:`make_segment_set`."""
    start = np.asarray(strand_start, dtype=np.int64)
    closed_arr = _per_strand("closed", closed, len(start) - 1, np.bool_, False)
    a, b, st = [], [], []
    for s in range(len(start) - 1):
        p = np.arange(start[s], start[s + 1])
        if len(p) < 2:
            raise ValueError(f"strand {s} has {len(p)} particle(s); a chain needs at least 2")
        q = np.r_[p[1:], p[:1]] if closed_arr[s] else p[1:]
        a.append(p[: len(q)])
        b.append(q)
        st.append(np.full(len(q), s))
    a = np.concatenate(a) if a else np.zeros(0, np.int64)
    b = np.concatenate(b) if b else np.zeros(0, np.int64)
    st = np.concatenate(st) if st else np.zeros(0, np.int64)
    rad = np.asarray(radius, dtype=np.float64)
    if rad.ndim == 1 and len(rad) == len(start) - 1 and len(rad) != len(a):
        rad = rad[st]
    n = int(start[-1]) if n_points is None else n_points
    return make_segment_set(a, b, rad, st, n, closed=closed_arr, skip=skip)


def default_skip(radius, min_length):
    """Neighbours ignored within a strand: ``ceil(2 r / l_min) + 1`` for strands of contact
    radius ``radius`` [m] and shortest segment ``min_length`` [m] (arrays [S] or numbers)."""
    return (np.ceil(2.0 * np.asarray(radius) / np.asarray(min_length)) + 1).astype(np.int64)


@njit(cache=True, _nrt=False)
def pair_excluded(segs, i, j):
    """Whether segments ``i`` and ``j`` can never be a contact: they share a particle, or lie
    within ``skip`` segments of each other along one strand (or ``skip < 0``)."""
    if segs.a[i] == segs.a[j] or segs.a[i] == segs.b[j] or segs.b[i] == segs.a[j] \
            or segs.b[i] == segs.b[j]:
        return True
    s = segs.strand[i]
    if s != segs.strand[j]:
        return False
    skip = segs.skip[s]
    if skip < 0:
        return True
    d = abs(segs.index[i] - segs.index[j])
    if segs.strand_closed[s]:
        d = min(d, segs.strand_count[s] - d)
    return d <= skip


@njit(cache=True, _nrt=False)
def pair_gap(x, segs, i, j):
    """Closest points of segments ``i`` and ``j`` (see :func:`~.self_contact.capsule_gap`) and
    their contact distance ``r_i + r_j`` [m]: ``(s, t, px, py, pz, dist, contact)``."""
    s, t, px, py, pz, dist = capsule_gap(x, segs.a[i], segs.b[i], segs.a[j], segs.b[j])
    return s, t, px, py, pz, dist, segs.radius[i] + segs.radius[j]


@njit(cache=True, _nrt=False)
def _mark_heavy(mass_scale, p, heavy):
    if mass_scale[p] < heavy:
        mass_scale[p] = heavy


@njit(cache=True, _nrt=False)
def project_pairs(x, w, segs, pairs, n_pairs, mass_scale, heavy):
    """One Gauss-Seidel sweep over candidate pairs ``pairs[:n_pairs]`` (segment indices
    [K, 2]): each pair closer than ``r_i + r_j`` is pushed to exactly that distance (see the
    module docstring) and its four particles get ``mass_scale[p] = max(mass_scale[p], heavy)``.

    ``x`` [P, 3] [m] is updated in place; ``w`` [P] [1/kg] (0: kinematic).  Returns the number
    of contacts projected.
    """
    n = 0
    for k in range(n_pairs):
        i = pairs[k, 0]
        j = pairs[k, 1]
        s, t, px, py, pz, dist, contact = pair_gap(x, segs, i, j)
        if dist >= contact or dist <= 0.0:
            continue
        a, b, c, d = segs.a[i], segs.b[i], segs.a[j], segs.b[j]
        if push_capsule_pair(x, w, a, b, c, d, s, t, px, py, pz, dist, contact):
            n += 1
            _mark_heavy(mass_scale, a, heavy)
            _mark_heavy(mass_scale, b, heavy)
            _mark_heavy(mass_scale, c, heavy)
            _mark_heavy(mass_scale, d, heavy)
    return n


@njit(cache=True, _nrt=False)
def pair_normals(x_ref, segs, pairs, n_pairs, normals_out):
    """The separating direction of each pair ``pairs[:n_pairs]`` at reference positions
    ``x_ref`` [P, 3] [m] (where the capsules did not yet pass through each other: the start of
    a step) into ``normals_out`` [K, 3]: the unit vector from the closest point ``q(t)`` of the
    second segment to ``p(s)`` of the first; where the centre lines touch, the unit normal
    ``d_i x d_j`` of the two directions (sign of ``p - q``), or zero where that is undefined
    too (parallel segments touching: the pair is then left alone)."""
    for k in range(n_pairs):
        i = pairs[k, 0]
        j = pairs[k, 1]
        s, t, px, py, pz, dist, contact = pair_gap(x_ref, segs, i, j)
        a, b, c, d = segs.a[i], segs.b[i], segs.a[j], segs.b[j]
        ux, uy, uz = x_ref[b, 0] - x_ref[a, 0], x_ref[b, 1] - x_ref[a, 1], x_ref[b, 2] - x_ref[a, 2]
        vx, vy, vz = x_ref[d, 0] - x_ref[c, 0], x_ref[d, 1] - x_ref[c, 1], x_ref[d, 2] - x_ref[c, 2]
        scale = math.sqrt(ux * ux + uy * uy + uz * uz) + math.sqrt(vx * vx + vy * vy + vz * vz)
        if dist > 1e-9 * scale:
            normals_out[k, 0], normals_out[k, 1], normals_out[k, 2] = px / dist, py / dist, \
                pz / dist
            continue
        nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        nn = math.sqrt(nx * nx + ny * ny + nz * nz)
        if nn <= 1e-12 * scale * scale:
            nx = ny = nz = 0.0
        else:
            sg = 1.0 if nx * px + ny * py + nz * pz >= 0.0 else -1.0
            nx, ny, nz = sg * nx / nn, sg * ny / nn, sg * nz / nn
        normals_out[k, 0], normals_out[k, 1], normals_out[k, 2] = nx, ny, nz


@njit(cache=True, _nrt=False)
def project_pairs_along(x, w, segs, pairs, n_pairs, normals, mass_scale, heavy):
    """As :func:`project_pairs`, but each pair keeps the side it had when ``normals`` were
    taken (:func:`pair_normals`): the constraint is ``n . (p(s) - q(t)) >= r_i + r_j`` with the
    closest points ``s``, ``t`` of the current positions and the fixed unit ``n``, so a pair
    that moved through each other within the step is pushed back to its own side, not on
    through.  The displacement ``lambda n`` is split as in :func:`project_pairs` (linear
    momentum kept; angular momentum too where ``n`` is along ``p - q``).  Returns the number
    of contacts projected."""
    count = 0
    for k in range(n_pairs):
        nx, ny, nz = normals[k, 0], normals[k, 1], normals[k, 2]
        if nx == 0.0 and ny == 0.0 and nz == 0.0:
            continue
        i = pairs[k, 0]
        j = pairs[k, 1]
        s, t, px, py, pz, dist, contact = pair_gap(x, segs, i, j)
        gap = nx * px + ny * py + nz * pz
        if gap >= contact:
            continue
        a, b, c, d = segs.a[i], segs.b[i], segs.a[j], segs.b[j]
        wsum = (1 - s) * (1 - s) * w[a] + s * s * w[b] + (1 - t) * (1 - t) * w[c] + t * t * w[d]
        if wsum <= 0.0:
            continue
        move_capsule_pair(x, w, a, b, c, d, s, t, (contact - gap) / wsum, nx, ny, nz)
        count += 1
        _mark_heavy(mass_scale, a, heavy)
        _mark_heavy(mass_scale, b, heavy)
        _mark_heavy(mass_scale, c, heavy)
        _mark_heavy(mass_scale, d, heavy)
    return count


@njit(cache=True, _nrt=False)
def reset_mass_scale(mass_scale):
    """Every particle back to its own mass (scale 1)."""
    for p in range(mass_scale.shape[0]):
        mass_scale[p] = 1.0


@njit(cache=True, _nrt=False)
def brute_force_pairs(x, segs, margin, pairs_out):
    """Every non-excluded pair ``i < j`` with centreline distance ``< r_i + r_j + margin``, by
    testing all ``M (M - 1) / 2`` pairs (the reference the grid searches are checked against).
    Writes up to ``len(pairs_out)`` pairs in ascending order; returns how many there are."""
    n = 0
    m = segs.a.shape[0]
    for i in range(m):
        for j in range(i + 1, m):
            if pair_excluded(segs, i, j):
                continue
            dist, contact = pair_gap(x, segs, i, j)[5:7]
            if dist < contact + margin:
                if n < pairs_out.shape[0]:
                    pairs_out[n, 0] = i
                    pairs_out[n, 1] = j
                n += 1
    return n

