"""HDF5 trajectories: streaming writer, lazy reader, interrupted runs and damaged files."""
import json
import shutil
import tracemalloc

import h5py
import numpy as np
import pytest

from strandlab.io import store
from strandlab.io.store import LazyFrames, StoredTrajectory, TrajectoryWriter
from strandlab.io.trajectory import Trajectory, load_trajectory, save_trajectory

SOLVER = {"type": "pbd", "settings": {"iterations": 4, "substeps": 2}}
LAYOUT = {"strand_offsets": [0, 5, 9], "edge_offsets": [0, 4, 8], "closed": [False, True],
          "radii": [0.01, 0.002], "n_extra": 4, "extra_triangles": [[0, 1, 2], [0, 2, 3]]}


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _frames(n, seed=1):
    """``n`` frames (time [s], positions [9, 3], d1 [8, 3], extra [4, 3])."""
    rng = np.random.default_rng(seed)
    return [(k / 60.0, rng.normal(size=(9, 3)), _unit(rng.normal(size=(8, 3))),
             rng.normal(size=(4, 3))) for k in range(n)]


def _write(path, frames, **kwargs):
    opts = {**LAYOUT, "metadata": {"name": "run", "dt": 1e-3}, "solver": SOLVER, **kwargs}
    with TrajectoryWriter(path, **opts) as w:
        for fr in frames:
            w.append(*fr)
    return path


# ---------------------------------------------------------------------------------- writing
@pytest.mark.parametrize("compression", ["gzip", "lzf", None])
def test_written_frames_read_back_exactly(tmp_path, compression):
    frames = _frames(7)
    p = _write(tmp_path / "run.h5", frames, compression=compression)
    with load_trajectory(p) as tr:
        assert isinstance(tr, StoredTrajectory) and isinstance(tr.positions, LazyFrames)
        assert (tr.n_frames, tr.n_strands, tr.n_vertices, tr.n_edges, tr.n_extra) == (7, 2, 9, 8, 4)
        assert tr.status == "complete"
        assert tr.metadata == {"name": "run", "dt": 1e-3, "solver": SOLVER}
        assert np.array_equal(tr.times, [f[0] for f in frames])
        for k, (t, pos, d1, extra) in enumerate(frames):
            fr = tr.frame(k)
            assert fr.time == t and np.array_equal(fr.positions, pos)
            assert np.array_equal(fr.d1, d1) and np.array_equal(fr.extra_points, extra)
        assert np.array_equal(tr.strand(1), np.stack([f[1][5:9] for f in frames]))
        assert np.array_equal(tr.strand_d1(0), np.stack([f[2][0:4] for f in frames]))
        assert tr.closed.tolist() == [False, True] and tr.radii.tolist() == [0.01, 0.002]
        assert tr.extra_triangles.tolist() == LAYOUT["extra_triangles"]
        mem = tr.load()
        assert isinstance(mem, Trajectory) and np.array_equal(mem.d1, np.stack(
            [f[2] for f in frames]))


def test_file_layout_chunks_attributes_and_units(tmp_path):
    p = _write(tmp_path / "run.h5", _frames(3))
    with h5py.File(p, "r") as f:
        assert f.attrs["format"] == "strandlab.trajectory" and f.attrs["format_version"] == 2
        assert f.attrs["frames_written"] == 3 and f.attrs["status"] == "complete"
        assert json.loads(f.attrs["metadata"])["solver"] == SOLVER
        for name, n in (("positions", 9), ("d1", 8), ("extra_points", 4)):
            ds = f[name]
            assert ds.shape == (3, n, 3) and ds.chunks == (1, n, 3)
            assert ds.maxshape == (None, n, 3) and ds.dtype == np.float64
        assert f["times"].maxshape == (None,) and f["times"].attrs["units"] == "s"
        assert f["positions"].attrs["units"] == "m" and f["radii"].attrs["units"] == "m"
        assert f["strand_offsets"][()].tolist() == [0, 5, 9]


