"""Contacts between the segments of one strand (collision/self_contact.py).

References: the closest points of two segments minimise the convex function
``|p(s) - q(t)|^2`` over the unit square, found here by a bounded minimiser; a contact projection
moves the four end points along the contact normal so that the closest points end exactly
``thickness`` apart (one linear projection along a fixed normal), and conserves linear momentum
``sum m dx = 0`` and angular momentum ``sum m x x dx = 0`` (the moves are the barycentric
weights of ``lambda n`` and ``-lambda n`` at the two closest points).
"""
import numpy as np
import pytest
from scipy.optimize import minimize

from strandlab.collision.self_contact import project_self_contacts, segment_closest


def _closest_distance(p1, p2, p3, p4):
    """Smallest distance between segments p1 p2 and p3 p4, by bounded minimisation."""
    def f(st):
        d = p1 + st[0] * (p2 - p1) - p3 - st[1] * (p4 - p3)
        return d @ d

    best = min((minimize(f, s0, bounds=[(0, 1), (0, 1)], method="L-BFGS-B",
                         options={"ftol": 1e-15, "gtol": 1e-12})
                for s0 in ([0.5, 0.5], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0])),
               key=lambda r: r.fun)
    return float(np.sqrt(max(best.fun, 0.0)))


def _distance_at(x, a, b, c, d, s, t):
    return float(np.linalg.norm((1 - s) * x[a] + s * x[b] - (1 - t) * x[c] - t * x[d]))


def test_segment_closest_matches_brute_force_minimisation():
    rng = np.random.default_rng(11)
    cases = [rng.normal(size=(4, 3)) for _ in range(40)]
    # parallel, collinear and end-to-end configurations exercise every clamp
    cases += [np.array([[0, 0, 0], [1, 0, 0], [0.3, 0.2, 0], [1.6, 0.2, 0.0]]),
              np.array([[0, 0, 0], [1, 0, 0], [1.5, 0, 0], [2.5, 0, 0.0]]),
              np.array([[0, 0, 0], [1, 0, 0], [1.2, 0.3, 0.1], [3.0, -0.2, 0.4]]),
              np.array([[0, 0, 0], [1, 0, 0], [-1.0, 0.5, 0.0], [-0.3, 0.2, 0.1]]),
              np.array([[0, 0, 0], [1, 0, 0], [0.5, 2.0, 0.0], [0.5, 1.0, 0.0]]),
              np.array([[0, 0, 0], [1, 0, 0], [2.0, 1.0, 0.0], [1.5, -3.0, 0.0]])]
    for x in cases:
        x = np.ascontiguousarray(x, dtype=np.float64)
        s, t = segment_closest(x, 0, 1, 2, 3)
        assert 0.0 <= s <= 1.0 and 0.0 <= t <= 1.0
        assert _distance_at(x, 0, 1, 2, 3, s, t) == pytest.approx(
            _closest_distance(*x), abs=1e-7)


def _masses(n, seed):
    return np.random.default_rng(seed).uniform(0.5, 2.0, size=n)


def _crossing_strand():
    """An open polyline whose edge 1 passes 0.03 m over edge 5 (a loop), edges of about 0.5 m."""
    x = np.array([[-1.0, 0.0, 0.0], [-0.5, 0.0, 0.0], [0.5, 0.02, 0.0], [1.0, 0.6, 0.1],
                  [0.6, 1.0, 0.1], [0.05, 0.5, 0.03], [0.1, -0.5, 0.03], [0.2, -1.0, 0.2]])
    e0 = np.arange(len(x) - 1)
    return x, e0, e0 + 1


def test_crossing_segments_are_found_and_pushed_to_the_thickness():
    x0, p0, p1 = _crossing_strand()
    m = _masses(len(x0), 2)
    x = x0.copy()
    s, t = segment_closest(x0, 1, 2, 5, 6)
    gap = _distance_at(x0, 1, 2, 5, 6, s, t)
    thickness = 0.05
    assert gap < thickness
    n = project_self_contacts(x, 1.0 / m, p0, p1, 0, len(p0), thickness, 1)
    assert n == 1
    # only the four end points of the contact pair moved
    moved = np.nonzero(np.any(x != x0, axis=1))[0]
    assert list(moved) == [1, 2, 5, 6]
    # the same material points are now exactly thickness apart, along the old normal
    assert _distance_at(x, 1, 2, 5, 6, s, t) == pytest.approx(thickness, abs=1e-12)
    old = (1 - s) * x0[1] + s * x0[2] - (1 - t) * x0[5] - t * x0[6]
    new = (1 - s) * x[1] + s * x[2] - (1 - t) * x[5] - t * x[6]
    assert np.cross(old, new) == pytest.approx(np.zeros(3), abs=1e-14)
    # the segments turned a little, so their new closest points are only nearly as far apart
    s2, t2 = segment_closest(x, 1, 2, 5, 6)
    assert _distance_at(x, 1, 2, 5, 6, s2, t2) > 0.999 * thickness


