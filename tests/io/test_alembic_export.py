"""Alembic export: curves with widths and one uniform time sampling, y-up by default; read
back (with strandlab and with the bindings directly) positions, counts and radii match."""
import sys

import alembic3d as abc  # in the test extra
import numpy as np
import pytest
from interchange_fixtures import FPS, sample_trajectory

from strandlab.io.alembic import read_abc_strands, write_abc
from strandlab.io.strands import read_strands
from strandlab.io.usd import Z_TO_Y


def _objects(path):
    top = abc.Abc.IArchive(str(path)).getTop()
    return {top.getChild(i).getName(): top.getChild(i) for i in range(top.getNumChildren())}


def test_curves_schema_time_sampling_and_y_up(tmp_path):
    traj = sample_trajectory(5)
    p = write_abc(tmp_path / "run.abc", traj, frames="1:5:2")
    objs = _objects(p)
    assert set(objs) == {"material_0", "material_1_closed", "material_1", "frames", "cloth"}
    G = abc.AbcGeom
    schema = G.ICurves(objs["material_0"], abc.Abc.WrapExistingFlag.kWrapExisting).getSchema()
    assert schema.getNumSamples() == 2
    ts = schema.getTimeSampling()
    assert ts.getSampleTime(0) == pytest.approx(1 / FPS)
    assert ts.getSampleTime(1) == pytest.approx(3 / FPS)
    sample = schema.getValue(abc.Abc.ISampleSelector(1))
    assert list(sample.getCurvesNumVertices()) == [4, 2]
    assert sample.getType() == G.CurveType.kLinear
    assert sample.getWrap() == G.CurvePeriodicity.kNonPeriodic
    raw = np.array(memoryview(sample.getPositions()), dtype=np.float64)
    want = traj.positions[3][np.r_[0:4, 12:14]] @ Z_TO_Y.T            # (x, z, -y)
    assert np.allclose(raw, want, atol=1e-7)
    widths = schema.getWidthsParam().getExpandedValue(abc.Abc.ISampleSelector(1))
    assert widths.getScope() == G.GeometryScope.kVertexScope
    assert np.allclose(list(widths.getVals()), 2 * 0.004)
    closed = G.ICurves(objs["material_1_closed"], abc.Abc.WrapExistingFlag.kWrapExisting)
    assert closed.getSchema().getValue().getWrap() == G.CurvePeriodicity.kPeriodic
    mesh = G.IPolyMesh(objs["cloth"], abc.Abc.WrapExistingFlag.kWrapExisting).getSchema()
    ms = mesh.getValue(abc.Abc.ISampleSelector(0))
    # triangles (0, 1, 2), (0, 2, 3) written clockwise, Alembic's winding of a front face
    assert list(ms.getFaceIndices()) == [2, 1, 0, 3, 2, 0]
    assert np.allclose(np.array(memoryview(ms.getPositions())), traj.extra_points[1][3:7] @ Z_TO_Y.T)


@pytest.mark.parametrize("up", ["Y", "Z"])
def test_round_trip_positions_counts_and_radii(tmp_path, up):
    traj = sample_trajectory(4)
    p = write_abc(tmp_path / "rt.abc", traj, up_axis=up)
    for k in (0, 1, 3):
        s = read_abc_strands(p, time=k / FPS, up_axis=up)
        assert np.array_equal(s.offsets, traj.strand_offsets)
        assert np.array_equal(s.closed, traj.closed)
        assert np.allclose(s.points, traj.positions[k], rtol=0, atol=2e-7)
        assert np.allclose(s.radius, np.repeat(traj.radii, np.diff(traj.strand_offsets)))
    if up == "Y":
        assert np.allclose(read_strands(p, time=2 / FPS).points, traj.positions[2], atol=2e-7)


def test_interrupted_export_leaves_no_file_under_the_final_name(tmp_path):
    traj = sample_trajectory(4)

    def stop(k):
        if k == 1:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_abc(tmp_path / "run.abc", traj, progress=stop)
    assert list(tmp_path.iterdir()) == []


def test_bad_input_is_named(tmp_path, monkeypatch):
    traj = sample_trajectory(3)
    with pytest.raises(ValueError, match="stop 9 is past the end"):
        write_abc(tmp_path / "a.abc", traj, frames="0:9")
    with pytest.raises(ValueError, match="ends in .abc"):
        write_abc(tmp_path / "a.usd", traj)
    bad = tmp_path / "bad.abc"
    bad.write_bytes(b"not an archive" * 10)
    with pytest.raises(ValueError, match="bad.abc is not a readable Alembic file"):
        read_abc_strands(bad)
    monkeypatch.setitem(sys.modules, "alembic3d", None)
    with pytest.raises(ImportError, match=r"alembic3d.*strandlab\[interchange\]"):
        write_abc(tmp_path / "a.abc", traj)
