"""Capsule contacts between segments of several strands (collision/segment_contact.py).

References: a contact pushes the four end particles of two segments along the line between
their closest points ``p(s)``, ``q(t)`` so that these end ``r_i + r_j`` apart; particle ``k``
moves by ``lambda w_k beta_k n`` with the barycentric weights ``beta = (1 - s, s, -(1 - t), -t)``,
so ``sum m dx = lambda n sum beta = 0`` (linear momentum) and ``sum m x x dx = lambda (p - q) x n
= 0`` (angular momentum, positions before the push).  Colliding particles get the mass scale
``heavy`` (3 in the paper), the others keep 1.
"""
import numpy as np
import pytest

from strandlab.collision.grid import SegmentGrid, voxel_needed
from strandlab.collision.segment_contact import (
    HEAVY,
    chain_segments,
    default_skip,
    make_segment_set,
    project_pairs,
    reset_mass_scale,
)
from strandlab.collision.self_contact import segment_closest


def _gap(x, a, b, c, d, s, t):
    return float(np.linalg.norm((1 - s) * x[a] + s * x[b] - (1 - t) * x[c] - t * x[d]))


def _tangle(seed, n_strands=8, n_pts=9, seg=0.02, box=0.04):
    """Random walks crowded into a small cube: many overlapping capsules of radius 3 mm."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_strands):
        p0 = rng.uniform(0.0, box, 3)
        d = rng.normal(size=(n_pts - 1, 3))
        d *= (seg / np.linalg.norm(d, axis=1))[:, None]
        out.append(np.vstack([p0, p0 + np.cumsum(d, axis=0)]))
    x = np.vstack(out)
    segs = chain_segments(np.arange(n_strands + 1) * n_pts, 0.003,
                          skip=default_skip(0.003, seg))
    m = rng.uniform(0.5, 2.0, len(x))
    return x, segs, m


def test_one_contact_ends_at_the_sum_of_radii_between_strands_of_different_radius():
    x0 = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.2, -0.5, 0.004], [0.2, 0.5, 0.004]])
    segs = make_segment_set([0, 2], [1, 3], [0.002, 0.005], [0, 1], 4)
    m = np.array([1.0, 2.0, 0.5, 3.0])
    x = x0.copy()
    scale = np.ones(4)
    pairs = np.array([[0, 1]])
    assert project_pairs(x, 1.0 / m, segs, pairs, 1, scale, HEAVY) == 1
    s, t = segment_closest(x0, 0, 1, 2, 3)
    assert (s, t) == pytest.approx((0.7, 0.5))
    assert _gap(x, 0, 1, 2, 3, s, t) == pytest.approx(0.007, abs=1e-15)
    dx = x - x0
    # along the normal (z) only, each particle by its weight: w_k beta_k relative to the others
    assert np.abs(dx[:, :2]).max() < 1e-15
    beta = np.array([1 - s, s, -(1 - t), -t])
    lam = dx[:, 2] / (beta / m)
    assert lam == pytest.approx(np.full(4, lam[0]), rel=1e-12)
    assert np.sum(m * dx[:, 2]) == pytest.approx(0.0, abs=1e-17)
    assert scale.tolist() == [HEAVY] * 4
    # the segments turned a little, so their new closest points are only nearly as far apart
    s2, t2 = segment_closest(x, 0, 1, 2, 3)
    assert 0.999 * 0.007 < _gap(x, 0, 1, 2, 3, s2, t2) < 0.007


def test_projection_conserves_linear_momentum_over_many_contacts():
    for seed in range(4):
        x0, segs, m = _tangle(seed)
        grid = SegmentGrid(segs, voxel=voxel_needed(x0, segs, 0.0)[0])
        pairs = grid.find(x0)
        x = x0.copy()
        n = grid.project(x, 1.0 / m)
        assert n >= 10
        dx = x - x0
        assert np.abs(dx).max() > 1e-4
        assert np.sum(m[:, None] * dx, axis=0) == pytest.approx(np.zeros(3), abs=1e-16)
        # angular momentum, pair by pair (each push about the positions it saw)
        xa = x0.copy()
        for i, j in pairs:
            before = xa.copy()
            project_pairs(xa, 1.0 / m, segs, np.array([[i, j]]), 1, np.ones(len(m)), 1.0)
            d = xa - before
            for origin in (np.zeros(3), np.array([2.0, -1.0, 3.0])):
                ang = np.sum(np.cross(before - origin, m[:, None] * d), axis=0)
                assert ang == pytest.approx(np.zeros(3), abs=1e-16)


def test_repeated_search_and_projection_separates_a_tangle():
    x, segs, m = _tangle(11)
    grid = SegmentGrid(segs, voxel=1.5 * voxel_needed(x, segs, 0.0)[0])
    worst0 = _worst_overlap(x, segs, grid)
    assert worst0 < 0.5  # some capsules overlap by more than half the contact distance
    for _ in range(60):
        grid.find(x)
        grid.project(x, 1.0 / m)
    assert _worst_overlap(x, segs, grid) > 1.0 - 1e-6


def _worst_overlap(x, segs, grid):
    """Smallest centreline distance over contact distance of the pairs found (1: none)."""
    worst = 1.0
    for i, j in grid.find(x):
        a, b, c, d = segs.a[i], segs.b[i], segs.a[j], segs.b[j]
        s, t = segment_closest(x, a, b, c, d)
        worst = min(worst, _gap(x, a, b, c, d, s, t) / (segs.radius[i] + segs.radius[j]))
    return worst


def test_colliding_particles_get_the_heavy_scale_and_kinematic_ones_stay():
    x0, segs, m = _tangle(3)
    w = 1.0 / m
    w[:9] = 0.0  # strand 0 is kinematic
    grid = SegmentGrid(segs, voxel=voxel_needed(x0, segs, 0.0)[0])
    pairs = grid.find(x0)
    x = x0.copy()
    scale = np.full(len(m), 7.0)
    reset_mass_scale(scale)
    n = grid.project(x, w, mass_scale=scale, heavy=HEAVY)
    assert n > 0
    assert np.array_equal(x[:9], x0[:9])
    touched = set()
    for i, j in pairs:
        touched |= {segs.a[i], segs.b[i], segs.a[j], segs.b[j]}
    heavy = set(np.nonzero(scale == HEAVY)[0].tolist())
    assert heavy and heavy <= touched
    assert np.all((scale == 1.0) | (scale == HEAVY))
    # every particle that moved is marked
    moved = set(np.nonzero(np.any(x != x0, axis=1))[0].tolist())
    assert moved <= heavy


def test_contact_between_two_kinematic_segments_moves_nothing():
    x0 = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.2, -0.5, 0.004], [0.2, 0.5, 0.004]])
    segs = make_segment_set([0, 2], [1, 3], 0.005, [0, 1], 4)
    x = x0.copy()
    scale = np.ones(4)
    assert project_pairs(x, np.zeros(4), segs, np.array([[0, 1]]), 1, scale, HEAVY) == 0
    assert np.array_equal(x, x0)
    assert np.all(scale == 1.0)
