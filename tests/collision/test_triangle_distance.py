"""Point-triangle and edge-edge distances (strandlab.collision.triangle_distance): the distance
against dense sampling of the primitives, the closest-point type of each configuration, and the
gradient and Hessian of d^2 (and of d) against finite differences for every type, including
nearly degenerate ones (nearly parallel edges, a point right above a triangle's vertex or edge,
tiny and sliver triangles)."""
import numpy as np
import pytest

from strandlab.collision.triangle_distance import (
    EDGE_EDGE,
    POINT_EDGE,
    POINT_PLANE,
    POINT_POINT,
    distance_derivatives,
    edge_edge_distance,
    edge_sine2,
    edge_sine2_gradient,
    edge_sine2_hessian,
    mollifier,
    point_triangle_distance,
)

TRI = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.2, 0.9, 0.1]])


def _over(l1, l2, height, tri=TRI):
    """The point at barycentric ``(1 - l1 - l2, l1, l2)`` of ``tri`` lifted by ``height`` along
    its unit normal."""
    e1, e2 = tri[1] - tri[0], tri[2] - tri[0]
    n = np.cross(e1, e2)
    return tri[0] + l1 * e1 + l2 * e2 + height * n / np.linalg.norm(n)


def _sample_triangle(t, n=120):
    u, v = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    keep = u + v <= 1.0
    u, v = u[keep], v[keep]
    return t[0] + u[:, None] * (t[1] - t[0]) + v[:, None] * (t[2] - t[0])


def _sample_segment(a, b, n=400):
    s = np.linspace(0, 1, n)[:, None]
    return a + s * (b - a)


def test_distances_match_dense_sampling_of_random_primitives():
    rng = np.random.default_rng(3)
    for _ in range(40):
        x = rng.normal(size=(4, 3))
        d2 = point_triangle_distance(*x)[0]
        samples = np.linalg.norm(_sample_triangle(x[1:]) - x[0], axis=1)
        # the sampling's resolution: a step of the grid (1/119 of the longest edge)
        res = np.linalg.norm(x[1:] - np.roll(x[1:], 1, axis=0), axis=1).max() / 119
        assert np.sqrt(d2) <= samples.min() + 1e-12
        assert samples.min() - np.sqrt(d2) <= res
        pa, pb = _sample_segment(x[0], x[1]), _sample_segment(x[2], x[3])
        sampled = np.sqrt(((pa[:, None, :] - pb[None, :, :]) ** 2).sum(-1)).min()
        d2e = edge_edge_distance(*x)[0]
        res = max(np.linalg.norm(x[1] - x[0]), np.linalg.norm(x[3] - x[2])) / 399
        assert np.sqrt(d2e) <= sampled + 1e-12
        assert sampled - np.sqrt(d2e) <= res


def _fd(fun, x, rel_step=1e-6):
    """Central differences of d^2 and of its gradient, step relative to the configuration."""
    f0, g0, h0, kind = fun(*x)
    step = rel_step * np.abs(x).max()
    g_fd, h_fd = np.zeros(12), np.zeros((12, 12))
    for i in range(12):
        xp, xm = x.reshape(-1).copy(), x.reshape(-1).copy()
        xp[i] += step
        xm[i] -= step
        fp, gp, _, kp = fun(*xp.reshape(4, 3))
        fm, gm, _, km = fun(*xm.reshape(4, 3))
        assert kp == km == kind, "a finite-difference step changed the closest-point type"
        g_fd[i] = (fp - fm) / (2 * step)
        h_fd[:, i] = (gp - gm) / (2 * step)
    return kind, f0, g0, h0, g_fd, h_fd


