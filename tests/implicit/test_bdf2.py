"""BDF2 steps of ImplicitEuler (``history``): the step map of a linear oscillator from the
formula's definition, second order under refinement with constant and varying steps, momentum,
and the errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from implicit_toys import QuadraticTerm, SpringTerm, ToySystem, chain_springs

from strandlab.implicit import (
    BDF2_MAX_RATIO,
    ImplicitEuler,
    NewtonSettings,
    bdf2_coefficients,
)


def oscillators(k, m, **settings):
    """Independent 1-DOF oscillators ``E = k q^2 / 2`` (one block each)."""
    n = len(k)
    term = QuadraticTerm(np.arange(n)[:, None], np.asarray(k, float)[:, None, None], name="osc")
    return ImplicitEuler(ToySystem(n, m, [term], np.arange(n + 1)), NewtonSettings(**settings),
                         linear_solver="sparse")


def bdf2_reference(q0, v0, qm, vm, h, hm, w2, c):
    """``(q1, v1)`` of the variable-step BDF2 for ``q'' = -w2 q - c q'``, solved from the
    formula as written in the literature: ``y1 - (1+r)^2/(1+2r) y0 + r^2/(1+2r) y_m =
    (1+r)/(1+2r) h f(y1)``, ``r = h / hm``, on ``y = (q, v)``."""
    r = h / hm
    b1, b2, beta = (1 + r) ** 2 / (1 + 2 * r), r * r / (1 + 2 * r), h * (1 + r) / (1 + 2 * r)
    # [1, -beta; beta w2, 1 + beta c] [q1; v1] = [b1 q0 - b2 qm; b1 v0 - b2 vm]
    rq, rv = b1 * q0 - b2 * qm, b1 * v0 - b2 * vm
    det = (1 + beta * c) + beta * beta * w2
    return ((1 + beta * c) * rq + beta * rv) / det, (rv - beta * w2 * rq) / det


def test_coefficients_reduce_to_the_constant_step_formula():
    a1, a2, ht = bdf2_coefficients(0.01, 0.01)
    assert (a1, a2) == pytest.approx((4 / 3, 1 / 3), rel=1e-15)
    assert ht == pytest.approx(2 / 3 * 0.01, rel=1e-15)
    for r in (0.3, 1.0, 2.0, 2.4):
        a1, a2, _ = bdf2_coefficients(r * 0.02, 0.02)
        assert a1 - a2 == pytest.approx(1.0, rel=1e-14)      # consistency: constants are kept


@pytest.mark.parametrize("ratio", [1.0, 0.5, 1.7])
@pytest.mark.parametrize("damping", ["none", "mass", "stiffness"])
def test_step_map_of_an_oscillator(ratio, damping):
    """One step with history equals the BDF2 formula solved by hand, for each step ratio and
    each kind of damping (stiffness damping beta acts as c = beta w^2)."""
    k = np.array([4.0, 100.0, 2500.0])
    m = np.array([1.0, 1.0, 0.1])
    w2 = k / m
    opts = {"none": {}, "mass": {"mass_damping": 3.0}, "stiffness": {"stiffness_damping": 2e-3}}
    c = {"none": 0.0 * w2, "mass": np.full(3, 3.0), "stiffness": 2e-3 * w2}[damping]
    integ = oscillators(k, m, **opts[damping])
    hm = 0.01
    h = ratio * hm
    q0, v0 = np.array([0.1, -0.02, 3e-3]), np.array([0.5, 1.0, -0.2])
    qm, vm = np.array([0.09, -0.03, 1e-3]), np.array([0.6, 0.8, 0.1])
    q, v = q0.copy(), v0.copy()
    integ.step(q, v, q, v, h, history=(qm, vm, hm))
    q_ref, v_ref = bdf2_reference(q0, v0, qm, vm, h, hm, w2, c)
    np.testing.assert_allclose(q, q_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(v, v_ref, rtol=1e-12, atol=1e-15)


def test_no_history_is_backward_euler_to_the_bit():
    k, m = np.array([40.0, 900.0]), np.array([0.5, 2.0])
    a, b = oscillators(k, m), oscillators(k, m)
    qa, va = np.array([0.1, -0.3]), np.array([1.0, -2.0])
    qb, vb = qa.copy(), va.copy()
    for _ in range(5):
        a.step(qa, va, qa, va, 0.02)
        b.step(qb, vb, qb, vb, 0.02, history=None)
    assert np.array_equal(qa, qb) and np.array_equal(va, vb)


def run_chain(h_of, t_end, scheme, seed=3):
    """Nonlinear spring chains with gravity from a fixed start, to ``t_end`` with steps
    ``h_of(i)`` (the last one cut to end there); BDF2 after a first backward Euler step."""
    pairs, kk, rest = chain_springs(2, 6, k=10.0, rest=0.1)
    n = 3 * 12
    rng = np.random.default_rng(seed)
    x = np.zeros((12, 3))
    x[:, 0] = np.tile(np.arange(6) * 0.1, 2)
    x[:, 1] = np.repeat(np.arange(2), 6)
    q = x.reshape(-1) + 0.02 * rng.normal(size=n)
    v = 0.1 * rng.normal(size=n)
    sys_ = ToySystem(n, np.full(n, 0.05), [], np.array([0, 18, 36]))
    sys_.terms.append(SpringTerm(pairs, kk, rest))
    integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-13, atol=1e-14,
                                               max_iterations=50), linear_solver="sparse")
    f = np.zeros(n)
    f[2::3] = -9.81 * 0.05
    fixed = np.zeros(n, bool)
    fixed[:3] = True
    t, i, hist = 0.0, 0, None
    while t < t_end - 1e-12:
        h = min(h_of(i), t_end - t)
        q0, v0 = q.copy(), v.copy()
        use = hist if scheme == "bdf2" and hist is not None and h < BDF2_MAX_RATIO * hist[2] \
            else None
        integ.step(q, v, q, v, h, f_ext=f, fixed=fixed, history=use)
        hist = (q0, v0, h)
        t += h
        i += 1
    return q


@pytest.mark.parametrize("varying", [False, True])
def test_second_order_under_refinement(varying):
    """The error at t = 0.3 s against a run with steps 32 times shorter falls 3.7-4-fold a
    halving of the step with BDF2 (1.7-fold with backward Euler), also with steps that
    alternate between 0.6 and 1.4 times the nominal one."""
    def steps(h):
        return (lambda i: h * (0.6 if i % 2 else 1.4)) if varying else (lambda i: h)

    t_end, h0 = 0.3, 0.3 / 24
    ref = run_chain(steps(h0 / 32), t_end, "bdf2")
    err = [np.abs(run_chain(steps(h0 / 2**j), t_end, "bdf2") - ref).max() for j in range(3)]
    rates = [math.log2(err[j] / err[j + 1]) for j in range(2)]
    assert all(1.7 < r < 2.4 for r in rates), (err, rates)
    be = [np.abs(run_chain(steps(h0 / 2**j), t_end, "euler") - ref).max() for j in range(2)]
    assert 0.6 < math.log2(be[0] / be[1]) < 1.3
    assert err[0] < 0.35 * be[0]


def test_momentum_of_a_free_system_is_kept():
    """Without external forces the total momentum is kept by every BDF2 step: it is a1 p_n -
    a2 p_{n-1} with a1 - a2 = 1, the internal forces summing to zero."""
    pairs, kk, rest = chain_springs(1, 8, k=200.0, rest=0.1)
    n = 24
    rng = np.random.default_rng(1)
    q = np.c_[np.arange(8) * 0.1, np.zeros(8), np.zeros(8)].reshape(-1) + \
        0.01 * rng.normal(size=n)
    mass = rng.uniform(0.01, 0.03, n // 3).repeat(3)
    v = np.tile(np.array([0.2, -0.1, 0.05]), 8) + 0.0 * q
    sys_ = ToySystem(n, mass, [], np.array([0, n]))
    sys_.terms.append(SpringTerm(pairs, kk, rest))
    integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-12, max_iterations=40),
                          linear_solver="sparse")
    p0 = (mass * v).reshape(-1, 3).sum(axis=0)
    hist = None
    for i in range(12):
        h = 0.01 if i % 3 else 0.015
        q0, v0 = q.copy(), v.copy()
        info = integ.step(q, v, q, v, h, history=hist)
        assert info.converged
        hist = (q0, v0, h)
        np.testing.assert_allclose((mass * v).reshape(-1, 3).sum(axis=0), p0, rtol=0,
                                   atol=1e-12)


def test_bad_history_is_named():
    integ = oscillators(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    q, v = np.zeros(2), np.zeros(2)
    with pytest.raises(ValueError, match="ratio 2.5 is not below 2.4142"):
        integ.step(q, v, q, v, 0.025, history=(q.copy(), v.copy(), 0.01))
    with pytest.raises(ValueError, match="h_prev must be a positive finite number"):
        integ.step(q, v, q, v, 0.01, history=(q.copy(), v.copy(), 0.0))
    with pytest.raises(ValueError, match="history's q_prev must be"):
        integ.step(q, v, q, v, 0.01, history=(np.zeros(3), v.copy(), 0.01))
    with pytest.raises(ValueError, match=r"history must be \(q_prev, v_prev, h_prev\)"):
        integ.step(q, v, q, v, 0.01, history=(q.copy(), v.copy()))
