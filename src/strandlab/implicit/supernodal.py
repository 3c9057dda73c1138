"""CHOLMOD's supernodal Cholesky through cvxopt (the optional extra ``cvxopt``) for the sparse
solver.

cvxopt's wheels bundle SuiteSparse's CHOLMOD with an optimised BLAS (OpenBLAS, a single-threaded
build), so the supernodal factorisation runs dense BLAS kernels on the factor's column blocks.
The reduced pattern is ordered once, by approximate minimum degree (``cvxopt.amd.order``) or by
METIS' nested dissection (``nested=True``: :func:`~.ordering.nested_dissection`, the extra
``metis``; cvxopt's CHOLMOD is built without METIS, so the order is given to it, and CHOLMOD
keeps whichever of it and its own AMD order fills less), and analysed once
(``cvxopt.cholmod.symbolic``, supernodal); each new matrix of that pattern is a numeric
factorisation (``cvxopt.cholmod.numeric``) of the values copied into the kept ``spmatrix`` (a
matrix whose index arrays are the very arrays analysed last is not compared with them: the
caller must not change them in place; the sparse solver makes new ones with a new pattern). A
matrix that is not positive definite raises CHOLMOD's error at the first failed column; a factor
that succeeds has its pivots (the squares of ``L``'s diagonal, ``cvxopt.cholmod.diag``) compared
with ``pivot_tol`` times their rows' scale, as QDLDL's and SuperLU's are, so that a pivot
positive only by rounding fails too.

CHOLMOD post-orders the elimination tree of the given order, so the order it factors in (``P``
of ``P A P^T = L L^T``) is not AMD's: it is read once per analysis from the first numeric
factor (``cvxopt.cholmod.solve`` with ``sys=7`` applies ``P`` to ``0, 1, ..., n - 1``), and a
failed column ``k`` and the pivot ``L[k, k]^2`` belong to row ``P[k]`` of ``A``.

On the mixed model's matrices (one thread, CPU, best of 7; docs/implicit.md) it factors the
umbrella's 9714 DOFs in 39 ms against SuperLU's 178-255 ms and QDLDL's 242, the frisbee's 813
in 0.75 ms against QDLDL's 2.6, the toy ball's 747 in 0.38 ms against 0.95; a solve costs
3.3 ms, 0.09 ms and 0.044 ms.  In nested dissection order the umbrella's matrix factors in
28.8 ms against 43.0 in AMD's (solves 3.9 against 4.2 ms); the frisbee's, below
:data:`~.ordering.METIS_MIN_DOFS` and ordered by AMD, in 0.94 against 0.89 (docs/implicit.md,
"Ordering").
"""
from __future__ import annotations

import numpy as np

from .ordering import nested_dissection

__all__ = ["cvxopt_available", "SupernodalFactor"]


def cvxopt_available() -> bool:
    """Whether ``cvxopt.cholmod`` can be imported."""
    try:
        import cvxopt.cholmod  # noqa: F401
    except ImportError:
        return False
    return True


