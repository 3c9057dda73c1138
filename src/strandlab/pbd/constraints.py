"""Constraint functions, gradients and projections of position-based elastic rods.

Every function works on one constraint, reads positions ``x`` [m, shape (n_points, 3)] and
inverse masses ``w`` [1/kg, shape (n_points,)], and updates ``x`` in place.  Scratch arrays come
from the caller, so nothing allocates.  Equation numbers refer to Umetani, Schmidt and Stam,
"Position-based Elastic Rods" (SCA 2014) and its appendix.

Projections follow the mass-weighted update of eq. (17) with the sign fixed (see
``docs/pbd.md``): ``dp_a = -w_a G_a^T (sum_b w_b G_b G_b^T)^-1 C``.  With XPBD compliance
(Macklin et al. 2016) the block solve becomes
``dlambda = -(G W G^T + alpha~)^-1 (C + alpha~ lambda)``, ``dp_a = w_a G_a^T dlambda``.
"""
from __future__ import annotations

import math

from numba import njit

from ..geometry.darboux import darboux_gradient

__all__ = [
    "project_bisector",
    "project_ghost_distance",
    "project_distance",
    "project_pin",
    "project_orientation",
    "project_orientation_call",
    "solve3",
]

FREE_COMPLIANCE = 1e20  # compliance at or above this switches a component off (zero stiffness)


# --------------------------------------------------------------------------------------------
# Edge constraints, eqs. (18)-(20); appendix eqs. (33)-(42)
# --------------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", inline="always")
def project_distance(x, w, i, j, rest, compliance, lam, k, dt2):
    """Distance ``|x_i - x_j| = rest``: edge length (18), appendix eq. (35), and mesh edges.

    ``compliance`` [m/N] (0: hard), ``lam`` the XPBD multipliers, ``k`` this constraint's slot.
    Returns the constraint value before the projection.
    """
    dx = x[i, 0] - x[j, 0]
    dy = x[i, 1] - x[j, 1]
    dz = x[i, 2] - x[j, 2]
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    c = ln - rest
    wsum = w[i] + w[j]
    if ln <= 0.0 or wsum <= 0.0:
        return c
    at = compliance / dt2
    dl = (-c - at * lam[k]) / (wsum + at)
    lam[k] += dl
    s = dl / ln
    x[i, 0] += w[i] * s * dx
    x[i, 1] += w[i] * s * dy
    x[i, 2] += w[i] * s * dz
    x[j, 0] -= w[j] * s * dx
    x[j, 1] -= w[j] * s * dy
    x[j, 2] -= w[j] * s * dz
    return c


@njit(cache=True, error_model="numpy", inline="always")
def project_bisector(x, w, i0, i1, ig):
    """Ghost point on the perpendicular bisector of the edge, eq. (19), appendix (36)-(38).

    ``C = (p_g - p_m) . (p1 - p0)`` with gradients ``p0 - p_g``, ``p_g - p1``, ``p1 - p0``.
    """
    ex = x[i1, 0] - x[i0, 0]
    ey = x[i1, 1] - x[i0, 1]
    ez = x[i1, 2] - x[i0, 2]
    mx = 0.5 * (x[i0, 0] + x[i1, 0])
    my = 0.5 * (x[i0, 1] + x[i1, 1])
    mz = 0.5 * (x[i0, 2] + x[i1, 2])
    c = (x[ig, 0] - mx) * ex + (x[ig, 1] - my) * ey + (x[ig, 2] - mz) * ez
    g0x = x[i0, 0] - x[ig, 0]
    g0y = x[i0, 1] - x[ig, 1]
    g0z = x[i0, 2] - x[ig, 2]
    g1x = x[ig, 0] - x[i1, 0]
    g1y = x[ig, 1] - x[i1, 1]
    g1z = x[ig, 2] - x[i1, 2]
    den = (w[i0] * (g0x * g0x + g0y * g0y + g0z * g0z)
           + w[i1] * (g1x * g1x + g1y * g1y + g1z * g1z)
           + w[ig] * (ex * ex + ey * ey + ez * ez))
    if den <= 0.0:
        return c
    lam = c / den
    x[i0, 0] -= lam * w[i0] * g0x
    x[i0, 1] -= lam * w[i0] * g0y
    x[i0, 2] -= lam * w[i0] * g0z
    x[i1, 0] -= lam * w[i1] * g1x
    x[i1, 1] -= lam * w[i1] * g1y
    x[i1, 2] -= lam * w[i1] * g1z
    x[ig, 0] -= lam * w[ig] * ex
    x[ig, 1] -= lam * w[ig] * ey
    x[ig, 2] -= lam * w[ig] * ez
    return c


