"""CHOLMOD's supernodal Cholesky through cvxopt: solves, failures, pattern changes, options."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from implicit_toys import chain_solver

from strandlab.implicit.ldl import QDLDL_MAX_DOFS
from strandlab.implicit.ordering import nested_dissection
from strandlab.implicit.sparse import auto_backend
from strandlab.implicit.supernodal import SupernodalFactor

cvxopt = pytest.importorskip("cvxopt")


def spd(n, rng, density=0.05, shift=1.0):
    """A random sparse symmetric positive definite matrix (SciPy CSC, sorted indices)."""
    B = sp.random(n, n, density=density, random_state=np.random.RandomState(
        int(rng.integers(1 << 30))), format="csc")
    A = (B @ B.T + shift * sp.eye(n)).tocsc()
    A.sort_indices()
    return A


def test_solves_match_the_dense_solve_and_refactor_on_the_same_pattern():
    rng = np.random.default_rng(60)
    A = spd(300, rng)
    f = SupernodalFactor()
    assert f.factor(A) == (True, "", -1)
    b = rng.normal(size=300)
    np.testing.assert_allclose(f.solve(b), np.linalg.solve(A.toarray(), b), rtol=1e-9,
                               atol=1e-12)
    assert sorted(f.perm.tolist()) == list(range(300))
    A2 = A.copy()
    A2.data *= 3.0                                   # same pattern: numeric only
    symbolic = f._symbolic
    assert f.factor(A2)[0]
    assert f._symbolic is symbolic
    np.testing.assert_allclose(f.solve(b), np.linalg.solve(A2.toarray(), b), rtol=1e-9,
                               atol=1e-12)


def test_column_counts_are_those_of_the_cholesky_factor():
    rng = np.random.default_rng(63)
    A = spd(200, rng, density=0.02)
    f = SupernodalFactor()
    with pytest.raises(RuntimeError, match="no successful factorisation"):
        f.column_counts()
    assert f.factor(A)[0]
    c = f.column_counts()
    # the dense Cholesky factor of A in CHOLMOD's order: its non-zeros per column lie within
    # the stored ones (relaxed supernodes store zeros too), and every column its diagonal
    p = f.perm
    Ld = np.linalg.cholesky(A.toarray()[np.ix_(p, p)])
    nz = (np.abs(Ld) > 1e-14 * np.abs(Ld).max()).sum(axis=0)
    assert c.shape == (200,) and c.dtype == np.int64
    assert np.all(c >= nz) and np.all(c >= 1) and np.all(c <= 200 - np.arange(200))
    assert nz.sum() > np.count_nonzero(sp.tril(A).toarray())      # fill: more than A's
    # a diagonal matrix factors with one entry a column
    D = sp.diags(rng.uniform(1.0, 2.0, 30)).tocsc()
    assert f.factor(D)[0]
    np.testing.assert_array_equal(f.column_counts(), np.ones(30, dtype=np.int64))


def test_a_new_pattern_is_analysed_again():
    rng = np.random.default_rng(61)
    f = SupernodalFactor()
    for n in (50, 80):
        A = spd(n, rng)
        assert f.factor(A)[0]
        assert sorted(f.perm.tolist()) == list(range(n))   # this pattern's order
        b = rng.normal(size=n)
        np.testing.assert_allclose(A @ f.solve(b), b, atol=1e-9 * np.abs(b).max())


def test_a_failure_names_the_row_and_keeps_the_last_factor():
    rng = np.random.default_rng(62)
    A = spd(120, rng)
    f = SupernodalFactor()
    assert f.factor(A)[0]
    b = rng.normal(size=120)
    x = f.solve(b)
    bad = A.tolil()
    bad[37, 37] = -1e3                                # negative definite in row 37 only
    bad = bad.tocsc()
    bad.sort_indices()
    ok, why, row = f.factor(bad)
    assert not ok and "not positive definite" in why and row == 37
    np.testing.assert_array_equal(f.solve(b), x)      # the factor before, untouched


def test_cvxopt_global_options_are_left_as_found():
    opts = cvxopt.cholmod.options
    saved = dict(opts)
    opts["supernodal"] = 0
    try:
        f = SupernodalFactor()
        A = spd(40, np.random.default_rng(63))
        assert f.factor(A)[0]
        assert opts == {**saved, "supernodal": 0}
    finally:
        opts.clear()
        opts.update(saved)


def test_auto_takes_cvxopt_and_direct_from_the_threshold_on():
    # QDLDL and conjugate gradients on its old factor below the threshold; CHOLMOD through
    # cvxopt and a new factor per Newton iteration from it on (method "auto")
    assert auto_backend(QDLDL_MAX_DOFS - 1) == "qdldl"
    assert auto_backend(QDLDL_MAX_DOFS) == "cvxopt"
    # a method that factors at every iteration takes CHOLMOD below the threshold too
    for method in ("direct", "direct_cg"):
        assert auto_backend(10, method) == "cvxopt"
        assert chain_solver(10, np.ones(10), method=method).backend == "cvxopt"
    assert auto_backend(10, "reuse") == "qdldl"
    for n, backend, method in ((QDLDL_MAX_DOFS - 1, "qdldl", "reuse"),
                               (QDLDL_MAX_DOFS, "cvxopt", "direct_cg")):
        sol = chain_solver(n, np.ones(n), method="auto")
        sol.factor(np.zeros(n, bool))
        assert (sol.backend, sol.method) == (backend, method)
        assert isinstance(sol._factor, SupernodalFactor) == (backend == "cvxopt")
        x = np.zeros(n)
        sol.solve(np.ones(n), x)
        np.testing.assert_allclose(x, 1.0, rtol=1e-10)
    n = QDLDL_MAX_DOFS + 5                  # cvxopt for all DOFs; QDLDL once 10 are held
    sol = chain_solver(n, np.ones(n), method="auto")
    assert (sol.backend, sol.method) == ("cvxopt", "direct_cg")
    fixed = np.zeros(n, bool)
    fixed[:10] = True
    sol.factor(fixed)
    assert (sol.backend, sol.method) == ("qdldl", "reuse")
    assert chain_solver(10, np.ones(10), method="auto", backend="cvxopt").method == "direct_cg"
    assert chain_solver(10, np.ones(10), method="auto", backend="superlu").method == "reuse"


def grid(n, rng):
    """The 5-point Laplacian of an ``n`` x ``n`` grid plus a random positive diagonal: a
    pattern whose elimination tree CHOLMOD post-orders (its order is not AMD's)."""
    t = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(n, n))
    A = (sp.kron(t, sp.eye(n)) + sp.kron(sp.eye(n), t)
         + sp.diags(3.0 * rng.random(n * n))).tocsc()
    A.sort_indices()
    return A


