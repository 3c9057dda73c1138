"""The uniform-grid broad phase (collision/grid.py) against brute force.

Reference: every pair of segments, filtered by the rules written out here (not the package's):
two segments sharing a particle, or of one strand within ``skip`` segments along it (across
the seam of a closed strand), are never pairs; the others are pairs when their centreline
distance (closest points by ``segment_closest``, itself checked against a bounded minimiser in
test_self_contact.py) is below ``r_i + r_j + margin``.

Conditions: the 27-voxel search is exact for ``voxel >= l_max + 2 r_max + margin`` (the grid
refuses smaller voxels); the paper's 7-voxel search is exact for centrelines that intersect when
``voxel >= 2 l_max``, and misses a small share of capsule contacts otherwise (measured below).
"""
import numpy as np
import pytest
from scipy.spatial import cKDTree

from strandlab.collision.grid import (
    SEARCH_7,
    SEARCH_27,
    SEARCH_OK,
    SegmentGrid,
    find_pairs,
    make_grid,
    voxel_needed,
)
from strandlab.collision.segment_contact import (
    brute_force_pairs,
    chain_segments,
    make_segment_set,
)
from strandlab.collision.self_contact import segment_closest


def _random_strands(rng, n_strands, n_pts, seg_len, box, offset=(0.0, 0.0, 0.0)):
    """Random walks of ``n_pts`` particles with steps of ``seg_len`` [m] starting in a cube of
    side ``box`` [m] at ``offset``."""
    out = []
    for _ in range(n_strands):
        p0 = np.asarray(offset) + rng.uniform(0.0, box, 3)
        d = rng.normal(size=(n_pts - 1, 3))
        d *= (seg_len * rng.uniform(0.5, 1.0, n_pts - 1) / np.linalg.norm(d, axis=1))[:, None]
        out.append(np.vstack([p0, p0 + np.cumsum(d, axis=0)]))
    return np.vstack(out)


def _reference_pairs(x, a, b, radius, strand, index, count, closed, skip, margin):
    """Brute force, written independently of the package (see the module docstring)."""
    mid = 0.5 * (x[a] + x[b])
    half = 0.5 * np.linalg.norm(x[b] - x[a], axis=1)
    reach = 2.0 * (half.max() + radius.max()) + margin  # midpoints of any pair in contact
    out = set()
    for i, j in sorted(cKDTree(mid).query_pairs(reach)):
        if np.linalg.norm(mid[j] - mid[i]) >= half[i] + half[j] + radius[i] + radius[j] + margin:
            continue
        if {a[i], b[i]} & {a[j], b[j]}:
            continue
        if strand[i] == strand[j]:
            s = strand[i]
            d = abs(index[i] - index[j])
            if closed[s]:
                d = min(d, count[s] - d)
            if skip[s] < 0 or d <= skip[s]:
                continue
        xx = np.ascontiguousarray(x[[a[i], b[i], a[j], b[j]]])
        s_, t_ = segment_closest(xx, 0, 1, 2, 3)
        dist = np.linalg.norm((1 - s_) * xx[0] + s_ * xx[1] - (1 - t_) * xx[2] - t_ * xx[3])
        if dist < radius[i] + radius[j] + margin:
            out.add((i, j))
    return out


def _reference(x, segs, margin):
    return _reference_pairs(x, segs.a, segs.b, segs.radius, segs.strand, segs.index,
                            segs.strand_count, segs.strand_closed, segs.skip, margin)


def _found(x, segs, voxel, search, margin=0.0):
    pairs = SegmentGrid(segs, voxel=voxel, search=search, margin=margin).find(x)
    found = set(map(tuple, pairs.tolist()))
    assert len(found) == len(pairs), "a pair was reported twice"
    assert all(i < j for i, j in found)
    return found


def test_27_voxel_search_finds_exactly_the_brute_force_pairs():
    n_pairs = 0
    for seed in range(24):
        rng = np.random.default_rng(seed)
        n_strands, n_pts = int(rng.integers(5, 25)), int(rng.integers(2, 12))
        seg_len = rng.uniform(0.005, 0.05)
        offset = rng.uniform(-3.0, 3.0, 3)  # negative voxel coordinates too
        x = _random_strands(rng, n_strands, n_pts, seg_len, 2 * seg_len * n_strands ** (1 / 3),
                            offset)
        skip = rng.integers(-1, 4, n_strands)
        closed = rng.random(n_strands) < 0.3
        closed &= n_pts >= 3
        n_seg = n_strands * (n_pts - 1) + int(closed.sum())
        radius = rng.uniform(0.0, 0.25, n_seg) * seg_len  # per segment
        segs = chain_segments(np.arange(n_strands + 1) * n_pts, radius, closed=closed, skip=skip)
        margin = rng.uniform(0.0, 0.3) * seg_len
        need = voxel_needed(x, segs, margin)[0]
        voxel = need * rng.uniform(1.0, 2.5)
        ref = _reference(x, segs, margin)
        assert _found(x, segs, voxel, SEARCH_27, margin) == ref
        n_pairs += len(ref)
    assert n_pairs > 1000  # the configurations are dense enough to test something


