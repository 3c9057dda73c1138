"""Second derivatives of the connection frames (``sum_a u_a Hess F_a``) against central
differences of ``J^T u``, on regular and near degenerate simplices; where they are added; and
the connection Hessians they complete, exact with rods turned far from their step start."""
from __future__ import annotations

import numpy as np
import pytest
from mixed_joint_cases import fd_errors, perp, point_case, rotation, unit

from strandlab.mixed import frame_hessians as fh
from strandlab.mixed import frames as fr


def _rod(t_s, a1_s):
    ts, a1 = tuple(t_s), tuple(a1_s)
    return (lambda x, F, J: fr.rod_edge_frame(x, 0, 3, 6, ts, a1, F, J),
            lambda x, u, H: fh.add_rod_edge_frame_hessian(x, 0, 3, 6, ts, a1, u, H))


# slots deliberately out of order, as the stencils have them
FRAMES = {
    "triangle_vertex": (lambda x, F, J: fr.triangle_vertex_frame(x, 0, 3, 6, F, J),
                        lambda x, u, H: fh.add_triangle_vertex_frame_hessian(x, 0, 3, 6, u, H)),
    "triangle_edge": (lambda x, F, J: fr.triangle_edge_frame(x, 6, 0, 3, F, J),
                      lambda x, u, H: fh.add_triangle_edge_frame_hessian(x, 6, 0, 3, u, H)),
    "tet_vertex": (lambda x, F, J: fr.tet_vertex_frame(x, 9, 0, 6, 3, F, J),
                   lambda x, u, H: fh.add_tet_vertex_frame_hessian(x, 9, 0, 6, 3, u, H)),
}


def _jtu(frame, x, u):
    F = np.zeros(9)
    J = np.zeros((9, x.size))
    assert frame(x, F, J) == fr.FRAME_OK
    return J.T @ u


def _hess(hess, x, u):
    H = np.zeros((x.size, x.size))
    assert hess(x, u, H) == fr.FRAME_OK
    return H


def _error(pair, x, u, step):
    """Relative error of the contraction against central differences of ``J^T u`` (steps
    ``step`` [m] on positions, ``1e-6`` rad on the rod's angle), and its asymmetry."""
    frame, hess = pair
    H = _hess(hess, x, u)
    Hn = np.zeros_like(H)
    for j in range(x.size):
        h = 1e-6 if x.size == 7 and j == 6 else step
        d = np.zeros(x.size)
        d[j] = h
        Hn[:, j] = (_jtu(frame, x + d, u) - _jtu(frame, x - d, u)) / (2 * h)
    return np.abs(H - Hn).max() / np.abs(Hn).max(), np.abs(H - H.T).max() / np.abs(H).max()


def _rod_x(t_s, turn, length, theta, rng):
    """A rod edge of ``length`` [m] whose tangent is ``turn`` [rad] from ``t_s``."""
    t = rotation(perp(t_s, rng.normal(size=3)), turn) @ t_s
    xa = rng.normal(size=3)
    return np.concatenate([xa, xa + length * t, [theta]])


@pytest.mark.parametrize("turn, length, theta", [
    (0.0, 0.6, 0.7), (0.8, 0.6, -2.0), (2.5, 0.6, 1.1),   # regular, tangent turned
    (3.0, 0.6, 0.3), (3.13, 0.6, 0.3),                    # t nearly -t_s (1 + t_s . t ~ 1e-4)
    (1.2, 1e-4, 0.5),                                     # very short edge
    (1.0, 0.6, 1e-9), (1.0, 0.6, np.pi - 1e-9),           # theta near 0 and pi
    (1.0, 0.6, 7.5),                                      # theta beyond 2 pi
])
def test_rod_edge_frame_hessian_matches_differences(turn, length, theta):
    rng = np.random.default_rng(21)
    t_s = unit([0.2, 0.9, -0.3])
    pair = _rod(t_s, perp(t_s))
    for _ in range(3):
        x = _rod_x(t_s, turn, length, theta, rng)
        # at t near -t_s the differences lose digits to rounding first: steps 1e-6 of the edge
        err, asym = _error(pair, x, rng.normal(size=9), 1e-6 * length)
        assert err < 1e-6 and asym < 1e-11, (err, asym)   # (rounding of 1 / beta^2 terms)


REGULAR = {"triangle_vertex": 9, "triangle_edge": 9, "tet_vertex": 12}

