"""Tetrahedra a USD stage already has: a ``TetMesh`` prim read as a solid part as it is, and an
export's ``TetMesh`` filling its solid parts when the export is read back, instead of Gmsh."""
import doctest
from dataclasses import replace

import numpy as np
import pytest
import run_fixtures as rf
from pxr import Gf, Usd, UsdGeom  # usd-core: in the test extra

from strandlab.cli_mesh import format_mesh_info
from strandlab.io import tet_fill
from strandlab.io.mesh_info import describe_mesh_file
from strandlab.io.simplicial import read_simplicial
from strandlab.io.tet_fill import TetFills, tet_pieces
from strandlab.io.usd import write_usd
from strandlab.mixed.solver import MixedSettings
from strandlab.sim.builder import SceneBuilder
from strandlab.sim.material import Material
from strandlab.sim.runner import Simulation
from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

JELLY = SolidMaterial(1e6, 0.3, 1000.0)
WIRE = Material(young_modulus=1e8, density=1000.0, radius=1e-3)
QUADS = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]


def _cube(corner, side=0.1):
    """A cube's 8 corners and its centre [9, 3], and its 12 tetrahedra about the centre
    (vertex 8), each of positive volume."""
    c = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=float)
    x = np.r_[c, [[0.5, 0.5, 0.5]]] * side + np.asarray(corner, dtype=float)
    tets = []
    for q in QUADS:                 # each face (outward) split in two, joined to the centre
        for tri in ([q[0], q[2], q[1]], [q[0], q[3], q[2]]):
            tets.append(tri + [8])
    t = np.array(tets)
    e = [x[t[:, k]] - x[t[:, 0]] for k in (1, 2, 3)]
    vol = np.einsum("ij,ij->i", e[0], np.cross(e[1], e[2]))
    t[vol < 0] = t[vol < 0][:, [0, 2, 1, 3]]
    return x, t


def test_pieces_join_through_faces_only():
    assert tet_pieces([[0, 1, 2, 3], [1, 2, 3, 4], [3, 4, 5, 6], [7, 8, 9, 10]]).tolist() == \
        [0, 0, 1, 2]                                    # 1-2-3 shared; 3-4 an edge only
    assert tet_pieces(np.zeros((0, 4), int)).tolist() == []
    _, t = _cube((0, 0, 0))
    assert set(tet_pieces(t).tolist()) == {0}


def test_fills_take_whole_pieces_once():
    from strandlab.sim.simplicial import boundary_faces

    xa, ta = _cube((0, 0, 0))
    tb = _cube((1, 0, 0))[1] + 9
    fills = TetFills()
    fills.add("tets", np.r_[ta, tb])
    assert fills.take(boundary_faces(ta)[:-1]) is None       # not the whole boundary
    tc = _cube((2, 0, 0))[1] + 18                             # a cube not held
    assert fills.take(np.r_[boundary_faces(ta), boundary_faces(tc)]) is None
    assert fills.take(np.r_[boundary_faces(ta), boundary_faces(ta)[:1]]) is None   # a face twice
    got = fills.take(boundary_faces(tb))
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, tb.tolist()))
    assert fills.unused() == ["tets"]
    assert fills.take(boundary_faces(tb)) is None             # used
    both = TetFills()
    both.add("tets", np.r_[ta, tb])
    assert len(both.take(np.r_[boundary_faces(ta), boundary_faces(tb)])) == 24    # two pieces
    assert both.unused() == []


def test_the_docstring_examples_hold():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for t in finder.find(tet_fill):
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 3


