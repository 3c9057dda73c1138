"""The strandlab command line: run, render, scenes, and the exit status of each kind of error."""
import json
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest

import strandlab
from strandlab import cli
from strandlab.cli import main, max_edge_strain, mesh_edge_strains
from strandlab.io.trajectory import load_trajectory

ROOT = Path(__file__).resolve().parents[1]
ROPE = str(ROOT / "examples" / "hanging_rope.toml")


def _rope_dict(**scene) -> dict:
    return {
        "scene": {"name": "tiny", "frames": 2, **scene},
        "materials": {"rope": {"young_modulus": 1e7, "density": 1000.0, "radius": 0.005}},
        "strands": [{"name": "rope", "material": "rope",
                     "line": {"start": [0, 0, 0], "end": [1, 0, 0], "segments": 5}}],
    }


def _write_json(path: Path, data: dict) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_run_writes_trajectory_and_scene_json(tmp_path, capsys):
    out = tmp_path / "rope"
    code = main(["run", ROPE, "--frames", "3", "--out", str(out), "--quiet"])
    assert code == 0
    assert capsys.readouterr().out == ""
    with load_trajectory(out / "trajectory.h5") as traj:
        assert traj.positions.shape == (4, 41, 3)
        assert np.all(np.isfinite(traj.positions[:]))
        assert traj.times[-1] == pytest.approx(3 / 60)
        assert traj.status == "complete"
        assert traj.metadata["solver"]["type"] == "pbd"
    record = json.loads((out / "scene.json").read_text(encoding="utf-8"))
    assert record["name"] == "hanging_rope" and record["frames"] == 3
    assert record["dt"] == pytest.approx(1 / 60)
    assert record["solver"]["settings"]["length_solver"] == "direct"
    assert record["params"]["strands"][0]["name"] == "rope"
    assert record["scene"]["colliders"][0]["type"] == "plane"
    assert record["command_line"]["frames"] == 3 and record["command_line"]["quiet"] is True
    assert record["command_line"]["argv"][:2] == ["run", ROPE]


