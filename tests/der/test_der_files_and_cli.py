"""The DER solver from scene files and the command line: the same scene runs on either solver,
and the outputs carry the solver's name, settings and material frames."""
import json
from pathlib import Path

import numpy as np
import pytest

from strandlab.cli import main
from strandlab.io.scenefile import scene_from_dict
from strandlab.io.trajectory import load_trajectory

ROOT = Path(__file__).resolve().parents[2]
ROPE = str(ROOT / "examples" / "hanging_rope.toml")


def _file(**solver) -> dict:
    return {
        "scene": {"name": "der_rope", "frames": 3, "dt": 0.01, "gravity": [0, 0, -9.81]},
        "solver": {"type": "der", **solver},
        "materials": {"rope": {"young_modulus": 1e6, "density": 1000.0, "radius": 0.005,
                               "shear_modulus": 3.3e5}},
        "strands": [{"name": "rope", "material": "rope",
                     "line": {"start": [0, 0, 0], "end": [1, 0, 0], "segments": 10},
                     "der": {"bend_stiffness": 2e-4, "rest_twist": [0.0] * 9}}],
        "frames": [{"origin": [0, 0, 0], "attach": [{"strand": "rope", "end": 0}]}],
    }


def test_scene_file_selects_der_and_its_settings_and_strand_options():
    sim = scene_from_dict(_file(damping=2.0, newton_iterations=2))
    assert sim.solver == "der"
    assert sim.settings.damping == 2.0 and sim.settings.newton_iterations == 2
    solver = sim.make_solver()
    np.testing.assert_allclose(solver.model.bend_stiffness, 2e-4)


@pytest.mark.parametrize("bad, match", [
    ({"iterations": 3}, "unknown key 'iterations' for solver 'der'; allowed: .*newton_iterations"),
    ({"linear_solver": "lu"}, "linear_solver"),
    ({"damping": -1.0}, "damping"),
])
def test_bad_der_settings_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        scene_from_dict(_file(**bad))


def test_bad_der_strand_option_is_named():
    data = _file()
    data["strands"][0]["der"] = {"bend_stifness": 1.0}
    with pytest.raises(ValueError, match="bend_stifness"):
        scene_from_dict(data)


def test_cli_runs_a_pbd_scene_file_with_the_der_solver(tmp_path):
    out = tmp_path / "rope"
    code = main(["run", ROPE, "--solver", "der", "--frames", "3", "--out", str(out),
                 "--quiet"])
    assert code == 0
    with load_trajectory(out / "trajectory.h5") as traj:
        assert traj.metadata["solver"]["type"] == "der"
        assert traj.status == "complete"
        x = traj.positions[:]
        d1 = traj.d1[:]
    # the clamped root holds, the rope falls, d1 stays unit and perpendicular to its edge
    np.testing.assert_allclose(x[:, 0], np.broadcast_to(x[0, 0], x[:, 0].shape), atol=1e-12)
    assert x[-1, -1, 2] < x[0, -1, 2]
    e = np.diff(x[-1], axis=0)
    np.testing.assert_allclose(np.linalg.norm(d1[-1], axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(np.einsum("ij,ij->i", d1[-1], e), 0.0, atol=1e-9)
    record = json.loads((out / "scene.json").read_text(encoding="utf-8"))
    assert record["solver"]["type"] == "der"


def test_cli_refuses_an_unknown_solver(tmp_path, capsys):
    code = main(["run", ROPE, "--solver", "fem", "--frames", "1", "--out",
                 str(tmp_path / "x"), "--quiet"])
    assert code == 2
    assert "unknown solver 'fem'" in capsys.readouterr().err
