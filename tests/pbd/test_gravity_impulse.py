"""Gravity with the ghost-point correction: the prediction of the step kernel
(``kernels._predict_strand``; Algorithm 1, section 6).

Reference (its docstring, Algorithm 1 of the appendix): every dynamic point gets
``v' = (v + g dt) f`` with the damping factor ``f = max(0, 1 - damping dt)``; then each ghost
point hands the share ``s = 1 - r`` of its gravity, ``r = clamp(a_mid . g / |g|^2, 0, 1)`` with
``a_mid`` the edge midpoint's acceleration over the last step, to its edge's two end points as
an impulse: the ghost loses ``s g dt f`` of velocity and each dynamic end point gains
``(m_g / 2) s g dt f / m_p``.  The impulse moves momentum and creates none, so the momentum
change of one step is the total weight times the step, ``sum m dv = M g dt f`` (for zero
initial velocities; ``sum m ((v + g dt) f - v)`` in general).  Before the first step there is
no history and the ghost keeps its gravity (``s = 0``); ``"none"`` gives ``s = 1``, ``"full"``
no impulse.  Everything is exact arithmetic up to rounding: rtol 1e-12.
"""
import numpy as np
import pytest
from numba import njit

import strandlab as sl
from strandlab.pbd import compile_scene
from strandlab.pbd import kernels as K
from strandlab.pbd.kernel_args import StateArrays, StepParams

G = np.array([0.3, -0.4, -9.81])
DT = 0.01
DAMPING = 30.0          # f = 0.7: large enough that a missing or doubled factor shows
FD = 1.0 - DAMPING * DT


def _model(fixed_first=False):
    """A free strand with uneven edges (so the end points' masses differ) and heavy ghosts."""
    b = sl.SceneBuilder(gravity=tuple(G))
    mat = sl.Material(young_modulus=1e6, density=1000.0, radius=0.01)
    pts = np.array([[0, 0, 0], [0.1, 0, 0], [0.25, 0.02, 0], [0.3, 0.1, 0], [0.5, 0.1, 0.05]])
    s = b.add_strand(pts, material=mat, d1=(0, 0, 1), options={"pbd": {"ghost_mass_ratio": 0.3}})
    if fixed_first:
        b.fix_vertex(s, 0)
    return compile_scene(b.build())


@njit
def _predict_strand(model, state_in, state_out, scratch, params):
    # kernels._predict_strand has no Python entry point (it is called by compiled code only)
    K._predict_strand(0, 0, model, state_in, state_out, scratch, params)


def _predict(m, v_in, mid_in, mode=K.GRAVITY_CORRECTED, damping=DAMPING):
    """One call of the per-strand prediction of the step kernel (substep 0 of one)."""
    solver = sl.PBDSolver(m, sl.PBDSettings(substeps=1))
    x = m.x0.copy()
    v_out = np.zeros_like(v_in)
    mid_out = np.zeros((m.n_edges, 3))
    oe_alpha, co_alpha = solver.alphas(DT)
    empty = np.zeros((1, 0, 3))
    params = StepParams(DT, 1, 1, K.ORDER_INTERLEAVED, 0, True, mode, float(damping), oe_alpha,
                        co_alpha, empty, empty, empty)
    _predict_strand(solver._args, StateArrays(x, v_in, mid_in), StateArrays(x, v_out, mid_out),
                    solver._scratch, params)
    return x, v_out, mid_out, solver._scratch.x_pred.copy()


def _reference(m, v_in, share, fd=FD):
    """Velocities after predict, from the rule in the module docstring."""
    dyn = m.inv_mass > 0.0
    v = np.where(dyn[:, None], (v_in + DT * G) * fd, v_in)
    for e, s in enumerate(share):
        g = m.edge_ghost[e]
        imp = s * DT * G * fd
        v[g] -= imp
        for p in (m.edge_p0[e], m.edge_p1[e]):
            if dyn[p]:
                v[p] += 0.5 * m.mass[g] * imp / m.mass[p]
    return v


def _history(m, v_in, ratios):
    """Previous midpoint velocities that give the midpoint acceleration ``ratio * g``."""
    mid_now = 0.5 * (v_in[m.edge_p0] + v_in[m.edge_p1])
    return mid_now - np.asarray(ratios)[:, None] * G * DT


