"""Parts within one mesh: the face subsets of a USD mesh (``GeomSubset`` prims: Blender writes one
per material slot, named after the material) and the face sets of an Alembic mesh are parts of
their own when a material names them; the mesh keeps the faces no named subset takes."""
import numpy as np
import pytest

pxr = pytest.importorskip("pxr")
alembic3d = pytest.importorskip("alembic3d")
import imath  # noqa: E402
from pxr import Usd, UsdGeom  # noqa: E402

from strandlab.cli import main  # noqa: E402
from strandlab.io.mesh_info import describe_mesh_file  # noqa: E402
from strandlab.io.simplicial import file_subsets, read_simplicial  # noqa: E402
from strandlab.sim.simplicial import ShellMaterial  # noqa: E402

CLOTH = ShellMaterial(young_modulus=1e8, poisson_ratio=0.3, thickness=1e-4, density=1140.0)
HEM = ShellMaterial(young_modulus=1e9, poisson_ratio=0.3, thickness=5e-4, density=1140.0)

# a banner of 3 x 2 quads in the xz plane, 0.3 m wide and 0.2 m high: faces 0-2 the lower row
GRID = [(0.1 * i, 0.0, 0.1 * j) for j in range(3) for i in range(4)]
QUADS = [(j * 4 + i, j * 4 + i + 1, (j + 1) * 4 + i + 1, (j + 1) * 4 + i)
         for j in range(2) for i in range(3)]
ROWS = {"nylon": [0, 1, 2], "rubber": [3, 4, 5]}


def usd_banner(p, subsets=ROWS, *, second=False):
    """The banner as Blender's USD exporter writes it, a face subset per material, and a
    subset of points (skipped); ``second``: a second banner above it, with the same subsets."""
    stage = Usd.Stage.CreateNew(str(p))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    for k, name in enumerate(["Banner", "Other"][:1 + second]):
        UsdGeom.Xform.Define(stage, f"/root/{name}")
        m = UsdGeom.Mesh.Define(stage, f"/root/{name}/Grid")
        m.CreatePointsAttr([(x, y, z + 0.5 * k) for x, y, z in GRID])
        m.CreateFaceVertexCountsAttr([4] * len(QUADS))
        m.CreateFaceVertexIndicesAttr([i for q in QUADS for i in q])
        for sub, faces in subsets.items():
            UsdGeom.Subset.CreateGeomSubset(m, sub, UsdGeom.Tokens.face, faces,
                                            familyName="materialBind")
        UsdGeom.Subset.CreateGeomSubset(m, "pins", UsdGeom.Tokens.point, [0, 3])
    stage.GetRootLayer().Save()
    return p


def abc_banner(p, subsets=ROWS, *, second=False):
    """The banner as Blender's Alembic exporter writes it with Face Sets on (y-up, faces
    wound clockwise), a face set per material."""
    G = alembic3d.AbcGeom
    archive = alembic3d.Abc.OArchive(str(p))
    for k, name in enumerate(["Banner", "Other"][:1 + second]):
        xf = G.OXform(archive.getTop(), name)
        mesh = G.OPolyMesh(xf, "Grid")
        pts = np.array([(x, z + 0.5 * k, -y) for x, y, z in GRID], dtype=np.float32)
        idx = np.array([i for q in QUADS for i in q[::-1]], dtype=np.int32)
        schema = mesh.getSchema()
        schema.set(G.OPolyMeshSchemaSample(imath.V3fArrayFromBuffer(pts),
                                           imath.IntArrayFromBuffer(idx),
                                           imath.IntArrayFromBuffer(np.full(6, 4, np.int32))))
        for sub, faces in subsets.items():
            sample = G.OFaceSetSchemaSample()
            sample.setFaces(imath.IntArrayFromBuffer(np.asarray(faces, dtype=np.int32)))
            schema.createFaceSet(sub).getSchema().set(sample)
    del archive
    return p


BANNERS = {"usd": (usd_banner, "banner.usda", "/root/Banner/Grid"),
           "abc": (abc_banner, "banner.abc", "/Banner/Grid")}


@pytest.fixture(params=list(BANNERS))
def tool(request, tmp_path):
    make, name, mesh = BANNERS[request.param]
    return lambda **kw: make(tmp_path / name, **kw), mesh


def _rows(spec):
    """Per part, the heights [m] of its triangles' centroids."""
    z = spec.vertices[spec.triangles, 2].mean(axis=1)
    return {pt.name: np.sort(z[spec.triangle_part == k]) for k, pt in enumerate(spec.parts)}


def test_subsets_named_by_their_materials_are_parts(tool):
    make, _ = tool
    spec = read_simplicial(make(), materials={"nylon": CLOTH, "rubber": HEM})
    assert [(pt.name, pt.kind, pt.material) for pt in spec.parts] == [
        ("nylon", "shell", CLOTH), ("rubber", "shell", HEM)]
    rows = _rows(spec)
    assert len(rows["nylon"]) == len(rows["rubber"]) == 6        # three quads each
    assert rows["nylon"].max() < 0.1 < rows["rubber"].min()
    # one conforming mesh: the two parts share the middle row's four vertices
    shared = np.intersect1d(spec.triangles[spec.triangle_part == 0],
                            spec.triangles[spec.triangle_part == 1])
    assert np.allclose(spec.vertices[shared, 2], 0.1) and len(shared) == 4
    assert len(spec.vertices) == 12


