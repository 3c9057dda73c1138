"""Labelled meshes from Alembic archives, as Blender's and Houdini's Alembic exporters write
them: a part per PolyMesh object (a shell's faces or a solid's closed surface) and per linear
Curves object (a rod), placed by the Xforms above them, y-up by Alembic's convention, faces
wound clockwise turned counter-clockwise, parts named by a name on their path."""
import numpy as np
import pytest

alembic3d = pytest.importorskip("alembic3d")
import imath  # noqa: E402
from test_simplicial_usd import CUBE, MATS, ROD, check_flag_model  # noqa: E402

from strandlab.cli import main  # noqa: E402
from strandlab.io.simplicial import file_cells, read_simplicial  # noqa: E402

Abc, G = alembic3d.Abc, alembic3d.AbcGeom
# the USD tests' cube, each face clockwise seen from outside (Alembic's winding)
CUBE_CW = [2, 3, 1, 0, 6, 7, 3, 2, 4, 5, 7, 6, 0, 1, 5, 4, 0, 4, 6, 2, 5, 1, 3, 7]


def _xform(parent, name, translate=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)):
    obj = G.OXform(parent, name)
    sample = G.XformSample()
    m = imath.M44d()
    for i in range(4):
        for j in range(4):
            m[i][j] = 0.0
    for i in range(3):
        m[i][i] = scale[i]
        m[3][i] = translate[i]
    m[3][3] = 1.0
    sample.setMatrix(m)
    obj.getSchema().set(sample)
    return obj


def _mesh(parent, name, points, counts, indices):
    obj = G.OPolyMesh(parent, name)
    pos = imath.V3fArrayFromBuffer(np.ascontiguousarray(points, dtype=np.float32))
    idx = imath.IntArrayFromBuffer(np.ascontiguousarray(indices, dtype=np.int32))
    cnt = imath.IntArrayFromBuffer(np.ascontiguousarray(counts, dtype=np.int32))
    obj.getSchema().set(G.OPolyMeshSchemaSample(pos, idx, cnt))
    return obj


def _curves(parent, name, points, counts, kind=G.CurveType.kLinear, closed=False):
    obj = G.OCurves(parent, name)
    pos = imath.V3fArrayFromBuffer(np.ascontiguousarray(points, dtype=np.float32))
    cnt = imath.IntArrayFromBuffer(np.ascontiguousarray(counts, dtype=np.int32))
    wrap = G.CurvePeriodicity.kPeriodic if closed else G.CurvePeriodicity.kNonPeriodic
    obj.getSchema().set(G.OCurvesSchemaSample(pos, cnt, kind, wrap, iBasis=G.BasisType.kNoBasis))
    return obj


def blender_archive(p, *, mirror=False, pole_kind=G.CurveType.kLinear, flag_faces=None):
    """The USD tests' model, y-up as Blender's Alembic exporter writes it ((x, y, z) of
    Blender's z-up world -> (x, z, -y)): the foot a cube of 0.1 m (its top corner at
    (0.1, 0.1, 0.1) z-up), the pole a curve on that corner, the flag a quad from the pole's
    upper half, facing -y (z-up) as the USD test's."""
    archive = Abc.OArchive(str(p))
    top = archive.getTop()
    s = -1.0 if mirror else 1.0          # mirrored in x by the transform, the points too
    foot = _xform(top, "foot", (0.05, 0.05, -0.05), (0.05 * s, 0.05, 0.05))
    cube = [(s * a, b, c) for a, b, c in CUBE]
    idx = CUBE_CW if not mirror else [i for f in np.reshape(CUBE_CW, (6, 4)) for i in f[::-1]]
    _mesh(foot, "Cube", cube, [4] * 6, idx)
    pole = _xform(top, "pole", (0.1, 0.0, -0.1))
    _curves(pole, "PoleCurve", [(0, 0.1, 0), (0, 0.3, 0), (0, 0.5, 0)], [3], pole_kind)
    flag = _xform(top, "flag", (0.1, 0.3, -0.1))
    counts, indices = flag_faces or ([4], [0, 3, 2, 1])     # clockwise seen from -y (z-up)
    _mesh(flag, "Plane", [(0, 0, 0), (0.3, 0, 0), (0.3, 0.2, 0), (0, 0.2, 0)], counts, indices)
    objs = (foot, pole, flag)
    del objs, archive
    return p


