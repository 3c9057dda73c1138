"""Sparse direct solver: coupled blocks, closed rings, any stencil pattern.

Pattern.  The CSR pattern (``indptr`` int64 [n + 1], ``indices`` int32/int64 [nnz], sorted
columns) is the union of every term's stencil entries and the diagonal, computed once.  For each
term, ``csr_map[t]`` [n, k, k] gives the position in ``data`` of each stencil Hessian entry, so
assembly is one pass ``data[map[s, a, c]] += scale * hess[s, a, c]``: parallel over blocks for
the stencils inside one block (they write only their block's rows), then serial over the
crossing stencils (deterministic; :mod:`.assembly`).  Memory: 4 bytes per stencil Hessian entry
for the maps (8 when nnz >= 2^31), i.e. half of the Hessian buffers themselves, plus
12-16 bytes per non-zero for the matrix.

Factorisation.  The matrix with the fixed DOFs removed (a reduced CSR pattern, rebuilt only
when ``fixed`` changes; its values gathered from ``data`` each time) is factored by
``scikit-sparse``'s CHOLMOD when ``sksparse.cholmod`` is importable (optional, not a
dependency; ``cholmod.analyze`` once per reduced pattern, then ``cholesky_inplace``), else by
SciPy's SuperLU (``splu``) with a symmetric fill-reducing ordering and diagonal pivots, from whose
pivots the matrix's inertia is read (Sylvester: with diagonal pivoting ``A = L D L^T`` and the
pivots are ``D``).  A matrix that is not positive definite (CHOLMOD's error, a pivot
``<= pivot_tol`` times its diagonal scale, an off-diagonal pivot, or an exactly singular
factor) is factored again with the diagonal shift of :mod:`.linear`, applied to every block at
once.  Factor and solve allocate (SciPy).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from scipy.sparse.linalg import splu

from .assembly import Assembly, _first_nonfinite, use_parallel
from .linear import FactorInfo, LinearSolveError, LinearSolver, check_fixed

__all__ = ["SparseSolver", "csr_pattern", "cholmod_available"]


def cholmod_available() -> bool:
    """Whether ``sksparse.cholmod`` can be imported (optional faster factorisation)."""
    try:
        import sksparse.cholmod  # noqa: F401
    except ImportError:
        return False
    return True


def csr_pattern(n_dofs: int, dofs_list) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """CSR pattern of the diagonal and every stencil entry.

    Returns ``indptr`` int64 [n + 1], ``indices`` [nnz], ``diag_pos`` [n] (position of
    ``(j, j)``) and one map [n_t, k_t, k_t] per entry of ``dofs_list`` (position of each stencil
    entry); index arrays are int32 when ``nnz < 2^31``, else int64.
    """
    n = int(n_dofs)
    keys = [np.arange(n, dtype=np.int64) * (n + 1)]
    for d in dofs_list:
        keys.append((d[:, :, None] * n + d[:, None, :]).reshape(-1))
    uniq, inv = np.unique(np.concatenate(keys), return_inverse=True)
    nnz = uniq.size
    itype = np.int32 if nnz < 2**31 - 1 and n < 2**31 - 1 else np.int64
    rows = uniq // n
    indices = (uniq - rows * n).astype(itype)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    inv = inv.reshape(-1).astype(itype)
    diag_pos = inv[:n].copy()
    maps, off = [], n
    for d in dofs_list:
        m, k = d.shape
        maps.append(inv[off:off + m * k * k].reshape(m, k, k).copy())
        off += m * k * k
    return indptr, indices, diag_pos, maps


@njit(cache=True)
def _csr_stencil(s, hmap, hess, scale, data):
    k = hmap.shape[1]
    for a in range(k):
        for c in range(k):
            data[hmap[s, a, c]] += scale * hess[s, a, c]


@njit(cache=True)
def _csr_block(b, hmap, hess, order, ptr, scale, data):
    for i in range(ptr[b], ptr[b + 1]):
        _csr_stencil(order[i], hmap, hess, scale, data)


@njit(cache=True, parallel=True)
def csr_scatter_par(hmap, hess, order, ptr, cross, scale, data):
    """``data`` += ``scale`` times the stencils' Hessians at their CSR positions."""
    for b in prange(ptr.shape[0] - 1):
        _csr_block(b, hmap, hess, order, ptr, scale, data)
    for i in range(cross.shape[0]):
        _csr_stencil(cross[i], hmap, hess, scale, data)


