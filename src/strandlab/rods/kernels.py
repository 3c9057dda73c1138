"""Numba kernels of discrete elastic rods: whole energy terms and the reference-frame updates.

Every kernel works on the concatenated arrays of all strands and reads ``q`` [m | rad] only
through per-stencil (or per-edge) index rows, so it assumes nothing about the layout of ``q``.

Energy kernels (:func:`stretch_terms`, :func:`bend_terms`, :func:`twist_terms`,
:func:`bend_twist_terms`) overwrite the per-stencil energy ``e_out`` [S] [J], gradient ``g_out``
[S, k] and, when ``want_hess``, Hessian ``H_out`` [S, k, k] (pass an empty [0, k, k] array
otherwise), and return the number of degenerate stencils (an edge of zero length, or antiparallel
edges: their energy is +inf and their gradient and Hessian zero).  The formulas are those of
:mod:`strandlab.rods.energies`.

Parallel structure: ``prange`` over stencils.  Each stencil writes only its own output slots
(the scatter into the global system is the integrator's), so stencils are independent, and they
all cost the same, so a static split of the stencil range is balanced whatever the strand
lengths; looping over strands would add nothing but imbalance between long and short strands.
The per-stencil functions are compiled once as ordinary functions and called from the loop body
(no inlined IR in the parallel body: its compile time grows fast with its size), except the two
small per-edge and per-stencil frame functions, inlined into their loops: that halves the
frame kernels' time (80 -> 45 ns per edge, 95 -> 58 ns per stencil on one core) at the same
compile time and with the same results.

Frame kernels:

- :func:`transport_frames`: time-parallel transport of the reference directors ``a1`` [E, 3]
  from the configuration ``q_prev`` to ``q`` (minimal rotation of each edge's tangent),
  re-orthonormalised, and ``a2 = t x a1``;
- :func:`reference_twists`: reference twist [rad] of every bend stencil, unwrapped to the branch
  nearest a previous value;
- :func:`material_frames`: ``m1``, ``m2`` [E, 3] (``d1 = m1`` for output);
- :func:`curvatures_twists`: 4-D curvature [S, 4] and twist [S] [rad] of a configuration (to set
  the rest shape ``kappabar``, ``taubar`` from an input shape), and :func:`edge_lengths` [m]
  (``lbar``).

The per-stencil functions compile without Numba's reference counting (they allocate nothing); the
parallel kernels keep it, as their count reductions need per-thread buffers.  All use NumPy's
error model (a division by zero gives inf or NaN instead of raising).
"""
from __future__ import annotations

import math

from numba import njit, prange
from numba.extending import register_jitable

from . import energies as _en

__all__ = [
    "stretch_terms",
    "bend_terms",
    "twist_terms",
    "bend_twist_terms",
    "stretch_terms_serial",
    "bend_twist_terms_serial",
    "transport_frames",
    "transport_frames_serial",
    "reference_twists",
    "reference_twists_serial",
    "material_frames",
    "curvatures_twists",
    "edge_lengths",
]

# The helpers of energies.py stay plain Python functions; registering them makes them callable
# from compiled code (each compiled once, where first used).
for _f in (_en.cross, _en.dot, _en.transport, _en.curvature_binormal, _en.material_frame,
           _en.material_curvatures, _en.reference_twist, _en.unwrap_angle, _en._grad_kb_dot,
           _en._neg, _en._lin, _en._comb, _en._lin5, _en._o9, _en._s9, _en._p9, _en._i9, _en._e9,
           _en._add9, _en._sub9, _en._t9, _en._add_block, _en._add_diag_block, _en._add_cross,
           _en._add3, _en._bend_twist_core):
    register_jitable(error_model="numpy", _nrt=False)(_f)

_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}
_add_stretch = njit(**_OPTS)(_en.add_stretch)
_add_bend = njit(**_OPTS)(_en.add_bend)
_add_twist = njit(**_OPTS)(_en.add_twist)
_add_bend_twist = njit(**_OPTS)(_en.add_bend_twist)
_transport = njit(**_OPTS)(_en.transport)
_reference_twist = njit(**_OPTS)(_en.reference_twist)
_unwrap = njit(**_OPTS)(_en.unwrap_angle)
_curvature_binormal = njit(**_OPTS)(_en.curvature_binormal)
_material_frame = njit(**_OPTS)(_en.material_frame)
_material_curvatures = njit(**_OPTS)(_en.material_curvatures)


