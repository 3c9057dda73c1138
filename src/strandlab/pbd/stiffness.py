"""From physical stiffness (E, G, section) to the PBD model's parameters.

Two ways to make a position-based rod as stiff as a material says:

*XPBD compliance* (``stiffness="xpbd"``).  The bending-twisting energy of an orientation element
is ``V = l/2 sum_i K_ii (Omega_i - Omega_rest_i)^2`` (eq. 11) with ``K = (E I1, E I2, G J)``, so
its compliance is ``1 / (K_ii l)`` per component; edges get ``L / (E A)``.  The result of a step
does not depend on the iteration count once it has converged.

*Alphas* (``stiffness="alpha"``, the paper's form).  Each projection moves the Darboux vector a
fraction ``alpha`` of the way to its rest value (eq. 21).  For an isolated constraint with
effective inverse mass ``w = (G W G^T)_ii`` at rest, one implicit step with stiffness ``K`` and
step ``h`` removes the fraction ``f = K l h^2 w / (1 + K l h^2 w)`` of a deviation; ``n`` relaxed
projections remove ``1 - (1 - alpha)^n``.  Equating the two gives
``alpha = 1 - (1 - f)^(1 / n)``, which is what :func:`alphas_from_stiffness` returns.  The
mapping matches the continuum stiffness-to-inertia ratio of one element per step; with many
coupled elements Gauss-Seidel converges more slowly, so the alpha rod is softer than the XPBD
rod at low iteration counts, as any position-based rod is.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..geometry.darboux import darboux_gradient
from .constraints import FREE_COMPLIANCE

__all__ = ["effective_inverse_mass", "alphas_from_stiffness", "orientation_compliance"]


@njit(cache=True)
def _w_eff(x, w, idx, rot, has_rot, rest_len, out):
    fa = np.zeros((3, 3))
    fb = np.zeros((3, 3))
    tmp = np.zeros((3, 3))
    uv = np.zeros((2, 3, 3))
    grad = np.zeros((6, 3, 3))
    om = np.zeros(3)
    for k in range(idx.shape[0]):
        sq = darboux_gradient(x, idx, k, rot, k, has_rot, rest_len[k], fa, fb, tmp, uv, om, grad)
        for i in range(3):
            v = 0.0
            if sq > 0.0:
                for slot in range(6):
                    wb = w[idx[k, slot]]
                    for s in range(3):
                        v += wb * grad[slot, i, s] * grad[slot, i, s]
            out[k, i] = v


def effective_inverse_mass(x, inv_mass, idx, rest_len, rot=None) -> np.ndarray:
    """Diagonal of ``G W G^T`` per element at configuration ``x``, shape [n, 3]."""
    n = len(idx)
    out = np.zeros((n, 3))
    if n == 0:
        return out
    has_rot = rot is not None
    r = np.ascontiguousarray(rot) if has_rot else np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
    _w_eff(np.ascontiguousarray(x), np.ascontiguousarray(inv_mass), np.ascontiguousarray(idx), r,
           has_rot, np.ascontiguousarray(rest_len), out)
    return out


def orientation_compliance(stiffness: np.ndarray, rest_len: np.ndarray) -> np.ndarray:
    """XPBD compliance ``1 / (K l)`` per component [1/(N m)]; zero stiffness gives 'free'."""
    k = np.asarray(stiffness, dtype=np.float64) * np.asarray(rest_len)[:, None]
    with np.errstate(divide="ignore"):
        c = np.where(k > 0.0, 1.0 / np.where(k > 0.0, k, 1.0), FREE_COMPLIANCE)
    return c


def alphas_from_stiffness(stiffness, rest_len, w_eff, h: float, iterations: int) -> np.ndarray:
    """Alphas in [0, 1] equivalent to stiffness ``K`` [N m^2] for step ``h`` and ``iterations``.

    ``stiffness``, ``w_eff``: [n, 3]; ``rest_len``: [n].  See the module docstring.
    """
    kk = np.asarray(stiffness) * np.asarray(rest_len)[:, None] * h * h * np.asarray(w_eff)
    f = kk / (1.0 + kk)
    return 1.0 - (1.0 - f) ** (1.0 / max(1, int(iterations)))
