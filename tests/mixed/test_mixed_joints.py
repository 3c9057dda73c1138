"""Point and curve connection terms: derivatives, rest and rigid motions, decoupling, angle
branches and stored angles."""
from __future__ import annotations

import numpy as np
import pytest
from mixed_joint_cases import (
    POINT_KINDS,
    assembled,
    curve_case,
    evaluate,
    fd_errors,
    perp,
    point_case,
    rotation,
    unit,
)

from strandlab.mixed import joints as J
from strandlab.mixed.joint_terms import CurveJointTerm, PointJointTerm
from strandlab.rods.energies import reference_twist

CURVE_KINDS = [("rod", "triangle"), ("triangle", "triangle")]


def _perturbed(case, rng, scale=0.15):
    return case.q + scale * rng.normal(size=case.q.size)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("kinds", POINT_KINDS)
def test_point_derivatives_match_finite_differences(kinds, hard):
    rng = np.random.default_rng(11)
    case = point_case(kinds, rng=rng, hard=hard)
    q = _perturbed(case, rng)           # rod tangents away from their step start: holonomy
    assert assembled(case.term, q)[0] > 1e-4
    eg, eh, asym = fd_errors(case.term, q)
    assert eg < 1e-7 and eh < 1e-6 and asym < 1e-12


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("kinds", CURVE_KINDS)
def test_curve_derivatives_match_finite_differences(kinds, hard):
    rng = np.random.default_rng(12)
    case = curve_case(kinds, rng=rng, hard=hard)
    q = _perturbed(case, rng)
    assert assembled(case.term, q)[0] > 1e-4
    eg, eh, asym = fd_errors(case.term, q)
    assert eg < 1e-7 and eh < 1e-6 and asym < 1e-12


def test_near_degenerate_stencils_keep_exact_derivatives():
    rng = np.random.default_rng(13)
    # rod edge nearly along the triangle's normal (m1 of the shell frame)
    X = [[0, 0, 0], [1e-3, 2e-3, -1.0], [1, 0.2, 0], [1, -0.3, 1e-3]]
    case = point_case(("rod", "triangle"), rng=rng, X=X, forward=[False])
    q = case.q.copy()
    q[-1] += 0.3
    q[3:6] += [0.02, -0.01, 0.0]
    assert fd_errors(case.term, q)[:2] < (1e-7, 1e-6)
    # sliver triangle, sine of its corner 2e-3
    X = [[0, 0, 0], [1, 0, 0], [0.5, 1e-3, 0.0]]
    case = curve_case(("rod", "triangle"), rng=rng, X=X)
    q = case.q.copy()
    q[6:9] += [0.0, 3e-4, 2e-4]
    assert fd_errors(case.term, q)[:2] < (1e-6, 1e-4)


def test_near_pi_twist_is_smooth_in_incremental_modes():
    rng = np.random.default_rng(14)
    for mode in ("incremental1", "incremental2", "direct"):
        case = curve_case(("rod", "triangle"), rng=rng, theta=0.0, mode=mode)
        q = case.q.copy()
        q[-1] = np.pi - 1e-3               # twist deviation near pi, stored angle 0
        if mode != "direct":
            case.term.begin_step(q)        # the stored angle follows to near pi
        eg, eh, _ = fd_errors(case.term, q, h=1e-7)
        assert eg < 1e-6 and eh < 1e-5
        dev = J.twist_angle(*case.term.measure(q)[0][0, :2], case.term.angles[0], 2) - \
            case.term.params[0, 1]
        assert abs(abs(dev) - (np.pi - 1e-3)) < 1e-9


def test_degenerate_stencils_get_infinite_energy_and_no_force():
    rng = np.random.default_rng(15)
    case = point_case(("triangle", "rod"), rng=rng)
    q = case.q.copy()
    q[6:9] = 2 * q[3:6] - q[0:3]                    # triangle collapsed to a line
    e, g, h = evaluate(case.term, q)
    assert e[0] == np.inf and not g.any() and not h.any()
    assert case.term.n_degenerate == 1 and case.term.first_degenerate == 0
    # side B folds back onto side A: the twist transport m3 -> n3 is undefined
    X = [[0, 0, 0], [1, 0.5, 0], [1, -0.5, 0], [-1, 0, 0.5], [-1, 0, -0.5]]
    case = point_case(("triangle", "triangle"), rng=rng, X=X)
    q = case.q.copy()
    q[9:15] *= -1.0                                  # B's bisector along A's
    e, g, _ = evaluate(case.term, q)
    assert e[0] == np.inf and not g.any()
    assert case.term.n_degenerate == 1
    e, _, _ = evaluate(case.term, case.q)
    assert e[0] < 1e-28 and case.term.n_degenerate == 0


