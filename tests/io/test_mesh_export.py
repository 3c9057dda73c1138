"""Per-vertex radii and the mixed model's meshes in trajectories and exports: a tapered strand
run and a rod/shell/solid run recorded, exported to USD, Alembic, OBJ and PLY, reopened with
pxr, alembic3d and a parser, and compared with the trajectory; files written before these
arrays still load and export.  Most writer tests use the same scenes recorded without
stepping (``run_fixtures.moved``), so that they need no solver; the runs themselves are
exported by the tests parametrized with ``run``."""
from dataclasses import replace

import alembic3d as abc  # in the test extra
import h5py
import numpy as np
import pytest
import run_fixtures as rf
from pxr import Usd, UsdGeom  # usd-core: in the test extra
from test_export import _parse_ply

from strandlab.io.alembic import AXES_PROPERTY, write_abc
from strandlab.io.export import FrameMesh, export_frames, write_obj_polylines, write_ply_polylines
from strandlab.io.selection import RodChain, extra_parts, rod_chains
from strandlab.io.store import TrajectoryWriter
from strandlab.io.strands import read_strands
from strandlab.io.trajectory import OPTIONAL_STATIC, load_trajectory, save_trajectory
from strandlab.io.usd import Z_TO_Y, write_usd

F32 = 2e-7          # positions and widths go through 32-bit floats [m]
MESH = slice(3, 14)  # the mesh's points among the extra points (after the frame's 3)


@pytest.fixture(scope="module")
def tapered():
    return rf.tapered_run(3)


@pytest.fixture(scope="module")
def mixed():
    return rf.mixed_run(3)


@pytest.fixture(scope="module")
def tapered_moved():
    return rf.moved(rf.tapered_simulation(3), 3)


@pytest.fixture(scope="module")
def mixed_moved():
    return rf.moved(rf.mixed_simulation(3), 3)


def _source(request, name: str, source: str):
    """The fixture ``name`` (a run) or ``name_moved`` (the scene recorded without stepping)."""
    return request.getfixturevalue(name if source == "run" else f"{name}_moved")


# ---------------------------------------------------------------------------------- records
def test_runs_record_vertex_radii_rod_edges_and_tetrahedra(tapered, mixed):
    taper = np.interp(np.linspace(0, 1, 7), [0, 1], [rf.ROOT, rf.TIP])
    assert np.allclose(tapered.vertex_radii[:7], taper)
    assert np.allclose(tapered.vertex_radii[7:], np.r_[np.full(4, rf.PLAIN), np.full(6, rf.ROOT)])
    assert np.allclose(tapered.radii, [rf.ROOT, rf.PLAIN, rf.ROOT])      # the largest, as before
    # the mesh's cells offset by the frame's 3 points
    assert mixed.extra_segments.tolist() == [[6, 8], [8, 9], [9, 10], [9, 11], [11, 12],
                                             [12, 13]]
    assert np.allclose(mixed.extra_segment_radii, [rf.THIN] * 4 + [rf.THICK] * 2)
    assert mixed.extra_tetrahedra.tolist() == [[3, 4, 5, 6]]
    assert len(mixed.extra_triangles) == 5                    # the flap and the tet's 4 faces


def test_the_new_arrays_are_saved_in_h5_and_npz(mixed_moved, tapered_moved, tmp_path):
    assert all(getattr(mixed_moved, key).size for key in OPTIONAL_STATIC[1:])
    taper = np.interp(np.linspace(0, 1, 7), [0, 1], [rf.ROOT, rf.TIP])
    assert np.allclose(tapered_moved.vertex_radii[:7], taper)      # the scene's, per vertex
    for k, traj in enumerate((mixed_moved, tapered_moved)):
        for name in (f"t{k}.h5", f"t{k}.npz"):
            back = load_trajectory(save_trajectory(tmp_path / name, traj))
            for key in OPTIONAL_STATIC:
                assert np.array_equal(getattr(back, key), getattr(traj, key)), (name, key)
    with h5py.File(tmp_path / "t0.h5") as f:
        assert f["vertex_radii"].attrs["units"] == "m"


def _strip_new_datasets(path):
    with h5py.File(path, "r+") as f:
        for key in OPTIONAL_STATIC:
            del f[key]