def test_frames_written_is_updated_and_flushed_after_every_frame(tmp_path):
    """A copy of the file taken mid-run (as a killed process leaves it) holds every frame
    appended so far, with status 'running'."""
    frames = _frames(6)
    p = tmp_path / "live.h5"
    with TrajectoryWriter(p, **LAYOUT, solver=SOLVER) as w:
        for k, fr in enumerate(frames[:4]):
            assert w.append(*fr) == k + 1
        shutil.copy(p, tmp_path / "snapshot.h5")
        w.append(*frames[4])
    with load_trajectory(tmp_path / "snapshot.h5") as tr:
        assert tr.n_frames == 4 and tr.status == "running"
        assert np.array_equal(tr.positions[:], np.stack([f[1] for f in frames[:4]]))
    with load_trajectory(p) as tr:
        assert tr.n_frames == 5 and tr.status == "complete"


def test_keyboard_interrupt_leaves_the_frames_done_readable(tmp_path):
    frames = _frames(6)
    p = tmp_path / "stopped.h5"
    with pytest.raises(KeyboardInterrupt):
        with TrajectoryWriter(p, **LAYOUT, solver=SOLVER) as w:
            w.append(*frames[0])                    # initial state
            for fr in frames[1:]:                   # 5 frames, then Ctrl-C
                w.append(*fr)
            raise KeyboardInterrupt
    assert not w.is_open
    with load_trajectory(p) as tr:
        assert tr.n_frames == 6 and tr.status == "interrupted: KeyboardInterrupt"
        assert np.array_equal(tr.positions[-1], frames[-1][1])
        assert tr.times[-1] == frames[-1][0]


def test_explicit_status_for_a_diverged_run(tmp_path):
    frames = _frames(3)
    p = tmp_path / "div.h5"
    with pytest.raises(FloatingPointError):
        with TrajectoryWriter(p, **LAYOUT, solver=SOLVER) as w:
            w.append(*frames[0])
            try:
                raise FloatingPointError("step 12: strand 1 is not finite")
            except FloatingPointError as exc:
                w.close(status=f"diverged: {exc}")
                raise
    with load_trajectory(p) as tr:
        assert tr.status == "diverged: step 12: strand 1 is not finite" and tr.n_frames == 1
    with pytest.raises(ValueError, match="status must be"):
        w.close(status="exploded")


def test_bad_frames_are_refused_and_nothing_of_them_is_written(tmp_path):
    frames = _frames(4)
    p = tmp_path / "bad.h5"
    with TrajectoryWriter(p, **LAYOUT, solver=SOLVER) as w:
        w.append(*frames[0])
        t, pos, d1, extra = frames[1]
        bad = pos.copy()
        bad[2, 1] = np.nan
        with pytest.raises(ValueError, match=r"frame 1: positions has a non-finite value at row 2"):
            w.append(t, bad, d1, extra)
        bad = d1.copy()
        bad[7, 0] = np.inf
        with pytest.raises(ValueError, match="frame 1: d1 has a non-finite value at row 7"):
            w.append(t, pos, bad, extra)
        with pytest.raises(ValueError, match=r"frame 1: extra_points has shape \(3, 3\), "
                                             r"expected \(4, 3\)"):
            w.append(t, pos, d1, extra[:3])
        with pytest.raises(ValueError, match="frame 1: time nan is not finite"):
            w.append(np.nan, pos, d1, extra)
        with pytest.raises(ValueError, match="frame 1: time -1.0 is before"):
            w.append(-1.0, pos, d1, extra)
        assert w.frames_written == 1
        w.append(*frames[1])
    with load_trajectory(p) as tr:
        assert tr.n_frames == 2 and tr.status == "complete"
        assert np.array_equal(tr.positions[1], frames[1][1])
    with pytest.raises(ValueError, match="writer for .*bad.h5 is closed"):
        w.append(*frames[2])


