"""Trajectories: the recorded frames of a simulation, in memory and in files.

A trajectory stores, per output frame, the centreline vertices of all strands (concatenated
strand after strand), the unit material direction ``d1`` of each edge, and the remaining points
of the scene (kinematic frames, meshes, rigid bodies), plus the strand layout needed to split
them.  :class:`Trajectory` holds every frame in memory; :class:`TrajectoryBase` is the interface
it shares with the lazily read HDF5 trajectories of :mod:`strandlab.io.store`.

Files (``docs/trajectory-format.md`` describes both layouts):

* ``.h5`` (HDF5, the default): written frame by frame by
  :class:`~strandlab.io.store.TrajectoryWriter` and read lazily;
* ``.npz`` (format version 2: ``d1``; version 1, with PBD ghost points, is still read and
  converted): one compressed archive, read eagerly.

:func:`save_trajectory` writes either (by suffix), :func:`load_trajectory` reads either (by
content), checking every key and shape.
"""
from __future__ import annotations

import json
import pickle
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["Trajectory", "TrajectoryBase", "Frame", "save_trajectory", "load_trajectory",
           "check_offsets", "check_layout", "check_mesh_layout", "edge_vertices",
           "d1_from_ghosts", "json_default", "FORMAT_VERSION", "STATUS_PREFIXES",
           "OPTIONAL_STATIC"]

FORMAT_VERSION = 2  #: version of the trajectory layout written (``.npz`` and ``.h5``)

#: Allowed run states: ``running`` (writer open or stopped without closing), ``complete``,
#: ``interrupted: <reason>`` and ``diverged: <message>``.
STATUS_PREFIXES = ("running", "complete", "interrupted: ", "diverged: ")

_FRAME_KEYS = ("positions", "d1", "extra_points")
_ARRAY_KEYS = ("times", "positions", "d1", "strand_offsets", "edge_offsets", "closed",
               "radii", "extra_points", "extra_triangles")
_KEYS = _ARRAY_KEYS + ("metadata", "format_version", "status")
#: Static arrays added to format version 2 later: files without them still load, with the
#: strand's radius at each of its vertices, no rod segments and no tetrahedra.
OPTIONAL_STATIC = ("vertex_radii", "extra_segments", "extra_segment_radii", "extra_tetrahedra")
_KEYS_V1 = ("times", "positions", "ghosts", "strand_offsets", "edge_offsets", "closed",
            "radii", "extra_points", "extra_triangles", "metadata", "format_version")

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