def test_perm_is_the_order_cholmod_factored_in_not_amds():
    import cvxopt.amd

    rng = np.random.default_rng(64)
    A = grid(30, rng)
    f = SupernodalFactor()
    assert f.factor(A)[0]
    amd = np.asarray(cvxopt.amd.order(f._spm, uplo="L")).reshape(-1)
    assert not np.array_equal(f.perm, amd)             # post-ordered
    dense = np.linalg.cholesky(A.toarray()[np.ix_(f.perm, f.perm)])
    pivots = np.asarray(cvxopt.cholmod.diag(f._symbolic[f._good]))[:, 0]
    np.testing.assert_allclose(pivots, np.diag(dense), rtol=1e-12)


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("first", [True, False])
def test_a_failed_column_names_its_row_through_cholmods_order(first, nested):
    # the failed column is mapped through CHOLMOD's order, known or read after the failure,
    # in AMD's order and in nested dissection's
    rng = np.random.default_rng(65)
    A = grid(30, rng)
    f = SupernodalFactor(nested=nested)
    if not first:
        assert f.factor(A)[0]
    for r in (777, 5, 899):
        bad = A.tolil()
        bad[r, r] = -50.0
        bad = bad.tocsc()
        bad.sort_indices()
        ok, why, row = f.factor(bad)
        assert not ok and "not positive definite" in why and row == r


