"""``strandlab export DIR --format usd|abc|obj|ply``: every format from a saved run, and clear
errors (exit status and message) for bad input; an interrupted export leaves no file."""
import json
from pathlib import Path

import numpy as np
import pytest

from strandlab.cli import EXIT_OUTPUT, EXIT_USAGE, main
from strandlab.io.strands import read_strands
from strandlab.io.trajectory import load_trajectory

ROPE = str(Path(__file__).resolve().parents[1] / "examples" / "hanging_rope.toml")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "rope"
    assert main(["run", ROPE, "--frames", "4", "--out", str(out), "--quiet"]) == 0
    return out


def _positions(run_dir, k):
    with load_trajectory(run_dir / "trajectory.h5") as t:
        return t.positions[k]


@pytest.mark.parametrize("fmt, name", [("usd", "trajectory.usd"), ("abc", "trajectory.abc")])
def test_usd_and_alembic_files_by_default_in_the_run_folder(run_dir, fmt, name, capsys):
    assert main(["export", str(run_dir), "--format", fmt, "--frames", "1:4:2"]) == 0
    captured = capsys.readouterr()
    assert f"exported 2 frame(s) of {run_dir} to {run_dir / name}" in captured.out
    assert "100%" in captured.err                            # the progress bar, on stderr
    s = read_strands(run_dir / name, time=3 / 60)
    assert np.allclose(s.points, _positions(run_dir, 3), atol=1e-6)


@pytest.mark.parametrize("fmt", ["obj", "ply"])
def test_per_frame_files(run_dir, tmp_path, fmt):
    out = tmp_path / fmt
    assert main(["export", str(run_dir), "--format", fmt, "--frames", "2:", "--out", str(out),
                 "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [f"frame_0000{k}.{fmt}" for k in (2, 3, 4)]
    if fmt == "obj":
        assert np.array_equal(read_strands(out / "frame_00003.obj").points,
                              _positions(run_dir, 3))


def test_format_from_the_output_suffix_and_options(run_dir, tmp_path):
    from pxr import Usd, UsdGeom

    out = tmp_path / "r.usda"
    assert main(["export", str(run_dir), "--out", str(out), "--up", "y", "--d1",
                 "--quiet"]) == 0
    stage = Usd.Stage.Open(str(out))
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    assert stage.GetPrimAtPath("/strandlab/strands/material_0").GetAttribute(
        "primvars:strandlab:d1").HasAuthoredValue()


@pytest.mark.parametrize("argv, code, message", [
    (["--format", "stl"], EXIT_USAGE, "invalid choice: 'stl'"),
    (["--out", "x.fbx"], EXIT_USAGE, "give --format"),
    (["--format", "usd", "--frames", "2:9"], EXIT_USAGE, "stop 9 is past the end: the run "
                                                         "has 5 frames"),
    (["--format", "abc", "--frames", "5"], EXIT_USAGE, "frame 5 is out of range"),
    (["--format", "obj", "--up", "y"], EXIT_USAGE, "keeps strandlab's z-up"),
])
def test_bad_options(run_dir, capsys, argv, code, message):
    assert main(["export", str(run_dir), *argv, "--quiet"]) == code
    assert message in capsys.readouterr().err


def test_missing_run_files_and_unwritable_paths(run_dir, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["export", str(empty), "--format", "usd"]) == EXIT_USAGE
    assert "has no trajectory.h5 or trajectory.npz" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "trajectory.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 50)
    assert main(["export", str(broken), "--format", "usd"]) == EXIT_USAGE
    assert "broken/trajectory.h5" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    for fmt in ("usd", "abc"):
        assert main(["export", str(run_dir), "--format", fmt, "--quiet", "--out",
                     str(tmp_path / "nowhere" / f"x.{fmt}")]) == EXIT_OUTPUT
        err = capsys.readouterr().err
        assert "nowhere" in err and "does not exist" in err
    assert main(["export", str(run_dir), "--format", "usd", "--quiet", "--out",
                 str(blocker / "x.usd")]) == EXIT_OUTPUT
    assert "is not a folder" in capsys.readouterr().err


def test_interrupted_export_leaves_nothing_under_the_name(run_dir, tmp_path, monkeypatch, capsys):
    from strandlab.io import usd

    calls = []

    def interrupted(self, k, code):
        calls.append(k)
        if len(calls) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(usd._UsdWriter, "frame", interrupted)
    out = tmp_path / "cut.usd"
    assert main(["export", str(run_dir), "--out", str(out), "--quiet"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [] and calls == [0, 1, 2]
    record = json.loads((run_dir / "scene.json").read_text())
    assert record["name"] == "hanging_rope"
