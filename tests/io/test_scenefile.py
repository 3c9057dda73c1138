"""Scene files: the examples load and run, dicts round-trip, and every kind of malformed input
is reported with the file name and the path of the offending item."""
import copy
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from strandlab.io.scenefile import load_scene_file, scene_from_dict
from strandlab.pbd import compile_scene
from strandlab.sim.runner import simulate

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def _base() -> dict:
    """A small valid scene: a rope clamped by a frame above a plane."""
    return {
        "scene": {"name": "small", "dt": 0.01, "frames": 5, "view": [10.0, -45.0]},
        "solver": {"iterations": 4, "length_solver": "direct"},
        "materials": {"rope": {"young_modulus": 5e7, "density": 1100.0, "radius": 0.004}},
        "strands": [
            {"name": "rope", "material": "rope",
             "line": {"start": [0.0, 0.0, 0.5], "end": [0.5, 0.0, 0.5], "segments": 8}},
            {"name": "ring", "material": "rope",
             "circle": {"radius": 0.1, "segments": 12, "center": [0.0, 1.0, 0.5]}},
        ],
        "frames": [{"origin": [0.0, 0.0, 0.5], "attach": [{"strand": "rope", "end": 0}]}],
        "colliders": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
                       "friction": 0.5}],
    }


def _error(data: dict, *, source: str = "scene.toml") -> str:
    with pytest.raises(ValueError) as info:
        scene_from_dict(data, source=source)
    return str(info.value)