PT_CASES = {
    # name: (p, triangle, expected type)
    "above the face": ([0.4, 0.3, 0.5], TRI, POINT_PLANE),
    "beside an edge": ([0.6, -0.4, 0.2], TRI, POINT_EDGE),
    "beyond a vertex": ([1.5, -0.2, -0.3], TRI, POINT_POINT),
    "right above a vertex, just inside": (_over(1e-5, 1e-5, 0.3), TRI, POINT_PLANE),
    "right above a vertex, just outside": (_over(-1e-5, -1e-5, 0.3), TRI, POINT_POINT),
    "right above an edge, just outside": (_over(0.5, -1e-5, 0.2), TRI, POINT_EDGE),
    "right above an edge, just inside": (_over(0.5, 1e-5, 0.2), TRI, POINT_PLANE),
    "tiny triangle": ([3e-7, 2e-7, 4e-7], TRI * 1e-6, POINT_PLANE),
    "sliver triangle, by its edges": ([0.8, -0.3, 0.1],
                                       [[0, 0, 0], [1, 0, 0], [0.5, 1e-6, 0]], POINT_EDGE),
}


# Near-ties between types (a sliver's two long edges, the ends of nearly parallel edges) are
# ~1e-6 and ~5e-8 apart, and nearly parallel crossing edges curve sharply (their closest points
# slide by 1/angle of a rotation): the differences step well inside them.
STEP = {"sliver triangle, by its edges": 1e-8,
        "nearly parallel (1e-3 rad), crossing": 1e-8,
        "nearly parallel (1e-7 rad), end against edge": 1e-9}


def _check(fun, x, case, expected, h_atol=1e-5):
    kind, f, g, h, g_fd, h_fd = _fd(fun, x, STEP.get(case, 1e-6))
    assert kind == expected
    np.testing.assert_allclose(g, g_fd, rtol=1e-6, atol=1e-7 * np.abs(g).max())
    np.testing.assert_allclose(h, h_fd, rtol=1e-5, atol=h_atol * np.abs(h).max())
    np.testing.assert_allclose(h, h.T, atol=1e-12 * np.abs(h).max())
    # translation invariance: the gradient blocks of the four vertices sum to zero
    np.testing.assert_allclose(g.reshape(4, 3).sum(0), 0.0, atol=1e-12 * np.abs(g).max())


@pytest.mark.parametrize("case", list(PT_CASES))
def test_point_triangle_derivatives_match_finite_differences(case):
    p, tri, expected = PT_CASES[case]
    _check(point_triangle_distance, np.vstack([p, tri]).astype(float), case, expected)


EE_CASES = {
    # name: (a0, a1, b0, b1, expected type)
    "crossing interiors": ([0, 0, 0], [1, 0, 0], [0.3, -0.5, 0.2], [0.6, 0.5, 0.3], EDGE_EDGE),
    "end against interior": ([0, 0, 0], [1, 0, 0], [1.2, -0.5, 0.2], [1.3, 0.5, 0.3],
                             POINT_EDGE),
    "end against end": ([0, 0, 0], [1, 0, 0], [1.2, 0.1, 0.2], [2, 0.5, 0.3], POINT_POINT),
    "nearly parallel (1e-3 rad), crossing": ([0, 0, 0], [1, 0, 0], [0.2, -4e-4, 0.05],
                                             [1.2, 6e-4, 0.05], EDGE_EDGE),
    "nearly parallel (1e-7 rad), end against edge": ([0, 0, 0], [1, 0, 0], [0.5, 0.1, 0.05],
                                                     [1.5, 0.1 + 1e-7, 0.05], POINT_EDGE),
    "parallel, end against end": ([0, 0, 0], [1, 0, 0], [1.2, 0.1, 0.0], [2.0, 0.1, 0.0],
                                  POINT_POINT),
    "tiny crossing edges": ([0, 0, 0], [1e-6, 0, 0], [3e-7, -5e-7, 2e-7], [6e-7, 5e-7, 3e-7],
                            EDGE_EDGE),
}


@pytest.mark.parametrize("case", list(EE_CASES))
def test_edge_edge_derivatives_match_finite_differences(case):
    *pts, expected = EE_CASES[case]
    _check(edge_edge_distance, np.array(pts, dtype=float), case, expected, h_atol=2e-5)


