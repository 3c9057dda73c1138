"""Per-stencil statics of discrete elastic rods at a fixed configuration: the geometry that the
generalized force depends on, the force itself and its derivatives with respect to the rest
shape.

Plain Python functions over array slots and scalars (no decorator, no allocation, no exception:
they return a status), compiled where the statics kernels are defined
(:mod:`strandlab.der.statics`).  Formulas and notation of :mod:`strandlab.rods.energies`.

At a fixed configuration ``q`` (with its reference frames and reference twist) every elastic
force is an explicit function of the rest shape:

- stretch stencil (edge ``e``, slots ``(x_a, x_b)``), ``l = |e|``, ``t = e / l``:
  ``grad E_s = k_s (l / lbar - 1) (-t, t)``, so
  ``d f / d lbar = -d grad E_s / d lbar = k_s l / lbar^2 (-t, t)``;
- bend-twist stencil (11 slots), curvature ``kappa`` [4] with gradient ``dkappa`` [11, 4] and
  twist ``tau`` with gradient ``dtau`` [11]:
  ``grad E = sum_c K_c (kappa_c - kbar_c) dkappa_c + k_t / ltilde (tau - taubar) dtau``,
  ``K = (k1, k2, k1, k2) / (2 ltilde)``, so
  ``d f / d kbar_c = K_c dkappa_c``, ``d f / d taubar = k_t / ltilde dtau`` and
  ``d f / d ltilde = grad E / ltilde`` (every term scales as ``1 / ltilde``).

``f = -grad E`` is the generalized elastic force [N | N m].  The gradients of ``kappa`` and
``tau`` are the exact ones under time-parallel transport of the frames from ``q`` (as in
:mod:`strandlab.rods.energies`): ``d kappa_c = (dkb/dx)^T m`` on the positions (the transported
frame's first-order change lies along the tangent, orthogonal to ``kb``),
``d kappa / d theta = (kappa_1, -kappa_0)`` / ``(kappa_3, -kappa_2)`` on the two angles, and
``d tau = (kb / (2 |e_j|) on each edge, -1 on theta_j0, +1 on theta_j1)``.
"""
from __future__ import annotations

import math

from ..rods import energies as _en

__all__ = [
    "stretch_geometry",
    "bend_twist_geometry",
    "add_stretch_force",
    "add_bend_twist_force",
    "stretch_rest_jacobian",
    "bend_twist_rest_jacobian",
]

STATUS_OK = _en.STATUS_OK
STATUS_DEGENERATE = _en.STATUS_DEGENERATE


def stretch_geometry(s, q, dofs, length_out, tangent_out):
    """Length ``length_out[s]`` [m] and unit tangent ``tangent_out[s, 0:3]`` of edge stencil
    ``s`` (``dofs[s] = (x_a, x_b)``).  Returns STATUS_DEGENERATE for a zero-length edge."""
    ex = q[dofs[s, 3]] - q[dofs[s, 0]]
    ey = q[dofs[s, 4]] - q[dofs[s, 1]]
    ez = q[dofs[s, 5]] - q[dofs[s, 2]]
    ln = math.sqrt(ex * ex + ey * ey + ez * ez)
    length_out[s] = ln
    if not ln > 0.0:
        tangent_out[s, 0] = 0.0
        tangent_out[s, 1] = 0.0
        tangent_out[s, 2] = 0.0
        return STATUS_DEGENERATE
    tangent_out[s, 0] = ex / ln
    tangent_out[s, 1] = ey / ln
    tangent_out[s, 2] = ez / ln
    return STATUS_OK


def _set_slots(out, s, c, ga, gb, th0, th1):
    """Column ``c`` of ``out[s, 11, :]``: ``x0 = -ga``, ``x1 = ga - gb``, ``x2 = gb``, angle slots
    3 and 7 ``th0``, ``th1``."""
    out[s, 0, c] = -ga[0]
    out[s, 1, c] = -ga[1]
    out[s, 2, c] = -ga[2]
    out[s, 3, c] = th0
    out[s, 4, c] = ga[0] - gb[0]
    out[s, 5, c] = ga[1] - gb[1]
    out[s, 6, c] = ga[2] - gb[2]
    out[s, 7, c] = th1
    out[s, 8, c] = gb[0]
    out[s, 9, c] = gb[1]
    out[s, 10, c] = gb[2]


