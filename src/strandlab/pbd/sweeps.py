"""Sweeps over the constraints of one strand: the order of a pass (sequential, bidirectional
interleaving, random) and the loops that project its edges and its orientation constraints.

Each loop is one compiled function with its projection inlined (as Numba IR), so that the
per-constraint work runs on values in registers without a call per constraint; callers pass
plain arrays (no argument groups), which keeps these functions quick to compile.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..geometry.frames import FASTMATH
from .constraints import project_edge, project_orientation

__all__ = ["ORDER_INTERLEAVED", "ORDER_SEQUENTIAL", "ORDER_RANDOM", "project_edges",
           "project_orientations"]

ORDER_INTERLEAVED = 0
ORDER_SEQUENTIAL = 1
ORDER_RANDOM = 2

#: Options of functions called only from compiled code: no reference counting (they allocate
#: nothing) and no Python entry point (generating and optimising one is much of the compile
#: time of a small function).
_INNER = dict(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)


@njit(cache=True, error_model="numpy", _nrt=False)
def _ordered(k, n, mode):
    """Position ``k`` of a sweep over ``n`` constraints: sequential or bidirectional
    interleaving."""
    if mode == ORDER_INTERLEAVED:
        h = k // 2
        return h if k % 2 == 0 else n - 1 - h
    return k


@njit(**_INNER)
def _xorshift(state):
    state ^= (state << np.uint64(13)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    state ^= state >> np.uint64(7)
    state ^= (state << np.uint64(17)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    return state


@njit(cache=True, error_model="numpy", _nrt=False)
def _shuffle(perm, start, n, seed):
    """Fill ``perm[start:start+n]`` with a permutation of ``0..n-1`` (Fisher-Yates, xorshift)."""
    for k in range(n):
        perm[start + k] = k
    state = np.uint64(seed) | np.uint64(1)
    for k in range(n - 1, 0, -1):
        state = _xorshift(state)
        j = int(state % np.uint64(k + 1))
        t = perm[start + k]
        perm[start + k] = perm[start + j]
        perm[start + j] = t


@njit(**_INNER, fastmath=FASTMATH)
def project_edges(x, w, edge_p0, edge_p1, edge_ghost, rest, compliance, lam, ghost_rest, e0, n,
                  order, perm, length, dt2):
    """One sweep over the ``n`` edges from ``e0`` in ``order`` (``perm[e0:e0+n]`` for the
    random order): each edge's length (when ``length``), bisector and ghost distance
    (:func:`~.constraints.project_edge`)."""
    for k in range(n):
        e = e0 + (perm[e0 + k] if order == ORDER_RANDOM else _ordered(k, n, order))
        project_edge(x, w, edge_p0[e], edge_p1[e], edge_ghost[e], rest[e], compliance[e], lam,
                     e, dt2, ghost_rest[e], length)


@njit(**_INNER, fastmath=FASTMATH)
def project_orientations(x, w, idx, rot, has_rot, rest_omega, rest_len, alpha, compliance,
                         use_xpbd, lam, dt2, o0, n, order, perm, p0):
    """One sweep over the ``n`` orientation constraints from ``o0`` (rows of ``idx``,
    ``rest_omega``, ``rest_len``, ``alpha``, ``compliance``, ``lam``; ``rot`` too when
    ``has_rot``, else ``rot[0]`` is unused) in ``order`` (``perm[p0:p0+n]`` for the random
    order), each projected by :func:`~.constraints.project_orientation`.  Interior elements
    and the couplings of frames, triangles and bodies share this one compiled loop."""
    for k in range(n):
        o = o0 + (perm[p0 + k] if order == ORDER_RANDOM else _ordered(k, n, order))
        project_orientation(x, w, idx, o, rot, o if has_rot else 0, has_rot, rest_omega, o,
                            rest_len[o], alpha, compliance, use_xpbd, lam, dt2)
