"""Nested dissection ordering of the sparse solver's SuperLU factorisation (METIS)."""
from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from implicit_toys import chain_solver
from scipy.sparse.linalg import splu
from test_sparse_solver import BLOCKS, N, coupled_terms

from strandlab.implicit import Assembly, SparseSolver
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


def test_auto_orders_with_metis_from_the_threshold_on(monkeypatch):
    # QDLDL below the threshold (when it imports), SuperLU in METIS' order from it on when
    # CHOLMOD through cvxopt does not load
    monkeypatch.setitem(sys.modules, "cvxopt", None)
    for n, want in ((METIS_MIN_DOFS - 1, False), (METIS_MIN_DOFS, True)):
        sol = chain_solver(n, np.ones(n))
        sol.factor(np.zeros(n, bool))
        assert (sol._perm is not None) == want
        assert sol.backend == ("superlu" if want else "qdldl")
        x = np.zeros(n)
        sol.solve(np.ones(n), x)
        assert np.allclose(x, 1.0)


def test_bad_ordering_is_named():
    terms = coupled_terms(np.random.default_rng(42))
    asm = Assembly(terms, N, BLOCKS)
    with pytest.raises(ValueError, match="ordering must be one of"):
        SparseSolver(asm, ordering="amd")
    with pytest.raises(ValueError, match="ordering 'metis' is SuperLU's and cvxopt's; "
                                         "backend 'qdldl'"):
        SparseSolver(asm, ordering="metis", backend="qdldl")


def test_auto_orders_cvxopt_by_nested_dissection_from_the_threshold_on():
    pytest.importorskip("cvxopt")
    for n, ordering, want in ((METIS_MIN_DOFS - 1, "auto", False),
                              (METIS_MIN_DOFS, "auto", True), (METIS_MIN_DOFS, "mmd", False),
                              (50, "metis", True)):
        sol = chain_solver(n, np.ones(n), backend="cvxopt", method="direct",
                           ordering=ordering)
        sol.factor(np.zeros(n, bool))
        assert sol._supernodal.nested == want
        assert sol._perm is None                        # SuperLU's order only
        x = np.zeros(n)
        sol.solve(np.ones(n), x)
        np.testing.assert_allclose(x, 1.0, rtol=1e-10)
