"""Per-term buffers, the grouping of stencils by block, and the race-free scatter kernels.

An :class:`Assembly` is built once per system from its terms (:class:`~.terms.StencilTerm`),
``n_dofs`` and ``block_start`` (int64 [B + 1]: block ``b`` owns the DOFs
``block_start[b]:block_start[b + 1]``).  It owns, per term ``t`` with ``n`` stencils of ``k``
slots, the buffers the term fills:

- ``energy[t]`` float64 [n] [J], ``grad[t]`` float64 [n, k], ``hess[t]`` float64 [n, k, k]
  (units of ``dE / dq`` and ``d^2E / dq^2``; 8 (1 + k + k^2) bytes per stencil);

and the grouping used by every scatter:

- a stencil lies *inside* block ``b`` when all its DOFs are in that block; ``order[t]``
  (int64 [n_inside]) lists the inside stencils sorted by block (stable, so stencils of one block
  keep their order) and ``block_ptr[t]`` (int64 [B + 1]) delimits each block's run;
- ``cross[t]`` (int64 [n_cross]) lists the stencils that span several blocks (coupled systems).

Determinism.  A scatter runs a parallel loop over blocks for the inside stencils (each block
writes only its own rows, so no two threads touch one entry) and then a serial loop over the
crossing stencils.  Every entry therefore receives its contributions in one fixed order
(term by term, stencil by stencil as listed), whatever the number of threads: results are
bit-identical run to run and with 1 or N threads.  Reductions (norms, dot products) are done
per block in parallel and the per-block partial sums added serially, for the same reason.

Each kernel has a serial twin; the parallel one runs only when there are several blocks,
several threads and enough work (:func:`use_parallel`).
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numba
import numpy as np
from numba import njit, prange

from .terms import StencilTerm, check_dofs

# Threads that wait between parallel regions sleep instead of spinning (see pbd/kernels.py):
# read by the OpenMP runtime when Numba first starts its threads; a value the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("KMP_BLOCKTIME", "0")

__all__ = ["Assembly", "check_block_start", "use_parallel", "PARALLEL_MIN_WORK"]

PARALLEL_MIN_WORK = 50000
"""Work (scalar entries touched; multiply-adds for the factorisation) below which kernels run
serially: on the 2-core development machine a parallel region costs 20-30 us, and the serial
kernels take 1.5-3 ns per unit, so below ~5e4 units (~100 us) two threads gain little or lose
(docs/implicit.md)."""


def use_parallel(n_blocks: int, work: int, parallel: bool | None = None, *,
                 min_work: int | None = None) -> bool:
    """Whether to run the parallel twin of a kernel: ``parallel`` when given, else several
    blocks, several Numba threads and ``work >= min_work`` (default
    :data:`PARALLEL_MIN_WORK`; a kernel whose parallel call costs more sets its own)."""
    if parallel is not None:
        return bool(parallel)
    least = PARALLEL_MIN_WORK if min_work is None else min_work
    return n_blocks > 1 and work >= least and numba.get_num_threads() > 1


def check_block_start(block_start, n_dofs: int) -> np.ndarray:
    """``block_start`` as int64 [B + 1] with ``0 = b[0] <= b[1] <= ... <= b[B] = n_dofs``."""
    b = np.ascontiguousarray(block_start, dtype=np.int64)
    if b.ndim != 1 or b.size < 2:
        raise ValueError(f"block_start must have shape [n_blocks + 1] with n_blocks >= 1, "
                         f"got shape {b.shape}")
    if b[0] != 0 or b[-1] != n_dofs:
        raise ValueError(f"block_start must start at 0 and end at n_dofs = {n_dofs}, got "
                         f"{int(b[0])} ... {int(b[-1])}")
    bad = np.nonzero(np.diff(b) < 0)[0]
    if bad.size:
        raise ValueError(f"block_start decreases at block {int(bad[0])}: "
                         f"{int(b[bad[0]])} > {int(b[bad[0] + 1])}")
    return b


# ------------------------------------------------------------------------------- kernels

@njit(cache=True)
def _scatter_vec_stencil(s, dofs, vals, out):
    for a in range(dofs.shape[1]):
        out[dofs[s, a]] += vals[s, a]


@njit(cache=True)
def _scatter_vec_block(b, dofs, vals, order, ptr, out):
    for i in range(ptr[b], ptr[b + 1]):
        _scatter_vec_stencil(order[i], dofs, vals, out)


@njit(cache=True, parallel=True)
def scatter_vector_par(dofs, vals, order, ptr, cross, out):
    """``out[dofs[s, a]] += vals[s, a]``: parallel over blocks, then the crossing stencils."""
    for b in prange(ptr.shape[0] - 1):
        _scatter_vec_block(b, dofs, vals, order, ptr, out)
    for i in range(cross.shape[0]):
        _scatter_vec_stencil(cross[i], dofs, vals, out)


@njit(cache=True)
def scatter_vector_ser(dofs, vals, order, ptr, cross, out):
    """Serial twin of :func:`scatter_vector_par` (same order of additions)."""
    for b in range(ptr.shape[0] - 1):
        _scatter_vec_block(b, dofs, vals, order, ptr, out)
    for i in range(cross.shape[0]):
        _scatter_vec_stencil(cross[i], dofs, vals, out)


@njit(cache=True)
def _matvec_stencil(s, dofs, hess, v, scale, out):
    k = dofs.shape[1]
    for a in range(k):
        acc = 0.0
        for c in range(k):
            acc += hess[s, a, c] * v[dofs[s, c]]
        out[dofs[s, a]] += scale * acc


@njit(cache=True)
def _matvec_block(b, dofs, hess, order, ptr, v, scale, out):
    for i in range(ptr[b], ptr[b + 1]):
        _matvec_stencil(order[i], dofs, hess, v, scale, out)


@njit(cache=True, parallel=True)
def matvec_par(dofs, hess, order, ptr, cross, v, scale, out):
    """``out += scale * H v`` with ``H`` the scatter of the per-stencil Hessians."""
    for b in prange(ptr.shape[0] - 1):
        _matvec_block(b, dofs, hess, order, ptr, v, scale, out)
    for i in range(cross.shape[0]):
        _matvec_stencil(cross[i], dofs, hess, v, scale, out)


@njit(cache=True)
def matvec_ser(dofs, hess, order, ptr, cross, v, scale, out):
    """Serial twin of :func:`matvec_par`."""
    for b in range(ptr.shape[0] - 1):
        _matvec_block(b, dofs, hess, order, ptr, v, scale, out)
    for i in range(cross.shape[0]):
        _matvec_stencil(cross[i], dofs, hess, v, scale, out)


@njit(cache=True)
def _first_nonfinite(a):
    """Flat index of the first non-finite entry of ``a`` (any shape), or -1."""
    f = a.reshape(-1)
    for i in range(f.shape[0]):
        x = f[i]
        if not (x - x == 0.0):
            return i
    return -1


# ------------------------------------------------------------------------------- assembly

class Assembly:
    """Buffers of every term and the block grouping of their stencils (module docstring).

    Parameters
    ----------
    terms : sequence of StencilTerm
    n_dofs : int
    block_start : int64 [B + 1]
    parallel : bool or None
        Force the parallel (True) or serial (False) kernels; None chooses by size.
    """

    def __init__(self, terms: Sequence[StencilTerm], n_dofs: int, block_start, *,
                 parallel: bool | None = None):
        n_dofs = int(n_dofs)
        if n_dofs < 1:
            raise ValueError(f"n_dofs must be a positive integer, got {n_dofs}")
        self.n_dofs = n_dofs
        self.block_start = check_block_start(block_start, n_dofs)
        self.n_blocks = int(self.block_start.size - 1)
        self.terms = tuple(terms)
        for t in self.terms:
            if not isinstance(t, StencilTerm):
                raise TypeError(f"term {t!r} is not a StencilTerm")
        self.parallel = parallel
        self._source = [None] * len(self.terms)
        self.dofs, self.energy, self.grad, self.hess = [], [], [], []
        self.order, self.block_ptr, self.cross, self.block_width = [], [], [], []
        for t in range(len(self.terms)):
            for lst in (self.dofs, self.energy, self.grad, self.hess, self.order,
                        self.block_ptr, self.cross, self.block_width):
                lst.append(None)
            self._setup_term(t)
        self._totals()

    def _setup_term(self, t: int) -> None:
        """Buffers and block grouping of term ``t`` from its current ``dofs``."""
        term, nb = self.terms[t], self.n_blocks
        d = check_dofs(term.name, term.dofs, self.n_dofs)
        n, k = d.shape
        self.dofs[t] = d
        self.energy[t] = np.zeros(n)
        self.grad[t] = np.zeros((n, k))
        self.hess[t] = np.zeros((n, k, k))
        if n:
            lo, hi = d.min(axis=1), d.max(axis=1)
            blo = np.searchsorted(self.block_start, lo, side="right") - 1
            bhi = np.searchsorted(self.block_start, hi, side="right") - 1
        else:
            lo = hi = blo = bhi = np.zeros(0, dtype=np.int64)
        inside = blo == bhi
        idx = np.nonzero(inside)[0]
        order = idx[np.argsort(blo[idx], kind="stable")].astype(np.int64)
        counts = np.bincount(blo[idx], minlength=nb)
        ptr = np.zeros(nb + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        self.order[t] = order
        self.block_ptr[t] = ptr
        self.cross[t] = np.nonzero(~inside)[0].astype(np.int64)
        width = np.zeros(nb, dtype=np.int64)
        if idx.size:
            np.maximum.at(width, blo[idx], (hi - lo)[idx])
        self.block_width[t] = width
        self._source[t] = term.dofs

    def _totals(self) -> None:
        self.bandwidth = np.zeros(self.n_blocks, dtype=np.int64)
        for w in self.block_width:
            np.maximum(self.bandwidth, w, out=self.bandwidth)
        self.n_entries = sum(int(h.size) for h in self.hess)
        self.has_cross = any(c.size for c in self.cross)
        self.has_dynamic = any(t.dynamic for t in self.terms)

    def refresh(self) -> tuple[int, ...]:
        """Re-size the buffers and grouping of every term whose ``dofs`` is a new array since
        the last call (a :attr:`~.terms.StencilTerm.dynamic` term's new stencil set); returns
        the indices of those terms.  Other terms are not looked at: their stencils are fixed."""
        changed = tuple(t for t, term in enumerate(self.terms)
                        if term.dynamic and term.dofs is not self._source[t])
        for t in changed:
            self._setup_term(t)
        if changed:
            self._totals()
        return changed

    # -------------------------------------------------------------------- evaluation
    def evaluate(self, q: np.ndarray, *, hessian: bool, only=None) -> None:
        """Fill every term's (or the terms of indices ``only``) per-stencil energy and gradient
        (and Hessian when asked) at ``q`` [n_dofs]."""
        for k in range(len(self.terms)) if only is None else only:
            self.terms[k].evaluate(q, self.energy[k], self.grad[k],
                                   self.hess[k] if hessian else None)

    def energy_sum(self) -> float:
        """Sum of all terms' per-stencil energies from the last evaluation [J]."""
        total = 0.0
        for e in self.energy:
            total += float(e.sum())
        return total

    def _parallel(self, work: int) -> bool:
        return use_parallel(self.n_blocks, work, self.parallel)

    def gradient(self, out: np.ndarray) -> None:
        """``out`` [n_dofs] = scatter of all terms' per-stencil gradients."""
        out.fill(0.0)
        for d, g, o, p, c in zip(self.dofs, self.grad, self.order, self.block_ptr, self.cross):
            if d.shape[0]:
                k = scatter_vector_par if self._parallel(g.size) else scatter_vector_ser
                k(d, g, o, p, c, out)

    def hessian_matvec(self, v: np.ndarray, out: np.ndarray, scale: float = 1.0) -> None:
        """``out`` [n_dofs] += ``scale`` K ``v``, K the scatter of all per-stencil Hessians."""
        for d, h, o, p, c in zip(self.dofs, self.hess, self.order, self.block_ptr, self.cross):
            if d.shape[0]:
                k = matvec_par if self._parallel(h.size) else matvec_ser
                k(d, h, o, p, c, v, float(scale), out)

    def first_nonfinite(self, *, hessian: bool) -> tuple[int, int, str] | None:
        """(term index, stencil, "energy"/"gradient"/"Hessian") of the first non-finite
        per-stencil value of the last evaluation, or None."""
        for t, (e, g, h) in enumerate(zip(self.energy, self.grad, self.hess)):
            for what, a in (("energy", e), ("gradient", g), ("Hessian", h)):
                if what == "Hessian" and not hessian:
                    continue
                i = _first_nonfinite(a)
                if i >= 0:
                    per = a.size // max(a.shape[0], 1)
                    return t, int(i // per), what
        return None

    def block_of(self, dof: int) -> int:
        """Block holding DOF ``dof``."""
        return int(np.searchsorted(self.block_start, dof, side="right") - 1)

    def dense_hessian(self) -> np.ndarray:
        """The scattered Hessian K as a dense [n_dofs, n_dofs] array (checks; small only)."""
        K = np.zeros((self.n_dofs, self.n_dofs))
        for d, h in zip(self.dofs, self.hess):
            k = d.shape[1]
            np.add.at(K, (np.repeat(d, k, axis=1).reshape(-1), np.tile(d, (1, k)).reshape(-1)),
                      h.reshape(-1))
        return K
