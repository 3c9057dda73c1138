"""Checkpoints: a saved state continues exactly like the original run."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.io.checkpoint import load_state, save_state
from strandlab.sim.shapes import line


def _model(n=10):
    b = sl.SceneBuilder()
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), n),
                     material=sl.Material(young_modulus=1e7, density=1000.0, radius=0.005))
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    return b.build()


def test_restart_from_checkpoint_is_bitwise_identical(tmp_path):
    m = _model()
    solver = sl.PBDSolver(m)
    a = m.state()
    for _ in range(20):
        solver.step(a, a, 1 / 60)
    p = save_state(tmp_path / "ck", a, m)
    b = load_state(p, m)
    for _ in range(20):
        solver.step(a, a, 1 / 60)
        solver.step(b, b, 1 / 60)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.v, b.v)
    assert a.step == b.step == 40 and a.time == pytest.approx(b.time)


def test_checkpoint_errors_name_the_problem(tmp_path):
    m = _model()
    st = m.state()
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        load_state(tmp_path / "nope.npz", m)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="bad.npz"):
        load_state(bad, m)
    p = save_state(tmp_path / "ok.npz", st, m)
    with pytest.raises(ValueError, match="model with"):
        load_state(p, _model(12))
    st.x[3, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        save_state(tmp_path / "nan.npz", st, m)
