"""Banded Cholesky: solves equal dense solves; regularisation and failures name the block."""
from __future__ import annotations

import numpy as np
import pytest
from implicit_toys import QuadraticTerm, dense_reference

from strandlab.implicit import Assembly, BandedSolver, LinearSolveError

BLOCKS = np.array([0, 30, 55, 56, 90, 130])


def banded_terms(rng, widths, blocks=BLOCKS, sign=None):
    """Per block ``b``: stencils of ``widths[b] + 1`` consecutive DOFs, random symmetric
    positive semi-definite Hessians (negative definite in the blocks listed in ``sign``)."""
    terms = []
    for b in range(len(blocks) - 1):
        s, e, w = blocks[b], blocks[b + 1], min(widths[b], blocks[b + 1] - blocks[b] - 1)
        starts = np.arange(s, e - w)
        if not len(starts):
            continue
        d = starts[:, None] + np.arange(w + 1)
        a = rng.normal(size=(len(d), w + 1, w + 1))
        h = a @ a.transpose(0, 2, 1)
        if sign is not None and b in sign:
            h = -h
        terms.append(QuadraticTerm(d, h, name=f"block{b}"))
    return terms


def setup(rng, widths, sign=None, **options):
    terms = banded_terms(rng, widths, sign=sign)
    asm = Assembly(terms, 130, BLOCKS)
    asm.evaluate(np.zeros(130), hessian=True)
    diag = rng.uniform(0.1, 1.0, 130)
    sol = BandedSolver(asm, **options)
    sol.assemble(hess_scale=1.0, diagonal=diag)
    A = dense_reference(130, [t.dofs for t in terms], [t.H for t in terms]) + np.diag(diag)
    return sol, A


@pytest.mark.parametrize("widths", [(1, 3, 0, 10, 5), (2, 2, 2, 2, 2), (10, 7, 0, 1, 24)])
@pytest.mark.parametrize("parallel", [False, True])
def test_solve_matches_dense(widths, parallel):
    rng = np.random.default_rng(sum(widths))
    sol, A = setup(rng, widths, parallel=parallel)
    info = sol.factor(np.zeros(130, bool))
    assert info.shifted_blocks == 0 and info.max_shift == 0.0
    rhs = rng.normal(size=130)
    x = np.zeros(130)
    sol.solve(rhs, x)
    ref = np.linalg.solve(A, rhs)
    # SPD with condition number < 1e6 here: backward-stable Cholesky gives ~1e-16 * cond
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    sol.solve(rhs, rhs)  # out may be rhs
    np.testing.assert_array_equal(rhs, x)


def test_dirichlet_removal():
    rng = np.random.default_rng(7)
    sol, A = setup(rng, (3, 4, 0, 6, 2))
    fixed = rng.random(130) < 0.2
    fixed[55] = True  # the one-DOF block entirely fixed
    sol.factor(fixed)
    rhs = rng.normal(size=130)
    x = np.zeros(130)
    sol.solve(rhs, x)
    free = ~fixed
    ref = np.linalg.solve(A[np.ix_(free, free)], rhs[free])
    assert np.all(x[fixed] == 0.0)
    np.testing.assert_allclose(x[free], ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_negative_definite_block_is_shifted_and_reported():
    rng = np.random.default_rng(8)
    sol, A = setup(rng, (3, 4, 0, 6, 2), sign={3})
    info = sol.factor(np.zeros(130, bool))
    assert info.shifted_blocks == 1
    assert sol.block_shift[3] > 0 and np.count_nonzero(sol.block_shift) == 1
    mu = sol.block_shift[3]
    assert info.max_shift == mu
    # mu is a member of the documented sequence 1e-8 * 10^m
    m = np.log10(mu / 1e-8)
    assert abs(m - round(m)) < 1e-9
    rhs = rng.normal(size=130)
    x = np.zeros(130)
    sol.solve(rhs, x)
    # block 3 solves A + mu diag(|A_jj|); the other blocks are untouched
    As = A.copy()
    j = np.arange(56, 90)
    As[j, j] += mu * np.abs(A[j, j])
    ref = np.linalg.solve(As, rhs)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    # the shift found is the first of the sequence that makes the block positive definite
    Ab = A[np.ix_(j, j)]
    assert np.linalg.eigvalsh(Ab + mu * np.diag(np.abs(np.diag(Ab)))).min() > 0
    assert np.linalg.eigvalsh(Ab + mu / 10 * np.diag(np.abs(np.diag(Ab)))).min() < 0


def test_shift_disabled_or_exceeded_raises_naming_block():
    rng = np.random.default_rng(9)
    sol, _ = setup(rng, (3, 4, 0, 6, 2), sign={1}, shift_max=0.0)
    with pytest.raises(LinearSolveError, match="block 1: .*shift is disabled") as exc:
        sol.factor(np.zeros(130, bool))
    assert exc.value.block == 1
    sol, _ = setup(rng, (3, 4, 0, 6, 2), sign={4}, shift_max=1e-3)
    with pytest.raises(LinearSolveError, match="block 4: .*not positive definite") as exc:
        sol.factor(np.zeros(130, bool))
    assert exc.value.block == 4


def test_nonfinite_matrix_and_rhs_raise_naming_block():
    rng = np.random.default_rng(10)
    terms = banded_terms(rng, (3, 4, 0, 6, 2))
    next(t for t in terms if t.name == "block3").H[5, 1, 1] = np.nan
    asm = Assembly(terms, 130, BLOCKS)
    asm.evaluate(np.zeros(130), hessian=True)
    sol = BandedSolver(asm)
    sol.assemble(hess_scale=1.0, diagonal=np.ones(130))
    with pytest.raises(LinearSolveError, match="block 3: non-finite matrix entry") as exc:
        sol.factor(np.zeros(130, bool))
    assert exc.value.block == 3
    sol, _ = setup(rng, (3, 4, 0, 6, 2))
    sol.factor(np.zeros(130, bool))
    rhs = np.zeros(130)
    rhs[100] = np.inf
    with pytest.raises(LinearSolveError, match="block 4: non-finite right-hand side at DOF 100"):
        sol.solve(rhs, np.zeros(130))


def test_parallel_and_serial_bit_identical():
    rng = np.random.default_rng(11)
    xs = []
    for parallel in (False, True):
        r = np.random.default_rng(12)
        sol, _ = setup(r, (3, 4, 0, 6, 2), sign={1}, parallel=parallel)
        sol.factor(np.zeros(130, bool))
        x = np.zeros(130)
        sol.solve(np.linspace(-1, 1, 130), x)
        xs.append(x)
    np.testing.assert_array_equal(xs[0], xs[1])
    del rng