# ---------------------------------------------------------------------------------- examples
def test_there_are_the_examples():
    assert {p.name for p in EXAMPLES} >= {"hanging_rope.toml", "twisted_cable.toml",
                                          "tree.toml", "pulled_rope.toml", "flag.toml",
                                          "sign.toml", "pennant.toml"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_loads_and_runs(path):
    scene = load_scene_file(path)
    assert scene.name == path.stem
    assert scene.description
    traj = simulate(scene.with_overrides(frames=3))
    if scene.solver == "mixed":      # a simplicial mesh: its vertices are extra points
        n_mesh = sum(len(m.vertices) for m in scene.scene.simplicial)
        assert traj.positions.shape == (4, 0, 3) and traj.extra_points.shape[1] >= n_mesh
        assert np.all(np.isfinite(traj.extra_points))
    else:
        assert traj.positions.shape == (4, compile_scene(scene.scene).n_vertices, 3)
        assert np.all(np.isfinite(traj.positions))
    assert traj.times[-1] == pytest.approx(3 * scene.steps_per_frame * scene.dt)


def test_hanging_rope_contents():
    scene = load_scene_file(ROOT / "examples" / "hanging_rope.toml")
    m = compile_scene(scene.scene)
    assert m.n_strands == 1 and len(m.planes) == 1
    assert len(m.frame_origin) == 1 and np.allclose(m.frame_origin[0], [0.0, 0.0, 0.6])
    assert not scene.scene.frames[0].motion.moves


def test_twisted_cable_turns_one_clamp_about_the_cable_axis():
    scene = load_scene_file(ROOT / "examples" / "twisted_cable.toml")
    m = compile_scene(scene.scene)
    assert len(m.frame_origin) == 2
    x = m.x0[:m.n_vertices]
    axis = (x[-1] - x[0]) / np.linalg.norm(x[-1] - x[0])
    w = [getattr(f.motion, "angular_velocity", np.zeros(3)) for f in scene.scene.frames]
    assert not np.any(w[0])
    assert np.linalg.norm(w[1]) == pytest.approx(2.0)
    assert np.allclose(w[1] / np.linalg.norm(w[1]), axis)


def test_tree_joins_three_strands_through_a_body():
    scene = load_scene_file(ROOT / "examples" / "tree.toml")
    assert compile_scene(scene.scene).n_strands == 3
    assert scene.params["bodies"][0]["position"] == [0.0, 0.0, 0.5]
    assert len(scene.params["bodies"][0]["attach"]) == 3


def test_complete_example_of_the_documentation_loads():
    text = (ROOT / "docs" / "scene-format.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert blocks
    data = tomllib.loads(blocks[-1])
    assert set(data) == {"scene", "solver", "materials", "strands", "frames", "meshes",
                         "triangle_attachments", "bodies", "loads", "colliders"}
    scene = scene_from_dict(data, source="scene-format.md")
    assert compile_scene(scene.scene).n_strands == len(data["strands"])
    assert [c["type"] for c in [c.to_dict() for c in scene.scene.colliders]] == ["plane", "sphere", "capsule"]
    traj = simulate(scene.with_overrides(frames=2))
    assert np.all(np.isfinite(traj.positions))


def test_examples_conform_to_the_json_schema():
    import jsonschema

    from strandlab.io.scenefile import scene_json_schema

    validator = jsonschema.Draft202012Validator(scene_json_schema())
    text = (ROOT / "docs" / "scene-format.md").read_text(encoding="utf-8")
    files = [tomllib.loads(p.read_text(encoding="utf-8")) for p in EXAMPLES]
    files.append(tomllib.loads(re.findall(r"```toml\n(.*?)```", text, re.S)[-1]))
    for data in files:
        assert not list(validator.iter_errors(data))
    # and the schema refuses what the loader refuses
    bad = _base()
    bad["strands"][0]["colour"] = "red"
    assert list(validator.iter_errors(bad))
    bad = _base()
    bad["colliders"][0]["type"] = "cone"
    assert list(validator.iter_errors(bad))
    bad = _base()
    bad["strands"][1]["circle"]["segments"] = 2
    assert list(validator.iter_errors(bad))


# ---------------------------------------------------------------------------------- round trip
def test_dict_round_trip():
    data = _base()
    scene = scene_from_dict(data)
    assert scene.name == "small" and scene.frames == 5 and scene.dt == 0.01
    assert scene.view == (10.0, -45.0)
    assert scene.settings.iterations == 4 and scene.settings.length_solver == "direct"
    assert compile_scene(scene.scene).n_strands == 2 and bool(compile_scene(scene.scene).strand_closed[1])
    # params is the input, JSON-serialisable, and rebuilds the same scene
    assert scene.params == data and scene.params is not data
    again = scene_from_dict(json.loads(json.dumps(scene.params)))
    assert np.array_equal(compile_scene(again.scene).x0, compile_scene(scene.scene).x0)
    assert again.to_dict() == scene.to_dict()


def test_defaults():
    data = _base()
    del data["scene"], data["solver"]
    scene = scene_from_dict(data)
    assert scene.name == "scene" and scene.dt == pytest.approx(1 / 60)
    assert scene.frames == 120 and scene.steps_per_frame == 1
    assert np.allclose(compile_scene(scene.scene).gravity, [0.0, 0.0, -9.81])
    assert scene.settings.iterations == 10


def test_json_file_matches_toml_file(tmp_path):
    toml_scene = load_scene_file(ROOT / "examples" / "tree.toml")
    path = tmp_path / "my_tree.json"
    data = copy.deepcopy(toml_scene.params)
    del data["scene"]["name"]
    path.write_text(json.dumps(data), encoding="utf-8")
    json_scene = load_scene_file(path)
    assert json_scene.name == "my_tree"
    assert np.array_equal(compile_scene(json_scene.scene).x0, compile_scene(toml_scene.scene).x0)
    assert json_scene.settings == toml_scene.settings


def test_shapes_rotations_meshes_and_bodies():
    data = _base()
    data["strands"].append({"name": "spring", "material": "rope", "fixed": [0, -1],
                            "helix": {"radius": 0.05, "pitch": 0.02, "turns": 2.0,
                                      "segments": 30, "center": [1.0, 0.0, 0.3]},
                            "pbd": {"alpha": 0.5}, "velocity": [0.0, 0.1, 0.0]})
    data["strands"].append({"name": "pendulum", "material": "rope",
                            "points": [[2.0, 0.0, 0.6], [2.0, 0.0, 0.5], [2.0, 0.0, 0.4]]})
    data["frames"].append({"origin": [2.0, 0.0, 0.6], "rotvec": [0.0, 0.0, np.pi / 2],
                           "attach": [{"strand": 3, "end": 0, "orientation": False}]})
    data["meshes"] = [{"name": "cube", "box": {"center": [2.0, 0.0, 0.35], "size": 0.1},
                       "mass": 0.05, "collide_radius": 0.005}]
    data["triangle_attachments"] = [{"strand": "pendulum", "mesh": "cube", "triangle": 2,
                                     "end": -1}]
    scene = scene_from_dict(data)
    m = compile_scene(scene.scene)
    assert m.n_strands == 4
    assert np.allclose(m.frame_rotation[1], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)
    assert len(m.mesh_triangles) == 12
    spring = m.strand_vertices(2)
    assert m.inv_mass[spring][0] == 0.0 and m.inv_mass[spring][-1] == 0.0
    assert np.allclose(m.v0[spring][1], [0.0, 0.1, 0.0])


# ---------------------------------------------------------------------------------- malformed
def test_unknown_section():
    data = _base()
    data["strand"] = []
    msg = _error(data)
    assert msg.startswith("scene.toml: ") and "unknown section 'strand'" in msg
    assert "strands" in msg


@pytest.mark.parametrize("where, key, path, allowed", [
    (("scene",), "fps", "scene", "name, description, dt, frames, steps_per_frame, gravity, view"),
    (("solver",), "tolerance", "solver", "type, iterations, substeps, order"),
    (("materials", "rope"), "colour", "materials.rope", "young_modulus, density, radius"),
    (("strands", 1), "colour", "strands[1]", "name, material, points, line, helix, circle"),
    (("strands", 0, "line"), "count", "strands[0].line", "start, end, segments"),
    (("strands", 0), "pbd", "strands[0].pbd", "alpha, ghost_distance, ghost_mass_ratio"),
    (("frames", 0), "velocity", "frames[0]", "origin, rotation, rotvec, linear_velocity"),
    (("frames", 0, "attach", 0), "side", "frames[0].attach[0]", "strand, end, orientation"),
    (("colliders", 0), "radius", "colliders[0]", "type, point, normal, friction"),
])
def test_unknown_key(where, key, path, allowed):
    data = _base()
    table = data
    for w in where:
        table = table[w]
    if key == "pbd":  # an unknown key inside the strand's solver options
        table, key = table.setdefault("pbd", {}), "stiffness"
    table[key] = 1
    msg = _error(data)
    assert msg.startswith(f"scene.toml: {path}: unknown key {key!r}")
    assert "; allowed: " in msg and allowed in msg


@pytest.mark.parametrize("old, new", [("ghost_direction", "d1"), ("alpha", "pbd.alpha"),
                                      ("ghost_distance", "pbd.ghost_distance"),
                                      ("ghost_mass_ratio", "pbd.ghost_mass_ratio")])
def test_former_strand_keys_name_their_new_place(old, new):
    data = _base()
    data["strands"][0][old] = 0.5
    assert f"scene.toml: strands[0]: unknown key {old!r} (now {new}); allowed:" in _error(data)


def test_pbd_strand_options_and_d1_reach_the_model():
    data = _base()
    data["strands"] = [{"material": "rope", "d1": [0.0, 1.0, 0.0],
                        "line": {"start": [0.0, 0.0, 0.5], "end": [0.5, 0.0, 0.5],
                                 "segments": 8},
                        "pbd": {"alpha": [0.2, 0.3, 0.4], "ghost_distance": 0.05,
                                "ghost_mass_ratio": 0.5}}]
    data["frames"] = []
    m = compile_scene(scene_from_dict(data).scene)
    assert np.allclose(m.oe_alpha, [0.2, 0.3, 0.4])
    assert np.allclose(m.ghost_rest_distance, 0.05)
    # the first ghost point: edge midpoint + ghost_distance * d1
    assert np.allclose(m.x0[m.edge_ghost[0]], [0.5 / 16, 0.05, 0.5])
    edge_mass = 1100.0 * np.pi * 0.004 ** 2 * (0.5 / 8)  # rho A l [kg]
    assert m.mass[m.edge_ghost[0]] == pytest.approx(0.5 * edge_mass)
    # one number sets all three alphas
    data["strands"][0]["pbd"] = {"alpha": 0.7}
    assert np.allclose(compile_scene(scene_from_dict(data).scene).oe_alpha, 0.7)


def test_solver_type():
    data = _base()
    data["solver"]["type"] = "pbd"
    assert scene_from_dict(data).settings.iterations == 4
    data["solver"]["type"] = "fem"
    assert _error(data) == "scene.toml: solver.type: unknown solver 'fem'; known: csm, der, mixed, pbd"
    data["solver"]["type"] = 3
    assert _error(data) == "scene.toml: solver.type: must be a string (got 3)"


@pytest.mark.parametrize("solver,keys", [("pbd", ("max_strain", "max_speed")),
                                         ("der", ("max_strain", "max_speed", "adaptive_strain")),
                                         ("csm", ("max_strain", "max_speed"))])
def test_inf_is_a_bound_that_does_not_bind(solver, keys):
    # docs/scene-format.md: `inf` (TOML) disables a bound, as None (JSON null) does
    for key in keys:
        data = _base()
        data["solver"] = {"type": solver, key: float("inf")}
        sim = scene_from_dict(data)
        assert getattr(sim.settings, key) == float("inf")
        data["solver"][key] = None
        assert getattr(scene_from_dict(data).settings, key) is None
        data["solver"][key] = -float("inf")
        assert f"{key} must be" in _error(data)
    data = _base()
    data["strands"] = data["strands"][:1]         # the open rope: every solver models it
    data["solver"] = {"type": solver, **{k: float("inf") for k in keys}}
    sim = scene_from_dict(data).with_overrides(frames=2)
    assert np.isfinite(simulate(sim).positions).all()


def test_unknown_material():
    data = _base()
    data["strands"][1]["material"] = "steel"
    msg = _error(data)
    assert msg == "scene.toml: strands[1].material: unknown material; available: 'rope' " \
                  "(got 'steel')"


@pytest.mark.parametrize("ref, expected", [
    ("rop", "unknown strand; available: 'rope', 'ring' (got 'rop')"),
    (5, "index out of range: there are 2 strands (got 5)"),
    (-3, "index out of range: there are 2 strands (got -3)"),
])
def test_unknown_strand(ref, expected):
    data = _base()
    data["frames"][0]["attach"][0]["strand"] = ref
    assert _error(data) == f"scene.toml: frames[0].attach[0].strand: {expected}"


def test_unknown_mesh_and_triangle():
    data = _base()
    data["meshes"] = [{"name": "cube", "box": {"center": [0, 0, 0], "size": 0.1}, "mass": 1.0}]
    data["triangle_attachments"] = [{"strand": "rope", "mesh": "box", "triangle": 0}]
    assert _error(data) == ("scene.toml: triangle_attachments[0].mesh: unknown mesh; "
                            "available: 'cube' (got 'box')")
    data["triangle_attachments"][0].update(mesh="cube", triangle=12)
    assert _error(data) == ("scene.toml: triangle_attachments[0].triangle: must be a triangle "
                            "index in [0, 11] of mesh 'cube' (got 12)")


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["strands"][1]["circle"].update(segments=0),
     "strands[1].circle.segments: must be an integer >= 3 (got 0)"),
    (lambda d: d["strands"][0]["line"].update(segments=0),
     "strands[0].line.segments: must be an integer >= 1 (got 0)"),
    (lambda d: d["strands"][0]["line"].update(segments=8.0),
     "strands[0].line.segments: must be an integer >= 1 (got 8.0)"),
    (lambda d: d["scene"].update(dt="fast"), "scene.dt: must be a finite number > 0 (got 'fast')"),
    (lambda d: d["scene"].update(dt=-1.0), "scene.dt: must be a finite number > 0 (got -1.0)"),
    (lambda d: d["scene"].update(dt=float("inf")), "scene.dt: must be a finite number > 0 "
                                                   "(got inf)"),
    (lambda d: d["scene"].update(name=3), "scene.name: must be a non-empty string (got 3)"),
    (lambda d: d["scene"].update(name=" "), "scene.name: must be a non-empty string (got ' ')"),
    (lambda d: d["solver"].update(iterations=2.5), "solver.iterations: must be an integer "
                                                   "(got 2.5)"),
    (lambda d: d["solver"].update(self_collision="yes"), "solver.self_collision: must be true "
                                                          "or false (got 'yes')"),
    (lambda d: d["materials"]["rope"].update(radius=True), "materials.rope.radius: must be a "
                                                            "finite number > 0 (got True)"),
    (lambda d: d["materials"]["rope"].update(poisson_ratio=np.float64(0.7)),
     "materials.rope.poisson_ratio: must be a number in (-1, 0.5] (got 0.7)"),
    (lambda d: d["strands"][0].update(closed=1), "strands[0].closed: must be true or false "
                                                 "(got 1)"),
    (lambda d: d["frames"][0]["attach"][0].update(end=1), "frames[0].attach[0].end: must be 0 "
                                                          "(first vertex) or -1 (last vertex) "
                                                          "(got 1)"),
    (lambda d: d.update(strands={"material": "rope"}), "strands: must be an array of tables "
                                                       "[[strands]] (got {'material': 'rope'})"),
    (lambda d: d["strands"].append(1), "strands[2]: must be a table (got 1)"),
    (lambda d: d.update(materials=[]), "materials: must be a table of named materials (got [])"),
    (lambda d: d["colliders"][0].update(type="cone"), "colliders[0].type: must be one of "
                                                      "'plane', 'sphere', 'capsule' (got 'cone')"),
    (lambda d: d["colliders"][0].update(normal=[0, 0, 0]), "colliders[0].normal: must be a "
                                                           "non-zero vector (got [0, 0, 0])"),
    (lambda d: d["strands"][0].update(pbd={"alpha": [0.5, 2.0, 0.5]}),
     "strands[0].pbd.alpha[1]: must be a number in [0, 1] (got 2.0)"),
    (lambda d: d["strands"][0].update(pbd={"alpha": -0.5}),
     "strands[0].pbd.alpha: must be a number in [0, 1] (got -0.5)"),
    (lambda d: d["strands"][0].update(fixed=[0, 9]),
     "strands[0].fixed[1]: must be a vertex index in [-9, 8] (got 9)"),
    (lambda d: d["strands"][0].update(csm={"half_width": 0}),
     "strands[0].csm.half_width: must be an integer >= 1 (got 0)"),
    (lambda d: d["strands"][0].update(csm={"twist_half_width": [1, 0, 2]}),
     "strands[0].csm.twist_half_width[1]: must be an integer >= 1 (got 0)"),
])
def test_wrong_type_or_value(edit, expected):
    data = _base()
    edit(data)
    assert _error(data) == f"scene.toml: {expected}"


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["scene"].update(gravity=[0, -9.81]), "scene.gravity: must be a list of 3 "
                                                      "numbers [x, y, z] (got [0, -9.81])"),
    (lambda d: d["scene"].update(view=[1, 2, 3]), "scene.view: must be a list of 2 numbers "
                                                  "[elevation, azimuth] (got [1, 2, 3])"),
    (lambda d: d["frames"][0].update(origin=[0, 0, "z"]), "frames[0].origin[2]: must be a "
                                                          "finite number (got 'z')"),
    (lambda d: d["strands"][0].update(points=[[0, 0, 0], [1, 0, 0]]),
     "strands[0]: needs exactly one of points, line, helix, circle; got points, line"),
    (lambda d: d["strands"][0].pop("line"), "strands[0]: needs exactly one of points, line, "
                                            "helix, circle; got none"),
    (lambda d: d["frames"][0].update(rotation=[[1, 0, 0], [0, 1, 0]]),
     "frames[0].rotation: must be 3 rows of 3 numbers (a rotation matrix) (got [[1, 0, 0], "
     "[0, 1, 0]])"),
    (lambda d: d["strands"][0].update(rest_points=[[0, 0, 0], [1, 0, 0]]),
     "strands[0].rest_points: must have 9 points, one per vertex; it has 2 (got [[0.0, 0.0, "
     "0.0], [1.0, 0.0, 0.0]])"),
    (lambda d: d["strands"][0].update(d1=[[0.0, 0.0, 1.0]] * 3),
     "strands[0].d1: must be one vector or 8 (one per edge); it has 3 (got [[0.0, 0.0, 1.0], "
     "[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])"),
])
def test_wrong_shape(edit, expected):
    data = _base()
    edit(data)
    assert _error(data) == f"scene.toml: {expected}"


