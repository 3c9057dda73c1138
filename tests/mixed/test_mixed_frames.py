"""Frames of simplices at connections: Jacobians against finite differences, geometry,
covariance and degenerate simplices."""
from __future__ import annotations

import numpy as np
import pytest
from mixed_joint_cases import perp, rotation, unit

from strandlab.mixed import frames as fr
from strandlab.rods.energies import transport


def _frame(fun, x):
    F = np.zeros(9)
    J = np.zeros((9, x.size))
    st = fun(x, F, J)
    return st, F, J


def _fd(fun, x, h=1e-6):
    Jn = np.zeros((9, x.size))
    for j in range(x.size):
        d = np.zeros(x.size)
        d[j] = h
        Jn[:, j] = (_frame(fun, x + d)[1] - _frame(fun, x - d)[1]) / (2 * h)
    return Jn


def _rod(t_s, a1_s):
    return lambda x, F, J: fr.rod_edge_frame(x, 0, 3, 6, tuple(t_s), tuple(a1_s), F, J)


FRAMES = {
    "triangle_vertex": (lambda x, F, J: fr.triangle_vertex_frame(x, 0, 3, 6, F, J), 9),
    "triangle_edge": (lambda x, F, J: fr.triangle_edge_frame(x, 6, 0, 3, F, J), 9),
    "tet_vertex": (lambda x, F, J: fr.tet_vertex_frame(x, 9, 0, 6, 3, F, J), 12),
}


def _check(fun, x, tol=1e-8):
    st, F, J = _frame(fun, x)
    assert st == fr.FRAME_OK
    M = F.reshape(3, 3)
    assert np.abs(M @ M.T - np.eye(3)).max() < 1e-13
    assert np.allclose(np.cross(M[2], M[0]), M[1], atol=1e-13)     # m2 = m3 x m1
    Jn = _fd(fun, x)
    assert np.abs(J - Jn).max() < tol * np.abs(Jn).max()
    return F, J


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_simplex_frame_jacobians_match_finite_differences(name):
    fun, k = FRAMES[name]
    rng = np.random.default_rng(3)
    for _ in range(3):
        _check(fun, rng.normal(size=k))


def test_rod_frame_jacobian_includes_the_transport_holonomy():
    rng = np.random.default_rng(4)
    t_s = unit([0.2, 0.9, -0.3])
    a1_s = perp(t_s)
    for turn in (0.0, 0.8, 2.5):          # angle between t_s and the edge's tangent
        t = rotation(perp(t_s, rng.normal(size=3)), turn) @ t_s
        xa = rng.normal(size=3)
        x = np.concatenate([xa, xa + 0.6 * t, [rng.normal()]])
        F, J = _check(_rod(t_s, a1_s), x)
        a1 = np.array(transport(tuple(a1_s), tuple(t_s), tuple(t)))
        c, s = np.cos(x[6]), np.sin(x[6])
        assert np.allclose(F[0:3], c * a1 + s * np.cross(t, a1), atol=1e-14)
        assert np.allclose(F[6:9], t, atol=1e-14)
    # at t = t_s the reference director is the start director
    x = np.concatenate([np.zeros(3), 0.5 * t_s, [0.0]])
    assert np.allclose(_frame(_rod(t_s, a1_s), x)[1][0:3], a1_s, atol=1e-15)


def test_sliver_triangle_jacobian_is_still_accurate():
    x = np.array([0, 0, 0, 1.0, 0, 0, 0.5, 2e-3, 1e-4])
    for name in ("triangle_vertex", "triangle_edge"):
        fun, _ = FRAMES[name]
        _check(fun, x, tol=1e-5)


def test_triangle_vertex_frame_bisects_the_corner():
    rng = np.random.default_rng(5)
    x = rng.normal(size=9)
    _, F, _ = _frame(FRAMES["triangle_vertex"][0], x)
    e1, e2 = unit(x[3:6] - x[0:3]), unit(x[6:9] - x[0:3])
    assert abs(F[6:9] @ e1 - F[6:9] @ e2) < 1e-14 and F[6:9] @ e1 > 0
    assert np.allclose(F[0:3], unit(np.cross(e1, e2)), atol=1e-14)


def test_tet_frame_points_to_the_opposite_face():
    rng = np.random.default_rng(6)
    x = rng.normal(size=12)
    _, F, _ = _frame(FRAMES["tet_vertex"][0], x)
    v, p1, p2, p3 = x[9:12], x[0:3], x[6:9], x[3:6]
    g = (p1 + p2 + p3) / 3
    assert np.allclose(F[6:9], unit(g - v), atol=1e-14)
    w = p1 - g
    assert np.allclose(F[0:3], unit(w - (w @ F[6:9]) * F[6:9]), atol=1e-14)


@pytest.mark.parametrize("name", sorted(FRAMES) + ["rod"])
def test_frames_turn_with_the_simplex(name):
    rng = np.random.default_rng(7)
    R = rotation(rng.normal(size=3), 1.3)
    c = rng.normal(size=3)
    if name == "rod":
        t_s = unit([1.0, 0.5, 0.2])
        a1_s = perp(t_s)
        x = np.concatenate([rng.normal(size=6), [0.7]])
        f0 = _frame(_rod(t_s, a1_s), x)[1]
        xr = np.concatenate([(x[:6].reshape(2, 3) @ R.T + c).ravel(), x[6:]])
        f1 = _frame(_rod(R @ t_s, R @ a1_s), xr)[1]
    else:
        fun, k = FRAMES[name]
        x = rng.normal(size=k)
        f0 = _frame(fun, x)[1]
        f1 = _frame(fun, (x.reshape(-1, 3) @ R.T + c).ravel())[1]
    assert np.allclose(f1.reshape(3, 3), f0.reshape(3, 3) @ R.T, atol=1e-13)


def test_degenerate_simplices_have_no_frame():
    t_s = unit([0.0, 0.0, 1.0])
    rod = _rod(t_s, perp(t_s))
    assert _frame(rod, np.array([1.0, 2, 3, 1, 2, 3, 0]))[0] == fr.FRAME_DEGENERATE
    assert _frame(rod, np.array([0.0, 0, 1, 0, 0, 0, 0]))[0] == fr.FRAME_DEGENERATE  # t = -t_s
    line = np.array([0.0, 0, 0, 1, 1, 1, 2, 2, 2])
    for name in ("triangle_vertex", "triangle_edge"):
        assert _frame(FRAMES[name][0], line)[0] == fr.FRAME_DEGENERATE
    flat = np.array([0.0, 0, 0, 1, 0, 0, 0, 1, 0, 0.3, 0.3, 0])
    assert _frame(FRAMES["tet_vertex"][0], flat)[0] == fr.FRAME_DEGENERATE
