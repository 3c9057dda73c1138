"""Writhe of polylines from the discrete Gauss double integral.

The writhe of a curve is the Gauss double integral

    Wr = 1 / (4 pi) * integral integral (t1 x t2) . (r1 - r2) / |r1 - r2|^3 ds1 ds2.

For a polyline the integral over one pair of straight segments ``i`` (``p1 -> p2``) and ``j``
(``p3 -> p4``) is exactly the signed solid angle ``Omega_ij`` swept by the unit vector from a
point of segment ``i`` to a point of segment ``j`` (Klenin & Langowski 2000, Biopolymers 54,
eqs. 13-16; Levitt 1983).  That region of the unit sphere is the spherical quadrilateral with
the corners ``r13, r23, r24, r14`` (``rab = pb - pa``), and

    Wr = 1 / (4 pi) * sum_{i != j} Omega_ij = 1 / (2 pi) * sum_{i < j} Omega_ij.

Klenin & Langowski write ``|Omega_ij|`` as a sum of four arcsines of dot products of the
quadrilateral's face normals and take the sign from ``(r34 x r12) . r13``.  This module
evaluates the same solid angle as the sum of the two signed triangle solid angles
``(r13, r23, r24)`` and ``(r13, r24, r14)`` with the Van Oosterom & Strackee (1983) formula

    tan(Omega / 2) = a . (b x c) / (|a||b||c| + (a.b)|c| + (a.c)|b| + (b.c)|a|),

which gives the sign directly and stays accurate to rounding when the two segments are nearly
coplanar or when three of the four end points are collinear (where the face normals of the
arcsine form are undefined).  Adjacent segments (sharing a vertex) contribute nothing.  The
result is invariant to rotation, translation and uniform scaling and changes sign under a
mirror reflection.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["writhe", "writhe_segments", "segment_pair_solid_angle"]


# ---------------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _triangle_solid_angle(ax, ay, az, bx, by, bz, cx, cy, cz):
    """Signed solid angle [sr] of the spherical triangle spanned by directions a, b, c.

    Van Oosterom & Strackee (1983); positive when ``a . (b x c) > 0``.  Zero for a degenerate
    (coplanar or repeated) triangle.
    """
    la = math.sqrt(ax * ax + ay * ay + az * az)
    lb = math.sqrt(bx * bx + by * by + bz * bz)
    lc = math.sqrt(cx * cx + cy * cy + cz * cz)
    num = (ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx))
    ab = ax * bx + ay * by + az * bz
    ac = ax * cx + ay * cy + az * cz
    bc = bx * cx + by * cy + bz * cz
    den = la * lb * lc + ab * lc + ac * lb + bc * la
    if num == 0.0:
        return 0.0
    return 2.0 * math.atan2(num, den)


@njit(cache=True)
def _pair_omega(x, i1, i2, j1, j2):
    """Signed solid angle [sr] of segment ``x[i1] -> x[i2]`` against ``x[j1] -> x[j2]``."""
    # r13 = p3 - p1, r14 = p4 - p1, r23 = p3 - p2, r24 = p4 - p2
    r13x = x[j1, 0] - x[i1, 0]
    r13y = x[j1, 1] - x[i1, 1]
    r13z = x[j1, 2] - x[i1, 2]
    r14x = x[j2, 0] - x[i1, 0]
    r14y = x[j2, 1] - x[i1, 1]
    r14z = x[j2, 2] - x[i1, 2]
    r23x = x[j1, 0] - x[i2, 0]
    r23y = x[j1, 1] - x[i2, 1]
    r23z = x[j1, 2] - x[i2, 2]
    r24x = x[j2, 0] - x[i2, 0]
    r24y = x[j2, 1] - x[i2, 1]
    r24z = x[j2, 2] - x[i2, 2]
    return (_triangle_solid_angle(r13x, r13y, r13z, r23x, r23y, r23z, r24x, r24y, r24z)
            + _triangle_solid_angle(r13x, r13y, r13z, r24x, r24y, r24z, r14x, r14y, r14z))


@njit(cache=True)
def _writhe_range(x, start, stop, closed):
    """Writhe of the polyline ``x[start:stop]`` (closed: with the edge from last to first)."""
    n = stop - start
    n_seg = n if closed else n - 1
    total = 0.0
    for a in range(n_seg):
        a1 = start + a
        a2 = start + (a + 1) % n
        # segments a + 1 (adjacent) and, on a loop, the segment before a are skipped
        last = n_seg - 1 if (closed and a == 0) else n_seg
        for b in range(a + 2, last):
            b1 = start + b
            b2 = start + (b + 1) % n
            total += _pair_omega(x, a1, a2, b1, b2)
    return total / (2.0 * math.pi)


@njit(cache=True)
def _writhe_all(x, offsets, closed, out):
    """Writhe of every strand ``x[offsets[s]:offsets[s + 1]]`` into ``out[s]``."""
    for s in range(offsets.shape[0] - 1):
        out[s] = _writhe_range(x, offsets[s], offsets[s + 1], closed[s])


# ---------------------------------------------------------------------------------- checks
def _as_points(points, name: str = "points") -> np.ndarray:
    """Finite vertex positions as float64, shape [n, 3] with n >= 2, or ValueError."""
    try:
        arr = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of shape [n, 3] ({exc})") from None
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape [n, 3], got {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 vertices, got {arr.shape[0]}")
    bad = ~np.all(np.isfinite(arr), axis=1)
    if np.any(bad):
        raise ValueError(f"{name} has non-finite coordinates at vertex {int(np.argmax(bad))}")
    return np.ascontiguousarray(arr)


def _as_offsets(offsets, n_points: int) -> np.ndarray:
    """Strand vertex offsets, int64 shape [n_strands + 1], from 0 to ``n_points``."""
    arr = np.asarray(offsets)
    if arr.ndim != 1 or arr.shape[0] < 2:
        raise ValueError(f"offsets must have shape [n_strands + 1] with n_strands >= 1, "
                         f"got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"offsets must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr[0] != 0 or arr[-1] != n_points:
        raise ValueError(f"offsets must start at 0 and end at the number of points "
                         f"({n_points}), got {int(arr[0])} .. {int(arr[-1])}")
    counts = np.diff(arr)
    if np.any(counts < 2):
        s = int(np.argmax(counts < 2))
        raise ValueError(f"strand {s} has {int(counts[s])} vertices; each needs at least 2")
    return arr


def _as_closed(closed_flags, n_strands: int) -> np.ndarray:
    """Closed-loop flags, bool shape [n_strands]."""
    arr = np.asarray(closed_flags)
    if arr.ndim == 0:
        arr = np.full(n_strands, bool(arr))
    if arr.shape != (n_strands,):
        raise ValueError(f"closed_flags must have shape [{n_strands}] (one per strand), "
                         f"got {arr.shape}")
    return arr.astype(np.bool_)


# ---------------------------------------------------------------------------------- public
def writhe(points, *, closed: bool = False) -> float:
    """Writhe (dimensionless) of one polyline.

    ``points``: vertex positions [m] (any length unit), shape [n, 3], n >= 2, finite.
    ``closed``: the polyline is a loop (the segment from the last vertex back to the first is
    included; do not repeat the first vertex).  Exact for the polyline (no quadrature):
    see the module documentation.  Cost O(n^2).
    """
    x = _as_points(points)
    return float(_writhe_range(x, 0, x.shape[0], bool(closed)))


def writhe_segments(points, offsets, closed_flags) -> np.ndarray:
    """Writhe of each of several polylines stored one after another.

    ``points``: vertex positions [m] of all strands concatenated, shape [n, 3];
    ``offsets``: first vertex of each strand and the total, int shape [n_strands + 1]
    (``offsets[0] == 0``, ``offsets[-1] == n``, at least 2 vertices per strand);
    ``closed_flags``: closed-loop flag per strand, bool shape [n_strands] (or one bool for all).
    Returns the writhe of each strand, shape [n_strands].
    """
    x = _as_points(points)
    off = _as_offsets(offsets, x.shape[0])
    cl = _as_closed(closed_flags, off.shape[0] - 1)
    out = np.zeros(off.shape[0] - 1)
    _writhe_all(x, off, cl, out)
    return out


def segment_pair_solid_angle(p1, p2, p3, p4) -> float:
    """Signed solid angle [sr] of segment ``p1 -> p2`` against segment ``p3 -> p4``.

    Equals the Gauss integral ``integral integral (t1 x t2) . (r1 - r2) / |r1 - r2|^3`` over
    the two segments; the writhe of a polyline is the sum of this over ordered pairs of
    non-adjacent segments divided by ``4 pi``.  Each point has shape [3].
    """
    x = _as_points(np.stack([np.asarray(p, dtype=np.float64) for p in (p1, p2, p3, p4)]),
                   "segment end points")
    return float(_pair_omega(x, 0, 1, 2, 3))
