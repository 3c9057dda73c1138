"""The DER solver through the solver protocol: states, outputs, restart, boundary conditions,
loads, contacts and divergence."""
import math

import numpy as np
import pytest

import strandlab as sl
from strandlab.der import DERSettings, DERSolver
from strandlab.geometry.writhe import writhe
from strandlab.sim.shapes import line
from strandlab.sim.solver import Solver, get_solver, make_solver
from strandlab.sim.validate import SimulationDiverged

MAT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005, shear_modulus=1e6 / 3)


def _cantilever(n=10, gravity=(0, 0, -9.81), **kw):
    b = sl.SceneBuilder(gravity=gravity)
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), n), material=MAT, **kw)
    b.attach_to_frame(s, b.add_frame(), end=0)
    return b


def test_registered_and_conforms_to_the_protocol():
    assert get_solver("der") is DERSolver
    sol = make_solver(_cantilever().build(), "der", {"newton_iterations": 2})
    assert isinstance(sol, Solver)
    assert sol.settings.newton_iterations == 2
    with pytest.raises(ValueError, match="solver 'der' has no setting 'iterations'"):
        make_solver(_cantilever().build(), "der", {"iterations": 3})
    with pytest.raises(ValueError, match="linear_solver"):
        DERSettings(linear_solver="lu")


def test_rest_shape_stays_at_rest():
    # validation.md item 10: a rod started from its rest shape with zero velocity stays at rest
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    t = np.linspace(0, 4 * np.pi, 40)
    helix = np.stack([0.1 * np.cos(t), 0.1 * np.sin(t), 0.02 * t], axis=1)
    b.add_strand(helix, material=MAT)
    sol = DERSolver(b.build())
    st = sol.state()
    x0 = sol.output(st).positions.copy()
    for _ in range(20):
        sol.step(st, st, 1e-3)
    assert np.abs(sol.output(st).positions - x0).max() < 1e-12
    assert np.abs(st.v).max() < 1e-9


def test_free_fall_is_backward_euler_exact():
    # a free rod under gravity: internal forces vanish, each coordinate follows
    # x_{n+1} = x_n + h v_n + h^2 g (backward Euler with constant force)
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_strand(line((0, 0, 0), (1, 0, 0), 8), material=MAT)
    sol = DERSolver(b.build())
    st = sol.state()
    h, n = 0.01, 10
    for _ in range(n):
        sol.step(st, st, h)
    z = sol.output(st).positions[:, 2]
    expected = -9.81 * h * h * n * (n + 1) / 2
    np.testing.assert_allclose(z, expected, rtol=1e-9)
    assert st.step == n and math.isclose(st.time, n * h)


def test_save_and_load_restore_the_run_exactly():
    sol = DERSolver(_cantilever().build())
    st = sol.state()
    for _ in range(5):
        sol.step(st, st, 1e-3)
    saved = sol.save_state(st)
    for _ in range(5):
        sol.step(st, st, 1e-3)
    st2 = sol.load_state(saved)
    for _ in range(5):
        sol.step(st2, st2, 1e-3)
    np.testing.assert_array_equal(st.q, st2.q)
    np.testing.assert_array_equal(st.a1, st2.a1)
    bad = dict(saved, q=saved["q"][:-1])
    with pytest.raises(ValueError, match="'q' has shape"):
        sol.load_state(bad)
    bad = dict(saved, ref_twist=np.full_like(saved["ref_twist"], np.nan))
    with pytest.raises(ValueError, match="'ref_twist' is not finite"):
        sol.load_state(bad)


def test_output_d1_is_unit_and_perpendicular():
    sol = DERSolver(_cantilever().build())
    st = sol.state()
    for _ in range(10):
        sol.step(st, st, 5e-3)
    out = sol.output(st)
    e = np.diff(out.positions, axis=0)
    np.testing.assert_allclose(np.linalg.norm(out.d1, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.einsum("ij,ij->i", out.d1, e), 0.0, atol=1e-12)
    assert out.extra.shape == (3, 3)


def test_clamped_end_turned_by_its_frame_twists_the_rod():
    # a straight rod clamped at both ends, one end turned by a quarter turn about the rod's
    # axis: at equilibrium the twist is uniform, theta_e grows linearly to pi/2 (validation.md
    # item 7: angle = M L / C)
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), 10), material=MAT)
    b.attach_to_frame(s, b.add_frame(), end=0)
    spin = b.add_frame(origin=(1, 0, 0), angular_velocity=(np.pi / 2, 0, 0))
    b.attach_to_frame(s, spin, end=-1)
    sol = DERSolver(b.build(), DERSettings(damping=20.0))
    st = sol.state()
    for _ in range(100):          # one second of turning: a quarter turn
        sol.step(st, st, 1e-2)
    m = sol.model
    theta = st.q[m.edge_dof]
    np.testing.assert_allclose(theta[-1] - theta[0], np.pi / 2, atol=1e-9)


