"""Constraint functions, gradients and projections of position-based elastic rods.

Every function works on one constraint, reads positions ``x`` [m, shape (n_points, 3)] and
inverse masses ``w`` [1/kg, shape (n_points,)], and updates ``x`` in place.  Every
intermediate is a scalar (nothing allocates, and the compiler keeps the values in registers:
small arrays of scratch made a projection several times slower).  Equation numbers refer to
Umetani, Schmidt and Stam, "Position-based Elastic Rods" (SCA 2014) and its appendix.

Projections follow the mass-weighted update of eq. (17) with the sign fixed (see
``docs/pbd.md``): ``dp_a = -w_a G_a^T (sum_b w_b G_b G_b^T)^-1 C``.  With XPBD compliance
(Macklin et al. 2016) the block solve becomes
``dlambda = -(G W G^T + alpha~)^-1 (C + alpha~ lambda)``, ``dp_a = w_a G_a^T dlambda``.
"""
from __future__ import annotations

import math

from numba import njit

from ..geometry.darboux import MIN_ONE_PLUS_TRACE, omega_rotation_jacobian
from ..geometry.frames import FASTMATH, frame_rotation

__all__ = [
    "project_bisector",
    "project_ghost_distance",
    "project_distance",
    "project_edge",
    "project_pin",
    "project_line",
    "project_orientation",
    "solve3",
]

FREE_COMPLIANCE = 1e20  # compliance at or above this switches a component off (zero stiffness)


