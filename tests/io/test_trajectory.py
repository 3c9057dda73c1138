"""Trajectory files (.npz and .h5): round trip, errors that name the file and the bad key, and
reading format-version-1 files whose ghost points become the material direction d1."""
import json
import zipfile

import numpy as np
import pytest

from strandlab.io.trajectory import (
    Trajectory,
    d1_from_ghosts,
    edge_vertices,
    load_trajectory,
    save_trajectory,
)


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _traj(n_frames=4, with_mesh=True) -> Trajectory:
    """Two strands (open 5 vertices, closed 4 vertices) and an optional 2-triangle mesh."""
    rng = np.random.default_rng(7)
    nv, ne = 9, 4 + 4
    n_extra = 4 if with_mesh else 0
    tri = np.array([[0, 1, 2], [0, 2, 3]]) if with_mesh else np.zeros((0, 3), dtype=np.int64)
    return Trajectory(
        times=np.arange(n_frames) / 60.0,
        positions=rng.normal(size=(n_frames, nv, 3)),
        d1=_unit(rng.normal(size=(n_frames, ne, 3))),
        strand_offsets=np.array([0, 5, 9]),
        edge_offsets=np.array([0, 4, 8]),
        closed=np.array([False, True]),
        radii=np.array([0.01, 0.002]),
        extra_points=rng.normal(size=(n_frames, n_extra, 3)),
        extra_triangles=tri,
        metadata={"name": "test", "dt": 1 / 600, "gravity": [0, 0, -9.81],
                  "nested": {"k": np.int64(3), "arr": np.arange(3)}},
    )


def _rewrite(src, dst, drop=(), replace=None):
    """Copy the .npz ``src`` to ``dst`` leaving out ``drop`` and replacing entries."""
    with np.load(src, allow_pickle=False) as data:
        entries = {k: data[k] for k in data.files if k not in drop}
    entries.update(replace or {})
    np.savez_compressed(dst, **entries)
    return dst


@pytest.mark.parametrize("suffix", [".npz", ".h5"])
def test_round_trip_is_exact(tmp_path, suffix):
    tr = _traj()
    p = save_trajectory(tmp_path / f"t{suffix}", tr)
    assert p == tmp_path / f"t{suffix}" and p.is_file()
    back = load_trajectory(p)
    for k in ("times", "positions", "d1", "strand_offsets", "edge_offsets", "closed",
              "radii", "extra_points", "extra_triangles"):
        assert np.array_equal(np.asarray(getattr(back, k)), getattr(tr, k)), k
        assert getattr(back, k).dtype == getattr(tr, k).dtype, k
    assert back.metadata == {"name": "test", "dt": 1 / 600, "gravity": [0, 0, -9.81],
                             "nested": {"k": 3, "arr": [0, 1, 2]}}
    assert (back.n_frames, back.n_strands, back.n_vertices, back.n_edges) == (4, 2, 9, 8)
    assert back.status == "complete"


def test_solver_is_recorded_in_metadata(tmp_path):
    solver = {"type": "pbd", "settings": {"iterations": 4, "substeps": 2}}
    for name in ("s.npz", "s.h5"):
        back = load_trajectory(save_trajectory(tmp_path / name, _traj(), solver=solver))
        assert back.metadata["solver"] == solver and back.solver == solver
        assert back.metadata["name"] == "test"
    with pytest.raises(ValueError, match="solver must be a dict with exactly the keys"):
        save_trajectory(tmp_path / "x.npz", _traj(), solver={"type": "pbd"})
    with pytest.raises(ValueError, match=r"solver\['type'\] must be a non-empty string"):
        save_trajectory(tmp_path / "x.npz", _traj(), solver={"type": "", "settings": {}})


@pytest.mark.parametrize("name, written", [("traj", "traj.h5"), ("traj.npz", "traj.npz"),
                                           ("traj.hdf5", "traj.hdf5"), ("a.b", "a.b.h5")])
