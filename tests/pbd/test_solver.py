"""Behaviour of the bending-twisting projection and of the PBD solver as a whole.

References:
- eq. (21) (goal Darboux vector Omega_goal = (1 - alpha) Omega + alpha Omega_rest): alpha = 0
  leaves the constraint without effect; alpha = 1 asks for the rest value in one projection.
  A projection is one Newton step (eq. 17), so with alpha = 1 the deviation after it is
  O(deviation^2) (quadratic convergence of Newton's method), and with alpha < 1 it is
  (1 - alpha) deviation + O(deviation^2).
- XPBD (Macklin, Mueller, Chentanez 2016): once the iterations have converged, the result of a
  step no longer depends on their number.
- validation.md: position-based models have no exact material law; a stiffer material gives a
  smaller deflection (monotone trend).
- docs/pbd.md: the direct length solve keeps the edge strain of a long rod below 1e-6 with
  10 substeps of one pass; a non-finite state raises SimulationDiverged naming the step and
  strand; PBDSettings and step() validate their inputs.
"""

import numpy as np
import pytest

import strandlab as sl
from strandlab.geometry.darboux import darboux_of
from strandlab.pbd import compile_scene
from strandlab.pbd.constraints import project_orientation
from strandlab.pbd.stiffness import alphas_from_stiffness
from strandlab.sim.shapes import helix, line


# ----------------------------------------------------------------------------- helpers
def _rod(n=10, length=0.5, E=1e7, radius=0.005, gravity=(0, 0, -9.81), clamp=True, **strand_kw):
    b = sl.SceneBuilder(gravity=gravity)
    mat = sl.Material(young_modulus=E, density=1000.0, radius=radius)
    s = b.add_strand(line((0, 0, 0), (length, 0, 0), n), material=mat, **strand_kw)
    if clamp:
        b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    return compile_scene(b.build())


def _project_element(m, x, k, alpha, rest=None):
    """One relaxed (alpha-form) projection of orientation element k of model m on positions x."""
    idx = np.ascontiguousarray(m.oe_idx)
    rest = np.ascontiguousarray(m.oe_rest_omega if rest is None else rest)
    n = len(idx)
    al = np.zeros((n, 3))
    al[k] = alpha
    y = x.copy()
    ret = project_orientation(
        y, np.ascontiguousarray(m.inv_mass), idx, k, np.eye(3)[None].copy(), 0, False, rest, k,
        m.oe_rest_length[k], al, np.zeros((n, 3)), False, np.zeros((n, 3)), 1.0)
    return y, ret


def _omega(m, x, k):
    return darboux_of(x[m.oe_idx[k]], m.oe_rest_length[k])


def _bent_helix_model():
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    mat = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)
    b.add_strand(helix(radius=0.05, pitch=0.04, turns=1, segments=12), material=mat)
    return compile_scene(b.build())


# ----------------------------------------------------------------------------- alpha form
def test_alpha_zero_leaves_omega_unchanged():
    # Reference: eq. (21): with alpha = 0 the goal is the current Omega, C = 0: no correction.
    m = _bent_helix_model()
    x = m.x0.copy()
    k = 4
    x[m.oe_idx[k, 4]] += [0.004, -0.003, 0.002]      # a large deviation from rest
    y, ret = _project_element(m, x, k, (0.0, 0.0, 0.0))
    assert ret > 1.0                                   # |Omega - Omega_rest| in 1/m
    assert np.array_equal(y, x)
    assert np.array_equal(_omega(m, y, k), _omega(m, x, k))


@pytest.mark.parametrize("direction", [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.3, -0.5, 0.8]])
def test_alpha_one_removes_a_small_deviation_quadratically(direction):
    # Reference: eq. (17) is one Newton step on C = Omega - Omega_rest (alpha = 1), so the
    # remaining deviation is O(deviation^2): a 10x smaller deviation leaves a ~100x smaller error.
    # One isolated element of a helix; the rest of the rod is not touched by this projection.
    m = _bent_helix_model()
    k = 5
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    res = []
    for eps in (1e-4, 1e-5, 1e-6):             # deviations ~0.1 to ~1e-3 1/m
        x = m.x0.copy()
        x[m.oe_idx[k, 4]] += eps * d                    # move the element's last vertex
        dev0 = np.linalg.norm(_omega(m, x, k) - m.oe_rest_omega[k])
        y, _ = _project_element(m, x, k, (1.0, 1.0, 1.0))
        dev1 = np.linalg.norm(_omega(m, y, k) - m.oe_rest_omega[k])
        res.append((dev0, dev1))
        assert dev1 < 1e-2 * dev0                       # almost all of it is removed
    for (a0, a1), (b0, b1) in zip(res, res[1:]):
        # quadratic: error / deviation^2 stays bounded (within a factor 3 either way)
        assert (b1 / b0 ** 2) / (a1 / a0 ** 2) == pytest.approx(1.0, rel=2.0)
        assert b1 / a1 < 0.03