@njit(cache=True, error_model="numpy", _nrt=False)
def _clear(s, e_out, g_out, H_out, want_hess):
    """Zero stencil ``s``'s output slots."""
    e_out[s] = 0.0
    k = g_out.shape[1]
    for i in range(k):
        g_out[s, i] = 0.0
    if want_hess:
        for i in range(k):
            for j in range(k):
                H_out[s, i, j] = 0.0


# --------------------------------------------------------------------------------------------
# Energy terms
# --------------------------------------------------------------------------------------------
@njit(cache=True, parallel=True, error_model="numpy")
def stretch_terms(q, dofs, lbar, ks, project, e_out, g_out, H_out, want_hess):
    """Stretching of every edge stencil.

    q [N]; dofs int [S, 6]; lbar [S] rest lengths [m]; ks [S] stiffness [N]; project: clamp the
    transverse Hessian coefficient at 0.  Returns the number of degenerate stencils.
    """
    bad = 0
    for s in prange(dofs.shape[0]):
        _clear(s, e_out, g_out, H_out, want_hess)
        bad += _add_stretch(s, q, dofs, lbar[s], ks[s], project, e_out, g_out, H_out, want_hess)
    return bad


@njit(cache=True, parallel=True, error_model="numpy")
def bend_terms(q, dofs, edges, a1, a2, kappabar, ltilde, kbend, e_out, g_out, H_out,
               want_hess):
    """Bending of every bend stencil.

    dofs int [S, 11]; edges int [S, 2]; a1, a2 [E, 3] reference frames at ``q``; kappabar
    [S, 4] [1]; ltilde [S] [m]; kbend [S, 2] (k1, k2) [N m^2].  Returns the number of degenerate
    stencils.
    """
    bad = 0
    for s in prange(dofs.shape[0]):
        _clear(s, e_out, g_out, H_out, want_hess)
        bad += _add_bend(s, q, dofs, edges, a1, a2, kappabar, ltilde, kbend, e_out, g_out, H_out,
                         want_hess)
    return bad


@njit(cache=True, parallel=True, error_model="numpy")
def twist_terms(q, dofs, m_ref, taubar, ltilde, ktwist, e_out, g_out, H_out, want_hess):
    """Twisting of every bend stencil.

    m_ref [S] reference twist at ``q`` [rad]; taubar [S] [rad]; ltilde [S] [m]; ktwist [S]
    [N m^2].  Returns the number of degenerate stencils.
    """
    bad = 0
    for s in prange(dofs.shape[0]):
        _clear(s, e_out, g_out, H_out, want_hess)
        bad += _add_twist(s, q, dofs, m_ref, taubar, ltilde, ktwist, e_out, g_out, H_out,
                          want_hess)
    return bad


@njit(cache=True, parallel=True, error_model="numpy")
def bend_twist_terms(q, dofs, edges, a1, a2, m_ref, kappabar, taubar, ltilde, kbend, ktwist,
                     e_out, g_out, H_out, want_hess):
    """Bending plus twisting of every bend stencil in one pass (arguments of
    :func:`bend_terms` and :func:`twist_terms`).  Returns the number of degenerate stencils."""
    bad = 0
    for s in prange(dofs.shape[0]):
        _clear(s, e_out, g_out, H_out, want_hess)
        bad += _add_bend_twist(s, q, dofs, edges, a1, a2, m_ref, kappabar, taubar, ltilde,
                               kbend, ktwist, e_out, g_out, H_out, want_hess)
    return bad


@njit(cache=True, error_model="numpy")
def stretch_terms_serial(q, dofs, lbar, ks, project, e_out, g_out, H_out, want_hess):
    """Serial twin of :func:`stretch_terms` (the same values; for small models, where a
    parallel region costs more than it saves)."""
    bad = 0
    for s in range(dofs.shape[0]):
        _clear(s, e_out, g_out, H_out, want_hess)
        bad += _add_stretch(s, q, dofs, lbar[s], ks[s], project, e_out, g_out, H_out, want_hess)
    return bad


@njit(cache=True, error_model="numpy")
def bend_twist_terms_serial(q, dofs, edges, a1, a2, m_ref, kappabar, taubar, ltilde, kbend,
                            ktwist, e_out, g_out, H_out, want_hess):
    """Serial twin of :func:`bend_twist_terms`."""
    bad = 0
    for s in range(dofs.shape[0]):
        _clear(s, e_out, g_out, H_out, want_hess)
        bad += _add_bend_twist(s, q, dofs, edges, a1, a2, m_ref, kappabar, taubar, ltilde,
                               kbend, ktwist, e_out, g_out, H_out, want_hess)
    return bad


