"""Trajectory files: round trip, and errors that name the file and the bad key."""
import json
import zipfile

import numpy as np
import pytest

from strandlab.io.trajectory import Trajectory, load_trajectory, save_trajectory


def _traj(n_frames=4, with_mesh=True) -> Trajectory:
    """Two strands (open 5 vertices, closed 4 vertices) and an optional 2-triangle mesh."""
    rng = np.random.default_rng(7)
    nv, ne = 9, 4 + 4
    n_extra = 4 if with_mesh else 0
    tri = np.array([[0, 1, 2], [0, 2, 3]]) if with_mesh else np.zeros((0, 3), dtype=np.int64)
    return Trajectory(
        times=np.arange(n_frames) / 60.0,
        positions=rng.normal(size=(n_frames, nv, 3)),
        ghosts=rng.normal(size=(n_frames, ne, 3)),
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


def test_round_trip_is_exact(tmp_path):
    tr = _traj()
    p = save_trajectory(tmp_path / "t.npz", tr)
    assert p == tmp_path / "t.npz" and p.is_file()
    back = load_trajectory(p)
    for k in ("times", "positions", "ghosts", "strand_offsets", "edge_offsets", "closed",
              "radii", "extra_points", "extra_triangles"):
        assert np.array_equal(getattr(back, k), getattr(tr, k)), k
        assert getattr(back, k).dtype == getattr(tr, k).dtype, k
    assert back.metadata == {"name": "test", "dt": 1 / 600, "gravity": [0, 0, -9.81],
                             "nested": {"k": 3, "arr": [0, 1, 2]}}
    assert (back.n_frames, back.n_strands, back.n_vertices, back.n_edges) == (4, 2, 9, 8)


def test_suffix_is_added_and_empty_mesh_round_trips(tmp_path):
    tr = _traj(n_frames=1, with_mesh=False)
    p = save_trajectory(tmp_path / "traj", tr)
    assert p.name == "traj.npz"
    back = load_trajectory(p)
    assert back.extra_points.shape == (1, 0, 3)
    assert back.extra_triangles.shape == (0, 3)


def test_strand_views():
    tr = _traj()
    assert tr.strand(0).shape == (4, 5, 3) and tr.strand(1).shape == (4, 4, 3)
    assert np.array_equal(tr.strand(1), tr.positions[:, 5:9])
    assert np.array_equal(tr.strand(-1), tr.strand(1))
    assert np.array_equal(tr.strand_ghosts(1), tr.ghosts[:, 4:8])
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
    for key in ("ghosts", "metadata", "extra_triangles", "format_version"):
        q = _rewrite(p, tmp_path / f"no_{key}.npz", drop=(key,))
        with pytest.raises(ValueError, match=f"no_{key}.npz lacks the key.*{key}"):
            load_trajectory(q)


@pytest.mark.parametrize("key, value, match", [
    ("positions", np.zeros((4, 9)), "positions must have 3 dimensions"),
    ("positions", np.zeros((3, 9, 3)), r"positions has shape \(3, 9, 3\), expected \(4, 9, 3\)"),
    ("ghosts", np.zeros((4, 7, 3)), "edge_offsets must start at 0 and end at 7"),
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
            ["times", "positions", "ghosts", "strand_offsets", "edge_offsets", "closed",
             "radii", "extra_points", "extra_triangles", "metadata", "format_version"])
    with np.load(p, allow_pickle=False) as data:
        assert json.loads(str(data["metadata"]))["name"] == "test"


def test_constructor_and_save_reject_bad_input(tmp_path):
    tr = _traj()
    with pytest.raises(ValueError, match="metadata cannot be written as JSON"):
        save_trajectory(tmp_path / "x.npz", Trajectory(
            times=tr.times, positions=tr.positions, ghosts=tr.ghosts,
            strand_offsets=tr.strand_offsets, edge_offsets=tr.edge_offsets, closed=tr.closed,
            radii=tr.radii, extra_points=tr.extra_points, extra_triangles=tr.extra_triangles,
            metadata={"f": object()}))
    with pytest.raises(ValueError, match="metadata must be a dict"):
        Trajectory(times=tr.times, positions=tr.positions, ghosts=tr.ghosts,
                   strand_offsets=tr.strand_offsets, edge_offsets=tr.edge_offsets,
                   closed=tr.closed, radii=tr.radii, extra_points=tr.extra_points,
                   extra_triangles=tr.extra_triangles, metadata=[1])
    with pytest.raises(TypeError, match="Trajectory"):
        save_trajectory(tmp_path / "x.npz", {"times": tr.times})
