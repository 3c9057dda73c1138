"""Contacts of DER vertices with the scene's static colliders, after each implicit step.

A vertex that ends a step inside a plane, sphere or capsule (a ball of ``push_scale`` times its
section radius) is pushed out along the surface normal, and its velocity, taken from the step's
displacement, loses its inward normal part and, by Coulomb friction, up to ``mu * depth / dt``
of its tangential part (the shared contact model of :mod:`strandlab.collision.analytic`).

With the penalty of :mod:`strandlab.collision.penalty` in the solve (``k_pen > 0``), the push
is the correction of deep penetration only (``push_scale < 1``), and a vertex held by the
penalty (inside its full ball, not pushed) gets the friction of its penalty force
``f = k (r - g)``: the normal velocity change ``f dt / m`` stands for ``depth / dt``.

The strand follows its pushed vertices: a push moves single vertices, which shortens or
stretches their edges by up to the push (a hair tip landing on a head: 1.3 % strain on its
last edge).  The edge lengths the step gave are therefore restored after the pushes of a strand
by a mass-weighted projection of all of them together (the fast projection of Goldenthal et
al. 2007, which Bergou et al. 2008 use for inextensible rods; the tridiagonal solve of the
position-based solver's lengths), the held and pushed vertices staying where they are, the
velocities gaining the moves divided by ``dt``.  This is done where the penalty is in the solve
(``k_pen > 0``: ``follow_iterations > 0``), where pushes are rare and small; with the push alone
the push is the contact itself, every step, and following it made resting coils bounce.
Strands are independent here: ``prange`` over them.
"""
from __future__ import annotations

import math

from numba import njit, prange

from ..collision.analytic import collide_point, collider_gap, contact_friction, n_colliders

__all__ = ["collide_vertices", "collide_vertices_serial", "FOLLOW_TOLERANCE"]

#: Relative edge-length error at which a strand has followed its pushes.
FOLLOW_TOLERANCE = 1e-9


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
def _edge_length(q, a, b):
    dx = q[b] - q[a]
    dy = q[b + 1] - q[a + 1]
    dz = q[b + 2] - q[a + 2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True)
def _inverse_mass(p, vertex_dof, fixed, mass, pushed):
    """Inverse mass of vertex ``p`` in the projection: 0 for a held or pushed vertex."""
    d = vertex_dof[p]
    return 0.0 if (fixed[d] or pushed[p]) else 1.0 / mass[d]


@njit(cache=True)
def _move_ends(e, dl, edge_v0, edge_v1, vertex_dof, fixed, mass, pushed, tangent, q_out, v_out,
               dt):
    """Move the end points of edge ``e`` by the multiplier increment ``dl`` along it (their
    inverse masses), velocities following."""
    pa, pb = edge_v0[e], edge_v1[e]
    a, b = vertex_dof[pa], vertex_dof[pb]
    wa = _inverse_mass(pa, vertex_dof, fixed, mass, pushed)
    wb = _inverse_mass(pb, vertex_dof, fixed, mass, pushed)
    for r in range(3):
        q_out[a + r] -= wa * dl * tangent[e, r]
        v_out[a + r] -= wa * dl * tangent[e, r] / dt
        q_out[b + r] += wb * dl * tangent[e, r]
        v_out[b + r] += wb * dl * tangent[e, r] / dt


@njit(cache=True)
def _follow_pushes(s, strand_edge_start, edge_v0, edge_v1, vertex_dof, fixed, mass, dt,
                   iterations, q_out, v_out, length, pushed, tangent, tri_b, tri_c, tri_d):
    """Restore the lengths ``length`` of strand ``s``'s edges after its pushes (module
    docstring): Newton iterations on all its edge lengths together, each solving
    ``(J W J^T) dlambda = -C`` (tridiagonal along the chain; a closed strand's closing edge is
    coupled to the first only through the iterations) by the Thomas algorithm, no vertex moving
    by more than the largest length change of the pushes in one iteration (per run of edges
    between held or pushed vertices); until every length is within ``FOLLOW_TOLERANCE`` or after
    ``iterations``."""
    e0, e1 = strand_edge_start[s], strand_edge_start[s + 1]
    reach = 0.0
    for it in range(iterations):
        worst = 0.0
        for e in range(e0, e1):
            pa, pb = edge_v0[e], edge_v1[e]
            a, b = vertex_dof[pa], vertex_dof[pb]
            ln = _edge_length(q_out, a, b)
            for r in range(3):
                tangent[e, r] = (q_out[b + r] - q_out[a + r]) / ln
            c = ln - length[e]
            worst = max(worst, abs(c) / length[e])
            if it == 0:
                reach = max(reach, abs(c))
            tri_b[e] = (_inverse_mass(pa, vertex_dof, fixed, mass, pushed)
                        + _inverse_mass(pb, vertex_dof, fixed, mass, pushed))
            tri_d[e] = -c
            if tri_b[e] <= 0.0:     # both ends held or pushed: the edge cannot change
                tri_b[e] = 1.0
                tri_d[e] = 0.0
        if worst < FOLLOW_TOLERANCE:
            break
        for e in range(e0, e1 - 1):
            wb = _inverse_mass(edge_v1[e], vertex_dof, fixed, mass, pushed)
            tri_c[e] = -wb * (tangent[e, 0] * tangent[e + 1, 0]
                              + tangent[e, 1] * tangent[e + 1, 1]
                              + tangent[e, 2] * tangent[e + 1, 2])
        for e in range(e0 + 1, e1):
            f = tri_c[e - 1] / tri_b[e - 1]
            tri_b[e] -= f * tri_c[e - 1]
            tri_d[e] -= f * tri_d[e - 1]
        tri_d[e1 - 1] /= tri_b[e1 - 1]
        for e in range(e1 - 2, e0 - 1, -1):
            tri_d[e] = (tri_d[e] - tri_c[e] * tri_d[e + 1]) / tri_b[e]
        # trust region: no vertex moves by more than the pushes changed a length, in each
        # run of edges between held or pushed vertices (the system splits there)
        k0 = e0
        while k0 < e1:
            k1 = k0
            big = 0.0
            while True:
                w = max(_inverse_mass(edge_v0[k1], vertex_dof, fixed, mass, pushed),
                        _inverse_mass(edge_v1[k1], vertex_dof, fixed, mass, pushed))
                big = max(big, abs(tri_d[k1]) * w)
                if k1 == e1 - 1 or _inverse_mass(edge_v1[k1], vertex_dof, fixed, mass,
                                                 pushed) == 0.0:
                    break
                k1 += 1
            scale = min(1.0, reach / big) if big > 0.0 else 1.0
            for e in range(k0, k1 + 1):
                _move_ends(e, scale * tri_d[e], edge_v0, edge_v1, vertex_dof, fixed, mass,
                           pushed, tangent, q_out, v_out, dt)
            k0 = k1 + 1


