"""The live simulation behind ``strandlab run --live``: parameters changed between steps for every
solver (gravity, settings, stiffness), pause and step in the stepping thread, vertex dragging,
divergence recovery."""
import time

import numpy as np
import pytest

import strandlab as sl
from strandlab.pbd.solver import PBDSettings
from strandlab.render.live import (
    LiveSimulation,
    drag_force,
    parse_setting,
    settings_fields,
    vertex_masses,
)
from strandlab.sim.runner import Simulation
from strandlab.sim.shapes import line

DT = 1.0 / 60.0
ROPE = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)


def rope_sim(solver="pbd", *, clamp=False, n=8, material=ROPE, ball=False):
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    s = b.add_strand(line((0, 0, 1), (0.35, 0, 1), n), material=material)
    if clamp or ball:
        b.attach_to_frame(s, b.add_frame((0, 0, 1)), end=0, orientation=not ball)
    return Simulation(name="rope", scene=b.build(), solver=solver, dt=DT)


def mean_z(live):
    return float(np.mean(live.snapshot().positions[:, 2]))


def accel(z):
    """Vertical acceleration [m/s^2] from three positions one step apart."""
    return (z[2] - 2.0 * z[1] + z[0]) / DT ** 2


@pytest.mark.parametrize("solver", ["pbd", "der", "csm"])
def test_gravity_set_to_zero_between_steps_stops_the_fall(solver):
    live = LiveSimulation(rope_sim(solver), realtime=False)
    z = [mean_z(live)]
    for _ in range(3):
        live.advance(1)
        z.append(mean_z(live))
    assert accel(z[1:4]) == pytest.approx(-9.81, rel=0.02)
    before = live.solver
    live.set_gravity((0.0, 0.0, 0.0))
    for _ in range(3):
        live.advance(1)
        z.append(mean_z(live))
    assert live.solver is not before                  # rebuilt with the new scene
    assert live.steps == 6 and live.time == pytest.approx(6 * DT)
    assert abs(accel(z[4:7])) < 0.05                  # falling at constant speed
    assert (z[6] - z[5]) / DT == pytest.approx(-3 * 9.81 * DT, rel=0.01)   # the speed of step 3


def test_settings_change_keeps_the_state_and_refuses_bad_values():
    live = LiveSimulation(rope_sim(clamp=True), realtime=False)
    live.advance(5)
    before = live.snapshot().positions.copy()
    live.set_setting("iterations", 3)
    live.set_setting("damping", 2.0)                  # both queued, one rebuild
    live._apply_pending()
    assert live.solver.settings.iterations == 3 and live.solver.settings.damping == 2.0
    assert np.array_equal(live.solver.output(live.state).positions, before)
    assert live.steps == 5
    with pytest.raises(ValueError, match="iterations"):
        live.set_setting("iterations", 0)
    with pytest.raises(ValueError, match="no setting 'colour'"):
        live.set_setting("colour", 1)


def test_stiffness_scale_softens_the_cantilever():
    drops = []
    stiff = sl.Material(young_modulus=1e9, density=1000.0, radius=0.005)
    for scale in (1.0, 1e-3):
        live = LiveSimulation(rope_sim(clamp=True, material=stiff), realtime=False)
        live.set_stiffness_scale(scale)
        assert live.advance(30) == 30, live.message
        drops.append(1.0 - live.snapshot().positions[-1, 2])
    assert drops[1] > 2.0 * drops[0] > 0
    with pytest.raises(ValueError, match="stiffness scale"):
        live.set_stiffness_scale(0.0)


