"""Chain shape matching: the rotation of a region's moment matrix, and conservation of linear
and angular momentum by every shape-matching and length projection (validation.md, item 10:
position-based projections must keep both)."""
import numpy as np
import pytest
from csm_helpers import solver_for, wiggly
from scipy.spatial.transform import Rotation

from strandlab.csm import tension as T
from strandlab.csm.kernels import shape_match
from strandlab.csm.rotation import quat_rotate, rotation_of_moment


def _moment(p, q, w):
    """Row-major entries of sum w q p^T (q current, p rest, centred)."""
    return tuple((w[:, None, None] * q[:, :, None] * p[:, None, :]).sum(axis=0).reshape(-1))


def _matrix(qw, qx, qy, qz):
    return np.array([quat_rotate(qw, qx, qy, qz, *e) for e in np.eye(3)]).T


def test_rotation_of_a_rigidly_turned_region_is_recovered():
    rng = np.random.default_rng(3)
    p = rng.normal(size=(7, 3))
    p -= p.mean(axis=0)
    r = Rotation.from_rotvec([0.4, -1.9, 0.7]).as_matrix()
    a = _moment(p, p @ r.T, np.ones(7))
    got = _matrix(*rotation_of_moment(*a, 1.0, 0.0, 0.0, 0.0))
    assert np.abs(got - r).max() < 1e-9


def test_rotation_far_from_the_warm_start_is_recovered():
    # turns of up to nearly half a revolution from the warm start: the Hessian of trace(R^T A)
    # is indefinite there, and the shifted (Levenberg-Marquardt) steps must still ascend
    rng = np.random.default_rng(11)
    worst = 0.0
    for k in range(200):
        p = rng.normal(size=(6, 3))
        p -= p.mean(axis=0)
        axis = rng.normal(size=3)
        angle = np.pi * (0.5 + 0.499 * k / 199)
        r = Rotation.from_rotvec(angle * axis / np.linalg.norm(axis)).as_matrix()
        got = _matrix(*rotation_of_moment(*_moment(p, p @ r.T, np.ones(6)), 1.0, 0.0, 0.0, 0.0))
        worst = max(worst, np.abs(got - r).max())
    assert worst < 1e-9


def test_rotation_of_a_stretched_region_is_its_polar_rotation():
    rng = np.random.default_rng(4)
    p = rng.normal(size=(9, 3))
    f = Rotation.from_rotvec([1.0, 0.2, -0.3]).as_matrix() @ np.diag([1.3, 0.8, 1.1])
    a = np.array(_moment(p, p @ f.T, np.ones(9))).reshape(3, 3)
    u, _, vt = np.linalg.svd(a)
    polar = u @ vt                            # det > 0 here: the polar rotation
    got = _matrix(*rotation_of_moment(*a.reshape(-1), 1.0, 0.0, 0.0, 0.0))
    assert np.linalg.det(polar) > 0
    assert np.abs(got - polar).max() < 1e-9


def test_straight_region_keeps_its_previous_spin_and_stays_proper():
    # rank-1 moment: a straight region turned onto another line; any spin about the line fits,
    # the warm start's is kept (no jump), and the result maps the rest line onto the new one
    p = np.outer(np.linspace(-2, 2, 5), [1.0, 0.0, 0.0])
    d = np.array([0.0, 0.6, 0.8])
    q = np.outer(np.linspace(-2, 2, 5), d)
    start = Rotation.from_rotvec([0.3, 0.0, 0.0]).as_quat(scalar_first=True)
    qw, qx, qy, qz = rotation_of_moment(*_moment(p, q, np.ones(5)), *start)
    r = _matrix(qw, qx, qy, qz)
    assert abs(np.linalg.det(r) - 1.0) < 1e-12
    assert np.abs(r @ [1.0, 0.0, 0.0] - d).max() < 1e-9
    # the minimal turn from the warm start: the spin about the line changes by nothing
    r0 = Rotation.from_quat(start, scalar_first=True).as_matrix()
    turn = Rotation.from_matrix(r @ r0.T).as_rotvec()
    assert abs(turn @ (r @ [1.0, 0.0, 0.0])) < 1e-9


