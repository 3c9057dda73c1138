"""``strandlab sagfree`` and ``strandlab run HAIR``: mistakes refused with one line naming the
file or the option, exit status 2, and nothing written -- an ``--out`` that is a folder or not
a ``.npz`` file (before any work), a hair file without strands or with a one-point strand."""
import numpy as np
import pytest

from strandlab.cli import EXIT_USAGE, main
from strandlab.cli_sagfree import UsageError, load_hair
from strandlab.io.hairfile import Hair, write_hair


@pytest.fixture(scope="module")
def hair_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sagfree_mistakes") / "h.hair"
    assert main(["hair", "generate", "--strands", "2", "--vertices", "5", "--out",
                 str(path)]) == 0
    return path


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("strandlab: error: ") and err.count("\n") == 1, err
    return err


def test_an_out_folder_is_refused_before_any_work(hair_file, tmp_path, capsys):
    folder = tmp_path / "rest"
    folder.mkdir()
    missing = tmp_path / "no_such.hair"               # not read: --out is checked first
    for hair in (hair_file, missing):
        assert main(["sagfree", str(hair), "--out", str(folder), "--quiet"]) == EXIT_USAGE
        err = _one_line_error(capsys)
        assert f"--out {folder}: is a folder" in err and ".npz" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rest"]
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("name", ["rest.txt", "rest", "rest.NPZ"])
def test_an_out_without_the_npz_suffix_is_refused(hair_file, tmp_path, capsys, name):
    out = tmp_path / name
    assert main(["sagfree", str(tmp_path / "no_such.hair"), "--out", str(out),
                 "--quiet"]) == EXIT_USAGE
    assert (f"--out {out}: the rest shape is written as a .npz file"
            in _one_line_error(capsys))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("parent", ["missing", "file"])
def test_an_out_in_no_folder_is_refused_before_any_work(hair_file, tmp_path, capsys, parent):
    # the hair file is not read (a missing one): the folder is checked before the optimisation
    if parent == "file":
        (tmp_path / parent).write_text("")
    out = tmp_path / parent / "rest.npz"
    assert main(["sagfree", str(tmp_path / "no_such.hair"), "--out", str(out),
                 "--quiet"]) == 1
    err = _one_line_error(capsys)
    assert f"cannot write {out}: " in err
    assert ("does not exist" if parent == "missing" else "is not a folder") in err


def _zero_strands(tmp_path, suffix):
    path = tmp_path / f"zero{suffix}"
    write_hair(path, Hair(np.zeros((0, 3)), np.array([0])))
    return path


def _one_point_strand(tmp_path):
    path = tmp_path / "onevert.data"
    pts = np.array([[0.0, 0, 0], [0, 0, 0.1], [0, 0, 0.2], [0, 0, 0.3]])
    write_hair(path, Hair(pts, np.array([0, 1, 4])))
    return path


@pytest.mark.filterwarnings("error")                 # no numpy RuntimeWarning on the way
@pytest.mark.parametrize("command", ["sagfree", "run"])
@pytest.mark.parametrize("suffix", [".hair", ".data"])
def test_a_hair_file_without_strands(tmp_path, capsys, command, suffix):
    path = _zero_strands(tmp_path, suffix)
    out = tmp_path / ("rest.npz" if command == "sagfree" else "run")
    assert main([command, str(path), "--out", str(out), "--quiet"]) == EXIT_USAGE
    assert _one_line_error(capsys) == f"strandlab: error: {path}: holds no strands\n"
    assert not out.exists()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("command", ["sagfree", "run"])
def test_a_strand_of_one_point(tmp_path, capsys, command):
    path = _one_point_strand(tmp_path)
    out = tmp_path / ("rest.npz" if command == "sagfree" else "run")
    assert main([command, str(path), "--out", str(out), "--quiet"]) == EXIT_USAGE
    assert _one_line_error(capsys) == (f"strandlab: error: {path}: strand 0 has 1 point (a "
                                       "strand needs at least 2)\n")
    assert not out.exists()


def test_load_hair_names_the_file(tmp_path):
    with pytest.raises(UsageError, match=r"zero\.data: holds no strands$"):
        load_hair(str(_zero_strands(tmp_path, ".data")), 1.0)
    with pytest.raises(UsageError, match=r"onevert\.data: strand 0 has 1 point"):
        load_hair(str(_one_point_strand(tmp_path)), 0.01)