def test_files_without_the_new_arrays_load_export_and_continue(mixed_moved, tapered_moved,
                                                               tmp_path):
    mixed, tapered = mixed_moved, tapered_moved
    p = save_trajectory(tmp_path / "old.h5", mixed)
    _strip_new_datasets(p)
    with load_trajectory(p) as old:
        assert np.array_equal(old.vertex_radii, np.repeat(old.radii,
                                                           np.diff(old.strand_offsets)))
        assert old.extra_segments.shape == (0, 2) and old.extra_tetrahedra.shape == (0, 4)
        out = write_usd(tmp_path / "old.usda", old)
    stage = Usd.Stage.Open(str(out))
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/strandlab/meshes/gadget"))
    assert len(mesh.GetFaceVertexCountsAttr().Get()) == 5       # the parts still split
    assert not stage.GetPrimAtPath("/strandlab/rods").IsValid()
    # an old strand file: tapered radii fall back to each strand's largest
    q = save_trajectory(tmp_path / "old_strands.h5", tapered)
    _strip_new_datasets(q)
    with load_trajectory(q) as old:
        r = read_strands(write_usd(tmp_path / "old_strands.usd", old)).radius
    assert np.allclose(r, np.repeat(tapered.radii, np.diff(tapered.strand_offsets)), atol=F32)
    # a resumed run continues an old file: the arrays are checked against their defaults
    lay = dict(strand_offsets=tapered.strand_offsets, edge_offsets=tapered.edge_offsets,
               closed=tapered.closed, radii=tapered.radii)
    with pytest.raises(ValueError, match="its vertex_radii differs"):
        TrajectoryWriter(q, keep_frames=2, vertex_radii=tapered.vertex_radii, **lay)
    TrajectoryWriter(q, keep_frames=2, **lay).close()
    with load_trajectory(q) as cont:
        assert cont.n_frames == 2 and cont.vertex_radii.shape == (17,)
    with h5py.File(q) as f:
        assert set(OPTIONAL_STATIC) <= set(f)                  # added to the old file


@pytest.mark.parametrize("bad, match", [
    (dict(vertex_radii=np.ones(3)), r"vertex_radii has shape \(3,\), expected \(17,\)"),
    (dict(vertex_radii=-np.ones(17)), r"vertex_radii\[0\] = -1.0 is not a finite radius"),
    (dict(n_extra=2, extra_segments=[[0, 1]]), "extra_segment_radii must be given"),
    (dict(extra_segments=[[0, 5]], extra_segment_radii=[1.0]),
     r"extra_segments\[0\] = \[0, 5\] indexes outside the 0 extra points"),
    (dict(extra_tetrahedra=[[0, 1, 2, 3]]), r"extra_tetrahedra\[0\]"),
])
def test_bad_mesh_layout_is_named(tapered_moved, tmp_path, bad, match):
    tapered = tapered_moved
    with pytest.raises(ValueError, match=match):
        TrajectoryWriter(tmp_path / "x.h5", strand_offsets=tapered.strand_offsets,
                         edge_offsets=tapered.edge_offsets, closed=tapered.closed,
                         radii=tapered.radii, **bad)


# ---------------------------------------------------------------------------------- chains
def test_rod_chains_split_at_junctions_and_radius_changes(mixed_moved):
    seg = [[0, 1], [1, 2], [2, 3], [1, 4], [4, 5], [6, 7], [7, 8], [8, 6], [9, 10], [10, 11]]
    r = [1, 1, 1, 1, 1, 2, 2, 2, 1, 3]
    got = [(c.points.tolist(), c.radius) for c in rod_chains(seg, r)]
    assert got == [([0, 1], 1), ([1, 2, 3], 1), ([1, 4, 5], 1), ([9, 10], 1), ([10, 11], 3),
                   ([6, 7, 8, 6], 2)]                     # the loop ends on its first vertex
    part = next(p for p in extra_parts(mixed_moved) if p.kind == "mesh")
    chains = rod_chains(part.segments, part.segment_radii)
    assert [(c.points.tolist(), c.radius) for c in chains] == rf.MIXED_CHAINS


# ---------------------------------------------------------------------------------- USD
def _chain_index(part: str | None = None):
    """The mesh vertex of each point of the rod curves (of the part ``"thin"`` or ``"thick"``,
    or of both)."""
    radius = {"thin": rf.THIN, "thick": rf.THICK}.get(part)
    return np.concatenate([c for c, r in rf.MIXED_CHAINS if radius in (None, r)])