# --------------------------------------------------------------------------------------------
# Edge constraints, eqs. (18)-(20); appendix eqs. (33)-(42).  Each is a function of the point
# coordinates that returns the moved coordinates, so that the three constraints of an edge run
# on values held in registers (project_edge) and each can also be projected alone.
# --------------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _distance_step(ix, iy, iz, jx, jy, jz, wi, wj, rest, at, lam):
    """Eq. (18) on two points: returns the moved points, the multiplier increment ``dl`` (0
    when skipped) and ``C``.  ``at = compliance / dt^2`` (0: hard), ``lam`` the multiplier."""
    dx = ix - jx
    dy = iy - jy
    dz = iz - jz
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    c = ln - rest
    wsum = wi + wj
    if ln <= 0.0 or wsum <= 0.0:
        return ix, iy, iz, jx, jy, jz, 0.0, c
    dl = (-c - at * lam) / (wsum + at)
    s = dl / ln
    return (ix + wi * s * dx, iy + wi * s * dy, iz + wi * s * dz,
            jx - wj * s * dx, jy - wj * s * dy, jz - wj * s * dz, dl, c)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _bisector_step(ax, ay, az, bx, by, bz, gx, gy, gz, wa, wb, wg):
    """Eq. (19) on an edge ``a b`` and its ghost ``g``: returns the moved points and ``C``."""
    ex = bx - ax
    ey = by - ay
    ez = bz - az
    mx = 0.5 * (ax + bx)
    my = 0.5 * (ay + by)
    mz = 0.5 * (az + bz)
    c = (gx - mx) * ex + (gy - my) * ey + (gz - mz) * ez
    g0x = ax - gx
    g0y = ay - gy
    g0z = az - gz
    g1x = gx - bx
    g1y = gy - by
    g1z = gz - bz
    den = (wa * (g0x * g0x + g0y * g0y + g0z * g0z)
           + wb * (g1x * g1x + g1y * g1y + g1z * g1z)
           + wg * (ex * ex + ey * ey + ez * ez))
    if den <= 0.0:
        return ax, ay, az, bx, by, bz, gx, gy, gz, c
    lam = c / den
    return (ax - lam * wa * g0x, ay - lam * wa * g0y, az - lam * wa * g0z,
            bx - lam * wb * g1x, by - lam * wb * g1y, bz - lam * wb * g1z,
            gx - lam * wg * ex, gy - lam * wg * ey, gz - lam * wg * ez, c)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _ghost_distance_step(ax, ay, az, bx, by, bz, gx, gy, gz, wa, wb, wg, rest):
    """Eq. (20) on an edge ``a b`` and its ghost ``g``: returns the moved points and ``C``."""
    dx = gx - 0.5 * (ax + bx)
    dy = gy - 0.5 * (ay + by)
    dz = gz - 0.5 * (az + bz)
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    c = ln - rest
    den = 0.25 * wa + 0.25 * wb + wg
    if ln <= 0.0 or den <= 0.0:
        return ax, ay, az, bx, by, bz, gx, gy, gz, c
    s = c / (den * ln)
    return (ax + 0.5 * wa * s * dx, ay + 0.5 * wa * s * dy, az + 0.5 * wa * s * dz,
            bx + 0.5 * wb * s * dx, by + 0.5 * wb * s * dy, bz + 0.5 * wb * s * dz,
            gx - wg * s * dx, gy - wg * s * dy, gz - wg * s * dz, c)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _store3(x, i, px, py, pz):
    x[i, 0] = px
    x[i, 1] = py
    x[i, 2] = pz


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def project_distance(x, w, i, j, rest, compliance, lam, k, dt2):
    """Distance ``|x_i - x_j| = rest``: edge length (18), appendix eq. (35), and mesh edges.

    ``compliance`` [m/N] (0: hard), ``lam`` the XPBD multipliers, ``k`` this constraint's slot.
    Returns the constraint value before the projection.
    """
    ix, iy, iz, jx, jy, jz, dl, c = _distance_step(
        x[i, 0], x[i, 1], x[i, 2], x[j, 0], x[j, 1], x[j, 2], w[i], w[j], rest,
        compliance / dt2, lam[k])
    lam[k] += dl
    _store3(x, i, ix, iy, iz)
    _store3(x, j, jx, jy, jz)
    return c


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def project_bisector(x, w, i0, i1, ig):
    """Ghost point on the perpendicular bisector of the edge, eq. (19), appendix (36)-(38).

    ``C = (p_g - p_m) . (p1 - p0)`` with gradients ``p0 - p_g``, ``p_g - p1``, ``p1 - p0``.
    """
    ax, ay, az, bx, by, bz, gx, gy, gz, c = _bisector_step(
        x[i0, 0], x[i0, 1], x[i0, 2], x[i1, 0], x[i1, 1], x[i1, 2], x[ig, 0], x[ig, 1],
        x[ig, 2], w[i0], w[i1], w[ig])
    _store3(x, i0, ax, ay, az)
    _store3(x, i1, bx, by, bz)
    _store3(x, ig, gx, gy, gz)
    return c


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def project_ghost_distance(x, w, i0, i1, ig, rest):
    """Ghost point at distance ``rest`` from the edge midpoint, eq. (20), appendix (39)-(42)."""
    ax, ay, az, bx, by, bz, gx, gy, gz, c = _ghost_distance_step(
        x[i0, 0], x[i0, 1], x[i0, 2], x[i1, 0], x[i1, 1], x[i1, 2], x[ig, 0], x[ig, 1],
        x[ig, 2], w[i0], w[i1], w[ig], rest)
    _store3(x, i0, ax, ay, az)
    _store3(x, i1, bx, by, bz)
    _store3(x, ig, gx, gy, gz)
    return c


@njit(cache=True, error_model="numpy", fastmath=FASTMATH, inline="always")
def project_edge(x, w, a, b, g, rest, compliance, lam, e, dt2, ghost_rest, length):
    """The constraints of edge ``e`` (end points ``a``, ``b``, ghost ``g``) in turn: its length
    (eq. 18, when ``length``; compliance and multiplier as :func:`project_distance`), the
    perpendicular bisector (19) and the ghost distance ``ghost_rest`` (20).  The points are read
    once and written once."""
    wa = w[a]
    wb = w[b]
    wg = w[g]
    ax, ay, az = x[a, 0], x[a, 1], x[a, 2]
    bx, by, bz = x[b, 0], x[b, 1], x[b, 2]
    gx, gy, gz = x[g, 0], x[g, 1], x[g, 2]
    if length:
        ax, ay, az, bx, by, bz, dl, _ = _distance_step(ax, ay, az, bx, by, bz, wa, wb, rest,
                                                       compliance / dt2, lam[e])
        lam[e] += dl
    ax, ay, az, bx, by, bz, gx, gy, gz, _ = _bisector_step(ax, ay, az, bx, by, bz, gx, gy, gz,
                                                           wa, wb, wg)
    ax, ay, az, bx, by, bz, gx, gy, gz, _ = _ghost_distance_step(ax, ay, az, bx, by, bz, gx, gy,
                                                                 gz, wa, wb, wg, ghost_rest)
    _store3(x, a, ax, ay, az)
    _store3(x, b, bx, by, bz)
    _store3(x, g, gx, gy, gz)