@pytest.mark.parametrize("mirror", [False, True])
def test_parts_by_object_name_placed_welded_and_facing_out(tmp_path, mirror):
    p = blender_archive(tmp_path / "flag.abc", mirror=mirror)
    check_flag_model(read_simplicial(p, materials=MATS))     # the USD tests' model, alike
    _, xs, cells = file_cells(p)                  # the cube's surface faces out
    t = xs[cells["/foot/Cube"][1]]
    out = np.einsum("ij,ij->i", np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]),
                    t.mean(axis=1) - [0.05, 0.05, 0.05])
    assert len(t) == 12 and np.all(out > 0)
    # a z-up archive, told so
    raw = read_simplicial(p, materials=MATS, up="z")
    assert np.allclose(raw.vertices[:, 1].max(), 0.5)


def test_the_mesh_command_reads_alembic(tmp_path, capsys):
    p = blender_archive(tmp_path / "flag.abc")
    assert main(["mesh", str(p)]) == 0
    out = capsys.readouterr().out
    assert "/pole/PoleCurve  pole      2          0           0         3  a rod" in out
    assert "/foot/Cube       foot      0         12           0         8  a shell, or a solid" in out
    assert "/pole/PoleCurve - /flag/Plane: 2 shared vertices, 1 shared edge" in out


@pytest.mark.parametrize("make, message", [
    (dict(pole_kind=G.CurveType.kCubic), r"flag.abc, /pole/PoleCurve: cubic curves: rods are "
                                         r"read from linear curves"),
    (dict(flag_faces=([3, 2], [0, 1, 2, 2, 3])), r"/flag/Plane, face 1: a face needs at least "
                                                 r"3 corners, got 2"),
    (dict(flag_faces=([4], [0, 3, 2, 7])), r"/flag/Plane, face 0: point 7 does not exist"),
])
def test_mistakes_name_the_file_and_object(tmp_path, make, message):
    p = blender_archive(tmp_path / "flag.abc", **make)
    with pytest.raises(ValueError, match=message):
        read_simplicial(p, materials=MATS)


def test_archives_without_what_rods_shells_and_solids_need(tmp_path):
    archive = Abc.OArchive(str(tmp_path / "edges.abc"))
    _mesh(_xform(archive.getTop(), "pole"), "PoleMesh", [(0, 0, 0), (0, 1, 0)], [], [])
    del archive
    with pytest.raises(ValueError, match=r"/pole/PoleMesh: a mesh without faces"):
        read_simplicial(tmp_path / "edges.abc", materials={"pole": ROD})
    archive = Abc.OArchive(str(tmp_path / "empty.abc"))
    _xform(archive.getTop(), "nothing")
    del archive
    with pytest.raises(ValueError, match=r"empty.abc: no PolyMesh or Curves object"):
        read_simplicial(tmp_path / "empty.abc", materials={})
    archive = Abc.OArchive(str(tmp_path / "ring.abc"))
    _curves(archive.getTop(), "ring", [(0, 0, 0), (1, 0, 0), (1, 1, 0)], [3], closed=True)
    del archive
    spec = read_simplicial(tmp_path / "ring.abc", materials={"ring": ROD})
    assert len(spec.rod_edges) == 3                       # closed: its closing edge too
    (tmp_path / "bad.abc").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match=r"bad.abc is not a readable Alembic file"):
        read_simplicial(tmp_path / "bad.abc", materials={})