def test_point_load_on_the_tip_matches_the_elastica_to_second_order():
    # Reference: large-deflection elastica under a tip load (strandlab.reference, solved with
    # solve_bvp), F L^2 / EI = 2.04: tip drop 0.4987 m.  The clamp holds the first edge; its
    # midpoint is the beam's root, and the error then falls as 1 / n^2.
    from strandlab.reference import elastica_cantilever

    ei = 1e6 * np.pi * 0.005 ** 4 / 4
    ref = elastica_cantilever(1.0, ei, F_tip=1e-3).tip_drop
    errs = []
    for n in (10, 20):
        x = np.linspace(-0.5 / n, 1.0, n + 1)
        b = sl.SceneBuilder(gravity=(0, 0, 0))
        s = b.add_strand(np.stack([x, 0 * x, 0 * x], axis=1), material=MAT)
        b.attach_to_frame(s, b.add_frame(), end=0)
        b.add_load(s, -1, (0, 0, -1e-3))
        sol = DERSolver(b.build())
        st = sol.state()
        info = sol.equilibrium(st)
        assert info.converged
        errs.append(abs(-sol.output(st).positions[-1, 2] - ref) / ref)
    assert errs[1] < 0.005
    assert 3.0 < errs[0] / errs[1] < 5.0     # second order


def test_rope_rests_on_a_plane():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_strand(line((0, 0, 0.05), (1, 0, 0.05), 20), material=MAT)
    b.add_plane(point=(0, 0, 0), normal=(0, 0, 1), friction=0.5)
    sol = DERSolver(b.build())
    st = sol.state()
    for _ in range(100):
        sol.step(st, st, 5e-3)
    z = sol.output(st).positions[:, 2]
    # on its radius, less the compliance of the contact penalty (k = EA / l per edge at a
    # vertex, against the weight rho A l g at a vertex): rho g l^2 / (2 E) = 12 um of 5 mm
    sink = 1000.0 * 9.81 * (1 / 20) ** 2 / (2 * 1e6)
    np.testing.assert_allclose(z, 0.005 - sink, rtol=1e-9)


def test_divergence_is_reported_with_step_and_strand():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_strand(line((0, 0, 0), (1, 0, 0), 5), material=MAT)
    b.add_strand(line((0, 1, 0), (1, 1, 0), 5), material=MAT, velocities=np.tile([0, 0, 5e3],
                                                                                 (6, 1)))
    sol = DERSolver(b.build())
    st = sol.state()
    with pytest.raises(SimulationDiverged, match=r"step 1 .*speed 5e\+03 m/s.*of strand 1"):
        sol.step(st, st, 1e-3)


def test_writhe_of_a_helix_survives_a_step():
    # the material frames follow the centreline: a relaxed helix keeps its writhe
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    t = np.linspace(0, 6 * np.pi, 80)
    helix = np.stack([0.05 * np.cos(t), 0.05 * np.sin(t), 0.01 * t], axis=1)
    b.add_strand(helix, material=MAT)
    sol = DERSolver(b.build())
    st = sol.state()
    w0 = writhe(sol.output(st).positions)
    for _ in range(10):
        sol.step(st, st, 1e-3)
    assert abs(writhe(sol.output(st).positions) - w0) < 1e-9


def test_a_folded_strand_is_reported_by_name_not_as_nan():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_strand(line((0, 0, 0), (1, 0, 0), 4), material=MAT, name="good")
    b.add_strand(line((0, 1, 0), (1, 1, 0), 4), material=MAT, name="bad")
    sol = DERSolver(b.build())
    st = sol.state()
    m = sol.model
    d5, d7 = m.vertex_dof[5], m.vertex_dof[7]
    st.q[d7:d7 + 3] = st.q[d5:d5 + 3] + [0.1, 0.0, 0.0]   # edges 5-6 and 6-7 antiparallel
    with pytest.raises(SimulationDiverged, match=r"step 1 .*implicit step of bad failed.*"
                                                 r"stencil 3.*\(strand 1\)$"):
        sol.step(st, st, 1e-3)


def test_a_step_kept_above_its_tolerance_is_warned_and_counted():
    import warnings

    from strandlab.implicit import NotConvergedWarning

    sim_scene = _cantilever().build()
    tight = DERSolver(sim_scene, DERSettings(tolerance=1e-14, max_iterations=1))
    st = tight.state()
    with pytest.warns(NotConvergedWarning,
                      match=r"der solver: step 1 \(t = 0\.01 s\) kept unconverged: Newton "
                            r"residual .* after 1 iterations, max_iterations = 1 reached") as rec:
        tight.step(st, st, 0.01)
    assert rec[0].filename == __file__           # located at the caller of step()
    assert tight.unconverged_steps == 1 and tight.last_info.converged is False
    for settings in (DERSettings(tolerance=1e-6), DERSettings()):   # converged; fixed count
        sol = DERSolver(sim_scene, settings)
        st = sol.state()
        with warnings.catch_warnings():
            warnings.simplefilter("error", NotConvergedWarning)
            for _ in range(3):
                sol.step(st, st, 0.01)
        assert sol.unconverged_steps == 0
