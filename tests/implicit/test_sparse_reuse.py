"""Sparse solver methods (a kept factorisation as the CG preconditioner, Jacobi CG) and dynamic
terms (stencils that change between steps, kept out of the fixed pattern)."""
from __future__ import annotations

import numpy as np
import pytest
from implicit_toys import QuadraticTerm, SpringTerm, ToySystem, dense_reference
from test_sparse_solver import BLOCKS, N, coupled_terms

from strandlab.implicit import (
    Assembly,
    BandedSolver,
    ImplicitEuler,
    NewtonSettings,
    SparseSolver,
    make_linear_solver,
)
from strandlab.implicit.ldl import qdldl_available
from strandlab.implicit.sparse import PCG_LARGE
from strandlab.implicit.supernodal import cvxopt_available

#: The preconditioner's backends: with QDLDL the conjugate gradients run as one compiled call
#: (strandlab.implicit.pcg), with SuperLU as a Python loop; both must behave alike.
CG_BACKENDS = ["superlu"] + (["qdldl"] if qdldl_available() else [])


class PairTerm(QuadraticTerm):
    """A quadratic term whose stencil set can be replaced (``set``): dynamic."""

    dynamic = True

    def set(self, dofs, hess):
        self.dofs = np.ascontiguousarray(dofs, dtype=np.int64)
        self.H = np.ascontiguousarray(hess, dtype=np.float64)
        self.x0 = np.zeros(self.dofs.shape)


def spd(rng, n, k):
    a = rng.normal(size=(n, k, k))
    return a @ a.transpose(0, 2, 1)


def solver_for(rng, terms, diag, **options):
    asm = Assembly(terms, N, BLOCKS)
    asm.evaluate(np.zeros(N), hessian=True)
    sol = SparseSolver(asm, **options)
    sol.assemble(hess_scale=1.0, diagonal=diag)
    return asm, sol


def reassemble(asm, sol, diag):
    """The terms' Hessians evaluated again and the solver's matrix assembled from them."""
    asm.evaluate(np.zeros(N), hessian=True)
    sol.assemble(hess_scale=1.0, diagonal=diag)


def dense(terms, diag):
    return dense_reference(N, [t.dofs for t in terms], [t.H for t in terms]) + np.diag(diag)


def solve_random(rng, sol, A):
    """``sol``'s solve of a random right-hand side, the right-hand side, and the dense solve of
    ``A`` shifted as the solver's last factorisation was (``shift`` times its diagonal's
    magnitude): ``(x, rhs, reference)``."""
    x = np.zeros(N)
    rhs = rng.normal(size=N)
    sol.solve(rhs, x)
    return x, rhs, np.linalg.solve(A + sol.shift * np.diag(np.abs(np.diag(A))), rhs)


@pytest.mark.parametrize("backend", CG_BACKENDS)
def test_reuse_keeps_the_factor_and_solves_to_its_tolerance(backend):
    rng = np.random.default_rng(30)
    terms = coupled_terms(rng)
    diag = rng.uniform(0.5, 1.0, N)
    asm, sol = solver_for(rng, terms, diag, method="reuse", pcg_rtol=1e-8, backend=backend)
    fixed = np.zeros(N, bool)
    fixed[[3, 40]] = True
    free = ~fixed
    sol.factor(fixed)
    assert sol.factorizations == 1
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)                      # fresh factor: direct
    assert sol.linear_iterations == 0
    # a nearby matrix: no new factorisation, CG to the tolerance
    for t in terms:
        t.H *= 1.0 + 0.05 * rng.uniform(size=(t.H.shape[0], 1, 1))
    reassemble(asm, sol, diag)
    info = sol.factor(fixed)
    sol.solve(rhs, x)
    assert info.shifted_blocks == 0 and sol.factorizations == 1 and sol.solve_info is None
    assert 0 < sol.linear_iterations <= 10
    A = dense(terms, diag)[np.ix_(free, free)]
    r = A @ x[free] - rhs[free]
    assert np.linalg.norm(r) <= 1e-8 * np.linalg.norm(rhs[free])
    assert np.all(x[fixed] == 0.0)
    # new fixed DOFs: a new factorisation
    fixed[7] = True
    sol.factor(fixed)
    assert sol.factorizations == 2


