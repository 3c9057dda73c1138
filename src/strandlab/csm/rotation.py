"""Scalar rotation helpers of the chain-shape-matching kernels (compiled with Numba).

Everything here works on plain floats and array slots, allocates nothing and is inlined into
the kernels of :mod:`strandlab.csm.kernels` and :mod:`strandlab.csm.twist`:

- :func:`rotation_of_moment`: the rotation of a region's moment matrix
  ``A = sum m (x - c)(x0 - c0)^T`` (3x3, given as nine scalars), found as the rotation ``R``
  that maximises ``trace(R^T A)``.  For ``det A > 0`` that is the rotation of the polar
  decomposition ``A = R S``; for a degenerate ``A`` (a straight region: rank 1; a planar
  one: rank 2) it is still a proper rotation, and it is the one nearest to the previous step's
  (warm start), so a straight region does not spin about its own axis.  The iteration turns a
  quaternion by ``omega = sum_j r_j x a_j / |sum_j r_j . a_j|`` (the columns ``r_j`` of ``R``
  and ``a_j`` of ``A``) until ``|omega|`` is below a tolerance (Mueller, Bender, Chentanez and
  Macklin 2016, "A robust method to extract the rotational part of deformations").
- :func:`quat_rotate`: ``R(q) v``.
- :func:`transport`: a vector carried from one unit tangent to another by the minimal
  rotation (parallel transport).
- :func:`signed_angle`: the angle from one vector to another about an axis [rad];
  :func:`wrap_angle`: an angle brought into [-pi, pi).
"""
from __future__ import annotations

import math

from numba import njit

__all__ = ["rotation_of_moment", "quat_rotate", "transport", "signed_angle", "wrap_angle"]

#: Rotation iterations at most per region and call (a warm start needs one to three).
MAX_ROTATION_ITERATIONS = 30
#: Stop when the rotation update [rad] falls below this.
ROTATION_TOLERANCE = 1e-12

_OPTS = {"cache": True, "inline": "always", "error_model": "numpy"}


@njit(**_OPTS)
def quat_rotate(qw, qx, qy, qz, vx, vy, vz):
    """``R(q) v`` for a unit quaternion ``q = (w, x, y, z)``; returns three floats."""
    # t = 2 q_v x v ; v' = v + w t + q_v x t
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (vx + qw * tx + (qy * tz - qz * ty),
            vy + qw * ty + (qz * tx - qx * tz),
            vz + qw * tz + (qx * ty - qy * tx))


@njit(**_OPTS)
def _column_terms(qw, qx, qy, qz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """``sum_j r_j x a_j`` (three floats) and ``sum_j r_j . a_j`` for the columns ``r_j`` of
    ``R(q)`` and ``a, b, c`` of ``A``."""
    r0x, r0y, r0z = quat_rotate(qw, qx, qy, qz, 1.0, 0.0, 0.0)
    r1x, r1y, r1z = quat_rotate(qw, qx, qy, qz, 0.0, 1.0, 0.0)
    r2x, r2y, r2z = quat_rotate(qw, qx, qy, qz, 0.0, 0.0, 1.0)
    ox = (r0y * az - r0z * ay) + (r1y * bz - r1z * by) + (r2y * cz - r2z * cy)
    oy = (r0z * ax - r0x * az) + (r1z * bx - r1x * bz) + (r2z * cx - r2x * cz)
    oz = (r0x * ay - r0y * ax) + (r1x * by - r1y * bx) + (r2x * cy - r2y * cx)
    d = (r0x * ax + r0y * ay + r0z * az) + (r1x * bx + r1y * by + r1z * bz) \
        + (r2x * cx + r2y * cy + r2z * cz)
    return ox, oy, oz, d


@njit(cache=True, error_model="numpy")
def rotation_of_moment(a00, a01, a02, a10, a11, a12, a20, a21, a22, qw, qx, qy, qz):
    """The rotation of the moment matrix ``A`` (row-major scalars ``aij``), warm-started at the
    unit quaternion ``q``; returns the new unit quaternion ``(w, x, y, z)``.

    ``A`` is scaled to unit Frobenius norm first, so the tolerance is scale-free.  A zero
    matrix returns ``q`` unchanged.
    """
    nrm = math.sqrt(a00 * a00 + a01 * a01 + a02 * a02 + a10 * a10 + a11 * a11 + a12 * a12
                    + a20 * a20 + a21 * a21 + a22 * a22)
    if not nrm > 0.0:
        return qw, qx, qy, qz
    s = 1.0 / nrm
    # columns of A
    ax, ay, az = a00 * s, a10 * s, a20 * s
    bx, by, bz = a01 * s, a11 * s, a21 * s
    cx, cy, cz = a02 * s, a12 * s, a22 * s
    for _ in range(MAX_ROTATION_ITERATIONS):
        ox, oy, oz, d = _column_terms(qw, qx, qy, qz, ax, ay, az, bx, by, bz, cx, cy, cz)
        inv = 1.0 / (abs(d) + 1e-9)
        ox *= inv
        oy *= inv
        oz *= inv
        w = math.sqrt(ox * ox + oy * oy + oz * oz)
        if w < ROTATION_TOLERANCE:
            break
        h = 0.5 * w
        sh = math.sin(h) / w
        dw, dx, dy, dz = math.cos(h), ox * sh, oy * sh, oz * sh
        # q <- dq * q
        nw = dw * qw - dx * qx - dy * qy - dz * qz
        nx = dw * qx + dx * qw + dy * qz - dz * qy
        ny = dw * qy - dx * qz + dy * qw + dz * qx
        nz = dw * qz + dx * qy - dy * qx + dz * qw
        n = 1.0 / math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        qw, qx, qy, qz = nw * n, nx * n, ny * n, nz * n
    return qw, qx, qy, qz


@njit(**_OPTS)
def transport(ux, uy, uz, t0x, t0y, t0z, t1x, t1y, t1z):
    """``u`` carried from unit tangent ``t0`` to unit tangent ``t1`` by the minimal rotation
    (about ``t0 x t1``), then made perpendicular to ``t1`` and unit; returns three floats.

    For ``u`` perpendicular to ``t0``: ``P(u) = u - (u . t1) / (1 + t0 . t1) (t0 + t1)``.
    Tangents that turn back by nearly pi (``1 + t0 . t1 <= 1e-12``) keep ``u`` projected.
    """
    c = 1.0 + t0x * t1x + t0y * t1y + t0z * t1z
    if c > 1e-12:
        f = (ux * t1x + uy * t1y + uz * t1z) / c
        ux -= f * (t0x + t1x)
        uy -= f * (t0y + t1y)
        uz -= f * (t0z + t1z)
    p = ux * t1x + uy * t1y + uz * t1z
    ux -= p * t1x
    uy -= p * t1y
    uz -= p * t1z
    n = math.sqrt(ux * ux + uy * uy + uz * uz)
    if n > 0.0:
        return ux / n, uy / n, uz / n
    return ux, uy, uz


@njit(**_OPTS)
def signed_angle(ux, uy, uz, vx, vy, vz, tx, ty, tz):
    """Angle [rad] in (-pi, pi] that turns ``u`` onto ``v`` about the unit axis ``t``."""
    cx = uy * vz - uz * vy
    cy = uz * vx - ux * vz
    cz = ux * vy - uy * vx
    return math.atan2(cx * tx + cy * ty + cz * tz, ux * vx + uy * vy + uz * vz)


@njit(**_OPTS)
def wrap_angle(a):
    """``a`` [rad] brought into [-pi, pi)."""
    return a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))