@njit(cache=True, error_model="numpy")
def project_pin(x, w, i, t, b):
    """Pin point ``i`` to the barycentric point ``sum_k b[k] x[t[k]]`` (eq. 24, two-way).

    ``t`` holds three point indices (repeat an index with weight 0 to use fewer).  The vector
    constraint ``C = x_i - sum_k b_k x_{t_k}`` is linear, so one projection satisfies it.
    """
    wsum = w[i]
    for k in range(3):
        wsum += b[k] * b[k] * w[t[k]]
    if wsum <= 0.0:
        return 0.0
    cn = 0.0
    for r in range(3):
        c = x[i, r]
        for k in range(3):
            c -= b[k] * x[t[k], r]
        cn += c * c
        s = c / wsum
        x[i, r] -= w[i] * s
        for k in range(3):
            x[t[k], r] += w[t[k]] * b[k] * s
    return math.sqrt(cn)


@njit(cache=True, error_model="numpy")
def project_line(x, w, i, o, d):
    """Keep point ``i`` on the kinematic line through ``o`` [3] along the unit vector ``d`` [3]
    (a sliding end).  The line has infinite mass, so the point moves the whole way; returns the
    distance it was off the line."""
    if w[i] <= 0.0:
        return 0.0
    r0 = x[i, 0] - o[0]
    r1 = x[i, 1] - o[1]
    r2 = x[i, 2] - o[2]
    a = r0 * d[0] + r1 * d[1] + r2 * d[2]
    c0 = r0 - a * d[0]
    c1 = r1 - a * d[1]
    c2 = r2 - a * d[2]
    x[i, 0] -= c0
    x[i, 1] -= c1
    x[i, 2] -= c2
    return math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def solve3(a00, a01, a02, a11, a12, a22, b0, b1, b2):
    """Solve ``A s = b`` for a symmetric positive (semi-)definite 3x3 ``A`` (upper triangle
    given), without allocation.

    LDL^T elimination (backward stable for such matrices; Cramer's rule is not, and a light
    ghost point easily makes ``sum w G G^T`` as ill-conditioned as 1e9).  Returns
    ``(det, s0, s1, s2)``; ``det = 0`` means singular (an elimination pivot below 1e-12 of its
    diagonal entry), and ``s`` is then zero.
    """
    if not (a00 > 0.0 and a11 > 0.0 and a22 > 0.0):
        return 0.0, 0.0, 0.0, 0.0
    l10 = a01 / a00
    l20 = a02 / a00
    d1 = a11 - l10 * a01
    if not d1 > 1e-12 * a11:
        return 0.0, 0.0, 0.0, 0.0
    l21 = (a12 - l20 * a01) / d1
    d2 = a22 - l20 * a02 - l21 * l21 * d1
    if not d2 > 1e-12 * a22:
        return 0.0, 0.0, 0.0, 0.0
    y0 = b0
    y1 = b1 - l10 * y0
    y2 = b2 - l20 * y0 - l21 * y1
    x2 = y2 / d2
    x1 = y1 / d1 - l21 * x2
    x0 = y0 / a00 - l10 * x1 - l20 * x2
    return a00 * d1 * d2, x0, x1, x2


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _block_rhs(use_xpbd, alpha, compliance, lam, k, d0, d1, d2, dt2):
    """Right-hand side of the block system and the compliance term added to each diagonal
    entry, for the deviation ``d = Omega - Omega_rest``: ``(r0, r1, r2, t0, t1, t2)``.
    Relaxation form: ``r = -alpha d``, ``t = 0``.  XPBD: ``r = -(d + a~ lambda)``, ``t = a~``
    (``a~ = compliance / dt^2``); a switched-off component (compliance at or above
    FREE_COMPLIANCE) has ``r = 0``, ``t = -1``: its row and column leave the system."""
    if not use_xpbd:
        return -alpha[k, 0] * d0, -alpha[k, 1] * d1, -alpha[k, 2] * d2, 0.0, 0.0, 0.0
    c0 = compliance[k, 0]
    c1 = compliance[k, 1]
    c2 = compliance[k, 2]
    t0 = -1.0 if c0 >= FREE_COMPLIANCE else c0 / dt2
    t1 = -1.0 if c1 >= FREE_COMPLIANCE else c1 / dt2
    t2 = -1.0 if c2 >= FREE_COMPLIANCE else c2 / dt2
    r0 = 0.0 if t0 < 0.0 else -(d0 + t0 * lam[k, 0])
    r1 = 0.0 if t1 < 0.0 else -(d1 + t1 * lam[k, 1])
    r2 = 0.0 if t2 < 0.0 else -(d2 + t2 * lam[k, 2])
    return r0, r1, r2, t0, t1, t2


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def _move(x, p, wp, gx0, gy0, gx1, gy1, gx2, gy2, s0, s1, s2, ux, uy, uz, vx, vy, vz):
    """``x[p] += wp G_p^T s`` for a gradient ``G_p`` whose rows have the components
    ``(gx_i, gy_i)`` along the unit vectors ``u`` and ``v``."""
    if wp == 0.0:
        return
    a = wp * (gx0 * s0 + gx1 * s1 + gx2 * s2)
    b = wp * (gy0 * s0 + gy1 * s1 + gy2 * s2)
    x[p, 0] += a * ux + b * vx
    x[p, 1] += a * uy + b * vy
    x[p, 2] += a * uz + b * vz


