"""Nested dissection ordering of the sparse solver's SuperLU factorisation (METIS)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from implicit_toys import QuadraticTerm
from scipy.sparse.linalg import splu
from test_sparse_solver import BLOCKS, N, coupled_terms, setup

from strandlab.implicit import Assembly, LinearSolveError, SparseSolver
from strandlab.implicit.ordering import METIS_MIN_DOFS, PermutedLU, nested_dissection


def grid_pattern(m):
    """The 5-point Laplacian pattern of an m x m grid, as CSR arrays."""
    e = sp.diags([np.ones(m - 1), np.ones(m - 1)], [-1, 1])
    lap = sp.kron(sp.eye(m), e) + sp.kron(e, sp.eye(m)) + sp.eye(m * m)
    A = sp.csr_matrix(lap)
    A.sort_indices()
    return A


def test_nested_dissection_is_a_permutation_that_cuts_fill():
    A = grid_pattern(40)
    p = nested_dissection(A.indptr, A.indices)
    assert np.array_equal(np.sort(p), np.arange(A.shape[0]))
    # fill of the Cholesky factor of the 2-D grid: nested dissection beats the natural order
    M = (A + 4.0 * sp.eye(A.shape[0])).tocsc()
    fill = {name: splu(B, permc_spec="NATURAL", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True}).L.nnz
            for name, B in (("natural", M), ("nd", M[p][:, p].tocsc()))}
    assert fill["nd"] < 0.5 * fill["natural"]


def test_permuted_lu_solves_the_original_system():
    rng = np.random.default_rng(40)
    A = grid_pattern(12) * 1.0
    A = (A + A.T + 10.0 * sp.eye(A.shape[0])).tocsc()
    p = nested_dissection(A.indptr, A.indices)
    lu = PermutedLU(splu(A[p][:, p].tocsc()), p)
    b = rng.normal(size=A.shape[0])
    np.testing.assert_allclose(A @ lu.solve(b), b, atol=1e-10)


@pytest.mark.parametrize("negative", [False, True])
def test_metis_ordering_matches_the_dense_solve(negative):
    rng = np.random.default_rng(41)
    sol, A = setup(rng, negative=negative, ordering="metis")
    fixed = rng.random(N) < 0.2
    info = sol.factor(fixed)
    assert sol._perm is not None and (info.max_shift > 0) == negative
    free = ~fixed
    Af = A[np.ix_(free, free)] + info.max_shift * np.diag(np.abs(np.diag(A)[free]))
    rhs = rng.normal(size=N)
    x = np.zeros(N)
    sol.solve(rhs, x)
    assert np.all(x[fixed] == 0.0)
    ref = np.linalg.solve(Af, rhs[free])
    np.testing.assert_allclose(x[free], ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_auto_orders_with_metis_from_the_threshold_on():
    for n, want in ((METIS_MIN_DOFS - 1, False), (METIS_MIN_DOFS, True)):
        d = np.c_[np.arange(n - 1), np.arange(1, n)]
        H = np.tile(np.array([[1.0, -1.0], [-1.0, 1.0]]), (n - 1, 1, 1))
        asm = Assembly([QuadraticTerm(d, H)], n, np.array([0, n]))
        asm.evaluate(np.zeros(n), hessian=True)
        sol = SparseSolver(asm)
        sol.assemble(hess_scale=1.0, diagonal=np.ones(n))
        sol.factor(np.zeros(n, bool))
        assert (sol._perm is not None) == want
        rhs = np.ones(n)
        x = np.zeros(n)
        sol.solve(rhs, x)
        assert np.allclose(x, 1.0)


def test_bad_ordering_is_named():
    terms = coupled_terms(np.random.default_rng(42))
    asm = Assembly(terms, N, BLOCKS)
    with pytest.raises(ValueError, match="ordering must be one of"):
        SparseSolver(asm, ordering="amd")


def test_a_bad_pivot_names_the_original_dof():
    n = 60
    d = np.c_[np.arange(n - 1), np.arange(1, n)]
    H = np.tile(np.array([[1.0, -1.0], [-1.0, 1.0]]), (n - 1, 1, 1))
    asm = Assembly([QuadraticTerm(d, H)], n, np.array([0, n]))
    asm.evaluate(np.zeros(n), hessian=True)
    sol = SparseSolver(asm, ordering="metis", shift_max=0.0)
    diag = np.ones(n)
    diag[37] = -50.0
    sol.assemble(hess_scale=1.0, diagonal=diag)
    with pytest.raises(LinearSolveError, match="at DOF 37"):
        sol.factor(np.zeros(n, bool))
