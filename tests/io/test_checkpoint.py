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


# ---------------------------------------------------------------------------------- format
def _rewrite_header(p, **changes):
    """Rewrite checkpoint ``p`` with header entries changed (a header-only edit)."""
    import json

    with np.load(p) as data:
        arrays = {k: data[k] for k in data.files}
    head = json.loads(str(arrays.pop("header")))
    head.update(changes)
    head = {k: v for k, v in head.items() if v is not None}
    np.savez_compressed(p, header=np.array(json.dumps(head)), **arrays)


def test_header_records_version_scene_and_run(tmp_path):
    from strandlab.io.checkpoint import FORMAT_VERSION, read_header, scene_digest

    solver = _solver()
    p = save_state(tmp_path / "ck", solver, solver.state(), run={"frame": 3, "dt": 0.01})
    head = read_header(p)
    assert head["format"] == "strandlab.checkpoint" and head["format_version"] == FORMAT_VERSION
    assert head["solver"] == "pbd" and head["settings"]["iterations"] == 10
    assert head["scene"] == scene_digest(solver.scene) and head["run"]["frame"] == 3
    assert (head["n_vertices"], head["n_edges"], head["n_extra"]) == (11, 10, 3)


def test_wrong_version_and_truncated_files_are_named(tmp_path):
    solver = _solver()
    p = save_state(tmp_path / "ck", solver, solver.state())
    _rewrite_header(p, format_version=99)
    with pytest.raises(ValueError, match=r"ck.npz has format 'strandlab.checkpoint' version 99"):
        load_state(p, solver)
    p = save_state(tmp_path / "old", solver, solver.state())
    _rewrite_header(p, format=None, format_version=None, scene=None, settings=None)
    assert load_state(p, solver).step == 0          # version 1 files (no version) still read
    raw = save_state(tmp_path / "t", solver, solver.state()).read_bytes()
    (tmp_path / "t.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="t.npz is truncated or corrupt"):
        load_state(tmp_path / "t.npz", solver)


def test_another_scene_with_the_same_counts_is_refused_naming_the_part(tmp_path):
    import strandlab as sl_

    def solver(z=0.0, floor=False, k=10):
        b = sl_.SceneBuilder()
        s = b.add_strand(line((0, 0, z), (1, 0, z), 10),
                         material=sl.Material(young_modulus=1e7, density=1000.0, radius=0.005))
        b.attach_to_frame(s, b.add_frame((0, 0, z)), end=0)
        if floor:
            b.add_plane((0, 0, -1), (0, 0, 1))
        return sl_.PBDSolver(b.build(), sl_.PBDSettings(iterations=k))

    p = save_state(tmp_path / "ck", solver(), solver().state())
    with pytest.raises(ValueError, match="another scene: its strands, frames differ"):
        load_state(p, solver(z=0.5))
    with pytest.raises(ValueError, match="another scene: its colliders differ"):
        load_state(p, solver(floor=True))
    assert load_state(p, solver(k=3)).step == 0
    with pytest.raises(ValueError, match="setting iterations = 10; this run has 3"):
        load_state(p, solver(k=3), check_settings=True)


def test_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    solver = _solver()
    st = solver.state()
    p = save_state(tmp_path / "ck", solver, st)
    before = p.read_bytes()
    for _ in range(2):
        solver.step(st, st, 1 / 60)

    def fail(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", fail)
    with pytest.raises(KeyboardInterrupt):
        save_state(p, solver, st)
    assert p.read_bytes() == before
    assert [q.name for q in tmp_path.iterdir()] == ["ck.npz"]
