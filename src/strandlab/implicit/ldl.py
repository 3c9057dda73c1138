"""QDLDL's sparse LDL^T factorisation (the optional extra ``qdldl``) for the sparse solver.

QDLDL (the factorisation of the OSQP solver) orders the matrix by approximate minimum degree,
analyses its pattern once and factors ``P A P^T = L D L^T`` without pivoting; a new matrix of
the same pattern is refactored numerically only (``update``).  Without pivoting, ``D`` is the
matrix's inertia (Sylvester): the matrix is positive definite exactly when every entry of ``D``
is positive, which is how the sparse solver tells when to shift.  On the mixed model's small
matrices it factors 2-4 times faster than SuperLU and solves up to 1.5 times faster (the toy
ball's 747 DOFs: 0.42 against 1.6 ms, 36 against 51 us; the frisbee's 813: 1.4 against 2.8
ms); on large ones it is slower (the umbrella's 9714 DOFs: 242 against 157 ms), hence
:data:`QDLDL_MAX_DOFS`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .pcg import unsigned_view

__all__ = ["qdldl_available", "QdldlFactor", "QDLDL_MAX_DOFS"]

QDLDL_MAX_DOFS = 2000
"""Free DOFs below which the sparse solver's ``backend="auto"`` takes QDLDL (when it imports)
rather than SuperLU."""


def qdldl_available() -> bool:
    """Whether ``qdldl`` can be imported."""
    try:
        import qdldl  # noqa: F401
    except ImportError:
        return False
    return True


class QdldlFactor:
    """One pattern's QDLDL factorisation, refactored numerically for each new matrix.

    :meth:`factor` takes the symmetric matrix as SciPy CSC with sorted indices and every
    diagonal entry stored; :meth:`solve` solves with the last factor that succeeded, whose
    arrays are ``factors``: ``(Lp, Li, Lx, d, perm)``, the strictly lower triangle of the unit
    factor ``L`` (CSC), the pivots and the order, ``A = P (I + L) D (I + L)^T P^T`` with
    ``P[perm[k], k] = 1`` (:func:`strandlab.implicit.pcg.ldl_apply` solves with them)."""

    def __init__(self):
        self._solver = None
        self.factors = None
        self._pattern = None      # (indptr, indices, positions of the upper triangle, upper)

    def _upper(self, A):
        pat = self._pattern
        if pat is None or not (np.array_equal(A.indptr, pat[0])
                               and np.array_equal(A.indices, pat[1])):
            n = A.shape[0]
            col = np.repeat(np.arange(n), np.diff(A.indptr))
            keep = np.nonzero(A.indices <= col)[0]
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(col[keep], minlength=n), out=indptr[1:])
            upper = sp.csc_matrix((A.data[keep], A.indices[keep], indptr), shape=A.shape)
            self._pattern = pat = (A.indptr.copy(), A.indices.copy(), keep, upper)
            self._solver = None
        np.take(A.data, pat[2], out=pat[3].data)
        return pat[3]

    def factor(self, A, scale: np.ndarray, pivot_tol: float) -> tuple[bool, str, int]:
        """Factor ``A``; returns ``(ok, reason, row)``: not ok when a pivot of ``D`` is
        ``<= pivot_tol`` times its row's ``scale`` (``row`` the first such row of ``A``, -1
        when the factorisation itself failed)."""
        import qdldl

        upper = self._upper(A)
        try:
            if self._solver is None:
                self._solver = qdldl.Solver(upper, upper=True)
            else:
                self._solver.update(upper, upper=True)
        except RuntimeError as exc:       # a zero pivot
            self._solver = None
            return False, f"QDLDL: {exc}", -1
        L, d, perm = self._solver.factors()
        bad = ~(d > pivot_tol * scale[perm])
        if bad.any():
            k = int(np.argmax(bad))
            return False, f"pivot {d[k]:.3g}", int(perm[k])
        self.factors = (unsigned_view(L.indptr), unsigned_view(L.indices), L.data, d,
                        np.asarray(perm))
        return True, "", -1

    def solve(self, b: np.ndarray) -> np.ndarray:
        return self._solver.solve(np.ascontiguousarray(b))
