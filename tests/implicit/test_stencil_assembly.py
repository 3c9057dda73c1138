"""Assembly: gradients, Hessian products, banded and CSR matrices against np.add.at references."""
from __future__ import annotations

import numpy as np
import pytest
from implicit_toys import QuadraticTerm, dense_reference

from strandlab.implicit import Assembly, BandedSolver, SparseSolver, make_linear_solver

BLOCKS = np.array([0, 7, 7, 19, 30, 41])  # includes an empty block


def random_sym(rng, n, k):
    a = rng.normal(size=(n, k, k))
    return a + a.transpose(0, 2, 1)


def inside_stencils(rng, block_start, n, k, span):
    """``n`` stencils of ``k`` random DOFs within ``span`` consecutive DOFs of one block."""
    out = []
    nonempty = [b for b in range(len(block_start) - 1)
                if block_start[b + 1] - block_start[b] >= span]
    for _ in range(n):
        b = rng.choice(nonempty)
        start = rng.integers(block_start[b], block_start[b + 1] - span + 1)
        out.append(rng.choice(np.arange(start, start + span), size=k, replace=False))
    return np.array(out)


def make_terms(rng, cross=False):
    terms = []
    for i, (k, span, n) in enumerate([(3, 4, 25), (6, 9, 30), (2, 2, 10)]):
        d = inside_stencils(rng, BLOCKS, n, k, span)
        terms.append(QuadraticTerm(d, random_sym(rng, n, k), rng.normal(size=(n, k)), f"t{i}"))
    if cross:
        d = np.array([rng.choice(41, size=4, replace=False) for _ in range(12)])
        terms.append(QuadraticTerm(d, random_sym(rng, 12, 4), rng.normal(size=(12, 4)), "x"))
    # a stencil repeating a DOF
    terms.append(QuadraticTerm(np.array([[8, 8, 10]]), random_sym(rng, 1, 3), name="rep"))
    return terms


@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("parallel", [False, True])
def test_gradient_and_matvec_match_add_at(cross, parallel):
    rng = np.random.default_rng(1)
    terms = make_terms(rng, cross)
    asm = Assembly(terms, 41, BLOCKS, parallel=parallel)
    q = rng.normal(size=41)
    asm.evaluate(q, hessian=True)
    g_ref = np.zeros(41)
    for t in terms:
        n, k = t.dofs.shape
        e, g = np.zeros(n), np.zeros((n, k))
        t.evaluate(q, e, g, None)
        np.add.at(g_ref, t.dofs.reshape(-1), g.reshape(-1))
    g = np.zeros(41)
    asm.gradient(g)
    # same additions in another order: differences are round-off of sums of O(10) terms
    np.testing.assert_allclose(g, g_ref, rtol=0, atol=1e-13 * np.abs(g_ref).max())
    K = dense_reference(41, [t.dofs for t in terms], [t.H for t in terms])
    v = rng.normal(size=41)
    out = np.full(41, 0.5)
    asm.hessian_matvec(v, out, scale=-2.0)
    np.testing.assert_allclose(out, 0.5 - 2.0 * K @ v, rtol=0, atol=1e-12 * np.abs(K).max())
    assert asm.has_cross == cross


def test_banded_assembly_and_layout():
    rng = np.random.default_rng(2)
    terms = make_terms(rng)
    asm = Assembly(terms, 41, BLOCKS)
    asm.evaluate(rng.normal(size=41), hessian=True)
    diag = rng.uniform(1, 2, size=41)
    sol = BandedSolver(asm)
    sol.assemble(hess_scale=2.5, diagonal=diag)
    A = 2.5 * dense_reference(41, [t.dofs for t in terms], [t.H for t in terms]) + np.diag(diag)
    np.testing.assert_allclose(sol.dense(), A, rtol=0, atol=1e-13 * np.abs(A).max())
    # storage convention band[j, d] = A[j + d, j], bandwidth per block from the stencils' spans
    for j, d in [(8, 0), (8, 2), (20, 5), (33, 1), (0, 3)]:
        assert sol.band[j, d] == pytest.approx(A[j + d, j], abs=1e-13)
    spans = np.zeros(5, int)
    for t in terms:
        for s in t.dofs:
            b = np.searchsorted(BLOCKS, s.min(), side="right") - 1
            spans[b] = max(spans[b], s.max() - s.min())
    np.testing.assert_array_equal(sol.width, spans)
    assert sol.band.shape == (41, spans.max() + 1)


@pytest.mark.parametrize("cross", [False, True])
def test_csr_assembly_matches_dense(cross):
    rng = np.random.default_rng(3)
    terms = make_terms(rng, cross)
    asm = Assembly(terms, 41, BLOCKS)
    asm.evaluate(rng.normal(size=41), hessian=True)
    diag = rng.uniform(1, 2, size=41)
    sol = SparseSolver(asm)
    sol.assemble(hess_scale=0.75, diagonal=diag)
    A = 0.75 * dense_reference(41, [t.dofs for t in terms], [t.H for t in terms]) + np.diag(diag)
    M = sol.matrix()
    np.testing.assert_allclose(M.toarray(), A, rtol=0, atol=1e-13 * np.abs(A).max())
    # the pattern is the union of the stencils' entries and the diagonal, no more
    pattern = np.eye(41, dtype=bool)
    for t in terms:
        for s in t.dofs:
            pattern[np.ix_(s, s)] = True
    assert M.nnz == pattern.sum()
    assert np.all(np.diff(M.indices[M.indptr[3]:M.indptr[4]]) > 0)  # sorted columns


def test_auto_kind_and_banded_rejects_crossing():
    rng = np.random.default_rng(4)
    asm = Assembly(make_terms(rng, cross=True), 41, BLOCKS)
    assert make_linear_solver(asm).kind == "sparse"
    with pytest.raises(ValueError, match="stencil .* of term 'x' spans blocks"):
        BandedSolver(asm)
    asm2 = Assembly(make_terms(rng), 41, BLOCKS)
    assert make_linear_solver(asm2).kind == "banded"
    # a ring's wrap-around stencil inside one block: bandwidth = block size -> sparse
    ring = QuadraticTerm(np.array([[k, (k + 1) % 60] for k in range(60)]), random_sym(rng, 60, 2))
    assert make_linear_solver(Assembly([ring], 60, [0, 60])).kind == "sparse"
    with pytest.raises(ValueError, match="kind must be"):
        make_linear_solver(asm2, "dense")


def test_bad_input_is_named():
    rng = np.random.default_rng(5)
    t = QuadraticTerm(np.array([[0, 50]]), random_sym(rng, 1, 2), name="far")
    with pytest.raises(ValueError, match="term 'far': DOF index 50 out of range"):
        Assembly([t], 41, BLOCKS)
    with pytest.raises(ValueError, match="block_start decreases at block 1"):
        Assembly([], 41, [0, 10, 5, 41])
    with pytest.raises(ValueError, match="end at n_dofs = 41"):
        Assembly([], 41, [0, 40])
    with pytest.raises(TypeError, match="not a StencilTerm"):
        Assembly([object()], 41, BLOCKS)


def test_first_nonfinite_names_term_and_stencil():
    rng = np.random.default_rng(6)
    terms = make_terms(rng)
    terms[1].H[4, 1, 2] = np.nan
    asm = Assembly(terms, 41, BLOCKS)
    asm.evaluate(rng.normal(size=41), hessian=True)
    assert asm.first_nonfinite(hessian=True) == (1, 4, "energy")  # energy is checked first