# ---------------------------------------------------------------------------------- checks
def check_offsets(offsets, n_items: int, name: str = "offsets") -> np.ndarray:
    """Validated start indices of consecutive blocks, int64 shape [n_blocks + 1].

    ``offsets[0] == 0``, ``offsets[-1] == n_items`` and non-decreasing; raises ValueError
    naming ``name`` otherwise.
    """
    arr = np.asarray(offsets)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be a 1-D array [n_strands + 1], got shape {arr.shape}")
    if arr.size and not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise ValueError(f"{name} must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr[0] != 0 or arr[-1] != n_items:
        raise ValueError(f"{name} must start at 0 and end at {n_items}, got "
                         f"{int(arr[0])} .. {int(arr[-1])}")
    step = np.diff(arr)
    if np.any(step < 0):
        k = int(np.argmax(step < 0))
        raise ValueError(f"{name} must be non-decreasing; entry {k + 1} ({int(arr[k + 1])}) "
                         f"is below entry {k} ({int(arr[k])})")
    return arr


def _float_array(name: str, value, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array ({exc})") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    return arr


def _int_array(name: str, value, ndim: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be integers, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _expect_shape(name: str, arr, shape: tuple) -> None:
    if tuple(arr.shape) != shape:
        raise ValueError(f"{name} has shape {tuple(arr.shape)}, expected {shape}")


def _check_edge_counts(strand_offsets, edge_offsets, closed) -> None:
    """Each strand has n - 1 edges (open) or n edges (closed) for its n vertices."""
    nv = np.diff(strand_offsets)
    ne = np.diff(edge_offsets)
    expected = np.where(closed, nv, np.maximum(nv - 1, 0))
    bad = ne != expected
    if np.any(bad):
        s = int(np.argmax(bad))
        kind = "closed" if closed[s] else "open"
        raise ValueError(f"edge_offsets: strand {s} ({kind}, {int(nv[s])} vertices) has "
                         f"{int(ne[s])} edges, expected {int(expected[s])}")


def _check_cells(name: str, cells, cols: int, n: int) -> np.ndarray:
    """Cells of ``cols`` indices into ``n`` extra points, int64 [k, cols] (ValueError naming
    ``name`` and the first cell out of range)."""
    arr = np.asarray(cells)
    arr = _int_array(name, arr.reshape(0, cols) if arr.size == 0 else arr, 2)
    _expect_shape(name, arr, (arr.shape[0], cols))
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        k = int(np.argmax(np.any((arr < 0) | (arr >= n), axis=1)))
        raise ValueError(f"{name}[{k}] = {arr[k].tolist()} indexes outside the {n} extra "
                         "points")
    return arr


def _radii_array(name: str, value, n: int) -> np.ndarray:
    """Radii [m], float64 [n], finite and >= 0 (ValueError naming the first bad entry)."""
    r = _float_array(name, value, 1)
    _expect_shape(name, r, (n,))
    bad = ~(np.isfinite(r) & (r >= 0))
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{name}[{k}] = {r[k]} is not a finite radius >= 0")
    return r


def check_layout(strand_offsets, edge_offsets, closed, radii, extra_triangles,
                 n_vertices: int, n_edges: int, n_extra: int):
    """Validated static layout of a trajectory with V, E, X = ``n_vertices, n_edges, n_extra``.

    Returns ``(strand_offsets int64 [S + 1], edge_offsets int64 [S + 1], closed bool [S],
    radii float64 [S] (m), extra_triangles int64 [M, 3])``; raises ValueError naming the field.
    """
    so = check_offsets(strand_offsets, n_vertices, "strand_offsets")
    s = so.shape[0] - 1
    eo = check_offsets(edge_offsets, n_edges, "edge_offsets")
    _expect_shape("edge_offsets", eo, (s + 1,))
    cl = np.asarray(closed)
    if cl.size and not (cl.dtype == np.bool_ or np.issubdtype(cl.dtype, np.integer)):
        raise ValueError(f"closed must be booleans, got dtype {cl.dtype}")
    cl = cl.astype(np.bool_)
    _expect_shape("closed", cl, (s,))
    rad = _float_array("radii", radii, 1)
    _expect_shape("radii", rad, (s,))
    _check_edge_counts(so, eo, cl)
    tri = _check_cells("extra_triangles", extra_triangles, 3, n_extra)
    return so, eo, cl, rad, tri


def check_mesh_layout(vertex_radii, extra_segments, extra_segment_radii, extra_tetrahedra, *,
                      strand_offsets, radii, n_extra: int):
    """Validated :data:`OPTIONAL_STATIC` arrays of a trajectory whose checked layout has
    ``strand_offsets`` [S + 1], ``radii`` [S] and ``n_extra`` extra points; None stands for a
    file without the array.

    Returns ``(vertex_radii float64 [V] (m; default: each strand's radius at its vertices),
    extra_segments int64 [G, 2] (rod edges of the simplicial meshes, into the extra points;
    default none), extra_segment_radii float64 [G] (m), extra_tetrahedra int64 [K, 4]
    (default none))``; ValueError naming the array otherwise.
    """
    so = np.asarray(strand_offsets, dtype=np.int64)
    if vertex_radii is None:
        vr = np.repeat(np.asarray(radii, dtype=np.float64), np.diff(so))
    else:
        vr = _radii_array("vertex_radii", vertex_radii, int(so[-1]))
    seg = _check_cells("extra_segments", np.zeros((0, 2), np.int64) if extra_segments is None
                       else extra_segments, 2, n_extra)
    if extra_segment_radii is None and len(seg):
        raise ValueError(f"extra_segment_radii must be given with the {len(seg)} "
                         "extra_segments (one radius each)")
    seg_r = _radii_array("extra_segment_radii", np.zeros(0) if extra_segment_radii is None
                         else extra_segment_radii, len(seg))
    tets = _check_cells("extra_tetrahedra", np.zeros((0, 4), np.int64)
                        if extra_tetrahedra is None else extra_tetrahedra, 4, n_extra)
    return vr, seg, seg_r, tets


def check_status(status) -> str:
    """``status`` if it is a valid run state (see :data:`STATUS_PREFIXES`), else ValueError."""
    if not isinstance(status, str) or not (
            status in ("running", "complete")
            or any(status.startswith(p) for p in STATUS_PREFIXES[2:])):
        raise ValueError(f"status must be 'running', 'complete', 'interrupted: <reason>' or "
                         f"'diverged: <message>', got {status!r}")
    return status


def first_non_finite(arr: np.ndarray):
    """Index (tuple) of the first non-finite entry of ``arr``, or None if all are finite."""
    bad = ~np.isfinite(arr)
    if not bad.any():
        return None
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), arr.shape))


