"""Trajectories: the recorded frames of a simulation, saved to and loaded from ``.npz`` files.

A :class:`Trajectory` stores, per output frame, the centreline vertices of all strands
(concatenated strand after strand), one ghost point per edge, and the remaining points of the
scene (kinematic frames, meshes, rigid bodies), plus the strand layout needed to split them.
:func:`save_trajectory` writes a compressed ``.npz`` (no pickled objects; the metadata is a
JSON string) and :func:`load_trajectory` reads it back, checking every key and shape.
"""
from __future__ import annotations

import json
import pickle
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Trajectory", "save_trajectory", "load_trajectory", "check_offsets",
           "FORMAT_VERSION"]

FORMAT_VERSION = 1  #: version of the ``.npz`` layout written by :func:`save_trajectory`

_ARRAY_KEYS = ("times", "positions", "d1", "strand_offsets", "edge_offsets", "closed",
               "radii", "extra_points", "extra_triangles")
_KEYS = _ARRAY_KEYS + ("metadata", "format_version")


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


def _expect_shape(name: str, arr: np.ndarray, shape: tuple) -> None:
    if arr.shape != shape:
        raise ValueError(f"{name} has shape {arr.shape}, expected {shape}")


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


# ---------------------------------------------------------------------------------- trajectory
@dataclass(eq=False)
class Trajectory:
    """The recorded frames of a simulation.

    Shapes use ``T`` frames, ``V`` centreline vertices, ``E`` edges, ``S`` strands, ``X`` extra
    points and ``M`` extra triangles.  Arrays are converted to float64 / int64 / bool and
    checked for consistent shapes on construction (ValueError naming the field).
    """

    times: np.ndarray               #: Frame times [s], shape [T]
    positions: np.ndarray           #: Centreline vertices of all strands [m], shape [T, V, 3]
    d1: np.ndarray                  #: Unit material direction d1 per edge, shape [T, E, 3]
    strand_offsets: np.ndarray      #: First vertex of each strand and V, shape [S + 1]
    edge_offsets: np.ndarray        #: First edge of each strand and E, shape [S + 1]
    closed: np.ndarray              #: Closed-loop flags, shape [S]
    radii: np.ndarray               #: Strand radii [m], shape [S]
    extra_points: np.ndarray        #: Frame, mesh and rigid-body points [m], shape [T, X, 3]
    extra_triangles: np.ndarray     #: Triangles into ``extra_points``, int shape [M, 3]
    metadata: dict = field(default_factory=dict)  #: JSON-serialisable description of the run

    def __post_init__(self) -> None:
        self.times = _float_array("times", self.times, 1)
        t = self.times.shape[0]
        self.positions = _float_array("positions", self.positions, 3)
        self.d1 = _float_array("d1", self.d1, 3)
        self.extra_points = _float_array("extra_points", self.extra_points, 3)
        self.radii = _float_array("radii", self.radii, 1)
        self.closed = np.asarray(self.closed).astype(np.bool_)
        tri = np.asarray(self.extra_triangles)
        self.extra_triangles = _int_array("extra_triangles",
                                          tri.reshape(0, 3) if tri.size == 0 else tri, 2)
        v, e = self.positions.shape[1], self.d1.shape[1]
        _expect_shape("positions", self.positions, (t, v, 3))
        _expect_shape("d1", self.d1, (t, e, 3))
        _expect_shape("extra_points", self.extra_points, (t, self.extra_points.shape[1], 3))
        self.strand_offsets = check_offsets(self.strand_offsets, v, "strand_offsets")
        s = self.strand_offsets.shape[0] - 1
        self.edge_offsets = check_offsets(self.edge_offsets, e, "edge_offsets")
        _expect_shape("edge_offsets", self.edge_offsets, (s + 1,))
        _expect_shape("closed", self.closed, (s,))
        _expect_shape("radii", self.radii, (s,))
        _check_edge_counts(self.strand_offsets, self.edge_offsets, self.closed)
        self._check_triangles()
        if not isinstance(self.metadata, dict):
            raise ValueError(f"metadata must be a dict, got {type(self.metadata).__name__}")

    def _check_triangles(self) -> None:
        tri = self.extra_triangles
        _expect_shape("extra_triangles", tri, (tri.shape[0], 3))
        n = self.extra_points.shape[1]
        if tri.size and (tri.min() < 0 or tri.max() >= n):
            k = int(np.argmax(np.any((tri < 0) | (tri >= n), axis=1)))
            raise ValueError(f"extra_triangles[{k}] = {tri[k].tolist()} indexes outside the "
                             f"{n} extra points")

    # ------------------------------------------------------------------ sizes
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

    # ------------------------------------------------------------------ access
    def _strand_index(self, i) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"strand index must be an integer, got {type(i).__name__}")
        if not -self.n_strands <= i < self.n_strands:
            raise IndexError(f"strand {i} out of range (0..{self.n_strands - 1})")
        return int(i) % self.n_strands

    def strand(self, i: int) -> np.ndarray:
        """Centreline of strand ``i`` in every frame [m], shape [T, n_i, 3] (a view)."""
        s = self._strand_index(i)
        return self.positions[:, self.strand_offsets[s]:self.strand_offsets[s + 1]]

    def strand_d1(self, i: int) -> np.ndarray:
        """Material directions of strand ``i``'s edges in every frame, shape [T, e_i, 3]."""
        s = self._strand_index(i)
        return self.d1[:, self.edge_offsets[s]:self.edge_offsets[s + 1]]


