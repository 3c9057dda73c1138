"""Import strand geometry from other tools: OBJ polylines, USD curves, Alembic curves and the
hair formats, as :class:`Strands` (points and offsets) ready for a
:class:`~strandlab.sim.builder.SceneBuilder`.

:func:`read_strands` chooses the reader by the file's suffix:

=========================  =============================================================
suffix                     what is read
=========================  =============================================================
``.obj``                   ``v`` and ``l`` lines: each ``l`` line is a strand (a line that
                           ends on its first vertex is a closed strand)
``.usd .usda .usdc .usdz`` every ``BasisCurves`` prim (:func:`strandlab.io.usd.read_usd_strands`)
``.abc``                   every ``Curves`` object (:func:`strandlab.io.alembic.read_abc_strands`)
``.hair .data``            the hair formats (:func:`strandlab.io.hairfile.read_hair`)
=========================  =============================================================

``scale`` is the length of the file's unit in metres (default 1, or the stage's
``metersPerUnit`` for USD); ``time`` [s] picks the moment of an animated USD or Alembic file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .trajectory import check_offsets

__all__ = ["Strands", "read_strands", "read_obj_strands", "STRAND_SUFFIXES"]

STRAND_SUFFIXES = {".obj": "obj", ".usd": "usd", ".usda": "usd", ".usdc": "usd", ".usdz": "usd",
                   ".abc": "abc", ".hair": "hair", ".data": "hair"}


@dataclass(eq=False)
class Strands:
    """Polylines: ``points`` float64 [P, 3] [m] (all strands concatenated), ``offsets`` int64
    [S + 1] (strand ``i`` owns points ``offsets[i] .. offsets[i+1] - 1``), ``closed`` bool [S],
    ``radius`` float64 [P] [m] (section radius per point) or None when the file has none."""

    points: np.ndarray
    offsets: np.ndarray
    closed: np.ndarray
    radius: np.ndarray | None = None

    def __post_init__(self):
        pts = np.asarray(self.points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise ValueError(f"points must have shape [P, 3], got {pts.shape}")
        if not np.all(np.isfinite(pts)):
            k = int(np.argmax(~np.all(np.isfinite(pts), axis=1)))
            raise ValueError(f"point {k} is not finite ({pts[k].tolist()})")
        self.points = pts
        self.offsets = check_offsets(self.offsets, len(pts), "offsets")
        self.closed = np.asarray(self.closed, dtype=bool).reshape(-1)
        if self.closed.shape != (self.n_strands,):
            raise ValueError(f"closed must have one flag per strand ({self.n_strands}), got "
                             f"{self.closed.shape}")
        if self.radius is not None:
            r = np.asarray(self.radius, dtype=np.float64).reshape(-1)
            if r.shape != (len(pts),) or not np.all(np.isfinite(r) & (r >= 0)):
                raise ValueError(f"radius must be [P] = [{len(pts)}] finite values >= 0")
            self.radius = r

    @property
    def n_strands(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @property
    def n_points(self) -> int:
        return int(self.points.shape[0])

    @property
    def vertex_counts(self) -> np.ndarray:
        """Points per strand, int64 [S]."""
        return np.diff(self.offsets)

    def strand(self, i: int) -> np.ndarray:
        """Points of strand ``i`` [m], [n_i, 3]."""
        if not -self.n_strands <= i < self.n_strands:
            raise IndexError(f"strand {i} does not exist ({self.n_strands} strands)")
        i %= self.n_strands
        return self.points[self.offsets[i]:self.offsets[i + 1]]

    @classmethod
    def from_parts(cls, parts, *, label: str) -> Strands:
        """Concatenate ``(points, counts, closed, widths, order)`` parts (one per curve
        primitive; ``widths`` [n] or None; ``order``: the strandlab strand index of each curve or
        None).  When some parts have an order (a file written by strandlab), only those are
        strands (the others are helpers such as frame axes); when together they number the
        strands 0 .. S-1, the strands come back in that order."""
        if any(p[4] is not None for p in parts):
            parts = [p for p in parts if p[4] is not None]
        pts = np.concatenate([p[0] for p in parts])
        counts = np.concatenate([p[1] for p in parts]).astype(np.int64)
        closed = np.concatenate([np.full(len(p[1]), bool(p[2])) for p in parts])
        radius = None
        if all(p[3] is not None for p in parts):
            radius = 0.5 * np.concatenate([p[3] for p in parts])
        off = np.concatenate([[0], np.cumsum(counts)])
        out = cls(pts, off, closed, radius)
        orders = [p[4] for p in parts]
        if all(o is not None and len(o) == len(p[1]) for o, p in zip(orders, parts)):
            order = np.concatenate(orders)
            if np.array_equal(np.sort(order), np.arange(len(order))):
                return out.subset(np.argsort(order))
        return out

    def subset(self, indices) -> Strands:
        """The strands ``indices`` (in that order)."""
        idx = np.asarray(indices, dtype=np.int64)
        pick = [np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx]
        rows = np.concatenate(pick) if pick else np.zeros(0, np.int64)
        off = np.concatenate([[0], np.cumsum(self.vertex_counts[idx])])
        return Strands(self.points[rows], off, self.closed[idx],
                       None if self.radius is None else self.radius[rows])

    def scaled(self, factor: float) -> Strands:
        """Points and radii multiplied by ``factor`` (> 0)."""
        f = _check_scale(factor)
        return Strands(self.points * f, self.offsets, self.closed,
                       None if self.radius is None else self.radius * f)

    def transformed(self, rotation) -> Strands:
        """Points turned by ``rotation`` [3, 3] (applied to each point as a column vector)."""
        r = np.asarray(rotation, dtype=np.float64)
        return Strands(self.points @ r.T, self.offsets, self.closed, self.radius)

    def add_to(self, builder, *, material, clamp_roots: bool = False,
               use_radius: bool = True, name: str = "strand") -> np.ndarray:
        """Add every strand to ``builder`` (``SceneBuilder.add_strand``, named ``"<name> <i>"``)
        with ``material``; ``use_radius``: the per-point radius when the file gave one;
        ``clamp_roots``: clamp the first point of each open strand to a fixed frame.  The
        builder refuses short strands and coincident points, naming the strand.  Returns the
        builder's handles, int64 [S]."""
        handles = np.zeros(self.n_strands, dtype=np.int64)
        for i in range(self.n_strands):
            a, b = int(self.offsets[i]), int(self.offsets[i + 1])
            rad = self.radius[a:b] if use_radius and self.radius is not None else None
            h = builder.add_strand(self.points[a:b], material=material,
                                   closed=bool(self.closed[i]), radius=rad, name=f"{name} {i}")
            if clamp_roots and not self.closed[i]:
                builder.attach_to_frame(h, builder.add_frame(self.points[a]), end=0)
            handles[i] = h
        return handles


