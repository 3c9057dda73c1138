"""Point and curve connection energies of the mixed model: per-stencil math and kernels.

A connection stencil joins two frames (:mod:`strandlab.mixed.frames`), ``M = (m1, m2, m3)`` of
side A and ``N = (n1, n2, n3)`` of side B.  Everything is a function of the 3x3 matrix of
director products ``D[i, j] = m_i . n_j`` (row-major 9 entries), through a few *features* ``r``
(Chang et al. 2019, sections 3-4):

- point, soft (:data:`POINT`): the twist pair ``(c, s) = (n1 . P(m1), n1 . P(m2))`` with ``P``
  the parallel transport from ``m3`` to ``n3``, for vectors perpendicular to ``m3``
  ``P(u) = u - (u . n3) / (1 + m3 . n3) (m3 + n3)``, hence
  ``c = D11 - D13 D31 / (1 + D33)``, ``s = D21 - D23 D31 / (1 + D33)``;
  the twist angle ``delta`` is the angle from ``P(m1)`` to ``n1`` about ``n3``
  (``atan2(s, c)`` up to the branch, see below); the bend vector ``d = (D13, D23, D33)``
  (``n3`` in A's frame, eq. 4) and ``omega`` the angle between ``d`` and its rest value
  ``dbar``.  ``E = 1/2 k_t (delta - deltabar)^2 + 1/2 k_b omega^2`` (eqs. 2 and 5),
  k_t, k_b [N m / rad^2];
- point, hard (:data:`POINT_HARD`): the six products ``D[i, j]``, ``j = 1, 2`` (eq. 1),
  ``E = 1/2 k |D[:, :2] - Dbar[:, :2]|^2``, k [N m];
- curve, soft (:data:`CURVE`): ``(c, s) = (D11, D21)`` (``m3 = n3`` along the shared edge),
  ``delta = atan2(n1 . m2, n1 . m1)`` (eq. 9), ``E = 1/2 k |ebar| (delta - deltabar)^2`` (eq. 8),
  k [N m / rad^2 per m], ``|ebar|`` the rest edge length [m];
- curve, hard (:data:`CURVE_HARD`): ``(D11, D21, D31)`` (eq. 6),
  ``E = 1/2 k |ebar| |D[:, 0] - Dbar[:, 0]|^2``, k [N m / m].

Angle branches (section 3.1).  With ``delta_old`` the angle stored at the start of the step:

- :data:`DIRECT`: ``delta = atan2(s, c)`` in (-pi, pi] (no history; jumps at pi);
- :data:`INCREMENTAL_I`: ``atan2(s, c)`` moved by the multiple of 2 pi nearest ``delta_old``;
- :data:`INCREMENTAL_II`: ``m1`` pre-rotated by ``delta_old`` about ``m3`` before the transport
  (eq. 3): ``delta = delta_old + atan2(s', c')``, ``(c', s')`` = ``(c, s)`` turned by
  ``-delta_old``.

Both incremental forms equal ``delta_old`` plus an increment in (-pi, pi]; the energy is smooth in
``q`` while the increment stays inside (-pi, pi) (a step may not turn a joint by pi).  Their
gradient is that of ``atan2(s, c)``.

Derivatives.  With ``J_r`` the analytic Jacobian of the features (chain rule through the frame
Jacobians), the gradient is ``J_r^T grad_r phi`` and the Hessian
``J_r^T Hess_r phi J_r + sum_i (d phi / d r_i) Hess r_i``.  The first part (with the exact
``Hess_r phi`` of the angle functions) is analytic.  In the second, with ``w = (dr/dD)^T
grad_r phi`` the energy's gradient w.r.t. the director products, ``sum_i g_i Hess r_i =
J_D^T (sum_i g_i d^2 r_i / dD^2) J_D + sum_ij w_ij Hess (m_i . n_j)`` (the first term only for
the point twist pair, whose transport is not linear in ``D``), and ``Hess (m_i . n_j) =
J(m_i)^T J(n_j) + J(n_j)^T J(m_i) + n_j . Hess m_i + m_i . Hess n_j``.  The last two are
each frame's own curvature, ``sum_a u_a Hess F_a`` per side with fixed weights ``u``
(``u_A = (sum_j w_ij n_j)_i``, ``u_B = (sum_i w_ij m_i)_j``), the exact second derivatives of
:mod:`strandlab.mixed.frame_hessians` (a frame turned by pi, ``(m1, -m2, -m3)``, takes ``u``
with its ``m2``, ``m3`` weights negated).  The whole Hessian is exact; it is symmetrised against
rounding.  The second part vanishes at rest (``w = 0``).

Degenerate stencils (a frame undefined, ``m3 = -n3`` for the twist transport, ``d = -dbar`` for
the bend angle) get energy +inf and zero gradient and Hessian.

Kernel arguments are grouped in tuples:

- ``lay = (kinds, slots, ints, sign, t_s, a1_s)``: frame kinds int64 [2]; slot offsets int64
  [2, 5] (up to four vertex offsets, then the angle offset); per stencil int64 [S, 4]
  ``(swap_a, swap_b, row_a, row_b)`` (swap: the rod edge runs from slot 1 to slot 0; row: the rod
  edge's row in ``t_s``, ``a1_s``); ``sign`` float64 [S, 2] (-1: the frame is turned by pi
  about m1, ``(m1, -m2, -m3)``); the rods' step start tangents and reference directors [R, 3];
- ``par = (ttype, n_pos, p, angles, mode)``: term type, number of position slots (angle slots
  follow them), per stencil parameters float64 [S, P], stored angles ``delta_old`` [S], mode;
- ``work = (x, frames, jac, r, jr, g, hp, v, u)``: per stencil scratch, allocated with the
  term (``u`` [S, 3, 9]: the two sides' curvature weights and ``w``).
"""
from __future__ import annotations

