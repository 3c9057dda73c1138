"""Shell terms of the mixed model: the StVK membrane and hinge bending.  Derivatives against
central differences (regular, sliver, tiny and nearly folded elements; tolerances justified in
mixed_fd.py), zero energy and force under rigid motions, the StVK formula under uniaxial and
equibiaxial stretch, the plate energy of a cylinder under refinement, the degenerate-stencil
report and the input checks."""
from __future__ import annotations

import numpy as np
import pytest
from mixed_fd import assembled, assert_exact_derivatives, assert_twins_agree, evaluate, fd_errors
from scipy.spatial.transform import Rotation

from strandlab.mixed import shell as S
from strandlab.mixed.elements import triangle_hinges, vertex_dofs

YOUNG, NU, THICK = 2.0e6, 0.3, 1.0e-3
MU = YOUNG / (2 * (1 + NU))
LAM_PS = YOUNG * NU / (1 - NU**2)
D = YOUNG * THICK**3 / (12 * (1 - NU**2))
ROT = Rotation.from_rotvec([0.5, -1.1, 0.7]).as_matrix()


def _sheet(n=3, *, scale=1.0, aspect=1.0, seed=0):
    """An (n x n)-vertex sheet of 2 (n-1)^2 consistently oriented triangles, slightly
    perturbed and squeezed by ``aspect`` in y, rotated out of the xy plane."""
    rng = np.random.default_rng(seed)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="xy")
    x = np.c_[i.ravel(), aspect * j.ravel(), np.zeros(n * n)].astype(float)
    x[:, :2] += 0.15 * rng.uniform(-1, 1, size=(n * n, 2)) * [1.0, aspect]
    x[:, 2] = 0.1 * aspect * rng.normal(size=n * n)
    tri = []
    for a in range(n - 1):
        for b in range(n - 1):
            v00, v10, v11, v01 = b * n + a, b * n + a + 1, (b + 1) * n + a + 1, (b + 1) * n + a
            tri += [(v00, v10, v11), (v00, v11, v01)]
    return scale * x @ ROT.T, np.array(tri)


def _membrane(x, tri, **kw):
    return S.ShellMembraneTerm(rest_positions=x, triangles=tri, young=YOUNG, poisson=NU,
                               thickness=THICK, **kw)


def _bending(x, tri, **kw):
    return S.ShellBendingTerm.from_triangles(rest_positions=x, triangles=tri, young=YOUNG,
                                             poisson=NU, thickness=THICK, **kw)


# ------------------------------------------------------------------------- derivatives
@pytest.mark.parametrize("scale, aspect, rel_step, rtol", [
    (1.0, 1.0, 1e-6, 1e-6),        # regular
    (1.0, 1e-3, 1e-9, 1e-4),       # slivers of aspect 1e-3 (step scaled to the short side)
    (1e-5, 1.0, 1e-6, 1e-6),       # tiny (10 um) elements
])
@pytest.mark.parametrize("make", [_membrane, _bending], ids=["membrane", "bending"])
def test_derivatives_match_central_differences(make, scale, aspect, rel_step, rtol):
    x, tri = _sheet(scale=scale, aspect=aspect)
    assert_exact_derivatives(make(x, tri), x.ravel(), rel_step * scale, rtol,
                             amplitude=0.1 * scale * aspect)


def test_bending_derivatives_near_flat_and_near_folded():
    """A two-triangle hinge at theta ~ 1e-8 and at theta ~ +-(pi - 1e-3) against a rest angle
    of 0.3: the energy and its derivatives stay smooth and exact."""
    x = np.array([[0, 0, 0], [1, 0, 0], [0.4, 0.8, 0], [0.7, -0.9, 0]], float)
    term = S.ShellBendingTerm(rest_positions=x, hinges=[[0, 1, 2, 3]], young=YOUNG,
                              poisson=NU, thickness=THICK, rest_angle=0.3)
    for angle in (1e-8, np.pi - 1e-3, -np.pi + 1e-3):
        c, s = np.cos(angle), np.sin(angle)
        q = x.copy()
        q[3] = [0.7, -0.9 * c, -0.9 * s]
        e, _, _ = evaluate(term, q.ravel())
        d = (angle - 0.3 + np.pi) % (2 * np.pi) - np.pi
        assert e[0] == pytest.approx(term.weight[0] * d**2, rel=1e-9)
        g_err, h_err = fd_errors(term, q.ravel(), 1e-7)
        assert g_err < 1e-6 and h_err < 1e-6