#: Each rod part's curves of :func:`run_fixtures.mixed_mesh`: vertices per curve and radius.
ROD_CURVES = {"thin": ([3, 2, 2], rf.THIN), "thick": ([3], rf.THICK)}


@pytest.mark.parametrize("source, up", [("moved", "Z"), ("moved", "Y"), ("run", "Z")])
def test_usd_mesh_tetmesh_and_rods(request, tmp_path, source, up):
    mixed = _source(request, "mixed", source)
    axes = np.eye(3) if up == "Z" else Z_TO_Y
    stage = Usd.Stage.Open(str(write_usd(tmp_path / "m.usda", mixed, up_axis=up)))
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/strandlab/meshes/gadget"))
    tri = mixed.extra_triangles - 3
    assert np.array_equal(np.asarray(mesh.GetFaceVertexIndicesAttr().Get()), tri.ravel())
    tet = UsdGeom.TetMesh(stage.GetPrimAtPath("/strandlab/tetmeshes/gadget_tets"))
    assert np.asarray(tet.GetTetVertexIndicesAttr().Get()).tolist() == [[0, 1, 2, 3]]
    faces = np.asarray(tet.GetSurfaceFaceVertexIndicesAttr().Get())
    usd_faces = np.asarray(UsdGeom.TetMesh.ComputeSurfaceFaces(tet, Usd.TimeCode(0)))
    assert sorted(map(tuple, faces)) == sorted(map(tuple, usd_faces))   # USD's orientation
    assert sorted(map(tuple, faces)) == sorted(map(tuple, tri[1:]))     # the Mesh's solid faces
    assert tet.GetOrientationAttr().Get() == UsdGeom.Tokens.rightHanded
    assert tet.GetPurposeAttr().Get() == UsdGeom.Tokens.guide
    # a curves prim per rod part, named after it
    assert [c.GetName() for c in stage.GetPrimAtPath("/strandlab/rods").GetChildren()] == [
        "thin", "thick"]
    frames = UsdGeom.Points(stage.GetPrimAtPath("/strandlab/points/frames"))
    for name, (counts, radius) in ROD_CURVES.items():
        rods = UsdGeom.BasisCurves(stage.GetPrimAtPath(f"/strandlab/rods/{name}"))
        assert list(rods.GetCurveVertexCountsAttr().Get()) == counts
        idx = np.asarray(rods.GetPrim().GetAttribute("strandlab:vertexIndices").Get())
        assert np.array_equal(idx, _chain_index(name))
        assert np.allclose(np.asarray(rods.GetWidthsAttr().Get()), 2 * radius)
        for k in (0, 3):
            extra = mixed.extra_points[k] @ axes.T
            assert np.allclose(rods.GetPointsAttr().Get(k), extra[MESH][idx], atol=F32)
    for k in (0, 3):
        extra = mixed.extra_points[k] @ axes.T
        tc = Usd.TimeCode(k)
        assert np.allclose(mesh.GetPointsAttr().Get(tc), extra[MESH], atol=F32)
        assert np.allclose(tet.GetPointsAttr().Get(tc), extra[MESH], atol=F32)
        assert np.allclose(frames.GetPointsAttr().Get(tc), extra[:3], atol=F32)
    assert np.abs(mixed.extra_points[3][MESH] - mixed.extra_points[0][MESH]).max() > 1e-3


@pytest.mark.parametrize("source", ["moved", "run"])
def test_tapered_widths_round_trip(request, tmp_path, source):
    tapered = _source(request, "tapered", source)
    want = tapered.vertex_radii
    for path in (write_usd(tmp_path / "t.usdc", tapered),
                 write_usd(tmp_path / "y.usda", tapered, up_axis="Y"),
                 write_abc(tmp_path / "t.abc", tapered)):
        for k in (0, 3):
            s = read_strands(path, time=k / rf.FPS)
            assert np.allclose(s.radius, want, rtol=1e-6, atol=0), path
            assert np.allclose(s.points, tapered.positions[k], atol=F32), path
    stage = Usd.Stage.Open(str(tmp_path / "t.usdc"))
    c = UsdGeom.BasisCurves(stage.GetPrimAtPath("/strandlab/strands/material_0"))
    assert np.allclose(np.asarray(c.GetWidthsAttr().Get())[:7], 2 * want[:7], rtol=1e-6)
    ply = _parse_ply(export_frames(tapered, tmp_path / "ply", "ply", frames="2")[0])
    assert np.array_equal(ply["vertex"]["radius"], want)