@njit(cache=True, error_model="numpy", inline="always")
def project_ghost_distance(x, w, i0, i1, ig, rest):
    """Ghost point at distance ``rest`` from the edge midpoint, eq. (20), appendix (39)-(42)."""
    dx = x[ig, 0] - 0.5 * (x[i0, 0] + x[i1, 0])
    dy = x[ig, 1] - 0.5 * (x[i0, 1] + x[i1, 1])
    dz = x[ig, 2] - 0.5 * (x[i0, 2] + x[i1, 2])
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    c = ln - rest
    den = 0.25 * w[i0] + 0.25 * w[i1] + w[ig]
    if ln <= 0.0 or den <= 0.0:
        return c
    s = c / (den * ln)
    x[i0, 0] += 0.5 * w[i0] * s * dx
    x[i0, 1] += 0.5 * w[i0] * s * dy
    x[i0, 2] += 0.5 * w[i0] * s * dz
    x[i1, 0] += 0.5 * w[i1] * s * dx
    x[i1, 1] += 0.5 * w[i1] * s * dy
    x[i1, 2] += 0.5 * w[i1] * s * dz
    x[ig, 0] -= w[ig] * s * dx
    x[ig, 1] -= w[ig] * s * dy
    x[ig, 2] -= w[ig] * s * dz
    return c


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


@njit(cache=True, error_model="numpy", inline="always")
def solve3(a, v, ib, io):
    """Solve ``a @ v[io:io+3] = v[ib:ib+3]`` for a symmetric positive (semi-)definite 3x3 ``a``.

    LDL^T elimination (backward stable for such matrices; Cramer's rule is not, and a light
    ghost point easily makes ``sum w G G^T`` as ill-conditioned as 1e9).  Returns the
    determinant; 0 means singular (an elimination pivot below 1e-12 of its diagonal entry), and
    ``v`` is then left unchanged.
    """
    a00 = a[0, 0]
    if not (a00 > 0.0 and a[1, 1] > 0.0 and a[2, 2] > 0.0):
        return 0.0
    l10 = a[1, 0] / a00
    l20 = a[2, 0] / a00
    d1 = a[1, 1] - l10 * a[1, 0]
    if not d1 > 1e-12 * a[1, 1]:
        return 0.0
    l21 = (a[2, 1] - l20 * a[1, 0]) / d1
    d2 = a[2, 2] - l20 * a[2, 0] - l21 * l21 * d1
    if not d2 > 1e-12 * a[2, 2]:
        return 0.0
    y0 = v[ib]
    y1 = v[ib + 1] - l10 * y0
    y2 = v[ib + 2] - l20 * y0 - l21 * y1
    x2 = y2 / d2
    x1 = y1 / d1 - l21 * x2
    x0 = y0 / a00 - l10 * x1 - l20 * x2
    v[io] = x0
    v[io + 1] = x1
    v[io + 2] = x2
    return a00 * d1 * d2


@njit(cache=True, error_model="numpy", inline="always")
def _xpbd_rhs(a, vec, compliance, lam, k, dt2, d0, d1, d2):
    """XPBD system: ``a += diag(compliance / dt^2)``, ``vec[3:6] = -(C + alpha~ lambda)``.

    Components with compliance >= FREE_COMPLIANCE are removed from the system (zero stiffness).
    """
    for i in range(3):
        dev = d0 if i == 0 else (d1 if i == 1 else d2)
        if compliance[k, i] >= FREE_COMPLIANCE:
            for j in range(3):
                a[i, j] = 0.0
                a[j, i] = 0.0
            a[i, i] = 1.0
            vec[3 + i] = 0.0
        else:
            at = compliance[k, i] / dt2
            a[i, i] += at
            vec[3 + i] = -(dev + at * lam[k, i])


