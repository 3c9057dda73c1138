"""A rod/shell/solid object modelled in Blender and exported with Blender's own OBJ exporter
(its default axes, y-up, and z-up) and its USD and Alembic exporters reads as one conforming
labelled mesh, which the mixed solver runs: a pole of loose edges standing on a cube's corner (a
curve in the USD and Alembic files: those exporters drop loose edges), a cloth flag of quads
sewn to it, the cube filled with tetrahedra.  Marked ``blender`` (``pytest -m blender``; docs/contributing.md).
"""
import subprocess
import textwrap
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_blender_import import blender_command

import strandlab as sl
from helpers import step_mesh
from strandlab.io.mesh_info import describe_mesh_file
from strandlab.io.simplicial import read_simplicial
from strandlab.sim.simplicial import Connection, MeshHold, ShellMaterial, SolidMaterial

pytestmark = pytest.mark.blender

AUTHOR = textwrap.dedent('''
    import sys

    import bpy

    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    bpy.ops.wm.read_factory_settings(use_empty=True)

    def add(name, verts, edges, faces, location=(0.0, 0.0, 0.0)):
        me = bpy.data.meshes.new(name)
        me.from_pydata(verts, edges, faces)
        me.update()
        ob = bpy.data.objects.new(name, me)
        ob.location = location
        bpy.context.scene.collection.objects.link(ob)

    # the foot: Blender's cube primitive, 0.2 m wide, its top at z = 0
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0.0, 0.0, -0.1))
    bpy.context.object.name = "foot"
    # the pole: loose edges up from the cube's corner (0.1, 0.1, 0)
    zs = (0.0, 0.25, 0.375, 0.5)
    add("pole", [(0.1, 0.1, z) for z in zs], [(k, k + 1) for k in range(3)], [])
    # the flag: 3 x 2 quads along the pole's upper half, its mesh about its object's origin
    grid = [(0.4 * i / 3, 0.0, 0.125 * j) for j in range(3) for i in range(4)]
    quads = [(j * 4 + i, j * 4 + i + 1, (j + 1) * 4 + i + 1, (j + 1) * 4 + i)
             for j in range(2) for i in range(3)]
    add("flag", grid, [], quads, location=(0.1, 0.1, 0.25))
    # a ball apart, made last: a solid whose vertices come after all the others
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.05, location=(0.6, 0.6, 0.05))
    bpy.context.object.name = "ball"
    bpy.ops.wm.obj_export(filepath=args[0], export_materials=False)
    bpy.ops.wm.obj_export(filepath=args[1], export_materials=False, up_axis="Z",
                          forward_axis="Y")
    # USD: the pole's loose edges as a curve (Object > Convert > Curve)
    pole = bpy.data.objects["pole"]
    bpy.ops.object.select_all(action="DESELECT")
    pole.select_set(True)
    bpy.context.view_layer.objects.active = pole
    bpy.ops.object.convert(target="CURVE")
    bpy.ops.wm.usd_export(filepath=args[2])
    bpy.ops.wm.alembic_export(filepath=args[3])
''')

ALU = sl.Material(young_modulus=7e10, density=2700.0, radius=0.005)
CLOTH = ShellMaterial(young_modulus=1e8, poisson_ratio=0.3, thickness=1e-4, density=1140.0)
FOAM = SolidMaterial(young_modulus=1e6, poisson_ratio=0.3, density=500.0)
MATS = {"pole": ALU, "flag": CLOTH, "foot": FOAM, "ball": FOAM}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("authoring")
    script = d / "author.py"
    script.write_text(AUTHOR)
    files = [d / "default_axes.obj", d / "z_up.obj", d / "flag.usdc", d / "flag.abc"]
    done = subprocess.run(blender_command(script) + [str(f) for f in files],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return files


@pytest.mark.parametrize("kind", ["usd", "alembic"])
def test_blender_exports_read_as_one_conforming_mesh(exported, kind):
    y_up, z_up, usd, abc = exported
    tool = usd if kind == "usd" else abc
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no near misses, no slivers
        a = read_simplicial(y_up, materials=MATS, up="y")
        b = read_simplicial(z_up, materials=MATS)
        c = read_simplicial(tool, materials=MATS)  # parts named by their objects' names
    info = describe_mesh_file(z_up)
    w = info.vertices             # the welded vertices of the file, before the solids' insides
    assert np.allclose(a.vertices[:w], b.vertices[:w], atol=2e-6)
    ball = next(p for p in info.parts if p.name == "ball")
    assert ball.closed and ball.kinds == ("shell", "solid")
    # the USD stage or Alembic archive: the same welded vertices (32-bit floats), in its order
    info_c = describe_mesh_file(tool)
    wc = info_c.vertices
    assert wc == w
    assert np.allclose(np.unique(np.round(c.vertices[:wc], 5), axis=0),
                       np.unique(np.round(b.vertices[:w], 5), axis=0), atol=2e-5)
    ball_c = next(p for p in info_c.parts if "ball" in p.name.split("/"))

    def facing(spec):        # the flag's area vector: which way its faces face
        t = spec.vertices[spec.triangles]
        return np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]).sum(axis=0) / 2

    assert np.allclose(facing(c), facing(b), atol=1e-6) and abs(facing(b)[1]) > 0.09
    for spec, ball_volume in ((a, ball.volume), (b, ball.volume), (c, ball_c.volume)):
        assert sorted((p.name, p.kind) for p in spec.parts) == [
            ("ball", "solid"), ("flag", "shell"), ("foot", "solid"), ("pole", "rod")]
        assert [p.kind for p in spec.parts] == ["rod", "shell", "solid", "solid"]
        x = spec.vertices
        assert len(spec.rod_edges) == 3 and len(spec.triangles) == 12
        pole, flag, foot = (np.unique(c) for c in (spec.rod_edges, spec.triangles, spec.tets))
        # welded: the pole stands on the cube's corner, the flag shares its upper three vertices
        assert np.allclose(x[np.intersect1d(pole, foot)], [[0.1, 0.1, 0.0]], atol=2e-6)
        assert np.allclose(np.sort(x[np.intersect1d(pole, flag), 2]), [0.25, 0.375, 0.5],
                           atol=2e-6)
        e = [x[spec.tets[:, k]] - x[spec.tets[:, 0]] for k in (1, 2, 3)]
        vol = np.einsum("ij,ij->i", e[0], np.cross(e[1], e[2])) / 6
        names = [p.name for p in spec.parts]
        foot, ball_tets = (spec.tet_part == names.index(n) for n in ("foot", "ball"))
        assert vol.min() > 0 and vol[foot].sum() == pytest.approx(0.008, rel=1e-5)
        # the ball filled from its own surface: the volume it encloses, about its centre
        assert vol[ball_tets].sum() == pytest.approx(ball_volume, rel=1e-9)
        inside = x[np.unique(spec.tets[ball_tets])]
        assert np.abs(np.linalg.norm(inside - [0.6, 0.6, 0.05], axis=1)).max() < 0.0501