import math

from numba import njit, prange

from ..rods.energies import unwrap_angle
from ..rods.kernels import _clear  # (importing the rods' kernels makes unwrap_angle jitable)
from .frame_hessians import (
    add_rod_edge_frame_hessian,
    add_tet_vertex_frame_hessian,
    add_triangle_edge_frame_hessian,
    add_triangle_vertex_frame_hessian,
)
from .frames import (
    DEGENERATE_SIN,
    FRAME_OK,
    ROD_EDGE,
    TRIANGLE_EDGE,
    TRIANGLE_VERTEX,
    rod_edge_frame,
    tet_vertex_frame,
    triangle_edge_frame,
    triangle_vertex_frame,
)

__all__ = [
    "POINT", "POINT_HARD", "CURVE", "CURVE_HARD", "N_FEATURES",
    "DIRECT", "INCREMENTAL_I", "INCREMENTAL_II",
    "EVALUATE", "MEASURE", "UPDATE", "joint_terms", "joint_terms_serial",
    "twist_angle", "bend_angle",
]

POINT = 0
POINT_HARD = 1
CURVE = 2
CURVE_HARD = 3
#: Number of features of each term type.
N_FEATURES = (5, 6, 2, 3)

DIRECT = 0
INCREMENTAL_I = 1
INCREMENTAL_II = 2

#: Kernel operations.
EVALUATE = 0
MEASURE = 1
UPDATE = 2

_SERIES = 1e-3   # bend angles below this use the series of omega / sin(omega) and its slopes
_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}


# --------------------------------------------------------------------------- frames and D
@njit(**_OPTS)
def _products(FA, JA, FB, JB, D, JD):
    """``D[3i+j] = m_i . n_j`` and its Jacobian ``JD`` [9, k]."""
    for i in range(3):
        for j in range(3):
            a = 3 * i + j
            D[a] = FA[3 * i] * FB[3 * j] + FA[3 * i + 1] * FB[3 * j + 1] + \
                FA[3 * i + 2] * FB[3 * j + 2]
            for c in range(JD.shape[1]):
                JD[a, c] = (JA[3 * i, c] * FB[3 * j] + JA[3 * i + 1, c] * FB[3 * j + 1]
                            + JA[3 * i + 2, c] * FB[3 * j + 2] + FA[3 * i] * JB[3 * j, c]
                            + FA[3 * i + 1] * JB[3 * j + 1, c] + FA[3 * i + 2] * JB[3 * j + 2, c])