# ---------------------------------------------------------------------------------- Alembic
def test_alembic_polymesh_and_rods(mixed_moved, tmp_path):
    mixed = mixed_moved
    p = write_abc(tmp_path / "m.abc", mixed)
    top = abc.Abc.IArchive(str(p)).getTop()
    objs = {top.getChild(i).getName(): top.getChild(i) for i in range(top.getNumChildren())}
    assert set(objs) == {"frames", "gadget", "thin", "thick"}
    G, wrap = abc.AbcGeom, abc.Abc.WrapExistingFlag.kWrapExisting
    for k in (0, 3):
        sel = abc.Abc.ISampleSelector(k / rf.FPS)
        extra = mixed.extra_points[k] @ Z_TO_Y.T
        ms = G.IPolyMesh(objs["gadget"], wrap).getSchema().getValue(sel)
        assert np.allclose(np.array(memoryview(ms.getPositions())), extra[MESH], atol=F32)
        faces = np.array(list(ms.getFaceIndices())).reshape(-1, 3)
        assert np.array_equal(faces, (mixed.extra_triangles - 3)[:, ::-1])   # clockwise
        for name, (counts, _) in ROD_CURVES.items():
            rs = G.ICurves(objs[name], wrap).getSchema().getValue(sel)
            assert list(rs.getCurvesNumVertices()) == counts
            assert np.allclose(np.array(memoryview(rs.getPositions())),
                               extra[MESH][_chain_index(name)], atol=F32)
    for name, (_, radius) in ROD_CURVES.items():
        rods = G.ICurves(objs[name], wrap).getSchema()
        assert np.allclose(list(rods.getWidthsParam().getExpandedValue().getVals()), 2 * radius)
        user = rods.getUserProperties()
        got = list(abc.Abc.IInt32ArrayProperty(user, "vertexIndices").getValue())
        assert got == _chain_index(name).tolist()
    # the frame's axes: two segments, marked as such; read as strands, the rods only
    user = G.ICurves(objs["frames"], wrap).getSchema().getUserProperties()
    assert list(abc.Abc.IInt32ArrayProperty(user, AXES_PROPERTY).getValue()) == [0, 0]
    assert np.diff(read_strands(p).offsets).tolist() == [3, 2, 2, 3]


# ---------------------------------------------------------------------------------- read back
@pytest.mark.parametrize("fmt", ["usda", "abc"])
def test_exports_read_back_as_the_labelled_mesh(mixed_moved, tmp_path, fmt):
    """A run's USD or Alembic export, read as a labelled mesh with the scene's own part names:
    the shell part's and the solid part's face subsets (face sets) name their faces (the
    solid's closed surface filled with tetrahedra again), each rod part is its curves, the
    frame's axes are skipped; at the first frame, the scene's mesh.  Named by the mesh's name,
    the solid's faces stay the mesh's part."""
    from strandlab.io.simplicial import read_simplicial
    from strandlab.sim.material import Material
    from strandlab.sim.simplicial import ShellMaterial, SolidMaterial

    write = write_usd if fmt == "usda" else write_abc
    path = write(tmp_path / f"m.{fmt}", mixed_moved)
    shell = ShellMaterial(1e7, 0.3, 1e-3, 1000.0)
    solid = SolidMaterial(1e6, 0.3, 1000.0)
    thin, thick = (Material(young_modulus=1e8, density=1000.0, radius=r)
                   for r in (rf.THIN, rf.THICK))
    spec = read_simplicial(path, materials={"flap": shell, "block": solid, "thin": thin,
                                            "thick": thick})
    assert sorted((pt.name, pt.kind) for pt in spec.parts) == [
        ("block", "solid"), ("flap", "shell"), ("thick", "rod"), ("thin", "rod")]
    x0 = rf.mixed_mesh().vertices
    assert np.allclose(np.sort(spec.vertices[spec.triangles[0]], axis=0),
                       np.sort(x0[[1, 4, 2]], axis=0), atol=F32)
    e = [spec.vertices[spec.tets[:, k]] - spec.vertices[spec.tets[:, 0]] for k in (1, 2, 3)]
    volume = np.einsum("ij,ij->i", e[0], np.cross(e[1], e[2])).sum() / 6
    assert volume == pytest.approx(0.1 * 0.1 * 0.1 / 6, rel=1e-5)
    assert len(spec.triangles) == 1
    for name, want in (("thin", [[3, 5], [5, 6], [6, 7], [6, 8]]), ("thick", [[8, 9], [9, 10]])):
        edges = spec.rod_edges[spec.rod_part == spec.part_index(name)]
        got = sorted(sorted(map(tuple, np.round(spec.vertices[edge], 6).tolist()))
                     for edge in edges)
        assert got == sorted(sorted(map(tuple, np.round(x0[edge], 6).tolist()))
                             for edge in want), name
    spec = read_simplicial(path, materials={"flap": shell, "gadget": solid, "thin": thin,
                                            "thick": thick})
    assert sorted(pt.name for pt in spec.parts if pt.kind == "solid") == ["gadget"]


