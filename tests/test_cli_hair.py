"""``strandlab hair generate`` and ``strandlab hair info``: files written, what is printed, and
the exit status of each kind of error."""
import struct

import numpy as np
import pytest

from strandlab import cli
from strandlab.cli import EXIT_OUTPUT, EXIT_USAGE, main
from strandlab.io.hairfile import read_hair, read_hair_header
from strandlab.scenes.hairstyles import HAIRSTYLES, generate_hairstyle

F32 = 1e-7   # float32 storage: relative rounding <= 2^-24 (see tests/io/test_hairfile.py)


def test_styles_listed_by_the_parser_are_the_generators():
    assert cli._HAIR_STYLES == tuple(HAIRSTYLES)


def test_generate_writes_the_hairstyle_in_the_file_unit(tmp_path, capsys):
    out = tmp_path / "curly.hair"
    code = main(["hair", "generate", "--style", "curly", "--strands", "12", "--vertices", "30",
                 "--seed", "5", "--out", str(out), "--scale", "0.01"])
    assert code == 0
    text = capsys.readouterr().out
    assert f"wrote {out}" in text and "12 curly strands of 30 vertices (360 points)" in text
    ref = generate_hairstyle("curly", n_strands=12, vertices_per_strand=30, seed=5)
    got = read_hair(out, scale=0.01)
    assert got.vertex_counts.tolist() == [30] * 12
    np.testing.assert_allclose(got.points, ref.points, rtol=F32, atol=0)
    stored = read_hair(out)                                     # the numbers in the file: cm
    np.testing.assert_allclose(stored.points, 100 * ref.points, rtol=F32, atol=0)
    assert read_hair_header(out)["flags"] == 2                  # equal strands: points only
    assert got.info == "strandlab curly hairstyle, seed 5"


def test_generate_is_deterministic_and_writes_data_files(tmp_path):
    a, b = tmp_path / "a.data", tmp_path / "b.bin"
    assert main(["hair", "generate", "--strands", "5", "--vertices", "10", "--style", "wavy",
                 "--seed", "2", "--out", str(a)]) == 0
    assert main(["hair", "generate", "--strands", "5", "--vertices", "10", "--style", "wavy",
                 "--seed", "2", "--out", str(b), "--format", "data"]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert struct.unpack_from("<ii", a.read_bytes()) == (5, 10)


def test_generate_options_reach_the_generator(tmp_path):
    out = tmp_path / "o.hair"
    assert main(["hair", "generate", "--strands", "4", "--vertices", "11", "--length", "0.1",
                 "--variation", "0", "--scalp-radius", "0.05", "--thickness", "1e-4",
                 "--style", "coiled", "--amplitude", "0.002", "--period", "0.004",
                 "--out", str(out)]) == 0
    ref = generate_hairstyle("coiled", n_strands=4, vertices_per_strand=11, length=0.1,
                             variation=0.0, scalp_radius=0.05, thickness=1e-4,
                             amplitude=0.002, period=0.004)
    got = read_hair(out)
    np.testing.assert_allclose(got.points, ref.points, rtol=F32)
    np.testing.assert_allclose(got.lengths(), 0.1, rtol=1e-6)
    assert got.default_thickness == pytest.approx(1e-4, rel=F32)


def test_info_prints_counts_lengths_and_flags(tmp_path, capsys):
    out = tmp_path / "s.hair"
    assert main(["hair", "generate", "--strands", "6", "--vertices", "20", "--out", str(out),
                 "--scale", "0.01"]) == 0
    capsys.readouterr()
    assert main(["hair", "info", str(out), "--scale", "0.01"]) == 0
    text = capsys.readouterr().out
    lengths = read_hair(out, scale=0.01).lengths()
    assert "strands:" in text and " 6\n" in text
    assert "points:" in text and " 120\n" in text
    assert "0x02 (points)" in text and "default segments:" in text and " 19\n" in text
    assert f"{lengths.min():.4g} .. {lengths.max():.4g} m" in text
    assert "thickness:" in text and "default 7e-05 m" in text
    assert "'strandlab straight hairstyle, seed 0'" in text


def test_info_reports_short_strands_and_zero_length_edges(tmp_path, capsys):
    path = tmp_path / "usc.data"
    pts = [np.array([[0, 0, 0], [0, 0, 1], [0, 0, 1]], float), np.zeros((1, 3))]
    path.write_bytes(struct.pack("<i", 2) + b"".join(
        struct.pack("<i", len(p)) + p.astype("<f4").tobytes() for p in pts))
    assert main(["hair", "info", str(path)]) == 0
    text = capsys.readouterr().out
    assert "vertices per strand:" in text and "1 .. 3" in text
    assert "strands of < 3 vertices: 1" in text
    assert "zero-length edges:" in text and text.rstrip().endswith("1")


@pytest.mark.parametrize("argv, message", [
    (["hair", "generate", "--style", "frizzy", "--out", "x.hair"], "invalid choice: 'frizzy'"),
    (["hair", "generate"], "the following arguments are required: --out"),
    (["hair", "generate", "--strands", "0", "--out", "x.hair"], "expected an integer >= 1"),
    (["hair", "generate", "--seed", "-1", "--out", "x.hair"], "expected an integer >= 0"),
    (["hair", "generate", "--vertices", "1", "--out", "{tmp}/x.hair"],
     "vertices_per_strand must be an integer >= 2"),
    (["hair", "generate", "--variation", "2", "--out", "{tmp}/x.hair"],
     r"variation must be in [0, 0.9]"),
    (["hair", "generate", "--out", "{tmp}/x.txt"], "unknown hair file suffix '.txt'"),
    (["hair", "generate", "--scale", "0", "--out", "{tmp}/x.hair"], "expected a positive number"),
    (["hair"], "HAIR_COMMAND"),
    (["hair", "info", "{tmp}/missing.hair"], "No such file"),
])
def test_usage_errors_exit_2(tmp_path, capsys, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err
    assert not (tmp_path / "x.hair").exists() and not (tmp_path / "x.txt").exists()


def test_info_on_a_corrupt_file_names_it(tmp_path, capsys):
    path = tmp_path / "cut.hair"
    assert main(["hair", "generate", "--strands", "3", "--vertices", "5", "--out",
                 str(path)]) == 0
    path.write_bytes(path.read_bytes()[:-4])
    assert main(["hair", "info", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"strandlab: error: {path}: truncated: the points array" in err


def test_unwritable_output_exits_1(tmp_path, capsys):
    out = tmp_path / "no" / "such" / "folder.hair"
    assert main(["hair", "generate", "--strands", "2", "--out", str(out)]) == EXIT_OUTPUT
    assert f"cannot write {out}" in capsys.readouterr().err