def test_partial_alpha_removes_that_fraction_to_first_order():
    # Reference: eq. (21): each component moves the fraction alpha_i towards rest, to first order.
    m = _bent_helix_model()
    k = 5
    x = m.x0.copy()
    x[m.oe_idx[k, 4]] += 1e-5 * np.array([0.3, -0.5, 0.8])
    x[m.oe_idx[k, 5]] += 1e-5 * np.array([-0.2, 0.4, 0.1])
    alpha = np.array([0.25, 0.5, 0.75])
    dev0 = _omega(m, x, k) - m.oe_rest_omega[k]
    y, _ = _project_element(m, x, k, alpha)
    dev1 = _omega(m, y, k) - m.oe_rest_omega[k]
    assert np.allclose(dev1, (1 - alpha) * dev0, rtol=0, atol=1e-3 * np.max(np.abs(dev0)))


def test_alphas_from_stiffness_match_the_implicit_fraction():
    # Reference: stiffness.py / docs/pbd.md: n relaxed projections remove 1 - (1 - alpha)^n,
    # which equals f = K l h^2 w / (1 + K l h^2 w); alpha in [0, 1] and increasing with K.
    K = np.array([[1e-4, 1e-3, 1e-2], [1e-2, 1e-1, 1.0]])
    l = np.array([0.05, 0.05])
    w = np.array([[1e3, 1e3, 5e4], [1e3, 1e3, 5e4]])
    h, n = 1 / 60, 7
    a = alphas_from_stiffness(K, l, w, h, n)
    kk = K * l[:, None] * h * h * w
    assert np.allclose(1 - (1 - a) ** n, kk / (1 + kk), rtol=1e-12)
    assert np.all((a >= 0) & (a <= 1))
    assert np.all(np.diff(a, axis=1) > 0) and np.all(a[1] > a[0])


# ----------------------------------------------------------------------------- XPBD iterations
def test_xpbd_step_converges_with_iterations():
    # Reference: XPBD: the result of a step converges as the iterations grow, and is then
    # independent of them.  A stiff (E = 1 GPa) clamped 4-edge rod, one step of 1/60 s from rest
    # under gravity; converged reference: 1600 iterations.
    def step(iters):
        m = _rod(n=4, E=1e9)
        solver = sl.PBDSolver(m, sl.PBDSettings(stiffness="xpbd", iterations=iters))
        st = m.state()
        solver.step(st, st, 1 / 60)
        return st.x.copy()

    x = {it: step(it) for it in (5, 10, 50, 100, 1600)}
    early = np.max(np.abs(x[10] - x[5]))
    late = np.max(np.abs(x[100] - x[50]))
    assert early > 1e-5                                 # the early iterations still move a lot
    assert late < 0.1 * early                           # measured about 0.025
    assert np.max(np.abs(x[100] - x[1600])) < 1e-3 * np.max(np.abs(x[1600] - _rod(n=4, E=1e9).x0))


# ----------------------------------------------------------------------------- stiffness trend
@pytest.mark.parametrize("stiffness", ["alpha", "xpbd"])
def test_stiffer_material_gives_smaller_cantilever_deflection(stiffness):
    # Reference: validation.md (monotone trend: stiffer parameter, smaller deflection) and item 2
    # (self-weight cantilever delta = q L^4 / (8 E I): 0.12 m, 12 mm and 1.2 mm for E = 1e8, 1e9,
    # 1e10 with r = 5 mm, L = 0.5 m).  A position-based rod is softer than that at a finite
    # number of passes, so only the ordering is checked, with 20 % margins.
    tips = []
    for E in (1e7, 1e8, 1e9):
        m = _rod(n=10, E=E)
        solver = sl.PBDSolver(m, sl.PBDSettings(stiffness=stiffness, damping=5.0, iterations=5,
                                                substeps=10))
        st = m.state()
        for _ in range(90):
            solver.step(st, st, 1 / 60)
        tips.append(-st.x[m.n_vertices - 1, 2])
    assert tips[0] > 0.0
    assert tips[1] < 0.8 * tips[0] and tips[2] < 0.8 * tips[1], tips


