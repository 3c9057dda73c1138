"""``strandlab hair generate`` with values the file format cannot hold: refused before anything
is written, naming the value (float32 holds at most about 3.4e38)."""
import numpy as np
import pytest

from strandlab.cli import EXIT_USAGE, main
from strandlab.io.hairfile import Hair, write_hair


@pytest.mark.parametrize("suffix, what", [(".hair", "default thickness"), (".data", "points")])
def test_a_scale_too_small_for_float32_is_refused(tmp_path, capsys, suffix, what):
    out = tmp_path / f"x{suffix}"
    assert main(["hair", "generate", "--strands", "2", "--vertices", "5", "--scale", "1e-50",
                 "--out", str(out)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"strandlab: error: {out}: {what} ") and err.count("\n") == 1
    assert "is too large for the file's float32" in err and "scale too small?" in err
    assert list(tmp_path.iterdir()) == []


def test_write_hair_names_the_header_value_and_keeps_an_existing_file(tmp_path):
    hair = Hair(np.array([[0.0, 0, 0], [0, 0, 1.0]]), np.array([0, 2]), default_thickness=1e-4)
    path = write_hair(tmp_path / "h.hair", hair)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=r"h\.hair: default thickness 1e\+46 \(in file units\) "
                                         r"is too large"):
        write_hair(path, hair, scale=1e-50)
    with pytest.raises(ValueError, match=r"points 1e\+39 \(in file units\)"):
        write_hair(path, hair, scale=1e-39)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["h.hair"]
