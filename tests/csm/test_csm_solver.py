"""The csm solver behind the shared protocol: settings, bad input named, checkpoints that
restart bit for bit (tears and seeded rupture stresses included), tears in the output and in
trajectories, scene files and the command line."""
import dataclasses

import numpy as np
import pytest
from csm_helpers import MAT, solver_for

import strandlab as sl
from strandlab.csm import CSMSettings, CSMSolver
from strandlab.io.checkpoint import load_state, save_state
from strandlab.io.trajectory import load_trajectory
from strandlab.scenes import get_scene
from strandlab.sim.runner import simulate
from strandlab.sim.scene import UnsupportedFeature
from strandlab.sim.shapes import line
from strandlab.sim.solver import make_settings

LINE = line((0, 0, 0), (0.2, 0, 0), 10)


def test_registered_and_settings_checked_by_name():
    assert sl.get_solver("csm") is CSMSolver
    assert make_settings("csm", {"alpha": 0.5}).alpha == 0.5
    for bad, match in (({"alpha": 0.0}, "alpha"), ({"alpha": 1.5}, "alpha"),
                       ({"iterations": 0}, "iterations"), ({"tension": "x"}, "tension"),
                       ({"length_solver": "cg"}, "length_solver"),
                       ({"damping": -1.0}, "damping"), ({"flicking": 1}, "flicking"),
                       ({"contact_weight": 0.5}, "contact_weight")):
        with pytest.raises(ValueError, match=match):
            make_settings("csm", bad)
    with pytest.raises(ValueError, match="no setting 'newton_iterations'"):
        make_settings("csm", {"newton_iterations": 2})


@pytest.mark.parametrize("options,match", [
    ({"half_width": 0}, "'half_width' = 0 is below 1"),
    ({"half_width": 11}, "'half_width' = 11 is longer than the string"),
    ({"twist_half_width": [1] * 9}, "'twist_half_width' has 9 values"),
    ({"twist_half_width": [1] * 9 + [0]}, r"'twist_half_width' \(segment 9\) = 0 is below 1"),
    ({"rupture_stress": 1e6, "yield_stress": 2e6}, "'rupture_stress'.*is below 'yield_stress'"),
    ({"yield_stress": -1.0}, "'yield_stress' must be positive"),
    ({"plastic_modulus": 0.0}, "'plastic_modulus' must be positive"),
    ({"twist_stiffness": float("nan")}, "'twist_stiffness' must be positive"),
    ({"twist_stiffness": float("inf")}, "'twist_stiffness' must be finite"),
    ({"twist_stiffness": 0.0}, "'twist_stiffness' must be positive"),
    ({"half_width": "wide"}, "'half_width' must be an integer, got 'wide'"),
    ({"half_width": 2.5}, "'half_width' must be an integer"),
    ({"rupture_stress": 0.0}, "'rupture_stress' must be positive"),
    ({"rupture_stress": -1e6}, "'rupture_stress' must be positive"),
    ({"rupture_stress": "strong"}, "'rupture_stress' must be a number"),
    ({"young_stress": 1.0}, "unknown csm option 'young_stress'"),
    ({"rupture_variation": -0.1}, "'rupture_variation' must be in"),
    ({"rupture_variation": float("nan")}, "'rupture_variation' must be in"),
    ({"plastic_modulus": 2e8}, "'plastic_modulus'.*must be below Young's modulus"),
    ({"rupture_variation": 1.0}, "'rupture_variation' must be in"),
    ({"stiffness": 1.0}, "unknown csm option 'stiffness'"),
])
def test_bad_strand_options_are_named(options, match):
    with pytest.raises(ValueError, match=f"strand 0.*{match}"):
        solver_for(LINE, options=options)


def test_non_finite_input_is_named():
    pts = LINE.copy()
    pts[4, 1] = np.nan
    with pytest.raises(ValueError, match="point 4 is not finite"):
        solver_for(pts)
    with pytest.raises(ValueError, match="rest_points: point 3 is not finite"):
        solver_for(LINE, rest_points=np.where(np.arange(11)[:, None] == 3, np.inf, LINE))
    with pytest.raises(ValueError, match="strand 0: velocities must be finite"):
        solver_for(LINE, velocities=np.where(np.arange(11)[:, None] == 3, np.inf, 0 * LINE))