# ------------------------------------------------------------------------- rigid motion
@pytest.mark.parametrize("make", [_membrane, _bending], ids=["membrane", "bending"])
def test_rest_shape_under_rigid_motion_has_no_energy_or_force(make):
    x, tri = _sheet(n=4)
    term = make(x, tri)
    rot = Rotation.from_rotvec([2.0, 0.3, -1.4]).as_matrix()
    q = (x @ rot.T + [3.0, -1.0, 2.0]).ravel()
    e, g, H = assembled(term, q)
    # a force scale: the same term under a 1 % deformation
    rng = np.random.default_rng(2)
    _, g_ref, _ = assembled(term, (x + 0.01 * rng.normal(size=x.shape)).ravel())
    e_ref = np.abs(evaluate(term, (x * 1.01).ravel())[0]).sum() + \
        np.abs(evaluate(term, (x + 0.01 * rng.normal(size=x.shape)).ravel())[0]).sum()
    assert abs(e) < 1e-12 * e_ref
    assert np.abs(g).max() < 1e-9 * np.abs(g_ref).max()


# ------------------------------------------------------------------------- analytic values
@pytest.mark.parametrize("stretch", [1.3, 0.8])
def test_membrane_uniaxial_and_equibiaxial_stretch_match_stvk(stretch):
    """A rest triangle in a tilted plane stretched by ``stretch`` along an in-plane axis:
    ``E = diag(e, 0)``, ``e = (s^2 - 1) / 2``, ``W = A t (mu + lambda_ps / 2) e^2``; both
    in-plane axes: ``W = A t (2 mu + 2 lambda_ps) e^2``."""
    flat = np.array([[0.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.3, 0.7, 0.0]])
    term = _membrane(flat @ ROT.T + 1.0, [[0, 1, 2]])
    area = 0.5 * abs(0.9 * 0.7 - 0.1 * 0.3)
    e = 0.5 * (stretch**2 - 1)
    for scale, want in (([stretch, 1.0, 1.0], (MU + 0.5 * LAM_PS) * e**2),
                        ([stretch, stretch, 1.0], (2 * MU + 2 * LAM_PS) * e**2)):
        q = ((flat * scale) @ ROT.T + 1.0).ravel()
        assert evaluate(term, q)[0][0] == pytest.approx(area * THICK * want, rel=1e-12)


def _lattice(n_per_row, n_rows, *, periodic_rows):
    """Equilateral lattice (side 1): rows along x, periodic along the rows unless
    ``periodic_rows`` (then periodic across them); points [V, 2], triangles [T, 3]."""
    wrap_i = not periodic_rows
    i, j = np.meshgrid(np.arange(n_per_row), np.arange(n_rows), indexing="xy")
    pts = np.c_[(i + 0.5 * (j % 2)).ravel(), (j * np.sqrt(3) / 2).ravel()]

    def v(a, b):
        return (b % n_rows) * n_per_row + (a % n_per_row if wrap_i else a)

    tri = []
    for b in range(n_rows if periodic_rows else n_rows - 1):
        for a in range(n_per_row if wrap_i else n_per_row - 1):
            if b % 2 == 0:
                tri += [(v(a, b), v(a + 1, b), v(a, b + 1)),
                        (v(a + 1, b), v(a + 1, b + 1), v(a, b + 1))]
            else:
                tri += [(v(a, b), v(a + 1, b), v(a + 1, b + 1)),
                        (v(a, b), v(a + 1, b + 1), v(a, b + 1))]
    return pts, np.array(tri)