def test_contact_projection_conserves_linear_and_angular_momentum():
    x0, p0, p1 = _crossing_strand()
    for seed in range(4):
        m = _masses(len(x0), seed)
        x = x0.copy()
        assert project_self_contacts(x, 1.0 / m, p0, p1, 0, len(p0), 0.08, 1) >= 1
        dx = x - x0
        scale = np.max(np.abs(m[:, None] * dx))
        assert scale > 1e-3
        assert np.sum(m[:, None] * dx, axis=0) == pytest.approx(np.zeros(3), abs=1e-14)
        # angular momentum about any origin: sum m x0 x dx (dx is a rigid-free impulse)
        for origin in (np.zeros(3), np.array([3.0, -2.0, 5.0])):
            ang = np.sum(np.cross(x0 - origin, m[:, None] * dx), axis=0)
            assert ang == pytest.approx(np.zeros(3), abs=1e-13)


def test_kinematic_points_do_not_move_and_take_no_share():
    x0, p0, p1 = _crossing_strand()
    w = 1.0 / _masses(len(x0), 3)
    w[[1, 2]] = 0.0  # edge 1 is fixed: edge 5 alone takes the whole correction
    x = x0.copy()
    s, t = segment_closest(x0, 1, 2, 5, 6)
    assert project_self_contacts(x, w, p0, p1, 0, len(p0), 0.05, 1) == 1
    assert np.array_equal(x[[1, 2]], x0[[1, 2]])
    assert _distance_at(x, 1, 2, 5, 6, s, t) == pytest.approx(0.05, abs=1e-12)


def test_segments_meeting_end_to_end_are_within_reach():
    # edges 0 and 2 lie on one line with a 0.03 m gap (edge 1): their midpoints are farther apart
    # than half their lengths, so only the thickness margin of the cheap rejection keeps the pair
    x = np.array([[0.0, 0, 0], [1.0, 0, 0], [1.03, 0, 0], [2.03, 0.0, 0.0]])
    p0 = np.array([0, 1, 2])
    w = np.ones(len(x))
    assert project_self_contacts(x, w, p0, p0 + 1, 0, 3, 0.1, 1) == 1
    assert x[2, 0] - x[1, 0] == pytest.approx(0.1, abs=1e-12)
    assert x[1, 0] + x[2, 0] == pytest.approx(2.03, abs=1e-12)  # equal masses, equal moves
    assert np.array_equal(x[[0, 3]], [[0.0, 0, 0], [2.03, 0, 0]])


def test_neighbours_within_skip_are_ignored_on_open_and_closed_strands():
    # a ring of 12 edges of length 0.518: edges two apart have closest points one edge apart
    n_e = 12
    t = 2 * np.pi * np.arange(n_e) / n_e
    ring = np.c_[np.cos(t), np.sin(t), np.zeros(n_e)]
    p0 = np.arange(n_e)
    p1 = (p0 + 1) % n_e
    w = np.ones(n_e)
    edge = np.linalg.norm(ring[1] - ring[0])
    thickness = 1.15 * edge  # neighbours (and next neighbours) overlap, nothing else does
    x = ring.copy()
    assert project_self_contacts(x, w, p0, p1, 0, n_e, thickness, 2) == 0
    assert np.array_equal(x, ring)
    # with a smaller skip the next neighbours, across the seam too, are contacts
    x = ring.copy()
    assert project_self_contacts(x, w, p0, p1, 0, n_e, thickness, 1) == n_e
    # an open strand through the same points (its last vertex back on the first): no seam, so
    # edges 0 and 10 (and 1 and 11) are far apart along it but touch in space
    xo = np.r_[ring, ring[:1]]
    po = np.arange(n_e)
    assert project_self_contacts(xo, np.ones(n_e + 1), po, po + 1, 0, n_e, thickness, 2) == 2