def test_non_positive_material_values_are_named():
    for kw, match in (({"young_modulus": 0.0}, "young_modulus must be a positive"),
                      ({"density": -1.0}, "density must be a positive"),
                      ({"radius": 0.0}, "radius must be a positive")):
        args = {"young_modulus": 1e8, "density": 1100.0, "radius": 0.002, **kw}
        with pytest.raises(ValueError, match=match):
            solver_for(LINE, material=sl.Material(**args))
    with pytest.raises(ValueError, match="radius of vertex 3 must be positive"):
        solver_for(LINE, radius=np.where(np.arange(11) == 3, 0.0, 0.002))
    with pytest.raises(ValueError, match="points 4 and 5 coincide"):
        solver_for(np.r_[LINE[:5], LINE[4:5], LINE[5:]])
    sol = solver_for(LINE)
    saved = sol.save_state(sol.state())
    saved["x"][3, 0] = np.inf
    with pytest.raises(ValueError, match="'x' is not finite"):
        sol.load_state(saved)


def test_unsupported_parts_are_named():
    b = sl.SceneBuilder()
    b.add_strand(np.r_[LINE, [[0.1, 0.1, 0.0]]], material=MAT, closed=True)
    with pytest.raises(UnsupportedFeature, match="no closed strands"):
        CSMSolver(b.build())
    b = sl.SceneBuilder()
    s = b.add_strand(LINE, material=MAT)
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), slide_axis=(1, 0, 0))
    with pytest.raises(UnsupportedFeature, match="slide"):
        CSMSolver(b.build())


def test_material_maps_to_masses_and_twisting_stiffness():
    sol = solver_for(LINE)
    m = sol.model.arrays
    assert m.mass.sum() == pytest.approx(MAT.density * MAT.area * 0.2, rel=1e-12)
    assert m.twist_stiffness[3] == pytest.approx(MAT.shear * MAT.torsion_constant)
    assert np.all(m.young == MAT.young_modulus)


def test_checkpoint_restarts_bit_for_bit_through_tears(tmp_path):
    sim = get_scene("csm_tearing", frames=40)
    solver = sim.make_solver()
    a = solver.state()
    for _ in range(30):
        solver.step(a, a, sim.dt)
    p = save_state(tmp_path / "ck", solver, a)
    b = load_state(p, solver)
    for _ in range(15):
        solver.step(a, a, sim.dt)
        solver.step(b, b, sim.dt)
    assert np.any(a.arrays.torn)                      # it tore after the checkpoint
    for k in a.arrays._fields:
        assert np.array_equal(getattr(a.arrays, k), getattr(b.arrays, k)), k
    assert a.n_chains == b.n_chains > 5
    assert a.step == b.step and a.time == b.time


def test_rupture_stresses_are_seeded_and_varied():
    opts = {"rupture_stress": 1e6, "rupture_variation": 0.01}
    r0 = solver_for(LINE, options=opts).state().arrays.rupture
    r1 = solver_for(LINE, options=opts).state().arrays.rupture
    r2 = solver_for(LINE, options=opts, settings=CSMSettings(seed=3)).state().arrays.rupture
    assert np.array_equal(r0, r1) and not np.array_equal(r0, r2)
    assert np.all(np.abs(r0 / 1e6 - 1) <= 0.01) and np.ptp(r0) > 1e-3 * 1e6


def test_tears_are_recorded_in_trajectories(tmp_path):
    sim = get_scene("csm_tearing", frames=40)
    traj = simulate(sim, out=tmp_path / "t.h5")
    assert traj.edge_broken is not None and traj.edge_broken.shape == (41, 300)
    assert not traj.edge_broken[0].any() and traj.edge_broken[-1].any()
    pieces = traj.pieces(-1)
    assert len(pieces) - 1 == 5 + int(traj.edge_broken[-1].sum())
    mem = simulate(sim)
    assert np.array_equal(mem.edge_broken, traj.edge_broken)
    again = load_trajectory(tmp_path / "t.h5").load()
    assert np.array_equal(again.edge_broken, traj.edge_broken)


