"""Sparse solver: dense agreement, Dirichlet removal, regularisation, failures, CHOLMOD path."""
from __future__ import annotations

import sys
import types

import numba
import numpy as np
import pytest
from implicit_toys import QuadraticTerm, chain_solver, dense_reference

from strandlab.implicit import Assembly, LinearSolveError, SparseSolver
from strandlab.implicit.sparse import pardiso_available

N = 60
BLOCKS = np.array([0, 20, 40, 60])


def coupled_terms(rng, negative=False):
    """A ring per block (wrap-around stencils) and stencils coupling random DOFs of all blocks;
    positive semi-definite Hessians (negated when ``negative``)."""
    terms = []
    for b in range(3):
        s = BLOCKS[b]
        d = np.array([[s + i, s + (i + 1) % 20, s + (i + 2) % 20] for i in range(20)])
        a = rng.normal(size=(20, 3, 3))
        terms.append(QuadraticTerm(d, a @ a.transpose(0, 2, 1), name=f"ring{b}"))
    d = np.array([rng.choice(N, 4, replace=False) for _ in range(15)])
    a = rng.normal(size=(15, 4, 4))
    terms.append(QuadraticTerm(d, a @ a.transpose(0, 2, 1), name="coupling"))
    if negative:
        for t in terms:
            t.H *= -1.0
    return terms


def setup(rng, negative=False, diag_scale=1.0, **options):
    """The coupled terms' solver (``options``: ``backend="auto"`` is QDLDL at this size when
    it imports) and the dense matrix it holds."""
    terms = coupled_terms(rng, negative)
    asm = Assembly(terms, N, BLOCKS)
    asm.evaluate(np.zeros(N), hessian=True)
    diag = diag_scale * rng.uniform(0.5, 1.0, N)
    sol = SparseSolver(asm, **options)
    sol.assemble(hess_scale=1.5, diagonal=diag)
    A = 1.5 * dense_reference(N, [t.dofs for t in terms], [t.H for t in terms]) + np.diag(diag)
    return sol, A


@pytest.mark.parametrize("parallel", [False, True])
def test_solve_matches_dense(parallel):
    rng = np.random.default_rng(20)
    sol, A = setup(rng, parallel=parallel, backend="superlu")
    info = sol.factor(np.zeros(N, bool))
    assert info.shifted_blocks == 0
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    ref = np.linalg.solve(A, rhs)
    # condition number of these matrices < 1e5: LU error ~ 1e-16 * cond
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-10 * np.abs(ref).max())


