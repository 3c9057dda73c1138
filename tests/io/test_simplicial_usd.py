"""Labelled meshes from USD stages, as Blender's and Houdini's USD exporters write them: a part
per Mesh prim (a shell's faces or a solid's closed surface) and per linear BasisCurves prim (a
rod), placed by the prims' transforms, in the stage's units and up axis, left-handed meshes
turned right-handed, parts named by a name on their prim's path."""
import numpy as np
import pytest

pxr = pytest.importorskip("pxr")
from pxr import Gf, Usd, UsdGeom  # noqa: E402

import strandlab as sl  # noqa: E402
from helpers import step_mesh  # noqa: E402
from strandlab.cli import main  # noqa: E402
from strandlab.io.mesh_info import describe_mesh_file  # noqa: E402
from strandlab.io.mesh_parts import name_parts, short_names  # noqa: E402
from strandlab.io.simplicial import read_simplicial  # noqa: E402
from strandlab.io.usd_parts import read_usd_parts  # noqa: E402
from strandlab.sim.simplicial import Connection, MeshHold, ShellMaterial, SolidMaterial  # noqa: E402

ROD = sl.Material(young_modulus=7e10, density=2700.0, radius=0.005)
CLOTH = ShellMaterial(young_modulus=1e8, poisson_ratio=0.3, thickness=1e-4, density=1140.0)
BLOCK = SolidMaterial(young_modulus=1e6, poisson_ratio=0.3, density=1000.0)
MATS = {"pole": ROD, "flag": CLOTH, "foot": BLOCK}

CUBE = [(-1, -1, -1), (-1, -1, 1), (-1, 1, -1), (-1, 1, 1), (1, -1, -1), (1, -1, 1),
        (1, 1, -1), (1, 1, 1)]
CUBE_FACES = [4] * 6
CUBE_INDICES = [0, 1, 3, 2, 2, 3, 7, 6, 6, 7, 5, 4, 4, 5, 1, 0, 2, 6, 4, 0, 7, 3, 1, 5]


def _object(stage, name, kind, translate=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)):
    """Blender's layout: an Xform per object, its geometry a child prim."""
    xf = UsdGeom.Xform.Define(stage, f"/root/{name}")
    xf.AddTranslateOp().Set(Gf.Vec3d(*translate))
    xf.AddScaleOp().Set(Gf.Vec3f(*scale))
    return kind.Define(stage, f"/root/{name}/{name.capitalize()}Data")


def blender_stage(p, *, flag_faces=None, curve_type="linear"):
    """The OBJ tests' model as Blender exports it to USD: the foot a cube of 0.1 m (its
    top corner at (0.1, 0.1, 0.1)), the pole a curve standing on that corner, the flag a quad
    from the pole's upper half."""
    stage = Usd.Stage.CreateNew(str(p))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, "/root").GetPrim())
    foot = _object(stage, "foot", UsdGeom.Mesh, (0.05, 0.05, 0.05), (0.05, 0.05, 0.05))
    foot.CreatePointsAttr(CUBE)
    foot.CreateFaceVertexCountsAttr(CUBE_FACES)
    foot.CreateFaceVertexIndicesAttr(CUBE_INDICES)
    pole = _object(stage, "pole", UsdGeom.BasisCurves, (0.1, 0.1, 0.0))
    pole.CreatePointsAttr([(0, 0, 0.1), (0, 0, 0.3), (0, 0, 0.5)])
    pole.CreateCurveVertexCountsAttr([3])
    pole.CreateTypeAttr(curve_type)
    flag = _object(stage, "flag", UsdGeom.Mesh, (0.1, 0.1, 0.3))
    flag.CreatePointsAttr([(0, 0, 0), (0.3, 0, 0), (0.3, 0, 0.2), (0, 0, 0.2)])
    counts, idx = flag_faces or ([4], [0, 1, 2, 3])
    flag.CreateFaceVertexCountsAttr(counts)
    flag.CreateFaceVertexIndicesAttr(idx)
    stage.GetRootLayer().Save()
    return p


@pytest.fixture
def usd(tmp_path):
    return blender_stage(tmp_path / "flag.usda")


def check_flag_model(spec):
    """The pole, flag and foot as modelled: parts and kinds, placed by the transforms, the
    pole's foot welded onto the cube's top corner and the flag's two corners onto the pole,
    the foot filled, the flag facing -y."""
    assert [(pt.name, pt.kind) for pt in spec.parts] == [("pole", "rod"), ("flag", "shell"),
                                                         ("foot", "solid")]
    x = spec.vertices
    assert len(spec.rod_edges) == 2 and len(spec.triangles) == 2
    pole, flag, foot = (np.unique(c) for c in (spec.rod_edges, spec.triangles, spec.tets))
    assert np.allclose(x[np.intersect1d(pole, foot)], [[0.1, 0.1, 0.1]])
    assert np.allclose(np.sort(x[np.intersect1d(pole, flag), 2]), [0.3, 0.5])
    assert np.allclose(x[foot].min(axis=0), 0.0) and np.allclose(x[foot].max(axis=0), 0.1)
    e = [x[spec.tets[:, k]] - x[spec.tets[:, 0]] for k in (1, 2, 3)]
    vol = np.einsum("ij,ij->i", e[0], np.cross(e[1], e[2])) / 6
    assert vol.min() > 0 and vol.sum() == pytest.approx(1e-3)
    t = x[spec.triangles]
    assert np.all(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])[:, 1] < 0)