# --------------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False)
def _tangent(q, edge_dofs, e):
    """Unit tangent of edge ``e`` (``edge_dofs[e] = (x_a, x_b)``) and its length [m]."""
    x = q[edge_dofs[e, 3]] - q[edge_dofs[e, 0]]
    y = q[edge_dofs[e, 4]] - q[edge_dofs[e, 1]]
    z = q[edge_dofs[e, 5]] - q[edge_dofs[e, 2]]
    n = math.sqrt(x * x + y * y + z * z)
    return (x / n, y / n, z / n), n


@njit(cache=True, error_model="numpy", _nrt=False)
def _perpendicular(t):
    """A unit vector perpendicular to unit ``t``: ``t`` crossed with its smallest axis."""
    ax = abs(t[0])
    ay = abs(t[1])
    az = abs(t[2])
    if ax <= ay and ax <= az:
        u = (0.0, t[2], -t[1])
    elif ay <= az:
        u = (-t[2], 0.0, t[0])
    else:
        u = (t[1], -t[0], 0.0)
    n = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    return (u[0] / n, u[1] / n, u[2] / n)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _transport_edge(e, q_prev, q, edge_dofs, a1, a2):
    """Transport of edge ``e``'s frame (see :func:`transport_frames`); 1 if it fell back."""
    tp, lp = _tangent(q_prev, edge_dofs, e)
    t, ln = _tangent(q, edge_dofs, e)
    a = (a1[e, 0], a1[e, 1], a1[e, 2])
    fell = 0
    if 1.0 + (tp[0] * t[0] + tp[1] * t[1] + tp[2] * t[2]) > 1e-12 and lp > 0.0 and ln > 0.0:
        a = _transport(a, tp, t)
    else:
        fell = 1
    d = a[0] * t[0] + a[1] * t[1] + a[2] * t[2]
    u = (a[0] - d * t[0], a[1] - d * t[1], a[2] - d * t[2])
    n = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    if not n > 1e-8:
        u = _perpendicular(t)
        n = 1.0
    a1[e, 0] = u[0] / n
    a1[e, 1] = u[1] / n
    a1[e, 2] = u[2] / n
    a2[e, 0] = t[1] * a1[e, 2] - t[2] * a1[e, 1]
    a2[e, 1] = t[2] * a1[e, 0] - t[0] * a1[e, 2]
    a2[e, 2] = t[0] * a1[e, 1] - t[1] * a1[e, 0]
    return fell


@njit(cache=True, parallel=True, error_model="numpy")
def transport_frames(q_prev, q, edge_dofs, a1, a2):
    """Time-parallel transport of the reference directors from ``q_prev`` to ``q``.

    q_prev, q [N]; edge_dofs int [E, 6] (the edge's two vertices' xyz slots); a1 [E, 3] unit,
    perpendicular to the edges at ``q_prev``: overwritten with
    ``P_{t_prev -> t}(a1)`` (minimal rotation), projected off ``t`` and normalised; a2 [E, 3]
    overwritten with ``t x a1``.  An edge whose tangent turned by (nearly) pi, or a degenerate
    edge, falls back to ``a1`` projected off ``t`` (or any perpendicular).  Returns the number of
    edges that fell back.
    """
    fell_back = 0
    for e in prange(edge_dofs.shape[0]):
        fell_back += _transport_edge(e, q_prev, q, edge_dofs, a1, a2)
    return fell_back


@njit(cache=True, error_model="numpy")
def transport_frames_serial(q_prev, q, edge_dofs, a1, a2):
    """Serial twin of :func:`transport_frames` (the same values, for small models)."""
    fell_back = 0
    for e in range(edge_dofs.shape[0]):
        fell_back += _transport_edge(e, q_prev, q, edge_dofs, a1, a2)
    return fell_back