def bend_twist_geometry(s, q, dofs, edges, a1, a2, m_ref, kappa_out, dkappa_out, tau_out,
                        dtau_out):
    """Curvature, twist and their gradients of bend-twist stencil ``s`` at ``q``.

    ``edges[s] = (j0, j1)`` index the reference frames ``a1``, ``a2`` [E, 3] at ``q``;
    ``m_ref`` [S] the reference twist at ``q`` [rad].  Writes ``kappa_out[s, 0:4]`` [1],
    ``dkappa_out[s, 0:11, 0:4]`` (d kappa_c / d slot) [1/m | 1/rad], ``tau_out[s]`` [rad] and
    ``dtau_out[s, 0:11]`` [1/m | 1].  Returns STATUS_DEGENERATE (outputs zero) when an edge has
    zero length or the edges are antiparallel.
    """
    x0 = (q[dofs[s, 0]], q[dofs[s, 1]], q[dofs[s, 2]])
    x1 = (q[dofs[s, 4]], q[dofs[s, 5]], q[dofs[s, 6]])
    x2 = (q[dofs[s, 8]], q[dofs[s, 9]], q[dofs[s, 10]])
    th0 = q[dofs[s, 3]]
    th1 = q[dofs[s, 7]]
    e0 = (x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2])
    e1 = (x2[0] - x1[0], x2[1] - x1[1], x2[2] - x1[2])
    l0 = math.sqrt(_en.dot(e0, e0))
    l1 = math.sqrt(_en.dot(e1, e1))
    d = l0 * l1 + _en.dot(e0, e1)
    if not (l0 > 0.0 and l1 > 0.0 and d > 0.0):
        for k in range(4):
            kappa_out[s, k] = 0.0
            for a in range(11):
                dkappa_out[s, a, k] = 0.0
        tau_out[s] = 0.0
        for a in range(11):
            dtau_out[s, a] = 0.0
        return STATUS_DEGENERATE
    inv_d = 1.0 / d
    n = _en.cross(e0, e1)
    kb = (2.0 * n[0] * inv_d, 2.0 * n[1] * inv_d, 2.0 * n[2] * inv_d)
    t0 = (e0[0] / l0, e0[1] / l0, e0[2] / l0)
    t1 = (e1[0] / l1, e1[1] / l1, e1[2] / l1)
    gd0 = (l1 * t0[0] + e1[0], l1 * t0[1] + e1[1], l1 * t0[2] + e1[2])  # dD/de0
    gd1 = (l0 * t1[0] + e0[0], l0 * t1[1] + e0[1], l0 * t1[2] + e0[2])  # dD/de1
    j0 = edges[s, 0]
    j1 = edges[s, 1]
    m1_0, m2_0 = _en.material_frame((a1[j0, 0], a1[j0, 1], a1[j0, 2]),
                                    (a2[j0, 0], a2[j0, 1], a2[j0, 2]), th0)
    m1_1, m2_1 = _en.material_frame((a1[j1, 0], a1[j1, 1], a1[j1, 2]),
                                    (a2[j1, 0], a2[j1, 1], a2[j1, 2]), th1)
    c = _en.material_curvatures(kb, m1_0, m2_0, m1_1, m2_1)
    kappa_out[s, 0] = c[0]
    kappa_out[s, 1] = c[1]
    kappa_out[s, 2] = c[2]
    kappa_out[s, 3] = c[3]
    # c0 = kb.m2_0, c1 = -kb.m1_0, c2 = kb.m2_1, c3 = -kb.m1_1
    ga, gb = _en._grad_kb_dot(m2_0, e0, e1, c[0], gd0, gd1, inv_d)
    _set_slots(dkappa_out, s, 0, ga, gb, c[1], 0.0)
    ga, gb = _en._grad_kb_dot(m1_0, e0, e1, -c[1], gd0, gd1, inv_d)
    _set_slots(dkappa_out, s, 1, _en._neg(ga), _en._neg(gb), -c[0], 0.0)
    ga, gb = _en._grad_kb_dot(m2_1, e0, e1, c[2], gd0, gd1, inv_d)
    _set_slots(dkappa_out, s, 2, ga, gb, 0.0, c[3])
    ga, gb = _en._grad_kb_dot(m1_1, e0, e1, -c[3], gd0, gd1, inv_d)
    _set_slots(dkappa_out, s, 3, _en._neg(ga), _en._neg(gb), 0.0, -c[2])
    # twist: tau = th1 - th0 + m_ref, d m_ref / d e_j = kb / (2 l_j)
    tau_out[s] = th1 - th0 + m_ref[s]
    f0 = (0.5 * kb[0] / l0, 0.5 * kb[1] / l0, 0.5 * kb[2] / l0)
    f1 = (0.5 * kb[0] / l1, 0.5 * kb[1] / l1, 0.5 * kb[2] / l1)
    dtau_out[s, 0] = -f0[0]
    dtau_out[s, 1] = -f0[1]
    dtau_out[s, 2] = -f0[2]
    dtau_out[s, 3] = -1.0
    dtau_out[s, 4] = f0[0] - f1[0]
    dtau_out[s, 5] = f0[1] - f1[1]
    dtau_out[s, 6] = f0[2] - f1[2]
    dtau_out[s, 7] = 1.0
    dtau_out[s, 8] = f1[0]
    dtau_out[s, 9] = f1[1]
    dtau_out[s, 10] = f1[2]
    return STATUS_OK


