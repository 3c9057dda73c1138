"""Each projection in constraints.py against eq. (17) with finite-difference gradients.

Reference: eq. (17) of Umetani, Schmidt and Stam 2014 with the sign fixed
(``../shared/notes/umetani_errata.md``): ``dp_a = -w_a G_a^T (sum_b w_b G_b G_b^T)^-1 C``,
``G_a = dC/dp_a``; for a scalar constraint ``dp_a = -w_a grad_a C * C / sum_b w_b |grad_b C|^2``.
The constraint functions are written here from the paper's definitions: edge length (18),
perpendicular bisector (19), ghost distance (20), tip position (24) and bending-twisting (21)
with the goal Darboux vector (rhs ``alpha (Omega - Omega_rest)``, gradient of Omega; eq. 10
middle expression, frames of eq. 3).  XPBD forms follow Macklin et al. 2016:
``(G W G^T + alpha~) dlambda = -(C + alpha~ lambda)``, ``dp_a = w_a G_a^T dlambda``.

Each projection is one linearised step from the current positions, so the formula holds
exactly, not only to first order; the violations are kept small (about 1e-3 of the length
scale) all the same, as in a converging solve.  The only error is that of the finite-difference
gradients: a central difference with step ``h`` on an input of smallest length scale ``ell``
and coordinates ``|x|`` has relative error about ``(h / ell)^2 + eps |x| / h``; with
``h = 1e-6 ell`` for unit inputs (about 2e-10) and ``h = 1e-4 ell`` for 1e-6 m edges 1 m from the
origin or a ghost 1e-5 off the edge line (about 2e-6), the displacement agrees with the
reference to rtol 1e-7 and 1e-5.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from helpers import fd_jacobian as _fd_jacobian
from helpers import omega_ref
from strandlab.pbd.constraints import (
    FREE_COMPLIANCE,
    project_bisector,
    project_distance,
    project_ghost_distance,
    project_orientation,
    project_pin,
)


# ----------------------------------------------------------------------------- references
def _omega(x, idx, rest_len, rot=None):
    """Eq. (10) middle expression."""
    return omega_ref(x[np.asarray(idx)], rest_len, rot)


def _eq17(jac, w, pts, c):
    """Eq. (17): dp per point (rows in pts order) for constraint value c (M-vector)."""
    a = sum(w[p] * jac[k] @ jac[k].T for k, p in enumerate(pts))
    lam = np.linalg.solve(a, np.atleast_1d(c))
    return np.array([-w[p] * jac[k].T @ lam for k, p in enumerate(pts)])


def _check(dp, ref, rtol):
    assert np.max(np.abs(dp - ref)) <= rtol * np.max(np.abs(ref))
    assert np.max(np.abs(ref)) > 0.0


def _masses(n, seed, zero=()):
    w = 1.0 / np.random.default_rng(seed).uniform(0.2, 3.0, size=n)
    w[list(zero)] = 0.0
    return w


# ----------------------------------------------------------------------------- edge constraints
def _edge_case(case):
    """Points [p0, p1, g] (plus extra), length scale and FD step/tolerance."""
    if case == "generic":
        x = np.array([[0.1, 0.2, -0.3], [0.9, 0.5, 0.1], [0.4, 0.1, 0.6]])
        return x, 1.0, 1e-6, 1e-7
    if case == "tiny":      # 1e-6 m edge, 1 m from the origin
        x = np.array([0.6, -0.5, 0.7]) + 1e-6 * np.array([[0, 0, 0], [0.9, 0.3, 0.1], [0.4, -0.2, 0.8]])
        return x, 1e-6, 1e-10, 1e-5
    # ghost 1e-5 off the edge line (not at the midpoint)
    x = np.array([[0.0, 0.0, 0.0], [1.0, 0.2, -0.1], [0.3, 0.06 + 1e-5, -0.03]])
    return x, 1.0, 1e-9, 1e-5


CASES = ["generic", "tiny", "ghost_near_line"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("zero", [(), (0,)])
def test_project_distance_hard_is_eq17_of_eq18(case, zero):
    # Reference: eq. (18) C = |p0 - p1| - L, projected by eq. (17); module docstring tolerances.
    x, ell, h, rtol = _edge_case(case)
    L = np.linalg.norm(x[0] - x[1]) * (1 - 1e-3)
    w = _masses(3, 1, zero)

    def c(y):
        return np.linalg.norm(y[0] - y[1]) - L

    y = x.copy()
    ret = project_distance(y, w, 0, 1, L, 0.0, np.zeros(1), 0, 1.0)
    assert ret == pytest.approx(c(x), rel=1e-9)
    ref = _eq17(_fd_jacobian(c, x, [0, 1], h), w, [0, 1], c(x))
    _check(y[[0, 1]] - x[[0, 1]], ref, rtol)
    assert np.array_equal(y[2], x[2])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("zero", [(), (1,)])
def test_project_bisector_is_eq17_of_eq19(case, zero):
    # Reference: eq. (19) C = (p_g - p_mid) . (p1 - p0), projected by eq. (17).
    x, ell, h, rtol = _edge_case(case)
    w = _masses(3, 2, zero)

    def c(y):
        return np.dot(y[2] - 0.5 * (y[0] + y[1]), y[1] - y[0])

    y = x.copy()
    ret = project_bisector(y, w, 0, 1, 2)
    assert ret == pytest.approx(c(x), rel=1e-9)
    ref = _eq17(_fd_jacobian(c, x, [0, 1, 2], h), w, [0, 1, 2], c(x))
    # the bisector constraint is quadratic: FD of a quadratic is exact up to roundoff,
    # roundoff relative eps |x| / h as in the module docstring
    _check(y - x, ref, rtol)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("zero", [(), (2,)])
def test_project_ghost_distance_is_eq17_of_eq20(case, zero):
    # Reference: eq. (20) C = |p_mid - p_g| - l_g, projected by eq. (17).
    x, ell, h, rtol = _edge_case(case)
    lg = np.linalg.norm(x[2] - 0.5 * (x[0] + x[1])) * (1 + 1e-3)
    w = _masses(3, 3, zero)

    def c(y):
        return np.linalg.norm(0.5 * (y[0] + y[1]) - y[2]) - lg

    y = x.copy()
    ret = project_ghost_distance(y, w, 0, 1, 2, lg)
    assert ret == pytest.approx(c(x), rel=1e-9)
    ref = _eq17(_fd_jacobian(c, x, [0, 1, 2], h), w, [0, 1, 2], c(x))
    _check(y - x, ref, rtol)


@pytest.mark.parametrize("case", CASES)
def test_project_distance_xpbd_is_the_compliant_step(case):
    # Reference: XPBD (Macklin et al. 2016) for eq. (18): dlambda = -(C + a~ lambda) / (sum w |g|^2
    # + a~), dp_a = w_a grad_a C dlambda, a~ = compliance / dt^2; lambda accumulates.
    x, ell, h, rtol = _edge_case(case)
    L = np.linalg.norm(x[0] - x[1]) * (1 - 1e-3)
    w = _masses(3, 4)
    compliance, dt2 = 2e-3, 1e-2
    lam = np.array([0.0, 3e-4 * ell, 0.0])

    def c(y):
        return np.linalg.norm(y[0] - y[1]) - L

    jac = _fd_jacobian(c, x, [0, 1], h)
    at = compliance / dt2
    dl = -(c(x) + at * lam[1]) / (w[0] * np.sum(jac[0] ** 2) + w[1] * np.sum(jac[1] ** 2) + at)
    ref = np.array([w[0] * jac[0, 0] * dl, w[1] * jac[1, 0] * dl])
    y = x.copy()
    lam_new = lam.copy()
    project_distance(y, w, 0, 1, L, compliance, lam_new, 1, dt2)
    _check(y[[0, 1]] - x[[0, 1]], ref, rtol)
    assert lam_new[1] - lam[1] == pytest.approx(dl, rel=rtol)


@pytest.mark.parametrize("case", ["generic", "tiny"])
@pytest.mark.parametrize("zero", [(), (0,), (2, 3)])
def test_project_pin_is_eq17_of_eq24(case, zero):
    # Reference: eq. (24) C = |q - p0| with q = sum_k b_k x_{t_k} (barycentric target); the
    # scalar eq. (17) step of |q - p0| equals the package's vector form (x_i - q, whose
    # G W G^T is (w_i + sum b_k^2 w_k) I), and one step satisfies the linear constraint exactly.
    # The length scale of |q - p0| is the violation itself (its curvature is 1 / |C|), so the
    # violation is 0.3 of the triangle size and h = 1e-6 (1e-10 for the 1e-6 m case) of it.
    rng = np.random.default_rng(5)
    scale = 1.0 if case == "generic" else 1e-6
    base = np.zeros(3) if case == "generic" else np.array([0.6, -0.5, 0.7])
    x = base + scale * rng.normal(size=(4, 3))
    b = np.array([0.2, 0.5, 0.3])
    t = np.array([1, 2, 3], dtype=np.int64)
    x[0] = b @ x[1:4] + 0.3 * scale * np.array([0.3, -0.8, 0.5])
    w = _masses(4, 6, zero)
    h, rtol = (1e-6, 1e-7) if case == "generic" else (1e-10, 1e-5)

    def c(y):
        return np.linalg.norm(b @ y[1:4] - y[0])

    y = x.copy()
    ret = project_pin(y, w, 0, t, b)
    assert ret == pytest.approx(c(x), rel=1e-9)
    pts = [0, 1, 2, 3]
    ref = _eq17(_fd_jacobian(c, x, pts, h), w, pts, c(x))
    _check(y - x, ref, rtol)
    # satisfied to round-off of the coordinates (not of the tiny violation)
    assert np.linalg.norm(b @ y[1:4] - y[0]) < 1e-12 * c(x) + 4e-16 * np.abs(y).max()


def test_project_pin_with_unused_repeated_targets():
    # Reference: eq. (24) with q = x_t (rigid-body attachment: targets [t, t, t], weights (1, 0, 0)).
    x = np.array([[0.0, 0.0, 0.0], [0.01, -0.02, 0.005]])
    w = np.array([2.0, 0.5])
    y = x.copy()
    project_pin(y, w, 0, np.array([1, 1, 1], dtype=np.int64), np.array([1.0, 0.0, 0.0]))
    c = x[1] - x[0]
    assert np.allclose(y[0], x[0] + w[0] * c / (w[0] + w[1]), rtol=1e-14)
    assert np.allclose(y[1], x[1] - w[1] * c / (w[0] + w[1]), rtol=1e-14)


# ----------------------------------------------------------------------------- orientation
def _element(case):
    """Rod element points [p0, p1, g0, p2, g1], idx row, rest length, FD step, tolerance."""
    def build(p0, p1, p2, g0, g1, lg):
        pts = [np.asarray(p, float) for p in (p0, p1, p2)]
        gh = []
        for a, b, gd in ((pts[0], pts[1], g0), (pts[1], pts[2], g1)):
            tt = (b - a) / np.linalg.norm(b - a)
            g = np.asarray(gd, float) - np.dot(gd, tt) * tt
            gh.append(0.5 * (a + b) + lg * g / np.linalg.norm(g))
        return np.array([pts[0], pts[1], gh[0], pts[2], gh[1]])

    idx = np.array([0, 1, 2, 1, 3, 4], dtype=np.int64)
    if case == "generic":
        return build([0, 0, 0], [0.9, 0.2, -0.1], [1.5, 0.9, 0.3], [0, 0, 1], [0.3, -0.2, 1], 0.8), idx, 1.0, 1e-6, 1e-7
    if case == "straight":
        return build([0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [0, 1, 0], 1.0), idx, 1.0, 1e-6, 1e-7
    if case == "bent150":
        a = np.radians(150.0)
        return build([0, 0, 0], [1, 0, 0], [1 + np.cos(a), np.sin(a), 0], [0, 0.3, 1], [0.3, 0.2, 1], 1.0), idx, 1.0, 1e-6, 1e-7
    if case == "tiny":
        o = np.array([0.6, -0.5, 0.7])
        x = build(o, o + 1e-6 * np.array([0.9, 0.2, -0.1]), o + 1e-6 * np.array([1.5, 0.9, 0.3]),
                  [0, 0, 1], [0.3, -0.2, 1], 0.8e-6)
        return x, idx, 1e-6, 1e-10, 1e-5
    x = build([0, 0, 0], [1, 0, 0], [1.8, 0.5, 0.2], [0, 0, 1], [0, 0.2, 1], 1.0)
    x[2] = [0.3, 0.0, 1e-5]  # ghost of edge A 1e-5 off its edge line
    return x, idx, 1.0, 1e-9, 1e-5


def _project_orientation(x, w, idx, rot, rest, rest_len, alpha, compliance, use_xpbd, lam, dt2):
    y = x.copy()
    lam = lam.copy()
    ret = project_orientation(
        y, w, idx.reshape(1, 6), 0, (np.eye(3) if rot is None else rot).reshape(1, 3, 3).copy(), 0,
        rot is not None, rest.reshape(1, 3), 0, rest_len, alpha.reshape(1, 3),
        compliance.reshape(1, 3), use_xpbd, lam, dt2)
    return y, lam, ret


def _points_of(idx):
    return sorted(set(int(i) for i in idx))


@pytest.mark.parametrize("with_rot", [False, True])
@pytest.mark.parametrize("case", ["generic", "straight", "bent150", "tiny", "ghost_near_line"])
def test_project_orientation_alpha_is_eq17_of_eq21(case, with_rot):
    # Reference: eq. (21) with the goal Darboux vector: C = alpha (Omega - Omega_rest) (componentwise),
    # G = dOmega/dp (FD of eq. 10), projected by eq. (17); module docstring tolerances.
    x, idx, rest_len, h, rtol = _element(case)
    rot = Rotation.from_rotvec([0.02, -0.05, 0.03]).as_matrix() if with_rot else None
    w = _masses(5, 7, zero=(0,))
    pts = _points_of(idx)

    def om(y):
        return _omega(y, idx, rest_len, rot)

    omega = om(x)
    rest = omega - np.array([2e-3, -1e-3, 1.5e-3]) / rest_len   # a small deviation from rest
    alpha = np.array([0.3, 0.7, 1.0])
    y, _, ret = _project_orientation(x, w, idx, rot, rest, rest_len, alpha, np.zeros(3), False,
                                     np.zeros((1, 3)), 1.0)
    assert ret == pytest.approx(np.linalg.norm(omega - rest), rel=1e-6)
    jac = _fd_jacobian(om, x, pts, h)
    ref = _eq17(jac, w, pts, alpha * (omega - rest))
    _check(y[pts] - x[pts], ref, rtol)


@pytest.mark.parametrize("with_rot", [False, True])
@pytest.mark.parametrize("case", ["generic", "bent150", "tiny"])
def test_project_orientation_xpbd_is_the_compliant_block_step(case, with_rot):
    # Reference: XPBD (Macklin et al. 2016) for C = Omega - Omega_rest (eq. 21 with alpha = 1):
    # (G W G^T + diag(a~)) dlambda = -(C + a~ lambda), dp_a = w_a G_a^T dlambda, a~ = compliance / dt^2.
    # A component with compliance >= FREE_COMPLIANCE is switched off (row and column removed).
    x, idx, rest_len, h, rtol = _element(case)
    rot = Rotation.from_rotvec([0.02, -0.05, 0.03]).as_matrix() if with_rot else None
    w = _masses(5, 8, zero=(4,))
    pts = _points_of(idx)

    def om(y):
        return _omega(y, idx, rest_len, rot)

    omega = om(x)
    rest = omega - np.array([2e-3, -1e-3, 1.5e-3]) / rest_len
    jac = _fd_jacobian(om, x, pts, h)
    a = sum(w[p] * jac[k] @ jac[k].T for k, p in enumerate(pts))
    # a~ comparable to G W G^T; dt scaled with the element so that the compliance stays far below
    # FREE_COMPLIANCE (an absolute threshold in SI units: at or above it a component is off)
    dt2 = 1e-4 * rest_len ** 2
    compliance = np.array([1.0, 0.5, 2.0]) * dt2 * np.trace(a) / 3.0
    assert np.all(compliance < 1e-6 * FREE_COMPLIANCE)
    at = compliance / dt2
    lam = np.array([[0.1, -0.2, 0.05]]) * np.linalg.norm(omega - rest) / at  # a~ lambda ~ C
    dlam = np.linalg.solve(a + np.diag(at), -((omega - rest) + at * lam[0]))
    ref = np.array([w[p] * jac[k].T @ dlam for k, p in enumerate(pts)])
    y, lam_new, _ = _project_orientation(x, w, idx, rot, rest, rest_len, np.zeros(3), compliance,
                                         True, lam, dt2)
    _check(y[pts] - x[pts], ref, rtol)
    assert np.allclose(lam_new[0] - lam[0], dlam, rtol=rtol, atol=rtol * np.max(np.abs(dlam)))

    # switch off the twist component: the 2 x 2 bending block is solved alone
    comp_off = compliance.copy()
    comp_off[2] = FREE_COMPLIANCE
    dl2 = np.linalg.solve(a[:2, :2] + np.diag(at[:2]), -((omega - rest)[:2] + at[:2] * lam[0, :2]))
    ref2 = np.array([w[p] * jac[k, :2].T @ dl2 for k, p in enumerate(pts)])
    y2, lam2, _ = _project_orientation(x, w, idx, rot, rest, rest_len, np.zeros(3), comp_off, True,
                                       lam, dt2)
    _check(y2[pts] - x[pts], ref2, rtol)
    assert lam2[0, 2] == lam[0, 2]


@pytest.mark.parametrize("use_xpbd", [False, True], ids=["alpha", "xpbd"])
@pytest.mark.parametrize("with_rot", [False, True])
def test_project_orientation_of_six_distinct_points(use_xpbd, with_rot):
    # Reference: eqs. (17), (21)-(23) for a coupling (a body's or triangle's frame of three
    # points with mass against an edge frame), six distinct points: as the tests above, relaxed
    # (eq. 17 of alpha (Omega - Omega_rest)) or XPBD ((G W G^T + a~) dlambda = -(C + a~ lambda)),
    # G from central differences of eq. (10).
    x = np.array([[0.1, -0.2, 0.05], [0.7, 0.1, -0.1], [0.3, 0.5, 0.2],       # frame A
                  [1.0, 0.0, 0.1], [1.8, 0.3, 0.0], [1.4, 0.1, 0.9]])        # edge, ghost
    idx = np.arange(6, dtype=np.int64)
    rot = Rotation.from_rotvec([0.3, -0.2, 0.4]).as_matrix() if with_rot else None
    w = _masses(6, 21, zero=(2,))
    pts = list(range(6))
    rest_len = 0.8

    def om(y):
        return _omega(y, idx, rest_len, rot)

    omega = om(x)
    rest = omega - np.array([3e-3, -2e-3, 1e-3])
    jac = _fd_jacobian(om, x, pts, 1e-6)
    a = sum(w[p] * jac[k] @ jac[k].T for k, p in enumerate(pts))
    if use_xpbd:
        dt2 = 1e-4
        compliance = np.array([0.5, 1.0, 2.0]) * dt2 * np.trace(a) / 3.0
        at = compliance / dt2
        lam = np.array([[0.02, -0.01, 0.03]]) * np.linalg.norm(omega - rest) / at
        dlam = np.linalg.solve(a + np.diag(at), -((omega - rest) + at * lam[0]))
        ref = np.array([w[p] * jac[k].T @ dlam for k, p in enumerate(pts)])
        alpha = np.zeros(3)
    else:
        dt2, compliance, lam = 1.0, np.zeros(3), np.zeros((1, 3))
        alpha = np.array([0.6, 0.3, 0.9])
        ref = _eq17(jac, w, pts, alpha * (omega - rest))
    y, lam_new, ret = _project_orientation(x, w, idx, rot, rest, rest_len, alpha, compliance,
                                           use_xpbd, lam, dt2)
    assert ret == pytest.approx(np.linalg.norm(omega - rest), rel=1e-6)
    _check(y - x, ref, 1e-7)
    if use_xpbd:
        assert np.allclose(lam_new[0] - lam[0], dlam, rtol=1e-7, atol=1e-7 * np.abs(dlam).max())


def test_project_orientation_skips_half_turned_frames():
    # Reference: eq. (10) is undefined for frames 180 degrees apart (1 + tr Q = 0); the projection
    # is skipped (returns -1) and moves nothing (constraints.py docstring).
    x = np.array([[0, 0, 0], [1, 0, 0], [0.5, 1, 0], [0, 0, 0], [1, 0, 0], [0.5, -1, 0]], float)
    idx = np.arange(6, dtype=np.int64)
    y, _, ret = _project_orientation(x, np.ones(6), idx, None, np.zeros(3), 1.0, np.ones(3),
                                     np.zeros(3), False, np.zeros((1, 3)), 1.0)
    assert ret == -1.0
    assert np.array_equal(y, x)


@pytest.mark.parametrize("radius", [5e-5, 5e-6, 2e-6])
def test_project_orientation_of_a_thin_fibre_element_is_not_skipped(radius):
    # Reference: eqs. (17), (21): for a valid element (frames well defined, 1 + tr Q ~ 4) the block
    # G W G^T is symmetric positive definite, so the projection must be applied and, with
    # alpha = 1, remove the deviation to first order (residual O(deviation^2)).  Thin fibres
    # (radius 50, 5 and 2 um, 2.5 cm edges, SceneBuilder's default physical ghost mass
    # rho (I1 + I2) L / l_g^2) have ghost points (l_g / r)^2 times lighter than their vertices
    # (~1e5 to ~1e8), so G W G^T has eigenvalues of very different size while being far from
    # singular (its smallest eigenvalue is the bending one, ~1e16 1/(kg m^2)).
    import strandlab as sl
    from strandlab.pbd import compile_scene
    from strandlab.sim.shapes import line

    b = sl.SceneBuilder(gravity=(0, 0, 0))
    mat = sl.Material(young_modulus=1e9, density=1000.0, radius=radius)
    b.add_strand(line((0, 0, 0), (0.5, 0, 0), 20), material=mat)
    m = compile_scene(b.build())
    k = 5
    idx = np.ascontiguousarray(m.oe_idx)
    x = m.x0.copy()
    x[idx[k, 4]] += np.array([0.0, 2e-5, 1e-5])   # bend the element slightly
    rest = np.ascontiguousarray(m.oe_rest_omega)
    dev0 = np.linalg.norm(_omega(x, idx[k], m.oe_rest_length[k]) - rest[k])
    assert dev0 > 1e-4
    y = x.copy()
    ret = project_orientation(
        y, np.ascontiguousarray(m.inv_mass), idx, k, np.eye(3)[None].copy(), 0, False, rest, k,
        m.oe_rest_length[k], np.ones((len(idx), 3)), np.zeros((len(idx), 3)), False,
        np.zeros((len(idx), 3)), 1.0)
    assert ret == pytest.approx(dev0, rel=1e-6), "projection skipped (solve3 declared G W G^T singular)"
    dev1 = np.linalg.norm(_omega(y, idx[k], m.oe_rest_length[k]) - rest[k])
    assert dev1 < 1e-2 * dev0
