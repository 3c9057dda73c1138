"""``strandlab sagfree`` and ``strandlab run HAIR --rest``: a generated hairstyle optimized on
the command line keeps its shape under gravity; without its rest shape it sags."""
import numpy as np
import pytest

from strandlab.cli import main
from strandlab.io.hairfile import read_hair
from strandlab.io.restshape import read_rest_shape, write_rest_shape
from strandlab.scenes.hair_head import hair_on_head


@pytest.fixture(scope="module")
def optimized(tmp_path_factory):
    d = tmp_path_factory.mktemp("sagfree")
    hair_file, rest_file = d / "h.hair", d / "rest.npz"
    assert main(["hair", "generate", "--style", "wavy", "--strands", "4", "--vertices", "16",
                 "--length", "0.12", "--seed", "3", "--out", str(hair_file)]) == 0
    assert main(["sagfree", str(hair_file), "--out", str(rest_file), "--quiet"]) == 0
    return hair_file, rest_file


def _largest_drift(hair, rest, seconds=1.0, dt=1 / 60):
    sim = hair_on_head(hair, rest=rest, nod=0.0)
    solver = sim.make_solver()
    st = solver.state()
    x0 = solver.output(st).positions.copy()
    drift = 0.0
    for _ in range(int(round(seconds / dt))):
        solver.step(st, st, dt)
        drift = max(drift, float(np.abs(solver.output(st).positions - x0).max()))
    return drift


def test_sagfree_rest_shape_holds_the_hairstyle(optimized, capsys):
    hair_file, rest_file = optimized
    hair = read_hair(hair_file)
    rest = read_rest_shape(rest_file)
    assert set(rest.status) == {"converged"}
    length = float(hair.lengths().min())
    held = _largest_drift(hair, rest)
    sagged = _largest_drift(hair, None)
    # "stays in place": largest displacement under 1e-3 of the strand length; the input shape
    # as rest shape sags by more than a hundred times that
    assert held < 1e-3 * length
    assert sagged > 100 * held


def test_run_takes_the_rest_file_and_refuses_another_hair(optimized, tmp_path, capsys):
    hair_file, rest_file = optimized
    code = main(["run", str(hair_file), "--rest", str(rest_file), "--frames", "2", "--out",
                 str(tmp_path / "run"), "--quiet"])
    assert code == 0
    other = tmp_path / "other.hair"
    main(["hair", "generate", "--style", "wavy", "--strands", "4", "--vertices", "16",
          "--length", "0.12", "--seed", "4", "--out", str(other)])
    code = main(["run", str(other), "--rest", str(rest_file), "--frames", "2", "--out",
                 str(tmp_path / "bad"), "--quiet"])
    assert code == 2
    assert "made for other strand points" in capsys.readouterr().err


def test_rest_file_errors_name_the_file_and_entry(optimized, tmp_path):
    _, rest_file = optimized
    rest = read_rest_shape(rest_file)
    bad = tmp_path / "bad.npz"
    with np.load(rest_file) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["rest_twist"] = arrays["rest_twist"][:-1]
    np.savez(bad, **arrays)
    with pytest.raises(ValueError, match=r"bad.npz: rest_twist has shape"):
        read_rest_shape(bad)
    arrays["version"] = np.array(7)
    np.savez(bad, **arrays)
    with pytest.raises(ValueError, match="version 7"):
        read_rest_shape(bad)
    bad.write_bytes(b"truncated")
    with pytest.raises(ValueError, match="bad.npz: not a readable rest-shape file"):
        read_rest_shape(bad)
    p = write_rest_shape(tmp_path / "copy", rest)
    assert p.name == "copy.npz"
    np.testing.assert_array_equal(read_rest_shape(p).rest_length, rest.rest_length)


def test_nodding_head_moves_the_roots_without_stretching_the_hair(optimized):
    # the head nods by 0.35 rad and back over 1 s: the roots move, the hair follows without
    # passing the 1 % strain a user would notice (one implicit step per frame stretched the
    # strands the head pushes by 68 % and stopped the run; the scene takes 4 substeps)
    hair = read_hair(optimized[0])
    sim = hair_on_head(hair)
    solver = sim.make_solver()
    m = solver.model
    st = solver.state()
    roots0 = solver.output(st).positions[m.edge_v0[m.strand_edge_start[:-1]]].copy()
    worst, moved = 0.0, 0.0
    for _ in range(70):
        solver.step(st, st, 1 / 60)
        x = solver.output(st).positions
        ln = np.linalg.norm(x[m.edge_v1] - x[m.edge_v0], axis=1)
        worst = max(worst, float(np.max(np.abs(ln / m.rest_length - 1.0))))
        moved = max(moved, float(np.abs(x[m.edge_v0[m.strand_edge_start[:-1]]] - roots0).max()))
    assert moved > 0.01          # the roots did move with the head
    assert worst < 0.01