def test_run_overrides_and_summary(tmp_path, capsys):
    out = tmp_path / "o"
    code = main(["run", ROPE, "--frames", "2", "--dt", "0.01", "--iterations", "3",
                 "--substeps", "2", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "hanging_rope: 2 frames" in text and "steady rate" in text and "ms per step" in text
    assert "first step" in text
    assert "max edge strain" in text and str(out) in text
    record = json.loads((out / "scene.json").read_text(encoding="utf-8"))
    assert record["dt"] == 0.01
    assert record["solver"]["settings"]["iterations"] == 3
    assert record["solver"]["settings"]["substeps"] == 2


def test_default_output_folder_is_runs_scene_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", ROPE, "--frames", "1", "--quiet"]) == 0
    assert (tmp_path / "runs" / "hanging_rope" / "trajectory.h5").is_file()
    assert (tmp_path / "runs" / "hanging_rope" / "scene.json").is_file()


def test_render_writes_images_and_a_video(tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["run", ROPE, "--frames", "2", "--out", str(out), "--render"])
    assert code == 0
    pngs = sorted((out / "frames").glob("*.png"))
    assert len(pngs) == 3
    assert not (out / "video.gif").exists()
    with imageio.get_reader(out / "video.mp4") as reader:
        assert reader.count_frames() == 3
    text = capsys.readouterr().out
    assert str(out / "video.mp4") in text and "renderer: pyvista (shaded tubes" in text


def test_render_options_renderer_camera_colour(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", ROPE, "--frames", "2", "--out", str(out), "--render", "--every", "2",
                 "--renderer", "matplotlib", "--camera", "30,45"]) == 0
    assert len(list((out / "frames").glob("*.png"))) == 2
    assert "renderer: matplotlib (3-D lines), as asked" in capsys.readouterr().out
    assert main(["run", ROPE, "--frames", "1", "--out", str(out), "--render", "--quiet",
                 "--color-by", "strain", "--camera", "20,-60,3"]) == 0
    assert len(list((out / "frames").glob("*.png"))) == 2
    assert main(["run", ROPE, "--frames", "1", "--out", str(out), "--render",
                 "--camera", "10"]) == 2
    assert "--camera: camera must be ELEV,AZIM" in capsys.readouterr().err


def test_malformed_file_returns_2_and_names_the_item(tmp_path, capsys):
    data = _rope_dict()
    data["strands"][0]["line"]["segments"] = 0
    path = _write_json(tmp_path / "bad.json", data)
    assert main(["run", path, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("strandlab: error: bad.json: strands[0].line.segments: must be an "
                          "integer >= 1 (got 0)")
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_syntax_error_and_missing_file_return_2(tmp_path, capsys):
    path = tmp_path / "broken.toml"
    path.write_text("[scene\n", encoding="utf-8")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("strandlab: error: ") and "broken.toml: invalid TOML" in err
    assert main(["run", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert "strandlab: error: scene file" in err and "missing.toml" in err


def test_invalid_options_return_2(capsys):
    assert main(["run", ROPE, "--frames", "0"]) == 2
    assert "--frames" in capsys.readouterr().err
    assert main(["run", ROPE, "--dt", "-1"]) == 2
    assert main(["frobnicate"]) == 2
    assert main([]) == 2


def test_divergence_returns_3(tmp_path, capsys):
    data = _rope_dict(dt=1e3, gravity=[0.0, 0.0, -1e300])
    data["materials"]["rope"]["young_modulus"] = 2e11
    path = _write_json(tmp_path / "boom.json", data)
    assert main(["run", path, "--out", str(tmp_path / "o"), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "strandlab: error: simulation diverged at step" in err and "strand 0" in err
    assert "Traceback" not in err


def test_divergence_message_names_step_and_strand(monkeypatch, tmp_path, capsys):
    def diverge(scene, **kw):
        raise strandlab.SimulationDiverged(step=5, time=0.1, strand=2, point=7)

    monkeypatch.setattr(cli, "simulate", diverge)
    assert main(["run", ROPE, "--out", str(tmp_path / "o"), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "step 5" in err and "strand 2" in err and "point 7" in err
    assert "Traceback" not in err


def test_max_edge_strain():
    # one open strand of 3 vertices and one closed triangle; frame 1 stretches one edge by 10 %
    p0 = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0], [0, 2, 0]], float)
    p1 = p0.copy()
    p1[2, 0] = 2.1
    assert max_edge_strain(np.stack([p0, p1]), [0, 3, 6], [False, True]) == pytest.approx(0.1)
    # the closing edge of a closed strand counts: move vertex 5 on a circle about vertex 4, so
    # that only the closing edge 5 -> 3 changes length (from 1 to sqrt(5))
    p2 = p0.copy()
    p2[5] = [2, 2, 0]
    assert max_edge_strain(np.stack([p0, p2]), [0, 3, 6], [False, True]) == pytest.approx(
        np.sqrt(5.0) - 1.0)
    assert max_edge_strain(np.stack([p0, p2]), [0, 3, 6], [False, False]) == pytest.approx(0.0)
    assert max_edge_strain(np.stack([p0, p0]), [0, 3, 6], [False, True]) == 0.0

def test_mesh_edge_strains_by_kind():
    # a rod edge 0-1, a triangle 0-1-2 sharing it, a tetrahedron 3-4-5-6; frame 1 stretches
    # the rod edge by 2 % (vertex 1 moves along it), frame 2 moves vertex 6 up by 5 %
    p0 = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0],
                   [5, 0, 0], [6, 0, 0], [5, 1, 0], [5, 0, 1]], float)
    p1 = p0.copy()
    p1[1, 0] = 1.02
    p2 = p0.copy()
    p2[6, 2] = 1.05
    seg, tri, tet = [[0, 1]], [[0, 1, 2]], [[3, 4, 5, 6]]
    s = mesh_edge_strains(np.stack([p0, p1, p2]), seg, tri, tet)
    assert set(s) == {"segments", "triangles", "tetrahedra"}
    assert s["segments"] == pytest.approx(0.02)
    # the triangle's edge 1-2 too: from sqrt(2) to sqrt(1.02^2 + 1)
    assert s["triangles"] == pytest.approx(max(0.02, np.hypot(1.02, 1.0) / np.sqrt(2) - 1))
    # the tetrahedron's edges 3-6 (5 %), 4-6 and 5-6 (from sqrt(2) to sqrt(1 + 1.05^2))
    assert s["tetrahedra"] == pytest.approx(0.05)
    # kinds absent are left out; a frame that moves nothing strains nothing
    assert mesh_edge_strains(np.stack([p0, p0]), np.zeros((0, 2)), tri, np.zeros((0, 4))) == {
        "triangles": 0.0}
    assert mesh_edge_strains(np.stack([p0]), np.zeros((0, 2)), np.zeros((0, 3)),
                             np.zeros((0, 4))) == {}


def test_run_summary_names_the_strain_of_mesh_edges(tmp_path, capsys):
    # a mixed scene's trajectory has no strands: the summary gives its mesh edges' strains
    out = tmp_path / "c"
    code = main(["run", "mixed_connection", "--frames", "2", "--out", str(out)])
    assert code == 0
    line = next(t for t in capsys.readouterr().out.splitlines() if "max edge strain" in t)
    assert "strands" not in line
    with load_trajectory(out / "trajectory.h5") as traj:
        want = mesh_edge_strains(traj.extra_points, traj.extra_segments, traj.extra_triangles,
                                 traj.extra_tetrahedra)
    names = {"segments": "rod edges", "triangles": "triangle edges",
             "tetrahedra": "tetrahedron edges"}
    assert want and max(want.values()) > 0.0
    for kind, value in want.items():
        assert f"{names[kind]} {value:.3e}" in line


def test_scenes_lists_every_built_in_scene(capsys):
    from strandlab import scenes
    assert main(["scenes"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(scenes.SCENES)
    for line, (name, entry) in zip(lines, scenes.SCENES.items()):
        assert line.split()[0] == name and line.rstrip().endswith(entry.description)


def test_unknown_scene_returns_2(capsys):
    assert main(["run", "no_such_scene"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("strandlab: error: unknown scene 'no_such_scene'")
    assert "available:" in err and "Traceback" not in err


def test_demo_runs_and_renders(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--frames", "2"]) == 0
    record = json.loads((out / "scene.json").read_text(encoding="utf-8"))
    assert record["name"] == "demo" and record["frames"] == 2
    assert (out / "trajectory.h5").is_file()
    assert sorted((out / "frames").glob("*.png"))
    assert (out / "video.mp4").is_file() and not (out / "video.gif").exists()


def test_schema_prints_the_json_schema_of_scene_files(tmp_path, capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "strandlab scene file" and schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"scene", "solver", "materials", "strands", "frames",
                                         "meshes", "triangle_attachments", "bodies", "loads",
                                         "colliders", "simplicial"}
    line = schema["$defs"]["LineShape"]
    assert line["properties"]["segments"]["minimum"] == 1
    assert set(line["required"]) == {"start", "end", "segments"}
    assert "[s]" in schema["$defs"]["SceneTable"]["properties"]["dt"]["description"]
    colliders = schema["properties"]["colliders"]["items"]
    assert colliders["discriminator"]["propertyName"] == "type"
    assert set(colliders["discriminator"]["mapping"]) == {"plane", "sphere", "capsule"}
    # --out writes the same document to a file and prints nothing
    path = tmp_path / "scene.schema.json"
    assert main(["schema", "--out", str(path)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(path.read_text(encoding="utf-8")) == schema
    assert main(["schema", "--out", str(tmp_path / "no" / "such" / "dir" / "s.json")]) == 1
    assert "cannot write the schema" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["/abs/path", "../../x", ".hidden", "a/b"])
def test_scene_name_that_is_not_a_plain_folder_name_needs_out(tmp_path, monkeypatch, capsys,
                                                              name):
    # a scene name must not write outside runs/
    monkeypatch.chdir(tmp_path)
    path = _write_json(tmp_path / "n.json", _rope_dict(name=name))
    assert main(["run", path, "--quiet"]) == 2
    assert "is not a plain folder name" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists() and not (tmp_path.parent / "x").exists()


def test_rerun_with_fewer_frames_leaves_no_old_frames(tmp_path):
    out = tmp_path / "r"
    assert main(["run", ROPE, "--frames", "4", "--out", str(out), "--render", "--quiet"]) == 0
    assert len(list((out / "frames").glob("frame_*.png"))) == 5
    assert main(["run", ROPE, "--frames", "1", "--out", str(out), "--render", "--quiet"]) == 0
    assert len(list((out / "frames").glob("frame_*.png"))) == 2
    with load_trajectory(out / "trajectory.h5") as traj:
        assert traj.n_frames == 2


def test_unwritable_out_is_found_before_the_simulation(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")

    def never(*a, **k):
        raise AssertionError("the simulation ran before the output folder was checked")

    monkeypatch.setattr(cli, "simulate", never)
    assert main(["run", ROPE, "--out", str(blocker / "sub"), "--quiet"]) == cli.EXIT_OUTPUT
    assert "cannot write to" in capsys.readouterr().err


def test_interrupted_run_leaves_a_readable_trajectory(tmp_path, monkeypatch, capsys):
    from strandlab.io.scenefile import load_scene_file

    sim = load_scene_file(ROPE)
    calls = {"n": 0}

    def stop(solver, state):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt

    sim.on_step = stop
    monkeypatch.setattr(cli, "_load_scene", lambda arg: sim)
    out = tmp_path / "i"
    assert main(["run", ROPE, "--frames", "10", "--out", str(out), "--quiet"]) == 130
    assert "4 frames done" in capsys.readouterr().err
    with load_trajectory(out / "trajectory.h5") as traj:
        assert traj.n_frames == 4 and traj.status.startswith("interrupted")
        assert np.all(np.isfinite(traj.positions[:]))
    record = json.loads((out / "scene.json").read_text(encoding="utf-8"))
    assert record["run"]["status"] == "interrupted" and record["run"]["frames_done"] == 3


def test_diverged_run_is_marked_in_the_trajectory(tmp_path, capsys):
    data = _rope_dict(dt=1e3, gravity=[0.0, 0.0, -1e300], frames=5)
    data["materials"]["rope"]["young_modulus"] = 2e11
    path = _write_json(tmp_path / "boom.json", data)
    out = tmp_path / "o"
    assert main(["run", path, "--out", str(out), "--quiet"]) == 3
    with load_trajectory(out / "trajectory.h5") as traj:
        assert traj.status.startswith("diverged: simulation diverged at step")
        assert np.all(np.isfinite(traj.positions[:]))


def test_too_many_frames_is_a_clear_error(tmp_path, capsys):
    assert main(["run", ROPE, "--frames", "1000000000000", "--out", str(tmp_path / "o"),
                 "--quiet"]) in (cli.EXIT_USAGE, cli.EXIT_OUTPUT)
    err = capsys.readouterr().err
    assert "GiB" in err and "Traceback" not in err


def test_run_summary_and_scene_json_count_the_steps_kept_unconverged(tmp_path, capsys):
    import warnings

    text = (Path(__file__).parents[1] / "examples" / "hanging_rope.toml").read_text()
    head, rest = text.split("[solver]", 1)
    rest = rest.split("[materials.rope]", 1)[1]
    for name, solver, count in (
            ("tight", 'type = "der"\ntolerance = 1e-14\nmax_iterations = 1\n', 3),
            ("loose", 'type = "der"\ntolerance = 1e-3\n', 0),
            ("pbd", 'type = "pbd"\n', None)):
        scene = tmp_path / f"{name}.toml"
        scene.write_text(head + "[solver]\n" + solver + "\n[materials.rope]" + rest)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(["run", str(scene), "--frames", "3", "--out", str(tmp_path / name)]) == 0
        out = capsys.readouterr().out
        record = json.loads((tmp_path / name / "scene.json").read_text())
        assert record["run"]["unconverged_steps"] == count
        kept = [t for t in out.splitlines() if "kept above the Newton tolerance" in t]
        assert kept == ([f"{count} of 3 steps kept above the Newton tolerance (warned above; a "
                         "smaller --dt, or the solver's max_iterations)"] if count else [])


def test_run_summary_and_scene_json_count_the_steps_taken_again(tmp_path, capsys):
    # The hanging rope under DER: its end lands on the floor at about frame 22, a step that
    # one Newton iteration strains by 8 % and that is taken again to a tolerance.
    text = (Path(__file__).parents[1] / "examples" / "hanging_rope.toml").read_text()
    head, rest = text.split("[solver]", 1)
    rest = rest.split("[materials.rope]", 1)[1]
    for name, solver, frames in (("adaptive", "", 30), ("never", "adaptive_strain = inf\n", 30),
                                 ("before", "", 10)):
        scene = tmp_path / f"{name}.toml"
        scene.write_text(head + '[solver]\ntype = "der"\n' + solver + "\n[materials.rope]" + rest)
        assert main(["run", str(scene), "--frames", str(frames), "--out",
                     str(tmp_path / name)]) == 0
        out = capsys.readouterr().out
        count = json.loads((tmp_path / name / "scene.json").read_text())["run"]["adaptive_steps"]
        again = [t for t in out.splitlines() if "taken again" in t]
        if name == "adaptive":
            assert count >= 1
            assert again == [f"{count} of 30 steps taken again to a Newton tolerance where one "
                             "iteration strained an edge (adaptive_strain)"]
        else:
            assert count == 0 and again == []


def test_a_scene_the_solver_refuses_leaves_the_output_folder_as_it_was(tmp_path, capsys):
    """The solver compiles the scene before the output folder is made or cleared: a refused
    run neither creates it nor deletes an earlier run's results in it."""
    out = tmp_path / "rope"
    assert main(["run", ROPE, "--frames", "2", "--out", str(out), "--quiet"]) == 0
    before = sorted(p.name for p in out.iterdir())
    assert main(["run", ROPE, "--solver", "mixed", "--out", str(out), "--quiet"]) == 2
    # the message names the scene file it was read from
    assert f"{ROPE}: solver 'mixed' takes rods as rod edges" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == before
    with load_trajectory(out / "trajectory.h5") as traj:
        assert traj.n_frames == 3 and traj.status == "complete"
    assert main(["run", ROPE, "--solver", "mixed", "--out", str(tmp_path / "new"),
                 "--quiet"]) == 2
    assert not (tmp_path / "new").exists()


def test_a_refused_scene_is_named_by_its_file_or_its_built_in_name(tmp_path, capsys):
    scene = tmp_path / "opt.toml"
    scene.write_text(Path(ROPE).read_text().replace(
        'd1 = [0.0, 0.0, 1.0]', 'd1 = [0.0, 0.0, 1.0]\nder = { stretch_stiffness = [1.0, 2.0] }'))
    assert main(["run", str(scene), "--solver", "der", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    assert capsys.readouterr().err == (f"strandlab: error: {scene}: rope (strand 0): der option "
                                       "'stretch_stiffness' has shape (2,); expected a scalar or "
                                       "(40,)\n")
    assert main(["run", "der_plectoneme", "--solver", "mixed", "--out",
                 str(tmp_path / "p"), "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("strandlab: error: der_plectoneme: solver 'mixed'")


def test_a_closed_pipe_ends_the_command_quietly():
    """``strandlab scenes | head -1``: the reader goes before the listing is written."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "strandlab.cli", "scenes"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141 and err == ""


def test_a_new_run_removes_the_exports_of_the_one_before(tmp_path):
    """Exports written into a run's folder are that run's outputs too: a new run into the
    folder removes them, and keeps what it did not write."""
    out = tmp_path / "r"
    assert main(["run", ROPE, "--frames", "2", "--out", str(out), "--quiet"]) == 0
    for fmt in ("obj", "ply", "vtu", "usd"):
        assert main(["export", str(out), "--format", fmt, "--quiet"]) == 0
    (out / "vtu" / "notes.txt").write_text("mine")
    assert main(["run", ROPE, "--frames", "1", "--out", str(out), "--quiet"]) == 0
    assert [p.name for p in (out / "vtu").iterdir()] == ["notes.txt"]
    assert not list((out / "obj").iterdir()) and not list((out / "ply").iterdir())
    assert not (out / "trajectory.usd").exists()


def _a_complete_run(out: Path) -> list:
    assert main(["run", ROPE, "--frames", "2", "--out", str(out), "--quiet"]) == 0
    return sorted(p.name for p in out.iterdir())


def _still_complete(out: Path, before: list) -> None:
    assert sorted(p.name for p in out.iterdir()) == before
    with load_trajectory(out / "trajectory.h5") as traj:
        assert traj.n_frames == 3 and traj.status == "complete"


def test_a_step_the_settings_cannot_take_is_refused_before_the_folder_is_touched(tmp_path,
                                                                                 capsys):
    out = tmp_path / "r"
    before = _a_complete_run(out)
    data = _rope_dict()
    data["solver"] = {"type": "pbd", "damping": 1e6}
    scene = _write_json(tmp_path / "d.json", data)
    code = main(["run", scene, "--out", str(out), "--quiet"])
    assert code == 2 and f"{scene}: damping = 1000000.0 1/s is too large" in capsys.readouterr().err
    _still_complete(out, before)


def test_more_frames_than_the_disk_holds_are_refused_before_the_folder_is_touched(tmp_path,
                                                                                  capsys):
    out = tmp_path / "r"
    before = _a_complete_run(out)
    assert main(["run", ROPE, "--frames", str(10 ** 12), "--out", str(out), "--quiet"]) == 2
    assert "1,000,000,000,001 frames need about" in capsys.readouterr().err
    _still_complete(out, before)


def test_a_checkpoint_of_another_scene_is_refused_before_the_folder_is_touched(tmp_path,
                                                                               capsys):
    other = tmp_path / "other"
    assert main(["run", _write_json(tmp_path / "t.json", _rope_dict()), "--frames", "2",
                 "--checkpoint-every", "1", "--out", str(other), "--quiet"]) == 0
    out = tmp_path / "r"
    before = _a_complete_run(out)
    code = main(["run", ROPE, "--resume", str(other / "checkpoints" / "frame_000001.npz"),
                 "--out", str(out), "--quiet"])
    assert code == 2 and "checkpoint" in capsys.readouterr().err
    _still_complete(out, before)
    assert main(["run", ROPE, "--resume", str(other / "checkpoints" / "frame_000001.npz"),
                 "--out", str(tmp_path / "new"), "--quiet"]) == 2
    assert not (tmp_path / "new").exists()


def test_an_empty_output_path_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", ROPE, "--out", "", "--quiet"]) == 2
    assert "an empty path" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_scene_json_of_a_run_of_one_step_is_valid_json(tmp_path):
    out = tmp_path / "r"
    assert main(["run", ROPE, "--frames", "1", "--out", str(out), "--quiet"]) == 0
    text = (out / "scene.json").read_text()
    record = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in scene.json"))
    assert record["run"]["steps"] == 1 and record["run"]["steady_step_ms"] is None


def test_hair_options_that_would_be_ignored_are_refused(tmp_path, capsys):
    assert main(["run", ROPE, "--scale", "2", "--out", str(tmp_path / "a"), "--quiet"]) == 2
    assert "--scale applies to hair files" in capsys.readouterr().err
    hair = tmp_path / "h.hair"
    assert main(["hair", "generate", "--style", "straight", "--strands", "2", "--vertices", "5",
                 "--out", str(hair)]) == 0
    (tmp_path / "rest.npz").write_bytes(b"")
    assert main(["run", str(hair), "--rest", str(tmp_path / "rest.npz"), "--solver", "pbd",
                 "--out", str(tmp_path / "b"), "--quiet"]) == 2
    assert "--rest is a rest shape of discrete elastic rods (solver 'der'); the 'pbd' solver " \
           "would not use it" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
