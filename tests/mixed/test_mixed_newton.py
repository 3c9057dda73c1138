"""The mixed solver's Newton settings: the residual scale, the round-off floor, the linear
solver methods (docs/mixed.md, Performance)."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import strandlab as sl
from strandlab.mixed import MixedSolver
from strandlab.mixed.solver import MixedSettings
from strandlab.mixed.system import vertex_contact_stiffness
from strandlab.scenes.mixed_strips import strip_mesh


def strip_scene():
    """Half solid, half shell, clamped, joined by a stiff curve connection (Fig. 18), coarse."""
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_simplicial_mesh(strip_mesh("solid_shell", nx=6, rows=2, nz=2))
    return b.build()


def test_roundoff_force_formula():
    sol = MixedSolver(strip_scene())
    m = sol.model
    s = sol.state()
    h = 0.004
    k = vertex_contact_stiffness(m, 1.0)
    mass = m.mass[: 3 * m.n_vertices].reshape(-1, 3)
    want = 4 * np.finfo(float).eps * np.abs(s.q[: 3 * m.n_vertices]).max() * np.sqrt(
        np.sum((k[:, None] + mass / h**2) ** 2))
    assert sol.roundoff_force(s.q, h) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("method", ["direct", "reuse"])
def test_steps_near_rest_converge_without_chasing_round_off(method):
    """Near equilibrium the first residual is tiny: relative to it the tolerance would fall
    below round-off and Newton would run to max_iterations (as it did before the scale)."""
    scene = strip_scene()
    sol = MixedSolver(scene, MixedSettings(linear_solver=method))
    s = sol.state()
    sol.equilibrium(s)
    q_eq = s.q.copy()
    for _ in range(4):
        sol.step(s, s, 0.005)
        info = sol.last_info
        assert info.converged and info.iterations <= 3, info
    # the state stays at the equilibrium to the tolerance (1e-6 of the weight's effect)
    assert np.abs(s.q - q_eq).max() < 1e-7


@pytest.mark.slow
def test_linear_solvers_agree():
    """The three methods give one trajectory, to the Newton tolerance."""
    out = {}
    for method in ("direct", "reuse", "jacobi"):
        sol = MixedSolver(strip_scene(), MixedSettings(linear_solver=method, tolerance=1e-9))
        s = sol.state()
        for _ in range(3):
            sol.step(s, s, 0.01)
        out[method] = s.q
    scale = np.abs(out["direct"] - strip_scene_q0()).max()
    for method in ("reuse", "jacobi"):
        assert np.abs(out[method] - out["direct"]).max() < 1e-5 * scale


def strip_scene_q0():
    return MixedSolver(strip_scene()).state().q


def test_settings_checks():
    with pytest.raises(ValueError, match="linear_solver"):
        MixedSettings(linear_solver="cholesky")
    st = MixedSettings()
    assert st.linear_solver == "auto" and st.solver_options() == {"method": "auto"}
    n = st.newton(1e-9)
    assert n.scale == "load" and n.initial_guess == "inertial" and n.atol == 1e-9
    assert dataclasses.replace(st, tolerance=None).newton().tolerance is None


def test_a_step_kept_unconverged_is_counted_and_warned():
    """A step whose Newton solve stops above its tolerance is kept, counted and reported with
    NotConvergedWarning naming the step, the residual and why; converged steps are silent."""
    import warnings

    from strandlab.implicit import NotConvergedWarning

    scene = strip_scene()
    sol = MixedSolver(scene, MixedSettings(max_iterations=1, cutbacks=0))
    s = sol.state()
    with pytest.warns(NotConvergedWarning, match=r"step 1 \(t = 0.01 s\) kept unconverged: "
                                                 r"Newton residual .* after 1 iterations, "
                                                 r"max_iterations = 1 reached"):
        sol.step(s, s, 0.01)
    assert sol.unconverged_steps == 1 and sol.last_info.converged is False
    sol = MixedSolver(scene)
    s = sol.state()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotConvergedWarning)
        for _ in range(3):
            sol.step(s, s, 0.01)
    assert sol.unconverged_steps == 0 and sol.last_info.converged


def test_an_unconverged_step_is_taken_again_as_two_half_steps():
    """With ``cutbacks`` a step that ends above its tolerance is taken again from its start as
    two half steps: the state is that of two half steps taken from the start, bit for bit, and
    nothing is warned; at the deepest halving a step is kept and warned."""
    import warnings

    from strandlab.implicit import NotConvergedWarning

    scene = strip_scene()
    # a step of 10 ms needs 3 iterations, 5 ms 2; a new factorisation at each (the methods
    # that keep one, "reuse" and "direct_cg", carry the failed step's into the retry)
    st = MixedSettings(max_iterations=2, linear_solver="direct")
    assert st.cutbacks == 2
    sol = MixedSolver(scene, st)
    s = sol.state()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotConvergedWarning)
        sol.step(s, s, 0.01)
    assert sol.cutbacks_taken == 1 and sol.unconverged_steps == 0
    assert s.step == 1 and s.time == pytest.approx(0.01) and s.h_prev == 0.005
    ref = MixedSolver(scene, dataclasses.replace(st, cutbacks=0))
    r = ref.state()
    for _ in range(2):
        ref.step(r, r, 0.005)
    assert ref.unconverged_steps == 0
    for k in ("q", "v", "a1", "ref_twist", "joint_angle", "q_prev", "v_prev"):
        np.testing.assert_array_equal(getattr(s, k), getattr(r, k), err_msg=k)
    # one iteration never converges: 10 ms, 5 ms and 2.5 ms tried; the quarters kept, warned
    sol = MixedSolver(scene, dataclasses.replace(st, max_iterations=1))
    s = sol.state()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol.step(s, s, 0.01)
    assert sol.cutbacks_taken == 3 and sol.unconverged_steps == 4
    times = [re.search(r"\(t = ([0-9.]+) s\) kept unconverged", str(w.message)).group(1)
             for w in caught if w.category is NotConvergedWarning]
    assert times == ["0.0025", "0.005", "0.0075", "0.01"]
    assert {w.filename for w in caught} == {__file__}     # the caller of step() is named
    assert s.time == pytest.approx(0.01) and s.h_prev == 0.0025


@pytest.mark.parametrize("bad", [-1, 9, 1.5, True, "2"])
def test_cutbacks_out_of_range_are_refused(bad):
    with pytest.raises(ValueError, match="cutbacks must be an integer from 0 to 8"):
        MixedSettings(cutbacks=bad)