# near degenerate simplices and the length [m] on which their frame turns
NEAR = {
    # nearly collinear corner (sine 1e-3)
    "triangle_vertex": [([0, 0, 0, 1, 0, 0, 0.5, 1e-3, 2e-4], 1e-3),
                        # one very short edge
                        ([0, 0, 0, 1e-4, 3e-5, 0, 0.2, 1.0, 0.1], 1e-4),
                        # corner near pi: short bisector (|e1/|e1| + e2/|e2|| ~ 1e-3)
                        ([0, 0, 0, 1, 0, 0, -1, 1e-3, 3e-4], 1e-3)],
    # (a, b, c) in slots (6, 0, 3): x[6:9] = a, x[0:3] = b, x[3:6] = c
    "triangle_edge": [([1, 0, 0, 0.5, 1e-3, 2e-4, 0, 0, 0], 1e-3),     # c nearly on the edge
                      ([1e-4, 2e-5, 0, 0.3, 1.0, 0.2, 0, 0, 0], 1e-4),  # very short edge
                      ([1, 0, 0, 1e-4, 2e-4, 1e-5, 0, 0, 0], 1e-4)],    # c next to a
    # (v, p1, p2, p3) in slots (9, 0, 6, 3)
    "tet_vertex": [([1, 0, 0, 0, 1, 0, 0, 0, 0, 0.3, 0.3, 1e-3], 1e-3),  # nearly flat
                   ([0.34, 0.33, 0.01, 0, 1, 0, 0, 0, 0, 0.3, 0.3, 1.0], 1e-2),  # p1 near g
                   ([1, 0, 0, 0, 1, 0, 0, 0, 0, 0.33, 0.33, 1e-4], 1e-4)],   # flatter still
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_simplex_frame_hessians_match_differences(name):
    rng = np.random.default_rng(22)
    for _ in range(4):
        err, asym = _error(FRAMES[name], rng.normal(size=REGULAR[name]), rng.normal(size=9),
                           1e-6)
        assert err < 1e-7 and asym < 1e-13, (err, asym)
    for x, scale in NEAR[name]:
        x = np.asarray(x, float)
        R = rotation(rng.normal(size=3), 0.7)      # off the coordinate axes
        x = (x.reshape(-1, 3) @ R.T + rng.normal(size=3)).ravel()
        err, asym = _error(FRAMES[name], x, rng.normal(size=9), 1e-6 * scale)
        assert err < 1e-6 and asym < 1e-12, (name, scale, err, asym)


@pytest.mark.parametrize("name", sorted(FRAMES) + ["rod"])
def test_hessian_is_added_at_the_frame_slots_only(name):
    rng = np.random.default_rng(23)
    if name == "rod":
        t_s = unit([1.0, -0.4, 0.3])
        frame, hess = _rod(t_s, perp(t_s))
        x = _rod_x(t_s, 1.4, 0.8, 0.9, rng)
    else:
        frame, hess = FRAMES[name]
        x = rng.normal(size=REGULAR[name])
    k = x.size
    u = rng.normal(size=9)
    ref = _hess(hess, x, u)
    # the same frame inside a larger stencil, at shifted slots, onto a non-zero H
    big = np.concatenate([rng.normal(size=4), x, rng.normal(size=3)])
    H0 = rng.normal(size=(big.size, big.size))
    H = H0.copy()
    shifted = {"rod": lambda x, u, H: fh.add_rod_edge_frame_hessian(
                   x, 4, 7, 10, tuple(t_s), tuple(perp(t_s)), u, H),
               "triangle_vertex": lambda x, u, H: fh.add_triangle_vertex_frame_hessian(
                   x, 4, 7, 10, u, H),
               "triangle_edge": lambda x, u, H: fh.add_triangle_edge_frame_hessian(
                   x, 10, 4, 7, u, H),
               "tet_vertex": lambda x, u, H: fh.add_tet_vertex_frame_hessian(
                   x, 13, 4, 10, 7, u, H)}[name]
    assert shifted(big, u, H) == fr.FRAME_OK
    D = H - H0
    np.testing.assert_allclose(D[4:4 + k, 4:4 + k], ref, rtol=0, atol=1e-12)
    D[4:4 + k, 4:4 + k] = 0.0
    assert np.abs(D).max() < 1e-14
    # linear in u
    v = rng.normal(size=9)
    np.testing.assert_allclose(_hess(hess, x, u - 2.0 * v), ref - 2.0 * _hess(hess, x, v),
                               rtol=0, atol=1e-12 * np.abs(ref).max())


def test_degenerate_simplices_add_nothing():
    t_s = unit([0.0, 0.0, 1.0])
    _, rod = _rod(t_s, perp(t_s))
    u = np.arange(1.0, 10.0)
    cases = [(rod, [1.0, 2, 3, 1, 2, 3, 0]),                  # zero-length edge
             (rod, [0.0, 0, 1, 0, 0, 0, 0])]                   # t = -t_s
    line = [0.0, 0, 0, 1, 1, 1, 2, 2, 2]
    cases += [(FRAMES[n][1], line) for n in ("triangle_vertex", "triangle_edge")]
    cases += [(FRAMES["triangle_vertex"][1], [0.0, 0, 0, 1, 0, 0, -2, 0, 0])]  # corner of pi
    cases += [(FRAMES["tet_vertex"][1], [0.0, 0, 0, 1, 0, 0, 0, 1, 0, 0.3, 0.3, 0])]
    for hess, x in cases:
        x = np.asarray(x, float)
        H = np.ones((x.size, x.size))
        assert hess(x, u, H) == fr.FRAME_DEGENERATE
        assert np.all(H == 1.0)


@pytest.mark.parametrize("kinds", [("rod", "rod"), ("rod", "triangle"), ("triangle", "rod"),
                                   ("rod", "tet"), ("tet", "tet"), ("triangle", "triangle")])
def test_connection_hessian_is_exact_with_rods_turned_far(kinds):
    """Through the joints' kernels (both frame orientations, turned frames): the Hessian
    against central differences of the gradient (steps 1e-6, whose own error reaches 2e-8
    here), rod edges rotated by 2.1-2.6 rad about random axes from their step start
    (differences of the frames erred by 1e-7 to 1.4e-6 on these)."""
    rng = np.random.default_rng(24)
    worst = 0.0
    for _ in range(3):
        case = point_case(kinds, rng=rng)
        q = case.q + 0.15 * rng.normal(size=case.q.size)
        for a, b in case.rod_pairs:              # turn the rod edges far from t_start
            xa, xb = q[3 * a:3 * a + 3], q[3 * b:3 * b + 3]
            R = rotation(rng.normal(size=3), 2.6 * rng.uniform(0.8, 1.0))
            q[3 * b:3 * b + 3] = xa + R @ (xb - xa)
        eg, eh, asym = fd_errors(case.term, q)
        worst = max(worst, eh)
        assert eg < 1e-7 and eh < 5e-8 and asym < 1e-12, (eg, eh, asym)
    print(f"\n{kinds}: largest relative Hessian error {worst:.1e}")
