"""Per-block banded Cholesky: the linear solver for systems of independent blocks.

Storage.  ``band`` float64 [n_dofs, W + 1] holds the lower band of the symmetric matrix by
columns: ``band[j, d] = A[j + d, j]`` for ``0 <= d <= w_b`` (the memory layout of LAPACK's
lower band storage), with ``w_b`` the bandwidth of the block holding ``j`` (the largest
``max(dofs) - min(dofs)`` over the block's stencils, :class:`~.assembly.Assembly`) and
``W = max_b w_b``.  Column ``j``'s entries are contiguous, so the factorisation and the two
triangular solves stream through memory.  ``factor`` (same shape) holds ``L`` with
``A = L L^T`` in the same layout; ``band`` is kept so that a block whose factorisation fails is
factored again with a diagonal shift (:mod:`.linear`).  Memory: 16 (W + 1) bytes per DOF (for
rods with interleaved coordinates, W = 10: 176 bytes per DOF).

Assembly reads the lower triangle of each stencil Hessian (the Hessians are symmetric, see
:class:`~.terms.StencilTerm`): entry ``(a, c)``, ``c < a``, goes to the band position of
``(max, min)`` of the two DOFs, or twice onto the diagonal when a stencil repeats a DOF.

Kernels run one block per iteration of a parallel loop (blocks are independent), each with a
serial twin for small problems; the factorisation costs about ``n_b w_b^2 / 2`` multiply-adds
per block and the solve ``2 n_b w_b``.  Nothing is allocated per factorisation or solve.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .assembly import Assembly, use_parallel
from .linear import FactorInfo, LinearSolveError, LinearSolver, check_fixed

__all__ = ["BandedSolver", "OK", "NONFINITE_MATRIX", "NOT_POSITIVE", "NONFINITE_RHS",
           "NONFINITE_SOLUTION"]

OK = 0
NONFINITE_MATRIX = 1
NOT_POSITIVE = 2
NONFINITE_RHS = 3
NONFINITE_SOLUTION = 4


# ------------------------------------------------------------------------------- assembly

@njit(cache=True)
def _reset_block(b, block_start, diagonal, band):
    for j in range(block_start[b], block_start[b + 1]):
        band[j, 0] = diagonal[j]
        for d in range(1, band.shape[1]):
            band[j, d] = 0.0


@njit(cache=True, parallel=True)
def reset_par(block_start, diagonal, band):
    """``band`` = diag(``diagonal``), block by block."""
    for b in prange(block_start.shape[0] - 1):
        _reset_block(b, block_start, diagonal, band)


@njit(cache=True)
def reset_ser(block_start, diagonal, band):
    """Serial twin of :func:`reset_par`."""
    for b in range(block_start.shape[0] - 1):
        _reset_block(b, block_start, diagonal, band)


@njit(cache=True)
def _scatter_block(b, dofs, hess, order, ptr, scale, band):
    k = dofs.shape[1]
    for i in range(ptr[b], ptr[b + 1]):
        s = order[i]
        for a in range(k):
            ra = dofs[s, a]
            band[ra, 0] += scale * hess[s, a, a]
            for c in range(a):
                rc = dofs[s, c]
                v = scale * hess[s, a, c]
                if ra > rc:
                    band[rc, ra - rc] += v
                elif ra < rc:
                    band[ra, rc - ra] += v
                else:
                    band[ra, 0] += 2.0 * v


@njit(cache=True, parallel=True)
def scatter_par(dofs, hess, order, ptr, scale, band):
    """``band`` += ``scale`` times the stencils' Hessians (their lower triangles)."""
    for b in prange(ptr.shape[0] - 1):
        _scatter_block(b, dofs, hess, order, ptr, scale, band)


@njit(cache=True)
def scatter_ser(dofs, hess, order, ptr, scale, band):
    """Serial twin of :func:`scatter_par`."""
    for b in range(ptr.shape[0] - 1):
        _scatter_block(b, dofs, hess, order, ptr, scale, band)


# ------------------------------------------------------------------------------- factor

