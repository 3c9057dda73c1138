"""Contacts of DER vertices with the scene's static colliders, after each implicit step.

A vertex that ends a step inside a plane, sphere or capsule (a ball of ``push_scale`` times its
section radius) is pushed out along the surface normal, and its velocity, taken from the step's
displacement, loses its inward normal part and, by Coulomb friction, up to ``mu * depth / dt``
of its tangential part (the shared contact model of :mod:`strandlab.collision.analytic`).

With the penalty of :mod:`strandlab.collision.penalty` in the solve (``k_pen > 0``), the push
is the correction of deep penetration only (``push_scale < 1``), and a vertex held by the
penalty (inside its full ball, not pushed) gets the friction of its penalty force
``f = k (r - g)``: the normal velocity change ``f dt / m`` stands for ``depth / dt``.
Strands are independent here: ``prange`` over them.
"""
from __future__ import annotations

import math

from numba import njit, prange

from ..collision.analytic import collide_point, collider_gap, contact_friction, n_colliders

__all__ = ["collide_vertices", "collide_vertices_serial"]


@njit(cache=True)
def _penalty_depth(p, d, x, rad, k, mass, dt, planes, spheres, capsules, collider_friction,
                   q_start, depth, normal, mu):
    """Friction depth ``k (r - g) dt^2 / m`` of vertex ``p`` (first coordinate ``d`` in ``q``)
    held by the penalty of its deepest contact (normal and coefficient recorded); 0 when none.
    Only a contact in which the step started counts: one Newton iteration evaluates the
    penalty at the step's start, so only those pushed during the step."""
    best = 0.0
    for c in range(n_colliders(planes, spheres, capsules)):
        g0, _a, _b, _c, _cv, _ux, _uy, _uz = collider_gap(c, q_start[d], q_start[d + 1],
                                                          q_start[d + 2], planes, spheres,
                                                          capsules)
        if g0 >= rad:
            continue
        g, nx, ny, nz, _cv, _ux, _uy, _uz = collider_gap(c, x[p, 0], x[p, 1], x[p, 2], planes,
                                                         spheres, capsules)
        pen = rad - g
        if pen > best and (nx != 0.0 or ny != 0.0 or nz != 0.0):
            best = pen
            normal[p, 0] = nx
            normal[p, 1] = ny
            normal[p, 2] = nz
            mu[p] = collider_friction[c]
    depth[p] = k * best * dt * dt / mass if best > 0.0 else 0.0
    return depth[p]


@njit(cache=True)
def _collide_strand(s, strand_vertex_start, vertex_dof, fixed, radius, vertex_friction, planes,
                    spheres, capsules, collider_friction, dt, push_scale, k_pen, mass, q_start,
                    q_out, v_out, x, depth, normal, mu):
    """Contacts of strand ``s``'s vertices (see :func:`collide_vertices`); returns their
    number."""
    c = 0
    for p in range(strand_vertex_start[s], strand_vertex_start[s + 1]):
        d = vertex_dof[p]
        depth[p] = 0.0
        if fixed[d]:
            continue
        for r in range(3):
            x[p, r] = q_out[d + r]
        collide_point(p, x, push_scale * radius[p], planes, spheres, capsules,
                      collider_friction, depth, normal, mu)
        if depth[p] <= 0.0 and k_pen[p] > 0.0:
            if _penalty_depth(p, d, x, radius[p], k_pen[p], mass[d], dt, planes, spheres,
                              capsules, collider_friction, q_start, depth, normal, mu) > 0.0:
                c += 1
                m = vertex_friction[p]
                if m == m:
                    mu[p] = math.sqrt(m * mu[p])
                for r in range(3):
                    x[p, r] = v_out[d + r]
                contact_friction(p, x, depth, normal, mu, dt)
                for r in range(3):
                    v_out[d + r] = x[p, r]
            continue
        if depth[p] > 0.0:
            c += 1
            m = vertex_friction[p]
            if m == m:  # the strand's own coefficient combines with the collider's
                mu[p] = math.sqrt(m * mu[p])
            for r in range(3):
                q_out[d + r] = x[p, r]
                x[p, r] = (q_out[d + r] - q_start[d + r]) / dt
            # velocity: remove the inward normal part, then friction on the tangential one
            vn = x[p, 0] * normal[p, 0] + x[p, 1] * normal[p, 1] + x[p, 2] * normal[p, 2]
            if vn < 0.0:
                for r in range(3):
                    x[p, r] -= vn * normal[p, r]
            contact_friction(p, x, depth, normal, mu, dt)
            for r in range(3):
                v_out[d + r] = x[p, r]
    return c


@njit(cache=True, parallel=True)
def collide_vertices(
    # Model:
    strand_vertex_start, vertex_dof, fixed, radius, vertex_friction, planes, spheres, capsules,
    collider_friction, dt, push_scale, k_pen, mass,
    # State in:
    q_start,
    # State out:
    q_out, v_out,
    # Scratch:
    x, depth, normal, mu,
):
    """Push vertices of ``q_out`` out of the colliders; velocities ``v_out`` follow the push.

    Returns the number of vertices in contact.
    """
    n_strands = strand_vertex_start.shape[0] - 1
    count = 0
    for s in prange(n_strands):
        count += _collide_strand(s, strand_vertex_start, vertex_dof, fixed, radius,
                                 vertex_friction, planes, spheres, capsules, collider_friction,
                                 dt, push_scale, k_pen, mass, q_start, q_out, v_out, x, depth,
                                 normal, mu)
    return count


@njit(cache=True)
def collide_vertices_serial(strand_vertex_start, vertex_dof, fixed, radius, vertex_friction,
                            planes, spheres, capsules, collider_friction, dt, push_scale, k_pen,
                            mass, q_start, q_out, v_out, x, depth, normal, mu):
    """Serial twin of :func:`collide_vertices` (the same values, for small models)."""
    count = 0
    for s in range(strand_vertex_start.shape[0] - 1):
        count += _collide_strand(s, strand_vertex_start, vertex_dof, fixed, radius,
                                 vertex_friction, planes, spheres, capsules, collider_friction,
                                 dt, push_scale, k_pen, mass, q_start, q_out, v_out, x, depth,
                                 normal, mu)
    return count