def test_parts_by_object_name_placed_and_welded(usd):
    check_flag_model(read_simplicial(
        usd, materials=MATS, connections=[Connection("point", ("pole", "foot"), mode="free"),
                                          Connection("curve", ("pole", "flag"), mode="free")]))


def test_the_usd_mesh_runs(usd):
    spec = read_simplicial(usd, materials=MATS,
                           connections=[Connection("point", ("pole", "foot"),
                                                   twist_stiffness=10.0, bend_stiffness=10.0),
                                        Connection("curve", ("pole", "flag"),
                                                   bend_stiffness=1.0)])
    bottom = np.nonzero(np.isclose(spec.vertices[:, 2], 0.0))[0]
    assert len(bottom) == 4
    x = step_mesh(spec.__class__(**{**spec.__dict__, "holds": (MeshHold(tuple(bottom)),)}), 5)
    tip = np.argmax(spec.vertices[:, 0])
    assert x[tip, 2] < spec.vertices[tip, 2] - 1e-4          # the flag's free edge sags


def houdini_stage(p, *, up="Y", unit=0.01, orientation="leftHanded", mirror=False):
    """Houdini's layout: a y-up stage in centimetres, a mesh prim per named piece directly
    under ``/geo``, faces wound clockwise (``orientation = leftHanded``).  A horizontal square
    of 20 cm at a height of 100 cm, wound so that it faces up, and a closed polyline rod
    around it."""
    stage = Usd.Stage.CreateNew(str(p))
    UsdGeom.SetStageUpAxis(stage, up)
    UsdGeom.SetStageMetersPerUnit(stage, unit)
    sheet = UsdGeom.Mesh.Define(stage, "/geo/sheet")
    pts = [(0, 100, 0), (20, 100, 0), (20, 100, -20), (0, 100, -20)]  # y up, -z is +y of z-up
    if mirror:                           # x mirrored by the transform, the points unmirrored
        UsdGeom.Xformable(sheet).AddScaleOp().Set(Gf.Vec3f(-1.0, 1.0, 1.0))
        pts = [(-a, b, c) for a, b, c in pts]
    sheet.CreatePointsAttr(pts)
    sheet.CreateFaceVertexCountsAttr([4])
    # counter-clockwise seen from above (+y) is right-handed, the left-handed file reverses it;
    # mirrored, the points' own order turns
    order = [0, 1, 2, 3] if orientation == "rightHanded" else [0, 3, 2, 1]
    sheet.CreateFaceVertexIndicesAttr(order if not mirror else order[::-1])
    sheet.CreateOrientationAttr(orientation)
    hem = UsdGeom.BasisCurves.Define(stage, "/geo/hem")
    hem.CreatePointsAttr(pts)
    hem.CreateCurveVertexCountsAttr([4])
    hem.CreateTypeAttr("linear")
    hem.CreateWrapAttr("periodic")
    if mirror:
        UsdGeom.Xformable(hem).AddScaleOp().Set(Gf.Vec3f(-1.0, 1.0, 1.0))
    stage.GetRootLayer().Save()
    return p


@pytest.mark.parametrize("orientation, mirror", [("leftHanded", False), ("rightHanded", False),
                                                 ("leftHanded", True)])
def test_houdini_stages_in_their_units_and_axes(tmp_path, orientation, mirror):
    p = houdini_stage(tmp_path / "h.usd", orientation=orientation, mirror=mirror)
    spec = read_simplicial(p, materials={"sheet": CLOTH, "hem": ROD})
    x = spec.vertices
    # centimetres, y-up: read as metres, z-up
    assert np.allclose(np.sort(x[:, 2]), 1.0) and np.allclose(x[:, :2].min(axis=0), 0.0)
    assert np.allclose(x[:, :2].max(axis=0), 0.2)
    t = x[spec.triangles]
    normal = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    assert np.all(normal[:, 2] > 0)                   # the sheet faces up, as it was modelled
    assert len(spec.rod_edges) == 4                   # the closed curve: its closing edge too
    assert sorted(np.unique(spec.rod_edges)) == sorted(np.unique(spec.triangles))
    # the stage's metadata overridden
    raw = read_simplicial(p, materials={"sheet": CLOTH, "hem": ROD}, up="z", scale=1.0)
    assert np.allclose(raw.vertices[:, 1], 100.0)


