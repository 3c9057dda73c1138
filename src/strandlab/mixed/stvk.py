"""St. Venant-Kirchhoff simplices: energy, gradient and exact Hessian of a constant-strain
triangle (membrane, 2-D reference) or tetrahedron (solid, 3-D reference), one kernel for both.

A simplex of ``n = d + 1`` vertices ``x_i`` (``d`` = 2 or 3) with rest shape matrix ``Dm`` (its
rest edge vectors from vertex 0 in a ``d``-dimensional orthonormal frame) has the deformation
gradient ``F = Ds Dm^-1 = sum_i x_i beta_i^T`` [3, d], where ``beta_1..beta_d`` are the rows of
``Dm^-1`` [1/m] and ``beta_0 = -(beta_1 + ... + beta_d)``.  With the Green strain
``E = (F^T F - I) / 2`` [d, d]:

    W = V (mu tr(E^2) + lambda / 2 tr(E)^2)                      [J]
    S = 2 mu E + lambda tr(E) I  (second Piola-Kirchhoff stress), P = F S
    dW / dx_i = V P beta_i
    d2W / dx_i dx_j = V [(beta_i . S beta_j) I + mu (beta_i . beta_j) F F^T
                         + mu f_j f_i^T + lambda f_i f_j^T],      f_i = F beta_i

``V`` is the rest measure (``A t`` for a membrane of thickness ``t``, the volume for a solid),
``mu``, ``lambda`` the Lame parameters (plane stress ``lambda_ps`` for membranes).  ``W``
depends on ``F`` through ``F^T F`` only: it is zero, and so is the force, under any rigid motion
of the rest shape.  The Hessian is exact, symmetric to the last bit (block ``(j, i)`` is written
as the transpose of block ``(i, j)``) and indefinite under compression, as StVK is.

Per stencil the kernel keeps ``F``, ``S`` and ``P`` in scratch rows allocated once with the term
(:func:`scratch`), never inside the loop.  A stencil whose energy is not finite (non-finite
coordinates) gets energy +inf and a zero gradient and Hessian.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..implicit.assembly import use_parallel
from .elements import ELEMENT_PARALLEL_MIN_WORK, ElementTerm, mark_degenerate

__all__ = ["StVKTerm", "stvk_terms", "stvk_terms_serial", "scratch", "STVK_WORK"]

_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}

#: Serial cost of one simplex with and without the Hessian in the work units of
#: :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK` (about 2 ns each), by the reference
#: dimension ``d``: a membrane triangle 0.22 and 0.12 us, a tetrahedron 0.31 and 0.16 us on the
#: development machine (docs/mixed.md): the earlier 0.33, 0.16, 0.45 and 0.19 us times the
#: ratios measured back to back when the loop bounds became literals (0.68, 0.78, 0.70, 0.83).
STVK_WORK = {2: (112, 62), 3: (157, 79)}


def scratch(n_stencils: int, n: int, d: int):
    """The kernel's per-stencil scratch rows, a tuple ``work`` of float64 arrays: ``F``
    [S, 3, d], ``S`` [S, d, d], ``P`` [S, 3, d], ``f_i = F beta_i`` [S, n, 3] and ``F F^T``
    [S, 3, 3] (``n = d + 1`` vertices)."""
    return (np.zeros((n_stencils, 3, d)), np.zeros((n_stencils, d, d)),
            np.zeros((n_stencils, 3, d)), np.zeros((n_stencils, n, 3)),
            np.zeros((n_stencils, 3, 3)))


@njit(**_OPTS, inline="always")
def _deformation(s, q_in, dofs, beta, F_w, n, d):
    """``F = sum_i x_i beta_i^T`` of stencil ``s`` into ``F_w[s]`` (``n`` vertices, ``d``
    reference dimensions)."""
    for c in range(3):
        for a in range(d):
            acc = 0.0
            for i in range(n):
                acc += q_in[dofs[s, 3 * i + c]] * beta[s, i, a]
            F_w[s, c, a] = acc


@njit(**_OPTS, inline="always")
def _stress(s, mu, lam, F_w, S_w, d):
    """Green strain of ``F_w[s]``, turned into ``S = 2 mu E + lam tr(E) I`` in ``S_w[s]``;
    returns ``(tr(E^2), tr(E))``."""
    ee = 0.0
    tr = 0.0
    for a in range(d):
        for b in range(d):
            c = 0.0
            for k in range(3):
                c += F_w[s, k, a] * F_w[s, k, b]
            strain = 0.5 * (c - (1.0 if a == b else 0.0))
            S_w[s, a, b] = 2.0 * mu * strain
            ee += strain * strain
            if a == b:
                tr += strain
    for a in range(d):
        S_w[s, a, a] += lam * tr
    return ee, tr


@njit(**_OPTS, inline="always")
def _fbeta(s, i, beta, M_w, c, d):
    """Component ``c`` of ``M beta_i`` for ``M = M_w[s]`` [3, d] (``F`` gives ``f_i``, ``P``
    the force ``P beta_i``)."""
    acc = 0.0
    for a in range(d):
        acc += M_w[s, c, a] * beta[s, i, a]
    return acc


@njit(**_OPTS, inline="always")
def _force(s, vol, beta, F_w, S_w, P_w, g_out, n, d):
    """``P = F S`` into ``P_w[s]``; ``g_out[s]`` = ``V P beta_i`` for every vertex."""
    for c in range(3):
        for a in range(d):
            P_w[s, c, a] = 0.0
            for b in range(d):
                P_w[s, c, a] += F_w[s, c, b] * S_w[s, b, a]
    for i in range(n):
        for c in range(3):
            g_out[s, 3 * i + c] = vol * _fbeta(s, i, beta, P_w, c, d)


@njit(**_OPTS, inline="always")
def _pair(s, i, j, beta, S_w, d):
    """``(beta_i . S beta_j, beta_i . beta_j)``."""
    bsb = 0.0
    bb = 0.0
    for a in range(d):
        bb += beta[s, i, a] * beta[s, j, a]
        for b in range(d):
            bsb += beta[s, i, a] * S_w[s, a, b] * beta[s, j, b]
    return bsb, bb


@njit(**_OPTS, inline="always")
def _hessian_prep(s, beta, F_w, f_w, G_w, n, d):
    """``f_i = F beta_i`` into ``f_w[s, i]`` and ``F F^T`` into ``G_w[s]``."""
    for i in range(n):
        for c in range(3):
            f_w[s, i, c] = _fbeta(s, i, beta, F_w, c, d)
    for k in range(3):
        for m in range(k, 3):
            acc = 0.0
            for a in range(d):
                acc += F_w[s, k, a] * F_w[s, m, a]
            G_w[s, k, m] = acc
            G_w[s, m, k] = acc


@njit(**_OPTS, inline="always")
def _hessian(s, vol, mu, lam, beta, S_w, f_w, G_w, H_out, n, d):
    """``H_out[s]`` = the exact Hessian (module docstring), block ``(j, i)`` the transpose of
    block ``(i, j)``."""
    for i in range(n):
        for j in range(i, n):
            bsb, bb = _pair(s, i, j, beta, S_w, d)
            for k in range(3):
                for m in range(k if i == j else 0, 3):    # a diagonal block: its upper half
                    h = vol * ((bsb if k == m else 0.0) + mu * bb * G_w[s, k, m]
                               + mu * f_w[s, j, k] * f_w[s, i, m]
                               + lam * f_w[s, i, k] * f_w[s, j, m])
                    H_out[s, 3 * i + k, 3 * j + m] = h
                    H_out[s, 3 * j + m, 3 * i + k] = h


@njit(**_OPTS, inline="always")
def _body(s, q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out, want_hess, n, d):
    """:func:`stvk_stencil` for simplices of ``n`` vertices in ``d`` dimensions (inlined with
    the two literal pairs, so that the compiler unrolls the loops over vertices and axes; its
    helpers are inlined too (Numba's ``inline="always"``), so that the literals reach their
    loops: with Hessians 0.163 against 0.198 ms for the toy ball's 330 tetrahedra and 0.030
    against 0.042 ms for its 96 membrane triangles, best of 50 calls, one thread; 1.6 s more to
    compile each of the two kernels)."""
    F_w, S_w, P_w, f_w, G_w = work
    _deformation(s, q_in, dofs, beta, F_w, n, d)
    ee, tr = _stress(s, mu[s], lam[s], F_w, S_w, d)
    w = vol[s] * (mu[s] * ee + 0.5 * lam[s] * tr * tr)
    if not math.isfinite(w):
        return mark_degenerate(s, e_out, g_out, H_out, want_hess)
    e_out[s] = w
    _force(s, vol[s], beta, F_w, S_w, P_w, g_out, n, d)
    if want_hess:
        _hessian_prep(s, beta, F_w, f_w, G_w, n, d)
        _hessian(s, vol[s], mu[s], lam[s], beta, S_w, f_w, G_w, H_out, n, d)
    return 0


@njit(**_OPTS)
def stvk_stencil(s, q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out, want_hess):
    """Stencil ``s``: energy, gradient and (when ``want_hess``) Hessian overwrite its output
    slots; returns 1 for a degenerate stencil (non-finite energy), else 0.  Loop bounds that
    are literals made a tetrahedron 1.5 times faster than bounds read from ``beta.shape``
    (the toy ball's 330: 142 against 211 us with the Hessian)."""
    if beta.shape[2] == 3:
        return _body(s, q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out, want_hess,
                     4, 3)
    return _body(s, q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out, want_hess, 3, 2)


@njit(cache=True, parallel=True, error_model="numpy")
def stvk_terms(q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out, want_hess):
    """StVK energy of every stencil (parallel over stencils; each writes only its own rows).

    q_in [N]; dofs int [S, 3 n]; beta [S, n, d] [1/m]; vol [S] rest measure [m^3];
    mu, lam [S] [Pa]; work the scratch rows (:func:`scratch`); e_out [S] [J], g_out [S, 3 n]
    [N], H_out [S, 3 n, 3 n] [N/m] (empty [0, 3 n, 3 n] when not ``want_hess``).  Returns the
    number of degenerate stencils."""
    bad = 0
    for s in prange(dofs.shape[0]):
        bad += stvk_stencil(s, q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out,
                            want_hess)
    return bad


@njit(cache=True, error_model="numpy")
def stvk_terms_serial(q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out, want_hess):
    """Serial twin of :func:`stvk_terms` (the same values; for small models)."""
    bad = 0
    for s in range(dofs.shape[0]):
        bad += stvk_stencil(s, q_in, dofs, beta, vol, mu, lam, work, e_out, g_out, H_out,
                            want_hess)
    return bad


class StVKTerm(ElementTerm):
    """St. Venant-Kirchhoff simplices (the common part of :class:`~.shell.ShellMembraneTerm`
    and :class:`~.solid.SolidTerm`).

    Attributes: ``dofs`` int [S, 3 n]; ``shape_gradients`` beta [S, n, d] [1/m];
    ``rest_measure`` V [S] [m^3] (``A t`` or the volume); ``mu``, ``lam`` [S] [Pa].
    """

    def _setup(self, dofs, beta, measure, mu, lam):
        self.dofs = dofs
        self.shape_gradients = np.ascontiguousarray(beta, dtype=np.float64)
        self.rest_measure = np.ascontiguousarray(measure, dtype=np.float64)
        self.mu = np.ascontiguousarray(mu, dtype=np.float64)
        self.lam = np.ascontiguousarray(lam, dtype=np.float64)
        self.work = scratch(len(dofs), *self.shape_gradients.shape[1:])

    def evaluate(self, q, energy_out, grad_out, hess_out):
        h, want = self._outputs(energy_out, grad_out, hess_out)
        n = len(self.dofs)
        cost = STVK_WORK[self.shape_gradients.shape[2]][0 if want else 1]
        kern = stvk_terms if use_parallel(2, n * cost, min_work=ELEMENT_PARALLEL_MIN_WORK) \
            else stvk_terms_serial
        bad = kern(q, self.dofs, self.shape_gradients, self.rest_measure, self.mu, self.lam,
                   self.work, energy_out, grad_out, h, want)
        self._set_report(bad, energy_out)
