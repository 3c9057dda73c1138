"""Fill-reducing orderings for the sparse solver's SuperLU factorisation.

SuperLU orders the columns itself (``permc_spec``: minimum degree on the pattern of
``A^T + A``).  On the large matrices of meshes, METIS' nested dissection (``pymetis``, the
optional extra ``metis``) leaves less fill: on the 3173-vertex umbrella of the mixed model
(9714 free DOFs) SuperLU's own ordering gives 3.79 M entries in ``L + U`` and factors in 157 ms;
nested dissection of the same pattern 3.02 M and 97 ms (solves 3.35 against 2.85 ms); on the
813 DOFs of the frisbee they are even (2.9 against 2.6 ms).  The ordering is computed once per
pattern (33 ms for the umbrella's), and the matrix is permuted symmetrically before SuperLU
factors it in that order (``permc_spec="NATURAL"``, diagonal pivots).

:func:`nested_dissection` takes the CSR pattern (any diagonal entries are ignored) and returns
the permutation ``p`` with ``A' = A[p][:, p]``; :class:`PermutedLU` solves with a factor of
``A'`` as if it were one of ``A``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["metis_available", "nested_dissection", "PermutedLU", "METIS_MIN_DOFS"]

METIS_MIN_DOFS = 2000
"""Free DOFs from which ``ordering="auto"`` uses nested dissection when ``pymetis`` imports
(below, SuperLU's minimum degree is as good and costs nothing extra)."""


def metis_available() -> bool:
    """Whether ``pymetis`` can be imported (the optional extra ``metis``)."""
    try:
        import pymetis  # noqa: F401
    except ImportError:
        return False
    return True


def nested_dissection(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """METIS' nested dissection of the symmetric pattern ``(indptr, indices)`` (CSR, n rows);
    int64 [n], ``p[k]`` the row of the original matrix that becomes row ``k``.

    >>> nested_dissection(np.array([0, 2, 5, 7]), np.array([0, 1, 0, 1, 2, 1, 2])).size
    3
    """
    import pymetis

    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    n = indptr.size - 1
    rows = np.repeat(np.arange(n), np.diff(indptr))
    off = indices != rows
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[off], minlength=n), out=starts[1:])
    perm, _ = pymetis.nested_dissection(
        adjacency=pymetis.CSRAdjacency(starts, indices[off]))
    p = np.asarray(perm, dtype=np.int64)
    if p.shape != (n,) or not np.array_equal(np.sort(p), np.arange(n)):
        raise RuntimeError(f"METIS returned no permutation of {n} rows")
    return p


class PermutedLU:
    """A factorisation ``lu`` of ``A[p][:, p]`` solving ``A x = b``: ``x[p] = lu.solve(b[p])``
    (``solve(b)`` allocates its result, as SciPy's does)."""

    def __init__(self, lu, p: np.ndarray):
        self.lu = lu
        self.p = p

    def solve(self, b: np.ndarray) -> np.ndarray:
        y = self.lu.solve(np.ascontiguousarray(b[self.p]))
        x = np.empty_like(y)
        x[self.p] = y
        return x