@njit(**_OPTS)
def _lin_rows(jr, i, JD, a, wa, b, wb, c, wc, d, wd):
    """``jr[i] = wa JD[a] + wb JD[b] + wc JD[c] + wd JD[d]``."""
    for col in range(jr.shape[1]):
        jr[i, col] = wa * JD[a, col] + wb * JD[b, col] + wc * JD[c, col] + wd * JD[d, col]


@njit(**_OPTS)
def _copy_rows(r, jr, D, JD, i, a):
    r[i] = D[a]
    for col in range(jr.shape[1]):
        jr[i, col] = JD[a, col]


@njit(**_OPTS)
def _point_features(D, JD, r, jr):
    """Twist pair ``(c, s)`` with the transport ``m3 -> n3`` and bend vector ``d``."""
    den = 1.0 + D[8]
    if not den > DEGENERATE_SIN:
        return 1
    u = D[6] / den
    r[0] = D[0] - D[2] * u
    r[1] = D[3] - D[5] * u
    _lin_rows(jr, 0, JD, 0, 1.0, 2, -u, 6, -D[2] / den, 8, D[2] * u / den)
    _lin_rows(jr, 1, JD, 3, 1.0, 5, -u, 6, -D[5] / den, 8, D[5] * u / den)
    _copy_rows(r, jr, D, JD, 2, 2)
    _copy_rows(r, jr, D, JD, 3, 5)
    _copy_rows(r, jr, D, JD, 4, 8)
    return 0


@njit(**_OPTS)
def _rod_side(s, side, lay):
    """Slots ``(ia, ib)`` of side ``side``'s rod edge in stencil ``s`` and its base
    ``(t_s, a1_s)`` (3-tuples)."""
    kinds, slots, ints, sign, t_s, a1_s = lay
    sl = slots[side]
    ia, ib = (sl[1], sl[0]) if ints[s, side] != 0 else (sl[0], sl[1])
    row = ints[s, 2 + side]
    return ia, ib, (t_s[row, 0], t_s[row, 1], t_s[row, 2]), \
        (a1_s[row, 0], a1_s[row, 1], a1_s[row, 2])


@njit(**_OPTS)
def _side_frame(s, x, side, lay, F, J):
    """Frame ``F`` [9] and Jacobian ``J`` [9, k] of side ``side`` of stencil ``s`` at ``x``;
    1 if degenerate."""
    kinds, slots, _, sign, _, _ = lay
    sl = slots[side]
    kind = kinds[side]
    if kind == ROD_EDGE:
        ia, ib, ts, a1s = _rod_side(s, side, lay)
        st = rod_edge_frame(x, ia, ib, sl[4], ts, a1s, F, J)
    elif kind == TRIANGLE_VERTEX:
        st = triangle_vertex_frame(x, sl[0], sl[1], sl[2], F, J)
    elif kind == TRIANGLE_EDGE:
        st = triangle_edge_frame(x, sl[0], sl[1], sl[2], F, J)
    else:
        st = tet_vertex_frame(x, sl[0], sl[1], sl[2], sl[3], F, J)
    if st != FRAME_OK:
        return 1
    if sign[s, side] < 0.0:         # turned by pi about m1: (m1, -m2, -m3)
        for i in range(3, 9):
            F[i] = -F[i]
            for c in range(J.shape[1]):
                J[i, c] = -J[i, c]
    return 0


