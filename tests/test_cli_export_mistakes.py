"""``strandlab export`` of a run with a bad frame: refused (exit 2, the frame named) and, for
the per-frame formats (obj, ply, vtu), nothing left behind -- neither the frames written
before the bad one nor the folder the export created."""
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from strandlab.cli import EXIT_USAGE, main
from strandlab.io.interchange import export_run

ROPE = str(Path(__file__).resolve().parents[1] / "examples" / "hanging_rope.toml")


@pytest.fixture(scope="module")
def nan_run(tmp_path_factory):
    """A run whose frame 1 holds a NaN (frame 0 is fine)."""
    out = tmp_path_factory.mktemp("export_mistakes") / "rope"
    assert main(["run", ROPE, "--frames", "3", "--out", str(out), "--quiet"]) == 0
    with h5py.File(out / "trajectory.h5", "r+") as f:
        f["positions"][1, 3, 2] = np.nan
    return out


@pytest.mark.parametrize("fmt", ["obj", "ply", "vtu"])
def test_a_bad_frame_leaves_no_frame_files_and_no_folder(nan_run, tmp_path, capsys, fmt):
    run = tmp_path / "run"
    shutil.copytree(nan_run, run)
    before = sorted(p.name for p in run.iterdir())
    assert main(["export", str(run), "--format", fmt, "--quiet"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("strandlab: error: ") and err.count("\n") == 1
    assert "frame 1: positions has a non-finite value" in err
    assert sorted(p.name for p in run.iterdir()) == before          # no obj/, ply/, vtu/


@pytest.mark.parametrize("fmt", ["obj", "vtu"])
def test_a_bad_frame_keeps_an_existing_folder_and_its_other_files(nan_run, tmp_path, fmt):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"frame 1: positions has a non-finite value"):
        export_run(nan_run, fmt, out=out)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_an_interrupted_per_frame_export_leaves_nothing(nan_run, tmp_path):
    def stop(k):
        raise KeyboardInterrupt

    out = tmp_path / "ply"
    with pytest.raises(KeyboardInterrupt):
        export_run(nan_run, "ply", out=out, frames="0", progress=stop)
    assert not out.exists()