def test_package_brute_force_matches_the_reference():
    rng = np.random.default_rng(5)
    x = _random_strands(rng, 12, 9, 0.02, 0.05)
    segs = chain_segments(np.arange(13) * 9, 0.004, skip=2)
    out = np.zeros((4000, 2), dtype=np.int64)
    n = brute_force_pairs(x, segs, 0.001, out)
    assert set(map(tuple, out[:n].tolist())) == _reference(x, segs, 0.001)
    assert n > 50


def _crossing_pairs(rng, n, seg_len, voxel, near_corner):
    """``n`` pairs of segments (each its own strand) through a common point, lengths in
    ``[0.5, 1] seg_len``, each pair ``10 voxel`` from the next; the common point is anywhere in
    a voxel, or within 0.15 voxel of a voxel corner."""
    x = np.zeros((4 * n, 3))
    for k in range(n):
        base = np.array([10.0 * voxel * k, 0.0, 0.0])
        if near_corner:
            p = base + voxel * (1.0 + rng.uniform(-0.15, 0.15, 3))
        else:
            p = base + voxel * rng.uniform(0.0, 1.0, 3)
        for q in range(2):
            u = rng.normal(size=3)
            u /= np.linalg.norm(u)
            ln = seg_len * rng.uniform(0.5, 1.0)
            f = rng.uniform()
            x[4 * k + 2 * q] = p - f * ln * u
            x[4 * k + 2 * q + 1] = p + (1 - f) * ln * u
    a = np.arange(0, 4 * n, 2)
    return x, make_segment_set(a, a + 1, 0.0, np.arange(2 * n), 4 * n)


def test_7_voxel_search_is_exact_for_crossing_centrelines_two_segments_per_voxel():
    # centrelines that intersect (contact distance 0; margin 1e-9 m absorbs rounding) are all
    # found by the paper's 7-voxel search once the voxel is two segments long
    for seed, near_corner in ((0, False), (1, True), (2, True)):
        rng = np.random.default_rng(seed)
        x, segs = _crossing_pairs(rng, 1500, 1.0, 2.0, near_corner)
        expected = {(2 * k, 2 * k + 1) for k in range(1500)}
        assert _reference(x, segs, 1e-9) == expected
        assert _found(x, segs, 2.0, SEARCH_7, 1e-9) == expected


def test_7_voxel_search_misses_crossing_centrelines_with_a_one_segment_voxel():
    # the paper's claim (voxel >= one segment) holds in 2-D but not in 3-D: these two segments
    # (0.93 and 0.96 long, voxel 1) cross, and their end particles lie in voxels (0, 0, 1),
    # (1, 0, 0) and (0, 1, 0), (0, 0, -1): every end pair differs on two or three axes
    x = np.array([[0.81677436, 0.97671803, 1.28850789], [1.04329105, 0.97130661, 0.38551664],
                  [0.99864207, 1.01676837, 0.71332763], [0.74960812, 0.51641859, -0.00253853]])
    segs = make_segment_set([0, 2], [1, 3], 0.0, [0, 1], 4)
    assert _reference(x, segs, 1e-7) == {(0, 1)}
    assert _found(x, segs, 1.0, SEARCH_27, 1e-7) == {(0, 1)}
    assert _found(x, segs, 1.0, SEARCH_7, 1e-7) == set()
    assert _found(x, segs, 2.0, SEARCH_7, 1e-7) == {(0, 1)}
    # such pairs are rare: about 1 in 1e5 random crossing pairs (benchmarks/bench_collision_grid.py)


def test_7_voxel_search_misses_near_capsules_across_a_voxel_edge_whatever_the_voxel():
    # two short segments along z, 0.01 apart across the voxel edge x = y = voxel, in diagonal
    # voxels: capsules of radius 0.01 touch, but no end pair shares a face
    for voxel in (0.1, 1.0, 10.0):
        e = 0.0035
        x = np.array([[voxel - e, voxel - e, 0.2 * voxel], [voxel - e, voxel - e, 0.25 * voxel],
                      [voxel + e, voxel + e, 0.2 * voxel], [voxel + e, voxel + e, 0.25 * voxel]])
        segs = make_segment_set([0, 2], [1, 3], 0.01, [0, 1], 4)
        assert _found(x, segs, voxel, SEARCH_27) == {(0, 1)}
        assert _found(x, segs, voxel, SEARCH_7) == set()


def test_7_voxel_search_miss_rate_on_random_capsule_strands():
    # the share of brute-force pairs the 7-voxel search misses (it never reports a wrong one),
    # random strands of capsules with radius 0.2 segment: docs/collision.md quotes these
    total = missed_min = missed_double = 0
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        x = _random_strands(rng, 40, 11, 0.02, 0.2)
        segs = chain_segments(np.arange(41) * 11, 0.004, skip=2)
        ref = _reference(x, segs, 0.0)
        need = voxel_needed(x, segs, 0.0)[0]
        for fac in (1.0, 2.0):
            got = _found(x, segs, need * fac * (1 + 1e-12), SEARCH_7)
            assert got <= ref
            if fac == 1.0:
                missed_min += len(ref - got)
            else:
                missed_double += len(ref - got)
        total += len(ref)
    assert total > 1500
    assert 0 < missed_min / total < 0.01  # measured 0.3 %
    assert missed_double <= missed_min