@njit(**_OPTS)
def _features(s, x, ttype, lay, work):
    """Features ``r`` and their Jacobian ``jr`` of stencil ``s`` at local coordinates ``x``
    (written to ``work``, with the two frames, ``D`` and their Jacobians); 1 if degenerate."""
    frames, jac, r, jr = work[1][s], work[2][s], work[3][s], work[4][s]
    for side in range(2):
        if _side_frame(s, x, side, lay, frames[side], jac[side]) != 0:
            return 1
    D = frames[2]
    JD = jac[2]
    _products(frames[0], jac[0], frames[1], jac[1], D, JD)
    if ttype == POINT:
        return _point_features(D, JD, r, jr)
    if ttype == POINT_HARD:
        for i in range(3):
            _copy_rows(r, jr, D, JD, 2 * i, 3 * i)
            _copy_rows(r, jr, D, JD, 2 * i + 1, 3 * i + 1)
    else:
        _copy_rows(r, jr, D, JD, 0, 0)
        _copy_rows(r, jr, D, JD, 1, 3)
        if ttype == CURVE_HARD:
            _copy_rows(r, jr, D, JD, 2, 6)
    return 0


# --------------------------------------------------------------------------- angle energies
@njit(**_OPTS)
def twist_angle(c, s, old, mode):
    """Angle [rad] of ``(c, s)`` on the branch ``mode`` selects, ``old`` the stored angle."""
    if mode == DIRECT:
        return math.atan2(s, c)
    if mode == INCREMENTAL_I:
        return unwrap_angle(math.atan2(s, c), old)
    co = math.cos(old)
    so = math.sin(old)
    return old + math.atan2(co * s - so * c, co * c + so * s)


@njit(**_OPTS)
def _add_angle(c, s, k, dev, off, g, hp):
    """Add ``1/2 k dev^2`` of an angle of ``(c, s)`` (slots ``off, off+1``): gradient and exact
    Hessian w.r.t. ``(c, s)``."""
    rho2 = c * c + s * s
    dc = -s / rho2
    ds = c / rho2
    r4 = rho2 * rho2
    g[off] += k * dev * dc
    g[off + 1] += k * dev * ds
    hp[off, off] += k * (dc * dc + dev * 2.0 * c * s / r4)
    hp[off + 1, off + 1] += k * (ds * ds - dev * 2.0 * c * s / r4)
    h = k * (dc * ds + dev * (s * s - c * c) / r4)
    hp[off, off + 1] += h
    hp[off + 1, off] += h


@njit(**_OPTS)
def bend_angle(d0, d1, d2, b0, b1, b2):
    """Angle [rad] between ``d`` and unit ``dbar``, its sine times ``|d|`` and cosine times."""
    w0 = d1 * b2 - d2 * b1
    w1 = d2 * b0 - d0 * b2
    w2 = d0 * b1 - d1 * b0
    sn = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    c = d0 * b0 + d1 * b1 + d2 * b2
    return math.atan2(sn, c), sn, c


@njit(**_OPTS)
def _add_bend(r, b, k, off, g, hp):
    """Add ``1/2 k omega^2`` of the bend vector ``r[off:off+3]`` against unit ``b``; 1 if
    ``d = -dbar`` (no direction to unbend in)."""
    d = (r[off], r[off + 1], r[off + 2])
    om, sn, c = bend_angle(d[0], d[1], d[2], b[0], b[1], b[2])
    if om < _SERIES:
        w2 = om * om
        f = 1.0 + w2 / 6.0 + 7.0 * w2 * w2 / 360.0
        a1 = -2.0 / 3.0 - w2 / 5.0
        a2 = -1.0 / 3.0 - 2.0 * w2 / 15.0
    elif sn > DEGENERATE_SIN:
        f = om / sn
        a1 = (c - f) / (sn * sn)
        a2 = (f * c - 1.0) / (sn * sn)
    else:
        return 1
    n2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    h = (c * d[0] / n2 - b[0], c * d[1] / n2 - b[1], c * d[2] / n2 - b[2])
    gf = (a1 * d[0] + a2 * b[0], a1 * d[1] + a2 * b[1], a1 * d[2] + a2 * b[2])
    for i in range(3):
        g[off + i] += k * f * h[i]
        for j in range(3):
            dh = d[i] * b[j] - 2.0 * c * d[i] * d[j] + (c if i == j else 0.0)
            hp[off + i, off + j] += 0.5 * k * (h[i] * gf[j] + h[j] * gf[i]
                                               + f * (dh + d[j] * b[i] - 2.0 * c * d[j] * d[i]
                                                      + (c if i == j else 0.0)))
    return 0


