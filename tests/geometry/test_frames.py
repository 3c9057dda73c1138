"""Material frames of three points (eq. 3 of Umetani, Schmidt and Stam 2014) and their Jacobians.

References: eq. (3) of the paper (d3 along the edge, d2 = normalised d3 x (p_g - p0),
d1 = d2 x d3); appendix eqs. (43)-(45) for the derivatives (as corrected in
``../shared/notes/umetani_errata.md``), checked here by central finite differences.

Finite-difference tolerance (used throughout): a central difference with step ``h`` on an input
whose smallest length scale is ``ell`` (edge length, or the ghost's distance from the edge line)
and whose coordinates have magnitude ``|x|`` has a relative error of about
``(h / ell)^2`` (truncation) ``+ eps |x| / h`` (roundoff: the frame is computed from coordinate
differences of relative accuracy ``eps |x| / ell``, and the derivative is of size ``1 / ell``),
with ``eps = 2.2e-16``.  Unit-size inputs with ``h = 1e-6``: about 2e-10, so rtol 1e-7.  The
near-degenerate inputs (``ell = 1e-6`` or ``1e-5``, ``|x| ~ 1`` m) use ``h = 1e-4 ell``: at most
about 1e-8 + 2.2e-6, so rtol 1e-5 (measured: below 1e-7).
"""
import numpy as np
import pytest

from helpers import fd_jacobian
from helpers import paper_frame as _paper_frame
from helpers import rel_err as _rel_err
from strandlab.geometry.frames import frame_jacobians_of, frame_of


def _fd_jacobian(p, h):
    """Central differences of frame_of: J[k, m, r, s] = d D[r, m] / d p_k[s]."""
    return fd_jacobian(lambda y: frame_of(*y).T, p, range(3), h).reshape(3, 3, 3, 3)


def _generic(seed):
    return np.random.default_rng(seed).normal(size=(3, 3))


def _tiny_edge():
    # an edge of 1e-6 m with its ghost 1e-6 m away, about 1 m from the origin
    rng = np.random.default_rng(7)
    base = np.array([0.6, -0.5, 0.7])
    return base + 1e-6 * rng.normal(size=(3, 3)), 1e-6


def _ghost_near_line():
    # ghost 1e-5 of the edge length off the edge line (cross product tiny, frame ill-conditioned)
    p0 = np.array([0.1, 0.2, -0.3])
    e = np.array([0.8, -0.3, 0.5])
    n = np.cross(e, [0.0, 0.0, 1.0])
    n /= np.linalg.norm(n)
    ell = 1e-5 * np.linalg.norm(e)
    return np.array([p0, p0 + e, p0 + 0.3 * e + ell * n]), ell


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_frame_matches_eq3_and_is_a_right_handed_orthonormal_frame(seed):
    # Reference: eq. (3); d1 points from the edge towards the ghost point (frames.py docstring).
    p = _generic(seed)
    d = frame_of(*p)
    assert np.allclose(d, _paper_frame(*p), atol=1e-14)
    assert np.allclose(d.T @ d, np.eye(3), atol=1e-14)
    assert np.linalg.det(d) == pytest.approx(1.0, abs=1e-14)
    mid = 0.5 * (p[0] + p[1])
    assert np.dot(d[:, 0], p[2] - mid) > 0.0
    assert np.dot(d[:, 1], p[2] - mid) == pytest.approx(0.0, abs=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_frame_jacobians_match_central_differences(seed):
    # Reference: central differences of eq. (3); h = 1e-6 for unit-size inputs, rtol 1e-7 (module
    # docstring).
    p = _generic(seed)
    assert _rel_err(frame_jacobians_of(*p), _fd_jacobian(p, 1e-6)) < 1e-7


def test_frame_jacobians_tiny_edge():
    # Reference: central differences of eq. (3) for a 1e-6 m edge 1 m from the origin; h = 1e-4 of
    # the edge, rtol 1e-5 (module docstring: coordinate roundoff dominates).
    p, ell = _tiny_edge()
    jac = frame_jacobians_of(*p)
    assert np.max(np.abs(jac)) > 1e5  # derivatives scale as 1 / edge length
    assert _rel_err(jac, _fd_jacobian(p, 1e-4 * ell)) < 1e-5


def test_frame_jacobians_ghost_nearly_on_edge_line():
    # Reference: central differences of eq. (3); the smallest length scale is the ghost's
    # distance from the edge line, h = 1e-4 of it, rtol 1e-5 (module docstring).
    p, ell = _ghost_near_line()
    jac = frame_jacobians_of(*p)
    assert np.max(np.abs(jac)) > 1e4  # d1, d2 turn fast when the ghost moves across the line
    assert _rel_err(jac, _fd_jacobian(p, 1e-4 * ell)) < 1e-5


def test_frame_jacobians_rigid_invariance():
    # Reference: the frame is translation invariant (sum_k dD/dp_k = 0) and its columns stay unit
    # (d_m . dd_m = 0); both follow from eq. (3).
    p = _generic(5)
    jac = frame_jacobians_of(*p)
    d = frame_of(*p)
    assert np.max(np.abs(jac.sum(axis=0))) < 1e-13 * np.max(np.abs(jac))
    for m in range(3):
        assert np.max(np.abs(np.einsum("r,krs->ks", d[:, m], jac[:, m]))) < 1e-13


@pytest.mark.parametrize("pts", [
    [[0, 0, 0], [0, 0, 0], [1, 0, 0]],        # coincident edge end points
    [[0, 0, 0], [1, 0, 0], [2, 0, 0]],        # ghost on the edge line
    [[0, 0, 0], [1, 1, 1], [0, 0, 0]],        # ghost on the first end point
])
def test_degenerate_frames_raise(pts):
    # Reference: eq. (3) is undefined for a zero-length edge or a ghost on the edge line.
    with pytest.raises(ValueError, match="undefined"):
        frame_of(*np.array(pts, float))
    with pytest.raises(ValueError, match="undefined"):
        frame_jacobians_of(*np.array(pts, float))