# ---------------------------------------------------------------------------------- files
def _json_default(obj):
    """Numpy scalars and arrays and paths as plain JSON values."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON-serialisable")


def _metadata_json(metadata: dict) -> str:
    try:
        return json.dumps(metadata, default=_json_default, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"trajectory metadata cannot be written as JSON: {exc}") from None


def save_trajectory(path, traj: Trajectory) -> Path:
    """Write ``traj`` to a compressed ``.npz`` file (suffix added if missing); returns the path.

    Every field is an array entry; ``metadata`` is stored as a JSON string (numpy values and
    paths are converted; anything else not JSON-serialisable raises ValueError).
    """
    if not isinstance(traj, Trajectory):
        raise TypeError(f"expected a Trajectory, got {type(traj).__name__}")
    p = Path(path)
    if p.suffix != ".npz":
        p = p.with_name(p.name + ".npz")
    meta = _metadata_json(traj.metadata)
    arrays = {k: getattr(traj, k) for k in _ARRAY_KEYS}
    np.savez_compressed(p, metadata=np.array(meta), format_version=np.int64(FORMAT_VERSION),
                        **arrays)
    return p


def _read_npz(p: Path) -> dict:
    """All entries of the ``.npz`` file ``p``, or ValueError naming the file."""
    try:
        data = np.load(p, allow_pickle=False)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, pickle.UnpicklingError) as exc:
        raise ValueError(f"trajectory {p} is not a readable .npz file ({exc})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"trajectory {p} is a single .npy array, not an .npz archive")
    with data:
        missing = [k for k in _KEYS if k not in data.files]
        if missing:
            raise ValueError(f"trajectory {p} lacks the key(s) {', '.join(missing)}")
        try:
            return {k: data[k] for k in _KEYS}
        except (OSError, zipfile.BadZipFile, EOFError, ValueError, KeyError) as exc:
            raise ValueError(f"trajectory {p}: an entry cannot be read ({exc})") from None


def _decode_metadata(p: Path, entry: np.ndarray) -> dict:
    if entry.ndim != 0 or entry.dtype.kind != "U":
        raise ValueError(f"trajectory {p}: metadata must be a JSON string, got an array of "
                         f"dtype {entry.dtype} and shape {entry.shape}")
    try:
        meta = json.loads(str(entry))
    except json.JSONDecodeError as exc:
        raise ValueError(f"trajectory {p}: metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"trajectory {p}: metadata must be a JSON object, got "
                         f"{type(meta).__name__}")
    return meta


def load_trajectory(path) -> Trajectory:
    """Read a trajectory written by :func:`save_trajectory`.

    Raises FileNotFoundError when ``path`` does not exist and ValueError naming the file and
    the missing or malformed key otherwise.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"trajectory {p} does not exist")
    entries = _read_npz(p)
    version = entries["format_version"]
    if version.shape != () or int(version) != FORMAT_VERSION:
        raise ValueError(f"trajectory {p}: format_version {version.tolist()} is not supported "
                         f"(expected {FORMAT_VERSION})")
    meta = _decode_metadata(p, entries["metadata"])
    try:
        return Trajectory(metadata=meta, **{k: entries[k] for k in _ARRAY_KEYS})
    except ValueError as exc:
        raise ValueError(f"trajectory {p}: {exc}") from None
