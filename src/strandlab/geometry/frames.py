"""Material frames of three points and their derivatives.

A frame is built from three points ``(p0, p1, p2)``:

- ``a = (p1 - p0) / |p1 - p0|`` (the edge tangent),
- ``b = (p1 - p0) x (p2 - p0)``, normalised,
- ``c = b x a``.

For a rod edge with end points ``p0, p1`` and ghost point ``p2`` this is eq. (3) of
Umetani et al. 2014 with ``d1 = c``, ``d2 = b``, ``d3 = a``: the columns of the frame matrix
``D = [d1, d2, d3]`` are ``[c, b, a]``. ``d1`` points from the edge towards the ghost point.
Triangle frames (eq. 25) and rigid-body frames (eq. 26) use the same three vectors with the
columns permuted; every constraint in this package stores a constant rotation between two frames,
so one construction serves all of them.

The kernels write into caller-owned scratch arrays and never allocate.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "frame_from_points",
    "frame_jacobians",
    "frame_of",
    "frame_jacobians_of",
]


@njit(cache=True, fastmath=False, error_model="numpy")
def frame_from_points(x, i0, i1, i2, d_out):
    """Frame of points ``x[i0], x[i1], x[i2]`` into ``d_out`` [3, 3] (columns d1, d2, d3).

    Returns ``(edge_length, cross_norm)``; ``cross_norm`` is ``|(p1 - p0) x (p2 - p0)|``.
    A zero return value means the frame is degenerate (coincident or collinear points) and
    ``d_out`` is left unchanged.
    """
    ex = x[i1, 0] - x[i0, 0]
    ey = x[i1, 1] - x[i0, 1]
    ez = x[i1, 2] - x[i0, 2]
    le = math.sqrt(ex * ex + ey * ey + ez * ez)
    gx = x[i2, 0] - x[i0, 0]
    gy = x[i2, 1] - x[i0, 1]
    gz = x[i2, 2] - x[i0, 2]
    ux = ey * gz - ez * gy
    uy = ez * gx - ex * gz
    uz = ex * gy - ey * gx
    lu = math.sqrt(ux * ux + uy * uy + uz * uz)
    if le <= 0.0 or lu <= 0.0:
        return 0.0, 0.0
    ax = ex / le
    ay = ey / le
    az = ez / le
    bx = ux / lu
    by = uy / lu
    bz = uz / lu
    # c = b x a
    d_out[0, 0] = by * az - bz * ay
    d_out[1, 0] = bz * ax - bx * az
    d_out[2, 0] = bx * ay - by * ax
    d_out[0, 1] = bx
    d_out[1, 1] = by
    d_out[2, 1] = bz
    d_out[0, 2] = ax
    d_out[1, 2] = ay
    d_out[2, 2] = az
    return le, lu


@njit(cache=True, fastmath=False)
def frame_jacobians(x, i0, i1, i2, d, le, lu, jac_out):
    """Jacobians of the frame columns with respect to the three points.

    ``d`` is the frame from :func:`frame_from_points` with its ``le`` and ``lu``.
    Writes ``jac_out[k, m, r, s] = d d_m[r] / d p_k[s]`` for point ``k`` in 0..2 and column
    ``m`` in 0..2 (d1, d2, d3), shape [3, 3, 3, 3].
    """
    p0x = x[i0, 0]
    p0y = x[i0, 1]
    p0z = x[i0, 2]
    p1x = x[i1, 0]
    p1y = x[i1, 1]
    p1z = x[i1, 2]
    p2x = x[i2, 0]
    p2y = x[i2, 1]
    p2z = x[i2, 2]
    ax = d[0, 2]
    ay = d[1, 2]
    az = d[2, 2]
    bx = d[0, 1]
    by = d[1, 1]
    bz = d[2, 1]
    for k in range(3):
        # du/dp_k = [w] (cross-product matrix of w)
        if k == 0:
            wx = p2x - p1x
            wy = p2y - p1y
            wz = p2z - p1z
            sa = -1.0
        elif k == 1:
            wx = p0x - p2x
            wy = p0y - p2y
            wz = p0z - p2z
            sa = 1.0
        else:
            wx = p1x - p0x
            wy = p1y - p0y
            wz = p1z - p0z
            sa = 0.0
        for s in range(3):
            # column s of [w]: w x e_s
            if s == 0:
                cx, cy, cz = 0.0, wz, -wy
            elif s == 1:
                cx, cy, cz = -wz, 0.0, wx
            else:
                cx, cy, cz = wy, -wx, 0.0
            # db = (I - b b^T) du / lu
            bd = bx * cx + by * cy + bz * cz
            dbx = (cx - bx * bd) / lu
            dby = (cy - by * bd) / lu
            dbz = (cz - bz * bd) / lu
            # da = sa (I - a a^T) e_s / le
            if s == 0:
                ex_, ey_, ez_ = 1.0, 0.0, 0.0
            elif s == 1:
                ex_, ey_, ez_ = 0.0, 1.0, 0.0
            else:
                ex_, ey_, ez_ = 0.0, 0.0, 1.0
            ad = ax * ex_ + ay * ey_ + az * ez_
            dax = sa * (ex_ - ax * ad) / le
            day = sa * (ey_ - ay * ad) / le
            daz = sa * (ez_ - az * ad) / le
            # dc = d(b x a) = db x a + b x da
            dcx = (dby * az - dbz * ay) + (by * daz - bz * day)
            dcy = (dbz * ax - dbx * az) + (bz * dax - bx * daz)
            dcz = (dbx * ay - dby * ax) + (bx * day - by * dax)
            jac_out[k, 0, 0, s] = dcx
            jac_out[k, 0, 1, s] = dcy
            jac_out[k, 0, 2, s] = dcz
            jac_out[k, 1, 0, s] = dbx
            jac_out[k, 1, 1, s] = dby
            jac_out[k, 1, 2, s] = dbz
            jac_out[k, 2, 0, s] = dax
            jac_out[k, 2, 1, s] = day
            jac_out[k, 2, 2, s] = daz


def frame_of(p0, p1, p2) -> np.ndarray:
    """Frame ``[d1, d2, d3]`` (shape [3, 3], columns) of three points; Python convenience.

    Raises ``ValueError`` for coincident or collinear points.
    """
    x = np.ascontiguousarray(np.array([p0, p1, p2], dtype=np.float64))
    d = np.zeros((3, 3))
    le, lu = frame_from_points(x, 0, 1, 2, d)
    if le == 0.0 or lu == 0.0:
        raise ValueError("frame of coincident or collinear points is undefined")
    return d


def frame_jacobians_of(p0, p1, p2) -> np.ndarray:
    """Jacobians ``J[k, m, r, s] = d d_m[r] / d p_k[s]`` of :func:`frame_of`, shape [3, 3, 3, 3]."""
    x = np.ascontiguousarray(np.array([p0, p1, p2], dtype=np.float64))
    d = np.zeros((3, 3))
    le, lu = frame_from_points(x, 0, 1, 2, d)
    if le == 0.0 or lu == 0.0:
        raise ValueError("frame of coincident or collinear points is undefined")
    jac = np.zeros((3, 3, 3, 3))
    frame_jacobians(x, 0, 1, 2, d, le, lu, jac)
    return jac