def _without(traj, *keys):
    """``traj`` with its recorded simplicial meshes lacking the record's ``keys`` (a run of
    an earlier version)."""
    meta = dict(traj.metadata)
    meta["scene"] = {**meta["scene"], "simplicial": [
        {k: v for k, v in m.items() if k not in keys} for m in meta["scene"]["simplicial"]]}
    return replace(traj, metadata=meta)


def test_usd_face_subsets_name_the_shell_and_solid_parts(mixed_moved, tmp_path):
    stage = Usd.Stage.Open(str(write_usd(tmp_path / "m.usda", mixed_moved)))
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/strandlab/meshes/gadget"))
    subsets = UsdGeom.Subset.GetGeomSubsets(mesh, UsdGeom.Tokens.face, "part")
    assert [(s.GetPrim().GetName(), list(s.GetIndicesAttr().Get())) for s in subsets] == [
        ("block", [1, 2, 3, 4]), ("flap", [0])]                   # in the parts' order
    assert UsdGeom.Subset.GetFamilyType(mesh, "part") == UsdGeom.Tokens.nonOverlapping
    # a recorded scene without the cells' parts (a run of an earlier version): no subsets,
    # the rods one curves prim
    old = _without(mixed_moved, "triangle_parts", "surface_parts", "edge_parts")
    part = next(p for p in extra_parts(old) if p.kind == "mesh")
    assert part.subsets == {} and part.rods == {} and len(part.triangles) == 5
    stage = Usd.Stage.Open(str(write_usd(tmp_path / "old.usda", old)))
    assert [c.GetName() for c in stage.GetPrimAtPath("/strandlab/rods").GetChildren()] == [
        "gadget_rods"]
    part = next(p for p in extra_parts(_without(mixed_moved, "triangle_parts")) if p.kind == "mesh")
    assert {k: v.tolist() for k, v in part.subsets.items()} == {"block": [1, 2, 3, 4]}


# ---------------------------------------------------------------------------------- OBJ, PLY
def test_obj_and_ply_faces_and_rod_polylines(mixed_moved, tmp_path):
    mixed = mixed_moved
    obj = export_frames(mixed, tmp_path / "obj", "obj", frames="3")[0]
    text = obj.read_text().splitlines()
    assert "o gadget" in text and "o strands" not in text       # the run has no strands
    verts = np.array([[float(v) for v in ln.split()[1:]] for ln in text if ln[:2] == "v "])
    faces = [[int(i) - 1 for i in ln.split()[1:]] for ln in text if ln[:2] == "f "]
    lines = [[int(i) - 1 for i in ln.split()[1:]] for ln in text if ln[:2] == "l "]
    assert np.array_equal(verts, mixed.extra_points[3][MESH])    # 17 digits: exact
    assert faces == (mixed.extra_triangles - 3).tolist()
    assert lines == [c for c, _ in rf.MIXED_CHAINS]
    ply_path = export_frames(mixed, tmp_path / "ply", "ply", frames="3")[0]
    ply = _parse_ply(ply_path)
    v = ply["vertex"]
    assert np.array_equal(np.c_[v["x"], v["y"], v["z"]], mixed.extra_points[3][MESH])
    want_r = np.zeros(11)
    want_r[[3, 5, 6, 7, 8]] = rf.THIN
    want_r[[8, 9, 10]] = rf.THICK                   # a vertex takes its thickest rod
    assert np.array_equal(v["radius"], want_r)
    text = ply_path.read_text().splitlines()
    start = text.index("end_header") + 1 + 11                    # after the 11 vertices
    assert "property list uchar int vertex_indices" in text
    faces = [[int(i) for i in ln.split()] for ln in text[start:start + 5]]
    assert faces == [[3, *t] for t in (mixed.extra_triangles - 3).tolist()]
    edges = np.c_[ply["edge"]["vertex1"], ply["edge"]["vertex2"]].astype(int).tolist()
    assert edges == [[3, 5], [5, 6], [6, 7], [6, 8], [8, 9], [9, 10]]


