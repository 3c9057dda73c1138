"""Modified discrete Darboux vector (eq. 10) and its gradient (appendix eqs. 46-53).

References:
- eq. (10), middle expression: ``Omega = (4 / l) vect(Q) / (1 + tr Q)``, ``Q = D_A^T D_B``, with the
  frames of eq. (3); the sign convention is fixed in ``docs/pbd.md`` and
  ``../shared/notes/umetani_errata.md`` (rotation vector from A to B in A's axes).  The helper
  ``_omega_ref`` writes it out independently of the package.
- Rodrigues: for ``D_B = D_A exp([theta])`` (a rotation by ``|theta|`` about the material axis
  ``theta / |theta|``), ``Omega = (2 / l) tan(|theta| / 2) theta / |theta|`` exactly, which is
  ``theta / l`` to first order.
- eqs. (22)-(23): with a constant rotation ``R`` between the frames, frame A is ``D_A R``.

Finite-difference tolerance: central differences with step ``h`` on inputs whose smallest
length scale is ``ell`` and coordinates ``|x|`` have relative error about
``(h / ell)^2 + eps |x| / h`` (eps = 2.2e-16; truncation plus the roundoff of the coordinate
differences the frames are built from).  Unit-size inputs use ``h = 1e-6`` (about 2e-10) with rtol
1e-7; near-degenerate inputs (1e-6 m edges 1 m from the origin, a ghost 1e-5 off the edge line)
use ``h = 1e-4 ell`` (at most about 2.3e-6) with rtol 1e-5.  Omega of a sharp bend is larger but
its derivatives scale alike, so the same relative bound holds.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from helpers import fd_jacobian
from helpers import omega_ref as _omega_ref
from helpers import rel_err as _rel_err
from strandlab.geometry.darboux import darboux, darboux_all, darboux_gradient, darboux_of
from strandlab.geometry.frames import frame_of

# ----------------------------------------------------------------------------- references


def _points_of_frame(d, origin, edge=1.0, ghost=0.6):
    """Three points whose eq. (3) frame is ``d`` (columns d1, d2, d3)."""
    return np.array([origin, origin + edge * d[:, 2], origin + 0.5 * edge * d[:, 2] + ghost * d[:, 0]])


# ----------------------------------------------------------------------------- helpers
def _gradient(x, idx, rest_len, rot=None):
    x = np.ascontiguousarray(x, dtype=np.float64)
    idx = np.asarray(idx, dtype=np.int64).reshape(1, 6)
    r = (np.eye(3) if rot is None else np.asarray(rot, dtype=np.float64)).reshape(1, 3, 3).copy()
    omega = np.zeros(3)
    grad = np.full((6, 3, 3), np.nan)
    sq = darboux_gradient(x, idx, 0, r, 0, rot is not None, float(rest_len), np.zeros((3, 3)),
                          np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((2, 3, 3)), omega, grad)
    return sq, omega, grad


def _fd_gradient(x, idx, rest_len, h, rot=None):
    """Central differences of darboux_of, per point, placed in the first slot holding the point."""
    idx = list(idx)
    pts = sorted(set(idx))
    jac = fd_jacobian(lambda y: darboux_of(y[idx], rest_len, rot), x, pts, h)
    fd = np.zeros((6, 3, 3))
    for k, p in enumerate(pts):
        fd[idx.index(p)] = jac[k]
    return fd


def _rod_element(p0, p1, p2, g0dir, g1dir, lg):
    """Two consecutive edges p0-p1, p1-p2 with ghosts on their perpendicular bisectors.

    Returns points [p0, p1, g0, p2, g1] and the shared-vertex index row [0, 1, 2, 1, 3, 4].
    """
    pts = [np.asarray(p, float) for p in (p0, p1, p2)]
    ghosts = []
    for a, b, gd in ((pts[0], pts[1], g0dir), (pts[1], pts[2], g1dir)):
        t = (b - a) / np.linalg.norm(b - a)
        g = np.asarray(gd, float) - np.dot(gd, t) * t
        ghosts.append(0.5 * (a + b) + lg * g / np.linalg.norm(g))
    x = np.array([pts[0], pts[1], ghosts[0], pts[2], ghosts[1]])
    return x, [0, 1, 2, 1, 3, 4]


def _bent(angle_deg, length=1.0, origin=(0.0, 0.0, 0.0), twist=0.3):
    """Edges of ``length`` with an angle ``angle_deg`` between their directions."""
    a = np.radians(angle_deg)
    o = np.asarray(origin, float)
    p0 = o
    p1 = o + length * np.array([1.0, 0.0, 0.0])
    p2 = p1 + length * np.array([np.cos(a), np.sin(a), 0.0])
    return _rod_element(p0, p1, p2, [0.0, 0.3, 1.0], [np.sin(twist), 0.2, np.cos(twist)], length)


# ----------------------------------------------------------------------------- value
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_darboux_of_matches_eq10_middle_expression(seed):
    # Reference: eq. (10) middle expression written out in _omega_ref (with and without rot).
    rng = np.random.default_rng(seed)
    p6 = rng.normal(size=(6, 3))
    assert np.allclose(darboux_of(p6, 0.7), _omega_ref(p6, 0.7), rtol=1e-12, atol=1e-12)
    rot = Rotation.random(random_state=seed).as_matrix()
    assert np.allclose(darboux_of(p6, 0.7, rot), _omega_ref(p6, 0.7, rot), rtol=1e-12, atol=1e-12)


def test_darboux_all_matches_darboux_of():
    # Reference: darboux_all is darboux_of applied row by row (same eq. 10).
    x, row = _bent(40.0)
    x2, _ = _bent(150.0, origin=(3.0, 0.0, 0.0))
    x = np.vstack([x, x2])
    idx = np.array([row, [r + 5 for r in row]], dtype=np.int64)
    out = np.zeros((2, 3))
    darboux_all(x, idx, np.array([0.9, 1.1]), out)
    assert np.allclose(out[0], darboux_of(x[idx[0]], 0.9), rtol=1e-14)
    assert np.allclose(out[1], darboux_of(x[idx[1]], 1.1), rtol=1e-14)


# ----------------------------------------------------------------------------- gradient
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_rot", [False, True])
def test_gradient_matches_fd_six_distinct_points(seed, with_rot):
    # Reference: central differences of darboux_of (eq. 10); h = 1e-6, rtol 1e-7 (module docstring).
    rng = np.random.default_rng(10 + seed)
    x = rng.normal(size=(6, 3))
    # keep the frames well away from 180 degrees apart (small random relative rotation)
    d = Rotation.random(random_state=seed).as_matrix()
    x[0:3] = _points_of_frame(d, x[0], 1.2, 0.5)
    x[3:6] = _points_of_frame(d @ Rotation.from_rotvec(rng.normal(size=3)).as_matrix(), x[3], 0.8, 0.9)
    rot = Rotation.from_rotvec(0.4 * rng.normal(size=3)).as_matrix() if with_rot else None
    idx = [0, 1, 2, 3, 4, 5]
    sq, omega, grad = _gradient(x, idx, 0.7, rot)
    assert sq > 0.0
    assert np.allclose(omega, _omega_ref(x, 0.7, rot), rtol=1e-12, atol=1e-12)
    assert _rel_err(grad, _fd_gradient(x, idx, 0.7, 1e-6, rot)) < 1e-7


@pytest.mark.parametrize("with_rot", [False, True])
@pytest.mark.parametrize("case", ["generic", "straight", "bent150", "tiny", "ghost_near_line"])
def test_gradient_matches_fd_shared_vertex(case, with_rot):
    # Reference: central differences of darboux_of for a rod element whose frames share the middle
    # vertex (idx [0, 1, 2, 1, 3, 4]); the gradient of the shared point is the sum over both
    # frames and sits in slot 1, slot 3 is zero (darboux_gradient docstring).  Steps and
    # tolerances: module docstring (h = 1e-6, rtol 1e-7; h = 1e-4 ell, rtol 1e-5 when degenerate).
    rest_len = 1.0
    h, rtol = 1e-6, 1e-7
    if case == "generic":
        x, idx = _rod_element([0, 0, 0], [0.9, 0.2, -0.1], [1.5, 0.9, 0.3], [0, 0, 1], [0.3, -0.2, 1], 0.8)
    elif case == "straight":   # frames parallel, Omega = 0
        x, idx = _rod_element([0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [0, 1, 0], 1.0)
    elif case == "bent150":    # 150 degrees between the edge directions
        x, idx = _bent(150.0)
    elif case == "tiny":       # 1e-6 m edges, 1 m from the origin, element length 1e-6 m
        x, idx = _bent(35.0, length=1e-6, origin=(0.6, -0.5, 0.7))
        rest_len = 1e-6
        h, rtol = 1e-10, 1e-5
    else:                      # ghost of edge A 1e-5 (relative) off the edge line
        x, idx = _rod_element([0, 0, 0], [1, 0, 0], [1.8, 0.5, 0.2], [0, 0, 1], [0, 0.2, 1], 1.0)
        x[2] = np.array([0.3, 0.0, 1e-5])
        h, rtol = 1e-9, 1e-5
    rot = Rotation.from_rotvec([0.2, -0.5, 0.3]).as_matrix() if with_rot else None
    sq, omega, grad = _gradient(x, idx, rest_len, rot)
    assert sq > 0.0
    assert np.allclose(omega, _omega_ref(x[idx], rest_len, rot), rtol=1e-9, atol=1e-9 / rest_len)
    if case == "straight" and not with_rot:
        assert np.max(np.abs(omega)) < 1e-15
    if case == "bent150" and not with_rot:
        # Rodrigues: |Omega| = 2 tan(75 deg) / l for a pure bend of 150 degrees
        assert np.linalg.norm(omega) >= 2 * np.tan(np.radians(75.0)) - 1e-12
    assert np.all(grad[3] == 0.0)
    assert _rel_err(grad, _fd_gradient(x, idx, rest_len, h, rot)) < rtol


def test_gradient_is_translation_and_rotation_invariant():
    # Reference: Omega is invariant under rigid motions of all six points (eq. 10 depends on
    # D_A^T D_B only), so sum_a dOmega/dx_a = 0 and sum_a x_a x dOmega_i/dx_a = 0.
    x, idx = _bent(70.0)
    _, _, grad = _gradient(x, idx, 1.0)
    pts = x[idx]
    scale = np.max(np.abs(grad))
    assert np.max(np.abs(grad.sum(axis=0))) < 1e-13 * scale
    for i in range(3):
        torque = sum(np.cross(pts[s], grad[s, i]) for s in range(6))
        assert np.max(np.abs(torque)) < 1e-13 * scale * np.max(np.abs(pts))


# ----------------------------------------------------------------------------- sign convention
@pytest.mark.parametrize("axis", [0, 1, 2], ids=["bend_d1", "bend_d2", "twist_d3"])
@pytest.mark.parametrize("angle", [1e-4, 0.3, 2.0, np.pi - 1e-3])
@pytest.mark.parametrize("with_rot", [False, True])
def test_omega_of_rotation_about_material_axis_is_rodrigues(axis, angle, with_rot):
    # Reference: Rodrigues' parameter of D_A^T D_B = exp([angle e_axis]) is
    # 2 tan(angle / 2) e_axis, so Omega = (2 / l) tan(angle / 2) e_axis exactly (eq. 10 and
    # docs/pbd.md); to first order Omega = angle / l e_axis.  With a constant rotation R the
    # effective frame A is D_A R (eqs. 22-23), so D_B = D_A R exp([theta]) gives the same Omega.
    l = 0.37
    da = Rotation.from_rotvec([0.3, -1.1, 0.7]).as_matrix()
    rot = Rotation.from_rotvec([-0.4, 0.2, 0.9]).as_matrix() if with_rot else np.eye(3)
    theta = np.zeros(3)
    theta[axis] = angle
    db = da @ rot @ Rotation.from_rotvec(theta).as_matrix()
    pa = _points_of_frame(da, np.array([0.1, 0.2, 0.3]), 0.5, 0.4)
    pb = _points_of_frame(db, np.array([-1.0, 0.7, 0.2]), 0.9, 1.3)
    assert np.allclose(frame_of(*pb), db, atol=1e-14)
    omega = darboux_of(np.vstack([pa, pb]), l, rot if with_rot else None)
    expected = np.zeros(3)
    expected[axis] = 2.0 * np.tan(angle / 2.0) / l
    # near 180 degrees 1 + tr Q ~ (pi - angle)^2 = 1e-6 is computed with an error of a few
    # 1e-16, so every component is good to about 1e-9 of |Omega|; rtol 1e-8 of |Omega|
    assert np.max(np.abs(omega - expected)) <= 1e-8 * np.linalg.norm(expected)
    if angle < 1e-3:
        assert omega[axis] == pytest.approx(angle / l, rel=angle ** 2)  # first order


def test_omega_of_small_general_rotation_is_theta_over_l_componentwise():
    # Reference: first-order statement Omega = theta / l for D_B = D_A exp([theta]), theta small,
    # with the second-order remainder of Rodrigues' parameter (2 tan(|t| / 2) = |t| + |t|^3 / 12).
    theta = np.array([2e-4, -3e-4, 1e-4])
    l = 0.5
    da = Rotation.from_rotvec([1.0, 0.5, -0.2]).as_matrix()
    db = da @ Rotation.from_rotvec(theta).as_matrix()
    omega = darboux_of(np.vstack([_points_of_frame(da, np.zeros(3)), _points_of_frame(db, np.ones(3))]), l)
    assert np.allclose(omega, theta / l, rtol=1e-7, atol=0.0)


# ----------------------------------------------------------------------------- 180 degrees
def _half_turn_points(axis_world, da):
    db = Rotation.from_rotvec(np.pi * np.asarray(axis_world)).as_matrix() @ da
    return np.vstack([_points_of_frame(da, np.zeros(3)), _points_of_frame(db, np.array([2.0, 1.0, 0.0]))])


def _assert_undefined(p6):
    p6 = np.ascontiguousarray(p6, dtype=np.float64)
    idx = np.arange(6, dtype=np.int64).reshape(1, 6)
    eye = np.eye(3).reshape(1, 3, 3)
    sq = darboux(p6, idx, 0, eye, 0, False, 1.0, np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)), np.zeros(3))
    assert sq <= 0.0
    sq_g, _, _ = _gradient(p6, range(6), 1.0)
    assert sq_g <= 0.0
    with pytest.raises(ValueError, match="180 degrees"):
        darboux_of(p6)
    out = np.zeros((1, 3))
    darboux_all(p6, idx, np.ones(1), out)
    assert np.all(np.isnan(out))


def test_omega_undefined_for_hairpin_and_half_twist():
    # Reference: eq. (10) has 1 + tr Q = 0 for frames 180 degrees apart (Omega infinite, the
    # paper's "kinked completely"); darboux returns <= 0, darboux_of raises, darboux_all gives NaN.
    # Exact hairpin: edge reversed, ghost on the same side (a half turn about d1).
    hairpin = np.array([[0, 0, 0], [1, 0, 0], [0.5, 1, 0], [2, 0, 0], [1, 0, 0], [1.5, 1, 0]], float)
    _assert_undefined(hairpin)
    # Half twist: same edge, ghost on the opposite side (a half turn about d3).
    twist = np.array([[0, 0, 0], [1, 0, 0], [0.5, 1, 0], [0, 0, 0], [1, 0, 0], [0.5, -1, 0]], float)
    _assert_undefined(twist)


def test_omega_undefined_for_half_turn_about_generic_axis():
    # Reference: as above, for a half turn about an axis that is not a frame axis (e.g. a hairpin
    # of a rod whose ghost is not in the plane of the bend).  Q is then symmetric, so both
    # vect(Q) and 1 + tr Q vanish and their computed ratio is roundoff / roundoff: a finite
    # "Omega" returned here is meaningless and must be reported as undefined.
    rng = np.random.default_rng(100)
    defined = []
    for seed in range(12):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        p6 = _half_turn_points(axis, Rotation.random(random_state=seed).as_matrix())
        try:
            defined.append((seed, darboux_of(p6).round(3).tolist()))
        except ValueError:
            pass
    assert not defined, f"half turns reported as defined (seed, Omega): {defined}"
    # the other entry points agree on the first case
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    _assert_undefined(_half_turn_points(axis, Rotation.random(random_state=0).as_matrix()))


def test_omega_near_but_below_180_degrees_is_defined_and_large():
    # Reference: Rodrigues |Omega| = 2 tan(theta / 2) / l grows without bound as theta -> pi
    # (paper, section on the modified discrete Darboux vector), but is defined below pi.
    da = np.eye(3)
    db = Rotation.from_rotvec([np.pi - 1e-4, 0, 0]).as_matrix()
    p6 = np.vstack([_points_of_frame(da, np.zeros(3)), _points_of_frame(db, np.ones(3))])
    omega = darboux_of(p6)
    assert omega[0] == pytest.approx(2.0 * np.tan((np.pi - 1e-4) / 2.0), rel=1e-6)


def test_degenerate_frame_is_undefined():
    # Reference: eq. (3) is undefined when a ghost lies on its edge line.
    p6 = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 0, 0], [1, 0, 0], [0.5, 1, 0]], float)
    with pytest.raises(ValueError):
        darboux_of(p6)
    sq, _, _ = _gradient(p6, range(6), 1.0)
    assert sq < 0.0
