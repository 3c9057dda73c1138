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

#: LLVM fast-math flags of the hot kernels: fused multiply-adds (``contract``), division by a
#: repeated divisor as one reciprocal (``arcp``) and no signed zeros (``nsz``).  NaN and inf
#: keep their IEEE meaning (no ``nnan`` / ``ninf``): a diverging step still produces NaN and is
#: caught.  Results differ from strict evaluation by rounding only.
FASTMATH = {"contract", "arcp", "nsz"}

__all__ = [
    "FASTMATH",
    "frame_from_points",
    "frame_rotation",
    "frame_rotations",
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


@njit(cache=True, error_model="numpy", fastmath=FASTMATH, inline="always")
def frame_rotation(x, i0, i1, i2):
    """Frame of points ``x[i0], x[i1], x[i2]`` (as :func:`frame_from_points`) and how it turns
    when the points move, without allocation: a tuple of 12 scalars
    ``(d1x, d1y, d1z, d2x, d2y, d2z, d3x, d3y, d3z, il, c, ih)``.

    Any change of an orthonormal frame is an infinitesimal rotation ``dtheta``; here
    ``dtheta = d3 x de / le + d3 ((dr . d2) / h - c (de . d2))`` for ``e = p1 - p0``,
    ``r = p2 - p0``, ``le = |e|``, ``h = r . d1 = |e x r| / le`` (the third point's distance from
    the edge line), ``il = 1 / le`` [1/m], ``ih = 1 / h`` [1/m] and ``c = (r . e) / (le |e x r|)``
    [1/m].  In frame coordinates the rotation of each point's move is therefore
    ``p1: (-il de2, il de1, -c de2)``, ``p2: (0, 0, ih dr2)``, ``p0: minus their sum``
    (``de1 = de . d1`` etc.).  ``il = 0`` (and every other value 0) for a degenerate frame.
    """
    ex = x[i1, 0] - x[i0, 0]
    ey = x[i1, 1] - x[i0, 1]
    ez = x[i1, 2] - x[i0, 2]
    rx = x[i2, 0] - x[i0, 0]
    ry = x[i2, 1] - x[i0, 1]
    rz = x[i2, 2] - x[i0, 2]
    ux = ey * rz - ez * ry
    uy = ez * rx - ex * rz
    uz = ex * ry - ey * rx
    le = math.sqrt(ex * ex + ey * ey + ez * ez)
    lu = math.sqrt(ux * ux + uy * uy + uz * uz)
    if le <= 0.0 or lu <= 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    il = 1.0 / le
    iu = 1.0 / lu
    ax = ex * il
    ay = ey * il
    az = ez * il
    bx = ux * iu
    by = uy * iu
    bz = uz * iu
    c = (rx * ex + ry * ey + rz * ez) * il * iu
    return (by * az - bz * ay, bz * ax - bx * az, bx * ay - by * ax, bx, by, bz, ax, ay, az,
            il, c, le * iu)


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


def frame_rotations(p0, p1, p2):
    """:func:`frame_rotation` of many point triples at once, in NumPy (for set-up code, which
    then needs no compilation): ``p0``, ``p1``, ``p2`` [n, 3].

    Returns ``(d, il, c, ih)``: frames [n, 3, 3] (columns d1, d2, d3) and the factors [n] of
    :func:`frame_rotation`; a degenerate frame has ``il = 0`` (and its other values 0).
    """
    e = np.asarray(p1, dtype=np.float64) - p0
    r = np.asarray(p2, dtype=np.float64) - p0
    u = np.cross(e, r)
    le = np.linalg.norm(e, axis=-1)
    lu = np.linalg.norm(u, axis=-1)
    ok = (le > 0.0) & (lu > 0.0)
    le1 = np.where(ok, le, 1.0)
    lu1 = np.where(ok, lu, 1.0)
    d3 = e / le1[:, None]
    d2 = u / lu1[:, None]
    d = np.where(ok[:, None, None], np.stack([np.cross(d2, d3), d2, d3], axis=-1), 0.0)
    c = np.einsum("ij,ij->i", r, e) / (le1 * lu1)
    return d, np.where(ok, 1.0 / le1, 0.0), np.where(ok, c, 0.0), np.where(ok, le1 / lu1, 0.0)


def frame_of(p0, p1, p2) -> np.ndarray:
    """Frame ``[d1, d2, d3]`` (shape [3, 3], columns) of three points; Python convenience.

    Raises ``ValueError`` for coincident or collinear points.
    """
    x = np.array([p0, p1, p2], dtype=np.float64).reshape(3, 1, 3)
    d, il, _, _ = frame_rotations(x[0], x[1], x[2])
    if il[0] == 0.0:
        raise ValueError("frame of coincident or collinear points is undefined")
    return d[0]


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