def test_obj_with_strands_and_a_mesh_names_both_objects(tmp_path):
    # strands and a deformable mesh: the interchange sample (two objects, one of faces)
    from interchange_fixtures import sample_trajectory

    obj = export_frames(sample_trajectory(2), tmp_path / "obj", "obj", frames="1")[0]
    verts, lines = _parse_obj_objects(obj)
    assert list(verts) == ["strands", "cloth"]
    assert len(verts["strands"]) == 14 and len(verts["cloth"]) == 4
    assert lines["cloth"] == [("f", [15, 16, 17]), ("f", [15, 17, 18])]


def _parse_obj_objects(path):
    verts, cells, name = {}, {}, None
    for raw in path.read_text().splitlines():
        parts = raw.split()
        if not parts or parts[0] == "#":
            continue
        if parts[0] == "o":
            name = parts[1]
            verts[name], cells[name] = [], []
        elif parts[0] == "v":
            verts[name].append([float(x) for x in parts[1:]])
        else:
            cells[name].append((parts[0], [int(i) for i in parts[1:]]))
    return verts, cells


def test_mesh_indices_follow_the_strands(tmp_path):
    """Strands and a mesh in one file: the mesh's faces and rods index past the strands'
    vertices, and PLY radii follow each rod."""
    pts, off = np.arange(15.0).reshape(5, 3) * 0.01, [0, 3, 5]
    mesh = FrameMesh("m", np.eye(3) + 1.0, np.array([[0, 1, 2]]),
                     (RodChain(np.array([0, 1]), 0.01), RodChain(np.array([1, 2]), 0.03)))
    ply_path = write_ply_polylines(tmp_path / "a.ply", pts, off, radii=[0.001, 0.002],
                                   meshes=[mesh])
    ply = _parse_ply(ply_path)
    assert np.array_equal(ply["vertex"]["radius"], [0.001] * 3 + [0.002] * 2 + [0.01, 0.03, 0.03])
    edges = np.c_[ply["edge"]["vertex1"], ply["edge"]["vertex2"]].astype(int).tolist()
    assert edges == [[0, 1], [1, 2], [3, 4], [5, 6], [6, 7]]
    assert "3 5 6 7" in ply_path.read_text().splitlines()
    text = write_obj_polylines(tmp_path / "a.obj", pts, off, meshes=[mesh]).read_text()
    lines = text.splitlines()
    assert lines.index("o strands") < lines.index("o m")
    assert lines[-3:] == ["f 6 7 8", "l 6 7", "l 7 8"]