def test_dirichlet_removal():
    rng = np.random.default_rng(21)
    sol, A = setup(rng, backend="superlu")
    fixed = rng.random(N) < 0.25
    sol.factor(fixed)
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    free = ~fixed
    ref = np.linalg.solve(A[np.ix_(free, free)], rhs[free])
    assert np.all(x[fixed] == 0.0)
    np.testing.assert_allclose(x[free], ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    # a second mask rebuilds the reduced pattern
    fixed2 = np.zeros(N, bool)
    fixed2[[0, 59]] = True
    sol.factor(fixed2)
    sol.solve(rhs, x)
    free = ~fixed2
    ref = np.linalg.solve(A[np.ix_(free, free)], rhs[free])
    np.testing.assert_allclose(x[free], ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    assert x[0] == 0.0 and x[59] == 0.0


def test_indefinite_is_shifted_to_the_documented_matrix():
    rng = np.random.default_rng(22)
    sol, A = setup(rng, negative=True, backend="superlu")
    info = sol.factor(np.zeros(N, bool))
    mu = info.max_shift
    assert mu > 0 and info.shifted_blocks == 3
    As = A + mu * np.diag(np.abs(np.diag(A)))
    assert np.linalg.eigvalsh(As).min() > 0
    assert np.linalg.eigvalsh(A + mu / 10 * np.diag(np.abs(np.diag(A)))).min() < 0
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    ref = np.linalg.solve(As, rhs)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    assert rhs @ x > 0  # -x is a descent direction for a gradient rhs


def test_failures_raise():
    rng = np.random.default_rng(23)
    sol, _ = setup(rng, negative=True, shift_max=0.0, backend="superlu")
    with pytest.raises(LinearSolveError, match="shift is disabled"):
        sol.factor(np.zeros(N, bool))
    terms = coupled_terms(rng)
    terms[1].H[3, 0, 0] = np.inf
    asm = Assembly(terms, N, BLOCKS)
    asm.evaluate(np.zeros(N), hessian=True)
    sol = SparseSolver(asm)
    sol.assemble(hess_scale=1.0, diagonal=np.ones(N))
    with pytest.raises(LinearSolveError, match="block 1: non-finite matrix entry") as exc:
        sol.factor(np.zeros(N, bool))
    assert exc.value.block == 1
    sol, _ = setup(rng)
    sol.factor(np.zeros(N, bool))
    rhs = np.zeros(N)
    rhs[45] = np.nan
    with pytest.raises(LinearSolveError, match="block 2: non-finite right-hand side at DOF 45"):
        sol.solve(rhs, np.zeros(N))


def test_cholmod_path_with_a_stand_in(monkeypatch):
    """The optional CHOLMOD path, with a dense stand-in for ``sksparse.cholmod``."""
    calls = {"analyze": 0, "inplace": 0}

    class NotPD(Exception):
        pass

    class Factor:
        def _set(self, A):
            try:
                self.L = np.linalg.cholesky(A.toarray())
            except np.linalg.LinAlgError as exc:
                raise NotPD(str(exc)) from None

        def cholesky_inplace(self, A, beta=0.0):
            calls["inplace"] += 1
            self._set(A)

        def __call__(self, b):
            return np.linalg.solve(self.L.T, np.linalg.solve(self.L, b))

    def analyze(A):
        calls["analyze"] += 1
        return Factor()

    mod = types.ModuleType("sksparse.cholmod")
    mod.analyze = analyze
    mod.CholmodNotPositiveDefiniteError = NotPD
    pkg = types.ModuleType("sksparse")
    pkg.cholmod = mod
    monkeypatch.setitem(sys.modules, "sksparse", pkg)
    monkeypatch.setitem(sys.modules, "sksparse.cholmod", mod)
    rng = np.random.default_rng(24)
    sol, A = setup(rng, negative=True, use_cholmod=True)
    assert sol.use_cholmod
    info = sol.factor(np.zeros(N, bool))
    # retried with a shift, reusing the one symbolic analysis
    assert info.max_shift > 0 and calls["inplace"] > 1 and calls["analyze"] == 1
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    ref = np.linalg.solve(A + info.max_shift * np.diag(np.abs(np.diag(A))), rhs)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    sol.factor(np.zeros(N, bool))
    assert calls["analyze"] == 1  # same pattern: no new analysis


def test_use_cholmod_required_but_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "sksparse", None)
    rng = np.random.default_rng(25)
    asm = Assembly(coupled_terms(rng), N, BLOCKS)
    with pytest.raises(ValueError, match="use_cholmod=True"):
        SparseSolver(asm, use_cholmod=True)
    assert not SparseSolver(asm).use_cholmod


def _pardiso_stand_in(monkeypatch, calls):
    """A dense stand-in for ``pypardiso``'s public API as of 0.4.7 (``PyPardisoSolver`` with
    ``set_iparm``, ``factorize``: phase 12, ``solve``: phase 33 when handed the matrix it
    factored, else 13; error -4 for a matrix that is not positive definite), recording the
    phases run and the MKL threads asked for."""

    class PyPardisoError(Exception):
        def __init__(self, value):
            self.value = value

    class Lib:
        def MKL_Set_Num_Threads(self, n):
            calls["threads"] = n

    class PyPardisoSolver:
        def __init__(self, mtype=11):
            assert mtype == 2
            self.iparm = np.zeros(64, dtype=np.int32)
            self.libmkl = Lib()
            self.factorized_A = None

        def set_iparm(self, i, value):
            self.iparm[i - 1] = value

        def _phase(self, phase, A):
            calls[phase] = calls.get(phase, 0) + 1
            assert A.format == "csr" and self.iparm[34] == 0 and self.iparm[7] == 0
            U = A.toarray()
            assert np.all(np.tril(U, -1) == 0.0)      # the upper triangle only
            try:
                self.L = np.linalg.cholesky(U + np.triu(U, 1).T)
            except np.linalg.LinAlgError:
                raise PyPardisoError(-4) from None
            self.factorized_A = A.copy()

        def factorize(self, A):
            self._phase(12, A)

        def solve(self, A, b):
            f = self.factorized_A
            if f is None or not (np.array_equal(A.indptr, f.indptr)
                                 and np.array_equal(A.indices, f.indices)
                                 and np.array_equal(A.data, f.data)):
                self._phase(13, A)
            else:
                calls[33] = calls.get(33, 0) + 1
            return np.linalg.solve(self.L.T, np.linalg.solve(self.L, b))

    pkg = types.ModuleType("pypardiso")
    wrapper = types.ModuleType("pypardiso.pardiso_wrapper")
    wrapper.PyPardisoError = PyPardisoError
    pkg.PyPardisoSolver = PyPardisoSolver
    pkg.pardiso_wrapper = wrapper
    monkeypatch.setitem(sys.modules, "pypardiso", pkg)
    monkeypatch.setitem(sys.modules, "pypardiso.pardiso_wrapper", wrapper)


# the stand-in always; pypardiso itself where it is installed (the ``pardiso`` extra)
PARDISO_MODULES = ["stand-in"] + (["pypardiso"] if pardiso_available() else [])


@pytest.mark.parametrize("module", PARDISO_MODULES)
def test_pardiso_path(monkeypatch, module):
    """The optional PARDISO path: the upper triangle, error -4 as not positive definite (the
    shift retried), each solve on the factored matrix (phase 33, never a new factorisation),
    the factor kept as preconditioner while the matrix changes, as many MKL threads as Numba
    has."""
    calls = {}
    if module == "stand-in":
        _pardiso_stand_in(monkeypatch, calls)
    monkeypatch.setitem(sys.modules, "sksparse", None)
    rng = np.random.default_rng(26)
    sol, A = setup(rng, negative=True)
    assert sol.backend == "pardiso" and not sol.use_cholmod
    info = sol.factor(np.zeros(N, bool))
    assert info.max_shift > 0 and sol.factorizations > 1       # retried with a shift
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    ref = np.linalg.solve(A + info.max_shift * np.diag(np.abs(np.diag(A))), rhs)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    fixed = rng.random(N) < 0.25
    sol.factor(fixed)                       # a new reduced pattern
    sol.solve(rhs, x)
    free = ~fixed
    ref = np.linalg.solve(A[np.ix_(free, free)] + sol.shift * np.diag(
        np.abs(np.diag(A)[free])), rhs[free])
    np.testing.assert_allclose(x[free], ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    assert np.all(x[fixed] == 0.0)
    if module == "stand-in":
        assert calls[12] == sol.factorizations and calls[33] == 2 and 13 not in calls
        assert calls["threads"] == numba.get_num_threads()


def test_pardiso_factor_stays_the_preconditioner(monkeypatch):
    """With ``method="reuse"`` the factor of an earlier matrix preconditions the solves on a
    changed one: its solves stay on the matrix it factored (phase 33), whatever a failed
    factorisation left in the solver's upper triangle."""
    calls = {}
    _pardiso_stand_in(monkeypatch, calls)
    rng = np.random.default_rng(28)
    sol, A = setup(rng, method="reuse", pcg_rtol=1e-10)
    sol.factor(np.zeros(N, bool))
    sol._pardiso_pattern[3].data[:] = -1.0        # as after a failed factorisation
    sol.assemble(hess_scale=2.0, diagonal=np.ones(N))
    sol.factor(np.zeros(N, bool))                # reused: no factorisation
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    assert calls[12] == 1 and 13 not in calls and calls[33] >= 1
    ref_terms = coupled_terms(np.random.default_rng(28))
    A2 = 2.0 * dense_reference(N, [t.dofs for t in ref_terms], [t.H for t in ref_terms]) + \
        np.eye(N)
    ref = np.linalg.solve(A2, rhs)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-7 * np.abs(ref).max())


def test_backend_choice(monkeypatch):
    rng = np.random.default_rng(27)
    asm = Assembly(coupled_terms(rng), N, BLOCKS)
    monkeypatch.setitem(sys.modules, "sksparse", None)
    monkeypatch.setitem(sys.modules, "pypardiso", None)
    assert SparseSolver(asm, method="reuse").backend == "qdldl"    # small, qdldl installed
    assert SparseSolver(asm).backend == "cvxopt"         # a new factor each time: CHOLMOD
    assert SparseSolver(asm, backend="cvxopt").backend == "cvxopt"
    cvxopt = sys.modules["cvxopt"]
    monkeypatch.setitem(sys.modules, "cvxopt", None)
    assert SparseSolver(asm).backend == "qdldl"          # direct, small, no cvxopt
    monkeypatch.setitem(sys.modules, "cvxopt", cvxopt)
    monkeypatch.setitem(sys.modules, "qdldl", None)
    assert SparseSolver(asm).backend == "cvxopt"         # a small system, no qdldl
    monkeypatch.setitem(sys.modules, "cvxopt", None)
    assert SparseSolver(asm).backend == "superlu"
    with pytest.raises(ValueError, match="backend 'cvxopt' requested but cvxopt.cholmod"):
        SparseSolver(asm, backend="cvxopt")
    with pytest.raises(ValueError, match="backend 'qdldl' requested but qdldl"):
        SparseSolver(asm, backend="qdldl")
    with pytest.raises(ValueError, match="backend 'pardiso' requested but pypardiso"):
        SparseSolver(asm, backend="pardiso")
    with pytest.raises(ValueError, match="backend must be 'auto' or one of"):
        SparseSolver(asm, backend="umfpack")
    _pardiso_stand_in(monkeypatch, {})
    assert SparseSolver(asm).backend == "pardiso"
    assert SparseSolver(asm, backend="superlu").backend == "superlu"
    with pytest.raises(ValueError, match="contradicts"):
        SparseSolver(asm, backend="pardiso", use_cholmod=True)


def test_shift_decays_from_the_last_one_needed():
    # an indefinite matrix needs mu; factored again, the sequence starts at mu / growth (one
    # failed try, not two: 0 and mu / growth).  Once the matrix is positive definite the
    # starting shift falls by the growth factor per factorisation, down to none
    rng = np.random.default_rng(24)
    sol, A = setup(rng, negative=True, backend="superlu")
    fixed = np.zeros(N, bool)
    mu = sol.factor(fixed).max_shift
    assert mu > 0
    before = sol.factorizations
    assert sol.factor(fixed).max_shift == mu
    assert sol.factorizations - before == 2
    for t in sol.assembly.terms:
        t.H *= -1.0
    sol.assembly.evaluate(np.zeros(N), hessian=True)
    sol.assemble(hess_scale=1.5, diagonal=np.ones(N))
    shifts = []
    for _ in range(12):
        before = sol.factorizations
        shifts.append(sol.factor(fixed).max_shift)
        assert sol.factorizations - before == 1
    g = sol.shift_growth
    expect = [mu / g ** k for k in range(1, 12) if mu / g ** k >= sol.shift_initial]
    assert shifts[:len(expect)] == pytest.approx(expect, rel=1e-12)
    assert shifts[len(expect):] == [0.0] * (12 - len(expect))


FACTORISATIONS = [dict(backend="qdldl"), dict(ordering="metis"), dict(backend="cvxopt")]


@pytest.mark.parametrize("options", FACTORISATIONS, ids=["qdldl", "superlu-metis", "cvxopt"])
@pytest.mark.parametrize("negative", [False, True])
def test_factorisation_matches_the_dense_solve(options, negative):
    # QDLDL's LDL^T (its D the inertia) and SuperLU in METIS' order: the reduced system, and
    # the shifted one when indefinite
    rng = np.random.default_rng(43)
    sol, A = setup(rng, negative=negative, **options)
    fixed = rng.random(N) < 0.2
    info = sol.factor(fixed)
    assert (info.max_shift > 0) == negative
    assert (sol._perm is not None) == ("ordering" in options)
    free = ~fixed
    Af = A[np.ix_(free, free)] + info.max_shift * np.diag(np.abs(np.diag(A)[free]))
    assert np.linalg.eigvalsh(Af).min() > 0
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    assert np.all(x[fixed] == 0.0)
    ref = np.linalg.solve(Af, rhs[free])
    np.testing.assert_allclose(x[free], ref, rtol=0, atol=1e-9 * np.abs(ref).max())


@pytest.mark.parametrize("options", FACTORISATIONS, ids=["qdldl", "superlu-metis", "cvxopt"])
def test_a_pivot_positive_only_by_rounding_fails_by_pivot_tol(options):
    # the chain's Laplacian (singular: its pivots are exact integers) with 1e-13 added on one
    # DOF: positive definite, its last pivot 1e-13 against a diagonal of 1-2, which fails
    # pivot_tol = 1e-11 and passes 1e-14 with every backend
    diag = np.zeros(40)
    diag[23] = 1e-13
    sol = chain_solver(40, diag, shift_max=0.0, pivot_tol=1e-11, **options)
    with pytest.raises(LinearSolveError, match=r"pivot \d"):
        sol.factor(np.zeros(40, bool))
    sol = chain_solver(40, diag, shift_max=0.0, pivot_tol=1e-14, **options)
    assert sol.factor(np.zeros(40, bool)).max_shift == 0.0


@pytest.mark.parametrize("options", FACTORISATIONS, ids=["qdldl", "superlu-metis", "cvxopt"])
def test_a_bad_pivot_names_the_system_dof(options):
    # both factor in an order of their own; the message names the DOF of the system, and the
    # same pattern is factored again after the failure
    diag = np.ones(40)
    diag[23] = -50.0
    sol = chain_solver(40, diag, shift_max=0.0, **options)
    with pytest.raises(LinearSolveError, match="at DOF 23"):
        sol.factor(np.zeros(40, bool))
    sol.assemble(hess_scale=1.0, diagonal=np.ones(40))
    sol.factor(np.zeros(40, bool))
    x = np.zeros(40)
    sol.solve(np.ones(40), x)
    np.testing.assert_allclose(x, 1.0, rtol=1e-12)
