"""The modified discrete Darboux vector between two three-point frames and its gradient.

Eq. (10) of Umetani et al. 2014 (middle expression, see ``docs/pbd.md`` for the sign) and the
appendix's eqs. (46)-(53), generalised to a constant rotation between the two frames (used by the
end attachments of section 5.1).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .frames import frame_from_points, frame_jacobians

__all__ = ["darboux", "darboux_gradient", "darboux_of", "darboux_all"]


@njit(cache=True)
def _effective_frame(d, rot, has_rot, out):
    """``out = d @ rot`` when ``has_rot`` (a constant rotation between frames), else a copy."""
    for r in range(3):
        for m in range(3):
            if has_rot:
                out[r, m] = d[r, 0] * rot[0, m] + d[r, 1] * rot[1, m] + d[r, 2] * rot[2, m]
            else:
                out[r, m] = d[r, m]


@njit(cache=True)
def darboux(x, idx, rot, has_rot, rest_len, fa, fb, tmp, omega_out):
    """Modified discrete Darboux vector between two three-point frames.

    Frame A from ``x[idx[0:3]]`` (times the constant rotation ``rot`` when ``has_rot``), frame B
    from ``x[idx[3:6]]``; ``Q = A^T B`` and ``Omega = (4 / l) vect(Q) / (1 + tr Q)``, the middle
    expression of eq. (10).  ``fa``, ``fb``, ``tmp`` are [3, 3] scratch.  Returns
    ``1 + tr Q`` (zero or negative: the frames are 180 degrees apart and Omega is undefined), or
    ``-1.0`` when a frame is degenerate.
    """
    le, lu = frame_from_points(x, idx[0], idx[1], idx[2], tmp)
    if le == 0.0 or lu == 0.0:
        return -1.0
    _effective_frame(tmp, rot, has_rot, fa)
    le, lu = frame_from_points(x, idx[3], idx[4], idx[5], fb)
    if le == 0.0 or lu == 0.0:
        return -1.0
    return _omega_from_frames(fa, fb, rest_len, omega_out)


@njit(cache=True)
def _q(fa, fb, m, n):
    return fa[0, m] * fb[0, n] + fa[1, m] * fb[1, n] + fa[2, m] * fb[2, n]


@njit(cache=True)
def _omega_from_frames(fa, fb, rest_len, omega_out):
    s = 1.0 + _q(fa, fb, 0, 0) + _q(fa, fb, 1, 1) + _q(fa, fb, 2, 2)
    if s <= 0.0:
        return s
    f = 2.0 / (rest_len * s)
    omega_out[0] = f * (_q(fa, fb, 2, 1) - _q(fa, fb, 1, 2))
    omega_out[1] = f * (_q(fa, fb, 0, 2) - _q(fa, fb, 2, 0))
    omega_out[2] = f * (_q(fa, fb, 1, 0) - _q(fa, fb, 0, 1))
    return s


@njit(cache=True)
def darboux_gradient(x, idx, rot, has_rot, rest_len, fa, fb, tmp, ja, jb, omega, grad):
    """Omega (into ``omega``) and its gradient ``grad[slot, i, s] = dOmega_i / dx_{idx[slot]}[s]``.

    ``ja``, ``jb`` are [3, 3, 3, 3] scratch for the frame Jacobians, ``grad`` is [6, 3, 3].
    Points shared by both frames (an interior orientation element shares the middle vertex)
    have their gradient summed into the first slot that holds them; the later slot is zeroed.
    Returns ``1 + tr Q`` as :func:`darboux` does.
    """
    le_a, lu_a = frame_from_points(x, idx[0], idx[1], idx[2], tmp)
    if le_a == 0.0 or lu_a == 0.0:
        return -1.0
    frame_jacobians(x, idx[0], idx[1], idx[2], tmp, le_a, lu_a, ja)
    _effective_frame(tmp, rot, has_rot, fa)
    if has_rot:
        # J~^m = sum_r rot[r, m] J^r, in place per point and component
        for k in range(3):
            for r in range(3):
                for s in range(3):
                    j0 = ja[k, 0, r, s]
                    j1 = ja[k, 1, r, s]
                    j2 = ja[k, 2, r, s]
                    for m in range(3):
                        tmp[0, m] = j0 * rot[0, m] + j1 * rot[1, m] + j2 * rot[2, m]
                    ja[k, 0, r, s] = tmp[0, 0]
                    ja[k, 1, r, s] = tmp[0, 1]
                    ja[k, 2, r, s] = tmp[0, 2]
    le_b, lu_b = frame_from_points(x, idx[3], idx[4], idx[5], fb)
    if le_b == 0.0 or lu_b == 0.0:
        return -1.0
    frame_jacobians(x, idx[3], idx[4], idx[5], fb, le_b, lu_b, jb)
    sq = _omega_from_frames(fa, fb, rest_len, omega)
    if sq <= 0.0:
        return sq
    f = 2.0 / (rest_len * sq)
    # N_i = Q_kj - Q_jk with (i, j, k) cyclic; Omega_i = f N_i; dOmega_i = f (dN_i - N_i dS / S)
    n0 = omega[0] / f
    n1 = omega[1] / f
    n2 = omega[2] / f
    for slot in range(6):
        k = slot % 3
        for s in range(3):
            # dQ[m][n] for this point and coordinate s
            for m in range(3):
                for n in range(3):
                    v = 0.0
                    if slot < 3:
                        for r in range(3):
                            v += fb[r, n] * ja[k, m, r, s]
                    else:
                        for r in range(3):
                            v += fa[r, m] * jb[k, n, r, s]
                    tmp[m, n] = v
            ds = tmp[0, 0] + tmp[1, 1] + tmp[2, 2]
            grad[slot, 0, s] = f * ((tmp[2, 1] - tmp[1, 2]) - n0 * ds / sq)
            grad[slot, 1, s] = f * ((tmp[0, 2] - tmp[2, 0]) - n1 * ds / sq)
            grad[slot, 2, s] = f * ((tmp[1, 0] - tmp[0, 1]) - n2 * ds / sq)
    for slot in range(1, 6):
        for prev in range(slot):
            if idx[slot] == idx[prev]:
                for i in range(3):
                    for s in range(3):
                        grad[prev, i, s] += grad[slot, i, s]
                        grad[slot, i, s] = 0.0
                break
    return sq


@njit(cache=True)
def darboux_all(x, idx, rest_len, omega_out):
    """Omega of many elements: ``idx`` [n, 6], ``rest_len`` [n]; writes ``omega_out`` [n, 3].

    Raises nothing; elements whose frames are degenerate or 180 degrees apart get NaN.
    """
    fa = np.zeros((3, 3))
    fb = np.zeros((3, 3))
    tmp = np.zeros((3, 3))
    rot = np.eye(3)
    for k in range(idx.shape[0]):
        sq = darboux(x, idx[k], rot, False, rest_len[k], fa, fb, tmp, omega_out[k])
        if sq <= 0.0:
            omega_out[k, 0] = np.nan
            omega_out[k, 1] = np.nan
            omega_out[k, 2] = np.nan


def darboux_of(points6, rest_len=1.0, rot=None):
    """Omega for six points (frame A then frame B), shape [6, 3]; Python convenience."""
    x = np.ascontiguousarray(np.array(points6, dtype=np.float64))
    idx = np.arange(6, dtype=np.int64)
    out = np.zeros(3)
    fa = np.zeros((3, 3))
    fb = np.zeros((3, 3))
    tmp = np.zeros((3, 3))
    r = np.eye(3) if rot is None else np.ascontiguousarray(rot, dtype=np.float64)
    sq = darboux(x, idx, r, rot is not None, float(rest_len), fa, fb, tmp, out)
    if sq <= 0.0:
        raise ValueError("frames are degenerate or 180 degrees apart: Omega is undefined")
    return out
