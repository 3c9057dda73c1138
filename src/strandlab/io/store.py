"""HDF5 trajectory files: written frame by frame while a run goes, read lazily afterwards.

:class:`TrajectoryWriter` appends one frame at a time to resizable, per-frame chunked datasets
and flushes the file after every frame, so memory does not grow with the number of frames and
a run that stops early (an exception, Ctrl-C, a killed process) leaves every frame written so
far readable.  :func:`open_h5_trajectory` (reached through
:func:`strandlab.io.trajectory.load_trajectory`) returns a :class:`StoredTrajectory` whose
per-frame arrays are :class:`LazyFrames`: indexing them reads only the frames asked for.

The layout (datasets, shapes, units, attributes) is described in ``docs/trajectory-format.md``.
h5py is imported only by the functions that need it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .trajectory import (
    FORMAT_VERSION,
    OPTIONAL_STATIC,
    Trajectory,
    TrajectoryBase,
    check_layout,
    check_mesh_layout,
    check_status,
    decode_metadata,
    first_non_finite,
    metadata_json,
    with_solver,
)

__all__ = ["TrajectoryWriter", "StoredTrajectory", "LazyFrames", "open_h5_trajectory",
           "write_h5_trajectory", "FORMAT_NAME"]

FORMAT_NAME = "strandlab.trajectory"     #: value of the root attribute ``format``

_FRAME_DATASETS = ("positions", "d1", "extra_points")
_STATIC_DATASETS = ("strand_offsets", "edge_offsets", "closed", "radii", "extra_triangles")
_UNITS = {"times": "s", "positions": "m", "d1": "1", "extra_points": "m", "radii": "m",
          "vertex_radii": "m", "extra_segment_radii": "m"}
_TIMES_CHUNK = 1024         # frame times per chunk of the ``times`` dataset
_COMPRESSIONS = (None, "gzip", "lzf")
# HDF5 keeps about 0.4 kB of chunk-index bookkeeping per chunk while a file is open: the
# writer closes and reopens its file every this many frames, so memory stays flat.
_REOPEN_EVERY = 1000


def _h5py():
    try:
        import h5py
    except ImportError as exc:      # pragma: no cover - h5py is a core dependency
        raise ImportError("HDF5 trajectories need h5py (pip install 'h5py>=3.8')") from exc
    return h5py


def _last_entry(offsets) -> int:
    """The item count an offsets array claims (its last entry), 0 if it has none."""
    arr = np.asarray(offsets)
    if arr.ndim == 1 and arr.size and np.issubdtype(arr.dtype, np.integer):
        return int(arr[-1])
    return 0


def _is_int(k) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


# ---------------------------------------------------------------------------------- writer
class TrajectoryWriter:
    """Writes a trajectory to an HDF5 file one frame at a time.

    The static layout is given up front (shapes as in :class:`~strandlab.io.trajectory.
    Trajectory`): ``strand_offsets`` and ``edge_offsets`` (int [S + 1]; they fix V and E),
    ``closed`` [S], ``radii`` [S] (m), ``n_extra`` (X, extra points per frame),
    ``extra_triangles`` (int [M, 3] into the extra points) and the arrays of
    :func:`~strandlab.io.trajectory.check_mesh_layout`: ``vertex_radii`` [V] (m; default the
    strand's radius at each vertex), ``extra_segments`` (int [G, 2], rod edges into the extra
    points) with ``extra_segment_radii`` [G] (m), ``extra_tetrahedra`` (int [K, 4]).
    ``metadata`` is a JSON-
    serialisable dict; ``solver`` (``{"type": name, "settings": {...}}``) is stored in it as
    ``metadata["solver"]``.  ``compression``: None (default: float64 simulation output
    compresses by only about 10 %, at several times the write cost), ``"gzip"`` (level
    ``compression_level``, with byte shuffling; readable everywhere) or ``"lzf"`` (faster,
    h5py only).  ``keep_frames = K > 0`` continues the existing trajectory at ``path`` (same
    layout) after its first ``K`` frames, dropping later ones (resuming a run).

    Use it as a context manager::

        with TrajectoryWriter(path, strand_offsets=..., edge_offsets=..., closed=...,
                              radii=..., solver={"type": "pbd", "settings": {...}}) as w:
            w.append(t, positions, d1, extra)   # once per frame, the initial state first

    Leaving the block normally marks the file ``complete``; an exception marks it
    ``interrupted: <ExceptionName>`` (and propagates); :meth:`close` with an explicit
    ``status`` (e.g. ``"diverged: <message>"``) inside the block takes precedence.  Every
    :meth:`append` updates the ``frames_written`` attribute and flushes the file.
    """

    def __init__(self, path, *, strand_offsets, edge_offsets, closed, radii, n_extra: int = 0,
                 extra_triangles=None, metadata: dict | None = None, solver: dict | None = None,
                 compression: str | None = None, compression_level: int = 4,
                 keep_frames: int = 0, vertex_radii=None, extra_segments=None,
                 extra_segment_radii=None, extra_tetrahedra=None) -> None:
        if not _is_int(n_extra) or n_extra < 0:
            raise ValueError(f"n_extra must be an integer >= 0, got {n_extra!r}")
        if compression not in _COMPRESSIONS:
            raise ValueError(f"compression must be one of {_COMPRESSIONS}, got {compression!r}")
        if not _is_int(compression_level) or not 0 <= compression_level <= 9:
            raise ValueError(f"compression_level must be an integer 0..9, got "
                             f"{compression_level!r}")
        nv, ne = _last_entry(strand_offsets), _last_entry(edge_offsets)
        tri = np.zeros((0, 3), dtype=np.int64) if extra_triangles is None else extra_triangles
        so, eo, cl, rad, tri = check_layout(strand_offsets, edge_offsets, closed, radii, tri,
                                            nv, ne, int(n_extra))
        mesh = dict(zip(OPTIONAL_STATIC, check_mesh_layout(
            vertex_radii, extra_segments, extra_segment_radii, extra_tetrahedra,
            strand_offsets=so, radii=rad, n_extra=int(n_extra))))
        text = metadata_json(with_solver({} if metadata is None else metadata, solver))
        p = Path(path)
        if not p.parent.is_dir():
            raise FileNotFoundError(f"cannot write {p}: folder {p.parent} does not exist")
        h5py = _h5py()
        self.path = p
        self._shape = {"positions": (nv, 3), "d1": (ne, 3), "extra_points": (int(n_extra), 3)}
        self._n = 0
        self._last_time = -np.inf
        if not _is_int(keep_frames) or keep_frames < 0:
            raise ValueError(f"keep_frames must be an integer >= 0, got {keep_frames!r}")
        self._file = h5py.File(p, "r+" if keep_frames else "w")
        try:
            if keep_frames:
                self._continue(int(keep_frames), (so, eo, cl, rad, tri), mesh, text)
            else:
                self._create((so, eo, cl, rad, tri), mesh, text, compression,
                             compression_level)
        except BaseException:
            self._file.close()
            raise

    def _create(self, layout: tuple, mesh: dict, text, compression, level) -> None:
        so, eo, cl, rad, tri = layout
        f = self._file
        f.attrs["format"] = FORMAT_NAME
        f.attrs["format_version"] = np.int64(FORMAT_VERSION)
        f.attrs["status"] = "running"
        f.attrs["frames_written"] = np.int64(0)
        f.attrs["metadata"] = text
        f.attrs["length_unit"] = "m"
        f.attrs["time_unit"] = "s"
        f.create_dataset("strand_offsets", data=so)
        f.create_dataset("edge_offsets", data=eo)
        f.create_dataset("closed", data=cl.astype(np.int8))
        f.create_dataset("radii", data=rad).attrs["units"] = "m"
        f.create_dataset("extra_triangles", data=tri, shape=tri.shape, dtype=np.int64)
        for name, arr in mesh.items():
            ds = f.create_dataset(name, data=arr, shape=arr.shape, dtype=arr.dtype)
            if name in _UNITS:
                ds.attrs["units"] = _UNITS[name]
        f.create_dataset("times", shape=(0,), maxshape=(None,), dtype=np.float64,
                         chunks=(_TIMES_CHUNK,)).attrs["units"] = "s"
        opts = {}
        if compression == "gzip":
            opts = {"compression": "gzip", "compression_opts": level, "shuffle": True}
        elif compression == "lzf":
            opts = {"compression": "lzf", "shuffle": True}
        for name, (n, _) in self._shape.items():
            # a chunk is one frame; HDF5 chunks cannot have a zero extent, hence (1, 1, 3)
            ds = f.create_dataset(name, shape=(0, n, 3), dtype=np.float64,
                                  maxshape=(None, n if n else None, 3),
                                  chunks=(1, max(n, 1), 3), **(opts if n else {}))
            ds.attrs["units"] = _UNITS[name]
        self._datasets = {name: f[name] for name in ("times",) + _FRAME_DATASETS}
        f.flush()

    def _continue(self, keep: int, layout: tuple, mesh: dict, text: str) -> None:
        """Open an existing trajectory of the same layout to append after its first ``keep``
        frames (the later ones are dropped); ValueError naming the file otherwise.  A file
        without the arrays of ``mesh`` (written before them) is continued when this run's
        equal their defaults, and they are added to it."""
        f = self._file
        if f.attrs.get("format") != FORMAT_NAME or \
                f.attrs.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"trajectory {self.path} is not a strandlab trajectory of format "
                             f"version {FORMAT_VERSION}: cannot continue it")
        for name, want in zip(_STATIC_DATASETS, layout):
            have = f[name][()] if name in f else None
            if have is None or not np.array_equal(np.asarray(have).astype(want.dtype), want):
                raise ValueError(f"trajectory {self.path}: its {name} differs from this run's;"
                                 " cannot continue it")
        stored = check_mesh_layout(*(f[k][()] if k in f else None for k in OPTIONAL_STATIC),
                                   strand_offsets=layout[0], radii=layout[3],
                                   n_extra=int(f["extra_points"].shape[1]))
        for (name, want), have in zip(mesh.items(), stored):
            if not np.array_equal(have, want):
                raise ValueError(f"trajectory {self.path}: its {name} differs from this run's;"
                                 " cannot continue it")
            if name not in f:
                f.create_dataset(name, data=want, shape=want.shape, dtype=want.dtype)
        n = int(f.attrs.get("frames_written", 0))
        if n < keep:
            raise ValueError(f"trajectory {self.path} holds {n} frames; cannot keep {keep}")
        self._datasets = {name: f[name] for name in ("times",) + _FRAME_DATASETS}
        for ds in self._datasets.values():
            ds.resize(keep, axis=0)
        self._n = keep
        self._last_time = float(self._datasets["times"][keep - 1])
        f.attrs["status"] = "running"
        f.attrs["frames_written"] = np.int64(keep)
        f.attrs["metadata"] = text
        f.flush()

    def _reopen(self) -> None:
        """Close and reopen the file, releasing what HDF5 accumulated in memory."""
        h5py = _h5py()
        f, self._file, self._datasets = self._file, None, {}
        f.close()
        self._file = h5py.File(self.path, "r+")
        self._datasets = {name: self._file[name] for name in ("times",) + _FRAME_DATASETS
                          + ("edge_broken",) if name in self._file}

    # ------------------------------------------------------------------ state
    @property
    def frames_written(self) -> int:
        """Number of frames appended so far."""
        return self._n

    @property
    def is_open(self) -> bool:
        """False once :meth:`close` has run."""
        return self._file is not None

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.is_open:
            self.close("complete" if exc_type is None else f"interrupted: {exc_type.__name__}")
        return False

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"TrajectoryWriter({str(self.path)!r}, {self._n} frames, {state})"

    # ------------------------------------------------------------------ frames
    def _frame_array(self, name: str, value, k: int) -> np.ndarray:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"frame {k}: {name} must be a numeric array ({exc})") from None
        if arr.shape != self._shape[name]:
            raise ValueError(f"frame {k}: {name} has shape {arr.shape}, expected "
                             f"{self._shape[name]}")
        bad = first_non_finite(arr)
        if bad is not None:
            raise ValueError(f"frame {k}: {name} has a non-finite value at row {bad[0]} "
                             f"({arr[bad[0]].tolist()})")
        return arr

    def append(self, time: float, positions, d1, extra_points=None, edge_broken=None) -> int:
        """Write one frame; returns the number of frames written.

        ``time`` [s] (finite, not below the previous frame's), ``positions`` [V, 3] (m),
        ``d1`` [E, 3] (unit vectors), ``extra_points`` [X, 3] (m; may be omitted when X = 0),
        ``edge_broken`` (bool [E], from solvers that tear strands; given from the first frame
        on, it is recorded in the dataset ``edge_broken`` [T, E]).
        A frame with a wrong shape or a non-finite value is refused (ValueError naming the
        frame and the array) and nothing of it is written.
        """
        if not self.is_open:
            raise ValueError(f"trajectory writer for {self.path} is closed")
        k = self._n
        try:
            t = float(time)
        except (TypeError, ValueError):
            raise ValueError(f"frame {k}: time must be a number, got {time!r}") from None
        if not np.isfinite(t):
            raise ValueError(f"frame {k}: time {t} is not finite")
        if t < self._last_time:
            raise ValueError(f"frame {k}: time {t} is before the previous frame's "
                             f"{self._last_time}")
        if extra_points is None:
            extra_points = np.zeros((0, 3))
        arrays = {"positions": self._frame_array("positions", positions, k),
                  "d1": self._frame_array("d1", d1, k),
                  "extra_points": self._frame_array("extra_points", extra_points, k)}
        if edge_broken is not None:
            broken = np.asarray(edge_broken, dtype=np.uint8)
            if broken.shape != self._shape["d1"][:1]:
                raise ValueError(f"frame {k}: edge_broken has shape {broken.shape}, expected "
                                 f"{self._shape['d1'][:1]}")
            if "edge_broken" not in self._datasets:
                if k:
                    raise ValueError(f"frame {k}: edge_broken must be given from frame 0 on")
                n = self._shape["d1"][0]
                self._file.create_dataset("edge_broken", shape=(0, n), dtype=np.uint8,
                                          maxshape=(None, n if n else None),
                                          chunks=(1, max(n, 1)))
                self._datasets["edge_broken"] = self._file["edge_broken"]
            arrays["edge_broken"] = broken
        elif "edge_broken" in self._datasets:
            raise ValueError(f"frame {k}: edge_broken is missing (recorded since frame 0)")
        for name, arr in arrays.items():
            ds = self._datasets[name]
            ds.resize(k + 1, axis=0)
            ds[k] = arr
        ds = self._datasets["times"]
        ds.resize(k + 1, axis=0)
        ds[k] = t
        self._n = k + 1
        self._last_time = t
        self._file.attrs.modify("frames_written", np.int64(self._n))
        self._file.flush()
        if self._n % _REOPEN_EVERY == 0:
            self._reopen()
        return self._n

    def close(self, status: str = "complete") -> Path:
        """Record ``status`` and ``frames_written``, flush and close; returns the path.

        ``status``: ``"complete"``, ``"interrupted: <reason>"``, ``"diverged: <message>"``
        (or ``"running"``).  Closing again does nothing.
        """
        check_status(status)
        if self.is_open:
            f, self._file = self._file, None
            self._datasets = {}
            try:
                f.attrs["status"] = status
                f.attrs["frames_written"] = np.int64(self._n)
                f.flush()
            finally:
                f.close()
        return self.path


def write_h5_trajectory(path, traj: TrajectoryBase, *, metadata: dict | None = None,
                        **options) -> Path:
    """Write any trajectory (in memory or lazily read) to the HDF5 file ``path``, frame by frame.

    ``metadata`` replaces ``traj.metadata`` when given; ``options`` go to
    :class:`TrajectoryWriter`.  On failure the partial file is removed and the error raised.
    """
    p = Path(path)
    src = getattr(traj, "path", None)
    if src is not None and p.exists() and Path(src).resolve() == p.resolve():
        raise ValueError(f"cannot write trajectory {p} onto itself while reading it")
    w = TrajectoryWriter(p, strand_offsets=traj.strand_offsets, edge_offsets=traj.edge_offsets,
                         closed=traj.closed, radii=traj.radii, n_extra=traj.n_extra,
                         extra_triangles=traj.extra_triangles,
                         metadata=traj.metadata if metadata is None else metadata,
                         **{k: getattr(traj, k, None) for k in OPTIONAL_STATIC}, **options)
    try:
        broken = getattr(traj, "edge_broken", None)
        for k in range(traj.n_frames):
            w.append(*traj.frame(k), edge_broken=None if broken is None else broken[k])
        w.close(traj.status)
    except BaseException:
        w.close("interrupted: write failed")
        p.unlink(missing_ok=True)
        raise
    return p


# ---------------------------------------------------------------------------------- reader
class LazyFrames:
    """A per-frame dataset [T, n, 3] of an open HDF5 trajectory, read on demand.

    Indexed like a numpy array (the frame axis by an integer, a slice, an integer array or a
    boolean mask; the other axes by anything numpy accepts), each access reads only the
    frames selected and returns a float64 array, checked finite (ValueError naming the file
    and frame otherwise).  ``np.asarray(lazy)`` reads everything.
    """

    def __init__(self, owner: StoredTrajectory, name: str, n_frames: int) -> None:
        self._owner = owner
        self.name = name
        self._ds = owner._file[name]
        self.shape = (int(n_frames),) + tuple(int(d) for d in self._ds.shape[1:])
        self.dtype = np.dtype(np.float64)
        self.ndim = len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"LazyFrames({self.name!r}, shape={self.shape}, file={str(self._owner.path)!r})"

    def __iter__(self):
        for k in range(self.shape[0]):
            yield self[k]

    def __array__(self, dtype=None, copy=None):
        out = self[:]
        return out if dtype is None else out.astype(dtype)

    def _fetch(self, first, rest: tuple) -> np.ndarray:
        """``dataset[first][rest]``, passing simple selections on to HDF5."""
        simple = all(_is_int(r) or (isinstance(r, slice) and (r.step is None or r.step > 0))
                     for r in rest)
        try:
            if simple:
                return np.asarray(self._ds[(first,) + rest], dtype=np.float64)
            data = np.asarray(self._ds[first], dtype=np.float64)
        except (OSError, RuntimeError, KeyError) as exc:
            raise ValueError(f"trajectory {self._owner.path}: {self.name} cannot be read "
                             f"({exc})") from None
        return data[rest] if _is_int(first) else data[(slice(None),) + rest]

    def __getitem__(self, key) -> np.ndarray:
        self._owner._check_open()
        key = key if isinstance(key, tuple) else (key,)
        if any(k is Ellipsis for k in key):
            i = next(j for j, k in enumerate(key) if k is Ellipsis)
            n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
            key = key[:i] + (slice(None),) * (self.ndim - n_real) + key[i + 1:]
        first, rest = (key[0], key[1:]) if key else (slice(None), ())
        if first is None or sum(1 for k in key if k is not None) > self.ndim:
            raise IndexError(f"{self.name}: unsupported index {key!r} for shape {self.shape}")
        n = self.shape[0]
        if _is_int(first):
            if not -n <= first < n:
                raise IndexError(f"frame {int(first)} out of range (0..{n - 1})")
            frames = np.array([int(first) % n])
            out = self._fetch(int(frames[0]), rest)
        elif isinstance(first, slice):
            frames = np.arange(n)[first]
            if first.step is None or first.step > 0:
                start, stop, step = first.indices(n)
                out = self._fetch(slice(start, max(start, stop), step), rest)
            else:
                out = self._fetch_list(frames, rest)
        else:
            idx = np.asarray(first)
            if idx.dtype == np.bool_:
                if idx.shape != (n,):
                    raise IndexError(f"boolean frame mask has shape {idx.shape}, expected "
                                     f"({n},)")
                idx = np.flatnonzero(idx)
            elif idx.ndim != 1 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
                raise IndexError(f"{self.name}: frames must be selected by an integer, a "
                                 f"slice, a 1-D integer array or a boolean mask")
            idx = idx.astype(np.int64)
            if idx.size and (idx.min() < -n or idx.max() >= n):
                raise IndexError(f"frame index out of range (0..{n - 1})")
            frames = idx % max(n, 1)
            out = self._fetch_list(frames, rest)
        bad = first_non_finite(out)
        if bad is not None:
            frame = int(frames[0]) if _is_int(first) else int(frames[bad[0]])
            raise ValueError(f"trajectory {self._owner.path}: frame {frame}: {self.name} has a "
                             f"non-finite value")
        return out

    def _fetch_list(self, frames: np.ndarray, rest: tuple) -> np.ndarray:
        if frames.size == 0:
            return self._fetch(slice(0, 0), rest)
        uniq, inverse = np.unique(frames, return_inverse=True)
        return self._fetch(uniq, rest)[inverse.reshape(-1)]


class StoredTrajectory(TrajectoryBase):
    """A trajectory in an HDF5 file, read lazily.

    ``times`` [T] (s), the layout arrays and ``metadata`` are read on opening (and the layout
    checked); ``positions``, ``d1`` and ``extra_points`` are :class:`LazyFrames`.  ``status``
    is the run state recorded by the writer; ``n_frames`` counts the frames written
    (``frames_written``), which is what is readable after an interrupted run.  Holds the
    file open until :meth:`close` (or the end of a ``with`` block).
    """

    def __init__(self, path: Path, h5file) -> None:
        self.path = Path(path)
        self._file = h5file
        self._read_header()

    # ------------------------------------------------------------------ opening
    def _fail(self, msg: str):
        raise ValueError(f"trajectory {self.path}: {msg}")

    def _attr(self, name: str):
        if name not in self._file.attrs:
            self._fail(f"lacks the attribute {name}")
        value = self._file.attrs[name]
        return value.decode("utf-8") if isinstance(value, bytes) else value

    def _int_attr(self, name: str) -> int:
        value = self._attr(name)
        if not (_is_int(value) or (isinstance(value, np.ndarray) and value.shape == ()
                                   and np.issubdtype(value.dtype, np.integer))):
            self._fail(f"attribute {name} must be an integer, got {value!r}")
        return int(value)

    def _read_header(self) -> None:
        f, p = self._file, self.path
        fmt = f.attrs.get("format")
        fmt = fmt.decode("utf-8") if isinstance(fmt, bytes) else fmt
        if fmt != FORMAT_NAME:
            raise ValueError(f"trajectory {p} is not a strandlab trajectory file (attribute "
                             f"format is {fmt!r}, expected {FORMAT_NAME!r})")
        version = self._int_attr("format_version")
        if version != FORMAT_VERSION:
            self._fail(f"format_version {version} is not supported (expected "
                       f"{FORMAT_VERSION})")
        n = self._int_attr("frames_written")
        if n < 0:
            self._fail(f"frames_written {n} is negative")
        status = self._attr("status")
        try:
            self.status = check_status(status)
        except ValueError as exc:
            self._fail(str(exc))
        self.metadata = decode_metadata(p, self._attr("metadata"))
        missing = [k for k in ("times",) + _FRAME_DATASETS + _STATIC_DATASETS if k not in f]
        if missing:
            self._fail(f"lacks the dataset(s) {', '.join(missing)}")
        try:
            self._read_layout(n)
        except ValueError as exc:
            if str(p) in str(exc):
                raise
            self._fail(str(exc))
        except (OSError, RuntimeError, KeyError, TypeError) as exc:
            self._fail(f"cannot be read ({exc})")

    def _read_layout(self, n: int) -> None:
        f = self._file
        dims = {}
        for name in _FRAME_DATASETS:
            shape = f[name].shape
            if len(shape) != 3 or shape[2] != 3:
                raise ValueError(f"{name} must have shape [T, n, 3], got {shape}")
            dims[name] = shape[1]
        for name in ("times",) + _FRAME_DATASETS:
            stored = f[name].shape[0] if f[name].ndim else 0
            if f[name].ndim < 1 or stored < n:
                raise ValueError(f"{name} is truncated: frames_written is {n} but it holds "
                                 f"{stored} frames")
        if f["times"].ndim != 1:
            raise ValueError(f"times must have 1 dimension, got shape {f['times'].shape}")
        static = {k: f[k][()] for k in _STATIC_DATASETS}
        (self.strand_offsets, self.edge_offsets, self.closed, self.radii,
         self.extra_triangles) = check_layout(
            static["strand_offsets"], static["edge_offsets"], static["closed"], static["radii"],
            static["extra_triangles"], dims["positions"], dims["d1"], dims["extra_points"])
        (self.vertex_radii, self.extra_segments, self.extra_segment_radii,
         self.extra_tetrahedra) = check_mesh_layout(
            *(f[k][()] if k in f else None for k in OPTIONAL_STATIC),
            strand_offsets=self.strand_offsets, radii=self.radii,
            n_extra=dims["extra_points"])
        times = np.asarray(f["times"][:n], dtype=np.float64)
        bad = first_non_finite(times)
        if bad is not None:
            raise ValueError(f"times[{bad[0]}] = {times[bad[0]]} is not finite")
        back = np.flatnonzero(np.diff(times) < 0)
        if back.size:
            k = int(back[0]) + 1
            raise ValueError(f"times[{k}] = {times[k]} is before times[{k - 1}] = "
                             f"{times[k - 1]}")
        self.times = times
        self.positions = LazyFrames(self, "positions", n)
        self.d1 = LazyFrames(self, "d1", n)
        self.extra_points = LazyFrames(self, "extra_points", n)
        self.edge_broken = None
        if "edge_broken" in f:
            broken = f["edge_broken"]
            if broken.ndim != 2 or broken.shape[1] != dims["d1"] or broken.shape[0] < n:
                raise ValueError(f"edge_broken must have shape [{n}, {dims['d1']}], got "
                                 f"{broken.shape}")
            self.edge_broken = np.asarray(broken[:n], dtype=bool)
        if n:
            self.positions[n - 1]       # a cheap check: the last frame is there and finite

    # ------------------------------------------------------------------ file
    @property
    def frames_written(self) -> int:
        """Frames recorded by the writer (= ``n_frames``)."""
        return self.n_frames

    @property
    def is_open(self) -> bool:
        return self._file is not None

    def _check_open(self) -> None:
        if self._file is None:
            raise ValueError(f"trajectory {self.path} is closed")

    def close(self) -> None:
        """Release the file; the lazy arrays cannot be read afterwards."""
        if self._file is not None:
            f, self._file = self._file, None
            f.close()

    def __enter__(self) -> StoredTrajectory:
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def __repr__(self) -> str:
        return (f"StoredTrajectory({str(self.path)!r}, {self.n_frames} frames, "
                f"{self.n_strands} strands, status={self.status!r})")

    def load(self) -> Trajectory:
        """Every frame read into an in-memory :class:`Trajectory`."""
        return Trajectory(times=self.times.copy(), positions=self.positions[:], d1=self.d1[:],
                          strand_offsets=self.strand_offsets, edge_offsets=self.edge_offsets,
                          closed=self.closed, radii=self.radii,
                          extra_points=self.extra_points[:],
                          extra_triangles=self.extra_triangles, metadata=dict(self.metadata),
                          status=self.status, edge_broken=self.edge_broken,
                          **{k: getattr(self, k) for k in OPTIONAL_STATIC})


def open_h5_trajectory(path) -> StoredTrajectory:
    """Open the HDF5 trajectory ``path`` for lazy reading (ValueError naming the file if it
    is unreadable, truncated or inconsistent)."""
    h5py = _h5py()
    p = Path(path)
    try:
        f = h5py.File(p, "r")
    except (OSError, ValueError) as exc:
        raise ValueError(f"trajectory {p} is not a readable HDF5 file ({exc})") from None
    try:
        return StoredTrajectory(p, f)
    except BaseException:
        f.close()
        raise