def test_the_blender_model_runs(exported):
    y_up = exported[0]
    spec = read_simplicial(
        y_up, materials=MATS, up="y",
        connections=[Connection("point", ("pole", "foot"), twist_stiffness=10.0,
                                bend_stiffness=10.0),
                     Connection("curve", ("pole", "flag"), bend_stiffness=1.0)])
    bottom = np.nonzero(np.isclose(spec.vertices[:, 2], -0.2, atol=1e-5))[0]
    assert len(bottom) == 4
    spec = replace(spec, holds=(MeshHold(tuple(bottom.tolist())),))
    x = step_mesh(spec, 10)
    tip = np.argmax(spec.vertices[:, 0])                  # the flag's free edge
    assert x[tip, 2] < spec.vertices[tip, 2] - 1e-3       # sags
    top = np.argmax(spec.vertices[:, 2] - spec.vertices[:, 0])   # the pole's top
    assert np.linalg.norm(x[top] - spec.vertices[top]) < 5e-3    # the pole stands


def test_the_sign_example_is_what_its_blender_script_exports(tmp_path):
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "sign.obj"
    done = subprocess.run(blender_command(root / "examples" / "make_sign_in_blender.py")
                          + [str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    def body(p):       # without the header naming Blender's version
        return [t for t in p.read_text().splitlines() if not t.startswith("#")]

    assert body(out) == body(root / "examples" / "sign.obj")


SLOTS = textwrap.dedent('''
    import sys

    import bpy

    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    # a banner of 4 x 4 quads, 1 m square about the origin; its right half in the slot "hem"
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=4, size=1.0)
    ob = bpy.context.active_object
    ob.name = "banner"
    for name in ("nylon", "hem"):
        ob.data.materials.append(bpy.data.materials.new(name))
    for poly in ob.data.polygons:
        poly.material_index = 1 if poly.center.x > 0 else 0
    bpy.ops.wm.usd_export(filepath=args[0])
    bpy.ops.wm.alembic_export(filepath=args[1], face_sets=True)
''')


def test_blender_material_slots_are_parts(tmp_path):
    """A mesh whose faces are in two material slots, exported to USD (a GeomSubset per slot)
    and Alembic (Face Sets): each slot is a part, named after its material."""
    script = tmp_path / "slots.py"
    script.write_text(SLOTS)
    files = [tmp_path / "banner.usdc", tmp_path / "banner.abc"]
    done = subprocess.run(blender_command(script) + [str(f) for f in files],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    stiff = replace(CLOTH, thickness=5e-4)
    for f in files:
        spec = read_simplicial(f, materials={"nylon": CLOTH, "hem": stiff})
        assert [(p.name, p.material) for p in spec.parts] == [("nylon", CLOTH), ("hem", stiff)]
        x = spec.vertices[spec.triangles].mean(axis=1)
        assert np.count_nonzero(spec.triangle_part == 1) == 16
        assert np.all((x[:, 0] > 0) == (spec.triangle_part == 1))
        assert np.allclose(spec.vertices[:, 2], 0.0, atol=1e-6)     # z-up, as modelled
        # the object's name labels the faces no named slot takes
        spec = read_simplicial(f, materials={"banner": CLOTH, "hem": stiff})
        assert [p.name for p in spec.parts] == ["banner", "hem"]
