"""Scalar rotation helpers of the chain-shape-matching kernels (compiled with Numba).

Everything here works on plain floats and array slots, allocates nothing and is inlined into
the kernels of :mod:`strandlab.csm.kernels` and :mod:`strandlab.csm.twist`:

- :func:`rotation_of_moment`: the rotation of a region's moment matrix
  ``A = sum m (x - c)(x0 - c0)^T`` (3x3, given as nine scalars), found as the rotation ``R``
  that maximises ``trace(R^T A)``.  For ``det A > 0`` that is the rotation of the polar
  decomposition ``A = R S``; for a degenerate ``A`` (a straight region: rank 1; a planar
  one: rank 2) it is still a proper rotation, and it is the one nearest to the previous step's
  (warm start), so a straight region does not spin about its own axis.  The iteration turns a
  quaternion, warm-started at the previous step's, as Mueller, Bender, Chentanez and Macklin
  2016 ("A robust method to extract the rotational part of deformations"), but by the Newton
  step of ``trace(R^T A)`` where its Hessian is positive definite (quadratic convergence, also
  for nearly straight regions, whose spin the gradient step of that paper settles only
  slowly) and by their gradient step elsewhere, until the turn is below a tolerance.
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
#: Relative regularisation of the Newton step (damps turns about a nearly straight region's axis,
#: which its moment hardly determines).
REGULARISATION = 1e-6
#: Largest turn of one iteration [rad].
MAX_TURN = 0.5
#: Stop when the rotation update [rad] falls below this.
ROTATION_TOLERANCE = 1e-10
#: Stop after taking an update [rad] below this (quadratic convergence: the next would be of
#: the order of its square).
FINAL_TURN = 1e-5
#: Below this turn [rad] the update's sine and cosine are their Taylor polynomials.
SMALL_TURN = 1e-2

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
def _newton_step(qw, qx, qy, qz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """The turn ``delta`` [rad] (three floats) that raises ``trace(R^T A)`` at ``R = R(q)``
    (columns ``a, b, c`` of ``A``).

    With ``M = A R^T = sum_j a_j r_j^T`` the gradient is ``g = sum_j r_j x a_j`` and the
    Hessian ``H = trace(M) I - sym(M)``; the Newton step ``H^-1 g`` (regularised by
    ``REGULARISATION trace(M)``: a straight region's spin is undetermined, and ``g`` has no
    part along it)
    is taken where ``H`` is positive definite, else that of ``H`` shifted by the Gershgorin
    bound of its smallest eigenvalue (a Levenberg-Marquardt step: positive definite, so it
    still ascends, and Newton's again once near the optimum).
    """
    # columns of R(q)
    xx, yy, zz = qx * qx, qy * qy, qz * qz
    xy, xz, yz = qx * qy, qx * qz, qy * qz
    wx, wy, wz = qw * qx, qw * qy, qw * qz
    r0x, r0y, r0z = 1.0 - 2.0 * (yy + zz), 2.0 * (xy + wz), 2.0 * (xz - wy)
    r1x, r1y, r1z = 2.0 * (xy - wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz + wx)
    r2x, r2y, r2z = 2.0 * (xz + wy), 2.0 * (yz - wx), 1.0 - 2.0 * (xx + yy)
    gx = (r0y * az - r0z * ay) + (r1y * bz - r1z * by) + (r2y * cz - r2z * cy)
    gy = (r0z * ax - r0x * az) + (r1z * bx - r1x * bz) + (r2z * cx - r2x * cz)
    gz = (r0x * ay - r0y * ax) + (r1x * by - r1y * bx) + (r2x * cy - r2y * cx)
    # M = a r0^T + b r1^T + c r2^T (symmetric part)
    m00 = ax * r0x + bx * r1x + cx * r2x
    m11 = ay * r0y + by * r1y + cy * r2y
    m22 = az * r0z + bz * r1z + cz * r2z
    m01 = 0.5 * (ax * r0y + bx * r1y + cx * r2y + ay * r0x + by * r1x + cy * r2x)
    m02 = 0.5 * (ax * r0z + bx * r1z + cx * r2z + az * r0x + bz * r1x + cz * r2x)
    m12 = 0.5 * (ay * r0z + by * r1z + cy * r2z + az * r0y + bz * r1y + cz * r2y)
    tr = m00 + m11 + m22
    reg = tr * (1.0 + REGULARISATION)
    h00, h11, h22 = reg - m00, reg - m11, reg - m22
    h01, h02, h12 = -m01, -m02, -m12
    if not (tr > 0.0 and h00 > 0.0 and h00 * h11 - h01 * h01 > 0.0 and
            h00 * (h11 * h22 - h12 * h12) + h01 * (h02 * h12 - h01 * h22)
            + h02 * (h01 * h12 - h02 * h11) > 0.0):
        # not positive definite (far from the optimum, or a nearly straight region turned
        # about its axis): shift by the Gershgorin bound of its smallest eigenvalue, a
        # Levenberg-Marquardt step, which still ascends
        shift = max(abs(h01) + abs(h02) - h00, abs(h01) + abs(h12) - h11,
                    abs(h02) + abs(h12) - h22, 0.0) + REGULARISATION * (abs(tr) + 1.0)
        h00 += shift
        h11 += shift
        h22 += shift
    c00 = h11 * h22 - h12 * h12
    c01 = h02 * h12 - h01 * h22
    c02 = h01 * h12 - h02 * h11
    c11 = h00 * h22 - h02 * h02
    c12 = h01 * h02 - h00 * h12
    c22 = h00 * h11 - h01 * h01
    det = h00 * c00 + h01 * c01 + h02 * c02
    return ((c00 * gx + c01 * gy + c02 * gz) / det,
            (c01 * gx + c11 * gy + c12 * gz) / det,
            (c02 * gx + c12 * gy + c22 * gz) / det)


@njit(**_OPTS)
def add_moment(a, dx, dy, dz, qx, qy, qz):
    """The moment matrix ``a`` (nine floats, row-major) plus ``d q^T``; returns nine floats."""
    return (a[0] + dx * qx, a[1] + dx * qy, a[2] + dx * qz,
            a[3] + dy * qx, a[4] + dy * qy, a[5] + dy * qz,
            a[6] + dz * qx, a[7] + dz * qy, a[8] + dz * qz)


@njit(**_OPTS)
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
        ox, oy, oz = _newton_step(qw, qx, qy, qz, ax, ay, az, bx, by, bz, cx, cy, cz)
        w = math.sqrt(ox * ox + oy * oy + oz * oz)
        if w < ROTATION_TOLERANCE:
            break
        if w > MAX_TURN:
            ox, oy, oz, w = ox * MAX_TURN / w, oy * MAX_TURN / w, oz * MAX_TURN / w, MAX_TURN
        if w < SMALL_TURN:
            # cos(w / 2) and sin(w / 2) / w to well below the tolerance
            dw, sh = 1.0 - 0.125 * w * w, 0.5 - w * w / 48.0
        else:
            dw, sh = math.cos(0.5 * w), math.sin(0.5 * w) / w
        dx, dy, dz = ox * sh, oy * sh, oz * sh
        # q <- dq * q
        nw = dw * qw - dx * qx - dy * qy - dz * qz
        nx = dw * qx + dx * qw + dy * qz - dz * qy
        ny = dw * qy - dx * qz + dy * qw + dz * qx
        nz = dw * qz + dx * qy - dy * qx + dz * qw
        n = 1.0 / math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        qw, qx, qy, qz = nw * n, nx * n, ny * n, nz * n
        if w < FINAL_TURN:
            break      # Newton: what is left is of the order of the square of this turn
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