def test_parallel_edges_take_the_exact_distance_and_nearly_parallel_ones_stay_close():
    a0, a1 = np.zeros(3), np.array([1.0, 0, 0])
    d2 = edge_edge_distance(a0, a1, [0.3, 0.1, 0.2], [1.4, 0.1, 0.2])[0]
    assert np.sqrt(d2) == pytest.approx(np.hypot(0.1, 0.2), rel=1e-14)
    # nearly parallel and crossing in projection: the true distance is 0.05 (the common
    # normal is z); below the parallel threshold (1e-7 rad) the end-against-edge fallback is
    # too large by at most sin(angle) * length, above it (1e-4 rad) the general type is exact
    for angle, tol in ((1e-7, 1.1e-7), (1e-4, 1e-15)):
        b0, b1 = [0.2, -0.4 * angle, 0.05], [1.2, 0.6 * angle, 0.05]
        f, _, _, kind = edge_edge_distance(a0, a1, b0, b1)
        assert kind == (POINT_EDGE if angle < 1e-5 else EDGE_EDGE)
        assert 0.0 <= np.sqrt(f) - 0.05 <= tol


def test_distance_derivatives_of_d_match_finite_differences():
    x = np.vstack([[0.4, 0.3, 0.5], TRI])

    def dist(*pts):
        f, g, h, kind = point_triangle_distance(*pts)
        d, gd, hd = distance_derivatives(f, g, h)
        return d, gd, hd, kind

    kind, d, g, h, g_fd, h_fd = _fd(dist, x)
    np.testing.assert_allclose(g, g_fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, h_fd, rtol=1e-5, atol=1e-6 * np.abs(h).max())
    # the distance to a plane: grad of the point is the unit normal
    assert np.linalg.norm(g[:3]) == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match="zero"):
        distance_derivatives(0.0, np.zeros(12), np.zeros((12, 12)))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="point_triangle_distance"):
        point_triangle_distance([0, 0, np.nan], *TRI)
    with pytest.raises(ValueError, match="edge_edge_distance"):
        edge_edge_distance([0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0])


def test_sine_of_parallel_edges_derivatives_match_finite_differences():
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = rng.normal(size=12)
        s, u, v = edge_sine2(q, 0, 3, 6, 9)
        cos = np.dot(q[3:6] - q[0:3], q[9:12] - q[6:9]) / (
            np.linalg.norm(q[3:6] - q[0:3]) * np.linalg.norm(q[9:12] - q[6:9]))
        assert s == pytest.approx(1 - cos ** 2, rel=1e-12)
        g = np.array([edge_sine2_gradient(u, v, i) for i in range(12)])
        h = np.array([[edge_sine2_hessian(u, v, i, k) for k in range(12)] for i in range(12)])
        step = 1e-6
        g_fd, h_fd = np.zeros(12), np.zeros((12, 12))
        for i in range(12):
            qp, qm = q.copy(), q.copy()
            qp[i] += step
            qm[i] -= step
            sp, up, vp = edge_sine2(qp, 0, 3, 6, 9)
            sm, um, vm = edge_sine2(qm, 0, 3, 6, 9)
            g_fd[i] = (sp - sm) / (2 * step)
            h_fd[:, i] = [(edge_sine2_gradient(up, vp, j) - edge_sine2_gradient(um, vm, j))
                          / (2 * step) for j in range(12)]
        np.testing.assert_allclose(g, g_fd, atol=1e-8 * np.abs(g).max())
        np.testing.assert_allclose(h, h_fd, atol=1e-7 * np.abs(h).max())
    # the mollifier: C1 at kappa, zero at 0
    assert mollifier(0.0, 1e-3) == (0.0, 2e3, -2e6)
    m, dm, _ = mollifier(1e-3 * (1 - 1e-9), 1e-3)
    assert m == pytest.approx(1.0, abs=1e-15) and abs(dm) < 1e-5