def _moved(case, R, c):
    q = case.q.copy()
    n = case.q.size - sum(1 for _ in case.rod_pairs)
    q[:n] = (q[:n].reshape(-1, 3) @ R.T + c).ravel()
    case.t_start[...] = case.t_start @ R.T
    case.a1_start[...] = case.a1_start @ R.T
    return q


@pytest.mark.parametrize("which", [("point", k) for k in POINT_KINDS]
                         + [("curve", k) for k in CURVE_KINDS])
@pytest.mark.parametrize("hard", [False, True])
def test_rest_has_no_energy_or_force_under_rigid_motion(which, hard):
    rng = np.random.default_rng(16)
    make = point_case if which[0] == "point" else curve_case
    case = make(which[1], rng=rng, hard=hard)
    e0, g0, _ = assembled(case.term, case.q, hess=False)
    assert e0 < 1e-28 and np.abs(g0).max() < 1e-14
    # the whole stencil turned and moved, the rods' step start frames turned with it (theta
    # unchanged: the material frames turn rigidly)
    q = _moved(case, rotation(rng.normal(size=3), 2.0), rng.normal(size=3))
    e, g, _ = assembled(case.term, q, hess=False)
    assert e < 1e-24 and np.abs(g).max() < 1e-11


def test_rod_rigid_rotation_with_transported_frame_costs_nothing():
    """Rotating a rod edge from its step start without touching the start frames: its
    reference director is transported, so theta must follow the transport's twist for the
    joint to be unloaded; with that theta the energy is zero."""
    rng = np.random.default_rng(17)
    case = point_case(("rod", "triangle"), rng=rng, forward=[True])
    R = rotation(rng.normal(size=3), 0.9)
    q = case.q.copy()
    q[:12] = (q[:12].reshape(-1, 3) @ R.T).ravel()
    t = unit(q[3:6] - q[0:3])
    a1 = case.a1_start[0] - case.a1_start[0] @ t / (1 + case.t_start[0] @ t) * (
        case.t_start[0] + t)
    m1 = R @ (np.cos(q[12]) * case.a1_start[0] + np.sin(q[12]) *
              np.cross(case.t_start[0], case.a1_start[0]))
    q[12] = np.arctan2(m1 @ np.cross(t, a1), m1 @ a1)
    e, g, _ = assembled(case.term, q, hess=False)
    assert e < 1e-24 and np.abs(g).max() < 1e-11


def _straight_rod_triangle(rng, kt, kb):
    """Triangle at v = 0 opening towards +x (bisector +x), rod going on towards -x."""
    X = [[0, 0, 0], [1.0, 0.6, 0.1], [1.0, -0.6, -0.1], [-1.0, 0, 0]]
    case = point_case(("triangle", "rod"), rng=rng, X=X, forward=[True], theta=[0.0], kt=kt,
                      kb=kb)
    case.a1_start[0] = unit([0.0, 0.2, -1.2])          # the triangle's normal: zero rest twist
    case.term.set_rest(case.q)
    return case


def _rod_in_triangle(rng, mode):
    """Rod edge along x on the edge of a triangle in the xy plane; zero rest angle."""
    case = curve_case(("rod", "triangle"), rng=rng, X=[[0, 0, 0], [1, 0, 0], [0.3, 1, 0]],
                      theta=0.0, mode=mode, k=1.0, length=1.0)
    case.a1_start[0] = [0.0, 0.0, 1.0]
    case.term.set_rest(case.q)
    return case


def test_twist_and_bend_are_decoupled():
    rng = np.random.default_rng(18)
    for kt, kb in ((2.0, 0.0), (0.0, 3.0)):
        case = _straight_rod_triangle(rng, kt, kb)
        twist = case.q.copy()
        twist[-1] += 0.4                                   # pure twist of the rod
        bend = case.q.copy()
        bend[9:12] = rotation([0, 0.3, 1.0], 0.5) @ bend[9:12]   # pure bend about v
        e_twist = assembled(case.term, twist, hess=False)[0]
        e_bend = assembled(case.term, bend, hess=False)[0]
        assert e_twist == pytest.approx(0.5 * kt * 0.4 ** 2, rel=1e-12, abs=1e-20)
        assert e_bend == pytest.approx(0.5 * kb * 0.5 ** 2, rel=1e-12, abs=1e-20)