@njit(**_OPTS)
def _phi(s, ttype, r, par, g, hp):
    """Energy [J] of stencil ``s``'s features ``r``; adds its gradient ``g`` and Hessian ``hp``
    w.r.t. ``r``.  Returns ``(energy, status)``."""
    p = par[2][s]
    m = N_FEATURES[ttype]
    for i in range(m):
        g[i] = 0.0
        for j in range(m):
            hp[i, j] = 0.0
    if ttype == POINT or ttype == CURVE:
        dev = twist_angle(r[0], r[1], par[3][s], par[4]) - p[1]
        e = 0.5 * p[0] * dev * dev
        _add_angle(r[0], r[1], p[0], dev, 0, g, hp)
        if ttype == CURVE:
            return e, 0
        om, _, _ = bend_angle(r[2], r[3], r[4], p[3], p[4], p[5])
        return e + 0.5 * p[2] * om * om, _add_bend(r, (p[3], p[4], p[5]), p[2], 2, g, hp)
    e = 0.0
    for i in range(m):
        dv = r[i] - p[1 + i]
        e += 0.5 * p[0] * dv * dv
        g[i] = p[0] * dv
        hp[i, i] = p[0]
    return e, 0


# --------------------------------------------------------------------------- stencil
@njit(**_OPTS)
def _gather(s, q_in, dofs, x):
    for i in range(dofs.shape[1]):
        x[i] = q_in[dofs[s, i]]


@njit(**_OPTS)
def _jtg(jr, g, m, out):
    """``out = jr[:m]^T g``."""
    for c in range(jr.shape[1]):
        acc = 0.0
        for i in range(m):
            acc += jr[i, c] * g[i]
        out[c] = acc


@njit(**_OPTS)
def _weights(ttype, D, g, w):
    """``w = (dr/dD)^T g`` [9]: the gradient of the energy w.r.t. the director products."""
    for a in range(9):
        w[a] = 0.0
    if ttype == POINT:
        den = 1.0 + D[8]
        u = D[6] / den
        t = D[2] * g[0] + D[5] * g[1]
        w[0] = g[0]
        w[2] = g[2] - u * g[0]
        w[3] = g[1]
        w[5] = g[3] - u * g[1]
        w[6] = -t / den
        w[8] = g[4] + t * u / den
    elif ttype == POINT_HARD:
        for i in range(3):
            w[3 * i] = g[2 * i]
            w[3 * i + 1] = g[2 * i + 1]
    else:
        w[0] = g[0]
        w[3] = g[1]
        if ttype == CURVE_HARD:
            w[6] = g[2]


@njit(**_OPTS)
def _add_outer(H, JD, p, q, c):
    """``H += 2 c JD[p] JD[q]^T``: once symmetrised (:func:`_stencil` does it last), ``c (JD[p]
    JD[q]^T + JD[q] JD[p]^T)``, at half the products."""
    k = H.shape[0]
    for a in range(k):
        ca = 2.0 * c * JD[p, a]
        for b in range(k):
            H[a, b] += ca * JD[q, b]


@njit(**_OPTS)
def _add_transport_curvature(D, JD, g, H):
    """The point twist pair's second derivatives w.r.t. ``D`` (``r0 = D11 - D13 D31 / (1 +
    D33)``, ``r1`` with ``D23``), through ``JD``, times ``g``."""
    den = 1.0 + D[8]
    for i, b in ((0, 2), (1, 5)):
        gi = -g[i]
        _add_outer(H, JD, b, 6, gi / den)
        _add_outer(H, JD, b, 8, -gi * D[6] / (den * den))
        _add_outer(H, JD, 6, 8, -gi * D[b] / (den * den))
        _add_outer(H, JD, 8, 8, gi * D[b] * D[6] / (den * den * den))


