"""Per-stencil energies, gradients and Hessians of discrete elastic rods against finite
differences of the independent NumPy reference (``der_reference.py``).

Derivatives are compared after scaling each slot by its length scale ``L`` (``l0`` for
``x_{i-1}``, ``min(l0, l1)`` for ``x_i``, ``l1`` for ``x_{i+1}``, 1 for angles): ``L g`` and
``L H L`` are then of one magnitude even when one edge is 1e-6 of the other, and errors are
measured relative to their largest entry.  Tolerances:

- gradient vs central differences of E, step 1e-5 L: truncation ~(1e-5)^2, rounding
  ~1e-16 / 1e-5; measured errors are below 1e-9 (6e-9 at the 170 degree turn, where E varies
  on the scale 1 + cos(turn) = 0.015), asserted at 1e-7;
- Hessian vs second differences of E, steps 1e-4 L: truncation ~1e-8, rounding
  ~1e-16 / 1e-8; measured below 2e-7 (2e-6 at the 170 degree turn), asserted at 1e-5;
- Hessian vs central differences of the analytic gradient, evaluated at q +- h with the frames
  and reference twist transported from the base point (the exact functions the Newton step
  sees): only the symmetric part of that Jacobian is a Hessian (the rest is the holonomy of
  composing two transports, antisymmetric and first order in h, here up to half the largest
  entry); measured below 1e-9, asserted at 1e-6.

A wrong sign, factor or missing term in any derivative changes entries by O(1) of the scaled
largest entry (checked by breaking each in turn), far above these tolerances.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from der_reference import (
    Base,
    bend_energy,
    rigid_velocity,
    stencil_parts,
    stretch_energy,
    twist_energy,
    unit,
)
from strandlab.rods import kernels as K

K1, K2, KT, LT = 1.3, 0.7, 0.9, 0.8  # stiffnesses [N m^2] and Voronoi length [m] (unequal k1, k2)


# --------------------------------------------------------------------------------------------
# configurations
# --------------------------------------------------------------------------------------------
def _stencil(l0, l1, turn, th0, th1, rng, plane_tilt=0.0):
    """Vertices with edges of lengths l0, l1 turning by ``turn`` [rad], randomly rotated and
    moved; returns the 11-slot vector."""
    e0 = np.array([l0, 0.0, 0.0])
    e1 = l1 * np.array([np.cos(turn), np.sin(turn) * np.cos(plane_tilt),
                        np.sin(turn) * np.sin(plane_tilt)])
    R = Rotation.random(random_state=rng).as_matrix()
    c = rng.normal(size=3)
    x1 = c
    x0 = c - R @ e0
    x2 = c + R @ e1
    return np.r_[x0, th0, x1, th1, x2]


def _config(name, seed=0):
    """``(y, base, kbar, taubar)`` of a named configuration."""
    rng = np.random.default_rng(seed)
    near = 0.0
    if name == "straight":
        y = _stencil(1.0, 0.7, 0.0, 0.2, -0.4, rng)
    elif name == "gentle":
        y = _stencil(1.0, 1.2, np.radians(10.0), 0.1, 0.3, rng)
    elif name == "sharp":
        y = _stencil(0.9, 1.1, np.radians(170.0), -0.3, 0.5, rng)
    elif name == "twisted":
        y = _stencil(1.0, 0.8, np.radians(40.0), 0.3, 2.9, rng)
        near = 2.0 * np.pi  # the reference twist lives on another 2 pi branch
    elif name == "short_edge":
        y = _stencil(1.0, 1e-6, np.radians(60.0), 0.4, -0.2, rng)
    elif name.startswith("random"):
        y = np.r_[rng.normal(size=3), rng.normal(), rng.normal(size=3), rng.normal(),
                  rng.normal(size=3)]
    else:
        raise KeyError(name)
    base = Base(y, rng.normal(size=(2, 3)), near=near)
    kbar = rng.normal(scale=0.5, size=4)
    taubar = near + rng.normal(scale=0.5)
    return y, base, kbar, taubar


CONFIGS = ["straight", "gentle", "sharp", "twisted", "short_edge", "random1", "random2",
           "random3"]


def _scales(y):
    l0 = np.linalg.norm(y[4:7] - y[0:3])
    l1 = np.linalg.norm(y[8:11] - y[4:7])
    return np.r_[[l0] * 3, 1.0, [min(l0, l1)] * 3, 1.0, [l1] * 3]


# --------------------------------------------------------------------------------------------
# the kernels on one stencil
# --------------------------------------------------------------------------------------------
DOFS = np.arange(11, dtype=np.int64)[None, :]
EDGES = np.array([[0, 1]], dtype=np.int64)


def _eval(kind, y, a1, a2, m_ref, kbar, taubar, want_hess=True):
    """Energy, gradient [11], Hessian [11, 11] of one stencil by the kernel of ``kind``."""
    e, g, H = np.zeros(1), np.zeros((1, 11)), np.zeros((1, 11, 11) if want_hess else (0, 11, 11))
    y = np.ascontiguousarray(y, dtype=float)
    a1 = np.ascontiguousarray(a1, dtype=float)
    a2 = np.ascontiguousarray(a2, dtype=float)
    mr = np.array([m_ref])
    kb = np.array([kbar], dtype=float)
    tb = np.array([taubar])
    lt = np.array([LT])
    kben = np.array([[K1, K2]])
    ktw = np.array([KT])
    if kind == "bend":
        bad = K.bend_terms(y, DOFS, EDGES, a1, a2, kb, lt, kben, e, g, H, want_hess)
    elif kind == "twist":
        bad = K.twist_terms(y, DOFS, mr, tb, lt, ktw, e, g, H, want_hess)
    else:
        bad = K.bend_twist_terms(y, DOFS, EDGES, a1, a2, mr, kb, tb, lt, kben, ktw, e, g, H,
                                 want_hess)
    assert bad == 0
    return e[0], g[0], (H[0] if want_hess else None)


def _ref_energy(kind, y, base, kbar, taubar):
    eb = bend_energy(y, base, kbar, LT, K1, K2) if kind != "twist" else 0.0
    et = twist_energy(y, base, taubar, LT, KT) if kind != "bend" else 0.0
    return eb + et


def _eval_at(kind, y, base, kbar, taubar):
    """Kernel at ``y`` with the frames and reference twist transported from ``base``."""
    _, m, _, a1, a2 = stencil_parts(y, base)
    return _eval(kind, y, a1, a2, m, kbar, taubar)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def _fd_grad(f, y, h):
    g = np.zeros(len(y))
    for i in range(len(y)):
        yp, ym = y.copy(), y.copy()
        yp[i] += h[i]
        ym[i] -= h[i]
        g[i] = (f(yp) - f(ym)) / (yp[i] - ym[i])
    return g


def _fd_hess(f, y, h):
    n = len(y)
    H = np.zeros((n, n))
    def at(i, j, si, sj):
        z = y.copy()
        z[i] += si * h[i]
        z[j] += sj * h[j]
        return f(z)

    for i in range(n):
        for j in range(i, n):
            H[i, j] = H[j, i] = (at(i, j, 1, 1) - at(i, j, 1, -1) - at(i, j, -1, 1)
                                 + at(i, j, -1, -1)) / (4 * h[i] * h[j])
    return H


# --------------------------------------------------------------------------------------------
# bend and twist
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["bend", "twist", "bend_twist"])
@pytest.mark.parametrize("name", CONFIGS)
def test_energy_and_gradient_match_reference(kind, name):
    y, base, kbar, taubar = _config(name, seed=CONFIGS.index(name))
    e, g, _ = _eval(kind, y, base.a1, base.a2, base.m_ref, kbar, taubar)
    e_ref = _ref_energy(kind, y, base, kbar, taubar)
    assert e == pytest.approx(e_ref, rel=1e-12)
    assert e_ref > 1e-3  # every term active
    L = _scales(y)
    g_fd = _fd_grad(lambda z: _ref_energy(kind, z, base, kbar, taubar), y, 1e-5 * L)
    assert _rel(L * g, L * g_fd) < 1e-7


@pytest.mark.parametrize("kind", ["bend", "twist", "bend_twist"])
@pytest.mark.parametrize("name", CONFIGS)
def test_hessian_matches_second_differences_of_energy(kind, name):
    y, base, kbar, taubar = _config(name, seed=CONFIGS.index(name))
    _, _, H = _eval(kind, y, base.a1, base.a2, base.m_ref, kbar, taubar)
    assert np.array_equal(H, H.T)  # exactly symmetric
    L = _scales(y)
    H_fd = _fd_hess(lambda z: _ref_energy(kind, z, base, kbar, taubar), y, 1e-4 * L)
    assert _rel(L[:, None] * H * L, L[:, None] * H_fd * L) < 1e-5


@pytest.mark.parametrize("kind", ["bend", "twist", "bend_twist"])
@pytest.mark.parametrize("name", CONFIGS)
def test_hessian_matches_jacobian_of_gradient_with_transported_frames(kind, name):
    y, base, kbar, taubar = _config(name, seed=CONFIGS.index(name))
    _, _, H = _eval(kind, y, base.a1, base.a2, base.m_ref, kbar, taubar)
    L = _scales(y)
    h = 1e-6 * L
    J = np.zeros((11, 11))
    for i in range(11):
        yp, ym = y.copy(), y.copy()
        yp[i] += h[i]
        ym[i] -= h[i]
        J[i] = (_eval_at(kind, yp, base, kbar, taubar)[1]
                - _eval_at(kind, ym, base, kbar, taubar)[1]) / (yp[i] - ym[i])
    S = 0.5 * (J + J.T)
    assert _rel(L[:, None] * H * L, L[:, None] * S * L) < 1e-6


@pytest.mark.parametrize("name", CONFIGS)
def test_fused_bend_twist_equals_sum(name):
    y, base, kbar, taubar = _config(name, seed=CONFIGS.index(name))
    args = (y, base.a1, base.a2, base.m_ref, kbar, taubar)
    eb, gb, Hb = _eval("bend", *args)
    et, gt, Ht = _eval("twist", *args)
    e, g, H = _eval("bend_twist", *args)
    assert e == pytest.approx(eb + et, rel=1e-14)
    assert _rel(g, gb + gt) < 1e-14
    assert _rel(H, Hb + Ht) < 1e-14
    e2, g2, _ = _eval("bend_twist", *args, want_hess=False)  # the gradient-only path agrees
    assert e2 == e and np.array_equal(g2, g)


@pytest.mark.parametrize("name", CONFIGS)
def test_rigid_motions(name):
    """Translation: position gradients sum to zero and the Hessian annihilates it.  Rotation:
    the gradient is orthogonal to the rigid velocity (vertices ``omega x x``, edge angles
    ``omega . t_j`` since the transported frames lag the rigid rotation about each edge), i.e.
    the total torque ``sum x_i x g_i + sum t_j dE/dtheta_j`` vanishes; a finite rotation of
    positions and frames leaves the energy unchanged."""
    y, base, kbar, taubar = _config(name, seed=CONFIGS.index(name))
    e, g, H = _eval("bend_twist", y, base.a1, base.a2, base.m_ref, kbar, taubar)
    # each product compared with the sum of the magnitudes of its terms (rounding scale)
    for k in range(3):
        v = rigid_velocity(y, np.zeros(3), np.eye(3)[k])
        assert abs(g @ v) < 1e-13 * (np.abs(g) @ np.abs(v))
        assert np.all(np.abs(H @ v) <= 1e-13 * (np.abs(H) @ np.abs(v)))
        w = rigid_velocity(y, np.eye(3)[k], np.zeros(3))
        assert abs(g @ w) < 1e-12 * (np.abs(g) @ np.abs(w))
    R = Rotation.from_rotvec([0.3, -1.1, 0.7]).as_matrix()
    yr = y.copy()
    for k in (0, 4, 8):
        yr[k:k + 3] = R @ y[k:k + 3] + [1.0, 2.0, 3.0]
    er = _eval("bend_twist", yr, base.a1 @ R.T, base.a2 @ R.T, base.m_ref, kbar, taubar)[0]
    # rounding of the moved coordinates, relative to the shortest edge
    assert er == pytest.approx(e, rel=1e-13 * (1.0 + np.abs(yr).max() / _scales(y).min()))


@pytest.mark.parametrize("name", CONFIGS)
def test_rest_shape_has_zero_energy_and_gradient(name):
    y, base, _, _ = _config(name, seed=CONFIGS.index(name))
    kappa, tau = np.zeros((1, 4)), np.zeros(1)
    K.curvatures_twists(y, DOFS, EDGES, base.a1, base.a2, np.array([base.m_ref]), kappa, tau)
    e, g, H = _eval("bend_twist", y, base.a1, base.a2, base.m_ref, kappa[0], tau[0])
    L = _scales(y)
    # rounding: kb carries a relative error ~1e-16 / (1 + cos(turn)) (1e-14 at 170 degrees)
    assert e < 1e-20 * (K1 + K2 + KT) / LT * (1.0 + np.sum(kappa**2))
    # g = sum_c K r_c grad c with rounding-size residuals r ~ 1e-16 |kappa| / (1 + cos(turn)):
    # compared with K |grad c| (|grad c|^2 ~ |H| / K from the Gauss-Newton Hessian left here)
    k = (K1 + K2 + KT) / LT
    grad_c = np.sqrt(np.abs(L[:, None] * H * L).max() / k)
    assert np.abs(L * g).max() < 1e-13 * k * grad_c * (1.0 + np.sum(kappa**2))
    # only the Gauss-Newton part is left: positive semi-definite
    w = np.linalg.eigvalsh(L[:, None] * H * L)
    assert w.min() > -1e-12 * w.max()


def test_curvature_of_a_planar_turn_is_two_tan_half_angle():
    """Edges turning by phi in the xy-plane with a1 = z: kb = 2 tan(phi/2) z, so with theta = 0
    (m1 = z) the curvature is (0, -2 tan(phi/2)) on both edges; with theta = pi/2 (m1 = a2,
    m2 = -z) it is (-2 tan(phi/2), 0)."""
    phi = 0.7
    y = np.r_[0, 0, 0, 0.0, 1, 0, 0, 0.0, 1 + np.cos(phi), np.sin(phi), 0]
    t1 = np.array([np.cos(phi), np.sin(phi), 0])
    a1 = np.array([[0, 0, 1.0], [0, 0, 1.0]])
    a2 = np.cross(np.array([[1.0, 0, 0], t1]), a1)
    kappa, tau = np.zeros((1, 4)), np.zeros(1)
    K.curvatures_twists(y, DOFS, EDGES, a1, a2, np.zeros(1), kappa, tau)
    k = 2 * np.tan(phi / 2)
    np.testing.assert_allclose(kappa[0], [0, -k, 0, -k], atol=1e-15)
    y[3] = y[7] = np.pi / 2  # m1 = a2, m2 = -a1 = -z
    K.curvatures_twists(y, DOFS, EDGES, a1, a2, np.zeros(1), kappa, tau)
    np.testing.assert_allclose(kappa[0], [-k, 0, -k, 0], atol=1e-15)
    assert tau[0] == 0.0


def test_degenerate_stencils_report_infinite_energy():
    y, base, kbar, taubar = _config("gentle")
    y[8:11] = y[4:7]  # second edge of zero length
    e, g, H = np.zeros(1), np.full((1, 11), 7.0), np.full((1, 11, 11), 7.0)
    bad = K.bend_twist_terms(y, DOFS, EDGES, base.a1, base.a2, np.array([base.m_ref]),
                             kbar[None], np.array([taubar]), np.array([LT]), np.array([[K1, K2]]),
                             np.array([KT]), e, g, H, True)
    assert bad == 1 and e[0] == np.inf
    assert not g.any() and not H.any()
    y, base, kbar, taubar = _config("gentle")
    y[8:11] = y[4:7] - (y[4:7] - y[0:3])  # antiparallel edges: kb is infinite
    bad = K.bend_terms(y, DOFS, EDGES, base.a1, base.a2, kbar[None], np.array([LT]),
                       np.array([[K1, K2]]), e, g, H, True)
    assert bad == 1 and e[0] == np.inf


# --------------------------------------------------------------------------------------------
# stretch
# --------------------------------------------------------------------------------------------
def _stretch(y6, lbar, ks, project):
    e, g, H = np.zeros(1), np.zeros((1, 6)), np.zeros((1, 6, 6))
    bad = K.stretch_terms(np.ascontiguousarray(y6), np.arange(6, dtype=np.int64)[None],
                          np.array([lbar]), np.array([ks]), project, e, g, H, True)
    assert bad == 0
    return e[0], g[0], H[0]


@pytest.mark.parametrize("strain", [0.3, -0.4, 1e-3])
def test_stretch_matches_reference(strain):
    rng = np.random.default_rng(7)
    d = unit(rng.normal(size=3))
    lbar, ks = 0.7, 2.5
    y = np.r_[rng.normal(size=3), np.zeros(3)]
    y[3:6] = y[0:3] + (1 + strain) * lbar * d
    e, g, H = _stretch(y, lbar, ks, False)
    assert e == pytest.approx(stretch_energy(y, lbar, ks), rel=1e-12)
    h = np.full(6, 1e-5 * lbar)
    g_fd = _fd_grad(lambda z: stretch_energy(z, lbar, ks), y, h)
    assert _rel(g, g_fd) < 1e-7
    H_fd = _fd_hess(lambda z: stretch_energy(z, lbar, ks), y, 10 * h)
    assert _rel(H, H_fd) < 1e-5
    assert np.array_equal(H, H.T)
    assert np.abs(g[:3] + g[3:]).max() < 1e-14 * np.abs(g).max()  # translation invariance
    # the projected Hessian: the exact one when stretched; otherwise only the axial part,
    # ks / lbar t t^T, and positive semi-definite
    _, _, Hp = _stretch(y, lbar, ks, True)
    if strain > 0:
        assert np.array_equal(Hp, H)
    else:
        block = ks / lbar * np.outer(d, d)
        np.testing.assert_allclose(Hp, np.block([[block, -block], [-block, block]]), atol=1e-12)
        assert np.linalg.eigvalsh(H).min() < -1e-3  # the exact one is indefinite
    assert np.linalg.eigvalsh(Hp).min() > -1e-12


def test_stretch_zero_at_rest_length():
    y = np.r_[0.1, 0.2, 0.3, 0.1, 0.2, 1.3]
    e, g, _ = _stretch(y, 1.0, 3.0, True)
    assert e < 1e-30 and np.abs(g).max() < 1e-14