def test_the_parts_runs_are_recorded_and_read():
    """``SimplicialSpec.describe`` records the parts of the shell triangles, the solids'
    boundary faces and the rod edges as runs; the exporters read them back as the rows of
    each part, named as prims (rod curves unique among the file's names), and ignore a record
    that does not add up."""
    from strandlab.io.selection import _part_cells
    from strandlab.sim.material import Material
    from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

    x = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0.0], [0, 0, 1.0],
                  [1, 0, -1.0]])
    cloth = ShellMaterial(1e7, 0.3, 1e-3, 1000.0)
    jelly = SolidMaterial(1e6, 0.3, 1000.0)
    wire = Material(young_modulus=1e8, density=1000.0, radius=1e-3)
    mb = SimplicialBuilder(x, name="sheet")
    mb.add_shells([[0, 1, 2], [0, 2, 3]], material=cloth, name="rib 1")
    mb.add_rods([[3, 5]], material=wire, name="stem")
    mb.add_shells([[1, 4, 2]], material=cloth, name="rib_1")
    mb.add_solids([[0, 1, 3, 5]], material=jelly, name="lump")
    mb.add_solids([[0, 3, 1, 6]], material=jelly, name="lump 2")
    mb.add_rods([[4, 6], [2, 4]], material=wire, name="stem 1")
    spec = mb.build()
    d = spec.describe()
    assert d["triangle_parts"] == [[0, 2], [2, 1]]
    assert d["edge_parts"] == [[1, 1], [5, 2]]
    # the two tetrahedra share the face 0-1-3: three boundary faces each, after the shells'
    n_faces = len(spec.surface_triangles())
    face_part = np.repeat(*np.array(d["surface_parts"]).T)
    assert n_faces == 9 and sorted(face_part.tolist()) == [3, 3, 3, 4, 4, 4]
    assert d["tet_parts"] == [[3, 1], [4, 1]]
    used = {"stem"}
    subsets, rods, tets = _part_cells(d, n_faces, 3, 2, used)
    assert {k: v.tolist() for k, v in subsets.items()} == {
        "rib_1": [0, 1], "rib_1_1": [2], "lump": (3 + np.flatnonzero(face_part == 3)).tolist(),
        "lump_2": (3 + np.flatnonzero(face_part == 4)).tolist()}
    assert {k: v.tolist() for k, v in rods.items()} == {"stem_1": [0], "stem_1_1": [1, 2]}
    assert {k: v.tolist() for k, v in tets.items()} == {"lump": [0], "lump_2": [1]}
    assert used == {"stem", "stem_1", "stem_1_1"}
    subsets, _, _ = _part_cells({**d, "triangle_parts": [[0, 1], [2, 1], [0, 1]]}, n_faces, 3, 2,
                                set())
    assert subsets["rib_1"].tolist() == [0, 2] and subsets["rib_1_1"].tolist() == [1]
    for key, bad in (("triangle_parts", [[0, 2]]), ("triangle_parts", [[0, 2], [7, 1]]),
                     ("triangle_parts", [[0, 3], [2, 0]]), ("triangle_parts", "x"),
                     ("surface_parts", [[3, 3]]), ("edge_parts", [[1, 2]]),
                     ("tet_parts", [[3, 3]]), ("tet_parts", [[9, 2]])):
        subsets, rods, tets = _part_cells({**d, key: bad}, n_faces, 3, 2, set())
        names = {"triangle_parts": {"rib_1", "rib_1_1"}, "surface_parts": {"lump", "lump_2"},
                 "edge_parts": set(), "tet_parts": set()}[key]
        assert not names & set(subsets), (key, bad)
        assert (rods == {}) == (key == "edge_parts"), (key, bad)
        assert (tets == {}) == (key == "tet_parts"), (key, bad)
    assert _part_cells({}, 5, 0, 0, set()) == ({}, {}, {})


def test_rod_curves_are_named_apart_from_the_files_other_names(mixed_moved, tmp_path):
    """A rod part named like a strand group or another extra part gets ``_1`` appended: one
    name per prim or object (Blender's object names are global)."""
    meta = dict(mixed_moved.metadata)
    rec = dict(meta["scene"]["simplicial"][0])
    rec["parts"] = [{**p, "name": {"thin": "strands", "thick": "frames"}.get(p["name"],
                                                                           p["name"])}
                    for p in rec["parts"]]
    meta["scene"] = {**meta["scene"], "simplicial": [rec]}
    n = len(mixed_moved.times)
    traj = replace(mixed_moved, metadata=meta, positions=np.zeros((n, 2, 3)),
                   strand_offsets=np.array([0, 2]), edge_offsets=np.array([0, 1]),
                   closed=np.array([False]), radii=np.array([1e-3]),
                   vertex_radii=np.array([1e-3, 1e-3]), d1=np.zeros((n, 1, 3)))
    (mesh,) = [p for p in extra_parts(traj, taken=["strands"]) if p.kind == "mesh"]
    assert {k: v.tolist() for k, v in mesh.rods.items()} == {"strands_1": [0, 1, 2, 3],
                                                             "frames_1": [4, 5]}
    # the writers take the strand groups' names
    stage = Usd.Stage.Open(str(write_usd(tmp_path / "m.usda", traj)))
    assert [c.GetName() for c in stage.GetPrimAtPath("/strandlab/rods").GetChildren()] == [
        "strands_1", "frames_1"]
    top = abc.Abc.IArchive(str(write_abc(tmp_path / "m.abc", traj))).getTop()
    assert {top.getChild(i).getName() for i in range(top.getNumChildren())} == {
        "strands", "frames", "gadget", "strands_1", "frames_1"}
