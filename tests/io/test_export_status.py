"""A run that did not complete is not exported as a normal one: ``strandlab export`` warns on
stderr (``--quiet`` too) and every format's files carry the run's status (a comment in OBJ,
PLY and the VTU series' ``.pvd``, the USD layer's custom data, the Alembic archive's
description); a complete run's files carry none."""
from pathlib import Path

import pytest

from strandlab.cli import main
from strandlab.io.export import status_note

ROPE = Path(__file__).resolve().parents[2] / "examples" / "hanging_rope.toml"
DIVERGED = "diverged: simulation diverged at step 2"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A run that diverges at step 2 (its strain bound far below the rope's sag) and one that
    completes."""
    base = tmp_path_factory.mktemp("export_status")
    scene = base / "tight.toml"
    scene.write_text(ROPE.read_text().replace("damping = 0.2", "damping = 0.2\nmax_strain = 1e-5"))
    assert main(["run", str(scene), "--frames", "5", "--out", str(base / "diverged"),
                 "--quiet"]) == 3
    assert main(["run", str(ROPE), "--frames", "2", "--out", str(base / "complete"),
                 "--quiet"]) == 0
    return base


def _export(run, fmt, capsys):
    assert main(["export", str(run), "--format", fmt, "--quiet"]) == 0
    return capsys.readouterr().err


def _marks(run, fmt):
    """The status each format's files carry (None: no mark)."""
    if fmt in ("obj", "ply"):
        head = (run / fmt / f"frame_00000.{fmt}").read_text().splitlines()[:4]
        found = [line for line in head if "strandlab run" in line]
        return found[0] if found else None
    if fmt == "vtu":
        head = (run / "vtu" / "trajectory.pvd").read_text().splitlines()[1]
        return head if head.startswith("<!--") else None
    if fmt == "usd":
        from pxr import Usd
        stage = Usd.Stage.Open(str(run / "trajectory.usd"))      # kept: its layer lives on it
        data = stage.GetRootLayer().customLayerData
        return data["strandlab"]["status"]
    import alembic3d
    info = alembic3d.Abc.GetArchiveInfo(alembic3d.Abc.IArchive(str(run / "trajectory.abc")))
    assert info["appName"] == "strandlab"
    return info["userDescription"]


@pytest.mark.parametrize("fmt", ["obj", "ply", "vtu", "usd", "abc"])
def test_a_diverged_run_is_exported_with_a_warning_and_marked(runs, capsys, fmt):
    err = _export(runs / "diverged", fmt, capsys)
    assert err.startswith("strandlab: warning: ") and DIVERGED in err
    assert "the files say so" in err
    mark = _marks(runs / "diverged", fmt)
    assert mark is not None and "diverged at step 2" in mark


@pytest.mark.parametrize("fmt", ["obj", "ply", "vtu", "usd", "abc"])
def test_a_complete_run_is_exported_without_a_mark(runs, capsys, fmt):
    assert _export(runs / "complete", fmt, capsys) == ""
    mark = _marks(runs / "complete", fmt)
    assert mark in (None, "complete", "strandlab run")


def test_status_note_is_one_ascii_line():
    assert status_note("complete") is None and status_note(None) is None
    assert status_note("diverged: strain\n 2 \u2265 1") == "strandlab run diverged: strain 2 ? 1"


def test_an_alembic_description_holds_no_token_separators(runs, tmp_path):
    # Alembic's archive info is a token map and aborts the process (a C++ terminate) on a
    # value with ';' or '=': they are written as ',' and ' is '.  The export runs in a child
    # process, so that such an abort fails this test instead of ending the test run.
    import shutil
    import subprocess
    import sys

    import h5py

    run = tmp_path / "run"
    shutil.copytree(runs / "diverged", run)
    with h5py.File(run / "trajectory.h5", "r+") as f:
        f.attrs["status"] = "interrupted: a=1; b = 2"
    code = ("import sys; from strandlab.cli import main; "
            f"sys.exit(main(['export', {str(run)!r}, '--format', 'abc', '--quiet']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _marks(run, "abc") == "strandlab run interrupted: a is 1, b is 2"