@pytest.mark.parametrize("change, match", [
    ({"strand_offsets": [0, 6, 5]}, "strand_offsets must be non-decreasing"),
    ({"edge_offsets": [0, 5, 8]}, r"strand 0 \(open, 5 vertices\) has 5 edges"),
    ({"closed": [False]}, "closed has shape"),
    ({"radii": [0.1]}, "radii has shape"),
    ({"n_extra": -1}, "n_extra must be an integer >= 0"),
    ({"extra_triangles": [[0, 1, 4]]}, "outside the 4 extra points"),
    ({"solver": {"type": "pbd"}}, "solver must be a dict"),
    ({"metadata": {"f": object()}}, "metadata cannot be written as JSON"),
    ({"compression": "zstd"}, "compression must be one of"),
])
def test_writer_checks_its_layout(tmp_path, change, match):
    opts = {**LAYOUT, "solver": SOLVER, **change}
    with pytest.raises(ValueError, match=match):
        TrajectoryWriter(tmp_path / "x.h5", **opts)
    assert not (tmp_path / "x.h5").exists()
    with pytest.raises(FileNotFoundError, match="missing"):
        TrajectoryWriter(tmp_path / "missing" / "x.h5", **LAYOUT)


def test_memory_does_not_grow_with_frames(tmp_path):
    """Python-side memory while writing 150 frames of 48 kB is what 10 frames need."""
    rng = np.random.default_rng(0)
    n = 1000
    layout = {"strand_offsets": [0, n], "edge_offsets": [0, n - 1], "closed": [False],
              "radii": [1e-3]}
    pos, d1 = rng.normal(size=(n, 3)), _unit(rng.normal(size=(n - 1, 3)))
    peaks = []
    for frames in (10, 150):
        tracemalloc.start()
        with TrajectoryWriter(tmp_path / f"m{frames}.h5", **layout, compression=None) as w:
            for k in range(frames):
                w.append(k * 0.01, pos, d1)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] + 200_000, peaks       # 150 frames hold 7 MB of arrays
    with load_trajectory(tmp_path / "m150.h5") as tr:
        assert tr.n_frames == 150 and np.array_equal(tr.positions[149], pos)


def test_periodic_reopening_keeps_every_frame(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "_REOPEN_EVERY", 3)
    frames = _frames(10)
    p = _write(tmp_path / "reopened.h5", frames)
    with load_trajectory(p) as tr:
        assert tr.n_frames == 10 and tr.status == "complete"
        assert np.array_equal(tr.positions[:], np.stack([f[1] for f in frames]))
        assert np.array_equal(tr.times, [f[0] for f in frames])


# ---------------------------------------------------------------------------------- reading
@pytest.mark.parametrize("key", [
    0, -1, np.int64(3), slice(None), slice(1, 5, 2), slice(None, None, -2), slice(5, 1, -1),
    slice(2, 2), [4, 0, 4], np.array([1, 3]), np.array([True, False] * 3), (slice(None), 2),
    (1, slice(2, 6)), (Ellipsis, 0), (slice(None), slice(None, None, -1), 1), (2, [0, 3]),
    (slice(0, 3), Ellipsis), (0, -1, 2),
])
def test_lazy_indexing_matches_numpy(tmp_path, key):
    frames = _frames(6)
    full = np.stack([f[1] for f in frames])
    with load_trajectory(_write(tmp_path / "r.h5", frames)) as tr:
        got = tr.positions[key]
        assert np.array_equal(got, full[key]) and got.shape == full[key].shape
        assert tr.positions.shape == full.shape and len(tr.positions) == 6
        assert np.array_equal(np.asarray(tr.positions), full)
        assert np.array_equal(np.stack(list(tr.positions)), full)


def test_lazy_index_errors_and_closed_file(tmp_path):
    tr = load_trajectory(_write(tmp_path / "r.h5", _frames(3)))
    with pytest.raises(IndexError, match=r"frame 3 out of range \(0..2\)"):
        tr.positions[3]
    with pytest.raises(IndexError, match="out of range"):
        tr.d1[[0, -4]]
    with pytest.raises(IndexError, match="boolean frame mask"):
        tr.positions[np.array([True, False])]
    with pytest.raises(IndexError, match="frames must be selected by"):
        tr.positions[np.array([0.5])]
    tr.close()
    with pytest.raises(ValueError, match="r.h5 is closed"):
        tr.positions[0]