def test_the_mesh_keeps_the_faces_no_named_subset_takes(tool):
    make, mesh = tool
    p = make()
    spec = read_simplicial(p, materials={"Banner": CLOTH, "rubber": HEM})
    assert [pt.name for pt in spec.parts] == ["Banner", "rubber"]
    rows = _rows(spec)
    assert rows["Banner"].max() < 0.1 < rows["rubber"].min() and len(rows["Banner"]) == 6
    # no subset named: the mesh whole, as before subsets were read; subsets of points are no
    # parts (the USD banner's "pins")
    spec = read_simplicial(p, materials={"Banner": CLOTH, **({"pins": HEM} if p.suffix != ".abc"
                                                          else {})})
    assert [pt.name for pt in spec.parts] == ["Banner"] and len(spec.triangles) == 12
    # a subset by its path; every face taken: no part left of the mesh
    spec = read_simplicial(p, materials={f"{mesh}/nylon": CLOTH, "rubber": HEM, "Banner": HEM})
    assert [pt.name for pt in spec.parts] == [f"{mesh}/nylon", "rubber"]


def test_subset_mistakes_name_the_file_and_subset(tool):
    make, mesh = tool
    p = make(subsets={"nylon": [0, 1, 2, 3], "rubber": [3, 4, 5]})
    with pytest.raises(ValueError, match=rf"{mesh}, face 3: in the face subsets {mesh}/nylon "
                                         rf"and {mesh}/rubber, both named as parts"):
        read_simplicial(p, materials={"nylon": CLOTH, "rubber": HEM})
    spec = read_simplicial(p, materials={"Banner": CLOTH, "rubber": HEM})   # one named: fine
    assert len(_rows(spec)["rubber"]) == 6
    with pytest.raises(ValueError, match=rf"{mesh}/rubber is named twice, as 'rubber' and "
                                         rf"'{mesh}/rubber'"):
        read_simplicial(p, materials={"rubber": HEM, f"{mesh}/rubber": HEM, "Banner": CLOTH})
    p = make(subsets={"nylon": [0, 1, 2], "rubber": [3, 4, 6]})
    with pytest.raises(ValueError, match=rf"{mesh}/rubber: face 6 does not exist \(the mesh "
                                         r"has 6 faces\)"):
        read_simplicial(p, materials={"Banner": CLOTH})
    p = make(second=True)
    with pytest.raises(ValueError, match=r"'nylon' is on the paths of several face subsets: "
                                         rf"{mesh}/nylon, .*/Other/Grid/nylon; name one by its path"):
        read_simplicial(p, materials={"nylon": CLOTH, "rubber": HEM, "Other": CLOTH})
    spec = read_simplicial(p, materials={f"{mesh}/nylon": CLOTH, "Banner": HEM, "Other": CLOTH})
    assert [(pt.name, len(z)) for pt, z in zip(spec.parts, _rows(spec).values())] == [
        ("Banner", 6), (f"{mesh}/nylon", 6), ("Other", 12)]


def test_the_mesh_command_lists_the_subsets(tool, capsys):
    make, mesh = tool
    p = make()
    assert main(["mesh", str(p)]) == 0
    out = capsys.readouterr().out
    assert "face subsets (a material that names one" in out
    assert f"{mesh}/rubber  rubber: 6 triangles of {mesh}, can be a shell" in out
    info = describe_mesh_file(p)
    assert [(s.name, s.mesh, s.triangles, s.closed) for s in info.subsets] == [
        (f"{mesh}/nylon", mesh, 6, False), (f"{mesh}/rubber", mesh, 6, False)]
    subs = file_subsets(p)
    assert np.allclose(np.sort(np.unique(subs[f"{mesh}/nylon"][1])), [0, 1, 2, 3, 4, 5, 6, 7])
    assert main(["mesh", str(make(second=True))]) == 0      # "nylon" twice: by its path
    out = capsys.readouterr().out
    assert f"{mesh}/rubber  {mesh}/rubber: 6 triangles" in out


def test_a_closed_subset_can_be_a_solid(tmp_path):
    """A cube's faces in one subset, a flap of two more faces outside it: the subset is a
    closed surface, filled as a solid, and the flap is a shell sewn to it."""
    stage = Usd.Stage.CreateNew(str(tmp_path / "box.usda"))
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    m = UsdGeom.Mesh.Define(stage, "/root/box/Mesh")
    cube = [(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)]
    m.CreatePointsAttr([(0.1 * a, 0.1 * b, 0.1 * c) for a, b, c in cube]
                       + [(0.2, 0.0, 0.0), (0.2, 0.0, 0.1)])
    faces = [(0, 1, 3, 2), (2, 3, 7, 6), (6, 7, 5, 4), (4, 5, 1, 0), (2, 6, 4, 0),
             (7, 3, 1, 5), (4, 8, 9, 5)]
    m.CreateFaceVertexCountsAttr([4] * len(faces))
    m.CreateFaceVertexIndicesAttr([i for f in faces for i in f])
    UsdGeom.Subset.CreateGeomSubset(m, "foam", UsdGeom.Tokens.face, list(range(6)))
    stage.GetRootLayer().Save()
    info = describe_mesh_file(tmp_path / "box.usda")
    assert [(s.triangles, s.closed) for s in info.subsets] == [(12, True)]
    assert info.subsets[0].volume == pytest.approx(1e-3)
    from strandlab.sim.simplicial import SolidMaterial

    foam = SolidMaterial(young_modulus=1e6, poisson_ratio=0.3, density=500.0)
    spec = read_simplicial(tmp_path / "box.usda", materials={"foam": foam, "box": CLOTH})
    assert [(pt.name, pt.kind) for pt in spec.parts] == [("box", "shell"), ("foam", "solid")]
    assert len(spec.triangles) == 2 and len(spec.tets) >= 5