def test_reuse_factors_again_when_cg_fails():
    rng = np.random.default_rng(31)
    terms = coupled_terms(rng)
    diag = rng.uniform(0.5, 1.0, N)
    asm, sol = solver_for(rng, terms, diag, method="reuse", pcg_max_iterations=2,
                          pcg_rtol=1e-10)
    sol.factor(np.zeros(N, bool))
    for t in terms:                        # far from the factored matrix
        t.H = spd(rng, *t.H.shape[:2])
    reassemble(asm, sol, diag)
    sol.factor(np.zeros(N, bool))
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    assert sol.factorizations == 2 and sol.solve_info is not None
    ref = np.linalg.solve(dense(terms, diag), rhs)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-10 * np.abs(ref).max())


def with_pairs(seed, **options):
    """Coupled terms and a dynamic term of one stencil (random generator ``seed``), a
    diagonal in ``[0.5, 1]`` and their solver (``options``), assembled:
    ``(rng, terms, pairs, diag, asm, sol)``."""
    rng = np.random.default_rng(seed)
    terms = coupled_terms(rng)
    pairs = PairTerm(np.array([[0, 30, 59]]), spd(rng, 1, 3), name="pairs")
    terms.append(pairs)
    diag = rng.uniform(0.5, 1.0, N)
    asm, sol = solver_for(rng, terms, diag, **options)
    return rng, terms, pairs, diag, asm, sol


def factored(seed, low=0.5, **options):
    """Coupled terms (random generator ``seed``), a diagonal in ``[low, 2 low]``, their solver
    (``options``) assembled and factored once: ``(rng, terms, diag, asm, sol)``."""
    rng = np.random.default_rng(seed)
    terms = coupled_terms(rng)
    diag = rng.uniform(low, 2.0 * low, N)
    asm, sol = solver_for(rng, terms, diag, **options)
    sol.factor(np.zeros(N, bool))
    return rng, terms, diag, asm, sol


def test_reuse_meets_negative_curvature_and_shifts():
    rng, terms, diag, asm, sol = factored(32, method="reuse")
    for t in terms:
        t.H *= -1.0                        # indefinite now: CG stops, the factor shifts
    reassemble(asm, sol, diag)
    sol.factor(np.zeros(N, bool))
    x, _, ref = solve_random(rng, sol, dense(terms, diag))
    assert sol.solve_info is not None and sol.solve_info.max_shift > 0
    np.testing.assert_allclose(x, ref, rtol=1e-8)


@pytest.mark.parametrize("backend", CG_BACKENDS)
def test_reuse_truncates_at_negative_curvature_met_later(backend):
    # the coupling stencils turned negative: the matrix is indefinite (lowest eigenvalue
    # -18.8), but the first direction has positive curvature.  CG stops at the second, which
    # has none, and returns the iterate so far (Newton-CG), no factorisation: the first CG
    # step preconditioned by the kept factor, a descent direction
    rng, terms, diag, asm, sol = factored(33, method="reuse", pcg_rtol=1e-10, backend=backend)
    P = dense(terms, diag)
    terms[-1].H *= -1.0
    reassemble(asm, sol, diag)
    sol.factor(np.zeros(N, bool))
    A = dense(terms, diag)
    assert np.linalg.eigvalsh(A).min() < -10.0
    x = np.zeros(N)
    rhs = rng.normal(size=N)
    sol.solve(rhs, x)
    assert sol.factorizations == 1 and sol.solve_info is None
    assert sol.linear_iterations == 2
    z = np.linalg.solve(P, rhs)
    np.testing.assert_allclose(x, (rhs @ z) / (z @ A @ z) * z, rtol=1e-9)
    assert rhs @ x > 0


