"""Checkpoints: a saved state continues exactly like the original run; bad files are named."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.io.checkpoint import load_state, save_state
from strandlab.sim.shapes import line


def _solver(n=10):
    b = sl.SceneBuilder()
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), n),
                     material=sl.Material(young_modulus=1e7, density=1000.0, radius=0.005))
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    return sl.PBDSolver(b.build())


def test_restart_from_checkpoint_is_bitwise_identical(tmp_path):
    solver = _solver()
    a = solver.state()
    for _ in range(20):
        solver.step(a, a, 1 / 60)
    p = save_state(tmp_path / "ck", solver, a)
    b = load_state(p, solver)
    for _ in range(20):
        solver.step(a, a, 1 / 60)
        solver.step(b, b, 1 / 60)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.v, b.v)
    assert np.array_equal(a.mid_v, b.mid_v)
    assert a.step == b.step == 40 and a.time == pytest.approx(b.time)


def test_checkpoint_errors_name_the_problem(tmp_path):
    solver = _solver()
    st = solver.state()
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        load_state(tmp_path / "nope.npz", solver)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="bad.npz"):
        load_state(bad, solver)
    p = save_state(tmp_path / "ok.npz", solver, st)
    with pytest.raises(ValueError, match="n_vertices = 11; this solver and scene have 13"):
        load_state(p, _solver(12))
    st.x[3, 1] = np.nan
    with pytest.raises(ValueError, match="'x' is not finite"):
        save_state(tmp_path / "nan.npz", solver, st)


def test_bit_flipped_checkpoint_is_reported_corrupt(tmp_path):
    solver = _solver()
    st = solver.state()
    for _ in range(3):
        solver.step(st, st, 1 / 60)
    p = save_state(tmp_path / "ck.npz", solver, st)
    raw = bytearray(p.read_bytes())
    # flip one bit in the middle of the archive (inside a compressed member)
    raw[len(raw) // 2] ^= 0x10
    p.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="ck.npz.*corrupt"):
        load_state(p, solver)


def test_loaded_state_with_nan_or_negative_step_is_refused(tmp_path):
    solver = _solver()
    arrays = solver.save_state(solver.state())
    arrays["time"] = np.float64(np.nan)
    with pytest.raises(ValueError, match="'time' is not finite"):
        solver.load_state(arrays)
    arrays = solver.save_state(solver.state())
    arrays["step"] = np.int64(-3)
    with pytest.raises(ValueError, match="negative step"):
        solver.load_state(arrays)


def test_der_restart_from_checkpoint_is_bitwise_identical(tmp_path):
    b = sl.SceneBuilder()
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), 10),
                     material=sl.Material(young_modulus=1e6, density=1000.0, radius=0.005))
    b.attach_to_frame(s, b.add_frame((0, 0, 0), angular_velocity=(1.0, 0, 0)), end=0)
    solver = sl.DERSolver(b.build())
    a = solver.state()
    for _ in range(10):
        solver.step(a, a, 1e-2)
    p = save_state(tmp_path / "ck", solver, a)
    c = load_state(p, solver)
    for _ in range(10):
        solver.step(a, a, 1e-2)
        solver.step(c, c, 1e-2)
    assert np.array_equal(a.q, c.q) and np.array_equal(a.v, c.v)
    assert np.array_equal(a.a1, c.a1) and np.array_equal(a.ref_twist, c.ref_twist)
    assert a.step == c.step == 20