def _tube_energy_ratio(n, along_circumference):
    """Bending energy of a flat equilateral sheet rolled into a tube (periodic around, ``n``
    triangles' sides around) over ``D / 2 kappa^2 x area``."""
    if along_circumference:      # edges around the tube
        pts, tri = _lattice(n, n // 2, periodic_rows=False)
        width, length = n, (n // 2 - 1) * np.sqrt(3) / 2
    else:                        # edges along the axis: rows run along it
        pts, tri = _lattice(n // 2, n, periodic_rows=True)
        pts = pts[:, ::-1]
        width, length = n * np.sqrt(3) / 2, n // 2 - 1
    hinges, _ = triangle_hinges(tri)
    # rest geometry per hinge, unrolled across the seam; the hinges act on the shared vertices
    local = pts[hinges]
    local[:, :, 0] -= width * np.round((local[:, :, 0] - local[:, :1, 0]) / width)
    rest = np.c_[local.reshape(-1, 2), np.zeros(local.size // 2)]
    term = S.ShellBendingTerm(rest_positions=rest, hinges=np.arange(len(rest)).reshape(-1, 4),
                              young=YOUNG, poisson=NU, thickness=THICK, dofs=vertex_dofs(hinges))
    r = width / (2 * np.pi)
    tube = np.c_[r * np.sin(pts[:, 0] / r), pts[:, 1], r * (1 - np.cos(pts[:, 0] / r))]
    return evaluate(term, tube.ravel())[0].sum() / (0.5 * D / r**2 * width * length)


def test_cylinder_bending_converges_to_the_plate_energy():
    """k = D / 2 stores D / 2 kappa^2 per unit area.  Edges along the axis: the rows' zigzag
    ends hold hinges of zero angle, nothing is missed (exact at every resolution).  Edges
    around: the straight end rows miss hinges of angle -kappa l / (2 sqrt 3), an O(1/n) deficit
    that refinement removes."""
    for n in (8, 16):
        assert _tube_energy_ratio(n, False) == pytest.approx(1.0, abs=1e-6)
    errors = [abs(_tube_energy_ratio(n, True) - 1.0) for n in (8, 16, 32)]
    assert errors[0] > 1.8 * errors[1] > 3.2 * errors[2]
    assert errors[2] < 0.01


def test_bending_rest_angle_difference_is_wrapped():
    """A hinge folded by 0.95 pi at rest, turned on through the fold to theta = -0.95 pi,
    stores w (0.1 pi)^2, not w (1.9 pi)^2; opened by 0.2 it stores w 0.2^2."""
    x = np.array([[0, 0, 0], [1, 0, 0], [0.4, 0.8, 0], [0.7, -0.9, 0]], float)
    term = S.ShellBendingTerm(rest_positions=x, hinges=[[0, 1, 2, 3]], young=YOUNG,
                              poisson=NU, thickness=THICK, rest_angle=0.95 * np.pi)
    for a, d in ((-0.95 * np.pi, 0.1 * np.pi), (0.95 * np.pi - 0.2, -0.2)):
        q = x.copy()
        q[3] = [0.7, -0.9 * np.cos(a), -0.9 * np.sin(a)]
        e, g, _ = evaluate(term, q.ravel())
        assert e[0] == pytest.approx(term.weight[0] * d**2, rel=1e-9)
    assert term.weight[0] == pytest.approx(0.5 * D * 1.0 / (0.5 * (0.8 + 0.9)), rel=1e-12)


def test_from_triangles_averages_the_two_stiffnesses():
    x, tri = _sheet(n=3)
    thick = np.linspace(1e-3, 2e-3, len(tri))
    term = S.ShellBendingTerm.from_triangles(rest_positions=x, triangles=tri, young=YOUNG,
                                             poisson=NU, thickness=thick)
    hinges, pairs = triangle_hinges(tri)
    assert np.array_equal(term.hinges, hinges)
    k = YOUNG * thick**3 / (24 * (1 - NU**2))
    a = np.linalg.norm(np.cross(x[tri[:, 1]] - x[tri[:, 0]], x[tri[:, 2]] - x[tri[:, 0]]),
                       axis=1) / 2
    e2 = np.sum((x[hinges[:, 1]] - x[hinges[:, 0]]) ** 2, axis=1)
    want = 0.5 * (k[pairs[:, 0]] + k[pairs[:, 1]]) * e2 / a[pairs].sum(axis=1)
    assert np.allclose(term.weight, want, rtol=1e-12)
    assert np.allclose(term.rest_angle, S.rest_dihedral_angles(x, hinges), atol=0)


# ------------------------------------------------------------------------- degenerate input
def test_degenerate_stencils_get_infinite_energy_and_zero_derivatives():
    x, tri = _sheet(n=3)
    bend = _bending(x, tri)
    memb = _membrane(x, tri)
    q = x.copy()
    h = 2
    a, b = bend.hinges[h, 0], bend.hinges[h, 1]
    q[bend.hinges[h, 2]] = 0.3 * q[a] + 0.7 * q[b]    # a wing on its edge: no angle
    e, g, H = evaluate(bend, q.ravel())
    assert np.isinf(e[h]) and not g[h].any() and not H[h].any()
    assert bend.first_degenerate == h and bend.n_degenerate >= 1
    assert np.isfinite(e[np.setdiff1d(np.arange(len(e)), np.flatnonzero(np.isinf(e)))]).all()
    q = x.ravel().copy()
    q[3 * tri[4, 1]] = np.nan
    e, g, H = evaluate(memb, q)
    bad = np.flatnonzero((tri == tri[4, 1]).any(axis=1))
    assert np.isinf(e[bad]).all() and not g[bad].any() and not H[bad].any()
    assert memb.n_degenerate == len(bad) and memb.first_degenerate == bad[0]
    evaluate(memb, x.ravel())
    assert memb.n_degenerate == 0 and memb.first_degenerate == -1


def test_input_errors_name_the_element():
    x, tri = _sheet(n=3)
    bad = x.copy()
    bad[tri[5, 2]] = 0.5 * (bad[tri[5, 0]] + bad[tri[5, 1]])
    with pytest.raises(ValueError, match="triangle 5 has zero rest area"):
        _membrane(bad, tri)
    hinges, _ = triangle_hinges(tri)
    which = int(np.flatnonzero((hinges == tri[5, 2]).any(axis=1)
                               & np.isin(hinges[:, 0], tri[5]) & np.isin(hinges[:, 1],
                                                                          tri[5]))[0])
    with pytest.raises(ValueError, match=f"hinge {which} has zero rest area"):
        S.ShellBendingTerm(rest_positions=bad, hinges=hinges, young=YOUNG, poisson=NU,
                           thickness=THICK)
    nan = x.copy()
    nan[4, 1] = np.inf
    with pytest.raises(ValueError, match="vertex 4 is not finite"):
        _membrane(nan, tri)
    for kw, what in ((dict(poisson=0.5), "poisson of triangle 0"),
                     (dict(young=np.r_[1.0, -1.0, np.ones(6)]), "young of triangle 1"),
                     (dict(thickness=0.0), "thickness of triangle 0")):
        args = dict(rest_positions=x, triangles=tri, young=YOUNG, poisson=NU, thickness=THICK)
        with pytest.raises(ValueError, match=what):
            S.ShellMembraneTerm(**{**args, **kw})
    t2 = tri.copy()
    t2[3, 1] = t2[3, 0]
    with pytest.raises(ValueError, match="triangle 3 "):
        _membrane(x, t2)
    t2[3, 1] = 99
    with pytest.raises(ValueError, match="triangle 3 "):
        _membrane(x, t2)
    with pytest.raises(ValueError, match="rest_angle of hinge 1"):
        S.ShellBendingTerm(rest_positions=x, hinges=hinges, young=YOUNG, poisson=NU,
                           thickness=THICK, rest_angle=np.r_[0.0, np.nan, np.zeros(6)])
    with pytest.raises(ValueError, match="dofs must have shape"):
        _membrane(x, tri, dofs=np.zeros((len(tri), 6), int))


@pytest.mark.slow  # compiling the parallel twin takes 15-20 s
def test_parallel_and_serial_hinge_kernels_agree():
    """The two twins give the same values bit for bit (each stencil writes its own rows)."""
    x, tri = _sheet(n=4)
    term = _bending(x, tri)
    rng = np.random.default_rng(6)
    q = (x + 0.1 * rng.normal(size=x.shape)).ravel()
    assert_twins_agree(term, q, (S.hinge_terms, S.hinge_terms_serial),
                       (term.dofs, term.rest_angle, term.weight))
