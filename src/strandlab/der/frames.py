"""Frame kernels of the DER model: tangents, time-parallel transport of the reference
directors, reference twist and material directors (Bergou et al. 2010, section 4).

Transport of a unit vector ``a`` perpendicular to unit tangent ``t0`` onto tangent ``t`` by the
minimal rotation: ``P(a) = a - (a . t) / (1 + t0 . t) (t0 + t)``.  An edge that flips by 180
degrees in one step has no minimal rotation; the transport then falls back to projecting ``a``
off the new tangent.
"""
from __future__ import annotations

import math

from numba import njit, prange

__all__ = ["tangents", "transport_frames", "transport_frames_serial", "reference_twists",
           "reference_twists_serial", "cross_rows", "material_directors"]


@njit(cache=True)
def tangents(q, dof0, dof1, t_out):
    """Unit tangents [E, 3] of the edges whose end vertices' coordinates start at ``dof0``,
    ``dof1`` [E] in ``q``."""
    for e in range(dof0.shape[0]):
        a, b = dof0[e], dof1[e]
        x = q[b] - q[a]
        y = q[b + 1] - q[a + 1]
        z = q[b + 2] - q[a + 2]
        n = math.sqrt(x * x + y * y + z * z)
        t_out[e, 0] = x / n
        t_out[e, 1] = y / n
        t_out[e, 2] = z / n


@njit(cache=True)
def _transport_edge(e, q, dof0, dof1, t_prev, a1_prev, t_out, a1_out, a2_out):
    """Frame of edge ``e`` (see :func:`transport_frames`)."""
    a, b = dof0[e], dof1[e]
    x = q[b] - q[a]
    y = q[b + 1] - q[a + 1]
    z = q[b + 2] - q[a + 2]
    n = math.sqrt(x * x + y * y + z * z)
    tx, ty, tz = x / n, y / n, z / n
    px, py, pz = t_prev[e, 0], t_prev[e, 1], t_prev[e, 2]
    ux, uy, uz = a1_prev[e, 0], a1_prev[e, 1], a1_prev[e, 2]
    c = 1.0 + px * tx + py * ty + pz * tz
    if c > 1e-12:
        f = (ux * tx + uy * ty + uz * tz) / c
        ux -= f * (px + tx)
        uy -= f * (py + ty)
        uz -= f * (pz + tz)
    # re-orthonormalise against the new tangent
    d = ux * tx + uy * ty + uz * tz
    ux -= d * tx
    uy -= d * ty
    uz -= d * tz
    nu = math.sqrt(ux * ux + uy * uy + uz * uz)
    ux /= nu
    uy /= nu
    uz /= nu
    t_out[e, 0], t_out[e, 1], t_out[e, 2] = tx, ty, tz
    a1_out[e, 0], a1_out[e, 1], a1_out[e, 2] = ux, uy, uz
    a2_out[e, 0] = ty * uz - tz * uy
    a2_out[e, 1] = tz * ux - tx * uz
    a2_out[e, 2] = tx * uy - ty * ux


@njit(cache=True, parallel=True)
def transport_frames(
    # Model:
    q, dof0, dof1,
    # State in:
    t_prev, a1_prev,
    # State out:
    t_out, a1_out, a2_out,
):
    """Tangents of ``q`` and the reference directors transported onto them from ``t_prev``,
    ``a1_prev`` [E, 3]; ``a2 = t x a1``.  Parallel over edges; :func:`transport_frames_serial`
    is its serial twin (the same values) for small models."""
    for e in prange(dof0.shape[0]):
        _transport_edge(e, q, dof0, dof1, t_prev, a1_prev, t_out, a1_out, a2_out)


@njit(cache=True)
def transport_frames_serial(q, dof0, dof1, t_prev, a1_prev, t_out, a1_out, a2_out):
    """Serial twin of :func:`transport_frames`."""
    for e in range(dof0.shape[0]):
        _transport_edge(e, q, dof0, dof1, t_prev, a1_prev, t_out, a1_out, a2_out)


@njit(cache=True)
def _twist_stencil(s, a1, t, bend_edges, twist_prev, twist_out):
    """Reference twist of stencil ``s`` (see :func:`reference_twists`)."""
    two_pi = 2.0 * math.pi
    i, j = bend_edges[s, 0], bend_edges[s, 1]
    t0x, t0y, t0z = t[i, 0], t[i, 1], t[i, 2]
    t1x, t1y, t1z = t[j, 0], t[j, 1], t[j, 2]
    ux, uy, uz = a1[i, 0], a1[i, 1], a1[i, 2]
    c = 1.0 + t0x * t1x + t0y * t1y + t0z * t1z
    f = (ux * t1x + uy * t1y + uz * t1z) / c
    ux -= f * (t0x + t1x)
    uy -= f * (t0y + t1y)
    uz -= f * (t0z + t1z)
    vx, vy, vz = a1[j, 0], a1[j, 1], a1[j, 2]
    cx = uy * vz - uz * vy
    cy = uz * vx - ux * vz
    cz = ux * vy - uy * vx
    ang = math.atan2(cx * t1x + cy * t1y + cz * t1z, ux * vx + uy * vy + uz * vz)
    prev = twist_prev[s]
    ang += two_pi * math.floor((prev - ang) / two_pi + 0.5)
    twist_out[s] = ang


@njit(cache=True, parallel=True)
def reference_twists(
    # State in:
    a1, t, bend_edges, twist_prev,
    # State out:
    twist_out,
):
    """Reference twist of each stencil [B] [rad]: the signed angle about ``t_j1`` from the
    parallel transport of ``a1_j0`` onto edge ``j1`` to ``a1_j1``, on the 2 pi branch nearest
    ``twist_prev``.  Parallel over stencils; :func:`reference_twists_serial` is its serial
    twin."""
    for s in prange(bend_edges.shape[0]):
        _twist_stencil(s, a1, t, bend_edges, twist_prev, twist_out)


@njit(cache=True)
def reference_twists_serial(a1, t, bend_edges, twist_prev, twist_out):
    """Serial twin of :func:`reference_twists`."""
    for s in range(bend_edges.shape[0]):
        _twist_stencil(s, a1, t, bend_edges, twist_prev, twist_out)


@njit(cache=True)
def cross_rows(a, b, out):
    """``out[e] = a[e] x b[e]`` for arrays [E, 3]."""
    for e in range(a.shape[0]):
        out[e, 0] = a[e, 1] * b[e, 2] - a[e, 2] * b[e, 1]
        out[e, 1] = a[e, 2] * b[e, 0] - a[e, 0] * b[e, 2]
        out[e, 2] = a[e, 0] * b[e, 1] - a[e, 1] * b[e, 0]


@njit(cache=True)
def material_directors(q, edge_dof, a1, t, m1_out):
    """m1 = cos(theta) a1 + sin(theta) (t x a1) of every edge [E, 3]."""
    for e in range(edge_dof.shape[0]):
        th = q[edge_dof[e]]
        c, s = math.cos(th), math.sin(th)
        ux, uy, uz = a1[e, 0], a1[e, 1], a1[e, 2]
        tx, ty, tz = t[e, 0], t[e, 1], t[e, 2]
        m1_out[e, 0] = c * ux + s * (ty * uz - tz * uy)
        m1_out[e, 1] = c * uy + s * (tz * ux - tx * uz)
        m1_out[e, 2] = c * uz + s * (tx * uy - ty * ux)