@njit(cache=True, error_model="numpy", _nrt=False)
def _stencil_tangents(q, dofs, s):
    """Unit tangents of bend stencil ``s``'s two edges."""
    e0 = (q[dofs[s, 4]] - q[dofs[s, 0]], q[dofs[s, 5]] - q[dofs[s, 1]],
          q[dofs[s, 6]] - q[dofs[s, 2]])
    e1 = (q[dofs[s, 8]] - q[dofs[s, 4]], q[dofs[s, 9]] - q[dofs[s, 5]],
          q[dofs[s, 10]] - q[dofs[s, 6]])
    l0 = math.sqrt(e0[0] * e0[0] + e0[1] * e0[1] + e0[2] * e0[2])
    l1 = math.sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2])
    return e0, e1, (e0[0] / l0, e0[1] / l0, e0[2] / l0), (e1[0] / l1, e1[1] / l1, e1[2] / l1)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _twist_stencil(s, q, dofs, edges, a1, m_prev, m_out):
    """Reference twist of stencil ``s`` (see :func:`reference_twists`)."""
    _, _, t0, t1 = _stencil_tangents(q, dofs, s)
    j0 = edges[s, 0]
    j1 = edges[s, 1]
    m = _reference_twist(t0, t1, (a1[j0, 0], a1[j0, 1], a1[j0, 2]),
                         (a1[j1, 0], a1[j1, 1], a1[j1, 2]))
    m_out[s] = _unwrap(m, m_prev[s])


@njit(cache=True, parallel=True, error_model="numpy")
def reference_twists(q, dofs, edges, a1, m_prev, m_out):
    """Reference twist [rad] of every bend stencil at ``q``, on the 2 pi branch nearest
    ``m_prev`` [S] (``m_out`` [S] may be ``m_prev``).

    dofs int [S, 11]; edges int [S, 2]; a1 [E, 3] reference directors at ``q``.  The angle from
    ``P_{t0 -> t1}(a1_j0)`` to ``a1_j1`` about ``t1``; NaN for antiparallel edges.
    """
    for s in prange(dofs.shape[0]):
        _twist_stencil(s, q, dofs, edges, a1, m_prev, m_out)


@njit(cache=True, error_model="numpy")
def reference_twists_serial(q, dofs, edges, a1, m_prev, m_out):
    """Serial twin of :func:`reference_twists`."""
    for s in range(dofs.shape[0]):
        _twist_stencil(s, q, dofs, edges, a1, m_prev, m_out)


@njit(cache=True, parallel=True, error_model="numpy")
def material_frames(q, theta_dof, a1, a2, m1, m2):
    """Material frames ``m1``, ``m2`` [E, 3] of every edge: ``(a1, a2)`` [E, 3] turned by
    ``theta = q[theta_dof[e]]`` [rad]."""
    for e in prange(theta_dof.shape[0]):
        u, v = _material_frame((a1[e, 0], a1[e, 1], a1[e, 2]), (a2[e, 0], a2[e, 1], a2[e, 2]),
                               q[theta_dof[e]])
        for k in range(3):
            m1[e, k] = u[k]
            m2[e, k] = v[k]


@njit(cache=True, parallel=True, error_model="numpy")
def curvatures_twists(q, dofs, edges, a1, a2, m_ref, kappa_out, tau_out):
    """4-D curvature ``kappa_out`` [S, 4] [1] and twist ``tau_out`` [S] [rad] of every bend
    stencil at ``q`` (frames ``a1``, ``a2`` [E, 3] and reference twist ``m_ref`` [S] at ``q``)."""
    for s in prange(dofs.shape[0]):
        e0, e1, _, _ = _stencil_tangents(q, dofs, s)
        kb = _curvature_binormal(e0, e1)
        j0 = edges[s, 0]
        j1 = edges[s, 1]
        m1_0, m2_0 = _material_frame((a1[j0, 0], a1[j0, 1], a1[j0, 2]),
                                     (a2[j0, 0], a2[j0, 1], a2[j0, 2]), q[dofs[s, 3]])
        m1_1, m2_1 = _material_frame((a1[j1, 0], a1[j1, 1], a1[j1, 2]),
                                     (a2[j1, 0], a2[j1, 1], a2[j1, 2]), q[dofs[s, 7]])
        c = _material_curvatures(kb, m1_0, m2_0, m1_1, m2_1)
        for k in range(4):
            kappa_out[s, k] = c[k]
        tau_out[s] = q[dofs[s, 7]] - q[dofs[s, 3]] + m_ref[s]


@njit(cache=True, error_model="numpy")
def unit_tangents(q, edge_dofs, out):
    """Unit tangent of every edge (``edge_dofs`` int [E, 6]) into ``out`` [E, 3]."""
    for e in range(edge_dofs.shape[0]):
        t, _ = _tangent(q, edge_dofs, e)
        for k in range(3):
            out[e, k] = t[k]


@njit(cache=True, parallel=True, error_model="numpy")
def edge_lengths(q, edge_dofs, out):
    """Length [m] of every edge (``edge_dofs`` int [E, 6]) into ``out`` [E]."""
    for e in prange(edge_dofs.shape[0]):
        _, n = _tangent(q, edge_dofs, e)
        out[e] = n