def test_animated_points_are_read_at_the_earliest_sample(tmp_path):
    p = houdini_stage(tmp_path / "h.usda")
    stage = Usd.Stage.Open(str(p))
    pts = UsdGeom.Mesh(stage.GetPrimAtPath("/geo/sheet")).GetPointsAttr()
    still = list(pts.Get())
    pts.Set([(a + 50.0, b, c) for a, b, c in still], 10.0)
    pts.Set(still, 2.0)
    pts.Clear()                                     # no default: only the two samples
    pts.Set(still, 2.0)
    pts.Set([(a + 50.0, b, c) for a, b, c in still], 10.0)
    stage.GetRootLayer().Save()
    spec = read_simplicial(p, materials={"sheet": CLOTH, "hem": ROD})
    assert np.allclose(spec.vertices[:, 0].max(), 0.2)


def test_names_on_the_path(usd):
    parts = read_usd_parts(usd).parts
    assert list(parts) == ["/root/foot/FootData", "/root/pole/PoleData", "/root/flag/FlagData"]
    named = name_parts(parts, ["FlagData", "/root/pole/PoleData", "root/foot"], "f")
    assert list(named) == ["/root/foot/FootData", "/root/pole/PoleData", "FlagData"]
    with pytest.raises(ValueError, match=r"'root' is on the paths of several objects"):
        name_parts(parts, ["root"], "f")
    with pytest.raises(ValueError, match=r"'a' is on the paths of several objects: /a/x, /a/y"):
        name_parts({"/a/x": 1, "/a/y": 2}, ["a"], "f")
    with pytest.raises(ValueError, match=r"the object /root/flag/FlagData is named twice, as 'flag' and "
                                         r"'FlagData'"):
        name_parts(parts, ["flag", "FlagData"], "f")
    # a name as an export writes it (letters, digits and _) names the part of that name
    assert name_parts({"/strandlab/rods/rib_1": 1, "/strandlab/rods/rib_2": 2}, ["rib 1"],
                      "f") == {"rib 1": 1, "/strandlab/rods/rib_2": 2}
    assert name_parts({"/a/rib 1": 1, "/a/rib_1": 2}, ["rib 1"], "f") == {
        "rib 1": 1, "/a/rib_1": 2}                                  # the name itself first
    from strandlab.io.mesh_parts import FaceSubset, MeshPart

    sheet = MeshPart("/m", triangles=[(0, 1, 2), (0, 2, 3)], triangle_at=["a", "b"],
                     triangle_face=[0, 1])
    named = name_parts({"/m": sheet}, ["lump 2"], "f", {"/m/lump_2": FaceSubset("/m", np.array([1]))})
    assert {k: v.triangles for k, v in named.items()} == {"/m": [(0, 1, 2)],
                                                          "lump 2": [(0, 2, 3)]}
    # each part's name nearest the root that no other path has, and it names the part
    short = short_names(parts)
    assert list(short.values()) == ["foot", "pole", "flag"]
    assert list(name_parts(parts, short.values(), "f")) == ["foot", "pole", "flag"]
    assert short_names(["/geo/x", "/geo/x/y"]) == {"/geo/x": "/geo/x", "/geo/x/y": "y"}
    # containers are passed over: Blender's one object, strandlab's own exports
    assert short_names(["/root/Cube/Cube"]) == {"/root/Cube/Cube": "Cube"}
    assert list(short_names(["/strandlab/meshes/gadget", "/strandlab/rods/thin"]).values()) == [
        "gadget", "thin"]
    assert short_names(["/Banner/Plane"]) == {"/Banner/Plane": "Banner"}     # Alembic's
    info = describe_mesh_file(usd)
    assert [(q.name, q.kinds) for q in info.parts] == [
        ("/root/foot/FootData", ("shell", "solid")), ("/root/pole/PoleData", ("rod",)),
        ("/root/flag/FlagData", ("shell",))]
    assert [(a, b, nv, ne) for a, b, nv, ne in info.touching] == [
        ("/root/foot/FootData", "/root/pole/PoleData", 1, 0),
        ("/root/pole/PoleData", "/root/flag/FlagData", 2, 1)]


def test_the_mesh_command_reads_usd(usd, capsys):
    assert main(["mesh", str(usd)]) == 0
    out = capsys.readouterr().out
    assert "part                 name  lines  triangles" in out
    assert "/root/pole/PoleData  pole      2          0           0         3  a rod" in out
    assert "(15 in the file, 3 welded)" in out and "to [0.4, 0.1, 0.5] m" in out