def test_rod_rod_twist_is_the_discrete_elastic_rod_twist():
    rng = np.random.default_rng(19)
    X = np.array([[0, 0, 0], [-0.8, 0.1, 0.2], [0.7, 0.4, -0.1]])   # v, x_{i-1}, x_{i+1}
    case = point_case(("rod", "rod"), rng=rng, X=X, forward=[False, True], theta=[0.4, -1.1])
    r, _ = case.term.measure(case.q)
    t0, t1 = unit(X[0] - X[1]), unit(X[2] - X[0])
    m_ref = reference_twist(tuple(t0), tuple(t1), tuple(case.a1_start[0]),
                            tuple(case.a1_start[1]))
    assert np.arctan2(r[0, 1], r[0, 0]) == pytest.approx(-1.1 - 0.4 + m_ref, abs=1e-13)


def test_small_rotations_cost_the_documented_hard_penalty():
    rng = np.random.default_rng(20)
    phi = 1e-4
    X = rng.normal(size=(6, 3))
    X[0] = 0.0
    case = point_case(("triangle", "tet"), rng=rng, X=X, hard=True, k=5.0)
    a = unit(rng.normal(size=3))
    q = case.q.copy()
    q[9:] = (q[9:].reshape(-1, 3) @ rotation(a, phi).T).ravel()   # turn the tet about v = 0
    n3 = unit(X[3:].mean(axis=0))
    e = assembled(case.term, q, hess=False)[0]
    assert e == pytest.approx(0.5 * 5.0 * (1 + (a @ n3) ** 2) * phi ** 2, rel=1e-3)
    curve = curve_case(("triangle", "triangle"), rng=rng, hard=True, k=4.0, length=0.3)
    q = curve.q.copy()
    axis = unit(q[3:6] - q[0:3])
    q[9:12] = rotation(axis, phi) @ (q[9:12] - q[0:3]) + q[0:3]
    e = assembled(curve.term, q, hess=False)[0]
    assert e == pytest.approx(0.5 * 4.0 * 0.3 * phi ** 2, rel=1e-3)


def test_curve_energy_is_the_rest_length_times_the_squared_angle():
    rng = np.random.default_rng(21)
    case = curve_case(("triangle", "triangle"), rng=rng, k=2.5, length=0.4)
    q = case.q.copy()
    axis = unit(q[3:6] - q[0:3])
    q[9:12] = rotation(axis, 1.2) @ (q[9:12] - q[0:3]) + q[0:3]
    assert assembled(case.term, q, hess=False)[0] == pytest.approx(0.5 * 2.5 * 0.4 * 1.2 ** 2,
                                                                   rel=1e-12)


def _spin(case, total, steps):
    """Turn the rod's material angle by ``total`` in ``steps`` steps; the angle stored and the
    energy at the end."""
    q = case.q.copy()
    for _ in range(steps):
        q[-1] += total / steps
        case.term.begin_step(q)
    return case.term.angles[0] - case.term.params[0, 1], assembled(case.term, q, False)[0]


@pytest.mark.parametrize("make", ["curve", "point"])
def test_incremental_updates_track_three_pi_where_direct_reports_pi(make):
    """After Fig. 10: a rod turned by 3 pi - 0.1 in 60 steps against a fixed shell."""
    rng = np.random.default_rng(22)
    total = 3 * np.pi - 0.1
    out = {}
    for mode in ("incremental1", "incremental2", "direct"):
        if make == "curve":
            case = _rod_in_triangle(rng, mode)
        else:
            case = _straight_rod_triangle(rng, 1.0, 0.0)
            case.term.mode = mode
        out[mode] = _spin(case, total, 60)
    for mode in ("incremental1", "incremental2"):
        assert abs(out[mode][0]) == pytest.approx(total, abs=1e-9)
        assert out[mode][1] == pytest.approx(0.5 * total ** 2, rel=1e-9)
    assert abs(out["direct"][0]) == pytest.approx(np.pi - 0.1, abs=1e-9)
    assert out["direct"][1] == pytest.approx(0.5 * (np.pi - 0.1) ** 2, rel=1e-9)