def test_long_values_are_shortened_and_numpy_values_shown_plainly():
    data = _base()
    data["strands"][0]["rest_points"] = np.zeros((20, 3))
    msg = _error(data)
    assert msg.startswith("scene.toml: strands[0].rest_points: must have 9 points, one per "
                          "vertex; it has 20 (got [[0.0, 0.0, 0.0], ")
    assert msg.endswith("...)") and len(msg) < 160
    data = _base()
    data["scene"]["frames"] = np.int64(-2)
    assert _error(data) == "scene.toml: scene.frames: must be an integer >= 1 (got -2)"


def test_number_of_further_errors_is_mentioned():
    data = _base()
    data["strands"][0]["line"].update(segments=0, start="x")
    data["scene"]["dt"] = 0.0
    msg = _error(data)
    assert msg == ("scene.toml: scene.dt: must be a finite number > 0 (got 0.0) "
                   "[and 2 more errors]")


def test_points_with_two_coordinates():
    data = _base()
    data["strands"][0] = {"material": "rope", "points": [[0, 0, 0], [1, 0]]}
    assert _error(data) == ("scene.toml: strands[0].points[1]: must be a list of 3 numbers "
                            "[x, y, z] (got [1, 0])")


def test_missing_required_keys():
    data = _base()
    del data["strands"][0]["material"]
    assert _error(data) == "scene.toml: strands[0].material: is required"
    data = _base()
    del data["materials"]["rope"]["density"]
    assert _error(data) == "scene.toml: materials.rope.density: is required"
    data = _base()
    del data["materials"]["rope"]["radius"]
    assert _error(data) == ("scene.toml: materials.rope.radius: is required for a round section "
                            "(or give width and thickness)")
    data = _base()
    del data["colliders"][0]["normal"]
    assert _error(data) == "scene.toml: colliders[0].normal: is required"
    data = _base()
    del data["colliders"][0]["type"]
    assert _error(data) == ("scene.toml: colliders[0].type: is required: one of 'plane', "
                            "'sphere', 'capsule'")