def test_a_tiny_positive_pivot_fails_by_pivot_tol_and_keeps_the_last_factor():
    rng = np.random.default_rng(66)
    A = grid(20, rng)
    f = SupernodalFactor()
    scale = np.abs(A.diagonal())
    assert f.factor(A, scale, 1e-14)[0]
    b = rng.normal(size=A.shape[0])
    x = f.solve(b)
    # the row eliminated last: its pivot is its Schur complement, made tiny and positive
    r = int(f.perm[-1])
    dense = A.toarray()
    others = np.arange(A.shape[0]) != r
    a = dense[others, r]
    schur = dense[r, r] - a @ np.linalg.solve(dense[np.ix_(others, others)], a)
    near = A.tolil()
    near[r, r] = A[r, r] - schur + 1e-13 * A[r, r]
    near = near.tocsc()
    near.sort_indices()
    ok, why, row_ = f.factor(near, scale, 1e-14)
    assert ok                                     # pivot 1e-13 of the scale passes 1e-14
    ok, why, row_ = f.factor(near, scale, 1e-11)
    assert not ok and why.startswith("pivot") and row_ == r
    ok, why, row_ = f.factor(A, scale, 1e-11)
    assert ok
    np.testing.assert_allclose(f.solve(b), x, rtol=1e-12)
    assert f.factor(near)[0]                      # no pivot_tol: CHOLMOD alone accepts it


def test_pivots_are_measured_against_their_own_rows_scale():
    # rows scaled over three decades: every pivot passes 0.05 of its own row's diagonal, and
    # raising one row's scale a thousandfold fails that row
    rng = np.random.default_rng(67)
    A = grid(20, rng)
    d = sp.diags(10.0 ** rng.uniform(0.0, 3.0, A.shape[0]))
    A = (d @ A @ d).tocsc()
    A.sort_indices()
    scale = np.abs(A.diagonal())
    f = SupernodalFactor()
    assert f.factor(A, scale, 0.05)[0]
    for r in (3, 250):
        high = scale.copy()
        high[r] *= 1e3
        ok, why, row = f.factor(A, high, 0.05)
        assert not ok and why.startswith("pivot") and row == r


def test_nested_dissection_orders_each_new_pattern_once(monkeypatch):
    pytest.importorskip("pymetis")
    import strandlab.implicit.supernodal as supernodal

    calls = []

    def spy(indptr, indices):
        calls.append(indptr.size - 1)
        return nested_dissection(indptr, indices)

    monkeypatch.setattr(supernodal, "nested_dissection", spy)

    def fill(factor):
        return len(cvxopt.cholmod.getfactor(factor._symbolic[factor._good]))

    # a 60 x 60 grid: nested dissection fills less than AMD (a 30 x 30 one: CHOLMOD keeps
    # AMD's order, which fills less there)
    rng = np.random.default_rng(68)
    A = grid(60, rng)
    b = rng.normal(size=A.shape[0])
    amd = SupernodalFactor()
    assert amd.factor(A)[0] and calls == []
    f = SupernodalFactor(nested=True)
    assert f.factor(A)[0] and calls == [3600]
    np.testing.assert_allclose(A @ f.solve(b), b, atol=1e-10 * np.abs(b).max())
    assert not np.array_equal(f.perm, amd.perm)          # another order than AMD's
    assert fill(f) < 0.9 * fill(amd)
    A2 = A.copy()
    A2.data *= 2.0
    assert f.factor(A2)[0] and calls == [3600]           # same pattern: numeric only
    np.testing.assert_allclose(A2 @ f.solve(b), b, atol=1e-10 * np.abs(b).max())
    f.nested = False                                     # AMD again, analysed afresh
    assert f.factor(A)[0] and calls == [3600]
    np.testing.assert_array_equal(f.perm, amd.perm)
    f.nested = True
    assert f.factor(A)[0] and calls == [3600, 3600]
