"""Hair files: Cem Yuksel's ``.hair`` format and the USC-HairSalon ``.data`` format.

Both hold a set of strands (polylines).  :class:`Hair` keeps them as one flat array of points
[m] (all strands concatenated) with ``offsets`` (first point of each strand and the total), plus
the optional per-point arrays of the ``.hair`` format (thickness [m], transparency, colour).
:func:`read_hair` and :func:`write_hair` choose the format by the file's suffix (``.hair``,
``.data``) or an explicit ``format=``; ``scale`` is the length of the file's unit in metres
(``scale=0.01`` for a file in centimetres): reading multiplies points and thickness by it, writing
divides them by it.  :meth:`Hair.to_scene` and :meth:`Hair.add_to` turn the strands into a
simulation scene.

``.hair`` (little-endian; http://www.cemyuksel.com/research/hairmodels/):

==========  =====================================================================
bytes       content
==========  =====================================================================
0-3         ``b"HAIR"``
4-7         uint32 number of strands ``S``
8-11        uint32 total number of points ``P``
12-15       uint32 flags: 1 segments array, 2 points array, 4 thickness array,
            8 transparency array, 16 colours array
16-19       uint32 default number of segments per strand (used without a segments array)
20-23       float32 default thickness
24-27       float32 default transparency
28-39       3 float32 default colour (r, g, b)
40-127      88 bytes of information text (NUL-padded)
==========  =====================================================================

then, each only when its flag is set and in this order: uint16 segments per strand [S]
(strand ``i`` has ``segments[i] + 1`` points), float32 points [P, 3], float32 thickness [P],
float32 transparency [P], float32 colours [P, 3].  The points array is required.

``.data`` (USC-HairSalon, little-endian): int32 number of strands; then for each strand an int32
number of vertices ``n`` and ``n`` float32 triples ``x y z``.  These files mark scalp samples
without hair by strands of one vertex; they are read and kept (so that a file reads and writes
back unchanged) and reported by :meth:`Hair.short_strands`; :meth:`Hair.add_to` refuses strands
of fewer than 3 vertices unless asked to skip them (``skip_short=True``), and
:meth:`Hair.drop_short` removes them.

Bad input raises ``ValueError`` naming the file and the item: a short header or array (bytes
expected and found), a wrong magic, unknown flags, counts that disagree with the data, trailing
bytes, non-finite values and coincident consecutive points (strand and vertex).  Writing goes to
a temporary file in the same folder, renamed over the target only once complete: a failed write
leaves no partial file and an existing file unchanged.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .atomic import write_bytes_atomic

if TYPE_CHECKING:  # pragma: no cover
    from ..sim.builder import SceneBuilder
    from ..sim.material import Material
    from ..sim.scene import Scene

__all__ = ["Hair", "HairStyle", "read_hair", "write_hair", "read_hair_header", "hair_format",
           "HAIR_FORMATS",
           "FLAG_SEGMENTS", "FLAG_POINTS", "FLAG_THICKNESS", "FLAG_TRANSPARENCY", "FLAG_COLORS"]

FLAG_SEGMENTS = 1       #: ``.hair`` flag: the file has a segments array
FLAG_POINTS = 2         #: ``.hair`` flag: the file has a points array (required)
FLAG_THICKNESS = 4      #: ``.hair`` flag: the file has a thickness array
FLAG_TRANSPARENCY = 8   #: ``.hair`` flag: the file has a transparency array
FLAG_COLORS = 16        #: ``.hair`` flag: the file has a colours array
_ALL_FLAGS = FLAG_SEGMENTS | FLAG_POINTS | FLAG_THICKNESS | FLAG_TRANSPARENCY | FLAG_COLORS

#: The file formats by suffix.
HAIR_FORMATS = {".hair": "hair", ".data": "data"}

_MAGIC = b"HAIR"
_HEADER_BYTES = 128
_INFO_BYTES = 88
_HEADER = struct.Struct("<4sIIII f f 3f 88s")
_F32_MAX = float(np.finfo(np.float32).max)
assert _HEADER.size == _HEADER_BYTES
_MAX_SEGMENTS = 0xFFFF      # uint16 segments per strand
_MAX_COUNT = 0xFFFFFFFF     # uint32 strand and point counts
_MAX_DATA = 0x7FFFFFFF      # int32 counts of the .data format


# ---------------------------------------------------------------------------------- container
@dataclass(eq=False)
class Hair:
    """A set of strands with the optional per-point attributes of the ``.hair`` format.

    Attributes
    ----------
    points : float64 [P, 3] [m], all strands concatenated, root first.
    offsets : int64 [S + 1]: strand ``i`` owns points ``offsets[i] .. offsets[i+1] - 1``;
        ``offsets[0] = 0``, ``offsets[-1] = P``, every strand has at least one point.
    thickness : float64 [P] [m] (diameter, >= 0) or None.
    transparency : float64 [P] (0 opaque .. 1 transparent) or None.
    colors : float64 [P, 3] (r, g, b, usually in [0, 1]) or None.
    info : text of at most 88 bytes in UTF-8 (the ``.hair`` header's information field).
    default_thickness : [m], used where ``thickness`` is None (0: unknown).
    default_transparency, default_color : used where the per-point arrays are None.

    Construction checks shapes, offsets and finiteness; errors name the strand and vertex.
    Coincident consecutive points are allowed in the container (a renderer does not mind); see
    :meth:`zero_length_edges`, and :meth:`add_to`, which refuses them.
    """

    points: np.ndarray
    offsets: np.ndarray
    thickness: np.ndarray | None = None
    transparency: np.ndarray | None = None
    colors: np.ndarray | None = None
    info: str = ""
    default_thickness: float = 0.0
    default_transparency: float = 0.0
    default_color: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0))

    def __post_init__(self):
        self.points, self.offsets = _check_layout("hair", self.points, self.offsets)
        p = len(self.points)
        self.thickness = _per_point("hair", "thickness", self.thickness, p, (), self.offsets,
                                    nonnegative=True)
        self.transparency = _per_point("hair", "transparency", self.transparency, p, (),
                                       self.offsets)
        self.colors = _per_point("hair", "colors", self.colors, p, (3,), self.offsets)
        if not isinstance(self.info, str):
            raise TypeError(f"hair: info must be a str, got {type(self.info).__name__}")
        for name in ("default_thickness", "default_transparency"):
            v = float(getattr(self, name))
            if not math.isfinite(v) or (name == "default_thickness" and v < 0):
                raise ValueError(f"hair: {name} must be finite" +
                                 (" and >= 0" if name == "default_thickness" else "") +
                                 f", got {v!r}")
            setattr(self, name, v)
        c = np.asarray(self.default_color, dtype=np.float64)
        if c.shape != (3,) or not np.all(np.isfinite(c)):
            raise ValueError(f"hair: default_color must be 3 finite numbers, got "
                             f"{self.default_color!r}")
        self.default_color = tuple(float(x) for x in c)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_strands(cls, strands: Iterable, *, thickness: Sequence | None = None,
                     transparency: Sequence | None = None, colors: Sequence | None = None,
                     **header) -> Hair:
        """A Hair from a list of strands, each [n_i, 3] [m]; the optional per-strand lists
        hold [n_i] thickness [m], [n_i] transparency, [n_i, 3] colours.  ``header``: ``info``,
        ``default_thickness``, ``default_transparency``, ``default_color``."""
        pts = [np.asarray(s, dtype=np.float64) for s in strands]
        for i, s in enumerate(pts):
            if s.ndim != 2 or s.shape[1] != 3:
                raise ValueError(f"hair: strand {i}: expected shape [n, 3], got {s.shape}")
        counts = np.array([len(s) for s in pts], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        flat = np.concatenate(pts) if pts else np.zeros((0, 3))

        def cat(name, arrs, tail):
            if arrs is None:
                return None
            arrs = [np.asarray(a, dtype=np.float64) for a in arrs]
            if len(arrs) != len(pts):
                raise ValueError(f"hair: {name} has {len(arrs)} strands, points {len(pts)}")
            for i, a in enumerate(arrs):
                if a.shape != (counts[i], *tail):
                    raise ValueError(f"hair: {name} of strand {i}: expected shape "
                                     f"{(int(counts[i]), *tail)}, got {a.shape}")
            return np.concatenate(arrs) if arrs else np.zeros((0, *tail))

        return cls(flat, offsets, cat("thickness", thickness, ()),
                   cat("transparency", transparency, ()), cat("colors", colors, (3,)), **header)

    # ------------------------------------------------------------------ queries
    @property
    def n_strands(self) -> int:
        """Number of strands ``S``."""
        return len(self.offsets) - 1

    @property
    def n_points(self) -> int:
        """Total number of points ``P``."""
        return len(self.points)

    @property
    def vertex_counts(self) -> np.ndarray:
        """int64 [S]: points of each strand."""
        return np.diff(self.offsets)

    def strand(self, i: int) -> np.ndarray:
        """The points of strand ``i``, [n_i, 3] [m] (a view)."""
        a, b = self._bounds(i)
        return self.points[a:b]

    def strands(self) -> Iterator[np.ndarray]:
        """Each strand's points in turn, [n_i, 3] [m] (views)."""
        for i in range(self.n_strands):
            yield self.points[self.offsets[i]:self.offsets[i + 1]]

    def lengths(self) -> np.ndarray:
        """float64 [S] [m]: the polyline length of every strand (0 for one point)."""
        seg = np.linalg.norm(np.diff(self.points, axis=0), axis=1)
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        return cum[self.offsets[1:] - 1] - cum[self.offsets[:-1]]

    def short_strands(self, min_vertices: int = 3) -> np.ndarray:
        """int64 [k]: the strands with fewer than ``min_vertices`` points (``.data`` files mark
        scalp samples without hair by one-point strands)."""
        return np.nonzero(self.vertex_counts < int(min_vertices))[0]

    def zero_length_edges(self) -> np.ndarray:
        """int64 [k, 2]: ``(strand, vertex)`` of every point that coincides with the next point
        of its strand (edge length 0 in float64)."""
        d = np.diff(self.points, axis=0)
        zero = np.all(d == 0.0, axis=1)
        zero[self.offsets[1:-1] - 1] = False          # pairs across two strands
        k = np.nonzero(zero)[0]
        s = np.searchsorted(self.offsets, k, side="right") - 1
        return np.stack([s, k - self.offsets[s]], axis=1).astype(np.int64)

    def flags(self) -> int:
        """The ``.hair`` flags of the arrays this hair holds (segments not included)."""
        return (FLAG_POINTS | (FLAG_THICKNESS if self.thickness is not None else 0)
                | (FLAG_TRANSPARENCY if self.transparency is not None else 0)
                | (FLAG_COLORS if self.colors is not None else 0))

    # ------------------------------------------------------------------ selection
    def subset(self, indices) -> Hair:
        """A new Hair of the strands ``indices`` (in that order)."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        for i in idx:
            self._bounds(int(i))
        if self.n_strands:
            idx = idx % self.n_strands
        counts = self.vertex_counts[idx]
        rows = (np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx])
                if len(idx) else np.zeros(0, dtype=np.int64))
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

        def pick(a):
            return None if a is None else a[rows]

        return Hair(self.points[rows], offsets, pick(self.thickness), pick(self.transparency),
                    pick(self.colors), info=self.info, default_thickness=self.default_thickness,
                    default_transparency=self.default_transparency,
                    default_color=self.default_color)

    def drop_short(self, min_vertices: int = 3) -> tuple[Hair, np.ndarray]:
        """The strands with at least ``min_vertices`` points, and their indices here [k]."""
        keep = np.nonzero(self.vertex_counts >= int(min_vertices))[0]
        return self.subset(keep), keep

    # ------------------------------------------------------------------ simulation
    def add_to(self, builder: SceneBuilder, *, material: Material, clamp_roots: bool = True,
               use_thickness: bool = True, skip_short: bool = False,
               min_vertices: int = 3) -> np.ndarray:
        """Add every strand to ``builder`` (:meth:`SceneBuilder.add_strand`, named
        ``"hair <i>"`` after its index ``i`` here) with ``material``.

        ``clamp_roots``: each root (first point) is clamped to a fixed frame at its position
        (position and the first edge's orientation held).  ``use_thickness``: per-vertex section
        radius ``thickness / 2`` (the per-point array, else ``default_thickness`` when it is
        positive, else the material's radius); otherwise the material's radius.  Strands of
        fewer than ``min_vertices`` points (at least 2; 3 by default: one bending stencil) are
        refused (``ValueError`` naming the first and their number) unless ``skip_short``, which
        leaves them out.  Coincident consecutive points and zero thickness are refused, naming
        strand and vertex.  Returns int64 [S]: the builder's strand handle of each strand, -1
        for a skipped one.
        """
        from ..sim.material import Material as _Material

        if not isinstance(material, _Material):
            raise TypeError(f"hair: material must be a strandlab Material, got "
                            f"{type(material).__name__}")
        min_vertices = int(min_vertices)
        if min_vertices < 2:
            raise ValueError(f"hair: min_vertices must be >= 2, got {min_vertices}")
        short = self.short_strands(min_vertices)
        if len(short) and not skip_short:
            i = int(short[0])
            raise ValueError(
                f"hair: strand {i} has {int(self.vertex_counts[i])} point(s); simulation needs "
                f"at least {min_vertices} ({len(short)} strand(s) are this short; pass "
                "skip_short=True to leave them out, or drop them with Hair.drop_short)")
        zero = self.zero_length_edges()
        if skip_short:
            zero = zero[~np.isin(zero[:, 0], short)]
        if len(zero):
            s, v = (int(x) for x in zero[0])
            raise ValueError(f"hair: strand {s}: vertices {v} and {v + 1} coincide (zero-length "
                             f"edge {v}; {len(zero)} such edge(s) in all)")
        radius = self._radii() if use_thickness else None
        if radius is not None:
            bad = np.nonzero(~(radius > 0))[0]
            if len(bad):
                k = int(bad[0])
                s = int(np.searchsorted(self.offsets, k, side="right") - 1)
                raise ValueError(f"hair: strand {s}, vertex {k - int(self.offsets[s])}: "
                                 "thickness 0 gives no section radius; pass "
                                 "use_thickness=False to use the material's radius")
        handles = np.full(self.n_strands, -1, dtype=np.int64)
        skip = set(short.tolist())
        for i in range(self.n_strands):
            if i in skip:
                continue
            a, b = int(self.offsets[i]), int(self.offsets[i + 1])
            h = builder.add_strand(self.points[a:b], material=material,
                                   radius=None if radius is None else radius[a:b],
                                   name=f"hair {i}")
            if clamp_roots:
                builder.attach_to_frame(h, builder.add_frame(self.points[a]), end=0)
            handles[i] = h
        return handles

    def to_scene(self, *, material: Material, gravity=(0.0, 0.0, -9.81),
                 clamp_roots: bool = True, use_thickness: bool = True, skip_short: bool = False,
                 min_vertices: int = 3) -> Scene:
        """A :class:`~strandlab.sim.scene.Scene` of these strands under ``gravity`` [m/s^2];
        the options are those of :meth:`add_to`."""
        from ..sim.builder import SceneBuilder as _Builder

        b = _Builder(gravity=gravity)
        self.add_to(b, material=material, clamp_roots=clamp_roots, use_thickness=use_thickness,
                    skip_short=skip_short, min_vertices=min_vertices)
        return b.build()

    # ------------------------------------------------------------------ helpers
    def _radii(self) -> np.ndarray | None:
        if self.thickness is not None:
            return 0.5 * self.thickness
        if self.default_thickness > 0:
            return np.full(self.n_points, 0.5 * self.default_thickness)
        return None

    def _bounds(self, i) -> tuple[int, int]:
        if not isinstance(i, (int, np.integer)) or not -self.n_strands <= i < self.n_strands:
            raise IndexError(f"hair: strand {i} does not exist ({self.n_strands} strands)")
        i = int(i) % self.n_strands
        return int(self.offsets[i]), int(self.offsets[i + 1])


#: Another name of :class:`Hair`.
HairStyle = Hair


# ---------------------------------------------------------------------------------- checks
def _locate(offsets: np.ndarray, k: int) -> str:
    s = int(np.searchsorted(offsets, k, side="right") - 1)
    return f"strand {s}, vertex {k - int(offsets[s])}"


def _check_layout(label: str, points, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Validated copies: points float64 [P, 3] (finite), offsets int64 [S + 1]."""
    try:
        pts = np.array(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{label}: points are not a numeric array ({exc})") from None
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise ValueError(f"{label}: points must have shape [P, 3], got {pts.shape}")
    off = np.array(offsets)
    if off.ndim != 1 or len(off) < 1 or not np.issubdtype(off.dtype, np.integer):
        raise ValueError(f"{label}: offsets must be a 1-D integer array [S + 1], got "
                         f"{off.dtype} {off.shape}")
    off = off.astype(np.int64)
    if off[0] != 0 or off[-1] != len(pts):
        raise ValueError(f"{label}: offsets must start at 0 and end at the number of points "
                         f"({len(pts)}), got {int(off[0])} .. {int(off[-1])}")
    empty = np.nonzero(np.diff(off) < 1)[0]
    if len(empty):
        raise ValueError(f"{label}: strand {int(empty[0])} has "
                         f"{int(off[empty[0] + 1] - off[empty[0]])} points (at least 1 needed)")
    bad = np.nonzero(~np.all(np.isfinite(pts), axis=1))[0]
    if len(bad):
        k = int(bad[0])
        raise ValueError(f"{label}: {_locate(off, k)}: point is not finite "
                         f"({pts[k].tolist()})")
    return pts, off


def _per_point(label, name, arr, n, tail, offsets, *, nonnegative=False):
    if arr is None:
        return None
    a = np.array(arr, dtype=np.float64)
    if a.shape != (n, *tail):
        raise ValueError(f"{label}: {name} must have shape {(n, *tail)}, got {a.shape}")
    flat = a.reshape(n, -1)
    bad = np.nonzero(~np.all(np.isfinite(flat), axis=1))[0]
    if len(bad):
        k = int(bad[0])
        raise ValueError(f"{label}: {_locate(offsets, k)}: {name} is not finite "
                         f"({a[k].tolist()})")
    if nonnegative:
        neg = np.nonzero(np.any(flat < 0, axis=1))[0]
        if len(neg):
            k = int(neg[0])
            raise ValueError(f"{label}: {_locate(offsets, k)}: {name} is negative "
                             f"({a[k].tolist()})")
    return a


def _check_coincident(label: str, pts: np.ndarray, off: np.ndarray) -> None:
    zero = Hair(pts, off).zero_length_edges() if len(pts) else np.zeros((0, 2), np.int64)
    if len(zero):
        s, v = (int(x) for x in zero[0])
        raise ValueError(f"{label}: strand {s}: vertices {v} and {v + 1} coincide "
                         f"({len(zero)} zero-length edge(s) in all; read with "
                         "allow_coincident=True to load them anyway)")


def _check_scale(scale) -> float:
    try:
        s = float(scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a positive number (metres per file unit), got "
                         f"{scale!r}") from None
    if not math.isfinite(s) or s <= 0:
        raise ValueError(f"scale must be a positive number (metres per file unit), got {s!r}")
    return s


def hair_format(path, format: str | None = None) -> str:
    """``"hair"`` or ``"data"``: ``format`` when given, else by the suffix of ``path``."""
    if format is not None:
        f = str(format).lower().lstrip(".")
        if f not in HAIR_FORMATS.values():
            raise ValueError(f"unknown hair format {format!r}; known: "
                             f"{', '.join(sorted(HAIR_FORMATS.values()))}")
        return f
    suffix = Path(path).suffix.lower()
    try:
        return HAIR_FORMATS[suffix]
    except KeyError:
        raise ValueError(f"{path}: unknown hair file suffix {suffix or '(none)'!r}; use "
                         f"{' or '.join(HAIR_FORMATS)}, or name the format") from None


# ---------------------------------------------------------------------------------- reading
def read_hair(path, *, scale: float = 1.0, format: str | None = None,
              allow_coincident: bool = False) -> Hair:
    """Read a ``.hair`` or ``.data`` file (by suffix, or ``format="hair"|"data"``).

    ``scale``: metres per file unit (``0.01`` for centimetres); points and thickness are
    multiplied by it.  Non-finite values and coincident consecutive points are refused
    (``ValueError`` naming file, strand and vertex); ``allow_coincident=True`` reads the latter
    anyway (to inspect or render a file).  Strands of one point are read (see the module
    documentation).  ``OSError`` when the file cannot be read.
    """
    s = _check_scale(scale)
    fmt = hair_format(path, format)
    data = Path(path).read_bytes()
    label = str(path)
    if fmt == "hair":
        hair = _parse_hair(label, data)
    else:
        hair = _parse_data(label, data)
    if not allow_coincident:
        _check_coincident(label, hair.points, hair.offsets)
    if s != 1.0:
        hair.points *= s
        if hair.thickness is not None:
            hair.thickness *= s
        hair.default_thickness *= s
    return hair


def read_hair_header(path) -> dict:
    """The header of a ``.hair`` file, as stored (file units, no scale): ``n_strands``,
    ``n_points``, ``flags``, ``default_segments``, ``default_thickness``,
    ``default_transparency``, ``default_color`` (3 floats) and ``info`` (text).  Reads 128
    bytes; ``ValueError`` for a short header or a wrong magic."""
    with open(path, "rb") as f:
        return _unpack_header(str(path), f.read(_HEADER_BYTES))


def _unpack_header(label: str, data: bytes) -> dict:
    if len(data) < _HEADER_BYTES:
        raise ValueError(f"{label}: truncated: the header needs {_HEADER_BYTES} bytes, found "
                         f"{len(data)}")
    (magic, n_strands, n_points, flags, dseg, dthick, dtrans, r, g, b,
     info) = _HEADER.unpack_from(data, 0)
    if magic != _MAGIC:
        raise ValueError(f"{label}: not a .hair file: the first 4 bytes are {magic!r}, "
                         f"expected {_MAGIC!r}")
    return {"n_strands": n_strands, "n_points": n_points, "flags": flags,
            "default_segments": dseg, "default_thickness": dthick,
            "default_transparency": dtrans, "default_color": (r, g, b),
            "info": info.split(b"\0", 1)[0].decode("utf-8", errors="replace")}


class _Cursor:
    """Reads the arrays of a file in order, reporting short data by item."""

    def __init__(self, label: str, data: bytes, pos: int):
        self.label, self.data, self.pos = label, data, pos

    def take(self, what: str, dtype: str, count: int, shape: tuple) -> np.ndarray:
        need = int(count) * np.dtype(dtype).itemsize
        have = len(self.data) - self.pos
        if have < need:
            raise ValueError(f"{self.label}: truncated: the {what} needs {need} bytes at offset "
                             f"{self.pos}, found {max(have, 0)}")
        a = np.frombuffer(self.data, dtype=dtype, count=int(count), offset=self.pos)
        self.pos += need
        return a.reshape(shape)

    def finish(self) -> None:
        extra = len(self.data) - self.pos
        if extra:
            raise ValueError(f"{self.label}: {extra} unexpected byte(s) after the data (expected "
                             f"{self.pos} bytes in all, found {len(self.data)})")


def _parse_hair(label: str, data: bytes) -> Hair:
    hd = _unpack_header(label, data)
    n_strands, n_points, flags = hd["n_strands"], hd["n_points"], hd["flags"]
    dseg, dthick, dtrans = hd["default_segments"], hd["default_thickness"], \
        hd["default_transparency"]
    if flags & ~_ALL_FLAGS:
        raise ValueError(f"{label}: flags {flags:#x} have unknown bit(s) {flags & ~_ALL_FLAGS:#x}"
                         f" (known: 1 segments, 2 points, 4 thickness, 8 transparency, "
                         "16 colours)")
    if not flags & FLAG_POINTS:
        raise ValueError(f"{label}: flags {flags:#x} say the file has no points array "
                         "(flag 2); strandlab needs the points")
    cur = _Cursor(label, data, _HEADER_BYTES)
    if flags & FLAG_SEGMENTS:
        seg = cur.take(f"segments array ({n_strands} strands x 2)", "<u2", n_strands,
                       (n_strands,)).astype(np.int64)
        where = "the segments array gives"
        total = int(np.sum(seg + 1))
    else:
        seg = None  # allocated once the counts are known to agree with the file
        where = f"{n_strands} strands of the default {dseg} segments give"
        total = n_strands * (dseg + 1)
    if total != n_points:
        raise ValueError(f"{label}: the counts disagree: {where} {total} points (segments + 1 "
                         f"per strand), the header says {n_points}")
    pts = cur.take(f"points array ({n_points} points x 12)", "<f4", 3 * n_points,
                   (n_points, 3))
    arrays = {}
    for flag, name, width in ((FLAG_THICKNESS, "thickness", 1),
                              (FLAG_TRANSPARENCY, "transparency", 1),
                              (FLAG_COLORS, "colors", 3)):
        if flags & flag:
            shape = (n_points,) if width == 1 else (n_points, 3)
            arrays[name] = cur.take(f"{name} array ({n_points} points x {4 * width})", "<f4",
                                    width * n_points, shape)
    cur.finish()
    if seg is None:
        seg = np.full(n_strands, dseg, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(seg + 1)]).astype(np.int64)
    pts64, offsets = _check_layout(label, pts, offsets)
    extra = {name: _per_point(label, name, a, n_points, a.shape[1:], offsets,
                              nonnegative=name == "thickness") for name, a in arrays.items()}
    for name, v in (("default thickness", dthick), ("default transparency", dtrans)):
        if not math.isfinite(v) or (name == "default thickness" and v < 0):
            raise ValueError(f"{label}: header: {name} is {v!r}")
    if not all(math.isfinite(c) for c in hd["default_color"]):
        raise ValueError(f"{label}: header: default colour is {hd['default_color']!r}")
    return Hair(pts64, offsets, info=hd["info"], default_thickness=float(dthick),
                default_transparency=float(dtrans), default_color=hd["default_color"], **extra)


def _parse_data(label: str, data: bytes) -> Hair:
    if len(data) < 4:
        raise ValueError(f"{label}: truncated: the strand count needs 4 bytes, found "
                         f"{len(data)}")
    (n_strands,) = struct.unpack_from("<i", data, 0)
    if n_strands < 0:
        raise ValueError(f"{label}: the strand count is negative ({n_strands})")
    pos = 4
    starts, counts = [], []
    for i in range(n_strands):
        if len(data) - pos < 4:
            raise ValueError(f"{label}: truncated: strand {i} of {n_strands}: its vertex count "
                             f"needs 4 bytes at offset {pos}, found {len(data) - pos}")
        (n,) = struct.unpack_from("<i", data, pos)
        if n < 1:
            raise ValueError(f"{label}: strand {i}: vertex count {n} at offset {pos} (at least "
                             "1 expected)")
        pos += 4
        need = 12 * n
        if len(data) - pos < need:
            raise ValueError(f"{label}: truncated: strand {i} of {n_strands}: its {n} vertices "
                             f"need {need} bytes at offset {pos}, found {len(data) - pos}")
        starts.append(pos)
        counts.append(n)
        pos += need
    if pos != len(data):
        raise ValueError(f"{label}: {len(data) - pos} unexpected byte(s) after the data "
                         f"(expected {pos} bytes in all for {n_strands} strands, found "
                         f"{len(data)})")
    counts_a = np.array(counts, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts_a)]).astype(np.int64)
    pts = np.empty((int(offsets[-1]), 3), dtype=np.float64)
    for i, (p0, n) in enumerate(zip(starts, counts)):
        pts[offsets[i]:offsets[i + 1]] = np.frombuffer(data, "<f4", 3 * n, p0).reshape(n, 3)
    pts, offsets = _check_layout(label, pts, offsets)
    return Hair(pts, offsets)


# ---------------------------------------------------------------------------------- writing
def write_hair(path, hair: Hair, *, scale: float = 1.0, format: str | None = None,
               segments_array: bool | None = None) -> Path:
    """Write ``hair`` to ``path`` as ``.hair`` or ``.data`` (by suffix, or ``format=``).

    ``scale``: metres per file unit; points and thickness are divided by it.  ``.hair``: the
    thickness, transparency and colour arrays are written when the hair has them (their flags
    set); ``segments_array`` None writes the segments array only when the strands differ in
    length (else the header's default segment count says it), True always, False never (an
    error when they differ).  ``.data`` holds points only: the other arrays are not written.
    Values are stored as float32.  Strands of more than 65535 segments (``.hair``) and
    ``info`` longer than 88 bytes are refused before anything is written.  The file is written
    to a temporary file beside ``path`` and renamed over it when complete.  Returns ``path``.
    """
    if not isinstance(hair, Hair):
        raise TypeError(f"{path}: expected a Hair, got {type(hair).__name__}")
    s = _check_scale(scale)
    fmt = hair_format(path, format)
    label = str(path)
    chunks = (_hair_chunks(label, hair, s, segments_array) if fmt == "hair"
              else _data_chunks(label, hair, s))
    return write_bytes_atomic(Path(path), chunks)


def _f32(label: str, name: str, a) -> np.ndarray:
    """``a`` as little-endian float32; ValueError naming ``name`` and the first value that
    float32 cannot hold (too large in file units: a scale too small?)."""
    a = np.asarray(a, dtype=np.float64)
    big = np.nonzero(np.abs(a.ravel()) > _F32_MAX)[0]
    if len(big):
        raise ValueError(f"{label}: {name} {a.ravel()[big[0]]:.6g} (in file units) is too "
                         f"large for the file's float32 (at most {_F32_MAX:.6g}; scale too "
                         "small?)")
    return a.astype("<f4")


def _hair_chunks(label, hair, scale, segments_array) -> list[bytes]:
    seg = hair.vertex_counts - 1
    uniform = hair.n_strands > 0 and bool(np.all(seg == seg[0]))
    if segments_array is None:
        segments_array = not uniform
    if not segments_array and not uniform and hair.n_strands:
        raise ValueError(f"{label}: segments_array=False needs strands of equal length; they "
                         f"have {int(seg.min()) + 1} to {int(seg.max()) + 1} points")
    big = np.nonzero(seg > _MAX_SEGMENTS)[0]
    if len(big):
        raise ValueError(f"{label}: strand {int(big[0])} has {int(seg[big[0]])} segments; the "
                         f".hair format holds at most {_MAX_SEGMENTS} per strand")
    if hair.n_strands > _MAX_COUNT or hair.n_points > _MAX_COUNT:
        raise ValueError(f"{label}: {hair.n_strands} strands, {hair.n_points} points: more than "
                         "the .hair format's 32-bit counts hold")
    info = hair.info.encode("utf-8")
    if len(info) > _INFO_BYTES:
        raise ValueError(f"{label}: info is {len(info)} bytes in UTF-8; the .hair header holds "
                         f"{_INFO_BYTES}")
    flags = hair.flags() | (FLAG_SEGMENTS if segments_array else 0)
    dseg = int(seg[0]) if uniform else 0
    floats = [float(_f32(label, "default thickness", hair.default_thickness / scale)),
              float(_f32(label, "default transparency", hair.default_transparency)),
              *(float(c) for c in _f32(label, "default colour", hair.default_color))]
    header = _HEADER.pack(_MAGIC, hair.n_strands, hair.n_points, flags, dseg, *floats, info)
    chunks = [header]
    if segments_array:
        chunks.append(seg.astype("<u2").tobytes())
    chunks.append(_f32(label, "points", hair.points / scale).tobytes())
    if hair.thickness is not None:
        chunks.append(_f32(label, "thickness", hair.thickness / scale).tobytes())
    if hair.transparency is not None:
        chunks.append(_f32(label, "transparency", hair.transparency).tobytes())
    if hair.colors is not None:
        chunks.append(_f32(label, "colors", hair.colors).tobytes())
    return chunks


def _data_chunks(label, hair, scale) -> Iterator[bytes]:
    if hair.n_strands > _MAX_DATA or np.any(hair.vertex_counts > _MAX_DATA):
        raise ValueError(f"{label}: more strands or vertices than the .data format's int32 "
                         "counts hold")
    pts = _f32(label, "points", hair.points / scale)

    def gen():
        yield struct.pack("<i", hair.n_strands)
        for i in range(hair.n_strands):
            a, b = int(hair.offsets[i]), int(hair.offsets[i + 1])
            yield struct.pack("<i", b - a) + pts[a:b].tobytes()

    return gen()