def test_conflicting_and_duplicate_items():
    data = _base()
    data["strands"][1]["closed"] = False
    assert _error(data) == "scene.toml: strands[1].closed: cannot be false for a circle (got False)"
    data = _base()
    data["strands"][1]["name"] = "rope"
    assert _error(data) == ("scene.toml: strands[1].name: must be unique; already used by "
                            "strands[0] (got 'rope')")
    data = _base()
    data["frames"][0].update(rotation=np.eye(3).tolist(), rotvec=[0, 0, 0])
    assert _error(data) == "scene.toml: frames[0]: may give rotation or rotvec, not both"
    data = _base()
    data["meshes"] = [{"box": {"center": [0, 0, 0], "size": 0.1}, "vertices": [[0, 0, 0]] * 3,
                       "mass": 1.0}]
    assert _error(data) == "scene.toml: meshes[0]: may give box or vertices + triangles, not both"
    data = _base()
    data["materials"]["rope"]["width"] = 0.01
    assert _error(data) == ("scene.toml: materials.rope: a rectangular section needs both width "
                            "and thickness")


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["solver"].update(order="backwards"), "solver: unknown order 'backwards'"),
    (lambda d: d["solver"].update(iterations=0), "solver: iterations must be an integer >= 1"),
    (lambda d: d["strands"][0]["line"].update(end=[0.0, 0.0, 0.5]),
     "strands[0]: line start and end coincide"),
    (lambda d: d["frames"][0].update(rotation=[[1, 0, 0], [0, 1, 0], [0, 0, 2]]),
     "frames[0]: frame 0 rotation: not a proper rotation"),
    (lambda d: d["frames"][0]["attach"].append({"strand": "ring"}),
     "frames[0].attach[1]: ring is closed and has no ends"),
    (lambda d: d["frames"][0].update(start=2.0, stop=1.0),
     "frames[0]: frame 0: motion window [2, 1] is invalid"),
    (lambda d: d["strands"][0].update(d1=[1.0, 0.0, 0.0]), "parallel to the first edge"),
])
def test_errors_of_the_builder_are_prefixed_with_the_item(edit, expected):
    data = _base()
    edit(data)
    msg = _error(data)
    assert msg.startswith("scene.toml: ") and expected in msg