@njit(cache=True)
def _collide_strand(s, strand_vertex_start, strand_edge_start, edge_v0, edge_v1, vertex_dof,
                    fixed, radius, vertex_friction, planes, spheres, capsules,
                    collider_friction, dt, push_scale, k_pen, mass, follow_iterations, q_start,
                    q_out, v_out, x, depth, normal, mu, length, pushed, tangent, tri_b,
                    tri_c, tri_d):
    """Contacts of strand ``s``'s vertices (see :func:`collide_vertices`); returns their
    number."""
    for e in range(strand_edge_start[s], strand_edge_start[s + 1]):
        length[e] = _edge_length(q_out, vertex_dof[edge_v0[e]], vertex_dof[edge_v1[e]])
    c = 0
    n_pushed = 0
    for p in range(strand_vertex_start[s], strand_vertex_start[s + 1]):
        pushed[p] = False
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
            pushed[p] = True
            n_pushed += 1
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
    if n_pushed > 0:
        _follow_pushes(s, strand_edge_start, edge_v0, edge_v1, vertex_dof, fixed, mass, dt,
                       follow_iterations, q_out, v_out, length, pushed, tangent, tri_b, tri_c,
                       tri_d)
    return c


@njit(cache=True, parallel=True)
def collide_vertices(
    # Model:
    strand_vertex_start, strand_edge_start, edge_v0, edge_v1, vertex_dof, fixed, radius,
    vertex_friction, planes, spheres, capsules, collider_friction, dt, push_scale, k_pen, mass,
    follow_iterations,
    # State in:
    q_start,
    # State out:
    q_out, v_out,
    # Scratch:
    x, depth, normal, mu, length, pushed, tangent, tri_b, tri_c, tri_d,
):
    """Push vertices of ``q_out`` out of the colliders; velocities ``v_out`` follow the push,
    and the strand follows its pushed vertices (module docstring).  Scratch: ``x`` [V, 3],
    ``depth`` [V], ``normal`` [V, 3], ``mu`` [V], ``length`` [E], ``pushed`` bool [V],
    ``tangent`` [E, 3], ``tri_b``, ``tri_c``, ``tri_d`` [E].

    Returns the number of vertices in contact.
    """
    n_strands = strand_vertex_start.shape[0] - 1
    count = 0
    for s in prange(n_strands):
        count += _collide_strand(s, strand_vertex_start, strand_edge_start, edge_v0, edge_v1,
                                 vertex_dof, fixed, radius, vertex_friction, planes, spheres,
                                 capsules, collider_friction, dt, push_scale, k_pen, mass,
                                 follow_iterations, q_start, q_out, v_out, x, depth, normal, mu,
                                 length, pushed, tangent, tri_b, tri_c, tri_d)
    return count


@njit(cache=True)
def collide_vertices_serial(strand_vertex_start, strand_edge_start, edge_v0, edge_v1,
                            vertex_dof, fixed, radius, vertex_friction, planes, spheres,
                            capsules, collider_friction, dt, push_scale, k_pen, mass,
                            follow_iterations, q_start, q_out, v_out, x, depth, normal, mu, length,
                            pushed, tangent, tri_b, tri_c, tri_d):
    """Serial twin of :func:`collide_vertices` (the same values, for small models)."""
    count = 0
    for s in range(strand_vertex_start.shape[0] - 1):
        count += _collide_strand(s, strand_vertex_start, strand_edge_start, edge_v0, edge_v1,
                                 vertex_dof, fixed, radius, vertex_friction, planes, spheres,
                                 capsules, collider_friction, dt, push_scale, k_pen, mass,
                                 follow_iterations, q_start, q_out, v_out, x, depth, normal, mu,
                                 length, pushed, tangent, tri_b, tri_c, tri_d)
    return count