def _blocks_simulation() -> Simulation:
    """A mesh ``box`` of three cubes of 12 tetrahedra about their centres: ``core`` and ``lid``
    share a face, ``far`` stands apart; a cloth ``flag`` on the far cube's top edge."""
    from strandlab.geometry.tetmesh import weld_vertices

    xs, ts, n = [], [], 0
    for corner in ((0, 0, 0), (0.1, 0, 0), (0.5, 0, 0)):
        x, t = _cube(corner)
        xs.append(x)
        ts.append(t + n)
        n += len(x)
    x, index = weld_vertices(np.concatenate(xs + [[[0.55, 0.0, 0.3]]]), 1e-9)
    at = {tuple(np.round(p, 9)): k for k, p in enumerate(x.tolist())}
    mb = SimplicialBuilder(x, name="box")
    for name, t in zip(("core", "lid", "far"), ts):
        mb.add_solids(index[t], material=JELLY, name=name)
    mb.add_shells([[at[(0.5, 0.0, 0.1)], at[(0.6, 0.0, 0.1)], len(x) - 1]],
                  material=ShellMaterial(1e7, 0.3, 1e-3, 1000.0), name="flag")
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(mb.build())
    return Simulation("blocks", b.build(), MixedSettings(), 1.0 / rf.FPS, 1, solver="mixed")


def _tet_points(x, tets) -> list:
    return sorted(tuple(sorted(map(tuple, np.round(x[t], 5).tolist()))) for t in tets)


def test_an_export_reads_back_with_its_own_tetrahedra(tmp_path):
    sim = _blocks_simulation()
    spec0 = sim.scene.simplicial[0]
    path = write_usd(tmp_path / "blocks.usda", rf.moved(sim, 1))
    shell = ShellMaterial(1e7, 0.3, 1e-3, 1000.0)
    spec = read_simplicial(path, materials={"far": JELLY, "box": JELLY, "flag": shell})
    assert [(pt.name, pt.kind) for pt in spec.parts] == [("flag", "shell"), ("box", "solid"),
                                                        ("far", "solid")]
    assert len(spec.vertices) == len(spec0.vertices)          # the centres are back
    for name, parts in (("far", ["far"]), ("box", ["core", "lid"])):
        want = np.concatenate([spec0.tets[spec0.tet_part == spec0.part_index(q)]
                               for q in parts])
        got = spec.tets[spec.tet_part == spec.part_index(name)]
        assert _tet_points(spec.vertices, got) == _tet_points(spec0.vertices, want), name
    # the listing: each solid part's name names its tetrahedron subset, its face subset
    # the solid's surface
    info = describe_mesh_file(path)
    tets, = (q for q in info.parts if q.tetrahedra)
    assert [(q.name, q.tetrahedra) for q in info.subsets if q.tetrahedra] == [
        (f"{tets.name}/{q}", 12) for q in ("core", "lid", "far")]
    lines = "\n".join(format_mesh_info(info))
    assert f"far: 12 tetrahedra of {tets.name}, can be a solid (0.001 m^3)" in lines
    assert ("far: 12 triangles of /strandlab/meshes/box, named so, the surface of the solid "
            f"{tets.name}/far") in lines
    # named by their own names, the touching cubes are their tetrahedron subsets, each part's
    # boundary faces its surface
    spec = read_simplicial(path, materials={"far": JELLY, "core": JELLY, "lid": JELLY,
                                            "flag": shell})
    assert sorted(pt.name for pt in spec.parts) == ["core", "far", "flag", "lid"]
    assert len(spec.vertices) == len(spec0.vertices)
    for name in ("core", "lid", "far"):
        want = spec0.tets[spec0.tet_part == spec0.part_index(name)]
        got = spec.tets[spec.tet_part == spec.part_index(name)]
        assert _tet_points(spec.vertices, got) == _tet_points(spec0.vertices, want), name
    # a run recorded before the tetrahedra's parts were: face subsets only, and the touching
    # cubes' are not closed, which the reader says
    traj = rf.moved(sim, 1)
    meta = dict(traj.metadata)
    meta["scene"] = {**meta["scene"], "simplicial": [
        {k: v for k, v in m.items() if k != "tet_parts"} for m in meta["scene"]["simplicial"]]}
    old = write_usd(tmp_path / "old.usda", replace(traj, metadata=meta))
    with pytest.raises(ValueError, match="part 'core': the surface is not closed"):
        read_simplicial(old, materials={"far": JELLY, "core": JELLY, "lid": JELLY,
                                        "flag": shell})
    # its listing says which surface the TetMesh fills: the far cube's face subset; the
    # touching cubes' are not closed, and the mesh's whole surface has the flag
    info = describe_mesh_file(old)
    tets, = (q for q in info.parts if q.tetrahedra)
    far, = (q for q in info.subsets if q.name == "/strandlab/meshes/box/far")
    assert (tets.name, tets.fill, far.fill) == ("/strandlab/tetmeshes/box_tets", far.name,
                                                tets.name)
    assert [q.fill for q in info.subsets if q is not far] == [""] * 3
    lines = "\n".join(format_mesh_info(info))
    assert f"(closed, 0.001 m^3; filled with the tetrahedra of {tets.name})" in lines
    assert f"(0.003 m^3); without a material, it fills {far.name}" in lines