def test_ghost_impulses_add_up_to_the_weight_times_the_step():
    m = _model()
    assert m.n_edges == 4
    v_in = np.zeros((m.n_points, 3))
    ratios = [0.3, 1.5, -0.5, 0.8]          # 1.5 and -0.5 are clamped to 1 and 0
    share = [0.7, 0.0, 1.0, 0.2]
    x, v, mid, x_pred = _predict(m, v_in, _history(m, v_in, ratios))
    total = m.mass.sum()
    assert np.sum(m.mass[:, None] * v, axis=0) == pytest.approx(total * G * DT * FD, rel=1e-12)
    assert v == pytest.approx(_reference(m, v_in, share), rel=1e-12, abs=1e-15)
    # each ghost keeps exactly the share 1 - s of its gravity
    ghost_v = v[m.edge_ghost]
    assert ghost_v == pytest.approx((1.0 - np.array(share))[:, None] * G * DT * FD, rel=1e-12,
                                    abs=1e-15)
    assert x_pred == pytest.approx(x + DT * v, rel=1e-14, abs=1e-15)


def test_impulses_with_moving_points_and_the_midpoint_history():
    m = _model()
    rng = np.random.default_rng(8)
    v_in = rng.normal(scale=0.2, size=(m.n_points, 3))
    ratios = [0.1, 0.45, 0.9, 0.0]
    x, v, mid, _ = _predict(m, v_in, _history(m, v_in, ratios))
    # mid_v_out is this step's starting midpoint velocity (the next step's history)
    assert mid == pytest.approx(0.5 * (v_in[m.edge_p0] + v_in[m.edge_p1]), rel=1e-14)
    assert v == pytest.approx(_reference(m, v_in, 1.0 - np.array(ratios)), rel=1e-12,
                              abs=1e-15)
    dp = np.sum(m.mass[:, None] * (v - v_in), axis=0)
    ref = np.sum(m.mass[:, None] * ((v_in + DT * G) * FD - v_in), axis=0)
    assert dp == pytest.approx(ref, rel=1e-12)


def test_first_step_none_and_full_modes():
    m = _model()
    v_in = np.zeros((m.n_points, 3))
    nan = np.full((m.n_edges, 3), np.nan)
    free_fall = _reference(m, v_in, np.zeros(m.n_edges))
    # no history yet: the ghost keeps its full gravity, as for a free-falling edge
    _, v, _, _ = _predict(m, v_in, nan)
    assert v == pytest.approx(free_fall, rel=1e-12)
    # full gravity on ghosts, whatever the history
    _, v, _, _ = _predict(m, v_in, _history(m, v_in, [0.2] * 4), mode=K.GRAVITY_FULL)
    assert v == pytest.approx(free_fall, rel=1e-12)
    # none: every ghost hands all of its gravity on; the total stays the weight times the step
    _, v, _, _ = _predict(m, v_in, nan, mode=K.GRAVITY_NONE)
    assert v == pytest.approx(_reference(m, v_in, np.ones(m.n_edges)), rel=1e-12, abs=1e-15)
    assert np.abs(v[m.edge_ghost]).max() < 1e-15
    assert np.sum(m.mass[:, None] * v, axis=0) == pytest.approx(m.mass.sum() * G * DT * FD,
                                                                rel=1e-12)


def test_kinematic_end_points_take_no_impulse_and_damping_is_clamped():
    m = _model(fixed_first=True)
    assert m.inv_mass[0] == 0.0
    rng = np.random.default_rng(9)
    v_in = rng.normal(scale=0.2, size=(m.n_points, 3))
    v_in[0] = 0.0
    ratios = [0.25, 0.5, 0.0, 0.6]
    _, v, _, _ = _predict(m, v_in, _history(m, v_in, ratios))
    assert np.array_equal(v[0], [0.0, 0.0, 0.0])
    assert v == pytest.approx(_reference(m, v_in, 1.0 - np.array(ratios)), rel=1e-12, abs=1e-15)
    # damping dt > 1 stops every dynamic point (factor 0), it never reverses velocities
    _, v, _, _ = _predict(m, v_in, _history(m, v_in, ratios), damping=2.0 / DT)
    assert np.array_equal(v[1:], np.zeros_like(v[1:]))


def test_solver_step_passes_the_history_on():
    # two solver steps of a free strand: the second step's ghosts see the first step's midpoint
    # velocities, a free fall (ratio 1), so they keep all their gravity: everything falls alike
    m = _model()
    solver = sl.PBDSolver(m, sl.PBDSettings(damping=0.0))
    st = m.state()
    for _ in range(3):
        solver.step(st, st, DT)
    assert st.v == pytest.approx(np.broadcast_to(3 * DT * G, st.v.shape), rel=1e-9, abs=1e-12)
