"""CHOLMOD's supernodal Cholesky through cvxopt: solves, failures, pattern changes, options."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from implicit_toys import chain_solver

from strandlab.implicit.ldl import QDLDL_MAX_DOFS
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


def test_a_new_pattern_is_analysed_again():
    rng = np.random.default_rng(61)
    f = SupernodalFactor()
    for n in (50, 80):
        A = spd(n, rng)
        assert f.factor(A)[0]
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
    for n, backend, method in ((QDLDL_MAX_DOFS - 1, "qdldl", "reuse"),
                               (QDLDL_MAX_DOFS, "cvxopt", "direct")):
        sol = chain_solver(n, np.ones(n), method="auto")
        sol.factor(np.zeros(n, bool))
        assert (sol.backend, sol.method) == (backend, method)
        assert isinstance(sol._factor, SupernodalFactor) == (backend == "cvxopt")
        x = np.zeros(n)
        sol.solve(np.ones(n), x)
        np.testing.assert_allclose(x, 1.0, rtol=1e-10)
    n = QDLDL_MAX_DOFS + 5                  # cvxopt for all DOFs; QDLDL once 10 are held
    sol = chain_solver(n, np.ones(n), method="auto")
    assert (sol.backend, sol.method) == ("cvxopt", "direct")
    fixed = np.zeros(n, bool)
    fixed[:10] = True
    sol.factor(fixed)
    assert (sol.backend, sol.method) == ("qdldl", "reuse")
    assert chain_solver(10, np.ones(10), method="auto", backend="cvxopt").method == "direct"
    assert chain_solver(10, np.ones(10), method="auto", backend="superlu").method == "reuse"