def test_a_face_subset_named_with_tetrahedra_must_be_their_surface(tmp_path):
    # a Mesh whose face subset "core" is a face inside the cube, not on its surface
    p, x, t = _two_cubes_stage(tmp_path / "two.usda", {"core": list(range(12))})
    stage = Usd.Stage.Open(str(p))
    m = UsdGeom.Mesh.Define(stage, "/geo/skin")
    m.CreatePointsAttr([Gf.Vec3f(*q) for q in x])
    m.CreateFaceVertexCountsAttr([3, 3])
    m.CreateFaceVertexIndicesAttr([0, 1, 8, 0, 2, 1])      # 0-1-8: through the centre 8
    UsdGeom.Subset.CreateGeomSubset(m, "core", UsdGeom.Tokens.face, [0, 1])
    stage.Save()
    with pytest.raises(ValueError, match=r"/geo/skin, face 0: part 'core': this face, named "
                                         r"with the part's tetrahedra, is not on their surface"):
        read_simplicial(p, materials={"core": JELLY, "jelly": JELLY})


def _stage(path, tets, *, orientation="rightHanded", scale=1.0, rod=True, pts=None):
    """A stage as a tool writes one: a TetMesh ``/geo/jelly`` (a unit-ish cube of 12
    tetrahedra, scaled by its transform) and a rod ``/geo/wire`` standing on its top corner."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    x, _ = _cube((0, 0, 0), side=1.0)
    t = UsdGeom.TetMesh.Define(stage, "/geo/jelly")
    t.CreatePointsAttr([Gf.Vec3f(*p) for p in (x if pts is None else pts)])
    t.CreateTetVertexIndicesAttr([Gf.Vec4i(*map(int, r)) for r in tets])
    t.CreateOrientationAttr(orientation)
    t.AddScaleOp().Set(Gf.Vec3f(scale, scale, scale))
    if rod:
        c = UsdGeom.BasisCurves.Define(stage, "/geo/wire")
        c.CreateTypeAttr(UsdGeom.Tokens.linear)
        c.CreatePointsAttr([Gf.Vec3f(scale, scale, scale), Gf.Vec3f(scale, scale, 2 * scale)])
        c.CreateCurveVertexCountsAttr([2])
    stage.Save()
    return path


def test_a_tetmesh_prim_is_a_solid_as_it_is(tmp_path):
    x, t = _cube((0, 0, 0), side=1.0)
    p = _stage(tmp_path / "jelly.usda", t, scale=0.1)
    spec = read_simplicial(p, materials={"jelly": JELLY, "wire": WIRE})
    assert [(pt.name, pt.kind) for pt in spec.parts] == [("wire", "rod"), ("jelly", "solid")]
    assert len(spec.vertices) == 10 and len(spec.tets) == 12      # the rod's foot welded
    assert _tet_points(spec.vertices, spec.tets) == _tet_points(0.1 * x, t)
    info = describe_mesh_file(p)
    jelly = next(q for q in info.parts if q.name == "/geo/jelly")
    assert (jelly.tetrahedra, jelly.vertices, jelly.kinds) == (12, 9, ("solid",))
    assert jelly.volume == pytest.approx(1e-3, rel=1e-6)
    assert info.touching == (("/geo/jelly", "/geo/wire", 1, 0),)
    # a left-handed mesh's tetrahedra are turned right-handed
    p = _stage(tmp_path / "left.usda", t[:, [0, 1, 3, 2]], orientation="leftHanded")
    spec = read_simplicial(p, materials={"jelly": JELLY, "wire": WIRE})
    assert _tet_points(spec.vertices, spec.tets) == _tet_points(x, t)


@pytest.mark.parametrize("make, materials, message", [
    (lambda t: dict(tets=t[:, [0, 1, 3, 2]]), {"jelly": JELLY, "wire": WIRE},
     r"/geo/jelly, tetrahedron 0: points \[.*\] are inverted \(volume -0.0833"),
    (lambda t: dict(tets=np.r_[t, [[0, 1, 2, 2]]]), {"jelly": JELLY, "wire": WIRE},
     r"/geo/jelly, tetrahedron 12: points \[0, 1, 2, 2\] are flat"),
    (lambda t: dict(tets=np.r_[t, [[0, 1, 2, 9]]]), {"jelly": JELLY, "wire": WIRE},
     r"/geo/jelly, tetrahedron 12: a point of \[0, 1, 2, 9\] does not exist \(the mesh has "
     r"9 points\)"),
    (lambda t: dict(tets=t), {"jelly": ShellMaterial(1e7, 0.3, 1e-3, 1000.0), "wire": WIRE},
     r"/geo/jelly, tetrahedron 0: part 'jelly' is a shell part .* which takes faces \(a Mesh "
     r"prim\), not tetrahedra \(a TetMesh prim\)"),
    (lambda t: dict(tets=t), {"wire": WIRE},
     r"/geo/jelly: part '/geo/jelly' has no material, and its tetrahedra fill no solid"),
    (lambda t: dict(tets=t, pts=np.r_[_cube((0, 0, 0), 1.0)[0][:8], [[np.nan, 0, 0]]]),
     {"jelly": JELLY, "wire": WIRE}, r"/geo/jelly: point 8 is not finite"),
])
def test_tetmesh_mistakes_name_the_prim(tmp_path, make, materials, message):
    _, t = _cube((0, 0, 0), side=1.0)
    p = _stage(tmp_path / "bad.usda", **make(t))
    with pytest.raises(ValueError, match=message):
        read_simplicial(p, materials=materials)


def _two_cubes_stage(path, subsets):
    """A TetMesh ``/geo/jelly`` of two cubes of 12 tetrahedra sharing a face (tetrahedra 0-11
    the first), with the tetrahedron ``subsets`` (name -> indices), as Houdini writes
    primitive groups."""
    from strandlab.geometry.tetmesh import weld_vertices

    (xa, ta), (xb, tb) = _cube((0, 0, 0), 1.0), _cube((1, 0, 0), 1.0)
    x, index = weld_vertices(np.r_[xa, xb], 1e-9)
    t = index[np.r_[ta, tb + 9]]
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    m = UsdGeom.TetMesh.Define(stage, "/geo/jelly")
    m.CreatePointsAttr([Gf.Vec3f(*p) for p in x])
    m.CreateTetVertexIndicesAttr([Gf.Vec4i(*map(int, r)) for r in t])
    for name, rows in subsets.items():
        UsdGeom.Subset.CreateGeomSubset(m, name, UsdGeom.Tokens.tetrahedron, rows)
    UsdGeom.Subset.CreateGeomSubset(m, "corner", UsdGeom.Tokens.point, [0])    # skipped
    stage.Save()
    return path, x, t


def test_tetrahedron_subsets_are_parts(tmp_path, capsys):
    from strandlab.cli import main

    hard = SolidMaterial(1e8, 0.3, 1000.0)
    p, x, t = _two_cubes_stage(tmp_path / "two.usda", {"soft": list(range(12)),
                                                       "hard": list(range(12, 24))})
    spec = read_simplicial(p, materials={"soft": JELLY, "hard": hard})
    assert [(pt.name, pt.material) for pt in spec.parts] == [("soft", JELLY), ("hard", hard)]
    assert len(spec.vertices) == 12 + 2                         # 4 corners shared; 2 centres
    for k, name in enumerate(("soft", "hard")):
        got = spec.tets[spec.tet_part == spec.part_index(name)]
        assert _tet_points(spec.vertices, got) == _tet_points(x, t[12 * k:12 * (k + 1)])
    # one subset named, the mesh's name takes the rest
    spec = read_simplicial(p, materials={"soft": JELLY, "jelly": hard})
    assert [(pt.name, int(np.sum(spec.tet_part == k))) for k, pt in enumerate(spec.parts)] \
        == [("jelly", 12), ("soft", 12)]                     # the rest first, as for faces
    assert main(["mesh", str(p)]) == 0
    out = capsys.readouterr().out
    assert "face and tetrahedron subsets (a material that names one" in out
    assert "/geo/jelly/soft  soft: 12 tetrahedra of /geo/jelly, can be a solid (1 m^3)" in out
    assert "corner" not in out


@pytest.mark.parametrize("subsets, materials, message", [
    ({"soft": [3, 24]}, {"soft": JELLY}, r"/geo/jelly/soft: tetrahedron 24 does not exist "
                                         r"\(the mesh has 24 tetrahedra\)"),
    ({"soft": [0, 1, 2], "hard": [2, 3]}, {"soft": JELLY, "hard": JELLY},
     r"/geo/jelly, tetrahedron 2: in the tetrahedron subsets /geo/jelly/soft and "
     r"/geo/jelly/hard, both named as parts"),
    ({"soft": list(range(12))}, {"soft": JELLY},
     r"part '/geo/jelly' has no material, and its tetrahedra fill no solid"),
])
def test_tetrahedron_subset_mistakes(tmp_path, subsets, materials, message):
    p, _, _ = _two_cubes_stage(tmp_path / "two.usda", subsets)
    with pytest.raises(ValueError, match=message):
        read_simplicial(p, materials=materials)


JELLY_SCENE = """
[scene]
name = "jelly"
dt = 0.01
frames = 3
gravity = [0.0, 0.0, -9.81]

