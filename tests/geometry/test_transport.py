"""Parallel transport and twist-free reference directions (transport.py).

References:
- discrete parallel transport (Bergou et al. 2008, "Discrete elastic rods"): the minimal
  rotation taking unit tangent t0 to t1, i.e. the rotation about t0 x t1 by the angle between
  them; it preserves lengths and the angle to the tangent;
- twist-free frames of an open polyline: each edge's direction is the transport of the
  previous one (zero twist between consecutive frames);
- closed polylines (section 6 of Umetani et al. 2014): transport around the loop does not
  return to the start (holonomy); the relaxation spreads the total mismatch uniformly, so each
  element's twist angle phi_e equals (sum of the transported mismatches) / n.  The total is
  invariant: rotating frame e by theta_e changes phi_e by theta_{e+1} - theta_e, which
  telescopes around the loop.
"""
import numpy as np
import pytest

from strandlab.geometry.transport import (
    _signed_angle,
    edge_tangents,
    parallel_transport,
    perpendicular_unit,
    rotate_about,
    twist_free_directions,
)


def _unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _trefoil(n):
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    return np.c_[np.sin(t) + 2 * np.sin(2 * t), np.cos(t) - 2 * np.cos(2 * t), -np.sin(3 * t)]


def _twist_angles(points, d, closed):
    """Signed angle about t_{e+1} between the transport of d_e and d_{e+1}, per element."""
    t = edge_tangents(points, closed=closed)
    n = len(t)
    nxt = np.arange(1, n + 1) % n if closed else np.arange(1, n)
    cur = np.arange(n) if closed else np.arange(n - 1)
    tr = np.array([parallel_transport(d[e], t[e], t[nxt[k]]) for k, e in enumerate(cur)])
    return _signed_angle(tr, d[nxt], t[nxt])


# ----------------------------------------------------------------------------- primitives
def test_edge_tangents_unit_and_closing_edge():
    # Reference: definition (unit edge vectors; closed adds last -> first).
    p = np.array([[0, 0, 0], [2, 0, 0], [2, 3, 0]], float)
    assert np.allclose(edge_tangents(p), [[1, 0, 0], [0, 1, 0]])
    t = edge_tangents(p, closed=True)
    assert np.allclose(t[2], _unit([-2, -3, 0]))


def test_edge_tangents_zero_length_edge_raises_naming_the_edge():
    # Reference: a zero-length edge has no tangent; the error names the edge.
    p = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0], [2, 0, 0]], float)
    with pytest.raises(ValueError, match="edge 1 has zero length"):
        edge_tangents(p)


@pytest.mark.parametrize("t", [[0, 0, 1], [1, 0, 0], [0.3, -0.4, 0.8], [1e-9, 1, 1e-9]])
def test_perpendicular_unit(t):
    # Reference: definition (unit and perpendicular; uses the hint's perpendicular part).
    t = _unit(t)
    u = perpendicular_unit(t)
    assert np.linalg.norm(u) == pytest.approx(1.0, abs=1e-14)
    assert abs(np.dot(u, t)) < 1e-14
    hint = np.array([0.2, 0.7, -0.1])
    uh = perpendicular_unit(t, hint)
    h = hint - np.dot(hint, t) * t
    assert np.allclose(uh, h / np.linalg.norm(h), atol=1e-14)
    # a hint parallel to t is ignored
    up = perpendicular_unit(t, 3.0 * t)
    assert abs(np.dot(up, t)) < 1e-14 and np.linalg.norm(up) == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parallel_transport_is_the_minimal_rotation(seed):
    # Reference: Bergou et al. 2008: P(t0) = t1, P(t0 x t1) = t0 x t1, lengths and angles kept.
    rng = np.random.default_rng(seed)
    t0, t1 = _unit(rng.normal(size=3)), _unit(rng.normal(size=3))
    u = rng.normal(size=3)
    b = np.cross(t0, t1)
    assert np.allclose(parallel_transport(t0, t0, t1), t1, atol=1e-14)
    assert np.allclose(parallel_transport(b, t0, t1), b, atol=1e-14)
    pu = parallel_transport(u, t0, t1)
    assert np.linalg.norm(pu) == pytest.approx(np.linalg.norm(u), rel=1e-14)
    assert np.dot(pu, t1) == pytest.approx(np.dot(u, t0), abs=1e-14)
    # transporting back is the inverse
    assert np.allclose(parallel_transport(pu, t1, t0), u, atol=1e-14)