@njit(**_OPTS)
def _add_cross(FA, JA, FB, JB, w, u, y, H):
    """``2 sum_ij w_ij J(m_i)^T J(n_j)`` into ``H`` (symmetrised by :func:`_stencil`: ``sum_ij
    w_ij (J(m_i)^T J(n_j) + J(n_j)^T J(m_i))``), and the weights ``u[0] = (sum_j w_ij n_j)_i``,
    ``u[1] = (sum_i w_ij m_i)_j`` [9] of each side's frame curvature."""
    k = H.shape[0]
    for i in range(3):
        for c in range(3):
            u[0, 3 * i + c] = (w[3 * i] * FB[c] + w[3 * i + 1] * FB[3 + c]
                               + w[3 * i + 2] * FB[6 + c])
            u[1, 3 * i + c] = w[i] * FA[c] + w[3 + i] * FA[3 + c] + w[6 + i] * FA[6 + c]
            for b in range(k):
                y[b] = 2.0 * (w[3 * i] * JB[c, b] + w[3 * i + 1] * JB[3 + c, b]
                              + w[3 * i + 2] * JB[6 + c, b])
            row = 3 * i + c
            for a in range(k):
                ja = JA[row, a]
                if ja != 0.0:
                    for b in range(k):
                        H[a, b] += ja * y[b]


@njit(**_OPTS)
def _frame_curvature(s, x, side, lay, u, H):
    """Add ``sum_a u_a Hess F_a`` of side ``side``'s frame (exact) to ``H``; ``u`` [9] is
    negated in place in its ``m2``, ``m3`` weights where the frame is turned by pi.  Returns 1
    if the frame is degenerate."""
    kinds, slots, _, sign, _, _ = lay
    if sign[s, side] < 0.0:         # (m1, -m2, -m3): the same curvature with u2, u3 negated
        for i in range(3, 9):
            u[i] = -u[i]
    sl = slots[side]
    kind = kinds[side]
    if kind == ROD_EDGE:
        ia, ib, ts, a1s = _rod_side(s, side, lay)
        st = add_rod_edge_frame_hessian(x, ia, ib, sl[4], ts, a1s, u, H)
    elif kind == TRIANGLE_VERTEX:
        st = add_triangle_vertex_frame_hessian(x, sl[0], sl[1], sl[2], u, H)
    elif kind == TRIANGLE_EDGE:
        st = add_triangle_edge_frame_hessian(x, sl[0], sl[1], sl[2], u, H)
    else:
        st = add_tet_vertex_frame_hessian(x, sl[0], sl[1], sl[2], sl[3], u, H)
    return 0 if st == FRAME_OK else 1


@njit(**_OPTS)
def _second_order(s, x, par, lay, work, m, H):
    """Add ``sum_i g_i Hess r_i`` to ``H`` [k, k]: through ``D``, the products of the frames'
    Jacobians and each frame's own curvature; 1 if a frame is degenerate."""
    ttype = par[0]
    frames, jac = work[1][s], work[2][s]
    g = work[5][s]
    u = work[8][s]
    w = u[2]
    _weights(ttype, frames[2], g, w)
    if ttype == POINT:
        _add_transport_curvature(frames[2], jac[2], g, H)
    _add_cross(frames[0], jac[0], frames[1], jac[1], w, u, work[7][s][0], H)
    for side in range(2):
        if _frame_curvature(s, x, side, lay, u[side], H) != 0:
            return 1
    return 0