@njit(cache=True, error_model="numpy", fastmath=FASTMATH, _nrt=False, inline="always")
def project_orientation(x, w, idx, k, rot, kr, has_rot, rest_omega, ko, rest_len, alpha,
                        compliance, use_xpbd, lam, dt2):
    """Project one bending-twisting constraint as a 3-D block, eqs. (17), (21), (23).

    The element is row ``k`` of ``idx`` [n, 6]: frame A from points ``idx[k, 0:3]`` (times the
    constant rotation ``rot[kr]`` when ``has_rot``), frame B from ``idx[k, 3:6]``; the six points
    are distinct except that ``idx[k, 1] == idx[k, 3]`` may hold (an interior element's shared
    vertex).  ``alpha``, ``compliance`` and ``lam`` are [n, 3], its rest Darboux vector
    ``rest_omega[ko]``; ``rest_len`` [m] is its length.  Rows are passed as indices and nothing
    is allocated: every intermediate is a scalar.

    Relaxation form (``use_xpbd`` false): ``C = alpha * (Omega - rest_omega)`` componentwise,
    the goal Darboux vector of eq. (21); ``alpha`` in [0, 1].  XPBD form: ``C = Omega -
    rest_omega`` with per-component ``compliance`` [1/(N m)] and multipliers ``lam``
    (updated).  Returns the norm of ``Omega - rest_omega`` before the projection, or -1.0 when
    the constraint is skipped (degenerate frames, frames turned by 180 degrees where Omega is
    infinite, or a singular block).

    The gradient ``G = dOmega/dp`` (the appendix's eqs. 43-53) is assembled from rotations:
    ``dOmega = M (dtheta_A - dtheta_B)``
    (:func:`~strandlab.geometry.darboux.omega_rotation_jacobian`) and each frame's rotation is
    linear in its points' moves (:func:`~strandlab.geometry.frames.frame_rotation`), so each
    point's gradient row has components along two of its frame's axes only (d1, d2).
    """
    i0 = idx[k, 0]
    i1 = idx[k, 1]
    i2 = idx[k, 2]
    i3 = idx[k, 3]
    i4 = idx[k, 4]
    i5 = idx[k, 5]
    a1x, a1y, a1z, a2x, a2y, a2z, a3x, a3y, a3z, il_a, c_a, ih_a = frame_rotation(x, i0, i1, i2)
    b1x, b1y, b1z, b2x, b2y, b2z, b3x, b3y, b3z, il_b, c_b, ih_b = frame_rotation(x, i3, i4, i5)
    if il_a == 0.0 or il_b == 0.0:
        return -1.0
    # effective columns of frame A (times the constant rotation)
    e1x, e1y, e1z, e2x, e2y, e2z, e3x, e3y, e3z = a1x, a1y, a1z, a2x, a2y, a2z, a3x, a3y, a3z
    if has_rot:
        e1x = a1x * rot[kr, 0, 0] + a2x * rot[kr, 1, 0] + a3x * rot[kr, 2, 0]
        e1y = a1y * rot[kr, 0, 0] + a2y * rot[kr, 1, 0] + a3y * rot[kr, 2, 0]
        e1z = a1z * rot[kr, 0, 0] + a2z * rot[kr, 1, 0] + a3z * rot[kr, 2, 0]
        e2x = a1x * rot[kr, 0, 1] + a2x * rot[kr, 1, 1] + a3x * rot[kr, 2, 1]
        e2y = a1y * rot[kr, 0, 1] + a2y * rot[kr, 1, 1] + a3y * rot[kr, 2, 1]
        e2z = a1z * rot[kr, 0, 1] + a2z * rot[kr, 1, 1] + a3z * rot[kr, 2, 1]
        e3x = a1x * rot[kr, 0, 2] + a2x * rot[kr, 1, 2] + a3x * rot[kr, 2, 2]
        e3y = a1y * rot[kr, 0, 2] + a2y * rot[kr, 1, 2] + a3y * rot[kr, 2, 2]
        e3z = a1z * rot[kr, 0, 2] + a2z * rot[kr, 1, 2] + a3z * rot[kr, 2, 2]
    # Q = A^T B
    q00 = e1x * b1x + e1y * b1y + e1z * b1z
    q01 = e1x * b2x + e1y * b2y + e1z * b2z
    q02 = e1x * b3x + e1y * b3y + e1z * b3z
    q10 = e2x * b1x + e2y * b1y + e2z * b1z
    q11 = e2x * b2x + e2y * b2y + e2z * b2z
    q12 = e2x * b3x + e2y * b3y + e2z * b3z
    q20 = e3x * b1x + e3y * b1y + e3z * b1z
    q21 = e3x * b2x + e3y * b2y + e3z * b2z
    q22 = e3x * b3x + e3y * b3y + e3z * b3z
    (sq, om0, om1, om2, m00, m01, m02, m10, m11, m12, m20, m21,
     m22) = omega_rotation_jacobian(q00, q01, q02, q10, q11, q12, q20, q21, q22, rest_len)
    if not sq > MIN_ONE_PLUS_TRACE:
        return -1.0
    # rows of M in frame A's own axes (rot M rows) and in frame B's axes (Q^T M rows)
    ma00, ma01, ma02, ma10, ma11, ma12, ma20, ma21, ma22 = (m00, m01, m02, m10, m11, m12, m20,
                                                            m21, m22)
    if has_rot:
        ma00 = rot[kr, 0, 0] * m00 + rot[kr, 0, 1] * m01 + rot[kr, 0, 2] * m02
        ma01 = rot[kr, 1, 0] * m00 + rot[kr, 1, 1] * m01 + rot[kr, 1, 2] * m02
        ma02 = rot[kr, 2, 0] * m00 + rot[kr, 2, 1] * m01 + rot[kr, 2, 2] * m02
        ma10 = rot[kr, 0, 0] * m10 + rot[kr, 0, 1] * m11 + rot[kr, 0, 2] * m12
        ma11 = rot[kr, 1, 0] * m10 + rot[kr, 1, 1] * m11 + rot[kr, 1, 2] * m12
        ma12 = rot[kr, 2, 0] * m10 + rot[kr, 2, 1] * m11 + rot[kr, 2, 2] * m12
        ma20 = rot[kr, 0, 0] * m20 + rot[kr, 0, 1] * m21 + rot[kr, 0, 2] * m22
        ma21 = rot[kr, 1, 0] * m20 + rot[kr, 1, 1] * m21 + rot[kr, 1, 2] * m22
        ma22 = rot[kr, 2, 0] * m20 + rot[kr, 2, 1] * m21 + rot[kr, 2, 2] * m22
    mb01 = q01 * m00 + q11 * m01 + q21 * m02
    mb02 = q02 * m00 + q12 * m01 + q22 * m02
    mb00 = q00 * m00 + q10 * m01 + q20 * m02
    mb10 = q00 * m10 + q10 * m11 + q20 * m12
    mb11 = q01 * m10 + q11 * m11 + q21 * m12
    mb12 = q02 * m10 + q12 * m11 + q22 * m12
    mb20 = q00 * m20 + q10 * m21 + q20 * m22
    mb21 = q01 * m20 + q11 * m21 + q21 * m22
    mb22 = q02 * m20 + q12 * m21 + q22 * m22
    # gradient rows (components along d1, d2 of the point's frame), frame A: dOmega_i/dp =
    # M_i . dtheta_A/dp; frame B with the opposite sign.  Point 1 of a frame: (il m_1,
    # -il m_0 - c m_2); point 2: (0, ih m_2); point 0: minus their sum.
    xa0 = il_a * ma01
    xa1 = il_a * ma11
    xa2 = il_a * ma21
    ya0 = -il_a * ma00 - c_a * ma02
    ya1 = -il_a * ma10 - c_a * ma12
    ya2 = -il_a * ma20 - c_a * ma22
    ga0 = ih_a * ma02
    ga1 = ih_a * ma12
    ga2 = ih_a * ma22
    xb0 = -il_b * mb01
    xb1 = -il_b * mb11
    xb2 = -il_b * mb21
    yb0 = il_b * mb00 + c_b * mb02
    yb1 = il_b * mb10 + c_b * mb12
    yb2 = il_b * mb20 + c_b * mb22
    gb0 = -ih_b * mb02
    gb1 = -ih_b * mb12
    gb2 = -ih_b * mb22
    # A = sum_p w_p G_p G_p^T
    w0 = w[i0]
    w1 = w[i1]
    w2 = w[i2]
    w3 = w[i3]
    w4 = w[i4]
    w5 = w[i5]
    # points 0 (rows (-x, -y - g)) and 1 (rows (x, y)) of frame A, 3 and 4 of frame B
    za0 = -ya0 - ga0
    za1 = -ya1 - ga1
    za2 = -ya2 - ga2
    zb0 = -yb0 - gb0
    zb1 = -yb1 - gb1
    zb2 = -yb2 - gb2
    a00 = w0 * (xa0 * xa0 + za0 * za0) + w4 * (xb0 * xb0 + yb0 * yb0) + w2 * ga0 * ga0 \
        + w5 * gb0 * gb0
    a01 = w0 * (xa0 * xa1 + za0 * za1) + w4 * (xb0 * xb1 + yb0 * yb1) + w2 * ga0 * ga1 \
        + w5 * gb0 * gb1
    a02 = w0 * (xa0 * xa2 + za0 * za2) + w4 * (xb0 * xb2 + yb0 * yb2) + w2 * ga0 * ga2 \
        + w5 * gb0 * gb2
    a11 = w0 * (xa1 * xa1 + za1 * za1) + w4 * (xb1 * xb1 + yb1 * yb1) + w2 * ga1 * ga1 \
        + w5 * gb1 * gb1
    a12 = w0 * (xa1 * xa2 + za1 * za2) + w4 * (xb1 * xb2 + yb1 * yb2) + w2 * ga1 * ga2 \
        + w5 * gb1 * gb2
    a22 = w0 * (xa2 * xa2 + za2 * za2) + w4 * (xb2 * xb2 + yb2 * yb2) + w2 * ga2 * ga2 \
        + w5 * gb2 * gb2
    shared = i1 == i3
    if shared:
        # one point in both frames: its gradient is the sum of the two, in world axes
        s0x = xa0 * a1x + ya0 * a2x - xb0 * b1x + zb0 * b2x
        s0y = xa0 * a1y + ya0 * a2y - xb0 * b1y + zb0 * b2y
        s0z = xa0 * a1z + ya0 * a2z - xb0 * b1z + zb0 * b2z
        s1x = xa1 * a1x + ya1 * a2x - xb1 * b1x + zb1 * b2x
        s1y = xa1 * a1y + ya1 * a2y - xb1 * b1y + zb1 * b2y
        s1z = xa1 * a1z + ya1 * a2z - xb1 * b1z + zb1 * b2z
        s2x = xa2 * a1x + ya2 * a2x - xb2 * b1x + zb2 * b2x
        s2y = xa2 * a1y + ya2 * a2y - xb2 * b1y + zb2 * b2y
        s2z = xa2 * a1z + ya2 * a2z - xb2 * b1z + zb2 * b2z
        a00 += w1 * (s0x * s0x + s0y * s0y + s0z * s0z)
        a01 += w1 * (s0x * s1x + s0y * s1y + s0z * s1z)
        a02 += w1 * (s0x * s2x + s0y * s2y + s0z * s2z)
        a11 += w1 * (s1x * s1x + s1y * s1y + s1z * s1z)
        a12 += w1 * (s1x * s2x + s1y * s2y + s1z * s2z)
        a22 += w1 * (s2x * s2x + s2y * s2y + s2z * s2z)
    else:
        a00 += w1 * (xa0 * xa0 + ya0 * ya0) + w3 * (xb0 * xb0 + zb0 * zb0)
        a01 += w1 * (xa0 * xa1 + ya0 * ya1) + w3 * (xb0 * xb1 + zb0 * zb1)
        a02 += w1 * (xa0 * xa2 + ya0 * ya2) + w3 * (xb0 * xb2 + zb0 * zb2)
        a11 += w1 * (xa1 * xa1 + ya1 * ya1) + w3 * (xb1 * xb1 + zb1 * zb1)
        a12 += w1 * (xa1 * xa2 + ya1 * ya2) + w3 * (xb1 * xb2 + zb1 * zb2)
        a22 += w1 * (xa2 * xa2 + ya2 * ya2) + w3 * (xb2 * xb2 + zb2 * zb2)
    d0 = om0 - rest_omega[ko, 0]
    d1 = om1 - rest_omega[ko, 1]
    d2 = om2 - rest_omega[ko, 2]
    r0, r1, r2, t0, t1, t2 = _block_rhs(use_xpbd, alpha, compliance, lam, k, d0, d1, d2, dt2)
    # a switched-off component (t < 0) leaves the system: its row and column become the identity
    if t0 < 0.0:
        a00, a01, a02 = 1.0, 0.0, 0.0
    if t1 < 0.0:
        a01, a11, a12 = 0.0, 1.0, 0.0
    if t2 < 0.0:
        a02, a12, a22 = 0.0, 0.0, 1.0
    det, s0, s1, s2 = solve3(a00 + max(t0, 0.0), a01, a02, a11 + max(t1, 0.0), a12,
                             a22 + max(t2, 0.0), r0, r1, r2)
    if det == 0.0:
        return -1.0
    if use_xpbd:
        lam[k, 0] += s0
        lam[k, 1] += s1
        lam[k, 2] += s2
    # dp = w G^T s, point by point
    _move(x, i0, w0, -xa0, za0, -xa1, za1, -xa2, za2, s0, s1, s2, a1x, a1y, a1z, a2x, a2y, a2z)
    _move(x, i2, w2, 0.0, ga0, 0.0, ga1, 0.0, ga2, s0, s1, s2, a1x, a1y, a1z, a2x, a2y, a2z)
    _move(x, i1, w1, xa0, ya0, xa1, ya1, xa2, ya2, s0, s1, s2, a1x, a1y, a1z, a2x, a2y, a2z)
    _move(x, i3, w3, -xb0, zb0, -xb1, zb1, -xb2, zb2, s0, s1, s2, b1x, b1y, b1z, b2x, b2y, b2z)
    _move(x, i4, w4, xb0, yb0, xb1, yb1, xb2, yb2, s0, s1, s2, b1x, b1y, b1z, b2x, b2y, b2z)
    _move(x, i5, w5, 0.0, gb0, 0.0, gb1, 0.0, gb2, s0, s1, s2, b1x, b1y, b1z, b2x, b2y, b2z)
    return math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