def test_parallel_transport_identity_and_antiparallel():
    # Reference: identical tangents: identity; opposite tangents: a half turn about an axis
    # perpendicular to both (transport.py docstring), which reverses the tangent component.
    t0 = _unit([0.2, -0.3, 0.9])
    u = np.array([0.5, 0.1, -0.7])
    assert np.array_equal(parallel_transport(u, t0, t0), u)
    pu = parallel_transport(u, t0, -t0)
    assert np.linalg.norm(pu) == pytest.approx(np.linalg.norm(u), rel=1e-14)
    assert np.dot(pu, -t0) == pytest.approx(np.dot(u, t0), abs=1e-14)


def test_rotate_about():
    # Reference: right-handed rotation about a unit axis.
    out = rotate_about(np.array([[1.0, 0, 0], [0, 1.0, 0]]), np.array([[0, 0, 1.0], [1.0, 0, 0]]),
                       np.array([np.pi / 2, np.pi / 2]))
    assert np.allclose(out, [[0, 1, 0], [0, 0, 1]], atol=1e-15)


# ----------------------------------------------------------------------------- twist-free frames
def test_open_polyline_directions_follow_parallel_transport():
    # Reference: twist-free (Bishop) frames of an open polyline, Bergou et al. 2008: d_{e+1} is
    # the transport of d_e; d_0 is the hint's part perpendicular to t_0.
    t = np.linspace(0, 4 * np.pi, 41)
    p = np.c_[0.1 * np.cos(t), 0.1 * np.sin(t), 0.02 * t]
    first = np.array([0.0, 0.0, 1.0])
    d = twist_free_directions(p, first=first)
    tan = edge_tangents(p)
    assert np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-14)
    assert np.max(np.abs(np.einsum("ij,ij->i", d, tan))) < 1e-14
    assert np.allclose(d[0], perpendicular_unit(tan[0], first), atol=1e-15)
    for e in range(len(d) - 1):
        assert np.allclose(d[e + 1], parallel_transport(d[e], tan[e], tan[e + 1]), atol=1e-13)
    assert np.max(np.abs(_twist_angles(p, d, closed=False))) < 1e-13


def test_planar_circle_has_no_holonomy_and_no_twist():
    # Reference: transport around a planar loop returns to the start (the tangent indicatrix is
    # a great circle), so the relaxed twist is zero on every element.
    t = np.linspace(0, 2 * np.pi, 30, endpoint=False)
    p = np.c_[np.cos(t), np.sin(t), np.zeros_like(t)]
    d = twist_free_directions(p, closed=True)
    phi = _twist_angles(p, d, closed=True)
    assert np.max(np.abs(phi)) < 1e-12


@pytest.mark.parametrize("n", [24, 60])
def test_closed_loop_twist_is_uniform_and_total_is_the_holonomy(n):
    # Reference: section 6 relaxation: every element's twist equals the mean of the unrelaxed
    # mismatches; their sum (the holonomy) is invariant.  The fixed point is exact up to rounding
    # in the accumulated rotations and the measured angles (~n eps), bounded here by n * 1e-12.
    p = _trefoil(n)
    d0 = twist_free_directions(p, closed=True, relax=False)   # pure transport
    phi0 = _twist_angles(p, d0, closed=True)
    d = twist_free_directions(p, closed=True)
    phi = _twist_angles(p, d, closed=True)
    assert np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-14)
    assert np.max(np.abs(np.einsum("ij,ij->i", d, edge_tangents(p, closed=True)))) < 1e-14
    assert abs(np.sum(phi0)) > 1.0                      # the trefoil has a large holonomy
    assert np.sum(phi) == pytest.approx(np.sum(phi0), abs=1e-12)
    assert np.ptp(phi) < n * 1e-12
    assert np.mean(phi) == pytest.approx(np.sum(phi0) / n, abs=1e-12)


def test_closed_loop_twist_is_uniform_for_many_edges():
    # Reference: as above, for a 400-edge loop (a fine hair ring).  The docstring promises that the
    # twist is spread uniformly; the spread must be small against the per-element twist
    # (here holonomy / n = 5.6e-3 rad): we ask for 1e-9 rad, well above the rounding of
    # ~n eps.  (An iterative Jacobi relaxation capped at 1e5 sweeps left a spread of 4.7e-5 rad
    # here: its slowest mode decays by only 1 - (1 - cos(2 pi / n)) / 2 per sweep.)
    n = 400
    p = _trefoil(n)
    phi = _twist_angles(p, twist_free_directions(p, closed=True), closed=True)
    assert np.ptp(phi) < 1e-9, f"twist spread {np.ptp(phi):.3g} rad, mean {np.mean(phi):.3g} rad"