def test_suffix_picks_the_format_and_empty_mesh_round_trips(tmp_path, name, written):
    tr = _traj(n_frames=1, with_mesh=False)
    p = save_trajectory(tmp_path / name, tr)
    assert p.name == written
    head = p.read_bytes()[:8]
    assert head[:4] == b"PK\x03\x04" if written.endswith(".npz") else head == b"\x89HDF\r\n\x1a\n"
    back = load_trajectory(p)
    assert back.extra_points.shape == (1, 0, 3)
    assert np.asarray(back.extra_points).shape == (1, 0, 3)
    assert back.extra_triangles.shape == (0, 3)


def test_strand_views():
    tr = _traj()
    assert tr.strand(0).shape == (4, 5, 3) and tr.strand(1).shape == (4, 4, 3)
    assert np.array_equal(tr.strand(1), tr.positions[:, 5:9])
    assert np.array_equal(tr.strand(-1), tr.strand(1))
    assert np.array_equal(tr.strand_d1(1), tr.d1[:, 4:8])
    fr = tr.frame(-1)
    assert fr.time == tr.times[3] and np.array_equal(fr.positions, tr.positions[3])
    assert np.array_equal(fr.d1, tr.d1[3]) and np.array_equal(fr.extra_points, tr.extra_points[3])
    with pytest.raises(IndexError, match="frame 4 out of range"):
        tr.frame(4)
    with pytest.raises(IndexError, match="strand 2 out of range"):
        tr.strand(2)
    with pytest.raises(TypeError, match="integer"):
        tr.strand(1.0)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.npz"):
        load_trajectory(tmp_path / "nothere.npz")


def test_corrupt_file(tmp_path):
    bad = tmp_path / "corrupt.npz"
    bad.write_bytes(b"this is not a zip archive")
    with pytest.raises(ValueError, match="corrupt.npz.*not a readable"):
        load_trajectory(bad)
    p = save_trajectory(tmp_path / "ok.npz", _traj())
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(p.read_bytes()[:200])
    with pytest.raises(ValueError, match="truncated.npz"):
        load_trajectory(truncated)


def test_missing_key(tmp_path):
    p = save_trajectory(tmp_path / "ok.npz", _traj())
    for key in ("d1", "metadata", "extra_triangles", "format_version", "status"):
        q = _rewrite(p, tmp_path / f"no_{key}.npz", drop=(key,))
        with pytest.raises(ValueError, match=f"no_{key}.npz lacks the key.*{key}"):
            load_trajectory(q)


@pytest.mark.parametrize("key, value, match", [
    ("positions", np.zeros((4, 9)), "positions must have 3 dimensions"),
    ("positions", np.zeros((3, 9, 3)), r"positions has shape \(3, 9, 3\), expected \(4, 9, 3\)"),
    ("d1", np.zeros((4, 7, 3)), "edge_offsets must start at 0 and end at 7"),
    ("d1", np.zeros((3, 8, 3)), r"d1 has shape \(3, 8, 3\), expected \(4, 8, 3\)"),
    ("radii", np.zeros(3), r"radii has shape \(3,\), expected \(2,\)"),
    ("closed", np.array([True, True, False]), "closed has shape"),
    ("strand_offsets", np.array([0, 6, 5, 9]), "strand_offsets must be non-decreasing"),
    ("strand_offsets", np.array([0.0, 5.0, 9.0]), "strand_offsets must be integers"),
    ("edge_offsets", np.array([0, 5, 8]), r"strand 0 \(open, 5 vertices\) has 5 edges"),
    ("extra_triangles", np.array([[0, 1, 4]]), r"extra_triangles\[0\].*outside the 4 extra"),
    ("extra_triangles", np.array([0, 1, 2]), "extra_triangles must have 2 dimensions"),
    ("extra_points", np.zeros((4, 4, 2)), r"extra_points has shape \(4, 4, 2\)"),
    ("times", np.zeros((4, 1)), "times must have 1 dimensions"),
    ("metadata", np.array("{not json"), "metadata is not valid JSON"),
    ("metadata", np.array("[1, 2]"), "metadata must be a JSON object"),
    ("metadata", np.arange(3), "metadata must be a JSON string"),
    ("format_version", np.int64(99), "format_version 99 is not supported"),
    ("status", np.array("finished"), "status must be 'running', 'complete'"),
    ("times", np.array([0.0, np.nan, 0.2, 0.3]), r"times\[1\] = nan is not finite"),
    ("positions", np.full((4, 9, 3), np.inf), "frame 0: positions has a non-finite value"),
])
def test_wrong_shapes_and_values(tmp_path, key, value, match):
    p = save_trajectory(tmp_path / "ok.npz", _traj())
    q = _rewrite(p, tmp_path / "bad.npz", replace={key: value})
    with pytest.raises(ValueError, match=match) as info:
        load_trajectory(q)
    assert "bad.npz" in str(info.value)


