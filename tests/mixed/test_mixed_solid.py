"""StVK tetrahedra of the mixed model: derivatives against central differences (regular,
nearly flat and tiny tetrahedra; tolerances justified in mixed_fd.py), zero energy and force
under rigid motions, the StVK formula under uniaxial and equibiaxial stretch, the parallel and
serial kernels, the degenerate-stencil report and the input checks."""
from __future__ import annotations

import numpy as np
import pytest
from mixed_fd import assembled, assert_exact_derivatives, assert_twins_agree, evaluate
from scipy.spatial.transform import Rotation

from strandlab.mixed import stvk
from strandlab.mixed.solid import SolidTerm

YOUNG, NU = 5.0e5, 0.35
MU = YOUNG / (2 * (1 + NU))
LAM = YOUNG * NU / ((1 + NU) * (1 - 2 * NU))
ROT = Rotation.from_rotvec([-0.4, 1.3, 0.2]).as_matrix()


def _block(*, scale=1.0, flat=1.0, seed=0):
    """Two tetrahedra sharing a face plus one sharing an edge, positively oriented, squeezed
    by ``flat`` in z (nearly flat for small ``flat``), rotated; [V, 3], [N, 4]."""
    rng = np.random.default_rng(seed)
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.3, 0.3, 1], [0.8, 0.9, -1],
                  [1.2, -0.5, 0.7]], float)
    x += 0.05 * rng.normal(size=x.shape)
    x[:, 2] *= flat
    tet = np.array([[0, 1, 2, 3], [1, 0, 2, 4], [0, 1, 3, 5]])
    d = np.linalg.det(np.transpose(x[tet[:, 1:]] - x[tet[:, :1]], (0, 2, 1)))
    tet[d < 0] = tet[d < 0][:, [1, 0, 2, 3]]
    return scale * x @ ROT.T, tet


def _solid(x, tet, **kw):
    return SolidTerm(rest_positions=x, tetrahedra=tet, young=YOUNG, poisson=NU, **kw)


@pytest.mark.parametrize("scale, flat, rel_step, rtol", [
    (1.0, 1.0, 1e-6, 1e-6),        # regular
    (1.0, 1e-3, 1e-9, 1e-4),       # nearly flat (height 1e-3 of the width)
    (1e-5, 1.0, 1e-6, 1e-6),       # tiny (10 um)
])
def test_derivatives_match_central_differences(scale, flat, rel_step, rtol):
    x, tet = _block(scale=scale, flat=flat)
    assert_exact_derivatives(_solid(x, tet), x.ravel(), rel_step * scale, rtol,
                             amplitude=0.1 * scale * flat)


def test_inverted_configuration_derivatives():
    """StVK is defined through inversion: the derivatives stay exact there."""
    x, tet = _block()
    q = x + 0.05 * np.random.default_rng(3).normal(size=x.shape)
    q[3] = 2 * q[0] - q[3]          # tetrahedron 0 turned inside out
    assert_exact_derivatives(_solid(x, tet), q.ravel(), 1e-6, 1e-6)


def test_rest_shape_under_rigid_motion_has_no_energy_or_force():
    x, tet = _block()
    term = _solid(x, tet)
    rot = Rotation.from_rotvec([2.0, -0.3, 1.4]).as_matrix()
    e, g, _ = assembled(term, (x @ rot.T + [3.0, -1.0, 2.0]).ravel())
    rng = np.random.default_rng(2)
    e_ref, g_ref, _ = assembled(term, (x + 0.01 * rng.normal(size=x.shape)).ravel())
    assert abs(e) < 1e-12 * e_ref
    assert np.abs(g).max() < 1e-9 * np.abs(g_ref).max()


@pytest.mark.parametrize("stretch", [1.25, 0.7])
def test_uniaxial_and_equibiaxial_stretch_match_stvk(stretch):
    """``x -> R diag(s, 1, 1) R^T x``: ``W = V (mu + lambda / 2) e^2``, ``e = (s^2 - 1) / 2``;
    ``diag(s, s, 1)``: ``W = V (2 mu + 2 lambda) e^2``."""
    ref = np.array([[0, 0, 0], [1.0, 0.1, 0], [0.2, 0.9, 0.1], [0.3, 0.2, 0.8]])
    term = _solid(ref @ ROT.T, [[0, 1, 2, 3]])
    vol = np.linalg.det(ref[1:] - ref[0]) / 6
    assert term.rest_volume[0] == pytest.approx(vol, rel=1e-12)
    e = 0.5 * (stretch**2 - 1)
    for scale, want in (([stretch, 1, 1], (MU + 0.5 * LAM) * e**2),
                        ([stretch, stretch, 1], (2 * MU + 2 * LAM) * e**2)):
        q = ((ref * scale) @ ROT.T + 0.5).ravel()
        assert evaluate(term, q)[0][0] == pytest.approx(vol * want, rel=1e-12)


@pytest.mark.slow  # compiling the parallel twin takes 15-20 s
def test_parallel_and_serial_kernels_agree():
    """The two twins give the same values bit for bit (each stencil writes its own rows)."""
    x, tet = _block()
    term = _solid(x, tet)
    rng = np.random.default_rng(4)
    q = (x + 0.1 * rng.normal(size=x.shape)).ravel()
    assert_twins_agree(term, q, (stvk.stvk_terms, stvk.stvk_terms_serial),
                       (term.dofs, term.shape_gradients, term.rest_measure, term.mu, term.lam,
                        stvk.scratch(3, 4, 3)))


def test_non_finite_coordinates_give_infinite_energy():
    x, tet = _block()
    term = _solid(x, tet)
    q = x.ravel().copy()
    q[3 * 4 + 1] = np.nan            # vertex 4: only tetrahedron 1
    e, g, H = evaluate(term, q)
    assert np.isinf(e[1]) and not g[1].any() and not H[1].any()
    assert np.isfinite(e[[0, 2]]).all()
    assert term.n_degenerate == 1 and term.first_degenerate == 1


def test_input_errors_name_the_tetrahedron():
    x, tet = _block()
    inv = tet.copy()
    inv[1] = inv[1, [1, 0, 2, 3]]
    with pytest.raises(ValueError, match=r"tetrahedron 1 = \[.*\] is inverted"):
        _solid(x, inv)
    flat = x.copy()
    flat[5] = (x[0] + x[1] + x[3]) / 3       # tetrahedron 2's fourth vertex in its base plane
    with pytest.raises(ValueError, match="tetrahedron 2 .* has zero rest volume"):
        _solid(flat, tet)
    with pytest.raises(ValueError, match="poisson of tetrahedron 0"):
        SolidTerm(rest_positions=x, tetrahedra=tet, young=YOUNG, poisson=0.5)
    with pytest.raises(ValueError, match="young of tetrahedron 2"):
        SolidTerm(rest_positions=x, tetrahedra=tet, young=[1.0, 1.0, np.nan], poisson=NU)
    bad = tet.copy()
    bad[1, 3] = bad[1, 2]
    with pytest.raises(ValueError, match="tetrahedron 1 "):
        _solid(x, bad)
    nan = x.copy()
    nan[2, 0] = np.nan
    with pytest.raises(ValueError, match="vertex 2 is not finite"):
        _solid(nan, tet)