@njit(cache=True)
def _copy_block(band, fact, s, e, w, fixed, mu, mean):
    """``fact`` = band of the block with fixed rows/columns -> identity, diagonal + mu s_j.

    Returns (first DOF with a non-finite entry or -1, sum of |A_jj| and count over free DOFs).
    """
    total = 0.0
    nfree = 0
    for j in range(s, e):
        if fixed[j]:
            fact[j, 0] = 1.0
            for d in range(1, w + 1):
                fact[j, d] = 0.0
            continue
        a = band[j, 0]
        if not (a - a == 0.0):
            return j, total, nfree
        sj = abs(a)
        total += sj
        nfree += 1
        if sj == 0.0:
            sj = mean
        fact[j, 0] = a + mu * sj
        for d in range(1, w + 1):
            x = band[j, d]
            if not (x - x == 0.0):
                return j, total, nfree
            if j + d < e and not fixed[j + d]:
                fact[j, d] = x
            else:
                fact[j, d] = 0.0
    return -1, total, nfree


@njit(cache=True, inline="always")
def _pivot(band, fact, j, fixed, pivot_tol, mean):
    """``L[j, j]`` from the pivot in ``fact[j, 0]``, or -1.0 when the pivot fails."""
    djj = fact[j, 0]
    sj = 1.0
    if not fixed[j]:
        sj = abs(band[j, 0])
        if sj == 0.0:
            sj = mean
    if not (djj > pivot_tol * sj):  # also catches NaN
        return -1.0
    return math.sqrt(djj)


@njit(cache=True, inline="always")
def _cholesky_run(band, fact, s, e, w, fixed, pivot_tol, mean):
    """Right-looking banded Cholesky of the block ``[s, e)`` of width ``w`` in place; returns
    -1 or the DOF whose pivot failed.  Inlined where ``w`` is a literal, the columns with a full
    window (all but the last ``w``) run loops of constant trip count that the compiler unrolls."""
    j = s
    while j < e - w:
        ljj = _pivot(band, fact, j, fixed, pivot_tol, mean)
        if ljj < 0.0:
            return j
        fact[j, 0] = ljj
        inv = 1.0 / ljj
        for i in range(1, w + 1):
            fact[j, i] *= inv
        for i in range(1, w + 1):
            lij = fact[j, i]
            for c in range(i, w + 1):
                fact[j + i, c - i] -= fact[j, c] * lij
        j += 1
    while j < e:
        m = e - 1 - j
        ljj = _pivot(band, fact, j, fixed, pivot_tol, mean)
        if ljj < 0.0:
            return j
        fact[j, 0] = ljj
        inv = 1.0 / ljj
        for i in range(1, m + 1):
            fact[j, i] *= inv
        for i in range(1, m + 1):
            lij = fact[j, i]
            for c in range(i, m + 1):
                fact[j + i, c - i] -= fact[j, c] * lij
        j += 1
    return -1


@njit(cache=True)
def _cholesky_block(band, fact, s, e, w, fixed, pivot_tol, mean):
    """In-place ``L`` of the block; returns -1, or the DOF whose pivot failed.  Width 10 (rods
    with interleaved coordinates) has its own compiled copy (2-2.5x faster, docs/implicit.md)."""
    if w == 10:
        return _cholesky_run(band, fact, s, e, 10, fixed, pivot_tol, mean)
    return _cholesky_run(band, fact, s, e, w, fixed, pivot_tol, mean)


@njit(cache=True)
def _factor_block(b, band, fact, block_start, width, fixed, min_shift, shift_initial,
                  shift_growth, shift_max, pivot_tol, status, shift, where):
    s = block_start[b]
    e = block_start[b + 1]
    w = width[b]
    status[b] = OK
    shift[b] = 0.0
    where[b] = -1
    mean = 1.0
    if min_shift > 0.0:  # the first copy shifts: it needs the mean diagonal
        total = 0.0
        nfree = 0
        for j in range(s, e):
            if not fixed[j]:
                total += abs(band[j, 0])
                nfree += 1
        if nfree > 0 and total > 0.0:
            mean = total / nfree
    mu = min_shift
    while True:
        bad, total, nfree = _copy_block(band, fact, s, e, w, fixed, mu, mean)
        if bad >= 0:
            status[b] = NONFINITE_MATRIX
            where[b] = bad
            return
        if nfree > 0 and total > 0.0:
            mean = total / nfree
        j = _cholesky_block(band, fact, s, e, w, fixed, pivot_tol, mean)
        shift[b] = mu
        if j < 0:
            return
        where[b] = j
        nxt = shift_initial if mu <= 0.0 else mu * shift_growth
        if nxt > shift_max * (1.0 + 1e-12):
            status[b] = NOT_POSITIVE
            return
        mu = nxt


