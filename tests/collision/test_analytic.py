"""Point contacts with analytic colliders (collision/analytic.py).

A point is a sphere of radius ``rad``; after ``collide_point`` a penetrating point lies exactly on
the offset surface (distance ``rad`` from a plane, ``R + rad`` from a sphere's centre or a
capsule's segment), moved along the surface normal, and the contact records the pushed depth,
the unit normal and the collider's friction.  References are the closed-form distances of each
shape (for a capsule: the distance to the nearest point of its segment, the projection clamped
to the segment's ends).  Everything here is a single projection in float64, so positions agree
with the references to rounding (1e-12 m on unit-size inputs).
"""
import numpy as np
import pytest

from strandlab.collision.analytic import collide_point

TOL = 1e-12


def _collide(x, rad, planes=(), spheres=(), capsules=(), friction=None):
    """Run collide_point on every point of ``x`` [n, 3]; returns (x, depth, normal, mu)."""
    x = np.array(x, dtype=np.float64, ndmin=2)
    pl = np.array(planes, dtype=np.float64).reshape(-1, 6)
    sp = np.array(spheres, dtype=np.float64).reshape(-1, 4)
    ca = np.array(capsules, dtype=np.float64).reshape(-1, 7)
    nc = len(pl) + len(sp) + len(ca)
    fr = np.zeros(nc) if friction is None else np.array(friction, dtype=np.float64)
    depth = np.zeros(len(x))
    normal = np.zeros((len(x), 3))
    mu = np.full(len(x), -1.0)
    for p in range(len(x)):
        collide_point(p, x, rad, pl, sp, ca, fr, depth, normal, mu)
    return x, depth, normal, mu


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def _segment_distance(p, a, b):
    """Distance from ``p`` to the segment ``a b`` (projection clamped to [0, 1])."""
    t = np.clip(np.dot(p - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return float(np.linalg.norm(p - (a + t * (b - a))))


# ----------------------------------------------------------------------------- planes
@pytest.mark.parametrize("height", [0.0, 0.004, -0.02, 0.0099])
def test_plane_pushes_a_point_to_exactly_its_radius_above(height):
    rad = 0.01
    x, depth, normal, mu = _collide([[0.3, -0.2, height]], rad, planes=[[0, 0, 0, 0, 0, 1]],
                                    friction=[0.7])
    assert x[0] == pytest.approx([0.3, -0.2, rad], abs=TOL)       # moved along the normal only
    assert depth[0] == pytest.approx(rad - height, abs=TOL)
    assert normal[0] == pytest.approx([0, 0, 1], abs=TOL)
    assert mu[0] == 0.7


def test_tilted_plane_distance_and_normal():
    rad = 0.05
    n = _unit([0.3, -0.4, 0.866])
    origin = np.array([0.1, 0.2, -0.3])
    rng = np.random.default_rng(4)
    for _ in range(10):
        tangent = rng.normal(size=3)
        tangent -= np.dot(tangent, n) * n
        h = rng.uniform(-0.2, rad)  # inside the offset surface, some below the plane
        p0 = origin + tangent + h * n
        x, depth, normal, _ = _collide([p0], rad, planes=[np.r_[origin, n]])
        assert np.dot(x[0] - origin, n) == pytest.approx(rad, abs=TOL)
        assert x[0] - p0 == pytest.approx((rad - h) * n, abs=TOL)
        assert depth[0] == pytest.approx(rad - h, abs=TOL)
        assert normal[0] == pytest.approx(n, abs=TOL)


def test_points_clear_of_a_plane_are_untouched():
    rad = 0.01
    pts = [[0, 0, rad], [0, 0, 0.5], [1, 2, rad + 1e-9]]
    x, depth, _, mu = _collide(pts, rad, planes=[[0, 0, 0, 0, 0, 1]], friction=[0.3])
    assert np.array_equal(x, np.array(pts, dtype=float))
    assert np.all(depth == 0.0) and np.all(mu == -1.0)


def test_corner_of_two_planes_accumulates_both_depths():
    # a point in the corner of the floor z = 0 and the wall x = 0 is pushed out of both
    rad = 0.02
    x, depth, normal, mu = _collide([[0.005, 0.3, -0.01]], rad,
                                    planes=[[0, 0, 0, 0, 0, 1], [0, 0, 0, 1, 0, 0]],
                                    friction=[0.2, 0.9])
    assert x[0] == pytest.approx([rad, 0.3, rad], abs=TOL)
    assert depth[0] == pytest.approx((rad + 0.01) + (rad - 0.005), abs=TOL)
    assert normal[0] == pytest.approx([1, 0, 0], abs=TOL)  # the last contact's normal
    assert mu[0] == 0.9


# ----------------------------------------------------------------------------- spheres
def test_sphere_pushes_a_point_radially_to_r_plus_rad():
    rad, big = 0.01, 0.3
    c = np.array([0.5, -0.1, 0.2])
    rng = np.random.default_rng(5)
    for _ in range(10):
        u = _unit(rng.normal(size=3))
        r0 = rng.uniform(0.05, big + rad)
        x, depth, normal, mu = _collide([c + r0 * u], rad, spheres=[np.r_[c, big]],
                                        friction=[0.4])
        assert x[0] == pytest.approx(c + (big + rad) * u, abs=TOL)
        assert depth[0] == pytest.approx(big + rad - r0, abs=TOL)
        assert normal[0] == pytest.approx(u, abs=TOL)
        assert mu[0] == 0.4
    far = c + (big + rad + 1e-6) * _unit([1, 1, 0])
    x, depth, _, _ = _collide([far], rad, spheres=[np.r_[c, big]])
    assert np.array_equal(x[0], far) and depth[0] == 0.0


# ----------------------------------------------------------------------------- capsules
A = np.array([0.0, 0.0, 0.0])
B = np.array([1.0, 0.0, 0.0])
CAPSULE = np.r_[A, B, 0.1]


@pytest.mark.parametrize("p0, closest", [
    ([0.4, 0.05, 0.02], [0.4, 0.0, 0.0]),     # beside the segment
    ([1.05, 0.05, 0.0], [1.0, 0.0, 0.0]),     # beyond end b: the clamp picks b
    ([-0.06, 0.0, -0.04], [0.0, 0.0, 0.0]),   # before end a: the clamp picks a
    ([1.0, 0.0, 0.08], [1.0, 0.0, 0.0]),      # exactly above end b
])
def test_capsule_pushes_from_the_nearest_point_of_its_segment(p0, closest):
    rad = 0.01
    p0 = np.array(p0)
    u = _unit(p0 - np.array(closest))
    x, depth, normal, mu = _collide([p0], rad, capsules=[CAPSULE], friction=[0.6])
    assert x[0] == pytest.approx(np.array(closest) + (0.1 + rad) * u, abs=TOL)
    assert _segment_distance(x[0], A, B) == pytest.approx(0.1 + rad, abs=TOL)
    assert depth[0] == pytest.approx(0.1 + rad - _segment_distance(p0, A, B), abs=TOL)
    assert normal[0] == pytest.approx(u, abs=TOL)
    assert mu[0] == 0.6


def test_points_beyond_a_capsules_ends_are_not_in_contact():
    # within the capsule's radius of its axis line, but far beyond its ends
    rad = 0.01
    pts = [[1.5, 0.05, 0.0], [-0.5, 0.0, 0.05], [1.2, 0.0, 0.0]]
    x, depth, _, _ = _collide(pts, rad, capsules=[CAPSULE])
    assert np.array_equal(x, np.array(pts, dtype=float))
    assert np.all(depth == 0.0)


def test_random_points_against_a_tilted_capsule():
    rad, big = 0.02, 0.15
    a, b = np.array([0.2, -0.3, 0.1]), np.array([-0.4, 0.5, 0.6])
    rng = np.random.default_rng(6)
    pts = a + rng.uniform(-0.4, 1.4, size=(200, 1)) * (b - a) + rng.normal(scale=0.1,
                                                                            size=(200, 3))
    before = np.array([_segment_distance(p, a, b) for p in pts])
    x, depth, _, _ = _collide(pts, rad, capsules=[np.r_[a, b, big]])
    after = np.array([_segment_distance(p, a, b) for p in x])
    inside = before < big + rad
    assert 20 < inside.sum() < 200
    assert after[inside] == pytest.approx(big + rad, abs=TOL)
    assert depth[inside] == pytest.approx(big + rad - before[inside], abs=TOL)
    assert np.array_equal(x[~inside], pts[~inside]) and np.all(depth[~inside] == 0.0)


# ----------------------------------------------------------------------------- bookkeeping
def test_each_contact_records_its_own_colliders_friction():
    # planes first, then spheres, then capsules in the friction array
    rad = 0.01
    planes = [[0, 0, -5, 0, 0, 1]]
    spheres = [[3, 0, 0, 0.5], [6, 0, 0, 0.5]]
    capsules = [[0, 3, 0, 1, 3, 0, 0.2], [0, 6, 0, 1, 6, 0, 0.2]]
    friction = [0.1, 0.2, 0.3, 0.4, 0.5]
    pts = [[0, 0, -5], [3, 0, 0.4], [6, 0.4, 0], [0.5, 3, 0.1], [0.5, 6, -0.1]]
    _, depth, _, mu = _collide(pts, rad, planes, spheres, capsules, friction)
    assert np.all(depth > 0.0)
    assert mu == pytest.approx(friction, abs=0.0)
