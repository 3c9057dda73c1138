"""The mixed solver's BDF2 (``MixedSettings.integrator = "bdf2"``): the state carries the last
step, a resumed run repeats the uninterrupted one bit for bit, and a step without a usable
history (the first, after a reset, after a large growth of the step) is backward Euler's."""
import dataclasses

import numpy as np
import pytest

from strandlab.mixed import MixedSettings, MixedSolver
from strandlab.scenes.mixed_toys import mixed_toy_ball

DT = 1.0 / 60.0


def _solvers(*integrators):
    sim = mixed_toy_ball(dt=DT)
    return [MixedSolver(sim.scene, dataclasses.replace(sim.settings, integrator=k))
            for k in integrators]


def _run(sol, s, steps, dt=DT):
    for _ in range(steps):
        sol.step(s, s, dt)
    return s


def test_the_state_carries_the_step_before():
    (sol,) = _solvers("bdf2")
    s = sol.state()
    assert s.h_prev == 0.0
    _run(sol, s, 2)
    q1, v1 = s.q.copy(), s.v.copy()
    _run(sol, s, 1)
    assert s.h_prev == DT
    assert np.array_equal(s.q_prev, q1) and np.array_equal(s.v_prev, v1)
    t = sol.state()
    t.assign(s)
    assert t.h_prev == DT and np.array_equal(t.q_prev, q1) and np.array_equal(t.v_prev, v1)


def test_steps_without_a_usable_history_are_backward_eulers():
    """The first step, a step after ``h_prev`` was reset, and a step 3 times the one before
    (beyond BDF2's stable ratio 1 + sqrt 2) equal backward Euler's to the bit; a BDF2 step
    with its history does not."""
    be, bdf = _solvers("euler", "bdf2")
    a, b = be.state(), bdf.state()
    _run(be, a, 1)
    _run(bdf, b, 1)
    assert np.array_equal(a.q, b.q)
    _run(be, a, 1)
    _run(bdf, b, 1)
    assert not np.array_equal(a.q, b.q)
    a.assign(b)
    b.h_prev = 0.0
    _run(be, a, 1)
    _run(bdf, b, 1)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)
    a.assign(b)
    _run(be, a, 1, 3 * DT)
    _run(bdf, b, 1, 3 * DT)
    assert np.array_equal(a.q, b.q) and b.h_prev == 3 * DT


def test_resume_repeats_the_bdf2_run_bit_for_bit():
    (a,) = _solvers("bdf2")
    s = _run(a, a.state(), 4)
    saved = a.save_state(s)
    assert saved["h_prev"] == DT and {"q_prev", "v_prev"} <= set(saved)
    full = _run(a, s, 4)
    (b,) = _solvers("bdf2")
    r = b.load_state(saved)
    assert r.h_prev == DT and np.array_equal(r.q_prev, saved["q_prev"])
    res = _run(b, r, 4)
    assert np.array_equal(res.q, full.q) and np.array_equal(res.v, full.v)
    # a state saved without the history (before BDF2) resumes with a backward Euler step
    old = {k: v for k, v in saved.items() if k not in ("q_prev", "v_prev", "h_prev")}
    (c,) = _solvers("bdf2")
    r = c.load_state(old)
    assert r.h_prev == 0.0 and np.array_equal(r.q_prev, r.q)
    assert not np.array_equal(_run(c, r, 4).q, full.q)


def test_bad_history_in_a_saved_state_is_named():
    (sol,) = _solvers("bdf2")
    saved = sol.save_state(_run(sol, sol.state(), 1))
    with pytest.raises(ValueError, match="'h_prev' is negative"):
        sol.load_state({**saved, "h_prev": np.float64(-0.01)})
    with pytest.raises(ValueError, match="'q_prev' has shape"):
        sol.load_state({**saved, "q_prev": np.zeros(3)})
    with pytest.raises(ValueError, match="'v_prev' is not finite"):
        sol.load_state({**saved, "v_prev": np.full_like(saved["v_prev"], np.nan)})


def test_equilibrium_leaves_no_history():
    (sol,) = _solvers("bdf2")
    s = _run(sol, sol.state(), 2)
    assert s.h_prev == DT
    sol.equilibrium(s, max_iterations=5)
    assert s.h_prev == 0.0 and not np.any(s.v)


def test_unknown_integrator_is_named():
    with pytest.raises(ValueError, match="unknown integrator 'rk4'; choose one of 'euler', "
                                         "'bdf2'"):
        MixedSettings(integrator="rk4")