#: The backends that keep their last good factor through a failed one (direct_cg falls back
#: to conjugate gradients on it); with QDLDL direct_cg is direct.
KEEPING = ["superlu"] + (["cvxopt"] if cvxopt_available() else [])


@pytest.mark.parametrize("backend", KEEPING)
def test_direct_cg_solves_an_indefinite_matrix_by_cg_on_the_last_good_factor(backend):
    # as above, but each factor() tries a new factorisation: it fails once (no shift
    # sequence), and solve() runs the truncated CG preconditioned by the last good factor
    rng, terms, diag, asm, sol = factored(33, method="direct_cg", pcg_rtol=1e-10,
                                          backend=backend)
    P = dense(terms, diag)
    terms[-1].H *= -1.0
    reassemble(asm, sol, diag)
    info = sol.factor(np.zeros(N, bool))
    assert info.max_shift == 0.0 and sol.factorizations == 2 and sol.fallbacks == 1
    A = dense(terms, diag)
    x = np.zeros(N)
    rhs = rng.normal(size=N)
    sol.solve(rhs, x)
    assert sol.solve_info is None and sol.linear_iterations == 2
    z = np.linalg.solve(P, rhs)
    np.testing.assert_allclose(x, (rhs @ z) / (z @ A @ z) * z, rtol=1e-9)
    assert rhs @ x > 0
    # positive definite again: factored and solved directly, no CG
    terms[-1].H *= -1.0
    reassemble(asm, sol, diag)
    sol.factor(np.zeros(N, bool))
    sol.solve(rhs, x)
    assert sol.factorizations == 3 and sol.linear_iterations == 2 and sol.fallbacks == 1
    np.testing.assert_allclose(x, np.linalg.solve(P, rhs), rtol=1e-9)


@pytest.mark.parametrize("backend", KEEPING + (["qdldl"] if qdldl_available() else []))
def test_direct_cg_shifts_when_cg_fails_or_the_backend_keeps_no_factor(backend):
    # every stencil turned negative: CG meets negative curvature at once, and the shift
    # sequence factors the shifted matrix; QDLDL's failed factorisation overwrites its last
    # good one, so it shifts at once (as "direct")
    rng, terms, diag, asm, sol = factored(32, method="direct_cg", backend=backend)
    for t in terms:
        t.H *= -1.0
    reassemble(asm, sol, diag)
    info = sol.factor(np.zeros(N, bool))
    x, _, ref = solve_random(rng, sol, dense(terms, diag))
    if backend == "qdldl":
        assert info.max_shift > 0 and sol.fallbacks == 0 and sol.solve_info is None
    else:
        assert info.max_shift == 0 and sol.fallbacks == 1
        assert sol.solve_info is not None and sol.solve_info.max_shift > 0
    np.testing.assert_allclose(x, ref, rtol=1e-8)


@pytest.mark.parametrize("backend", KEEPING)
def test_direct_cg_shifts_when_a_new_pattern_has_no_good_factor(backend):
    # a dynamic term's new stencils couple other DOFs: CHOLMOD through cvxopt analyses the new
    # pattern afresh and, when its first factorisation fails, has no good factor of it to
    # precondition with; the shift sequence runs instead (SuperLU keeps its last LU and
    # falls back as before)
    rng, terms, pairs, diag, asm, sol = with_pairs(36, method="direct_cg", backend=backend)
    fixed = np.zeros(N, bool)
    sol.factor(fixed)
    pairs.set(np.array([[1, 21, 41], [2, 22, 57]]), -50.0 * spd(rng, 2, 3))
    asm.refresh()
    reassemble(asm, sol, diag)
    A = dense(terms, diag)
    assert np.linalg.eigvalsh(A).min() < 0.0
    info = sol.factor(fixed)
    x, rhs, ref = solve_random(rng, sol, A)
    if backend == "cvxopt":
        assert info.max_shift > 0 and sol.fallbacks == 0
        np.testing.assert_allclose(x, ref, rtol=1e-8)
    else:
        assert sol.fallbacks == 1 and np.all(np.isfinite(x))
    assert rhs @ x > 0


