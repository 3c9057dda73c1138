"""Checkpoints of every registered solver: a run resumed from a checkpoint gives the frames of
the uninterrupted run bit for bit, and its own checkpoints equal the uninterrupted run's."""
from dataclasses import replace

import numpy as np
import pytest

import strandlab as sl
from strandlab.sim.runner import Simulation, simulate
from strandlab.sim.scene import UnsupportedFeature
from strandlab.sim.shapes import line
from strandlab.sim.solver import make_solver, solver_names

MAT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005)
#: Settings that make a solver draw random numbers, where it can.
RANDOM_SETTINGS = {"pbd": {"order": "random", "seed": 7}}


def _turning_clamp_with_floor():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    s = b.add_strand(line((0, 0, 0.05), (0.3, 0, 0.05), 8), material=MAT)
    b.attach_to_frame(s, b.add_frame((0, 0, 0.05), angular_velocity=(2.0, 0, 0)), end=0)
    b.add_plane((0, 0, 0), (0, 0, 1), friction=0.3)
    return b.build()


def _fixed_clamp():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    s = b.add_strand(line((0, 0, 0), (0.3, 0, 0), 8), material=MAT)
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    return b.build()


def _free_strand():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_strand(line((0, 0, 0), (0.3, 0, 0), 8), material=MAT,
                 velocities=(0.0, 0.2, 0.5))
    return b.build()


def _rod_and_cloth():
    """A labelled mesh: a rod clamped by a turning frame, point-connected to a cloth
    triangle, over a floor (the models of rods, shells and solids)."""
    from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder
    x = np.array([[0, 0, 0.05], [0.05, 0, 0.05], [0.1, 0, 0.05], [0.15, 0.03, 0.05],
                  [0.15, -0.03, 0.05]])
    mb = SimplicialBuilder(x, name="flag")
    rod = mb.add_rods([[0, 1], [1, 2]], material=MAT)
    cloth = mb.add_shells([[2, 4, 3]], material=ShellMaterial(1e6, 0.3, 1e-3, 300.0))
    mb.connect(rod, cloth, kind="point", twist_stiffness=1e-3, bend_stiffness=1e-3)
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mb.hold([0, 1], frame=b.add_frame((0, 0, 0.05), angular_velocity=(2.0, 0, 0)))
    b.add_simplicial_mesh(mb.build())
    b.add_plane((0, 0, 0), (0, 0, 1), friction=0.3)
    return b.build()


#: Tiny scenes, richest first: each solver runs the first it can express.
CANDIDATES = (_turning_clamp_with_floor, _fixed_clamp, _free_strand, _rod_and_cloth)


def _simulation(name):
    settings = RANDOM_SETTINGS.get(name)
    for build in CANDIDATES:
        scene = build()
        try:
            make_solver(scene, name, settings)
        except UnsupportedFeature:
            continue
        return Simulation(name=f"tiny_{name}", scene=scene, solver=name, settings=settings,
                          dt=1 / 100, frames=6, steps_per_frame=2)
    pytest.fail(f"solver {name!r} runs none of the tiny checkpoint scenes "
                f"({', '.join(c.__name__ for c in CANDIDATES)}): add one it can express")


@pytest.mark.parametrize("name", solver_names())
def test_resumed_run_matches_the_uninterrupted_run_bit_for_bit(tmp_path, name):
    sim = _simulation(name)
    full = simulate(sim, checkpoint_every=2, checkpoint_dir=tmp_path / "full")
    assert sorted(p.name for p in (tmp_path / "full").iterdir()) == [
        "frame_000002.npz", "frame_000004.npz", "frame_000006.npz"]
    assert not (np.array_equal(full.positions[2], full.positions[6])    # it moves
                and np.array_equal(full.extra_points[2], full.extra_points[6]))
    res = simulate(sim, resume=tmp_path / "full" / "frame_000002.npz",
                   checkpoint_every=2, checkpoint_dir=tmp_path / "res")
    assert res.metadata["resumed_from"]["frame"] == 2
    assert np.array_equal(res.times, full.times[2:])
    for field in ("positions", "d1", "extra_points"):
        assert np.array_equal(getattr(res, field), getattr(full, field)[2:]), field
    for f in ("frame_000004.npz", "frame_000006.npz"):
        with np.load(tmp_path / "full" / f) as a, np.load(tmp_path / "res" / f) as b:
            keys = [k for k in a.files if k.startswith("state__")]
            assert keys and sorted(keys) == sorted(k for k in b.files if k.startswith("state__"))
            for k in keys:
                assert np.array_equal(a[k], b[k], equal_nan=True), (f, k)


def test_resume_refuses_another_time_step_or_a_frame_past_the_run(tmp_path):
    sim = _simulation("pbd")
    simulate(sim, checkpoint_every=3, checkpoint_dir=tmp_path)
    ck = tmp_path / "frame_000006.npz"
    with pytest.raises(ValueError, match="steps_per_frame = 2; this run has 1"):
        simulate(replace(sim, steps_per_frame=1), resume=ck)
    with pytest.raises(ValueError, match="dt = 0.01; this run has 0.02"):
        simulate(sim.with_overrides(dt=0.02), resume=ck)
    with pytest.raises(ValueError, match="at frame 6, past this run's 4 frames"):
        simulate(sim.with_overrides(frames=4), resume=ck)
    with pytest.raises(ValueError, match="setting iterations = 10; this run has 3"):
        simulate(sim.with_overrides(iterations=3), resume=ck)
    with pytest.raises(ValueError, match="checkpoint_every must be an integer >= 1"):
        simulate(sim, checkpoint_every=0, checkpoint_dir=tmp_path)
