"""``[[simplicial]]`` tables of scene files: a labelled mesh file with its parts' materials,
connections and holds becomes the scene's simplicial mesh; mistakes are located."""
import numpy as np
import pytest

from strandlab.io.scenefile import load_scene_file
from strandlab.io.simplicial import write_simplicial
from strandlab.scenes.meshing import box_tets
from strandlab.sim.material import Material
from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

SCENE = """
[scene]
dt = 0.01
frames = 2
[solver]
type = "mixed"
[materials.steel]
young_modulus = 2e11
density = 7800
radius = 0.002
[[frames]]
origin = [0, 0, 0]
angular_velocity = [0, 0, 1]
[[simplicial]]
file = "flag.msh"
scale = 0.5
[simplicial.parts.pole]
kind = "rod"
material = "steel"
[simplicial.parts.cloth]
kind = "shell"
young_modulus = 1e6
poisson_ratio = 0.3
thickness = 0.001
density = 300
[simplicial.parts.base]
kind = "solid"
young_modulus = 1e5
poisson_ratio = 0.45
density = 1000
[[simplicial.connections]]
kind = "point"
parts = ["pole", "base"]
twist_stiffness = 1.0
bend_stiffness = 2.0
[[simplicial.holds]]
vertices = [0, 1]
frame = 0
[[simplicial.holds]]
vertices = [2, 3]
frame = 0
turn_only = true
"""


@pytest.fixture
def folder(tmp_path):
    x, tets = box_tets((0, 0, 0), (0.2, 0.2, 0.1), (1, 1, 1))
    top = int(np.nonzero(np.all(np.isclose(x, [0.2, 0.2, 0.1]), axis=1))[0][0])
    k = len(x)
    x = np.concatenate([x, [[0.2, 0.2, 0.5], [0.4, 0.2, 0.5]]])
    mb = SimplicialBuilder(x, name="flag")
    mat = Material(young_modulus=1.0, density=1.0, radius=1.0)
    mb.add_rods([[top, k]], material=mat, name="pole")
    mb.add_shells([[top, k, k + 1]], material=ShellMaterial(1.0, 0.0, 1.0, 1.0), name="cloth")
    mb.add_solids(tets, material=SolidMaterial(1.0, 0.0, 1.0), name="base")
    write_simplicial(tmp_path / "flag.msh", mb.build())
    return tmp_path


def test_scene_file_reads_the_mesh_with_its_materials(folder):
    (folder / "s.toml").write_text(SCENE)
    sim = load_scene_file(folder / "s.toml")
    (m,) = sim.scene.simplicial
    assert m.name == "flag" and sim.solver == "mixed"
    assert m.vertices.max() == pytest.approx(0.25)             # scale 0.5
    assert {p.name: p.kind for p in m.parts} == {"pole": "rod", "cloth": "shell",
                                                 "base": "solid"}
    assert m.parts[m.part_index("pole")].material.young_modulus == 2e11
    assert m.parts[m.part_index("cloth")].material.thickness == 0.001
    (c,) = m.connections
    assert c.parts == (m.part_index("pole"), m.part_index("base")) and c.bend_stiffness == 2.0
    assert m.holds[0].frame == 0 and m.holds[0].vertices == (0, 1)
    assert not m.holds[0].turn_only and m.holds[1].turn_only


@pytest.mark.parametrize("edit, message", [
    (('parts = ["pole", "base"]', 'parts = ["pole", "roof"]'),
     r"simplicial\[0\]\.connections\[0\]\.parts.*unknown part"),
    (('material = "steel"', 'material = "gold"'), r"parts\.pole\.material.*unknown material"),
    (("thickness = 0.001\n", ""), r"parts\.cloth\.thickness.*required for a shell part"),
    (("frame = 0", "frame = 3"), r"holds\[0\]\.frame.*there are 1 frames"),
    (("young_modulus = 1e5", "young_modulus = 1e300"),
     r"s\.toml: simplicial\[0\]\.parts\.base: SolidMaterial: young_modulus must be at most "
     r"1e\+15 Pa"),
    (("density = 300", "density = 3e8"),
     r"simplicial\[0\]\.parts\.cloth: ShellMaterial: density must be at most 1e\+06 kg/m\^3"),
    (('file = "flag.msh"', 'file = "none.msh"'),
     r"s\.toml: simplicial\[0\]\.file: no mesh file .*none\.msh \(a relative path is read from "
     r"the scene file's folder\)"),
    (('file = "flag.msh"', 'file = "sub"'),
     r"s\.toml: simplicial\[0\]\.file: .*sub is a directory, not a mesh file"),
    (('file = "flag.msh"', 'file = "junk.msh"'),
     r"s\.toml: simplicial\[0\]: .*junk\.msh: cannot read the mesh \(.*Couldn't read file"),
])
def test_scene_file_mistakes_are_located(folder, edit, message):
    (folder / "s.toml").write_text(SCENE.replace(*edit))
    (folder / "junk.msh").write_text("not a mesh\n")
    (folder / "sub").mkdir(exist_ok=True)
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        load_scene_file(folder / "s.toml")


OBJ_SCENE = """
[scene]
dt = 0.01
frames = 2
[solver]
type = "mixed"
[materials.aluminium]
young_modulus = 7e10
density = 2700
radius = 0.005
[[simplicial]]
file = "flag.obj"
up = "y"
[simplicial.parts.pole]
kind = "rod"
material = "aluminium"
[simplicial.parts.flag]
kind = "shell"
young_modulus = 1e8
poisson_ratio = 0.3
thickness = 1e-4
density = 1140
[simplicial.parts.foot]
kind = "solid"
young_modulus = 1e6
poisson_ratio = 0.3
density = 1000
[[simplicial.connections]]
kind = "curve"
parts = ["pole", "flag"]
bend_stiffness = 1.0
[[simplicial.connections]]
kind = "point"
parts = ["pole", "foot"]
twist_stiffness = 10.0
bend_stiffness = 10.0
[[simplicial.holds]]
box = [[-1, -1, -0.001], [1, 1, 0.001]]
"""