[solver]
type = "mixed"

[[simplicial]]
file = "two.usda"
scale = 0.1

[[simplicial.holds]]
box = [[-0.01, -0.01, -0.01], [0.01, 0.11, 0.11]]
""" + "".join(f"""
[simplicial.parts.{name}]
kind = "solid"
young_modulus = {young}
poisson_ratio = 0.3
density = 1000.0
""" for name, young in (("soft", 1e5), ("hard", 1e7)))


def test_a_scene_file_runs_a_tetmesh_of_two_materials(tmp_path):
    """A cantilever of two cubes, tetrahedralised in a tool as one TetMesh with a soft and a
    hard group, read by a scene file (scaled to 10 cm cubes), held at its x = 0 face, run."""
    import strandlab
    from strandlab.io.scenefile import load_scene_file

    _, x, t = _two_cubes_stage(tmp_path / "two.usda", {"soft": list(range(12)),
                                                       "hard": list(range(12, 24))})
    (tmp_path / "s.toml").write_text(JELLY_SCENE)
    sim = load_scene_file(tmp_path / "s.toml")
    (spec,) = sim.scene.simplicial
    assert [(p.name, p.material.young_modulus) for p in spec.parts] == [("soft", 1e5),
                                                                       ("hard", 1e7)]
    assert _tet_points(spec.vertices, spec.tets) == _tet_points(0.1 * x, t)
    assert sorted(spec.holds[0].vertices) == sorted(np.flatnonzero(spec.vertices[:, 0] == 0.0))
    traj = strandlab.simulate(sim)
    tip = traj.extra_points[-1][:, 2] - traj.extra_points[0][:, 2]
    assert np.isfinite(traj.extra_points).all() and tip.min() < 0.0    # it sags