def _momenta(x, dx, m):
    return (m[:, None] * dx).sum(axis=0), (m[:, None] * np.cross(x, dx)).sum(axis=0)


@pytest.mark.parametrize("alpha", [1.0, 0.35])
def test_shape_matching_keeps_linear_and_angular_momentum(alpha):
    sol = solver_for(wiggly(14, seed=1), options={"half_width": 3})
    st = sol.state()
    rng = np.random.default_rng(2)
    st.arrays.x[...] += rng.normal(scale=0.01, size=st.x.shape)   # deformed far from rest
    x0 = st.x.copy()
    m = sol.model.arrays.mass
    shape_match(0, 14, sol.model.arrays, st.arrays, sol.scratch, alpha)
    lin, ang = _momenta(x0, st.x - x0, m)
    scale = (m[:, None] * np.abs(st.x - x0)).sum()
    assert np.abs(st.x - x0).max() > 1e-3          # it did move the particles
    assert np.abs(lin).max() < 1e-12 * scale / 1e-3
    assert np.abs(ang).max() < 1e-10 * scale


def _stretched(seed):
    sol = solver_for(wiggly(16, seed=seed))
    st = sol.state()
    rng = np.random.default_rng(seed + 1)
    st.arrays.x[...] += rng.normal(scale=0.002, size=st.x.shape)
    st.arrays.x[...] *= 1.05                                      # every segment stretched
    return sol, st


@pytest.mark.parametrize("solver", [T.LENGTH_DIRECT, T.LENGTH_GAUSS_SEIDEL])
def test_a_length_pass_keeps_linear_and_angular_momentum(solver):
    # one pass: the direct solve moves all particles at once along the directions it solved
    # for (exact); a Gauss-Seidel pass is a sequence of pairwise moves (each exact, the sum to
    # second order in the moves)
    sol, st = _stretched(5)
    x0 = st.x.copy()
    m = sol.model.arrays.mass
    T.strain_limit(0, 16, sol.model.arrays, st.arrays, sol.scratch, 1, solver, 0.01)
    lin, ang = _momenta(x0, st.x - x0, m)
    scale = (m[:, None] * np.abs(st.x - x0)).sum()
    assert np.abs(lin).max() < 1e-12 * scale
    tol = 1e-12 if solver == T.LENGTH_DIRECT else 1e-2
    assert np.abs(ang).max() < tol * scale * 0.24


@pytest.mark.parametrize("solver,passes", [(T.LENGTH_DIRECT, 6),
                                           (T.LENGTH_GAUSS_SEIDEL, 400)])
def test_length_passes_reach_the_maximum_lengths(solver, passes):
    sol, st = _stretched(7)
    T.strain_limit(0, 16, sol.model.arrays, st.arrays, sol.scratch, passes, solver, 0.01)
    strain = np.linalg.norm(np.diff(st.x, axis=0), axis=1) / sol.model.arrays.rest_length - 1
    assert strain.max() < 1e-6
    # each segment's own corrections are recorded (they make the tension)
    assert np.all(sol.scratch.lam_total[:16] > 0)


def test_direct_length_solve_reaches_long_chains_gauss_seidel_does_not():
    sol, st = _stretched(9)
    x = st.x.copy()
    out = {}
    for solver in (T.LENGTH_DIRECT, T.LENGTH_GAUSS_SEIDEL):
        st.arrays.x[...] = x
        T.strain_limit(0, 16, sol.model.arrays, st.arrays, sol.scratch, 6, solver, 0.01)
        out[solver] = (np.linalg.norm(np.diff(st.x, axis=0), axis=1)
                       / sol.model.arrays.rest_length - 1).max()
    assert out[T.LENGTH_DIRECT] < 1e-6 < 1e-3 < out[T.LENGTH_GAUSS_SEIDEL]