@pytest.fixture
def obj_folder(tmp_path):
    from test_simplicial_obj import blender_obj

    # written y-up, as Blender's OBJ exporter does by default: (x, y, z) -> (x, z, -y)
    lines = []
    for line in blender_obj().splitlines():
        if line.startswith("v "):
            x, y, z = (float(w) for w in line.split()[1:])
            line = f"v {x:.6f} {z:.6f} {-y:.6f}"
        lines.append(line)
    (tmp_path / "flag.obj").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_an_obj_mesh_with_a_box_hold_runs(obj_folder):
    (obj_folder / "s.toml").write_text(OBJ_SCENE)
    sim = load_scene_file(obj_folder / "s.toml")
    (spec,) = sim.scene.simplicial
    assert [p.name for p in spec.parts] == ["pole", "flag", "foot"]
    held = np.array(spec.holds[0].vertices)
    assert len(held) == 4 and np.allclose(spec.vertices[held, 2], 0.0)   # the foot's bottom
    assert spec.vertices[:, 2].max() == pytest.approx(0.5)               # z-up again
    traj = __import__("strandlab").simulate(sim)
    assert np.isfinite(traj.extra_points).all()


BOX = "box = [[-1, -1, -0.001], [1, 1, 0.001]]"


def test_a_hold_takes_a_parts_vertices_or_those_of_it_in_a_box(obj_folder):
    from strandlab.sim.simplicial import part_vertices

    everything = "box = [[-9, -9, -9], [9, 9, 9]]"
    for hold, want in [('part = "foot"', lambda m, foot, pole: foot),
                       (f'part = "pole"\n{everything}', lambda m, foot, pole: pole),
                       ('part = "foot"\nbox = [[-9, -9, 0.05], [9, 9, 9]]',
                        lambda m, foot, pole: foot[m.vertices[foot, 2] >= 0.05])]:
        (obj_folder / "s.toml").write_text(OBJ_SCENE.replace(BOX, hold))
        (m,) = load_scene_file(obj_folder / "s.toml").scene.simplicial
        foot, pole = (part_vertices(m, m.part_index(n)) for n in ("foot", "pole"))
        assert len(np.setdiff1d(foot, pole)) > 4 and len(np.setdiff1d(pole, foot)) >= 2
        got = want(m, foot, pole)
        assert 0 < len(got) < len(m.vertices)
        assert m.holds[0].vertices == tuple(got.tolist())


def test_a_held_part_stays_while_the_rest_falls(obj_folder):
    import strandlab
    from strandlab.sim.simplicial import part_vertices

    (obj_folder / "s.toml").write_text(OBJ_SCENE.replace(BOX, 'part = "pole"')
                                       .replace("frames = 2", "frames = 3"))
    sim = load_scene_file(obj_folder / "s.toml")
    (m,) = sim.scene.simplicial
    traj = strandlab.simulate(sim)
    moved = np.linalg.norm(traj.extra_points[-1] - traj.extra_points[0], axis=1)
    pole = part_vertices(m, m.part_index("pole"))
    assert moved[pole].max() == 0.0
    assert moved.max() > 1e-3                                  # the foot falls, the flag sags


@pytest.mark.parametrize("edit, message", [
    ((BOX, 'part = "roof"'),
     r"^[^:]*s\.toml: simplicial\[0\]\.holds\[0\]\.part: 'roof' is no part of the file "
     r"\(\[simplicial\.parts\]: pole, flag, foot\)$"),
    ((BOX, 'part = "pole"\nbox = [[-1, -1, -0.001], [1, 1, 0.001]]'),
     r"^[^:]*s\.toml: simplicial\[0\]\.holds\[0\]\.box: no vertex of part 'pole' lies in the "
     r"box .* \(part 'pole' spans "),
    ((BOX, 'vertices = [0]\npart = "pole"'), r"holds\[0\]\.vertices: give either vertices, "),
    ((BOX, 'frame = 0'), r"holds\[0\]\.vertices: give either vertices, or part or box"),
    (("box = [[-1, -1, -0.001], [1, 1, 0.001]]", "box = [[-1, -1, 2], [1, 1, 3]]"),
     r"simplicial\[0\]\.holds\[0\]\.box: no vertex of the mesh lies in the box"),
    (("box = [[-1, -1, -0.001], [1, 1, 0.001]]", "box = [[1, -1, -0.001], [-1, 1, 0.001]]"),
     r"holds\[0\]\.box: the first corner must be the lower one"),
    (("box = [[-1, -1, -0.001], [1, 1, 0.001]]", "vertices = [0]\nbox = [[0, 0, 0], [1, 1, 1]]"),
     r"holds\[0\]\.vertices: give either vertices, or part or box \(or both\)"),
    (('up = "y"', 'up = "x"'), r"simplicial\[0\]\.up"),
    (('up = "y"', "weld = -1.0"), r"simplicial\[0\]\.weld"),
])
def test_obj_scene_mistakes_are_located(obj_folder, edit, message):
    (obj_folder / "s.toml").write_text(OBJ_SCENE.replace(*edit))
    with pytest.raises(ValueError, match=message):
        load_scene_file(obj_folder / "s.toml")
