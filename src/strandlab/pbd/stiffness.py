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

from ..geometry.darboux import omega_and_jacobian
from .constraints import FREE_COMPLIANCE

__all__ = ["effective_inverse_mass", "alphas_from_stiffness", "orientation_compliance"]


def effective_inverse_mass(x, inv_mass, idx, rest_len, rot=None) -> np.ndarray:
    """Diagonal of ``G W G^T`` per element at configuration ``x``, shape [n, 3] (0 where Omega
    is undefined).

    ``G = dOmega/dp`` assembled as in :func:`~strandlab.pbd.constraints.project_orientation`
    (``dOmega = M (dtheta_A - dtheta_B)``, each frame's rotation linear in its points' moves),
    in NumPy: set-up code, which then needs no compilation.  Points in both frames (an interior
    element's shared vertex) have their gradients summed.
    """
    n = len(idx)
    out = np.zeros((n, 3))
    if n == 0:
        return out
    idx = np.asarray(idx)
    w = np.asarray(inv_mass, dtype=np.float64)
    rot = None if rot is None else np.asarray(rot, dtype=np.float64)
    _, m, _, _, fra, frb, ok = omega_and_jacobian(x, idx, rest_len, rot)
    m = np.where(ok[:, None, None], m, 0.0)
    ma = m if rot is None else m @ np.transpose(rot, (0, 2, 1))  # rows in frame A's own axes
    q = np.einsum("nri,nrj->nij", fra[0] if rot is None else fra[0] @ rot, frb[0])
    grads = _frame_gradients(ma, *fra) + [-g for g in _frame_gradients(m @ q, *frb)]
    for a in range(6):
        for b in range(a + 1, 6):
            same = idx[:, a] == idx[:, b]
            grads[a] = grads[a] + np.where(same[:, None, None], grads[b], 0.0)
            grads[b] = np.where(same[:, None, None], 0.0, grads[b])
    for a in range(6):
        out += w[idx[:, a], None] * np.sum(grads[a] ** 2, axis=2)
    return np.where(ok[:, None], out, 0.0)


def _frame_gradients(m, d, il, c, ih):
    """Gradient rows [n, 3 (component), 3 (xyz)] of the three points of frames ``d`` [n, 3, 3]
    for the rotation Jacobian rows ``m`` [n, 3, 3] in the frame's axes (see
    :func:`~strandlab.geometry.frames.frame_rotation`)."""
    il, c, ih = il[:, None], c[:, None], ih[:, None]
    x1 = il * m[:, :, 1]
    y1 = -il * m[:, :, 0] - c * m[:, :, 2]
    y2 = ih * m[:, :, 2]
    d1, d2 = d[:, None, :, 0], d[:, None, :, 1]
    g1 = x1[:, :, None] * d1 + y1[:, :, None] * d2
    g2 = y2[:, :, None] * d2
    return [-(g1 + g2), g1, g2]


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