def add_stretch_force(s, dofs, length, tangent, lbar, ks, scale, f_out):
    """Add ``scale`` times edge stencil ``s``'s stretching force ``-grad E_s`` to ``f_out`` [N]
    (``length`` [E] [m], ``tangent`` [E, 3] from :func:`stretch_geometry`; ``lbar`` [m],
    ``ks`` [N] scalars)."""
    w = scale * ks * (length[s] / lbar - 1.0)
    for i in range(3):
        f_out[dofs[s, i]] += w * tangent[s, i]
        f_out[dofs[s, 3 + i]] -= w * tangent[s, i]


def _bend_twist_weights(s, kappa, tau, kbar, taubar, ltilde, kbend, ktwist):
    """Residual weights ``K_c (kappa_c - kbar_c)`` (4) and ``k_t / ltilde (tau - taubar)``."""
    ka = 0.5 * kbend[s, 0] / ltilde
    kc = 0.5 * kbend[s, 1] / ltilde
    return ((ka * (kappa[s, 0] - kbar[s, 0]), kc * (kappa[s, 1] - kbar[s, 1]),
             ka * (kappa[s, 2] - kbar[s, 2]), kc * (kappa[s, 3] - kbar[s, 3])),
            ktwist[s] / ltilde * (tau[s] - taubar[s]))


def add_bend_twist_force(s, dofs, kappa, dkappa, tau, dtau, kbar, taubar, ltilde, kbend,
                         ktwist, scale, f_out):
    """Add ``scale`` times bend-twist stencil ``s``'s force ``-grad (E_b + E_t)`` to ``f_out``
    [N | N m] (geometry from :func:`bend_twist_geometry`; ``kbar`` [S, 4], ``taubar`` [S],
    ``kbend`` [S, 2], ``ktwist`` [S]; ``ltilde`` [m] a scalar)."""
    w, wt = _bend_twist_weights(s, kappa, tau, kbar, taubar, ltilde, kbend, ktwist)
    for a in range(11):
        g = (w[0] * dkappa[s, a, 0] + w[1] * dkappa[s, a, 1] + w[2] * dkappa[s, a, 2]
             + w[3] * dkappa[s, a, 3] + wt * dtau[s, a])
        f_out[dofs[s, a]] -= scale * g


def stretch_rest_jacobian(s, length, tangent, lbar, ks, scale, js_out):
    """``js_out[s, 0:6]`` = d f / d lbar of edge stencil ``s`` [N/m] (times ``scale``):
    ``k_s l / lbar^2 (-t, t)``."""
    w = scale * ks * length[s] / (lbar * lbar)
    for i in range(3):
        js_out[s, i] = -w * tangent[s, i]
        js_out[s, 3 + i] = w * tangent[s, i]


def bend_twist_rest_jacobian(s, kappa, dkappa, tau, dtau, kbar, taubar, ltilde, kbend, ktwist,
                             scale, jk_out, jt_out, jl_out):
    """Derivatives of bend-twist stencil ``s``'s force (times ``scale``) with respect to its
    rest values: ``jk_out[s, 0:11, 0:4]`` = d f / d kbar_c [N | N m],
    ``jt_out[s, 0:11]`` = d f / d taubar [N/rad | N m/rad] and
    ``jl_out[s, 0:11]`` = d f / d ltilde [N/m | N]."""
    ka = scale * 0.5 * kbend[s, 0] / ltilde
    kc = scale * 0.5 * kbend[s, 1] / ltilde
    kt = scale * ktwist[s] / ltilde
    w, wt = _bend_twist_weights(s, kappa, tau, kbar, taubar, ltilde, kbend, ktwist)
    inv = scale / ltilde
    for a in range(11):
        jk_out[s, a, 0] = ka * dkappa[s, a, 0]
        jk_out[s, a, 1] = kc * dkappa[s, a, 1]
        jk_out[s, a, 2] = ka * dkappa[s, a, 2]
        jk_out[s, a, 3] = kc * dkappa[s, a, 3]
        jt_out[s, a] = kt * dtau[s, a]
        g = (w[0] * dkappa[s, a, 0] + w[1] * dkappa[s, a, 1] + w[2] * dkappa[s, a, 2]
             + w[3] * dkappa[s, a, 3] + wt * dtau[s, a])
        jl_out[s, a] = inv * g