def test_energy_within_a_step_is_smooth_across_pi():
    rng = np.random.default_rng(23)
    energies = {}
    for mode in ("incremental2", "direct"):
        case = _rod_in_triangle(rng, mode)
        q = case.q.copy()
        q[-1] = np.pi - 0.2
        case.term.begin_step(q)
        es = []
        for th in np.linspace(np.pi - 0.2, np.pi + 0.2, 9):
            q[-1] = th
            es.append(assembled(case.term, q, False)[0])
        energies[mode] = np.array(es)
    dev = np.linspace(np.pi - 0.2, np.pi + 0.2, 9)
    assert np.allclose(energies["incremental2"], 0.5 * dev ** 2, rtol=1e-10)
    # the direct angle jumps from pi to -pi: its energy turns back, the force flips
    assert np.allclose(energies["direct"], energies["direct"][::-1], rtol=1e-10)
    assert np.all(np.diff(energies["incremental2"]) > 0.1)


def test_stored_angles_round_trip():
    rng = np.random.default_rng(24)
    a, b = (point_case(("rod", "tet"), rng=rng) for _ in range(2))
    q = _perturbed(a, rng, 0.1)
    assert a.term.begin_step(q) == 0
    moved = a.term.angles[0]
    assert moved != a.term.rest_twist[0]
    b.term.load_angles(a.term.angles + 2 * np.pi)
    assert b.term.angles[0] == moved + 2 * np.pi
    q[3:15] = np.tile(q[0:3], 4)                          # every vertex on v: degenerate
    assert a.term.begin_step(q) == 1 and a.term.angles[0] == moved


@pytest.mark.slow
def test_parallel_kernel_agrees_with_the_serial_one():
    rng = np.random.default_rng(24)
    case = point_case(("rod", "tet"), rng=rng)
    q = _perturbed(case, rng, 0.1)
    t = case.term
    n, k = t.dofs.shape
    out = [(np.zeros(n), np.zeros((n, k)), np.zeros((n, k, k))) for _ in range(2)]
    for kern, (e, g, h) in zip((J.joint_terms, J.joint_terms_serial), out):
        kern(J.EVALUATE, q, t.dofs, t._lay, t._par(), t._work, e, g, h, True)
    assert out[0][0][0] > 0
    for x, y in zip(*out):
        assert np.array_equal(x, y)


def test_bad_input_is_named():
    rng = np.random.default_rng(25)
    case = point_case(("rod", "triangle"), rng=rng)
    t = case.term
    common = dict(twist_stiffness=[1.0], bend_stiffness=[1.0])
    with pytest.raises(ValueError, match="point kinds"):
        PointJointTerm(kinds=("rod", "beam"), dofs=t.dofs, **common)
    with pytest.raises(ValueError, match="have 13 slots"):
        PointJointTerm(kinds=("rod", "triangle"), dofs=t.dofs[:, :12], **common)
    with pytest.raises(ValueError, match="need rod_edge"):
        PointJointTerm(kinds=("rod", "triangle"), dofs=t.dofs, **common)
    with pytest.raises(ValueError, match="stencil 0 names rod edge"):
        PointJointTerm(kinds=("rod", "triangle"), dofs=t.dofs, rod_edge=[[4]],
                       rod_forward=[[True]], a1_start=case.a1_start, t_start=case.t_start,
                       **common)
    with pytest.raises(ValueError, match="rest_axis of stencil 0"):
        PointJointTerm(kinds=("triangle", "triangle"), dofs=[np.arange(15)], rest_twist=[0.0],
                       rest_axis=[[1.0, 1.0, 0.0]], **common)
    with pytest.raises(ValueError, match="mode must be"):
        CurveJointTerm(kinds=("triangle", "triangle"), dofs=[np.arange(12)], stiffness=[1.0],
                       rest_length=[1.0], mode="wrapped")
    with pytest.raises(ValueError, match="curve kinds"):
        CurveJointTerm(kinds=("tet", "triangle"), dofs=[np.arange(12)], stiffness=[1.0],
                       rest_length=[1.0])
    fresh = CurveJointTerm(kinds=("triangle", "triangle"), dofs=[np.arange(12)],
                           stiffness=[1.0], rest_length=[1.0])
    with pytest.raises(RuntimeError, match="no rest state"):
        evaluate(fresh, np.zeros(12))
    with pytest.raises(ValueError, match="stencil 0 is degenerate"):
        fresh.set_rest(np.zeros(12))
    assert perp(unit([0, 0, 1.0])) @ [0, 0, 1.0] == pytest.approx(0.0)