# ----------------------------------------------------------------------------- edge lengths
def _max_strain_falling(length_solver, steps=60):
    m = _rod(n=50, length=1.0)
    solver = sl.PBDSolver(m, sl.PBDSettings(length_solver=length_solver, substeps=10, iterations=1,
                                            stiffness="alpha"))  # hard edges
    st = m.state()
    worst = 0.0
    lowest = 0.0
    for _ in range(steps):
        solver.step(st, st, 1 / 60)
        ln = np.linalg.norm(st.x[m.edge_p1] - st.x[m.edge_p0], axis=1)
        worst = max(worst, float(np.max(np.abs(ln / m.edge_rest_length - 1.0))))
        lowest = min(lowest, float(np.min(st.x[: m.n_vertices, 2])))
    assert lowest < -0.5                                # it did fall and swing down
    return worst


def test_direct_length_solver_keeps_edges_inextensible():
    # Reference: docs/pbd.md: the direct (tridiagonal) length solve stops when the largest
    # relative length error is below 1e-6; a 1 m, 50-edge rod clamped at one end swinging down
    # under gravity, 10 substeps of 1 pass, keeps max edge strain < 1e-6 at every step, while
    # Gauss-Seidel with the same budget stretches (tension has to cross 50 edges).
    direct = _max_strain_falling("direct")
    gs = _max_strain_falling("gauss-seidel")
    assert direct < 1e-6
    assert gs > 1e3 * direct and gs > 1e-3


# ----------------------------------------------------------------------------- divergence
def _three_strands():
    b = sl.SceneBuilder()
    mat = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)
    for k in range(3):
        s = b.add_strand(line((0, k, 0), (0.5, k, 0), 10), material=mat)
        b.attach_to_frame(s, b.add_frame((0, k, 0)), end=0)
    return compile_scene(b.build())


@pytest.mark.parametrize("where", ["vertex", "ghost", "velocity"])
def test_non_finite_state_raises_simulation_diverged_naming_step_and_strand(where):
    # Reference: docs/pbd.md "Divergence": a non-finite position or velocity raises
    # SimulationDiverged naming the step (1-based, the step being taken) and the strand.
    m = _three_strands()
    solver = sl.PBDSolver(m)
    st = m.state()
    solver.step(st, st, 1 / 60)
    if where == "vertex":
        st.x[m.strand_vertices(1).start + 4, 1] = np.nan
    elif where == "ghost":
        st.x[m.strand_ghosts(1).start + 2, 0] = np.nan
    else:
        st.v[m.strand_vertices(1).start + 6, 2] = np.inf
    with pytest.raises(sl.SimulationDiverged, match=r"step 2\b.*strand 1\b") as info:
        solver.step(st, st, 1 / 60)
    assert info.value.step == 2
    assert info.value.strand == 1
    assert m.point_strand[info.value.point] == 1


def test_divergence_check_with_separate_output_state():
    # Reference: as above, with step(state_in, state_out) writing into another state.
    m = _three_strands()
    solver = sl.PBDSolver(m)
    a = m.state()
    b = m.state()
    a.x[m.strand_vertices(2).start + 3, 2] = np.nan
    with pytest.raises(sl.SimulationDiverged, match=r"step 1\b.*strand 2\b"):
        solver.step(a, b, 1 / 60)


# ----------------------------------------------------------------------------- settings
@pytest.mark.parametrize("kwargs, field", [
    ({"iterations": 0}, "iterations"),
    ({"iterations": 2.5}, "iterations"),
    ({"substeps": 0}, "substeps"),
    ({"substeps": -3}, "substeps"),
    ({"order": "backwards"}, "order"),
    ({"gravity_mode": "half"}, "gravity_mode"),
    ({"stiffness": "stiff"}, "stiffness"),
    ({"length_solver": "cg"}, "length_solver"),
    ({"damping": -0.1}, "damping"),
    ({"damping": float("nan")}, "damping"),
    ({"damping": float("inf")}, "damping"),
])
def test_settings_reject_bad_values_naming_the_field(kwargs, field):
    # Reference: PBDSettings docstring (allowed values); errors name the offending field.
    with pytest.raises(ValueError, match=field):
        sl.PBDSettings(**kwargs)


def test_settings_accept_valid_values():
    # Reference: PBDSettings docstring.
    s = sl.PBDSettings(iterations=np.int64(3), substeps=2, order="random", gravity_mode="none",
                       stiffness="xpbd", length_solver="direct", damping=0.0)
    assert s.to_dict()["iterations"] == 3


@pytest.mark.parametrize("dt", [0.0, -1 / 60, float("nan"), float("inf"), "0.01", None])
def test_step_rejects_bad_dt(dt):
    # Reference: PBDSolver.step docstring: dt is a positive finite number of seconds.
    m = _three_strands()
    solver = sl.PBDSolver(m)
    st = m.state()
    with pytest.raises(ValueError, match="dt"):
        solver.step(st, st, dt)
    assert st.step == 0 and np.array_equal(st.x, m.x0)
