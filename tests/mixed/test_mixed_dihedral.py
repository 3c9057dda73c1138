"""The signed dihedral angle of a hinge: its sign convention, its exact gradient and Hessian
against central differences on regular, nearly flat, nearly folded, sliver and tiny hinges, and
its invariances."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from strandlab.mixed.dihedral import (
    add_dihedral_hessian,
    dihedral_angle,
    dihedral_gradient,
    wrap_angle,
)


def _hinge(angle, *, scale=1.0, wing=1.0, skew=0.0):
    """A hinge along x with its edge [0, scale], wing A in the xy plane at height ``wing`` and
    wing B turned so that the signed angle is ``angle``; ``skew`` slides the wings along the
    edge.  Returns [4, 3]."""
    x2 = np.array([0.3 + skew, wing, 0.0])
    # B = (x1, x0, x3): nB = (x3 - x0) x e; flat (angle 0) puts x3 at -y
    c, s = np.cos(angle), np.sin(angle)
    x3 = np.array([0.6 - skew, -wing * c, -wing * s])
    return scale * np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], x2, x3])


def _theta(x):
    return dihedral_angle(*map(tuple, x))


def _grad(x):
    r = dihedral_gradient(*map(tuple, x))
    return r[0], np.array(r[1:5]).ravel(), r[5]


def _hess(x, c=1.0):
    H = np.zeros((1, 12, 12))
    add_dihedral_hessian(*map(tuple, x), c, H, 0, (0, 3, 6, 9))
    return H[0]


def _fd(x, step):
    """Central differences of theta (gradient) and of the analytic gradient (Hessian)."""
    g = np.zeros(12)
    H = np.zeros((12, 12))
    for i in range(12):
        xp = x.ravel().copy()
        xm = x.ravel().copy()
        xp[i] += step
        xm[i] -= step
        g[i] = (_theta(xp.reshape(4, 3)) - _theta(xm.reshape(4, 3))) / (2 * step)
        H[:, i] = (_grad(xp.reshape(4, 3))[1] - _grad(xm.reshape(4, 3))[1]) / (2 * step)
    return g, H


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def test_sign_convention_and_angle_values():
    """theta turns nA into nB about e: flat 0; a wing moved against its triangle's normal (a
    ridge seen from the normals' side) gives theta > 0; the constructed angles come back."""
    assert _theta(_hinge(0.0)) == pytest.approx(0.0, abs=1e-15)
    for a in (0.3, -1.2, 2.9, -3.1):
        assert _theta(_hinge(a)) == pytest.approx(a, abs=1e-13)
    x = _hinge(0.0)
    x[3, 2] -= 0.1             # nA = nB = +z when flat: wing B moved to -z, a ridge
    assert _theta(x) > 0.0
    x = _hinge(0.0)
    x[2, 2] += 0.1             # wing A towards +z (its normal side): a valley
    assert _theta(x) < 0.0


@pytest.mark.parametrize("case", [
    # (angle, scale, wing, skew, relative step, rtol)
    (0.7, 1.0, 1.0, 0.1, 1e-6, 1e-7),        # regular
    (-2.2, 1.0, 0.5, 0.9, 1e-6, 1e-7),       # wings far along the edge
    (1e-9, 1.0, 1.0, 0.0, 1e-6, 1e-7),       # nearly flat
    (-1e-9, 1.0, 1.0, 0.3, 1e-6, 1e-7),
    (np.pi - 1e-4, 1.0, 1.0, 0.2, 1e-7, 1e-6),   # nearly folded (step far below the gap to pi)
    (-np.pi + 1e-4, 1.0, 1.0, -0.2, 1e-7, 1e-6),
    (0.4, 1e-5, 1.0, 0.0, 1e-6, 1e-7),       # tiny hinge
    (0.4, 1.0, 1e-3, 0.0, 1e-8, 1e-6),       # sliver wings (aspect 1e-3: step scaled to it)
])
def test_gradient_and_hessian_match_central_differences(case):
    angle, scale, wing, skew, rel_step, rtol = case
    rng = np.random.default_rng(3)
    rot = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    x = _hinge(angle, scale=scale, wing=wing, skew=skew) @ rot.T + scale * rng.normal(size=3)
    theta, g, ok = _grad(x)
    assert ok
    H = _hess(x)
    g_fd, H_fd = _fd(x, rel_step * scale)
    assert _rel(g, g_fd) < rtol
    assert _rel(H, H_fd) < 10 * rtol
    assert np.array_equal(H, H.T)
    # theta scale-free: the gradient scales as 1/scale, the Hessian as 1/scale^2
    assert np.max(np.abs(g)) * scale == pytest.approx(np.max(np.abs(_grad(x / scale)[1])),
                                                      rel=1e-10)


def test_invariances_of_the_derivatives():
    """Rigid motions leave theta unchanged: the gradient sums to zero (translations), its
    moment sum x_i x g_i is zero (rotations), and the Hessian annihilates translations."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3))
    theta, g, ok = _grad(x)
    H = _hess(x)
    g4 = g.reshape(4, 3)
    assert np.abs(g4.sum(axis=0)).max() < 1e-12 * np.abs(g).max()
    assert np.abs(np.cross(x, g4).sum(axis=0)).max() < 1e-12 * np.abs(g).max()
    for c in range(3):
        t = np.zeros((4, 3))
        t[:, c] = 1.0
        assert np.abs(H @ t.ravel()).max() < 1e-12 * np.abs(H).max()
    rot = Rotation.from_rotvec([0.4, -2.0, 1.0]).as_matrix()
    assert _theta(x @ rot.T + 7.0) == pytest.approx(theta, abs=1e-13)
    # swapping the wings negates theta; the hinge read backwards (x1 -> x0, wings swapped) too
    assert _theta(x[[0, 1, 3, 2]]) == pytest.approx(-theta, abs=1e-13)
    assert _theta(x[[1, 0, 3, 2]]) == pytest.approx(theta, abs=1e-13)


def test_hessian_is_added_scaled_at_the_given_slots():
    """``c`` scales it, ``slots`` place each vertex's block in a larger stencil, and it adds."""
    x = _hinge(0.8, skew=0.2)
    H0 = _hess(x)
    big = np.full((2, 15, 15), 1.0)
    slots = (12, 0, 6, 3)
    add_dihedral_hessian(*map(tuple, x), -2.5, big, 1, slots)
    idx = np.concatenate([np.arange(s, s + 3) for s in slots])
    assert np.abs(big[1][np.ix_(idx, idx)] - 1.0 + 2.5 * H0).max() < 1e-14 * np.abs(H0).max()
    assert np.all(big[0] == 1.0)
    rest = np.setdiff1d(np.arange(15), idx)
    assert np.all(big[1][rest] == 1.0)


def test_degenerate_hinges_are_reported():
    x = _hinge(0.5)
    x[2] = [0.5, 0.0, 0.0]          # wing on the edge line: triangle A has no area
    assert not _grad(x)[2]
    x = _hinge(0.5)
    x[1] = x[0]                     # zero-length edge
    assert not _grad(x)[2]
    x = _hinge(0.5)
    x[3, 0] = np.nan
    assert not _grad(x)[2]


def test_wrap_angle():
    for a, w in ((0.5, 0.5), (3 * np.pi / 2, -np.pi / 2), (-7.0, -7.0 + 2 * np.pi),
                 (np.pi, -np.pi)):
        assert wrap_angle(a) == pytest.approx(w, abs=1e-14)