@pytest.mark.parametrize("n, given, expect", [(300, None, 20), (PCG_LARGE, None, 20),
                                              (PCG_LARGE + 1, None, 40),
                                              (PCG_LARGE + 1, 7, 7)])
def test_reuse_iteration_cap_follows_the_system_size(n, given, expect):
    # a factorisation of a large system costs more conjugate-gradient iterations
    d = np.arange(n).reshape(-1, 1)
    asm = Assembly([QuadraticTerm(d, np.ones((n, 1, 1)))], n, np.array([0, n]))
    asm.evaluate(np.zeros(n), hessian=True)
    sol = SparseSolver(asm, method="reuse", pcg_max_iterations=given)
    sol.assemble(hess_scale=1.0, diagonal=np.ones(n))
    fixed = np.zeros(n, bool)
    fixed[0] = True                   # one fewer free DOF: the cap follows the free ones
    sol.factor(fixed)
    assert sol.pcg_max_iterations == expect


def test_jacobi_cg():
    rng, terms, diag, asm, sol = factored(33, low=5.0, method="jacobi", pcg_rtol=1e-9)
    x = np.zeros(N)
    rhs = rng.normal(size=N)
    sol.solve(rhs, x)
    assert sol.factorizations == 0 and sol.linear_iterations > 0
    A = dense(terms, diag)
    assert np.linalg.norm(A @ x - rhs) <= 1e-9 * np.linalg.norm(rhs)


def test_bad_method_options():
    rng = np.random.default_rng(34)
    asm = Assembly(coupled_terms(rng), N, BLOCKS)
    with pytest.raises(ValueError, match="method"):
        SparseSolver(asm, method="cg")
    with pytest.raises(ValueError, match="pcg_rtol"):
        SparseSolver(asm, pcg_rtol=2.0)
    with pytest.raises(ValueError, match="pcg_max_iterations"):
        SparseSolver(asm, pcg_max_iterations=0)


