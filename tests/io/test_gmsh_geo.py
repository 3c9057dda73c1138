"""Gmsh geometry scripts (.geo) as mesh files: Gmsh meshes the script, its physical groups are
the parts (a surface and a volume of one number apart), a group without material is held by
name; a script Gmsh refuses is named with Gmsh's error; an edited script is meshed again."""
import numpy as np
import pytest

from strandlab.io import gmsh_geo
from strandlab.io.scenefile import load_scene_file
from strandlab.io.simplicial import read_simplicial
from strandlab.sim.material import Material
from strandlab.sim.runner import simulate
from strandlab.sim.simplicial import SolidMaterial

pytest.importorskip("gmsh")
pytest.importorskip("meshio")

SCRIPT = """// a rubber block with a steel rod standing in its top face's middle
SetFactory("OpenCASCADE");
Box(1) = {{0, 0, 0, 0.2, 0.1, 0.1}};
Point(100) = {{0.1, 0.05, 0.1}};
Point(101) = {{0.1, 0.05, 0.4}};
Line(100) = {{100, 101}};
Point{{100}} In Surface{{6}};
Mesh.MeshSizeMax = {size};
Physical Volume("block", 1) = {{1}};
Physical Surface("clamp", 1) = {{5}};
Physical Curve("rod", 2) = {{100}};
"""

SCENE = """
[scene]
dt = 0.01
frames = 2
[solver]
type = "mixed"
[materials.steel]
young_modulus = 2e11
density = 7800
radius = 0.003
[[simplicial]]
file = "block.geo"
[simplicial.parts.block]
kind = "solid"
young_modulus = 1e6
poisson_ratio = 0.45
density = 1100
[simplicial.parts.rod]
kind = "rod"
material = "steel"
[[simplicial.connections]]
kind = "point"
parts = ["rod", "block"]
bend_stiffness = 1.0
[[simplicial.holds]]
part = "clamp"
"""

MATERIALS = {"block": SolidMaterial(1e6, 0.45, 1100.0),
             "rod": Material(young_modulus=2e11, density=7800.0, radius=0.003)}


def test_a_script_is_meshed_and_read_as_its_groups(tmp_path):
    (tmp_path / "block.geo").write_text(SCRIPT.format(size=0.05))
    spec = read_simplicial(tmp_path / "block.geo", materials=MATERIALS, groups=["clamp"])
    assert [(p.name, p.kind) for p in spec.parts] == [("rod", "rod"), ("block", "solid")]
    assert len(spec.tets) > 100 and len(spec.rod_edges) >= 6 and not len(spec.triangles)
    rod = np.unique(spec.rod_edges)
    assert spec.vertices[rod, 2].min() == pytest.approx(0.1)     # standing on the top face
    assert len(np.intersect1d(rod, spec.tets)) == 1               # a point connection


def test_a_scene_file_runs_a_script_and_holds_its_group(tmp_path, monkeypatch):
    (tmp_path / "block.geo").write_text(SCRIPT.format(size=0.05))
    (tmp_path / "s.toml").write_text(SCENE)
    calls = []
    meshed = gmsh_geo._meshed
    monkeypatch.setattr(gmsh_geo, "_meshed", lambda p: calls.append(p) or meshed(p))
    gmsh_geo._LAST.clear()
    sim = load_scene_file(tmp_path / "s.toml")
    assert len(calls) == 1                                         # once for groups and parts
    (spec,) = sim.scene.simplicial
    held = np.array(spec.holds[0].vertices)
    assert np.all(spec.vertices[held, 2] == 0.0)
    assert len(held) == np.count_nonzero(spec.vertices[:, 2] == 0.0) > 8
    x = np.asarray(simulate(sim).extra_points)
    assert np.abs(x[:, held] - x[0, held]).max() == 0.0
    assert np.abs(x[-1] - x[0]).max() > 1e-6                        # the rest moves


def test_an_edited_script_is_meshed_again(tmp_path):
    path = tmp_path / "block.geo"
    path.write_text(SCRIPT.format(size=0.03))
    fine = read_simplicial(path, materials=MATERIALS, groups=["clamp"])
    path.write_text(SCRIPT.format(size=0.05))
    coarse = read_simplicial(path, materials=MATERIALS, groups=["clamp"])
    assert len(coarse.tets) < len(fine.tets) / 2


def test_a_script_gmsh_refuses_is_named(tmp_path):
    (tmp_path / "bad.geo").write_text(SCRIPT.format(size=0.05).replace("0, 0, 0, 0.2",
                                                                       "0, 0, 0 0.2"))
    with pytest.raises(ValueError, match=r"bad\.geo: Gmsh cannot mesh the script \(Error: "
                                         r"'.*bad\.geo', line 3: syntax error"):
        read_simplicial(tmp_path / "bad.geo", materials=MATERIALS)


def test_a_relative_path_and_a_refused_script_before(tmp_path, monkeypatch):
    """Gmsh's script parser keeps state within a process (after a syntax error the next
    script failed too): each script is meshed by a Gmsh process of its own."""
    (tmp_path / "bad.geo").write_text("Box(1) = {0, 0 0};\n")
    with pytest.raises(ValueError, match="syntax error"):
        read_simplicial(tmp_path / "bad.geo", materials=MATERIALS)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "block.geo").write_text(SCRIPT.format(size=0.1))
    monkeypatch.chdir(tmp_path)
    gmsh_geo._LAST.clear()
    spec = read_simplicial("sub/block.geo", materials=MATERIALS, groups=["clamp"])
    assert len(spec.tets) > 100


def test_a_script_is_meshed_again_when_a_file_it_includes_changes(tmp_path):
    """The mesh's key holds what the script includes, and what that includes in turn."""
    path = tmp_path / "block.geo"
    path.write_text('Include "sizes/size.geo";\n' + SCRIPT.format(size="size"))
    (tmp_path / "sizes").mkdir()
    (tmp_path / "sizes" / "size.geo").write_text('Include "fine.geo";\nsize = fine;\n')
    (tmp_path / "sizes" / "fine.geo").write_text("fine = 0.03;\n")
    fine = read_simplicial(path, materials=MATERIALS, groups=["clamp"])
    (tmp_path / "sizes" / "fine.geo").write_text("fine = 0.05;\n")
    coarse = read_simplicial(path, materials=MATERIALS, groups=["clamp"])
    assert len(coarse.tets) < len(fine.tets) / 2
    keyed = [name for name, _ in gmsh_geo._key(path)]
    assert keyed == [str(path.resolve())] + [str((tmp_path / "sizes" / f).resolve())
                                              for f in ("size.geo", "fine.geo")]