def test_pairs_within_a_strand_follow_skip_on_open_and_closed_strands():
    # the ring of test_self_contact.py: 12 edges; with thickness 1.15 edge, edges two apart
    # overlap; radius r = thickness / 2 per segment
    n_e = 12
    t = 2 * np.pi * np.arange(n_e) / n_e
    ring = np.c_[np.cos(t), np.sin(t), np.zeros(n_e)]
    r = 0.5 * 1.15 * np.linalg.norm(ring[1] - ring[0])
    voxel = 1.2
    closed2 = chain_segments([0, n_e], r, closed=[True], skip=2)
    closed1 = chain_segments([0, n_e], r, closed=[True], skip=1)
    assert _found(ring, closed2, voxel, SEARCH_27) == set()
    assert len(_found(ring, closed1, voxel, SEARCH_27)) == n_e  # across the seam too
    xo = np.r_[ring, ring[:1]]
    open2 = chain_segments([0, n_e + 1], r, skip=2)
    # edges 0 and 10, 1 and 11 overlap; edges 0 and 11 meet at a point (distance 0)
    assert _found(xo, open2, voxel, SEARCH_27) == {(0, 10), (1, 11), (0, 11)}
    assert _found(xo, chain_segments([0, n_e + 1], r, skip=-1), voxel, SEARCH_27) == set()


def test_full_buffer_reports_the_count_and_the_wrapper_grows_it():
    rng = np.random.default_rng(7)
    x = _random_strands(rng, 30, 11, 0.02, 0.08)
    segs = chain_segments(np.arange(31) * 11, 0.004, skip=2)
    ref = _reference(x, segs, 0.0)
    small = np.full((10, 2), -7, dtype=np.int64)
    n, status, _ = find_pairs(x, segs, 0.03, SEARCH_27, 0.0, make_grid(segs), small)
    assert status == SEARCH_OK
    assert n == len(ref) > 10  # the count is complete although only 10 rows were written
    assert set(map(tuple, small.tolist())) <= ref
    g = SegmentGrid(segs, voxel=0.03, capacity=10)
    assert set(map(tuple, g.find(x).tolist())) == ref
    assert len(g.pairs) >= len(ref)


def test_bad_grid_input_is_named():
    x = np.array([[0.0, 0, 0], [0.1, 0, 0], [0.0, 0.05, 0], [0.1, 0.05, 0]])
    segs = make_segment_set([0, 2], [1, 3], 0.01, [0, 1], 4)
    with pytest.raises(ValueError, match=r"voxel 0.1 m is too small: segment 0 is 0.1 m long.*"
                                         r"0.12 m"):
        SegmentGrid(segs, voxel=0.1).find(x)
    x[3, 1] = np.nan
    with pytest.raises(ValueError, match="particle 3 has a non-finite"):
        SegmentGrid(segs, voxel=0.2).find(x)
    with pytest.raises(ValueError, match="x must have shape"):
        SegmentGrid(segs, voxel=0.2).find(x[:3])
    for kw, msg in (({"voxel": 0.0}, "voxel must be a positive"),
                    ({"voxel": np.inf}, "voxel must be a positive"),
                    ({"voxel": 1.0, "search": 9}, "search must be 7 or 27"),
                    ({"voxel": 1.0, "margin": -0.1}, "margin must be a finite length")):
        with pytest.raises(ValueError, match=msg):
            SegmentGrid(segs, **kw)
    g = SegmentGrid(segs, voxel=0.2)
    with pytest.raises(ValueError, match="x must be a writeable C-contiguous float64"):
        g.project(x.astype(np.float32), np.ones(4))
    with pytest.raises(ValueError, match=r"w must have shape \(4,\)"):
        g.project(np.zeros((4, 3)), np.ones(3))
    with pytest.raises(TypeError, match="SegmentSet"):
        SegmentGrid((x,), voxel=1.0)


def test_bad_segment_input_is_named():
    with pytest.raises(ValueError, match=r"b\[1\] = 4 is out of range"):
        make_segment_set([0, 2], [1, 4], 0.01, [0, 1], 4)
    with pytest.raises(ValueError, match="segment 1 joins particle 2 to itself"):
        make_segment_set([0, 2], [1, 2], 0.01, [0, 1], 4)
    with pytest.raises(ValueError, match="radius of segment 1 must be finite and >= 0"):
        make_segment_set([0, 2], [1, 3], [0.01, -1.0], [0, 1], 4)
    with pytest.raises(ValueError, match="particle 1 is on more than two segments"):
        make_segment_set([0, 1, 1], [1, 2, 3], 0.01, [0, 0, 0], 4)
    with pytest.raises(ValueError, match="integer array"):
        make_segment_set([0.0, 2.0], [1, 3], 0.01, [0, 1], 4)
    with pytest.raises(ValueError, match="strand 1 has 1 particle"):
        chain_segments([0, 3, 4], 0.01)