def test_state_out_may_differ_from_state_in():
    sol = solver_for(LINE, gravity=(0, 0, -9.81), clamp=(0,))
    a = sol.state()
    b = sol.state()
    sol.step(a, b, 0.01)
    c = sol.state()
    sol.step(c, c, 0.01)
    assert np.array_equal(b.x, c.x) and np.array_equal(a.x, sol.model.x0)


def test_plastic_elongation_keeps_the_volume():
    # a thread pulled past its yield stress is longer and thinner when let go; its volume
    # A L stays
    # 20 N on a 2 mm thread: 1.6 MPa, past the yield stress of 1 MPa
    opts = {"yield_stress": 1e6, "plastic_modulus": 1e7}
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    pts = line((0, 0, 0), (0, 0, -0.3), 30)
    s = b.add_strand(pts, material=MAT, radius=np.r_[np.full(28, 0.002), [0.02] * 3],
                     options={"csm": opts})
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    b.add_load(s, 30, lambda t: np.array([0.0, 0.0, -20.0 if t < 0.3 else 0.0]))
    sol = CSMSolver(b.build(), CSMSettings(substeps=8, iterations=12, flicking=False))
    st = sol.state()
    for _ in range(60):
        sol.step(st, st, 0.01)
    eps = st.arrays.plastic_strain[1:27]
    # the bilinear curve: eps_p = (sigma - sigma_y) (1 / E_p - 1 / E) at the largest stress
    sigma = 20.0 * (1 + eps) / (np.pi * 0.002 ** 2)
    assert np.allclose(eps, (sigma - 1e6) * (1 / 1e7 - 1 / 1e8), rtol=0.02)
    length = np.linalg.norm(np.diff(st.x[1:28], axis=0), axis=1)
    assert np.allclose(length, 0.01 * (1 + eps), rtol=2e-3)   # at its new length, unloaded
    assert np.all(st.arrays.tension[1:27] < 0.05 * 20.0)
    # thinner: the section A0 / (1 + eps_p) keeps the volume A L
    area = sol.model.arrays.area0[1:27] / (1 + eps)
    assert np.allclose(area * length, sol.model.arrays.area0[1:27] * 0.01, rtol=2e-3)


def test_contact_hook_runs_between_integration_and_shape_matching():
    sol = solver_for(LINE, gravity=(0, 0, -9.81), clamp=(0,))
    seen = []

    def hook(solver, x, weight):
        seen.append((x[-1, 2], weight.copy()))
        weight[-3:] = solver.settings.contact_weight

    sol.contact_hook = hook
    st = sol.state()
    sol.step(st, st, 0.01)
    z_pred, w = seen[0]
    assert z_pred == pytest.approx(-9.81 * 0.01 ** 2)      # the unconstrained position
    assert np.all(w == 1.0)
    assert np.all(sol.scratch.sm_mass[-3:] == 3.0 * sol.model.arrays.mass[-3:])


def test_scene_file_and_cli_run_csm(tmp_path, capsys):
    from strandlab.cli import main

    f = tmp_path / "s.toml"
    f.write_text("""
[scene]
frames = 5
[solver]
type = "csm"
alpha = 0.8
[materials.nylon]
young_modulus = 3e9
density = 1150.0
radius = 0.001
[[strands]]
material = "nylon"
line = {start = [0, 0, 0], end = [0.3, 0, 0], segments = 15}
csm = {half_width = 3, rupture_stress = 5e7}
""")
    from strandlab.io.scenefile import load_scene_file

    sim = load_scene_file(f)
    assert sim.solver == "csm" and sim.settings.alpha == 0.8
    assert dict(sim.scene.strands[0].options["csm"]) == {"half_width": 3,
                                                          "rupture_stress": 5e7}
    assert main(["run", str(f), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert main(["run", "csm_twist_loop", "--frames", "2", "--out", str(tmp_path / "p"),
                 "--quiet"]) == 0
    assert main(["run", str(f), "--solver", "pbd", "--out", str(tmp_path / "q"),
                 "--quiet"]) == 0
    bad = f.read_text().replace("alpha = 0.8", "alpha = 2.0")
    f.write_text(bad)
    assert main(["run", str(f), "--out", str(tmp_path / "r"), "--quiet"]) != 0
    assert "alpha must be a number > 0 and <= 1, got 2.0" in capsys.readouterr().err
    assert dataclasses.asdict(CSMSettings())["length_solver"] == "newton"
