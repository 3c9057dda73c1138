"""The preconditioned conjugate gradient method of the sparse solver's ``"reuse"`` method as one
compiled kernel, with the preconditioner's solve by an ``L D L^T`` factorisation in it.

:meth:`strandlab.implicit.sparse.SparseSolver.solve` iterates on the current matrix with the
factorisation of an earlier one as preconditioner.  On the mixed model's small systems (a few
hundred vertices) an iteration costs about 0.2 ms, of which the matrix product and the
triangular solves are two thirds; the rest was the Python loop around them (array operations,
calls into QDLDL).  :func:`pcg_ldl` runs the whole loop in one call: the CSR product of
:func:`~strandlab.implicit.csr.csr_matvec_ser`, the solve with QDLDL's factors
(``P (I + L) D (I + L)^T P^T``, :func:`ldl_apply`) and the vector updates, with the same
stopping rules as the loop it replaces.  It is serial: it is used where the matrix product
would be (below :data:`~strandlab.implicit.assembly.PARALLEL_MIN_WORK`), with QDLDL as the
preconditioner's backend and no contact stencils outside the matrix pattern; otherwise the
solver keeps the Python loop.

Arrays (``n`` DOFs, ``m`` free DOFs):

- ``indptr`` int [n + 1], ``indices`` int [nnz], ``data`` [nnz]: the current matrix (CSR, the
  fixed rows and columns included; units of a stiffness, N/m and N m/rad);
- ``fixed`` bool [n]: the Dirichlet DOFs (rows and entries of the vectors held at 0);
- ``Lp`` int [m + 1], ``Li`` int [nnzL], ``Lx`` [nnzL]: the strictly lower triangle of the
  unit factor ``L`` (CSC), ``d`` [m]: the pivots, ``full`` int [m]: the DOF of each pivot's
  row (the free DOFs in the factor's order, ``free[perm]``);
- ``b`` [n]: the right-hand side; ``x`` [n]: the solution (out); ``r``, ``z``, ``p``, ``ap``
  [n], ``w`` [m]: work arrays.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .csr import csr_matvec_ser

__all__ = ["ldl_apply", "pcg_ldl", "unsigned_view"]


def unsigned_view(a: np.ndarray) -> np.ndarray:
    """The non-negative integer array ``a`` seen as unsigned (no copy).  Numba indexes with
    unsigned integers without the wrap-around of negative indices: the triangular solves of
    :func:`ldl_apply` ran 1.7 times faster with them (the frisbee's factor, 52 500 entries:
    89 against 156 us; QDLDL's own solve 101 us)."""
    return a.view(np.dtype(a.dtype.str.replace("i", "u")))


@njit(cache=True)
def ldl_apply(Lp, Li, Lx, d, full, r_in, w, z_out):
    """``z_out`` = the factorisation's solve of ``r_in`` on the free DOFs (``full``); the other
    entries of ``z_out`` are not written.  ``w`` [m] is work."""
    m = d.shape[0]
    for k in range(m):
        w[k] = r_in[full[k]]
    for j in range(m):                     # (I + L) y = P^T r
        wj = w[j]
        if wj != 0.0:
            for t in range(Lp[j], Lp[j + 1]):
                w[Li[t]] -= Lx[t] * wj
    for k in range(m):                     # D
        w[k] /= d[k]
    for j in range(m - 1, -1, -1):         # (I + L)^T
        acc = w[j]
        for t in range(Lp[j], Lp[j + 1]):
            acc -= Lx[t] * w[Li[t]]
        w[j] = acc
    for k in range(m):
        z_out[full[k]] = w[k]


@njit(cache=True)
def _dot(a, b):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    return acc


@njit(cache=True)
def pcg_ldl(indptr, indices, data, fixed, Lp, Li, Lx, d, full, b, rtol, max_iterations,
            x, r, z, p, ap, w):
    """Conjugate gradients for ``A x = b`` on the free DOFs from ``x = 0``, preconditioned by
    the ``L D L^T`` factors.  Returns ``(iterations, status)``: status 1 converged
    (``|r| <= rtol |b|``, ``b`` with the fixed entries zeroed), 2 stopped at a direction of
    non-positive curvature after at least one step (the iterate so far is usable), 0 not usable
    (non-positive curvature at the first step, or ``max_iterations`` reached)."""
    n = b.shape[0]
    for i in range(n):
        x[i] = 0.0
        r[i] = 0.0 if fixed[i] else b[i]
        z[i] = 0.0
    target = rtol * math.sqrt(_dot(r, r))
    if target == 0.0:
        return 0, 1
    ldl_apply(Lp, Li, Lx, d, full, r, w, z)
    for i in range(n):
        p[i] = z[i]
    rz = _dot(r, z)
    for it in range(1, max_iterations + 1):
        csr_matvec_ser(indptr, indices, data, p, fixed, ap)
        pap = _dot(p, ap)
        if not (pap > 0.0 and rz > 0.0):
            return it, 2 if it > 1 else 0
        alpha = rz / pap
        rr = 0.0
        for i in range(n):
            x[i] += alpha * p[i]
            r[i] -= alpha * ap[i]
            rr += r[i] * r[i]
        if math.sqrt(rr) <= target:
            return it, 1
        ldl_apply(Lp, Li, Lx, d, full, r, w, z)
        rz_new = _dot(r, z)
        beta = rz_new / rz
        for i in range(n):
            p[i] = z[i] + beta * p[i]
        rz = rz_new
    return max_iterations, 0