@njit(cache=True, parallel=True)
def factor_par(band, fact, block_start, width, fixed, min_shift, shift_initial, shift_growth,
               shift_max, pivot_tol, status, shift, where):
    """Factor every block (parallel over blocks); per block ``status``, ``shift`` (the ``mu``
    used) and ``where`` (the DOF of the last failure, -1 if none)."""
    for b in prange(block_start.shape[0] - 1):
        _factor_block(b, band, fact, block_start, width, fixed, min_shift, shift_initial,
                      shift_growth, shift_max, pivot_tol, status, shift, where)


@njit(cache=True)
def factor_ser(band, fact, block_start, width, fixed, min_shift, shift_initial, shift_growth,
               shift_max, pivot_tol, status, shift, where):
    """Serial twin of :func:`factor_par`."""
    for b in range(block_start.shape[0] - 1):
        _factor_block(b, band, fact, block_start, width, fixed, min_shift, shift_initial,
                      shift_growth, shift_max, pivot_tol, status, shift, where)


# ------------------------------------------------------------------------------- solve

@njit(cache=True, inline="always")
def _substitute(fact, s, e, w, out):
    """``out`` <- L^-T L^-1 ``out`` on the block ``[s, e)``; constant trip counts where
    inlined with a literal ``w`` (see :func:`_cholesky_run`)."""
    j = s
    while j < e - w:  # L y = rhs
        y = out[j] / fact[j, 0]
        out[j] = y
        for i in range(1, w + 1):
            out[j + i] -= fact[j, i] * y
        j += 1
    while j < e:
        m = e - 1 - j
        y = out[j] / fact[j, 0]
        out[j] = y
        for i in range(1, m + 1):
            out[j + i] -= fact[j, i] * y
        j += 1
    j = e - 1
    while j >= s and j >= e - w:  # L^T x = y
        m = e - 1 - j
        acc = out[j]
        for i in range(1, m + 1):
            acc -= fact[j, i] * out[j + i]
        out[j] = acc / fact[j, 0]
        j -= 1
    while j >= s:
        acc = out[j]
        for i in range(1, w + 1):
            acc -= fact[j, i] * out[j + i]
        out[j] = acc / fact[j, 0]
        j -= 1


@njit(cache=True)
def _solve_block(b, fact, block_start, width, fixed, rhs, out, status, where):
    s = block_start[b]
    e = block_start[b + 1]
    w = width[b]
    status[b] = OK
    for j in range(s, e):
        x = rhs[j]
        if not (x - x == 0.0):
            status[b] = NONFINITE_RHS
            where[b] = j
            return
        out[j] = 0.0 if fixed[j] else x
    if w == 10:
        _substitute(fact, s, e, 10, out)
    else:
        _substitute(fact, s, e, w, out)
    for j in range(s, e):
        x = out[j]
        if not (x - x == 0.0):
            status[b] = NONFINITE_SOLUTION
            where[b] = j
            return


@njit(cache=True, parallel=True)
def solve_par(fact, block_start, width, fixed, rhs, out, status, where):
    """``out`` = A^{-1} ``rhs`` block by block (``out`` may be ``rhs``)."""
    for b in prange(block_start.shape[0] - 1):
        _solve_block(b, fact, block_start, width, fixed, rhs, out, status, where)


@njit(cache=True)
def solve_ser(fact, block_start, width, fixed, rhs, out, status, where):
    """Serial twin of :func:`solve_par`."""
    for b in range(block_start.shape[0] - 1):
        _solve_block(b, fact, block_start, width, fixed, rhs, out, status, where)


# ------------------------------------------------------------------------------- solver