def _check_scale(scale) -> float:
    try:
        f = float(scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a positive number, got {scale!r}") from None
    if not (np.isfinite(f) and f > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    return f


# ---------------------------------------------------------------------------------- OBJ
def _obj_index(token: str, n: int, label: str, line: int) -> int:
    try:
        k = int(token.split("/")[0])
    except ValueError:
        raise ValueError(f"{label}, line {line}: {token!r} is not a vertex index") from None
    i = k - 1 if k > 0 else n + k
    if k == 0 or not 0 <= i < n:
        raise ValueError(f"{label}, line {line}: vertex index {k} refers to no vertex "
                         f"({n} defined so far)")
    return i


def read_obj_strands(path) -> Strands:
    """Strands from the ``l`` (polyline) lines of the OBJ file ``path`` (see the module
    docstring); other statements (faces, normals, groups) are ignored.  ValueError naming the
    file and line for a malformed vertex or index, and for a file with no polyline."""
    p = Path(path)
    label = str(p)
    verts, lines = [], []
    with open(p, encoding="utf-8", errors="replace") as fh:
        for no, raw in enumerate(fh, start=1):
            parts = raw.split()
            if not parts:
                continue
            if parts[0] == "v":
                try:
                    verts.append([float(v) for v in parts[1:4]])
                except ValueError:
                    raise ValueError(f"{label}, line {no}: malformed vertex {raw.strip()!r}") \
                        from None
                if len(verts[-1]) != 3:
                    raise ValueError(f"{label}, line {no}: a vertex needs x y z")
            elif parts[0] == "l":
                idx = [_obj_index(t, len(verts), label, no) for t in parts[1:]]
                if len(idx) < 2:
                    raise ValueError(f"{label}, line {no}: a polyline needs 2 vertices or more")
                lines.append(idx)
    if not lines:
        raise ValueError(f"{label} has no polyline ('l' line): no strands to read")
    v = np.asarray(verts, dtype=np.float64)
    closed = [len(i) >= 4 and i[0] == i[-1] for i in lines]
    rows = [i[:-1] if c else i for i, c in zip(lines, closed)]
    off = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    return Strands(v[np.concatenate(rows)], off, np.array(closed, dtype=bool))


# ---------------------------------------------------------------------------------- dispatch
def read_strands(path, *, scale: float | None = None, time: float | None = None,
                 format: str | None = None) -> Strands:
    """Read the strands of ``path`` (format by suffix, or ``format`` = ``"obj"``, ``"usd"``,
    ``"abc"`` or ``"hair"``), in metres (see the module docstring).  FileNotFoundError for a
    missing file; ValueError naming the file for an unknown format or malformed content."""
    p = Path(path)
    fmt = format or STRAND_SUFFIXES.get(p.suffix.lower())
    if fmt not in set(STRAND_SUFFIXES.values()):
        known = ", ".join(sorted(STRAND_SUFFIXES))
        raise ValueError(f"{p}: unknown strand file format {fmt or p.suffix or '(no suffix)'!r}"
                         f" (known suffixes: {known})")
    if not p.is_file():
        raise FileNotFoundError(f"strand file {p} does not exist")
    if time is not None and fmt not in ("usd", "abc"):
        raise ValueError(f"{p}: time applies to animated USD and Alembic files only")
    if scale is not None:
        _check_scale(scale)
    if fmt == "usd":
        from .usd import read_usd_strands
        return read_usd_strands(p, time=time, scale=scale)
    if fmt == "abc":
        from .alembic import read_abc_strands
        out = read_abc_strands(p, time=time)
    elif fmt == "hair":
        from .hairfile import read_hair
        hair = read_hair(p)
        radius = hair._radii()      # thickness / 2 per point, or the default, or None
        out = Strands(hair.points, hair.offsets, np.zeros(hair.n_strands, bool), radius)
    else:
        out = read_obj_strands(p)
    return out if scale is None else out.scaled(scale)