def test_stored_trajectory_converts_to_npz_and_h5(tmp_path):
    frames = _frames(4)
    with load_trajectory(_write(tmp_path / "r.h5", frames)) as tr:
        npz = load_trajectory(save_trajectory(tmp_path / "copy.npz", tr))
        with load_trajectory(save_trajectory(tmp_path / "copy.h5", tr, compression=None)) as h5:
            for other in (npz, h5):
                assert other.metadata == tr.metadata and other.status == "complete"
                assert np.array_equal(np.asarray(other.d1), np.asarray(tr.d1))
                assert np.array_equal(np.asarray(other.extra_points), np.asarray(tr.extra_points))
        with pytest.raises(ValueError, match="onto itself"):
            save_trajectory(tmp_path / "r.h5", tr)


# ---------------------------------------------------------------------------------- damage
def _damage(path, edit):
    with h5py.File(path, "r+") as f:
        edit(f)
    return path


@pytest.mark.parametrize("edit, match", [
    (lambda f: f.attrs.__setitem__("format", "other"), "is not a strandlab trajectory file"),
    (lambda f: f.attrs.__setitem__("format_version", 7), "format_version 7 is not supported"),
    (lambda f: f.attrs.__setitem__("frames_written", -2), "frames_written -2 is negative"),
    (lambda f: f.attrs.__setitem__("frames_written", 9),
     "times is truncated: frames_written is 9 but it holds 5 frames"),
    (lambda f: f.attrs.__setitem__("frames_written", 2.5), "frames_written must be an integer"),
    (lambda f: f.attrs.__delitem__("status"), "lacks the attribute status"),
    (lambda f: f.attrs.__setitem__("status", "fine"), "status must be"),
    (lambda f: f.attrs.__setitem__("metadata", "{oops"), "metadata is not valid JSON"),
    (lambda f: f.__delitem__("d1"), r"lacks the dataset\(s\) d1"),
    (lambda f: f["times"].__setitem__(3, np.nan), r"times\[3\] = nan is not finite"),
    (lambda f: f["times"].__setitem__(3, -1.0), r"times\[3\] = -1.0 is before times\[2\]"),
    (lambda f: f["positions"].__setitem__((4, 0, 0), np.nan),
     "frame 4: positions has a non-finite value"),
    (lambda f: f["edge_offsets"].__setitem__(1, 5), r"strand 0 \(open, 5 vertices\) has 5 edges"),
    (lambda f: f["strand_offsets"].__setitem__(1, -1), "strand_offsets must be non-decreasing"),
    (lambda f: f["extra_triangles"].__setitem__((0, 0), 9), "outside the 4 extra points"),
])
def test_damaged_files_raise_naming_the_file(tmp_path, edit, match):
    p = _damage(_write(tmp_path / "damaged.h5", _frames(5)), edit)
    with pytest.raises(ValueError, match=match) as info:
        load_trajectory(p)
    assert "damaged.h5" in str(info.value)


def test_non_finite_frame_is_reported_when_read(tmp_path):
    p = _damage(_write(tmp_path / "nan.h5", _frames(5)),
                lambda f: f["d1"].__setitem__((2, 1, 1), np.inf))
    with load_trajectory(p) as tr:                  # only the last frame is checked on opening
        assert np.array_equal(tr.d1[1], _frames(5)[1][2])
        with pytest.raises(ValueError, match=r"nan.h5: frame 2: d1 has a non-finite value"):
            tr.d1[:]
        with pytest.raises(ValueError, match="frame 2: d1"):
            tr.strand_d1(0)


def test_corrupt_and_truncated_files(tmp_path):
    bad = tmp_path / "corrupt.h5"
    bad.write_bytes(b"not an hdf5 file at all")
    with pytest.raises(ValueError, match="corrupt.h5 is not a readable HDF5 file"):
        load_trajectory(bad)
    p = _write(tmp_path / "ok.h5", _frames(30), compression=None)
    data = p.read_bytes()
    for cut in (100, len(data) // 2, len(data) - 500):
        q = tmp_path / f"truncated_{cut}.h5"
        q.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=f"truncated_{cut}.h5"):
            with load_trajectory(q) as tr:
                tr.positions[:]
    with pytest.raises(FileNotFoundError, match="absent.h5"):
        load_trajectory(tmp_path / "absent.h5")