def test_empty_scene():
    assert "scene is empty" in _error({"scene": {"name": "nothing"}})


# ---------------------------------------------------------------------------------- files
def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        load_scene_file(tmp_path / "nope.toml")


def test_unsupported_suffix(tmp_path):
    path = tmp_path / "scene.yaml"
    path.write_text("scene: {}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"scene\.yaml: unsupported scene file type '\.yaml'"):
        load_scene_file(path)


def test_toml_syntax_error(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[scene]\nname = \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.toml: invalid TOML"):
        load_scene_file(path)


def test_json_syntax_error_and_wrong_top_level(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"scene": {', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: invalid JSON"):
        load_scene_file(path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: the top level must be a JSON object"):
        load_scene_file(path)


@pytest.mark.parametrize("name, text", [("deep.json", '{"scene": ' + "[" * 100000 + "]" * 100000
                                          + "}"),
                                         ("deep.toml", "x = " + "[" * 100000 + "]" * 100000)])
def test_a_file_nested_past_the_parsers_depth_is_named(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{name.replace('.', '[.]')}: tables or arrays nested "
                                         "too deeply to be a scene file"):
        load_scene_file(path)


def test_unreadable_file(tmp_path):
    path = tmp_path / "folder.toml"
    path.mkdir()
    with pytest.raises(ValueError, match=r"folder\.toml: cannot read scene file"):
        load_scene_file(path)


def test_errors_in_a_file_name_the_file(tmp_path):
    path = tmp_path / "scene.toml"
    path.write_text("[materials.rope]\nyoung_modulus = 1e7\ndensity = 1000.0\nradius = 0.01\n"
                    "[[strands]]\nmaterial = \"rope\"\n"
                    "line = { start = [0, 0, 0], end = [1, 0, 0], segments = 0 }\n",
                    encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_scene_file(path)
    assert str(info.value) == ("scene.toml: strands[0].line.segments: must be an integer >= 1 "
                               "(got 0)")


# ---------------------------------------------------------------------------------- scene features
# References: docs/scene-format.md (keyframes, attachment free_twist and slide_axis, strand radius
# and friction, [[loads]]); each key reaches the builder unchanged, so the built scene holds the
# values of the file (the behaviour itself is tested in tests/sim/test_scene_features.py and
# tests/sim/test_motion.py).
def _keyframed(**extra) -> dict:
    data = _base()
    kf = {"times": [0.0, 0.05, 0.1], "origins": [[0.0, 0.0, 0.5], [0.1, 0.0, 0.5],
                                                   [0.1, 0.1, 0.6]]}
    kf.update(extra)
    data["frames"][0] = {"keyframes": kf, "attach": [{"strand": "rope", "end": 0}]}
    return data


def test_keyframed_frame_moves_the_clamped_end_through_the_keys():
    from scipy.spatial.transform import Rotation

    rotvecs = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.5], [0.0, 0.3, 1.0]]
    scene = scene_from_dict(_keyframed(rotvecs=rotvecs))
    motion = scene.scene.frames[0].motion
    assert motion.moves and np.array_equal(motion.times, [0.0, 0.05, 0.1])
    assert np.allclose(motion.rotations, Rotation.from_rotvec(rotvecs).as_matrix(), atol=1e-15)
    traj = simulate(scene.with_overrides(frames=10))
    # the clamped first vertex, at the origin of the frame, passes through the key origins
    for t, o in ((0.05, [0.1, 0.0, 0.5]), (0.1, [0.1, 0.1, 0.6])):
        k = int(round(t / scene.dt))
        assert np.allclose(traj.positions[k, 0], o, atol=1e-12)
    # rotations as matrices give the same motion
    mats = Rotation.from_rotvec(rotvecs).as_matrix().tolist()
    same = scene_from_dict(_keyframed(rotations=mats)).scene.frames[0].motion
    assert np.allclose(same.pose(0.07)[0], motion.pose(0.07)[0], atol=1e-12)


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["frames"][0]["keyframes"].update(times=[0.0, 0.1, 0.1]),
     "frames[0].keyframes.times[2]: must be greater than the previous time (0.1) (got 0.1)"),
    (lambda d: d["frames"][0]["keyframes"].update(origins=[[0.0, 0.0, 0.5]] * 2),
     "frames[0].keyframes.origins: must have 3 entries, one per time; it has 2 (got [[0.0, "
     "0.0, 0.5], [0.0, 0.0, 0.5]])"),
    (lambda d: d["frames"][0]["keyframes"].update(rotvecs=[[0, 0, 0]] * 3,
                                                  rotations=[np.eye(3).tolist()] * 3),
     "frames[0].keyframes: may give rotations or rotvecs, not both"),
    (lambda d: d["frames"][0]["keyframes"].update(rotations=[np.eye(3).tolist()] * 2
                                                  + [np.diag([1.0, 1.0, -1.0]).tolist()]),
     "frames[0].keyframes.rotations[2]: must be a proper rotation (orthonormal, det +1) (got "
     "[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])"),
    (lambda d: d["frames"][0]["keyframes"].update(speed=1.0), "frames[0].keyframes: unknown "
     "key 'speed'; allowed: times, origins, rotations, rotvecs"),
    (lambda d: d["frames"][0].update(linear_velocity=[1.0, 0.0, 0.0]),
     "frames[0]: may give keyframes or linear_velocity, not both"),
    (lambda d: d["frames"][0].pop("keyframes"), "frames[0].origin: is required (or give "
     "keyframes)"),
])
def test_invalid_keyframes_are_located(edit, expected):
    data = _keyframed()
    edit(data)
    assert _error(data) == "scene.toml: " + expected


def test_swivel_and_sliding_attachments():
    data = _base()
    data["frames"][0]["attach"][0].update(free_twist=True)
    data["frames"].append({"origin": [0.0, 1.0, 0.5], "rotvec": [0.0, 0.0, np.pi / 2],
                           "attach": [{"strand": "rope", "end": -1, "orientation": False,
                                       "slide_axis": [2.0, 0.0, 0.0]}]})
    scene = scene_from_dict(data)
    first, last = scene.scene.frame_attachments
    assert first.free_twist and first.orientation and first.slide_axis is None
    assert not last.free_twist and not last.orientation
    assert np.allclose(last.slide_axis, [1.0, 0.0, 0.0])           # normalised, frame axes
    m = compile_scene(scene.scene)
    assert m.co_free.tolist() == [[False, False, True]]
    assert m.slide_point.tolist() == [8] and m.inv_mass[8] > 0      # the end keeps its mass
    traj = simulate(scene.with_overrides(frames=5))
    # the frame's x axis is world y: the end stays on the line x = 0.5, z = 0.5
    assert np.allclose(traj.positions[:, 8, [0, 2]], 0.5, atol=1e-9)


@pytest.mark.parametrize("attach, expected", [
    ({"free_twist": True, "orientation": False}, "frames[0].attach[0].free_twist: needs "
     "orientation = true (without orientation the end already turns freely) (got True)"),
    ({"free_twist": 1}, "frames[0].attach[0].free_twist: must be true or false (got 1)"),
    ({"slide_axis": [0.0, 0.0, 0.0]}, "frames[0].attach[0].slide_axis: must be a non-zero "
     "vector (got [0.0, 0.0, 0.0])"),
    ({"slide_axis": [1.0, 0.0]}, "frames[0].attach[0].slide_axis: must be a list of 3 numbers "
     "[x, y, z] (got [1.0, 0.0])"),
])
def test_invalid_attachment_options_are_located(attach, expected):
    data = _base()
    data["frames"][0]["attach"][0].update(attach)
    assert _error(data) == "scene.toml: " + expected


def test_body_attachments_take_no_frame_options():
    data = _base()
    data["bodies"] = [{"position": [0.5, 0.0, 0.5], "mass": 0.01, "size": 0.01,
                       "attach": [{"strand": "rope", "end": -1, "free_twist": True}]}]
    assert "bodies[0].attach[0]: unknown key 'free_twist'" in _error(data)


def test_strand_radius_and_friction():
    data = _base()
    radius = np.linspace(0.006, 0.002, 9).tolist()
    data["strands"][0].update(radius=radius, friction=0.3)
    data["strands"][1].update(radius=0.002)
    scene = scene_from_dict(data)
    rope, ring = scene.scene.strands
    assert np.array_equal(rope.radius, radius) and rope.friction == 0.3
    assert np.array_equal(ring.radius, np.full(12, 0.002)) and ring.friction is None
    m = compile_scene(scene.scene)
    # mass of the tapered rope: sum of rho pi r_e^2 L_e with r_e the mean of the edge's radii
    re = 0.5 * (np.array(radius[:-1]) + np.array(radius[1:]))
    ref = 1100.0 * np.pi * np.sum(re ** 2) * 0.5 / 8
    rope_points = m.point_strand == 0
    # the clamped first vertex is kinematic (mass 0): it held half the first edge's mass less
    # the ghost's share
    me0 = 1100.0 * np.pi * re[0] ** 2 * 0.5 / 8
    missing = 0.5 * (me0 - m.mass[m.edge_ghost[0]])
    assert np.sum(m.mass[rope_points]) + missing == pytest.approx(ref, rel=1e-12)
    assert np.all(m.point_friction[rope_points] == 0.3)
    assert np.all(np.isnan(m.point_friction[m.point_strand == 1]))
    assert np.allclose(m.collide_radius[m.strand_vertices(0)], radius)


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["strands"][0].update(radius=[0.004] * 3),
     "strands[0].radius: must be one number or 9 (one per vertex); it has 3 (got [0.004, 0.004, "
     "0.004])"),
    (lambda d: d["strands"][0].update(radius=[0.004] * 8 + [0.0]),
     "strands[0].radius[8]: must be a finite number > 0 (got 0.0)"),
    (lambda d: d["strands"][0].update(radius=-1.0),
     "strands[0].radius: must be a finite number > 0 (got -1.0)"),
    (lambda d: d["strands"][0].update(friction=-0.1),
     "strands[0].friction: must be a finite number >= 0 (got -0.1)"),
    (lambda d: d["strands"][0].update(friction="high"),
     "strands[0].friction: must be a finite number >= 0 (got 'high')"),
])
def test_invalid_radius_and_friction_are_located(edit, expected):
    data = _base()
    edit(data)
    assert _error(data) == "scene.toml: " + expected


