"""The compiled preconditioned conjugate gradients (strandlab.implicit.pcg): the LDL^T solve
against a dense solve, the iteration against a plain NumPy transcription of the method, each
stopping rule, and the sparse solver's use of it."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from strandlab.implicit.ldl import QdldlFactor, qdldl_available
from strandlab.implicit.pcg import ldl_apply, pcg_ldl, unsigned_view

pytestmark = pytest.mark.skipif(not qdldl_available(), reason="needs the qdldl extra")

N = 40


def spd_matrix(rng, n=N, density=0.15, shift=0.5):
    a = sp.random(n, n, density, random_state=rng)
    return (a @ a.T + shift * sp.eye(n)).tocsc()


def nearby(seed, spread):
    """``(rng, P, A)``: a random SPD matrix ``P`` and ``A`` = ``P`` plus a random diagonal of
    entries up to ``spread``."""
    rng = np.random.default_rng(seed)
    P = spd_matrix(rng)
    return rng, P, (P + sp.diags(rng.uniform(0.0, spread, N))).tocsc()


def factors_of(A, fixed):
    """QDLDL factors of ``A`` on the free DOFs and the free DOF of each pivot."""
    free = np.nonzero(~fixed)[0]
    Ar = A[free][:, free].tocsc()
    Ar.sort_indices()
    f = QdldlFactor()
    ok, why, _ = f.factor(Ar, np.abs(Ar.diagonal()), 1e-14)
    assert ok, why
    Lp, Li, Lx, d, perm = f.factors
    return Lp, Li, Lx, d, free[perm].astype(np.uint64), Ar


def csr(A):
    A = A.tocsr()
    A.sort_indices()
    return unsigned_view(A.indptr), unsigned_view(A.indices), A.data


def numpy_pcg(A, P, b, fixed, rtol, max_it):
    """The method in NumPy on dense matrices (``P``: the preconditioner's matrix): returns
    (x, iterations, status) with the statuses of :func:`pcg_ldl`."""
    free = ~fixed
    A, Pinv = A.toarray(), np.zeros_like(A.toarray())
    Pinv[np.ix_(free, free)] = np.linalg.inv(P.toarray())
    A[fixed, :] = 0.0
    r = np.where(fixed, 0.0, b)
    x = np.zeros_like(b)
    target = rtol * np.linalg.norm(r)
    z = Pinv @ r
    p = z.copy()
    rz = r @ z
    for it in range(1, max_it + 1):
        ap = A @ p
        pap = p @ ap
        if not (pap > 0 and rz > 0):
            return x, it, 2 if it > 1 else 0
        alpha = rz / pap
        x += alpha * p
        r -= alpha * ap
        if np.linalg.norm(r) <= target:
            return x, it, 1
        z = Pinv @ r
        rz_new = r @ z
        p = z + rz_new / rz * p
        rz = rz_new
    return x, max_it, 0


def run_kernel(A, factors, b, fixed, rtol, max_it):
    Lp, Li, Lx, d, full, _ = factors
    n = b.size
    x, r, z, p, ap = (np.zeros(n) for _ in range(5))
    its, status = pcg_ldl(*csr(A), fixed, Lp, Li, Lx, d, full, b, rtol, max_it, x, r, z, p, ap,
                          np.zeros(d.size))
    return x, its, status


def test_unsigned_view_is_the_same_memory():
    a = np.array([0, 3, 7], dtype=np.int32)
    u = unsigned_view(a)
    assert u.dtype == np.uint32 and np.shares_memory(a, u) and np.array_equal(u, a)
    assert unsigned_view(np.arange(4)).dtype == np.uint64


@pytest.mark.parametrize("n_fixed", [0, 5])
def test_ldl_apply_solves_with_the_factored_matrix(n_fixed):
    rng = np.random.default_rng(1)
    A = spd_matrix(rng)
    fixed = np.zeros(N, bool)
    fixed[rng.choice(N, n_fixed, replace=False)] = True
    Lp, Li, Lx, d, full, Ar = factors_of(A, fixed)
    r = rng.normal(size=N)
    z = np.full(N, 7.0)                        # the fixed entries are not written
    ldl_apply(Lp, Li, Lx, d, full, r, np.zeros(d.size), z)
    free = ~fixed
    np.testing.assert_allclose(z[free], np.linalg.solve(Ar.toarray(), r[free]), rtol=1e-10)
    assert np.all(z[fixed] == 7.0)


def test_converges_as_the_method_does():
    # the factor of a nearby matrix preconditions the current one: same iterates, same count
    rng, P, A = nearby(2, 0.4)
    fixed = np.zeros(N, bool)
    fixed[[4, 19]] = True
    f = factors_of(P, fixed)
    b = rng.normal(size=N)
    x, its, status = run_kernel(A, f, b, fixed, 1e-10, 50)
    xr, its_r, status_r = numpy_pcg(A, f[-1], b, fixed, 1e-10, 50)
    assert status == status_r == 1 and its == its_r and its > 2
    np.testing.assert_allclose(x, xr, rtol=1e-9, atol=1e-12)
    free = ~fixed
    res = A.toarray()[np.ix_(free, free)] @ x[free] - b[free]
    assert np.linalg.norm(res) <= 1e-10 * np.linalg.norm(b[free])
    assert np.all(x[fixed] == 0.0)


def test_iteration_cap_is_not_usable():
    rng, P, A = nearby(3, 2.0)
    fixed = np.zeros(N, bool)
    x, its, status = run_kernel(A, factors_of(P, fixed), rng.normal(size=N), fixed, 1e-14, 2)
    assert (its, status) == (2, 0)


def test_negative_curvature_first_and_later():
    rng = np.random.default_rng(4)
    P = spd_matrix(rng)
    fixed = np.zeros(N, bool)
    f = factors_of(P, fixed)
    b = rng.normal(size=N)
    # negative definite: the first direction has negative curvature, nothing usable
    _, its, status = run_kernel(-P, f, b, fixed, 1e-10, 50)
    assert (its, status) == (1, 0)
    # one strongly negative direction: met after some iterations, the iterate so far kept
    v = rng.normal(size=N)
    A = (P - 60.0 * sp.csc_matrix(np.outer(v, v) / (v @ v))).tocsc()
    assert np.linalg.eigvalsh(A.toarray()).min() < 0.0
    x, its, status = run_kernel(A, f, b, fixed, 1e-12, 50)
    xr, its_r, status_r = numpy_pcg(A, f[-1], b, fixed, 1e-12, 50)
    assert status == status_r == 2 and its == its_r > 1
    np.testing.assert_allclose(x, xr, rtol=1e-9, atol=1e-12)
    assert b @ x > 0.0                     # a descent direction for the Newton step


def test_zero_right_hand_side_returns_at_once():
    rng = np.random.default_rng(5)
    P = spd_matrix(rng)
    fixed = np.zeros(N, bool)
    fixed[0] = True
    b = np.zeros(N)
    b[0] = 3.0                              # only on a fixed DOF
    x, its, status = run_kernel(P, factors_of(P, fixed), b, fixed, 1e-8, 10)
    assert (its, status) == (0, 1) and np.all(x == 0.0)