class BandedSolver(LinearSolver):
    """Per-block banded Cholesky with diagonal-shift regularisation (module docstring).

    Every stencil must lie inside one block (ValueError naming the term, stencil and blocks
    otherwise).  Options: see :class:`~.linear.LinearSolver`.
    """

    kind = "banded"

    def __init__(self, assembly: Assembly, **options):
        super().__init__(assembly, **options)
        a = assembly
        for t in a.terms:
            if t.dynamic:
                raise ValueError(f"banded solver: term {t.name!r} changes its stencils "
                                 f"(dynamic); use the sparse solver")
        for t, c, d in zip(a.terms, a.cross, a.dofs):
            if c.size:
                s = int(c[0])
                blocks = sorted({a.block_of(int(x)) for x in d[s]})
                raise ValueError(f"banded solver: stencil {s} of term {t.name!r} spans blocks "
                                 f"{blocks}; use the sparse solver for coupled blocks")
        self.width = a.bandwidth.copy()
        w = int(self.width.max(initial=0))
        n = a.n_dofs
        self.band = np.zeros((n, w + 1))
        self.fact = np.zeros((n, w + 1))
        nb = a.n_blocks
        self.status = np.zeros(nb, dtype=np.int64)
        self.block_shift = np.zeros(nb)
        self.where = np.full(nb, -1, dtype=np.int64)
        self._factored = False
        self._band_work = n * (w + 1)
        self._factor_work = n * (w + 1) * (w + 2) // 2

    def _par(self, work: int) -> bool:
        return use_parallel(self.assembly.n_blocks, work, self.parallel)

    def assemble(self, *, hess_scale: float, diagonal: np.ndarray) -> None:
        a = self.assembly
        (reset_par if self._par(self._band_work) else reset_ser)(a.block_start, diagonal,
                                                                 self.band)
        for d, h, o, p in zip(a.dofs, a.hess, a.order, a.block_ptr):
            if d.shape[0]:
                k = scatter_par if self._par(h.size) else scatter_ser
                k(d, h, o, p, float(hess_scale), self.band)
        self._factored = False

    def factor(self, fixed: np.ndarray, *, min_shift: float = 0.0) -> FactorInfo:
        fixed = check_fixed(fixed, self.n_dofs)
        self._fixed = fixed
        self.factorizations += 1
        k = factor_par if self._par(self._factor_work) else factor_ser
        k(self.band, self.fact, self.assembly.block_start, self.width, fixed, float(min_shift),
          self.shift_initial, self.shift_growth, self.shift_max, self.pivot_tol, self.status,
          self.block_shift, self.where)
        bad = int(np.argmax(self.status != OK)) if self.status.any() else -1
        if bad >= 0:
            self._factored = False
            j = int(self.where[bad])
            if self.status[bad] == NONFINITE_MATRIX:
                raise LinearSolveError(bad, f"non-finite matrix entry in the column of DOF {j}")
            if self.shift_max == 0.0:
                raise LinearSolveError(bad, f"matrix not positive definite (pivot of DOF {j}) "
                                            f"and the diagonal shift is disabled (shift_max = 0)")
            raise LinearSolveError(bad, f"matrix not positive definite (pivot of DOF {j}) even "
                                        f"with the diagonal shift mu = {self.shift_max:g} "
                                        f"(shift_max)")
        self._factored = True
        nshift = int(np.count_nonzero(self.block_shift))
        return FactorInfo(nshift, float(self.block_shift.max()) if nshift else 0.0)

    def solve(self, rhs: np.ndarray, out: np.ndarray) -> None:
        if not self._factored:
            raise RuntimeError("banded solver: solve() before a successful factor()")
        k = solve_par if self._par(2 * self._band_work) else solve_ser
        k(self.fact, self.assembly.block_start, self.width, self._fixed, rhs, out, self.status,
          self.where)
        if self.status.any():
            bad = int(np.argmax(self.status != OK))
            j = int(self.where[bad])
            what = ("non-finite right-hand side" if self.status[bad] == NONFINITE_RHS
                    else "non-finite solution")
            raise LinearSolveError(bad, f"{what} at DOF {j}")

    def dense(self) -> np.ndarray:
        n = self.n_dofs
        A = np.zeros((n, n))
        bs = self.assembly.block_start
        for b in range(self.assembly.n_blocks):
            s, e, w = int(bs[b]), int(bs[b + 1]), int(self.width[b])
            for d in range(w + 1):
                j = np.arange(s, max(e - d, s))
                A[j + d, j] = self.band[j, d]
                A[j, j + d] = self.band[j, d]
        return A