@njit(**_OPTS)
def _stencil(s, q_in, dofs, lay, par, work, e_out, g_out, H_out, want_hess):
    """Energy, gradient and Hessian of stencil ``s`` into the output slots; 1 if degenerate."""
    _clear(s, e_out, g_out, H_out, want_hess)
    x = work[0][s]
    _gather(s, q_in, dofs, x)
    ttype = par[0]
    m = N_FEATURES[ttype]
    r, jr, g, hp = work[3][s], work[4][s], work[5][s], work[6][s]
    st = _features(s, x, ttype, lay, work)
    if st == 0:
        e, st = _phi(s, ttype, r, par, g, hp)
    if st != 0:
        e_out[s] = math.inf
        return 1
    e_out[s] = e
    k = x.shape[0]
    for a in range(k):
        for i in range(m):
            g_out[s, a] += jr[i, a] * g[i]
    if not want_hess:
        return 0
    H = H_out[s]                   # zeroed by _clear
    t = work[7][s][0]
    for i in range(m):             # H = jr^T (hp jr), a row of hp jr at a time
        for b in range(k):
            acc = 0.0
            for j in range(m):
                acc += hp[i, j] * jr[j, b]
            t[b] = acc
        for a in range(k):
            ja = jr[i, a]
            if ja != 0.0:
                for b in range(k):
                    H[a, b] += ja * t[b]
    if _second_order(s, x, par, lay, work, m, H) != 0:
        _clear(s, e_out, g_out, H_out, want_hess)
        e_out[s] = math.inf
        return 1
    for a in range(k):
        for b in range(a + 1, k):
            h = 0.5 * (H[a, b] + H[b, a])
            H[a, b] = h
            H[b, a] = h
    return 0


# --------------------------------------------------------------------------- kernels
@njit(**_OPTS)
def _measure(s, q_in, dofs, lay, par, work, update, e_out):
    """Features of stencil ``s`` into ``work`` (``e_out[s]`` 0, or +inf if degenerate); with
    ``update`` also its angle at ``q_in`` into ``par[3][s]`` (a degenerate stencil keeps its
    angle).  Returns 1 if degenerate."""
    x = work[0][s]
    _gather(s, q_in, dofs, x)
    if _features(s, x, par[0], lay, work) != 0:
        e_out[s] = math.inf
        return 1
    e_out[s] = 0.0
    if update:
        r = work[3][s]
        par[3][s] = twist_angle(r[0], r[1], par[3][s], par[4])
    return 0


@njit(cache=True, parallel=True, error_model="numpy")
def joint_terms(op, q_in, dofs, lay, par, work, e_out, g_out, H_out, want_hess):
    """Every connection stencil (``dofs`` int64 [S, k]) at ``q_in``; returns the number of
    degenerate stencils.

    - ``op = EVALUATE``: energy ``e_out`` [S] [J], gradient ``g_out`` [S, k] and (``want_hess``)
      Hessian ``H_out`` [S, k, k];
    - ``op = MEASURE``: features into ``work[3]`` [S, 6] and director products ``D`` into
      ``work[1][:, 2]`` [S, 9]; ``e_out[s]`` 0, or +inf for a degenerate stencil;
    - ``op = UPDATE``: as MEASURE, and the stored angles ``par[3]`` [S] (written) move to the
      angle at ``q_in`` (branch of mode ``par[4]``); a degenerate stencil keeps its angle.
    """
    bad = 0
    for s in prange(dofs.shape[0]):
        if op == EVALUATE:
            bad += _stencil(s, q_in, dofs, lay, par, work, e_out, g_out, H_out, want_hess)
        else:
            bad += _measure(s, q_in, dofs, lay, par, work, op == UPDATE, e_out)
    return bad


@njit(cache=True, error_model="numpy")
def joint_terms_serial(op, q_in, dofs, lay, par, work, e_out, g_out, H_out, want_hess):
    """Serial twin of :func:`joint_terms`."""
    bad = 0
    for s in range(dofs.shape[0]):
        if op == EVALUATE:
            bad += _stencil(s, q_in, dofs, lay, par, work, e_out, g_out, H_out, want_hess)
        else:
            bad += _measure(s, q_in, dofs, lay, par, work, op == UPDATE, e_out)
    return bad
