"""The sparse solver's compressed sparse row (CSR) matrix: its pattern from the terms' stencils,
and the kernels that fill it and multiply by it.

:func:`csr_pattern` merges the diagonal and every stencil entry of the static terms into one
CSR pattern and maps each stencil entry to its position; :func:`csr_scatter_ser` (and its
parallel twin) adds the scaled per-stencil Hessians there, block by block (race free: a block's
stencils touch only its rows, the crossing stencils follow serially); :func:`csr_matvec_ser`
multiplies, with the held DOFs' rows zero.  The dynamic terms' stencils (contact pairs) stay
out of the pattern: :func:`nonzero_stencils` lists those with a Hessian, and
:func:`matvec_listed` multiplies by them.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .assembly import _matvec_stencil

__all__ = ["csr_pattern", "csr_scatter_par", "csr_scatter_ser", "csr_matvec_par",
           "csr_matvec_ser", "nonzero_stencils", "matvec_listed", "add_stencil_diagonal",
           "csr_reset"]


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
def csr_reset(data, diag_pos, diagonal):
    """``data`` = 0 but for the diagonal entries (at ``diag_pos``), which take ``diagonal``."""
    for i in range(data.shape[0]):
        data[i] = 0.0
    for j in range(diag_pos.shape[0]):
        data[diag_pos[j]] = diagonal[j]


@njit(cache=True)
def _csr_row(i, indptr, indices, data, x):
    acc = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        acc += data[p] * x[indices[p]]
    return acc


@njit(cache=True, parallel=True)
def csr_matvec_par(indptr, indices, data, x, fixed, out):
    """``out = A x`` (CSR ``A``), 0 on the ``fixed`` rows; parallel over rows."""
    for i in prange(indptr.shape[0] - 1):
        out[i] = 0.0 if fixed[i] else _csr_row(i, indptr, indices, data, x)


@njit(cache=True)
def csr_matvec_ser(indptr, indices, data, x, fixed, out):
    """Serial twin of :func:`csr_matvec_par`."""
    for i in range(indptr.shape[0] - 1):
        out[i] = 0.0 if fixed[i] else _csr_row(i, indptr, indices, data, x)


@njit(cache=True)
def nonzero_stencils(hess):
    """Indices of the stencils whose Hessian [n, k, k] has a non-zero entry (int64)."""
    n, k = hess.shape[0], hess.shape[1]
    keep = np.zeros(n, dtype=np.int64)
    m = 0
    for s in range(n):
        hit = False
        for a in range(k):
            for c in range(k):
                if hess[s, a, c] != 0.0:
                    hit = True
                    break
            if hit:
                break
        if hit:
            keep[m] = s
            m += 1
    return keep[:m]


@njit(cache=True)
def matvec_listed(dofs, hess, idx, v, scale, out):
    """``out += scale * H v`` over the stencils ``idx`` only (serial, in that order)."""
    for i in range(idx.shape[0]):
        _matvec_stencil(idx[i], dofs, hess, v, scale, out)


@njit(cache=True)
def add_stencil_diagonal(dofs, hess, scale, out):
    """``out[dofs[s, a]] += scale * hess[s, a, a]``: the stencils' diagonal (Jacobi)."""
    for s in range(dofs.shape[0]):
        for a in range(dofs.shape[1]):
            out[dofs[s, a]] += scale * hess[s, a, a]