@pytest.mark.parametrize("method", ["direct", "reuse"])
def test_dynamic_term_changes_its_stencils(method):
    rng, terms, pairs, diag, asm, sol = with_pairs(35, method=method, pcg_rtol=1e-12,
                                                   pcg_max_iterations=60)
    assert asm.has_dynamic and asm.refresh() == ()
    # stencils of the dynamic term are not in the fixed pattern
    A_static = dense(terms[:-1], diag)
    assert np.count_nonzero(sol.data) <= np.count_nonzero(A_static)
    np.testing.assert_allclose(sol.dense(), dense(terms, diag), rtol=1e-14, atol=1e-14)
    sol.factor(np.zeros(N, bool))
    # a new stencil set, one stencil with a zero Hessian (out of contact)
    h = spd(rng, 3, 3)
    h[1] = 0.0
    pairs.set(np.array([[1, 21, 41], [2, 22, 57], [5, 33, 44]]), h)
    assert asm.refresh() == (len(terms) - 1,)
    assert asm.hess[-1].shape == (3, 3, 3) and asm.refresh() == ()
    reassemble(asm, sol, diag)
    A = dense(terms, diag)
    np.testing.assert_allclose(sol.dense(), A, rtol=1e-14, atol=1e-14)
    fixed = np.zeros(N, bool)
    fixed[21] = True
    free = ~fixed
    sol.factor(fixed)
    x = np.zeros(N)
    rhs = rng.normal(size=N)
    sol.solve(rhs, x)
    ref = np.linalg.solve(A[np.ix_(free, free)], rhs[free])
    np.testing.assert_allclose(x[free], ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    assert x[21] == 0.0


def test_dynamic_terms_need_the_sparse_solver():
    rng = np.random.default_rng(36)
    term = PairTerm(np.array([[0, 1, 2]]), spd(rng, 1, 3))
    asm = Assembly([term], N, BLOCKS)
    with pytest.raises(ValueError, match="dynamic"):
        BandedSolver(asm)
    assert make_linear_solver(asm, "auto").kind == "sparse"


def springs(seed=0):
    rng = np.random.default_rng(seed)
    n_pts = 12
    n = 3 * n_pts
    x = np.zeros((n_pts, 3))
    x[:, 0] = 0.1 * np.arange(n_pts)
    x += 0.02 * rng.normal(size=x.shape)
    pairs = np.array([(i, i + 1) for i in range(n_pts - 1)] + [(0, n_pts - 1)])
    sys_ = ToySystem(n, np.full(n, 0.02), [], np.array([0, n]))
    sys_.terms.append(SpringTerm(pairs, 50.0, 0.1, system=sys_))
    return sys_, x.reshape(-1), 0.3 * rng.normal(size=n)


@pytest.mark.parametrize("guess", ["start", "inertial"])
@pytest.mark.parametrize("method", ["direct", "reuse"])
def test_step_settings_reach_the_same_solution(guess, method):
    """The first iterate, the residual scale and the linear method change the path, not the
    converged step."""
    f = np.tile([0.0, 0.0, -0.2], 12)
    ref_sys, q_ref, v_ref = springs()
    ImplicitEuler(ref_sys, NewtonSettings(tolerance=1e-12, max_iterations=50),
                  linear_solver="sparse").step(q_ref, v_ref, q_ref, v_ref, 0.01, f_ext=f)
    sys_, q, v = springs()
    fixed = np.zeros(36, bool)
    fixed[:3] = True
    q_start = q.copy()
    st = NewtonSettings(tolerance=1e-9, scale="load", initial_guess=guess, max_iterations=50)
    integ = ImplicitEuler(sys_, st, linear_solver="sparse",
                          solver_options={"method": method})
    info = integ.step(q, v, q, v, 0.01, f_ext=f, fixed=fixed)
    assert info.converged
    # the residual is measured against max(|f|, |M v / h|) of the free DOFs
    free = ~fixed
    sys2, q2, v2 = springs()
    load = max(np.linalg.norm(f[free]), np.linalg.norm(0.02 * v2[free] / 0.01))
    assert info.residual <= 1e-9 * load
    assert np.all(q[:3] == q_start[:3])            # fixed DOFs held at q_n
    # against the reference without fixed DOFs: only the free ones can be compared with a
    # reference that holds them too
    ref_sys2, q3, v3 = springs()
    ImplicitEuler(ref_sys2, NewtonSettings(tolerance=1e-13, max_iterations=50),
                  linear_solver="sparse").step(q3, v3, q3, v3, 0.01, f_ext=f, fixed=fixed)
    np.testing.assert_allclose(q, q3, rtol=0, atol=1e-9)


def test_newton_settings_checks():
    with pytest.raises(ValueError, match="scale"):
        NewtonSettings(scale="weight")
    with pytest.raises(ValueError, match="initial_guess"):
        NewtonSettings(initial_guess="explicit")


def test_jacobi_keeps_its_preconditioner_after_a_fallback_factorisation():
    # Jacobi CG capped at 6 iterations fails and factors; the next solve (a nearby matrix) is
    # again Jacobi CG, not CG preconditioned by that factorisation (the reuse method's, which
    # would converge within the cap)
    rng, terms, diag, asm, sol = factored(34, method="jacobi", pcg_max_iterations=6,
                                          pcg_rtol=1e-10)
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    assert sol.factorizations == 1 and sol.linear_iterations == 6
    for t in terms:
        t.H *= 1.0 + 0.01 * rng.uniform(size=(t.H.shape[0], 1, 1))
    reassemble(asm, sol, diag)
    sol.factor(np.zeros(N, bool))
    sol.solve(rhs, x)
    assert sol.factorizations == 2 and sol.linear_iterations == 12
    np.testing.assert_allclose(x, np.linalg.solve(dense(terms, diag), rhs), rtol=1e-8)