class SupernodalFactor:
    """One pattern's supernodal CHOLMOD factorisation, refactored numerically for each new
    matrix.

    :meth:`factor` takes the symmetric matrix as SciPy CSC with sorted indices; :meth:`solve`
    solves with the last factor that succeeded (a failed factorisation leaves the one before
    usable: it factors into a second symbolic object).  ``perm``: the order CHOLMOD factored
    in, ``perm[k]`` the row of ``A`` eliminated ``k``-th (None until a pattern's first
    factorisation).  ``nested``: order each new pattern by nested dissection instead of AMD
    (needs ``pymetis``); changing it makes the next :meth:`factor` analyse afresh.

    >>> import scipy.sparse as sp
    >>> f = SupernodalFactor()
    >>> f.factor(sp.csc_matrix([[4.0, 1.0], [1.0, 3.0]]))
    (True, '', -1)
    >>> f.solve(np.array([5.0, 4.0])).round(12).tolist()
    [1.0, 1.0]
    """

    def __init__(self, *, nested: bool = False):
        self._nested = bool(nested)
        self._pattern = None      # (indptr, indices, positions of the lower triangle)
        self._source = (None, None)   # the index arrays of the matrix last analysed
        self._spm = None          # the kept cvxopt spmatrix (lower triangle)
        self._values = None       # a cvxopt matrix and its NumPy view: the values to set
        self._symbolic = None     # two symbolic factors: the current one and a spare
        self._good = None         # index of the factor the last success left
        self._rhs = None          # a cvxopt matrix and its NumPy view: right-hand side
        self.perm = None

    @property
    def nested(self) -> bool:
        return self._nested

    @nested.setter
    def nested(self, value: bool) -> None:
        if bool(value) != self._nested:
            self._nested = bool(value)
            self._pattern = None              # the next factor() orders and analyses afresh
            self._source = (None, None)

    def _order(self, A):
        """The fill-reducing order of ``A``'s pattern as a cvxopt integer matrix."""
        import cvxopt
        import cvxopt.amd

        if self._nested:
            return cvxopt.matrix(nested_dissection(A.indptr, A.indices).tolist(), tc="i")
        return cvxopt.amd.order(self._spm, uplo="L")

    def _prepare(self, A) -> None:
        """The lower triangle's positions, the spmatrix, the order and the analysis for
        ``A``'s pattern (only when it changed)."""
        import cvxopt
        import cvxopt.cholmod

        pat = self._pattern
        if pat is not None and A.indptr is self._source[0] and A.indices is self._source[1]:
            return                      # the arrays analysed last (never changed in place)
        if pat is not None and np.array_equal(A.indptr, pat[0]) \
                and np.array_equal(A.indices, pat[1]):
            self._source = (A.indptr, A.indices)
            return
        n = A.shape[0]
        col = np.repeat(np.arange(n, dtype=np.int64), np.diff(A.indptr))
        keep = np.nonzero(A.indices >= col)[0]
        rows = A.indices[keep].astype(np.int64)
        self._values = cvxopt.matrix(np.ascontiguousarray(A.data[keep], dtype=np.float64))
        self._spm = cvxopt.spmatrix(self._values, cvxopt.matrix(rows),
                                    cvxopt.matrix(col[keep]), (n, n))
        p = self._order(A)
        opts = cvxopt.cholmod.options
        saved = dict(opts)
        opts["supernodal"] = 2               # always supernodal (BLAS on column blocks)
        try:
            self._symbolic = [cvxopt.cholmod.symbolic(self._spm, p=p, uplo="L")
                              for _ in range(2)]
        finally:
            opts.clear()
            opts.update(saved)
        self._good = None
        self._rhs = cvxopt.matrix(np.zeros(n))
        self._pattern = (A.indptr.copy(), A.indices.copy(), keep, rows == col[keep])
        self._source = (A.indptr, A.indices)
        self.perm = None

    def _read_order(self, slot: int) -> None:
        """``perm``: CHOLMOD's order ``P``, read from the numeric factor in ``slot``."""
        import cvxopt.cholmod

        view = np.asarray(self._rhs)
        view[:, 0] = np.arange(view.shape[0])
        cvxopt.cholmod.solve(self._symbolic[slot], self._rhs, sys=7)      # P b
        self.perm = np.rint(view[:, 0]).astype(np.int64)

    def _order_after_failure(self, slot: int) -> None:
        """``perm`` when a pattern's first factorisation failed: the identity matrix of the
        pattern is factored in ``slot`` (the failed one) to read it."""
        import cvxopt.cholmod

        view = np.asarray(self._values)
        view[:, 0] = self._pattern[3]
        self._spm.V = self._values
        cvxopt.cholmod.numeric(self._spm, self._symbolic[slot])
        self._read_order(slot)

    def factor(self, A, scale: np.ndarray | None = None,
               pivot_tol: float = 0.0) -> tuple[bool, str, int]:
        """Factor ``A``; returns ``(ok, reason, row)``: not ok when CHOLMOD meets a
        non-positive pivot, or when a pivot is ``<= pivot_tol`` times its row's ``scale``
        [n] (given); ``row`` the row of ``A`` whose column failed."""
        import cvxopt.cholmod

        self._prepare(A)
        view = np.asarray(self._values)
        np.take(A.data, self._pattern[2], out=view[:, 0])
        self._spm.V = self._values
        slot = 1 if self._good == 0 else 0
        try:
            cvxopt.cholmod.numeric(self._spm, self._symbolic[slot])
        except ArithmeticError as exc:
            k = exc.args[0] if exc.args else -1
            if not (isinstance(k, int) and 0 <= k < A.shape[0]):
                return False, "CHOLMOD: not positive definite", -1
            if self.perm is None:
                self._order_after_failure(slot)
            return False, "CHOLMOD: not positive definite", int(self.perm[k])
        if self.perm is None:
            self._read_order(slot)
        if scale is not None and pivot_tol > 0.0:
            pivots = np.square(np.asarray(cvxopt.cholmod.diag(self._symbolic[slot]))[:, 0])
            bad = ~(pivots > pivot_tol * scale[self.perm])
            if bad.any():
                k = int(np.argmax(bad))
                return False, f"pivot {pivots[k]:.3g}", int(self.perm[k])
        self._good = slot
        return True, "", -1

    def column_counts(self) -> np.ndarray:
        """The stored entries of each column of ``L`` [n] (int64) in the last successful
        factor, the diagonal and the zeros of CHOLMOD's supernodes included: ``sum(c)`` is
        the factor's size, ``sum(c ** 2)`` about the floating-point operations of a numeric
        factorisation (``benchmarks/bench_mixed_floor.py``)."""
        import cvxopt.cholmod

        if self._good is None:
            raise RuntimeError("no successful factorisation yet")
        L = cvxopt.cholmod.getfactor(self._symbolic[self._good])
        return np.diff(np.asarray(L.CCS[0], dtype=np.int64).ravel())

    @property
    def ready(self) -> bool:
        """Whether a factorisation of the current pattern succeeded (:meth:`solve` usable): a
        new pattern is analysed afresh, and has none until its first success."""
        return self._good is not None

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``A^{-1} b`` with the last successful factor (a new array)."""
        import cvxopt.cholmod

        view = np.asarray(self._rhs)
        view[:, 0] = b
        cvxopt.cholmod.solve(self._symbolic[self._good], self._rhs)
        return view[:, 0].copy()
