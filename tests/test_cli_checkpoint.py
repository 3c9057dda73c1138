"""``strandlab run --checkpoint-every N`` and ``--resume FILE``: a run stopped after a
checkpoint and resumed in its folder ends with the trajectory of the uninterrupted run."""
from pathlib import Path

import numpy as np
import pytest

from strandlab.cli import EXIT_USAGE, main
from strandlab.io.trajectory import load_trajectory

ROPE = str(Path(__file__).resolve().parents[1] / "examples" / "hanging_rope.toml")


def _frames(path):
    with load_trajectory(path) as t:
        return t.times.copy(), t.positions[:], t.d1[:], t.status, dict(t.metadata)


@pytest.mark.parametrize("solver", ["pbd", "der"])
def test_resumed_cli_run_equals_the_uninterrupted_run(tmp_path, solver):
    full, part = tmp_path / "full", tmp_path / "part"
    opts = ["--solver", solver, "--quiet", "--checkpoint-every", "2"]
    assert main(["run", ROPE, "--frames", "6", "--out", str(full), *opts]) == 0
    assert sorted(p.name for p in (full / "checkpoints").iterdir()) == [
        "frame_000002.npz", "frame_000004.npz", "frame_000006.npz"]
    # the "interrupted" run: 5 frames, its last checkpoint at frame 4
    assert main(["run", ROPE, "--frames", "5", "--out", str(part), *opts]) == 0
    ck = part / "checkpoints" / "frame_000004.npz"
    assert main(["run", ROPE, "--frames", "6", "--out", str(part), "--resume", str(ck),
                 *opts]) == 0
    t0, p0, d0, _, _ = _frames(full / "trajectory.h5")
    t1, p1, d1, status, meta = _frames(part / "trajectory.h5")
    assert status == "complete" and meta["resumed_from"]["frame"] == 4
    assert np.array_equal(t0, t1) and np.array_equal(p0, p1) and np.array_equal(d0, d1)
    with np.load(full / "checkpoints" / "frame_000006.npz") as a, \
            np.load(part / "checkpoints" / "frame_000006.npz") as b:
        assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a.files
                   if k.startswith("state__"))


def test_resume_errors_are_usage_errors(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", ROPE, "--frames", "2", "--out", str(out), "--quiet",
                 "--checkpoint-every", "2"]) == 0
    ck = out / "checkpoints" / "frame_000002.npz"
    assert main(["run", ROPE, "--resume", str(tmp_path / "nope.npz"), "--out",
                 str(tmp_path / "x"), "--quiet"]) == EXIT_USAGE
    assert "checkpoint" in capsys.readouterr().err
    assert main(["run", ROPE, "--frames", "4", "--dt", "0.01", "--resume", str(ck), "--out",
                 str(tmp_path / "x"), "--quiet"]) == EXIT_USAGE
    assert "dt = 0.016666666666666666; this run has 0.01" in capsys.readouterr().err
    assert main(["run", "plectoneme", "--frames", "4", "--resume", str(ck), "--out",
                 str(tmp_path / "y"), "--quiet"]) == EXIT_USAGE
    assert "n_vertices = 41; this solver and scene have 61" in capsys.readouterr().err
    # a fresh run in the folder removes the old checkpoints
    assert main(["run", ROPE, "--frames", "1", "--out", str(out), "--quiet"]) == 0
    assert list((out / "checkpoints").iterdir()) == []