def test_saved_file_has_no_pickles_and_json_metadata(tmp_path):
    p = save_trajectory(tmp_path / "ok.npz", _traj())
    with zipfile.ZipFile(p) as z:
        assert sorted(n[:-4] for n in z.namelist()) == sorted(
            ["times", "positions", "d1", "strand_offsets", "edge_offsets", "closed",
             "radii", "extra_points", "extra_triangles", "metadata", "format_version",
             "status", "vertex_radii", "extra_segments", "extra_segment_radii",
             "extra_tetrahedra"])
    with np.load(p, allow_pickle=False) as data:
        assert json.loads(str(data["metadata"]))["name"] == "test"


def test_constructor_and_save_reject_bad_input(tmp_path):
    tr = _traj()
    with pytest.raises(ValueError, match="metadata cannot be written as JSON"):
        save_trajectory(tmp_path / "x.npz", Trajectory(
            times=tr.times, positions=tr.positions, d1=tr.d1,
            strand_offsets=tr.strand_offsets, edge_offsets=tr.edge_offsets, closed=tr.closed,
            radii=tr.radii, extra_points=tr.extra_points, extra_triangles=tr.extra_triangles,
            metadata={"f": object()}))
    with pytest.raises(ValueError, match="metadata must be a dict"):
        Trajectory(times=tr.times, positions=tr.positions, d1=tr.d1,
                   strand_offsets=tr.strand_offsets, edge_offsets=tr.edge_offsets,
                   closed=tr.closed, radii=tr.radii, extra_points=tr.extra_points,
                   extra_triangles=tr.extra_triangles, metadata=[1])
    with pytest.raises(TypeError, match="Trajectory"):
        save_trajectory(tmp_path / "x.npz", {"times": tr.times})


def test_save_refuses_non_finite_frames(tmp_path):
    tr = _traj()
    tr.d1[2, 5, 1] = np.nan
    for name in ("x.npz", "x.h5"):
        with pytest.raises(ValueError, match="frame 2: d1 has a non-finite value at row 5"):
            save_trajectory(tmp_path / name, tr)
        assert not (tmp_path / name).exists()
    with pytest.raises(ValueError, match="status must be"):
        Trajectory(times=tr.times, positions=tr.positions, d1=tr.d1,
                   strand_offsets=tr.strand_offsets, edge_offsets=tr.edge_offsets,
                   closed=tr.closed, radii=tr.radii, extra_points=tr.extra_points,
                   extra_triangles=tr.extra_triangles, status="done")


# ---------------------------------------------------------------------------------- d1 / v1
def test_edge_vertices_wrap_around_closed_strands():
    a, b = edge_vertices([0, 5, 9, 9, 11], [0, 4, 8, 8, 9], [False, True, False, False])
    assert a.tolist() == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    assert b.tolist() == [1, 2, 3, 4, 6, 7, 8, 5, 10]


def _ghosts_for(positions, d1, off, eoff, closed, along=0.2, dist=0.3):
    """Ghost points at ``dist`` along d1 from each edge midpoint, shifted ``along`` x edge."""
    a, b = edge_vertices(off, eoff, closed)
    xa, xb = positions[..., a, :], positions[..., b, :]
    return 0.5 * (xa + xb) + dist * d1 + along * (xb - xa)