@njit(cache=True, error_model="numpy", inline="always")
def project_orientation(x, w, idx, k, rot, kr, has_rot, rest_omega, ko, rest_len, alpha,
                        compliance, use_xpbd, lam, dt2, fa, fb, tmp, uv, grad, vec):
    """Project one bending-twisting constraint as a 3-D block, eqs. (17), (21), (23).

    The element is row ``k`` of ``idx`` [n, 6], ``alpha``, ``compliance`` and ``lam`` [n, 3];
    its constant rotation is ``rot[kr]`` (when ``has_rot``) and its rest Darboux vector
    ``rest_omega[ko]``; ``rest_len`` [m] is its length.  Rows are passed as indices so that no
    array views are made in the inner loop.

    Relaxation form (``use_xpbd`` false): ``C = alpha * (Omega - rest_omega)`` componentwise,
    the goal Darboux vector of eq. (21); ``alpha`` in [0, 1].  XPBD form: ``C = Omega -
    rest_omega`` with per-component ``compliance`` [1/(N m)] and multipliers ``lam``
    (updated).  ``uv`` [2, 3, 3] and ``vec`` [9] are scratch.  Returns the norm of
    ``Omega - rest_omega`` before the projection, or -1.0 when the constraint is skipped
    (degenerate frames, or frames turned by 180 degrees where Omega is infinite).
    """
    sq = darboux_gradient(x, idx, k, rot, kr, has_rot, rest_len, fa, fb, tmp, uv, vec, grad)
    if sq <= 0.0:
        return -1.0
    # A = sum_b w_b G_b G_b^T (into tmp)
    a00 = 0.0
    a01 = 0.0
    a02 = 0.0
    a11 = 0.0
    a12 = 0.0
    a22 = 0.0
    for slot in range(6):
        wb = w[idx[k, slot]]
        if wb != 0.0:
            g0x, g0y, g0z = grad[slot, 0, 0], grad[slot, 0, 1], grad[slot, 0, 2]
            g1x, g1y, g1z = grad[slot, 1, 0], grad[slot, 1, 1], grad[slot, 1, 2]
            g2x, g2y, g2z = grad[slot, 2, 0], grad[slot, 2, 1], grad[slot, 2, 2]
            a00 += wb * (g0x * g0x + g0y * g0y + g0z * g0z)
            a01 += wb * (g0x * g1x + g0y * g1y + g0z * g1z)
            a02 += wb * (g0x * g2x + g0y * g2y + g0z * g2z)
            a11 += wb * (g1x * g1x + g1y * g1y + g1z * g1z)
            a12 += wb * (g1x * g2x + g1y * g2y + g1z * g2z)
            a22 += wb * (g2x * g2x + g2y * g2y + g2z * g2z)
    tmp[0, 0] = a00
    tmp[0, 1] = a01
    tmp[0, 2] = a02
    tmp[1, 0] = a01
    tmp[1, 1] = a11
    tmp[1, 2] = a12
    tmp[2, 0] = a02
    tmp[2, 1] = a12
    tmp[2, 2] = a22
    d0 = vec[0] - rest_omega[ko, 0]
    d1 = vec[1] - rest_omega[ko, 1]
    d2 = vec[2] - rest_omega[ko, 2]
    if use_xpbd:
        _xpbd_rhs(tmp, vec, compliance, lam, k, dt2, d0, d1, d2)
    else:
        vec[3] = -alpha[k, 0] * d0
        vec[4] = -alpha[k, 1] * d1
        vec[5] = -alpha[k, 2] * d2
    det = solve3(tmp, vec, 3, 6)
    if det == 0.0:
        return -1.0
    s0 = vec[6]
    s1 = vec[7]
    s2 = vec[8]
    if use_xpbd:
        lam[k, 0] += s0
        lam[k, 1] += s1
        lam[k, 2] += s2
    for slot in range(6):
        p = idx[k, slot]
        wb = w[p]
        if wb == 0.0:
            continue
        for s in range(3):
            x[p, s] += wb * (grad[slot, 0, s] * s0 + grad[slot, 1, s] * s1 + grad[slot, 2, s] * s2)
    return math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)


@njit(cache=True, error_model="numpy")
def project_orientation_call(x, w, idx, k, rot, kr, has_rot, rest_omega, ko, rest_len, alpha,
                             compliance, use_xpbd, lam, dt2, fa, fb, tmp, uv, grad, vec):
    """:func:`project_orientation` as an ordinary compiled function, for callers outside the
    hot loop (couplings): it is inlined here once instead of into every such caller."""
    return project_orientation(x, w, idx, k, rot, kr, has_rot, rest_omega, ko, rest_len, alpha,
                               compliance, use_xpbd, lam, dt2, fa, fb, tmp, uv, grad, vec)