@njit(cache=True)
def csr_scatter_ser(hmap, hess, order, ptr, cross, scale, data):
    """Serial twin of :func:`csr_scatter_par`."""
    for b in range(ptr.shape[0] - 1):
        _csr_block(b, hmap, hess, order, ptr, scale, data)
    for i in range(cross.shape[0]):
        _csr_stencil(cross[i], hmap, hess, scale, data)


@njit(cache=True)
def _csr_reset(data, diag_pos, diagonal):
    for i in range(data.shape[0]):
        data[i] = 0.0
    for j in range(diag_pos.shape[0]):
        data[diag_pos[j]] = diagonal[j]


class SparseSolver(LinearSolver):
    """Sparse LU (SciPy) or Cholesky (CHOLMOD, optional) of the whole matrix (module
    docstring).

    Extra option: ``use_cholmod`` (None: when importable; False: never; True: required).
    """

    kind = "sparse"

    def __init__(self, assembly: Assembly, *, use_cholmod: bool | None = None, **options):
        super().__init__(assembly, **options)
        a = assembly
        self.indptr, self.indices, self.diag_pos, self.csr_map = csr_pattern(a.n_dofs, a.dofs)
        self.data = np.zeros(self.indices.size)
        if use_cholmod not in (None, True, False):
            raise ValueError(f"use_cholmod must be None, True or False, got {use_cholmod!r}")
        have = cholmod_available()
        if use_cholmod and not have:
            raise ValueError("use_cholmod=True but sksparse.cholmod cannot be imported")
        self.use_cholmod = have if use_cholmod is None else bool(use_cholmod)
        self._fixed_seen = None
        self._factor = None
        self._chol = None
        self._free = None

    # ------------------------------------------------------------------ assembly
    def assemble(self, *, hess_scale: float, diagonal: np.ndarray) -> None:
        a = self.assembly
        _csr_reset(self.data, self.diag_pos, diagonal)
        for m, h, o, p, c in zip(self.csr_map, a.hess, a.order, a.block_ptr, a.cross):
            if m.shape[0]:
                par = use_parallel(a.n_blocks, h.size, self.parallel)
                (csr_scatter_par if par else csr_scatter_ser)(m, h, o, p, c, float(hess_scale),
                                                              self.data)
        self._factor = None

    def matrix(self) -> sp.csr_matrix:
        """The assembled matrix (before the Dirichlet removal) as SciPy CSR (shares data)."""
        n = self.n_dofs
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=(n, n))

    def dense(self) -> np.ndarray:
        return self.matrix().toarray()

    # ------------------------------------------------------------------ Dirichlet reduction
    def _reduce(self, fixed: np.ndarray) -> None:
        """Reduced pattern for the free DOFs (only when ``fixed`` changed)."""
        if self._fixed_seen is not None and np.array_equal(self._fixed_seen, fixed):
            return
        n = self.n_dofs
        free = ~fixed
        self._free = np.nonzero(free)[0]
        newidx = np.cumsum(free) - 1
        rows = np.repeat(np.arange(n), np.diff(self.indptr))
        keep = np.nonzero(free[rows] & free[self.indices])[0]
        nf = self._free.size
        self._keep = keep
        self._red_indices = newidx[self.indices[keep]].astype(self.indices.dtype)
        self._red_indptr = np.zeros(nf + 1, dtype=np.int64)
        np.cumsum(np.bincount(newidx[rows[keep]], minlength=nf), out=self._red_indptr[1:])
        self._red_diag = np.searchsorted(keep, self.diag_pos[self._free])
        self._red_data = np.zeros(keep.size)
        self._red_rhs = np.zeros(nf)
        self._fixed_seen = fixed.copy()
        self._chol = None

    def _block_of_position(self, pos: int) -> tuple[int, int]:
        row = int(np.searchsorted(self.indptr, pos, side="right") - 1)
        return self.assembly.block_of(row), row

    # ------------------------------------------------------------------ factor / solve
    def factor(self, fixed: np.ndarray, *, min_shift: float = 0.0) -> FactorInfo:
        fixed = check_fixed(fixed, self.n_dofs)
        bad = _first_nonfinite(self.data)
        if bad >= 0:
            b, row = self._block_of_position(bad)
            raise LinearSolveError(b, f"non-finite matrix entry in the row of DOF {row}")
        self._reduce(fixed)
        self._factor = None
        nf = self._free.size
        if nf == 0:
            self._factor = "empty"
            return FactorInfo()
        np.take(self.data, self._keep, out=self._red_data)
        diag = self._red_data[self._red_diag].copy()
        scale = np.abs(diag)
        zero = scale == 0.0
        if zero.any():
            mean = scale.sum() / nf
            scale[zero] = mean if mean > 0.0 else 1.0
        mu = float(min_shift)
        last = ""
        while True:
            self._red_data[self._red_diag] = diag + mu * scale
            A = sp.csc_matrix((self._red_data, self._red_indices, self._red_indptr),
                              shape=(nf, nf))
            ok, last = (self._try_cholmod(A) if self.use_cholmod else self._try_lu(A, scale))
            if ok:
                break
            nxt = self.next_shift(mu)
            if not np.isfinite(nxt):
                if self.shift_max == 0.0:
                    raise LinearSolveError(-1, f"matrix not positive definite ({last}) and the "
                                               f"diagonal shift is disabled (shift_max = 0)")
                raise LinearSolveError(-1, f"matrix not positive definite ({last}) even with "
                                           f"the diagonal shift mu = {mu:g} (shift_max)")
            mu = nxt
        self.shift = mu
        return FactorInfo(self.assembly.n_blocks if mu > 0.0 else 0, mu)

    def _try_lu(self, A, scale) -> tuple[bool, str]:
        try:
            lu = splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                      options={"SymmetricMode": True})
        except RuntimeError as exc:  # exactly singular
            return False, str(exc)
        if not np.array_equal(lu.perm_r, lu.perm_c):
            return False, "off-diagonal pivot"
        piv = lu.U.diagonal()
        s_perm = np.empty_like(scale)
        s_perm[lu.perm_c] = scale
        bad = ~(piv > self.pivot_tol * s_perm)
        if bad.any():
            k = int(np.argmax(bad))
            dof = int(self._free[int(np.nonzero(lu.perm_c == k)[0][0])])
            return False, f"pivot {piv[k]:.3g} at DOF {dof}"
        self._factor = lu
        return True, ""

    def _try_cholmod(self, A) -> tuple[bool, str]:
        from sksparse import cholmod

        if self._chol is None:  # symbolic analysis once per reduced pattern
            self._chol = cholmod.analyze(A)
        try:
            self._chol.cholesky_inplace(A, beta=0.0)
        except cholmod.CholmodNotPositiveDefiniteError as exc:
            return False, str(exc)
        self._factor = self._chol
        return True, ""

    def solve(self, rhs: np.ndarray, out: np.ndarray) -> None:
        if self._factor is None:
            raise RuntimeError("sparse solver: solve() before a successful factor()")
        bad = _first_nonfinite(rhs)
        if bad >= 0:
            raise LinearSolveError(self.assembly.block_of(bad),
                                   f"non-finite right-hand side at DOF {bad}")
        if isinstance(self._factor, str):
            out.fill(0.0)
            return
        np.take(rhs, self._free, out=self._red_rhs)
        if self.use_cholmod:
            x = self._factor(self._red_rhs)
        else:
            x = self._factor.solve(self._red_rhs)
        out.fill(0.0)
        out[self._free] = np.reshape(x, -1)
        bad = _first_nonfinite(out)
        if bad >= 0:
            raise LinearSolveError(self.assembly.block_of(bad),
                                   f"non-finite solution at DOF {bad}")
