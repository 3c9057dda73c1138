"""USD export: the stage reopened with pxr has the schema attributes, time samples and metadata
of the run; reading it back gives the positions, counts, radii and closed flags."""
import sys

import numpy as np
import pytest
from interchange_fixtures import FPS, MAT_A, sample_trajectory
from pxr import Usd, UsdGeom  # usd-core: in the test extra

from strandlab.io.strands import read_strands
from strandlab.io.usd import Z_TO_Y, read_usd_strands, write_usd


def _curves(stage, name):
    prim = stage.GetPrimAtPath(f"/strandlab/strands/{name}")
    assert prim.IsValid() and prim.IsA(UsdGeom.BasisCurves), name
    return UsdGeom.BasisCurves(prim)


def test_stage_metadata_and_curve_schema(tmp_path):
    traj = sample_trajectory(5)
    p = write_usd(tmp_path / "run.usda", traj, frames="1:5:2")
    stage = Usd.Stage.Open(str(p))
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert stage.GetTimeCodesPerSecond() == pytest.approx(FPS)
    assert stage.GetFramesPerSecond() == pytest.approx(FPS)
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (1.0, 3.0)
    assert stage.GetDefaultPrim().GetPath() == "/strandlab"
    # one prim per group: material A open (strands 0, 3), B closed (1), B open (2)
    c = _curves(stage, "material_0")
    assert c.GetTypeAttr().Get() == UsdGeom.Tokens.linear
    assert c.GetWrapAttr().Get() == UsdGeom.Tokens.nonperiodic
    assert list(c.GetCurveVertexCountsAttr().Get()) == [4, 2]
    assert list(c.GetPrim().GetAttribute("strandlab:strandIndices").Get()) == [0, 3]
    assert c.GetWidthsInterpolation() == UsdGeom.Tokens.vertex
    assert np.allclose(c.GetWidthsAttr().Get(), 2 * 0.004)
    assert c.GetPrim().GetCustomDataByKey("strandlab:material")["young_modulus"] == \
        MAT_A["young_modulus"]
    assert c.GetPointsAttr().GetTimeSamples() == [1.0, 3.0]
    for k in (1, 3):
        want = traj.positions[k][np.r_[0:4, 12:14]]
        got = np.asarray(c.GetPointsAttr().Get(Usd.TimeCode(k)))
        assert np.allclose(got, want, rtol=0, atol=1e-7)
        lo, hi = np.asarray(c.GetExtentAttr().Get(Usd.TimeCode(k)))
        assert np.all(lo <= want.min(0) - 0.004 + 1e-6) and np.all(hi >= want.max(0) + 0.004 - 1e-6)
    closed = _curves(stage, "material_1_closed")
    assert closed.GetWrapAttr().Get() == UsdGeom.Tokens.periodic
    assert list(closed.GetCurveVertexCountsAttr().Get()) == [3]
    assert np.allclose(closed.GetWidthsAttr().Get(), 2 * 0.002)
    assert list(_curves(stage, "material_1").GetCurveVertexCountsAttr().Get()) == [5]


def test_meshes_and_frame_points(tmp_path):
    traj = sample_trajectory(3)
    stage = Usd.Stage.Open(str(write_usd(tmp_path / "run.usd", traj)))
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/strandlab/meshes/cloth"))
    assert mesh.GetPrim().IsValid()
    assert list(mesh.GetFaceVertexCountsAttr().Get()) == [3, 3]
    assert list(mesh.GetFaceVertexIndicesAttr().Get()) == [0, 1, 2, 0, 2, 3]
    assert np.allclose(mesh.GetPointsAttr().Get(Usd.TimeCode(2)), traj.extra_points[2][3:7])
    pts = UsdGeom.Points(stage.GetPrimAtPath("/strandlab/points/frames"))
    assert np.allclose(pts.GetPointsAttr().Get(Usd.TimeCode(1)), traj.extra_points[1][:3])
    assert pts.GetPointsAttr().GetTimeSamples() == [0.0, 1.0, 2.0]


def test_d1_primvar_carries_each_edge(tmp_path):
    traj = sample_trajectory(2)
    stage = Usd.Stage.Open(str(write_usd(tmp_path / "d.usda", traj, d1=True)))
    pv = UsdGeom.PrimvarsAPI(_curves(stage, "material_1")).GetPrimvar("strandlab:d1")
    assert pv.GetInterpolation() == UsdGeom.Tokens.vertex
    got = np.asarray(pv.Get(Usd.TimeCode(1)))
    e = traj.d1[1][6:10]                       # strand 2: 5 vertices, edges 6 .. 9
    assert np.allclose(got[:4], e, atol=1e-7) and np.allclose(got[4], e[3], atol=1e-7)
    closed = UsdGeom.PrimvarsAPI(_curves(stage, "material_1_closed")).GetPrimvar("strandlab:d1")
    assert np.allclose(closed.Get(Usd.TimeCode(0)), traj.d1[0][3:6], atol=1e-7)


