"""The linear solvers' common interface, their regularisation, and the factory.

A linear solver holds one symmetric matrix

    A = hess_scale * K + diag(diagonal)

with ``K`` the scatter of every term's per-stencil Hessians (the :class:`~.assembly.Assembly`
buffers) and ``diagonal`` [n_dofs] (the integrator's mass part), assembled by
:meth:`LinearSolver.assemble`.  :meth:`LinearSolver.factor` factors it with the Dirichlet DOFs
``fixed`` [n_dofs] removed (their rows and columns replaced by the identity, their right-hand
side by zero), and :meth:`LinearSolver.solve` returns ``x`` with ``A x = rhs`` on the free DOFs
and ``x = 0`` on the fixed ones.

Regularisation.  When the matrix of a block is not positive definite (a pivot of its Cholesky
factorisation is ``<= pivot_tol`` times that DOF's diagonal scale, or the sparse LU shows a
negative or zero pivot), the block is factored again as

    A + mu * diag(s),   s_j = |A_jj|, or the block's mean |A_jj| where A_jj = 0 (1 if all are),

with ``mu = shift_initial * shift_growth**m``, ``m = 0, 1, ...``, until the factorisation
succeeds or ``mu`` would exceed ``shift_max``; then :class:`LinearSolveError` is raised naming
the block.  ``shift_max = 0`` disables the regularisation.  A positive definite factorisation
makes ``-A^{-1} g`` a descent direction of any objective whose gradient is ``g``.  The shifts
used are reported (:class:`FactorInfo`).  Non-finite matrix entries, right-hand sides or
solutions raise :class:`LinearSolveError` naming the block; no solver returns NaN.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .assembly import Assembly

__all__ = ["LinearSolver", "LinearSolveError", "FactorInfo", "make_linear_solver",
           "check_fixed", "BANDED_MAX_BANDWIDTH"]

BANDED_MAX_BANDWIDTH = 48
"""``kind="auto"`` picks the banded solver when no stencil spans two blocks and no block's
bandwidth exceeds this (a closed ring's wrap-around stencil makes its bandwidth the ring's size:
those go to the sparse solver)."""


class LinearSolveError(RuntimeError):
    """A block's matrix could not be factored or solved.

    Attributes: ``block`` (index into ``block_start``; -1 when not known), ``reason`` (text).
    """

    def __init__(self, block: int, reason: str):
        self.block = int(block)
        self.reason = reason
        where = f"block {self.block}" if self.block >= 0 else "the matrix"
        super().__init__(f"linear solve failed in {where}: {reason}")


@dataclass(frozen=True)
class FactorInfo:
    """What one factorisation needed: ``shifted_blocks`` (blocks factored with a diagonal
    shift; the sparse solver shifts all blocks at once) and ``max_shift`` (largest ``mu``)."""

    shifted_blocks: int = 0
    max_shift: float = 0.0


class LinearSolver(ABC):
    """Assemble, factor and solve ``A x = rhs`` (module docstring).

    Parameters
    ----------
    assembly : Assembly
        The terms' buffers and stencil grouping; the matrix pattern is taken from it once.
    shift_initial, shift_growth, shift_max : float
        Regularisation (module docstring): first ``mu`` (> 0), its growth factor (> 1), and
        its largest value (>= 0; 0 disables the shift).
    pivot_tol : float
        A Cholesky pivot ``<= pivot_tol * s_j`` counts as a failure (in [0, 1)).
    parallel : bool or None
        Force the parallel (True) or serial (False) kernels; None chooses by size.
    """

    kind = "base"

    def __init__(self, assembly: Assembly, *, shift_initial: float = 1e-8,
                 shift_growth: float = 10.0, shift_max: float = 1e6, pivot_tol: float = 1e-14,
                 parallel: bool | None = None):
        if not isinstance(assembly, Assembly):
            raise TypeError(f"assembly must be an Assembly, got {type(assembly).__name__}")
        self.assembly = assembly
        self.n_dofs = assembly.n_dofs
        self.shift_initial = _check(shift_initial, "shift_initial", lambda v: v > 0, "> 0")
        self.shift_growth = _check(shift_growth, "shift_growth", lambda v: v > 1, "> 1")
        self.shift_max = _check(shift_max, "shift_max", lambda v: v >= 0, ">= 0")
        self.pivot_tol = _check(pivot_tol, "pivot_tol", lambda v: 0 <= v < 1, "in [0, 1)")
        if parallel not in (None, True, False):
            raise ValueError(f"parallel must be None, True or False, got {parallel!r}")
        self.parallel = parallel
        self.factorizations = 0
        """Numeric factorisations made (each try of the shift sequence counts)."""
        self.linear_iterations = 0
        """Iterations of the iterative solves (sparse ``method="reuse"`` or ``"jacobi"``)."""
        self.solve_info = None
        """:class:`FactorInfo` of a factorisation that :meth:`solve` had to make itself (an
        iterative solve that did not converge), None when it made none."""

    @abstractmethod
    def assemble(self, *, hess_scale: float, diagonal: np.ndarray) -> None:
        """A = ``hess_scale`` K + diag(``diagonal`` [n_dofs]) from the assembly's current
        Hessian buffers."""

    @abstractmethod
    def factor(self, fixed: np.ndarray, *, min_shift: float = 0.0) -> FactorInfo:
        """Factor A with the DOFs where ``fixed`` [n_dofs] (bool) is True removed; every block
        is shifted by at least ``min_shift`` (0: no shift unless needed)."""

    @abstractmethod
    def solve(self, rhs: np.ndarray, out: np.ndarray) -> None:
        """``out`` [n_dofs] = A^{-1} ``rhs`` [n_dofs] on the free DOFs, 0 on the fixed ones.
        ``out`` may be ``rhs``."""

    @abstractmethod
    def dense(self) -> np.ndarray:
        """The assembled A (before the Dirichlet removal) as a dense array; for checks."""

    def cache(self) -> dict:
        """What the solver carries from one step to the next besides the matrix it is given
        (a factorisation kept as a preconditioner), as named arrays for a checkpoint; empty
        when it carries nothing.  :meth:`restore_cache` puts it back, so that a resumed run
        repeats the uninterrupted one bit for bit."""
        return {}

    def restore_cache(self, arrays: dict) -> None:
        """Undo :meth:`cache` (``arrays`` as it returned them); ValueError naming a missing
        or misshapen array."""
        if arrays:
            raise ValueError(f"{type(self).__name__} keeps no cache, got {sorted(arrays)}")

    def next_shift(self, mu: float) -> float:
        """The shift after ``mu`` in the regularisation sequence (``inf`` past ``shift_max``)."""
        nxt = self.shift_initial if mu <= 0.0 else mu * self.shift_growth
        return nxt if nxt <= self.shift_max * (1.0 + 1e-12) else math.inf


def check_fixed(fixed, n_dofs: int) -> np.ndarray:
    """``fixed`` as a bool array [n_dofs] (no copy when it is one already)."""
    if not (isinstance(fixed, np.ndarray) and fixed.dtype == np.bool_):
        fixed = np.asarray(fixed)
        if fixed.dtype != np.bool_:
            raise ValueError(f"fixed must be a boolean array [n_dofs], got dtype {fixed.dtype}")
    if fixed.shape != (n_dofs,):
        raise ValueError(f"fixed must have shape ({n_dofs},), got {fixed.shape}")
    return np.ascontiguousarray(fixed)


def _check(value, name: str, ok, rule: str) -> float:
    """``value`` as a finite float satisfying ``ok``; ValueError naming ``name`` otherwise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or not ok(v):
        raise ValueError(f"{name} must be finite and {rule}, got {value!r}")
    return v


def make_linear_solver(assembly: Assembly, kind: str = "auto", **options) -> LinearSolver:
    """A linear solver for ``assembly``.

    ``kind``: ``"banded"`` (per-block banded Cholesky; every stencil must lie inside one
    block), ``"sparse"`` (SciPy's sparse LU, or CHOLMOD when ``sksparse`` is importable), or
    ``"auto"``: banded when no stencil spans two blocks, no term is dynamic and the largest
    block bandwidth is at most :data:`BANDED_MAX_BANDWIDTH`, else sparse.  ``options`` go to
    the solver's constructor.
    """
    from .banded import BandedSolver
    from .sparse import SparseSolver

    if kind == "auto":
        banded = (not assembly.has_cross and not assembly.has_dynamic
                  and int(assembly.bandwidth.max(initial=0)) <= BANDED_MAX_BANDWIDTH)
        kind = "banded" if banded else "sparse"
    if kind == "banded":
        return BandedSolver(assembly, **options)
    if kind == "sparse":
        return SparseSolver(assembly, **options)
    raise ValueError(f"linear solver kind must be 'auto', 'banded' or 'sparse', got {kind!r}")