def _perpendicular_unit(positions, rng, off, eoff, closed):
    a, b = edge_vertices(off, eoff, closed)
    t = positions[..., b, :] - positions[..., a, :]
    v = rng.normal(size=t.shape)
    v -= np.sum(v * t, axis=-1, keepdims=True) / np.sum(t * t, axis=-1, keepdims=True) * t
    return _unit(v)


def test_d1_from_ghosts_recovers_the_perpendicular_direction():
    rng = np.random.default_rng(3)
    off, eoff, closed = [0, 5, 9], [0, 4, 8], [False, True]
    pos = rng.normal(size=(3, 9, 3))
    d1 = _perpendicular_unit(pos, rng, off, eoff, closed)
    ghosts = _ghosts_for(pos, d1, off, eoff, closed)
    got = d1_from_ghosts(pos, ghosts, off, eoff, closed)
    assert got.shape == (3, 8, 3)
    assert np.allclose(got, d1, atol=1e-12)
    # a ghost on the edge line: still a unit vector perpendicular to the edge
    ghosts[1, 2] = pos[1, 2] + 0.25 * (pos[1, 3] - pos[1, 2])
    got = d1_from_ghosts(pos, ghosts, off, eoff, closed)
    t = pos[1, 3] - pos[1, 2]
    assert np.isclose(np.linalg.norm(got[1, 2]), 1.0) and abs(got[1, 2] @ t) < 1e-12
    assert np.allclose(np.delete(got[1], 2, axis=0), np.delete(d1[1], 2, axis=0), atol=1e-12)


def test_format_version_1_file_is_read_with_d1_from_ghosts(tmp_path):
    tr = _traj()
    rng = np.random.default_rng(11)
    d1 = _perpendicular_unit(tr.positions, rng, tr.strand_offsets, tr.edge_offsets, tr.closed)
    ghosts = _ghosts_for(tr.positions, d1, tr.strand_offsets, tr.edge_offsets, tr.closed)
    old = {k: getattr(tr, k) for k in ("times", "positions", "strand_offsets", "edge_offsets",
                                        "closed", "radii", "extra_points", "extra_triangles")}
    p = tmp_path / "old.npz"
    np.savez_compressed(p, ghosts=ghosts, metadata=np.array(json.dumps({"name": "old"})),
                        format_version=np.int64(1), **old)
    back = load_trajectory(p)
    assert back.status == "complete" and back.metadata == {"name": "old"}
    assert np.array_equal(back.positions, tr.positions)
    assert np.allclose(back.d1, d1, atol=1e-12)
    # and it converts to the current format
    back2 = load_trajectory(save_trajectory(tmp_path / "new.h5", back))
    assert np.array_equal(np.asarray(back2.d1), back.d1)
    q = _rewrite(p, tmp_path / "old_bad.npz", replace={"ghosts": np.zeros((3, 8, 3))})
    with pytest.raises(ValueError, match=r"old_bad.npz: ghosts has shape \(3, 8, 3\)"):
        load_trajectory(q)
    q = _rewrite(p, tmp_path / "old_missing.npz", drop=("ghosts",))
    with pytest.raises(ValueError, match="old_missing.npz lacks the key.*ghosts"):
        load_trajectory(q)


def test_json_default_converts_numpy_and_paths_and_refuses_the_rest():
    from pathlib import Path

    from strandlab.io.trajectory import json_default

    record = {"a": np.arange(3), "b": np.float32(0.5), "c": Path("runs") / "p", "d": np.bool_(1)}
    assert json.loads(json.dumps(record, default=json_default)) == {
        "a": [0, 1, 2], "b": 0.5, "c": str(Path("runs") / "p"), "d": True}
    with pytest.raises(TypeError, match="object is not JSON-serialisable"):
        json.dumps({"e": object()}, default=json_default)
    assert json_default(range(2), strict=False) == "range(0, 2)"