@pytest.mark.parametrize("make, materials, message", [
    (dict(curve_type="cubic"), MATS, r"/root/pole/PoleData: cubic curves: rods are read from "
                                     r"linear curves"),
    (dict(flag_faces=([3, 2], [0, 1, 2, 2, 3])), MATS,
     r"/root/flag/FlagData, face 1: a face needs at least 3 corners, got 2"),
    (dict(flag_faces=([4], [0, 1, 2, 4])), MATS,
     r"/root/flag/FlagData, face 0: point 4 does not exist \(the mesh has 4 points\)"),
    (dict(flag_faces=([4], [0, 2, 1, 3])), MATS,
     r"/root/flag/FlagData, face 0: a concave or twisted polygon of 4 vertices"),
    (dict(flag_faces=([4], [0, 1, 2])), MATS,
     r"FlagData: the face sizes sum to 4 but there are 3 face indices"),
    ({}, {"pole": ROD, "flag": CLOTH}, r"flag.usda, /root/foot/FootData: part "
                                       r"'/root/foot/FootData' has no material"),
    ({}, {"pole": CLOTH, "flag": CLOTH, "foot": BLOCK},
     r"/root/pole/PoleData, curve 0: part 'pole' is a shell part .* which takes faces \(a Mesh "
     r"prim\), not linear curves"),
    ({}, {"pole": ROD, "flag": ROD, "foot": BLOCK},
     r"/root/flag/FlagData, face 0: part 'flag' is a rod part .* which takes linear curves"),
])
def test_mistakes_name_the_file_and_prim(tmp_path, make, materials, message):
    p = blender_stage(tmp_path / "flag.usda", **make)
    with pytest.raises(ValueError, match=message):
        read_simplicial(p, materials=materials)


def test_stages_without_what_rods_shells_and_solids_need(tmp_path):
    p = tmp_path / "empty.usda"
    stage = Usd.Stage.CreateNew(str(p))
    UsdGeom.Xform.Define(stage, "/root")
    edges = UsdGeom.Mesh.Define(stage, "/root/pole/PoleMesh")       # Blender's loose edges
    edges.CreatePointsAttr([(0, 0, 0), (0, 0, 1)])
    stage.GetRootLayer().Save()
    with pytest.raises(ValueError, match=r"/root/pole/PoleMesh: a mesh without faces .*"
                                         r"Object > Convert > Curve"):
        read_simplicial(p, materials={"pole": ROD})
    stage.RemovePrim("/root/pole")
    stage.GetRootLayer().Save()
    with pytest.raises(ValueError, match=r"empty.usda: no Mesh, BasisCurves or TetMesh prim"):
        read_simplicial(p, materials={})
    curve = UsdGeom.BasisCurves.Define(stage, "/root/wire")
    curve.CreatePointsAttr([(0, 0, 0), (0, 0, float("nan"))])
    curve.CreateCurveVertexCountsAttr([2])
    curve.CreateTypeAttr("linear")
    stage.GetRootLayer().Save()
    with pytest.raises(ValueError, match=r"/root/wire: point 1 is not finite"):
        read_simplicial(p, materials={"wire": ROD})
    curve.CreatePointsAttr([(0, 0, 0), (0, 0, 1)])
    curve.CreateWrapAttr("periodic")
    stage.GetRootLayer().Save()
    with pytest.raises(ValueError, match=r"/root/wire, curve 0: 2 points: too few for a closed"):
        read_simplicial(p, materials={"wire": ROD})
    (tmp_path / "bad.usda").write_text("#usda 1.0\ndef Mesh (\n")
    with pytest.raises(ValueError, match=r"bad.usda is not a readable USD file"):
        read_simplicial(tmp_path / "bad.usda", materials={})


def test_a_scene_file_takes_a_usd_mesh(usd):
    from test_scenefile_simplicial import OBJ_SCENE

    from strandlab.io.scenefile import load_scene_file

    text = OBJ_SCENE.replace('file = "flag.obj"\nup = "y"', 'file = "flag.usda"')
    assert text != OBJ_SCENE
    (usd.parent / "s.toml").write_text(text)
    sim = load_scene_file(usd.parent / "s.toml")
    (spec,) = sim.scene.simplicial
    assert [p.name for p in spec.parts] == ["pole", "flag", "foot"]
    held = np.array(spec.holds[0].vertices)
    assert len(held) == 4 and np.allclose(spec.vertices[held, 2], 0.0, atol=1e-9)
    traj = sl.simulate(sim)
    assert np.isfinite(traj.extra_points).all()
    assert np.abs(traj.extra_points[-1, held] - spec.vertices[held]).max() == 0.0


def test_the_docstring_examples_of_the_parts_hold():
    import doctest

    from strandlab.io import mesh_parts, obj_parts

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for module in (mesh_parts, obj_parts):
        for t in finder.find(module):
            runner.run(t)
    assert runner.failures == 0 and runner.tries >= 7