def test_dragged_vertex_follows_the_target_and_swings_off_when_released():
    # a rope on a ball joint without gravity: nothing resists turning it onto the target
    live = LiveSimulation(rope_sim("der", ball=True, n=12), realtime=False)
    live.set_gravity((0.0, 0.0, 0.0))
    turn = np.radians(20.0)
    target = np.array([0.35 * np.cos(turn), 0.35 * np.sin(turn), 1.0])
    live.grab(12)
    live.drag(target)
    gaps = []
    for _ in range(6):
        live.advance(20)
        gaps.append(np.linalg.norm(live.snapshot().positions[12] - target))
    assert gaps[0] > 0.01 and gaps[-1] < 0.005
    # under gravity: lifted 5 cm, it holds (the strand's weight pulls it a little below)
    live = LiveSimulation(rope_sim(clamp=True, n=12), realtime=False)
    live.advance(60)
    tip = live.snapshot().positions[12].copy()
    live.grab(12)
    live.drag(tip + [0.0, 0.0, 0.05])
    live.advance(60)
    lifted = live.snapshot().positions[12]
    assert lifted[2] > tip[2] + 0.02
    live.release()                                    # no more pull: it swings off
    assert np.array_equal(live._drag_load(0.0), np.zeros(3))
    live.advance(30)
    assert abs(live.snapshot().positions[12, 2] - lifted[2]) > 0.02
    with pytest.raises(ValueError, match="vertex must be an index in 0..12"):
        live.grab(13)


def test_drag_force_shrinks_the_offset_of_a_free_point_by_sqrt2_per_step():
    m, x, v = 0.01, np.zeros(3), np.zeros(3)
    target, g = np.array([0.1, 0.0, 0.0]), np.array([0.0, 0.0, -9.81])
    sizes = []
    for _ in range(6):                                # symplectic Euler of a free point
        v = v + DT * (drag_force(m, x, v, target, DT, g, 1.0) / m + g)
        x = x + DT * v
        sizes.append(np.hypot(np.linalg.norm(target - x), np.linalg.norm(v) * DT))
    assert np.allclose(np.array(sizes[1:]) / sizes[:-1], 1 / np.sqrt(2))
    assert sizes[0] == pytest.approx(0.1 / np.sqrt(2))
    capped = drag_force(m, x, np.zeros(3), x + [1.0, 0, 0], DT, np.zeros(3), 0.01)
    assert capped[0] == pytest.approx(0.5 * m * 0.01 / DT ** 2)


def test_vertex_masses_add_up_to_the_strand_mass():
    scene = rope_sim(n=8).scene
    m = vertex_masses(scene)
    assert m.sum() == pytest.approx(1000.0 * np.pi * 0.005 ** 2 * 0.35)
    assert m[0] == pytest.approx(m[1] / 2)


def test_thread_pauses_steps_and_runs():
    live = LiveSimulation(rope_sim(), paused=True, realtime=False)
    live.start()
    try:
        live.step(3)
        deadline = time.monotonic() + 20
        while live.snapshot().steps < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        assert live.snapshot().steps == 3             # paused after the three steps
        live.resume()
        while live.snapshot().steps < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.snapshot().steps >= 10
    finally:
        live.stop()
    assert live._thread is None


def test_divergence_restores_the_last_state_and_pauses():
    live = LiveSimulation(rope_sim(clamp=True), realtime=False)
    live.advance(3)
    good = live.snapshot()
    live.set_setting("max_strain", 1e-12)             # any stretch now counts as divergence
    assert live.advance(5) == 0
    assert live.paused and "diverged" in live.message
    assert live.snapshot().steps == good.steps
    assert np.array_equal(live.snapshot().positions, good.positions)


def test_settings_fields_and_parsing():
    fields = settings_fields(PBDSettings())
    names = [f.name for f in fields]
    assert names[:3] == ["iterations", "substeps", "damping"]
    by = {f.name: f for f in fields}
    assert by["substeps"].optional and by["substeps"].kind == "int"
    assert by["self_collision"].kind == "bool" and by["order"].kind == "str"
    assert parse_setting(by["substeps"], "auto") is None
    assert parse_setting(by["substeps"], " 4 ") == 4
    assert parse_setting(by["max_strain"], "0.25") == 0.25
    with pytest.raises(ValueError, match="substeps must be an integer or auto"):
        parse_setting(by["substeps"], "four")