@pytest.mark.parametrize("up", ["Z", "Y"])
def test_round_trip_positions_counts_and_radii(tmp_path, up):
    traj = sample_trajectory(4)
    p = write_usd(tmp_path / "rt.usdc", traj, up_axis=up)
    stage = Usd.Stage.Open(str(p))
    raw = np.asarray(_curves(stage, "material_1").GetPointsAttr().Get(Usd.TimeCode(2)))
    want_file = traj.positions[2][7:12] @ (np.eye(3) if up == "Z" else Z_TO_Y).T
    assert np.allclose(raw, want_file, atol=1e-7)
    for k in (0, 2, 3):
        s = read_usd_strands(p, time=k / FPS)
        assert np.array_equal(s.offsets, traj.strand_offsets)        # the run's strand order
        assert np.array_equal(s.closed, traj.closed)
        assert np.allclose(s.points, traj.positions[k], rtol=0, atol=2e-7)
        assert np.allclose(s.radius, np.repeat(traj.radii, np.diff(traj.strand_offsets)))
    assert np.allclose(read_strands(p).points, traj.positions[0], atol=2e-7)
    # scale: metres per file unit, overriding the stage's metersPerUnit
    assert np.allclose(read_strands(p, scale=0.01).points, 0.01 * traj.positions[0], atol=1e-8)


def test_reading_a_third_party_stage_with_transform_and_centimetres(tmp_path):
    stage = Usd.Stage.CreateNew(str(tmp_path / "cm.usda"))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    xf = UsdGeom.Xform.Define(stage, "/groom")
    xf.AddTranslateOp().Set((10.0, 0.0, 0.0))
    c = UsdGeom.BasisCurves.Define(stage, "/groom/hair")
    c.CreateCurveVertexCountsAttr([3])
    c.CreatePointsAttr([(0, 0, 0), (0, 10, 0), (0, 20, 0)])   # straight up (y) in cm
    c.CreateWidthsAttr([0.5])
    c.SetWidthsInterpolation(UsdGeom.Tokens.constant)
    stage.GetRootLayer().Save()
    s = read_strands(tmp_path / "cm.usda")
    assert np.allclose(s.points, [[0.1, 0, 0], [0.1, 0, 0.1], [0.1, 0, 0.2]])   # z-up metres
    assert np.allclose(s.radius, 0.0025) and not s.closed[0]


def test_interrupted_export_leaves_no_file_under_the_final_name(tmp_path):
    traj = sample_trajectory(4)
    out = tmp_path / "run.usda"
    out.write_text("previous export\n")

    def stop(k):
        if k == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_usd(out, traj, progress=stop)
    assert out.read_text() == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.usda"]
    with pytest.raises(KeyboardInterrupt):
        write_usd(tmp_path / "new.usd", traj, progress=stop)
    assert not (tmp_path / "new.usd").exists()


def test_bad_input_is_named(tmp_path, monkeypatch):
    traj = sample_trajectory(3)
    with pytest.raises(ValueError, match="frame 7 is out of range"):
        write_usd(tmp_path / "a.usd", traj, frames="7")
    with pytest.raises(ValueError, match="up_axis"):
        write_usd(tmp_path / "a.usd", traj, up_axis="X")
    with pytest.raises(ValueError, match="ends in .usd"):
        write_usd(tmp_path / "a.abc", traj)
    with pytest.raises(FileNotFoundError, match="missing"):
        write_usd(tmp_path / "missing" / "a.usd", traj)
    bad = tmp_path / "bad.usda"
    bad.write_text("#usda 1.0\n( this is not usd\n")
    with pytest.raises(ValueError, match="bad.usda is not a readable USD file"):
        read_usd_strands(bad)
    empty = Usd.Stage.CreateNew(str(tmp_path / "empty.usda"))
    empty.GetRootLayer().Save()
    with pytest.raises(ValueError, match="no BasisCurves"):
        read_usd_strands(tmp_path / "empty.usda")
    monkeypatch.setitem(sys.modules, "pxr", None)
    with pytest.raises(ImportError, match=r"usd-core.*strandlab\[interchange\]"):
        write_usd(tmp_path / "a.usd", traj)
