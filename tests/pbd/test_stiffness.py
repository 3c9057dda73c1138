"""From material stiffness to solver parameters (pbd/stiffness.py).

References (module docstring of stiffness.py, eq. 11 of Umetani et al. 2014): the XPBD
compliance of a bending-twisting component is ``1 / (K_ii l)`` [1/(N m)] (energy
``l/2 K (Omega - Omega_rest)^2``), a zero stiffness switches the component off
(``FREE_COMPLIANCE``); the effective inverse mass of an element is the diagonal of
``G W G^T``, ``sum_b w_b |dOmega_i / dp_b|^2``, here with the gradient from central differences
of eq. (10) (``h = 1e-6`` on unit-size inputs: relative error about 1e-10, rtol 1e-7).
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from helpers import fd_jacobian, omega_ref
from strandlab.pbd.constraints import FREE_COMPLIANCE
from strandlab.pbd.stiffness import effective_inverse_mass, orientation_compliance


def _elements():
    """Two rod elements sharing a vertex each: points [p0, p1, g0, p2, g1, p3, g2]."""
    x = np.array([[0.0, 0, 0], [0.9, 0.2, -0.1], [0.5, 0.1, 0.8], [1.5, 0.9, 0.3],
                  [1.3, 0.4, 1.0], [2.2, 1.0, 0.9], [1.9, 1.3, 1.4]])
    idx = np.array([[0, 1, 2, 1, 3, 4], [1, 3, 4, 3, 5, 6]], dtype=np.int64)
    rest_len = np.array([0.95, 1.1])
    return x, idx, rest_len


def test_effective_inverse_mass_is_the_diagonal_of_g_w_gt():
    x, idx, rest_len = _elements()
    w = 1.0 / np.random.default_rng(12).uniform(0.2, 3.0, size=len(x))
    w[0] = 0.0
    for rot in (None, Rotation.from_rotvec([0.1, -0.2, 0.05]).as_matrix()):
        rots = None if rot is None else np.stack([rot, rot])
        got = effective_inverse_mass(x, w, idx, rest_len, rots)
        assert got.shape == (2, 3)
        for k in range(2):
            pts = sorted(set(idx[k]))
            jac = fd_jacobian(lambda y, k=k, rot=rot: omega_ref(y[idx[k]], rest_len[k], rot), x,
                              pts, 1e-6)
            ref = sum(w[p] * np.sum(jac[j] ** 2, axis=1) for j, p in enumerate(pts))
            assert got[k] == pytest.approx(ref, rel=1e-7)


def test_orientation_compliance_is_one_over_stiffness_times_length():
    stiffness = np.array([[2.0, 3.0, 0.5], [1e-3, 0.0, 4.0]])
    rest_len = np.array([0.1, 0.02])
    c = orientation_compliance(stiffness, rest_len)
    assert c[0] == pytest.approx(1.0 / (stiffness[0] * rest_len[0]), rel=1e-15)
    assert c[1, 0] == pytest.approx(1.0 / (1e-3 * 0.02), rel=1e-15)
    assert c[1, 1] == FREE_COMPLIANCE
    assert c[1, 2] == pytest.approx(1.0 / (4.0 * 0.02), rel=1e-15)