def test_loads_constant_and_windowed():
    data = _base()
    data["scene"].update(gravity=[0.0, 0.0, 0.0], frames=6)
    data["loads"] = [{"strand": "rope", "vertex": -1, "force": [0.0, 0.0, 0.01]},
                     {"strand": 1, "vertex": 3, "force": [0.0, 0.02, 0.0], "start": 0.02,
                      "stop": 0.04}]
    scene = scene_from_dict(data)
    constant, windowed = scene.scene.loads
    assert constant.vertex == 8 and np.array_equal(constant.at(1.0), [0.0, 0.0, 0.01])
    assert windowed.strand == 1 and windowed.vertex == 3
    for t, on in ((0.0, False), (0.0199, False), (0.02, True), (0.0399, True), (0.04, False)):
        assert np.array_equal(windowed.at(t), [0.0, 0.02 if on else 0.0, 0.0]), t
    traj = simulate(scene.with_overrides(frames=6))
    # the ring (free, weightless) gains momentum 0.02 N x 0.02 s along y and keeps it: its
    # centre moves at 0.0004 kg m/s / mass once the push is over
    m = compile_scene(scene.scene)
    ring = m.strand_vertices(1)
    assert np.allclose(traj.positions[2, ring], traj.positions[0, ring], rtol=0, atol=1e-12)
    mass = np.sum(m.mass[m.point_strand == 1])
    v = 0.02 * 0.02 / mass
    ring_mass = m.mass[ring]
    centre = [np.sum(ring_mass * traj.positions[k, ring, 1]) / np.sum(ring_mass) for k in (4, 6)]
    assert (centre[1] - centre[0]) / (2 * scene.dt) == pytest.approx(v, rel=0.02)


