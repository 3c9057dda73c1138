"""The modified discrete Darboux vector between two three-point frames and its gradient.

Eq. (10) of Umetani et al. 2014 (middle expression, see ``docs/pbd.md`` for the sign) and the
appendix's eqs. (46)-(53), generalised to a constant rotation between the two frames (used by the
end attachments of section 5.1).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .frames import FASTMATH, frame_from_points, frame_rotations

__all__ = ["darboux", "darboux_gradient", "darboux_of", "darboux_all", "omega_rotation_jacobian",
           "omega_and_jacobian", "MIN_ONE_PLUS_TRACE"]

#: Below this value of ``1 + tr Q = 2 (1 + cos theta)`` (0 at a half turn, 4 at no rotation)
#: the relative rotation is within 1e-5 rad of a half turn and Omega is treated as undefined:
#: rounding errors of order 1e-16 in ``Q`` would otherwise give an arbitrary, huge Omega.
MIN_ONE_PLUS_TRACE = 1e-10


@njit(cache=True, error_model="numpy", inline="always")
def _effective_frame(d, rot, kr, has_rot, out):
    """``out = d @ rot[kr]`` when ``has_rot`` (a constant rotation between frames), else a copy."""
    for r in range(3):
        for m in range(3):
            if has_rot:
                out[r, m] = (d[r, 0] * rot[kr, 0, m] + d[r, 1] * rot[kr, 1, m]
                             + d[r, 2] * rot[kr, 2, m])
            else:
                out[r, m] = d[r, m]


@njit(cache=True, error_model="numpy")
def darboux(x, idx, k, rot, kr, has_rot, rest_len, fa, fb, tmp, omega_out):
    """Modified discrete Darboux vector between two three-point frames.

    Frame A from ``x[idx[k, 0:3]]`` (times the constant rotation ``rot[kr]`` when ``has_rot``),
    frame B from ``x[idx[k, 3:6]]``; ``Q = A^T B`` and
    ``Omega = (4 / l) vect(Q) / (1 + tr Q)``, the middle expression of eq. (10).  ``fa``,
    ``fb``, ``tmp`` are [3, 3] scratch.  Returns ``1 + tr Q`` (zero or negative: the frames are
    180 degrees apart and Omega is undefined), or ``-1.0`` when a frame is degenerate.
    """
    le, lu = frame_from_points(x, idx[k, 0], idx[k, 1], idx[k, 2], tmp)
    if le == 0.0 or lu == 0.0:
        return -1.0
    _effective_frame(tmp, rot, kr, has_rot, fa)
    le, lu = frame_from_points(x, idx[k, 3], idx[k, 4], idx[k, 5], fb)
    if le == 0.0 or lu == 0.0:
        return -1.0
    return _omega_from_frames(fa, fb, rest_len, omega_out)


@njit(cache=True, error_model="numpy", inline="always")
def _omega_from_frames(fa, fb, rest_len, omega_out):
    # Q = fa^T fb, entries written out (a helper taking the indices would be compiled once per
    # index pair)
    q00 = fa[0, 0] * fb[0, 0] + fa[1, 0] * fb[1, 0] + fa[2, 0] * fb[2, 0]
    q11 = fa[0, 1] * fb[0, 1] + fa[1, 1] * fb[1, 1] + fa[2, 1] * fb[2, 1]
    q22 = fa[0, 2] * fb[0, 2] + fa[1, 2] * fb[1, 2] + fa[2, 2] * fb[2, 2]
    s = 1.0 + q00 + q11 + q22
    if s <= MIN_ONE_PLUS_TRACE:
        return min(s, 0.0)
    q21 = fa[0, 2] * fb[0, 1] + fa[1, 2] * fb[1, 1] + fa[2, 2] * fb[2, 1]
    q12 = fa[0, 1] * fb[0, 2] + fa[1, 1] * fb[1, 2] + fa[2, 1] * fb[2, 2]
    q02 = fa[0, 0] * fb[0, 2] + fa[1, 0] * fb[1, 2] + fa[2, 0] * fb[2, 2]
    q20 = fa[0, 2] * fb[0, 0] + fa[1, 2] * fb[1, 0] + fa[2, 2] * fb[2, 0]
    q10 = fa[0, 1] * fb[0, 0] + fa[1, 1] * fb[1, 0] + fa[2, 1] * fb[2, 0]
    q01 = fa[0, 0] * fb[0, 1] + fa[1, 0] * fb[1, 1] + fa[2, 0] * fb[2, 1]
    f = 2.0 / (rest_len * s)
    omega_out[0] = f * (q21 - q12)
    omega_out[1] = f * (q02 - q20)
    omega_out[2] = f * (q10 - q01)
    return s


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def omega_rotation_jacobian(q00, q01, q02, q10, q11, q12, q20, q21, q22, rest_len):
    """Omega of ``Q = A^T B`` (eq. 10, middle expression) and its derivative with respect to the
    relative rotation of the frames, without allocation.

    When frame A turns by the small rotation ``dtheta_A`` and frame B by ``dtheta_B`` (world
    axes), ``dQ_mn = (dtheta_A - dtheta_B) . (A_m x B_n)``; in A's axes ``A_m x B_n`` has the
    components ``sum_k eps_mkj Q_kn``, which gives
    ``dOmega = M dphi``, ``M = f (Q - tr(Q) I - N N^T / S)``, with ``dphi`` the components of
    ``dtheta_A - dtheta_B`` in A's axes, ``S = 1 + tr Q``, ``N = 2 vect(Q)`` and
    ``f = 2 / (l S)``.  Returns ``(S, Omega_0, Omega_1, Omega_2, M_00, M_01, ..., M_22)``
    (``M`` row by row, [1/m]); when ``S <= MIN_ONE_PLUS_TRACE`` (frames about 180 degrees apart,
    Omega undefined) only ``S`` is meaningful and the rest is zero.
    """
    s = 1.0 + q00 + q11 + q22
    if not s > MIN_ONE_PLUS_TRACE:
        return s, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    f = 2.0 / (s * rest_len)
    n0 = q21 - q12
    n1 = q02 - q20
    n2 = q10 - q01
    g = f / s
    tr = f * (s - 1.0)
    gn0 = g * n0
    gn1 = g * n1
    gn2 = g * n2
    return (s, f * n0, f * n1, f * n2,
            f * q00 - tr - gn0 * n0, f * q01 - gn0 * n1, f * q02 - gn0 * n2,
            f * q10 - gn1 * n0, f * q11 - tr - gn1 * n1, f * q12 - gn1 * n2,
            f * q20 - gn2 * n0, f * q21 - gn2 * n1, f * q22 - tr - gn2 * n2)


@njit(cache=True, error_model="numpy", inline="always")
def _frame_adjoint(x, i0, i1, i2, d, le, lu, ucx, ucy, ucz, ubx, uby, ubz, uax, uay, uaz,
                   slot0, row, grad):
    """Pull back covectors on a frame's columns to its three points.

    ``(uc, ub, ua)`` are the covectors on the columns ``[c, b, a]`` of frame ``d``; writes
    ``sum_m u_m^T d(column m)/dp_k`` to ``grad[slot0 + k, row]`` for k = 0, 1, 2, using
    ``u.db = -(w_k x P_b u) . dp / lu`` with ``w_k`` the edge vectors of the cross product and
    ``u.da = s_k (P_a u) . dp / le`` (``s = -1, 1, 0``); ``dc = -[a] db + [b] da``.
    """
    ax, ay, az = d[0, 2], d[1, 2], d[2, 2]
    bx, by, bz = d[0, 1], d[1, 1], d[2, 1]
    # covector on b: u_b + a x u_c ; on a: u_a + u_c x b
    vbx = ubx + (ay * ucz - az * ucy)
    vby = uby + (az * ucx - ax * ucz)
    vbz = ubz + (ax * ucy - ay * ucx)
    vax = uax + (ucy * bz - ucz * by)
    vay = uay + (ucz * bx - ucx * bz)
    vaz = uaz + (ucx * by - ucy * bx)
    t = bx * vbx + by * vby + bz * vbz
    pbx = (vbx - bx * t) / lu
    pby = (vby - by * t) / lu
    pbz = (vbz - bz * t) / lu
    t = ax * vax + ay * vay + az * vaz
    pax = (vax - ax * t) / le
    pay = (vay - ay * t) / le
    paz = (vaz - az * t) / le
    p0x, p0y, p0z = x[i0, 0], x[i0, 1], x[i0, 2]
    p1x, p1y, p1z = x[i1, 0], x[i1, 1], x[i1, 2]
    p2x, p2y, p2z = x[i2, 0], x[i2, 1], x[i2, 2]
    # k = 0: w = p2 - p1, s = -1
    wx, wy, wz = p2x - p1x, p2y - p1y, p2z - p1z
    grad[slot0, row, 0] = -(wy * pbz - wz * pby) - pax
    grad[slot0, row, 1] = -(wz * pbx - wx * pbz) - pay
    grad[slot0, row, 2] = -(wx * pby - wy * pbx) - paz
    # k = 1: w = p0 - p2, s = +1
    wx, wy, wz = p0x - p2x, p0y - p2y, p0z - p2z
    grad[slot0 + 1, row, 0] = -(wy * pbz - wz * pby) + pax
    grad[slot0 + 1, row, 1] = -(wz * pbx - wx * pbz) + pay
    grad[slot0 + 1, row, 2] = -(wx * pby - wy * pbx) + paz
    # k = 2: w = p1 - p0, s = 0
    wx, wy, wz = p1x - p0x, p1y - p0y, p1z - p0z
    grad[slot0 + 2, row, 0] = -(wy * pbz - wz * pby)
    grad[slot0 + 2, row, 1] = -(wz * pbx - wx * pbz)
    grad[slot0 + 2, row, 2] = -(wx * pby - wy * pbx)


@njit(cache=True, error_model="numpy", inline="always")
def darboux_gradient(x, idx, k, rot, kr, has_rot, rest_len, fa, fb, tmp, uv, omega, grad):
    """Omega (into ``omega[0:3]``) and its gradient ``grad[slot, i, s] = dOmega_i / dx_p[s]``.

    The element's points are ``p = idx[k, slot]`` (frame A: slots 0-2, frame B: slots 3-5), its
    constant rotation ``rot[kr]`` (used when ``has_rot``).  ``uv`` is [2, 3, 3] scratch,
    ``grad`` is [6, 3, 3].  The gradient is assembled in adjoint form: for each component ``i``
    the covectors on the frame columns, ``u_m = -f ((N_i / S) b_m + eps_imn b_n)`` (frame A;
    symmetric for B), are pulled back to the points by :func:`_frame_adjoint`.  This is the
    chain rule of the appendix's eqs. (47)-(53) without forming the 3x3 frame Jacobians.  Points
    shared by both frames (an interior orientation element shares its middle vertex) have their
    gradient summed into the first slot that holds them; the later slot is zeroed.  Returns
    ``1 + tr Q`` as :func:`darboux` does.
    """
    i0, i1, i2 = idx[k, 0], idx[k, 1], idx[k, 2]
    i3, i4, i5 = idx[k, 3], idx[k, 4], idx[k, 5]
    le_a, lu_a = frame_from_points(x, i0, i1, i2, tmp)
    if le_a == 0.0 or lu_a == 0.0:
        return -1.0
    _effective_frame(tmp, rot, kr, has_rot, fa)
    le_b, lu_b = frame_from_points(x, i3, i4, i5, fb)
    if le_b == 0.0 or lu_b == 0.0:
        return -1.0
    sq = _omega_from_frames(fa, fb, rest_len, omega)
    if sq <= 0.0:
        return sq
    f = 2.0 / (rest_len * sq)
    # first gradient slots of frames A and B (0 and 3), read from the array shape so that they
    # are not compile-time constants: one compiled _frame_adjoint serves both frames
    slot_a = idx.shape[1] - 6
    slot_b = slot_a + 3
    for i in range(3):
        ns = omega[i] / f / sq  # N_i / S
        # (m, n, eps_imn) for the two columns m != i; column i has only the trace term
        m1 = (i + 1) % 3
        m2 = (i + 2) % 3
        # frame A, effective columns: u_m = -f (ns b_m + eps_{i m n} b_n), n the third index
        for r in range(3):
            uv[0, i, r] = -f * (ns * fb[r, i])
            uv[0, m1, r] = -f * (ns * fb[r, m1] + fb[r, m2])
            uv[0, m2, r] = -f * (ns * fb[r, m2] - fb[r, m1])
        if has_rot:
            for r in range(3):
                u0 = uv[0, 0, r]
                u1 = uv[0, 1, r]
                u2 = uv[0, 2, r]
                for q in range(3):
                    uv[1, q, r] = rot[kr, q, 0] * u0 + rot[kr, q, 1] * u1 + rot[kr, q, 2] * u2
            _frame_adjoint(x, i0, i1, i2, tmp, le_a, lu_a,
                           uv[1, 0, 0], uv[1, 0, 1], uv[1, 0, 2], uv[1, 1, 0], uv[1, 1, 1],
                           uv[1, 1, 2], uv[1, 2, 0], uv[1, 2, 1], uv[1, 2, 2], slot_a, i, grad)
        else:
            _frame_adjoint(x, i0, i1, i2, tmp, le_a, lu_a,
                           uv[0, 0, 0], uv[0, 0, 1], uv[0, 0, 2], uv[0, 1, 0], uv[0, 1, 1],
                           uv[0, 1, 2], uv[0, 2, 0], uv[0, 2, 1], uv[0, 2, 2], slot_a, i, grad)
        # frame B: v_n = -f (ns a~_n + eps_{i m n} a~_m), m the third index
        for r in range(3):
            uv[1, i, r] = -f * (ns * fa[r, i])
            uv[1, m1, r] = -f * (ns * fa[r, m1] - fa[r, m2])
            uv[1, m2, r] = -f * (ns * fa[r, m2] + fa[r, m1])
        _frame_adjoint(x, i3, i4, i5, fb, le_b, lu_b,
                       uv[1, 0, 0], uv[1, 0, 1], uv[1, 0, 2], uv[1, 1, 0], uv[1, 1, 1],
                       uv[1, 1, 2], uv[1, 2, 0], uv[1, 2, 1], uv[1, 2, 2], slot_b, i, grad)
    for slot in range(1, 6):
        for prev in range(slot):
            if idx[k, slot] == idx[k, prev]:
                for i in range(3):
                    for s in range(3):
                        grad[prev, i, s] += grad[slot, i, s]
                        grad[slot, i, s] = 0.0
                break
    return sq


def omega_and_jacobian(x, idx, rest_len, rot=None):
    """Omega and its rotation Jacobian for many elements at once, in NumPy (set-up code).

    ``idx`` [n, 6] (frame A: points 0-2, frame B: points 3-5), ``rest_len`` [n], ``rot``
    [n, 3, 3] or None.  Returns ``(omega, m, fa, fb, fra, frb, ok)``: Omega [n, 3]; ``M`` of
    :func:`omega_rotation_jacobian` [n, 3, 3] (rows in the effective frame A's axes); the frames
    [n, 3, 3]; the :func:`~strandlab.geometry.frames.frame_rotations` tuples of A and B; and
    ``ok`` [n], false where Omega is undefined (a degenerate frame, or frames about 180 degrees
    apart), where ``omega`` and ``m`` are NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    idx = np.asarray(idx)
    fra = frame_rotations(x[idx[:, 0]], x[idx[:, 1]], x[idx[:, 2]])
    frb = frame_rotations(x[idx[:, 3]], x[idx[:, 4]], x[idx[:, 5]])
    fa = fra[0] if rot is None else fra[0] @ rot
    fb = frb[0]
    q = np.einsum("nri,nrj->nij", fa, fb)
    s = 1.0 + np.trace(q, axis1=1, axis2=2)
    ok = (fra[1] > 0.0) & (frb[1] > 0.0) & (s > MIN_ONE_PLUS_TRACE)
    s = np.where(ok, s, 1.0)
    f = 2.0 / (np.asarray(rest_len, dtype=np.float64) * s)
    n = np.stack([q[:, 2, 1] - q[:, 1, 2], q[:, 0, 2] - q[:, 2, 0], q[:, 1, 0] - q[:, 0, 1]], -1)
    m = f[:, None, None] * (q - (s - 1.0)[:, None, None] * np.eye(3)
                            - n[:, :, None] * n[:, None, :] / s[:, None, None])
    omega = np.where(ok[:, None], f[:, None] * n, np.nan)
    m = np.where(ok[:, None, None], m, np.nan)
    return omega, m, fa, fb, fra, frb, ok


def darboux_all(x, idx, rest_len, omega_out):
    """Omega of many elements: ``idx`` [n, 6], ``rest_len`` [n]; writes ``omega_out`` [n, 3].

    Raises nothing; elements whose frames are degenerate or 180 degrees apart get NaN.  NumPy
    (no compilation), the same arithmetic as :func:`darboux` up to rounding.
    """
    if len(idx):
        omega_out[...] = omega_and_jacobian(x, idx, rest_len)[0]


def darboux_of(points6, rest_len=1.0, rot=None):
    """Omega for six points (frame A then frame B), shape [6, 3]; Python convenience."""
    x = np.ascontiguousarray(np.array(points6, dtype=np.float64))
    idx = np.arange(6, dtype=np.int64).reshape(1, 6)
    out = np.zeros(3)
    fa = np.zeros((3, 3))
    fb = np.zeros((3, 3))
    tmp = np.zeros((3, 3))
    r = np.eye(3) if rot is None else np.ascontiguousarray(rot, dtype=np.float64)
    sq = darboux(x, idx, 0, r.reshape(1, 3, 3), 0, rot is not None, float(rest_len), fa, fb,
                 tmp, out)
    if sq <= 0.0:
        raise ValueError("frames are degenerate or 180 degrees apart: Omega is undefined")
    return out