# ---------------------------------------------------------------------------------- d1
def edge_vertices(strand_offsets, edge_offsets, closed):
    """Vertex indices ``(a, b)`` of every edge, two int64 arrays [E] (edge e = a[e] -> b[e]).

    Edge ``j`` of strand ``s`` joins vertices ``j`` and ``j + 1`` of that strand; the last edge
    of a closed strand joins its last vertex back to its first.
    """
    so = np.asarray(strand_offsets, dtype=np.int64)
    eo = np.asarray(edge_offsets, dtype=np.int64)
    cl = np.asarray(closed, dtype=np.bool_)
    ne = np.diff(eo)
    strand = np.repeat(np.arange(ne.shape[0]), ne)
    local = np.arange(int(eo[-1]), dtype=np.int64) - eo[strand]
    a = so[strand] + local
    nv = (so[1:] - so[:-1])[strand]
    b = so[strand] + np.where(cl[strand], (local + 1) % np.maximum(nv, 1), local + 1)
    return a, b


def _any_perpendicular(t: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to each row of ``t`` [..., 3] (x axis where t is zero)."""
    axis = np.zeros_like(t)
    np.put_along_axis(axis, np.argmin(np.abs(t), axis=-1)[..., None], 1.0, axis=-1)
    p = np.cross(t, axis)
    n = np.linalg.norm(p, axis=-1, keepdims=True)
    out = np.zeros_like(t)
    out[..., 0] = 1.0
    np.divide(p, n, out=out, where=n > 0)
    return out


def d1_from_ghosts(positions, ghosts, strand_offsets, edge_offsets, closed) -> np.ndarray:
    """Unit material directions d1 from PBD ghost points, shape [..., E, 3].

    ``positions`` [..., V, 3] and ``ghosts`` [..., E, 3] in m (any leading frame axes).  For
    each edge, d1 is the ghost point minus the edge midpoint, with its component along the
    edge removed, normalised.  Where that vector vanishes (ghost on the edge line) d1 is an
    arbitrary unit vector perpendicular to the edge.
    """
    x = np.asarray(positions, dtype=np.float64)
    g = np.asarray(ghosts, dtype=np.float64)
    a, b = edge_vertices(strand_offsets, edge_offsets, closed)
    xa, xb = x[..., a, :], x[..., b, :]
    t = xb - xa
    v = g - 0.5 * (xa + xb)
    tt = np.einsum("...i,...i->...", t, t)[..., None]
    vt = np.einsum("...i,...i->...", v, t)[..., None]
    v = v - np.divide(vt, tt, out=np.zeros_like(vt), where=tt > 0) * t
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    scale = np.maximum(np.linalg.norm(g - xa, axis=-1, keepdims=True), np.sqrt(tt))
    ok = n > 1e-12 * scale
    fallback = _any_perpendicular(t)
    return np.where(ok, v / np.where(ok, n, 1.0), fallback)


# ---------------------------------------------------------------------------------- interface
class Frame(NamedTuple):
    """One frame of a trajectory: time [s], positions [V, 3] (m), d1 [E, 3], extra [X, 3] (m)."""

    time: float
    positions: np.ndarray
    d1: np.ndarray
    extra_points: np.ndarray


class TrajectoryBase:
    """What every trajectory offers, in memory (:class:`Trajectory`) or read lazily from HDF5.

    Subclasses provide ``times`` [T] (an array), ``positions`` [T, V, 3], ``d1`` [T, E, 3],
    ``extra_points`` [T, X, 3] (arrays, or lazily read objects indexed like arrays), the
    layout arrays ``strand_offsets``, ``edge_offsets``, ``closed``, ``radii``,
    ``extra_triangles``, ``vertex_radii``, ``extra_segments``, ``extra_segment_radii``,
    ``extra_tetrahedra`` (:func:`check_mesh_layout`), and ``metadata`` (dict) and ``status``
    (str).
    """

    @property
    def n_frames(self) -> int:
        """Number of frames T."""
        return int(self.times.shape[0])

    @property
    def n_strands(self) -> int:
        """Number of strands S."""
        return int(self.strand_offsets.shape[0] - 1)

    @property
    def n_vertices(self) -> int:
        """Number of centreline vertices V (all strands)."""
        return int(self.positions.shape[1])

    @property
    def n_edges(self) -> int:
        """Number of edges E (all strands)."""
        return int(self.d1.shape[1])

    @property
    def n_extra(self) -> int:
        """Number of extra points X."""
        return int(self.extra_points.shape[1])

    @property
    def solver(self) -> dict | None:
        """``metadata["solver"]`` (``{"type": name, "settings": {...}}``) or None."""
        return self.metadata.get("solver")

    def _strand_index(self, i) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"strand index must be an integer, got {type(i).__name__}")
        if not -self.n_strands <= i < self.n_strands:
            raise IndexError(f"strand {i} out of range (0..{self.n_strands - 1})")
        return int(i) % self.n_strands

    def _frame_index(self, k) -> int:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"frame index must be an integer, got {type(k).__name__}")
        if not -self.n_frames <= k < self.n_frames:
            raise IndexError(f"frame {k} out of range (0..{self.n_frames - 1})")
        return int(k) % self.n_frames

    def strand(self, i: int) -> np.ndarray:
        """Centreline of strand ``i`` in every frame [m], shape [T, n_i, 3]."""
        s = self._strand_index(i)
        return self.positions[:, int(self.strand_offsets[s]):int(self.strand_offsets[s + 1])]

    def strand_d1(self, i: int) -> np.ndarray:
        """Material direction d1 of strand ``i``'s edges in every frame, shape [T, e_i, 3]."""
        s = self._strand_index(i)
        return self.d1[:, int(self.edge_offsets[s]):int(self.edge_offsets[s + 1])]

    def pieces(self, k: int) -> np.ndarray:
        """First vertex of every piece of strand in frame ``k`` and the vertex count, int
        [P + 1]: the strands split at the edges the solver broke (``edge_broken``; a
        trajectory without broken edges gives ``strand_offsets``).  Open strands only."""
        k = self._frame_index(k)
        so = np.asarray(self.strand_offsets, dtype=np.int64)
        broken = getattr(self, "edge_broken", None)
        if broken is None:
            return so.copy()
        a, _ = edge_vertices(self.strand_offsets, self.edge_offsets, self.closed)
        cut = a[np.asarray(broken[k], dtype=bool)] + 1
        return np.unique(np.concatenate([so, cut]))

    def frame(self, k: int) -> Frame:
        """Frame ``k`` (negative counts from the end) as a :class:`Frame`."""
        k = self._frame_index(k)
        return Frame(float(self.times[k]), np.asarray(self.positions[k]),
                     np.asarray(self.d1[k]), np.asarray(self.extra_points[k]))


# ---------------------------------------------------------------------------------- trajectory
@dataclass(eq=False)
class Trajectory(TrajectoryBase):
    """The recorded frames of a simulation, all in memory.

    Shapes use ``T`` frames, ``V`` centreline vertices, ``E`` edges, ``S`` strands, ``X`` extra
    points and ``M`` extra triangles.  Arrays are converted to float64 / int64 / bool and
    checked for consistent shapes on construction (ValueError naming the field).
    """

    times: np.ndarray               #: Frame times [s], shape [T]
    positions: np.ndarray           #: Centreline vertices of all strands [m], shape [T, V, 3]
    d1: np.ndarray                  #: Unit material direction d1 of each edge, shape [T, E, 3]
    strand_offsets: np.ndarray      #: First vertex of each strand and V, shape [S + 1]
    edge_offsets: np.ndarray        #: First edge of each strand and E, shape [S + 1]
    closed: np.ndarray              #: Closed-loop flags, shape [S]
    radii: np.ndarray               #: Strand radii [m], shape [S]
    extra_points: np.ndarray        #: Frame, mesh and rigid-body points [m], shape [T, X, 3]
    extra_triangles: np.ndarray     #: Triangles into ``extra_points``, int shape [M, 3]
    metadata: dict = field(default_factory=dict)  #: JSON-serialisable description of the run
    status: str = "complete"        #: Run state, see :data:`STATUS_PREFIXES`
    #: Edges broken (torn) by the solver in each frame, bool [T, E], or None (never)
    edge_broken: np.ndarray | None = None
    #: Section radius of each vertex [m], [V] (None: the strand's radius at each vertex)
    vertex_radii: np.ndarray | None = None
    #: Rod edges of the simplicial meshes into ``extra_points``, int [G, 2] (None: none)
    extra_segments: np.ndarray | None = None
    #: Section radius of each rod edge [m], [G]
    extra_segment_radii: np.ndarray | None = None
    #: Solid tetrahedra of the simplicial meshes into ``extra_points``, int [K, 4] (None: none)
    extra_tetrahedra: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.times = _float_array("times", self.times, 1)
        t = self.times.shape[0]
        self.positions = _float_array("positions", self.positions, 3)
        self.d1 = _float_array("d1", self.d1, 3)
        self.extra_points = _float_array("extra_points", self.extra_points, 3)
        v, e, x = self.positions.shape[1], self.d1.shape[1], self.extra_points.shape[1]
        _expect_shape("positions", self.positions, (t, v, 3))
        _expect_shape("d1", self.d1, (t, e, 3))
        _expect_shape("extra_points", self.extra_points, (t, x, 3))
        (self.strand_offsets, self.edge_offsets, self.closed, self.radii,
         self.extra_triangles) = check_layout(self.strand_offsets, self.edge_offsets,
                                              self.closed, self.radii, self.extra_triangles,
                                              v, e, x)
        (self.vertex_radii, self.extra_segments, self.extra_segment_radii,
         self.extra_tetrahedra) = check_mesh_layout(
            self.vertex_radii, self.extra_segments, self.extra_segment_radii,
            self.extra_tetrahedra, strand_offsets=self.strand_offsets, radii=self.radii,
            n_extra=x)
        if not isinstance(self.metadata, dict):
            raise ValueError(f"metadata must be a dict, got {type(self.metadata).__name__}")
        check_status(self.status)
        if self.edge_broken is not None:
            self.edge_broken = np.asarray(self.edge_broken, dtype=bool)
            _expect_shape("edge_broken", self.edge_broken, (t, e))


# ---------------------------------------------------------------------------------- json
def json_default(obj, *, strict: bool = True):
    """Numpy scalars and arrays and paths as plain JSON values (``json.dumps(...,
    default=json_default)``); anything else a TypeError, or with ``strict=False`` its
    ``repr`` (a record that must be written whatever it holds)."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    if not strict:
        return repr(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON-serialisable")


def metadata_json(metadata: dict) -> str:
    """``metadata`` as a JSON string (numpy values and paths converted), or ValueError."""
    try:
        return json.dumps(metadata, default=json_default, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"trajectory metadata cannot be written as JSON: {exc}") from None


def decode_metadata(p: Path, text) -> dict:
    """The metadata dict from its JSON ``text``, or ValueError naming the file ``p``."""
    try:
        meta = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"trajectory {p}: metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"trajectory {p}: metadata must be a JSON object, got "
                         f"{type(meta).__name__}")
    return meta


def check_solver(solver) -> dict:
    """``{"type": str, "settings": dict}`` validated (ValueError naming what is wrong)."""
    if not isinstance(solver, dict) or set(solver) != {"type", "settings"}:
        raise ValueError(f"solver must be a dict with exactly the keys 'type' and 'settings', "
                         f"got {solver!r}")
    if not isinstance(solver["type"], str) or not solver["type"]:
        raise ValueError(f"solver['type'] must be a non-empty string, got {solver['type']!r}")
    if not isinstance(solver["settings"], dict):
        raise ValueError(f"solver['settings'] must be a dict, got "
                         f"{type(solver['settings']).__name__}")
    return {"type": solver["type"], "settings": dict(solver["settings"])}


def with_solver(metadata: dict, solver) -> dict:
    """A copy of ``metadata`` with ``metadata["solver"] = solver`` (validated) unless None."""
    if not isinstance(metadata, dict):
        raise ValueError(f"metadata must be a dict, got {type(metadata).__name__}")
    meta = dict(metadata)
    if solver is not None:
        meta["solver"] = check_solver(solver)
    return meta


def _check_frames_finite(traj: TrajectoryBase) -> None:
    """ValueError naming the first frame and array holding a non-finite value."""
    bad = first_non_finite(np.asarray(traj.times))
    if bad is not None:
        raise ValueError(f"times[{bad[0]}] = {traj.times[bad[0]]} is not finite")
    for name in _FRAME_KEYS:
        bad = first_non_finite(np.asarray(getattr(traj, name)))
        if bad is not None:
            raise ValueError(f"frame {bad[0]}: {name} has a non-finite value at row {bad[1]}")


# ---------------------------------------------------------------------------------- files
def save_trajectory(path, traj: TrajectoryBase, *, solver=None, **h5_options) -> Path:
    """Write ``traj`` to ``path``; returns the path written.

    The suffix picks the format: ``.npz`` writes a compressed numpy archive (format version
    2), ``.h5`` / ``.hdf5`` an HDF5 file through
    :class:`~strandlab.io.store.TrajectoryWriter` (``h5_options``, e.g. ``compression``, are
    passed on); any other name gets ``.h5`` appended.  ``solver``
    (``{"type": name, "settings": {...}}``), when given, is recorded as
    ``metadata["solver"]``.  Non-finite frames and metadata that JSON cannot hold raise
    ValueError.
    """
    if not isinstance(traj, TrajectoryBase):
        raise TypeError(f"expected a Trajectory, got {type(traj).__name__}")
    p = Path(path)
    if p.suffix not in (".npz", ".h5", ".hdf5"):
        p = p.with_name(p.name + ".h5")
    meta = with_solver(traj.metadata, solver)
    if p.suffix != ".npz":
        from .store import write_h5_trajectory
        return write_h5_trajectory(p, traj, metadata=meta, **h5_options)
    if h5_options:
        raise TypeError(f"options {sorted(h5_options)} apply to .h5 files only")
    text = metadata_json(meta)
    arrays = {k: np.asarray(getattr(traj, k)) for k in _ARRAY_KEYS + OPTIONAL_STATIC}
    _check_frames_finite(traj)
    np.savez_compressed(p, metadata=np.array(text), format_version=np.int64(FORMAT_VERSION),
                        status=np.array(check_status(traj.status)), **arrays)
    return p


def _read_npz(p: Path) -> dict:
    """All entries of the ``.npz`` file ``p`` for its format version, or ValueError."""
    try:
        data = np.load(p, allow_pickle=False)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, pickle.UnpicklingError) as exc:
        raise ValueError(f"trajectory {p} is not a readable .npz file ({exc})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"trajectory {p} is a single .npy array, not an .npz archive")
    with data:
        try:
            if "format_version" not in data.files:
                raise ValueError(f"trajectory {p} lacks the key(s) format_version")
            version = data["format_version"]
            if version.shape != () or version.dtype.kind not in "iu" or int(version) not in (1, 2):
                raise ValueError(f"trajectory {p}: format_version {version.tolist()} is not "
                                 f"supported (expected 1 or {FORMAT_VERSION})")
            keys = _KEYS if int(version) == 2 else _KEYS_V1
            missing = [k for k in keys if k not in data.files]
            if missing:
                raise ValueError(f"trajectory {p} lacks the key(s) {', '.join(missing)}")
            return {k: data[k] for k in keys + OPTIONAL_STATIC if k in data.files}
        except (OSError, zipfile.BadZipFile, EOFError, KeyError) as exc:
            raise ValueError(f"trajectory {p}: an entry cannot be read ({exc})") from None


def _string_entry(p: Path, name: str, entry: np.ndarray) -> str:
    if entry.ndim != 0 or entry.dtype.kind != "U":
        raise ValueError(f"trajectory {p}: {name} must be a JSON string, got an array of "
                         f"dtype {entry.dtype} and shape {entry.shape}")
    return str(entry)


def _load_npz(p: Path) -> Trajectory:
    entries = _read_npz(p)
    meta = decode_metadata(p, _string_entry(p, "metadata", entries["metadata"]))
    try:
        v1 = "ghosts" in entries        # format version 1: PBD ghost points
        if v1:
            pos = _float_array("positions", entries["positions"], 3)
            ghosts = _float_array("ghosts", entries.pop("ghosts"), 3)
            _expect_shape("ghosts", ghosts, pos.shape[:1] + ghosts.shape[1:])
            entries["d1"] = ghosts
            entries["status"] = np.array("complete")
        status = check_status(_string_entry(p, "status", entries["status"]))
        traj = Trajectory(metadata=meta, status=status,
                          **{k: entries[k] for k in _ARRAY_KEYS + OPTIONAL_STATIC
                             if k in entries})
        _check_frames_finite(traj)
        if v1:
            traj.d1 = d1_from_ghosts(traj.positions, traj.d1, traj.strand_offsets,
                                     traj.edge_offsets, traj.closed)
    except ValueError as exc:
        raise ValueError(f"trajectory {p}: {exc}") from None
    return traj


def load_trajectory(path) -> TrajectoryBase:
    """Read a trajectory written by :func:`save_trajectory` or a ``TrajectoryWriter``.

    HDF5 files (recognised by content) give a lazily read
    :class:`~strandlab.io.store.StoredTrajectory` (frames are read on demand; close it, or use
    it in a ``with`` block, to release the file); ``.npz`` files an in-memory
    :class:`Trajectory` (format version 1 ghost points converted to d1).  Raises
    FileNotFoundError when ``path`` does not exist and ValueError naming the file and the
    missing or malformed entry otherwise (also for non-finite times or positions).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"trajectory {p} does not exist")
    with open(p, "rb") as fh:
        head = fh.read(len(HDF5_SIGNATURE))
    if head == HDF5_SIGNATURE or (p.suffix in (".h5", ".hdf5") and not head.startswith(b"PK")):
        from .store import open_h5_trajectory
        return open_h5_trajectory(p)
    return _load_npz(p)