@pytest.mark.parametrize("load, expected", [
    ({"vertex": 9}, "loads[0].vertex: must be a vertex index in [-9, 8] of strand 'rope' "
     "(got 9)"),
    ({"strand": "rop"}, "loads[0].strand: unknown strand; available: 'rope', 'ring' (got "
     "'rop')"),
    ({"force": [0.0, 1.0]}, "loads[0].force: must be a list of 3 numbers [x, y, z] (got [0.0, "
     "1.0])"),
    ({"start": 1.0, "stop": 0.5}, "loads[0].stop: must be > start (1): the load would never "
     "act (got 0.5)"),
    ({"start": 0.5, "stop": 0.5}, "loads[0].stop: must be > start (0.5): the load would never "
     "act (got 0.5)"),
    ({"start": -0.1}, "loads[0].start: must be a finite number >= 0 (got -0.1)"),
    ({"stop": 0.0}, "loads[0].stop: must be a finite number > 0 (got 0.0)"),
    ({"vertex": 1.0}, "loads[0].vertex: must be an integer (got 1.0)"),
    ({"weight": 1.0}, "loads[0]: unknown key 'weight'; allowed: strand, vertex, force, start, "
     "stop"),
])
def test_invalid_loads_are_located(load, expected):
    data = _base()
    entry = {"strand": "rope", "vertex": -1, "force": [0.0, 0.0, 1.0]}
    entry.update(load)
    data["loads"] = [entry]
    assert _error(data) == "scene.toml: " + expected


def test_pulled_rope_example_carries_the_rope_through_its_keys():
    scene = load_scene_file(ROOT / "examples" / "pulled_rope.toml")
    motion = scene.scene.frames[0].motion
    assert len(scene.scene.loads) == 2 and len(motion.times) == 4
    steps = int(round(1.0 / scene.dt))
    traj = simulate(scene.with_overrides(frames=steps))
    # at t = 1 s the clamped top vertex is at the second key's origin, to round-off
    assert np.allclose(traj.positions[-1, 0], [0.6, 0.0, 1.0], atol=1e-12)
    assert np.all(np.isfinite(traj.positions))
    # the weight keeps the rope nearly taut below the clamp: its length stays 0.8 m to 1 %
    seg = np.linalg.norm(np.diff(traj.positions[-1], axis=0), axis=1)
    assert np.sum(seg) == pytest.approx(0.8, rel=0.01)
