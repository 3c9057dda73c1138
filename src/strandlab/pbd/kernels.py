"""Numba kernels of one position-based elastic rod step (Algorithm 1 of the appendix).

All strands are concatenated: edges of strand ``s`` are ``strand_edge_start[s]:[s+1]`` and its
orientation elements ``strand_oe_start[s]:[s+1]``.  Per-strand work runs in ``prange`` over
strands (a strand's constraints touch only its own points); couplings between strands and other
bodies (pins, frame orientation constraints, mesh and rigid-body distances) run in one serial
pass; collisions run in ``prange`` over points.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..collision.analytic import collide_point
from ..collision.self_contact import project_self_contacts
from .constraints import (
    project_bisector,
    project_distance,
    project_ghost_distance,
    project_orientation,
    project_line,
    project_pin,
)

__all__ = ["ORDER_INTERLEAVED", "ORDER_SEQUENTIAL", "ORDER_RANDOM", "GRAVITY_CORRECTED",
           "GRAVITY_FULL", "GRAVITY_NONE", "CHECK_OK", "CHECK_NONFINITE", "CHECK_STRAIN", "CHECK_SPEED",
           "predict", "iterate", "iterate_strands", "finish", "first_bad_strand", "check_state"]

ORDER_INTERLEAVED = 0
ORDER_SEQUENTIAL = 1
ORDER_RANDOM = 2
GRAVITY_CORRECTED = 0
GRAVITY_FULL = 1
GRAVITY_NONE = 2
CHECK_OK = 0
CHECK_NONFINITE = 1
CHECK_STRAIN = 2
CHECK_SPEED = 3
CONTACT_LENGTH_ROUNDS = 10  # length solves after collision pushes, per pass (direct strands)
DIRECT_MAX_NEWTON = 4  # Newton iterations of the direct length solve per pass


@njit(cache=True)
def _ordered(k, n, mode):
    """Position ``k`` of a sweep over ``n`` constraints: sequential or bidirectional interleaving."""
    if mode == ORDER_INTERLEAVED:
        h = k // 2
        return h if k % 2 == 0 else n - 1 - h
    return k


@njit(cache=True)
def _xorshift(state):
    state ^= (state << np.uint64(13)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    state ^= state >> np.uint64(7)
    state ^= (state << np.uint64(17)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    return state


@njit(cache=True)
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


@njit(cache=True, inline="always")
def _combine_friction(p, point_friction, contact_mu):
    """A strand's own friction coefficient combines with the collider's as their geometric
    mean (NaN: the strand has none, the collider's applies).  Call it once after each push
    (``contact_mu[p]`` then holds the collider's coefficient), never on an already combined
    value."""
    mu = point_friction[p]
    if mu == mu:
        contact_mu[p] = math.sqrt(mu * contact_mu[p])


@njit(cache=True, parallel=True)
def predict(
    # Model:
    inv_mass, edge_p0, edge_p1, edge_ghost, strand_edge_start,
    # State in:
    x_in, v_in, mid_v_in,
    # Settings:
    gravity, dt, gravity_mode, damping,
    # State out:
    v_out, mid_v_out, x_pred_out,
):
    """Apply gravity (with the ghost-point correction of section 6), damping, predict positions.

    ``gravity_mode``: corrected (Algorithm 1: each ghost keeps the share ``r`` of its gravity that
    the edge midpoint actually showed over the last step and hands the rest, as an impulse, to the
    edge's end points), full (gravity on every point) or none (no gravity on ghost points).
    ``mid_v_in`` [m/s, (n_edges, 3)] is the midpoint velocity of the previous step (NaN before
    the first step: the ghost then keeps its full gravity, as for a free-falling edge).  The
    ratio ``r`` is clamped to [0, 1].
    """
    n_points = x_in.shape[0]
    n_strands = strand_edge_start.shape[0] - 1
    g2 = gravity[0] ** 2 + gravity[1] ** 2 + gravity[2] ** 2
    fd = max(0.0, 1.0 - damping * dt)
    for p in prange(n_points):
        for r in range(3):
            if inv_mass[p] > 0.0:
                v_out[p, r] = (v_in[p, r] + dt * gravity[r]) * fd
            else:
                v_out[p, r] = v_in[p, r]
    for s in prange(n_strands):
        for e in range(strand_edge_start[s], strand_edge_start[s + 1]):
            a = edge_p0[e]
            b = edge_p1[e]
            gp = edge_ghost[e]
            for r in range(3):
                mid_v_out[e, r] = 0.5 * (v_in[a, r] + v_in[b, r])
            if g2 == 0.0 or inv_mass[gp] == 0.0 or gravity_mode == GRAVITY_FULL:
                continue
            if gravity_mode == GRAVITY_NONE:
                share = 1.0
            elif not math.isfinite(mid_v_in[e, 0]):
                share = 0.0  # no history yet (first step): treat the edge as free-falling
            else:
                acc_g = 0.0
                for r in range(3):
                    acc_g += (mid_v_out[e, r] - mid_v_in[e, r]) / dt * gravity[r]
                ratio = min(1.0, max(0.0, acc_g / g2))
                share = 1.0 - ratio
            if share == 0.0:
                continue
            wg = inv_mass[gp]
            for r in range(3):
                imp = share * dt * gravity[r] * fd  # impulse per unit ghost mass
                v_out[gp, r] -= imp
                if inv_mass[a] > 0.0:
                    v_out[a, r] += 0.5 * imp * inv_mass[a] / wg
                if inv_mass[b] > 0.0:
                    v_out[b, r] += 0.5 * imp * inv_mass[b] / wg
    for p in prange(n_points):
        for r in range(3):
            x_pred_out[p, r] = x_in[p, r] + dt * v_out[p, r]


@njit(cache=True)
def _solve_lengths_direct(x, w, edge_p0, edge_p1, edge_rest_length, edge_compliance, lam_len,
                          e0, e1, dt2, tri_b, tri_c, tri_d, nrm):
    """All edge-length constraints of one open strand, solved together.

    Each Newton iteration solves ``(J W J^T + alpha~) dlambda = -C - alpha~ lambda``, which is
    tridiagonal for a chain, by the Thomas algorithm in per-edge scratch ``tri_*`` [n_edges] and
    ``nrm`` [n_edges, 3].  A trust region limits every point's move to the shortest
    rest edge per iteration (the linearisation is poor for large moves); iterations stop when the
    largest relative length error is below 1e-6, or after ``DIRECT_MAX_NEWTON``.
    """
    lmin = edge_rest_length[e0]
    for e in range(e0, e1):
        lmin = min(lmin, edge_rest_length[e])
    for _ in range(DIRECT_MAX_NEWTON):
        worst = 0.0
        for e in range(e0, e1):
            a = edge_p0[e]
            b = edge_p1[e]
            dx = x[b, 0] - x[a, 0]
            dy = x[b, 1] - x[a, 1]
            dz = x[b, 2] - x[a, 2]
            ln = math.sqrt(dx * dx + dy * dy + dz * dz)
            if ln > 0.0:
                nrm[e, 0] = dx / ln
                nrm[e, 1] = dy / ln
                nrm[e, 2] = dz / ln
            else:
                nrm[e, 0] = 0.0
                nrm[e, 1] = 0.0
                nrm[e, 2] = 0.0
            c = ln - edge_rest_length[e]
            worst = max(worst, abs(c) / edge_rest_length[e])
            at = edge_compliance[e] / dt2
            tri_b[e] = w[a] + w[b] + at
            tri_d[e] = -c - at * lam_len[e]
            if tri_b[e] <= 0.0:
                tri_b[e] = 1.0
                tri_d[e] = 0.0
        if worst < 1e-6 and edge_compliance[e0] == 0.0:
            break
        for e in range(e0, e1 - 1):
            b = edge_p1[e]
            tri_c[e] = -w[b] * (nrm[e, 0] * nrm[e + 1, 0] + nrm[e, 1] * nrm[e + 1, 1]
                                + nrm[e, 2] * nrm[e + 1, 2])
        for e in range(e0 + 1, e1):
            m = tri_c[e - 1] / tri_b[e - 1]
            tri_b[e] -= m * tri_c[e - 1]
            tri_d[e] -= m * tri_d[e - 1]
        tri_d[e1 - 1] /= tri_b[e1 - 1]
        for e in range(e1 - 2, e0 - 1, -1):
            tri_d[e] = (tri_d[e] - tri_c[e] * tri_d[e + 1]) / tri_b[e]
        # trust region: the largest point move (two edges meet at a point)
        big = 0.0
        for e in range(e0, e1):
            a = edge_p0[e]
            b = edge_p1[e]
            mv = abs(tri_d[e]) * max(w[a], w[b])
            if e + 1 < e1:
                mv += abs(tri_d[e + 1]) * w[b]
            big = max(big, mv)
        scale = 1.0
        if big > lmin:
            scale = lmin / big
        for e in range(e0, e1):
            dl = scale * tri_d[e]
            lam_len[e] += dl
            a = edge_p0[e]
            b = edge_p1[e]
            for r in range(3):
                x[a, r] -= w[a] * dl * nrm[e, r]
                x[b, r] += w[b] * dl * nrm[e, r]
        if edge_compliance[e0] != 0.0:
            break


@njit(cache=True)
def _project_strand(
    s, x, w, edge_p0, edge_p1, edge_ghost, edge_rest_length, ghost_rest_distance, edge_compliance,
    strand_edge_start, strand_oe_start, strand_direct, oe_idx, oe_rest_omega, oe_rest_length,
    oe_alpha, oe_compliance, eye, order, seed, use_xpbd, dt2, lam_len, lam_oe, perm,
    fa, fb, tmp, uv, grad, vec, tri_b, tri_c, tri_d, nrm, self_thickness, self_skip,
):
    e0 = strand_edge_start[s]
    e1 = strand_edge_start[s + 1]
    o0 = strand_oe_start[s]
    o1 = strand_oe_start[s + 1]
    ne = e1 - e0
    no = o1 - o0
    direct = strand_direct[s]
    if order == ORDER_RANDOM:
        _shuffle(perm, e0, ne, seed + 2 * s)
    for k in range(ne):
        e = e0 + (perm[e0 + k] if order == ORDER_RANDOM else _ordered(k, ne, order))
        a = edge_p0[e]
        b = edge_p1[e]
        gp = edge_ghost[e]
        if not direct:
            # hard in the alpha form (compliance 0), L / (E A) in the XPBD form
            project_distance(x, w, a, b, edge_rest_length[e], edge_compliance[e], lam_len, e, dt2)
        project_bisector(x, w, a, b, gp)
        project_ghost_distance(x, w, a, b, gp, ghost_rest_distance[e])
    if no > 0:
        if order == ORDER_RANDOM:
            _shuffle(perm, e0, no, seed + 2 * s + 1)  # reuses the strand's slots (no <= ne)
        for k in range(no):
            o = o0 + (perm[e0 + k] if order == ORDER_RANDOM else _ordered(k, no, order))
            project_orientation(x, w, oe_idx, o, eye, 0, False, oe_rest_omega, o,
                                oe_rest_length[o], oe_alpha, oe_compliance, use_xpbd, lam_oe,
                                dt2, fa, fb, tmp, uv, grad, vec)
    if self_thickness[s] > 0.0:
        project_self_contacts(x, w, edge_p0, edge_p1, e0, e1, self_thickness[s], self_skip[s])
    if direct and ne > 0:
        _solve_lengths_direct(x, w, edge_p0, edge_p1, edge_rest_length, edge_compliance, lam_len,
                              e0, e1, dt2, tri_b, tri_c, tri_d, nrm)


@njit(cache=True, parallel=True)
def iterate(
    # Model:
    w, edge_p0, edge_p1, edge_ghost, edge_rest_length, ghost_rest_distance, edge_compliance,
    strand_edge_start, strand_oe_start, strand_direct,
    oe_idx, oe_rest_omega, oe_rest_length, oe_alpha, oe_compliance,
    co_idx, co_rot, co_rest_length, co_alpha, co_compliance,
    pin_point, pin_targets, pin_weights,
    slide_point, slide_origin, slide_dir,
    dist_i, dist_j, dist_rest, dist_compliance,
    collide_radius, planes, spheres, capsules, collider_friction, point_friction,
    # Settings:
    iterations, order, seed, use_xpbd, dt,
    # Scratch:
    lam_len, lam_oe, lam_co, lam_dist, perm, fa, fb, tmp, uv, grad, vec,
    tri_b, tri_c, tri_d, nrm, eye, zero3, self_thickness, self_skip,
    # State in/out:
    x,
    # Contacts out:
    contact_depth, contact_normal, contact_mu,
):
    """Run ``iterations`` constraint passes on the predicted positions ``x`` (in place)."""
    n_strands = strand_edge_start.shape[0] - 1
    n_points = x.shape[0]
    dt2 = dt * dt
    ser = n_strands  # scratch row of the serial pass
    for p in prange(n_points):
        contact_depth[p] = 0.0
    for it in range(iterations):
        for k in range(dist_i.shape[0]):
            project_distance(x, w, dist_i[k], dist_j[k], dist_rest[k], dist_compliance[k],
                             lam_dist, k, dt2)
        for k in range(pin_point.shape[0]):
            project_pin(x, w, pin_point[k], pin_targets[k], pin_weights[k])
        for k in range(co_idx.shape[0]):
            project_orientation(x, w, co_idx, k, co_rot, k, True, zero3, 0, co_rest_length[k],
                                co_alpha, co_compliance, use_xpbd, lam_co, dt2,
                                fa[ser], fb[ser], tmp[ser], uv[ser], grad[ser], vec[ser])
        for s in prange(n_strands):
            _project_strand(
                s, x, w, edge_p0, edge_p1, edge_ghost, edge_rest_length, ghost_rest_distance,
                edge_compliance, strand_edge_start, strand_oe_start, strand_direct, oe_idx,
                oe_rest_omega, oe_rest_length, oe_alpha, oe_compliance, eye, order,
                seed + 7919 * it * (2 * n_strands + 2), use_xpbd, dt2, lam_len, lam_oe, perm,
                fa[s], fb[s], tmp[s], uv[s], grad[s], vec[s], tri_b, tri_c, tri_d, nrm,
                self_thickness, self_skip,
            )
        # sliding ends last in the pass: the lines are kinematic, so the pass ends with every
        # sliding end exactly on its line
        for k in range(slide_point.shape[0]):
            project_line(x, w, slide_point[k], slide_origin[k], slide_dir[k])
        if planes.shape[0] + spheres.shape[0] + capsules.shape[0] > 0:
            for p in prange(n_points):
                if collide_radius[p] > 0.0 and w[p] > 0.0:
                    before = contact_depth[p]
                    collide_point(p, x, collide_radius[p], planes, spheres, capsules,
                                   collider_friction, contact_depth, contact_normal, contact_mu)
                    if contact_depth[p] > before:  # pushed now: a collider's mu to combine
                        _combine_friction(p, point_friction, contact_mu)
            # collision pushes stretch edges: lengths again, then the (now small) remaining
            # penetrations
            for s in prange(n_strands):
                e0 = strand_edge_start[s]
                e1 = strand_edge_start[s + 1]
                if strand_direct[s] and e1 > e0:
                    _solve_lengths_direct(x, w, edge_p0, edge_p1, edge_rest_length,
                                          edge_compliance, lam_len, e0, e1, dt2, tri_b, tri_c,
                                          tri_d, nrm)
            for k in range(slide_point.shape[0]):
                project_line(x, w, slide_point[k], slide_origin[k], slide_dir[k])
            for p in prange(n_points):
                if collide_radius[p] > 0.0 and w[p] > 0.0:
                    before = contact_depth[p]
                    collide_point(p, x, collide_radius[p], planes, spheres, capsules,
                                   collider_friction, contact_depth, contact_normal, contact_mu)
                    if contact_depth[p] > before:
                        _combine_friction(p, point_friction, contact_mu)


@njit(cache=True, parallel=True)
def iterate_strands(
    # Model:
    w, edge_p0, edge_p1, edge_ghost, edge_rest_length, ghost_rest_distance, edge_compliance,
    strand_edge_start, strand_oe_start, strand_direct, strand_vertex_start, strand_co_start,
    oe_idx, oe_rest_omega, oe_rest_length, oe_alpha, oe_compliance,
    co_idx, co_rot, co_rest_length, co_alpha, co_compliance,
    collide_radius, planes, spheres, capsules, collider_friction, point_friction,
    # Settings:
    iterations, order, seed, use_xpbd, dt,
    # Scratch:
    lam_len, lam_oe, lam_co, perm, fa, fb, tmp, uv, grad, vec, tri_b, tri_c, tri_d, nrm, eye,
    zero3, self_thickness, self_skip,
    # State in/out:
    x,
    # Contacts out:
    contact_depth, contact_normal, contact_mu,
):
    """``iterations`` passes for scenes whose strands are independent of each other.

    Valid when every coupling constraint of a strand ties it only to kinematic points (frames)
    and there are no pins or distance constraints: then each strand's passes (its couplings,
    its own constraints, the collisions of its vertices) run start to finish on one thread,
    which gives the same result as sweeping all strands per pass.
    """
    n_strands = strand_edge_start.shape[0] - 1
    dt2 = dt * dt
    has_colliders = planes.shape[0] + spheres.shape[0] + capsules.shape[0] > 0
    for s in prange(n_strands):
        v0 = strand_vertex_start[s]
        v1 = strand_vertex_start[s + 1]
        for p in range(v0, v1):
            contact_depth[p] = 0.0
        for it in range(iterations):
            for k in range(strand_co_start[s], strand_co_start[s + 1]):
                project_orientation(x, w, co_idx, k, co_rot, k, True, zero3, 0,
                                    co_rest_length[k], co_alpha, co_compliance, use_xpbd, lam_co,
                                    dt2, fa[s], fb[s], tmp[s], uv[s], grad[s], vec[s])
            _project_strand(
                s, x, w, edge_p0, edge_p1, edge_ghost, edge_rest_length, ghost_rest_distance,
                edge_compliance, strand_edge_start, strand_oe_start, strand_direct, oe_idx,
                oe_rest_omega, oe_rest_length, oe_alpha, oe_compliance, eye, order,
                seed + 7919 * it * (2 * n_strands + 2), use_xpbd, dt2, lam_len, lam_oe, perm,
                fa[s], fb[s], tmp[s], uv[s], grad[s], vec[s], tri_b, tri_c, tri_d, nrm,
                self_thickness, self_skip,
            )
            if has_colliders:
                moved = False
                for p in range(v0, v1):
                    if collide_radius[p] > 0.0 and w[p] > 0.0:
                        x0, x1, x2 = x[p, 0], x[p, 1], x[p, 2]
                        before = contact_depth[p]
                        collide_point(p, x, collide_radius[p], planes, spheres, capsules,
                                       collider_friction, contact_depth, contact_normal,
                                       contact_mu)
                        if contact_depth[p] > before:
                            _combine_friction(p, point_friction, contact_mu)
                        moved |= x[p, 0] != x0 or x[p, 1] != x1 or x[p, 2] != x2
                # collision pushes stretch edges: alternate exact lengths and the remaining
                # (shrinking) penetrations a few times
                rounds = 0
                while moved and strand_direct[s] and rounds < CONTACT_LENGTH_ROUNDS:
                    rounds += 1
                    _solve_lengths_direct(x, w, edge_p0, edge_p1, edge_rest_length,
                                          edge_compliance, lam_len, strand_edge_start[s],
                                          strand_edge_start[s + 1], dt2, tri_b, tri_c, tri_d, nrm)
                    moved = False
                    for p in range(v0, v1):
                        if collide_radius[p] > 0.0 and w[p] > 0.0:
                            x0, x1, x2 = x[p, 0], x[p, 1], x[p, 2]
                            before = contact_depth[p]
                            collide_point(p, x, collide_radius[p], planes, spheres, capsules,
                                           collider_friction, contact_depth, contact_normal,
                                           contact_mu)
                            if contact_depth[p] > before:
                                _combine_friction(p, point_friction, contact_mu)
                            moved |= x[p, 0] != x0 or x[p, 1] != x1 or x[p, 2] != x2


@njit(cache=True, parallel=True)
def finish(
    # Model:
    w,
    # State in:
    x_in, x_pred,
    # Contacts in:
    contact_depth, contact_normal, contact_mu,
    # Settings:
    dt,
    # State out:
    x_out, v_out,
):
    """Velocities from positions, Coulomb-like friction on contacts, commit positions."""
    for p in prange(x_in.shape[0]):
        for r in range(3):
            v_out[p, r] = (x_pred[p, r] - x_in[p, r]) / dt
            x_out[p, r] = x_pred[p, r]
        if contact_depth[p] > 0.0 and w[p] > 0.0:
            nx = contact_normal[p, 0]
            ny = contact_normal[p, 1]
            nz = contact_normal[p, 2]
            vn = v_out[p, 0] * nx + v_out[p, 1] * ny + v_out[p, 2] * nz
            tx = v_out[p, 0] - vn * nx
            ty = v_out[p, 1] - vn * ny
            tz = v_out[p, 2] - vn * nz
            vt = math.sqrt(tx * tx + ty * ty + tz * tz)
            if vt > 0.0:
                scale = max(0.0, 1.0 - contact_mu[p] * (contact_depth[p] / dt) / vt)
                v_out[p, 0] = vn * nx + scale * tx
                v_out[p, 1] = vn * ny + scale * ty
                v_out[p, 2] = vn * nz + scale * tz


@njit(cache=True)
def first_bad_strand(x, v, particle_strand):
    """Index of the first point with a non-finite position or velocity, and its strand.

    Returns ``(point, strand)``; ``(-1, -1)`` when everything is finite.
    """
    for p in range(x.shape[0]):
        for r in range(3):
            if not (math.isfinite(x[p, r]) and math.isfinite(v[p, r])):
                return p, particle_strand[p]
    return -1, -1


@njit(cache=True)
def check_state(x, v, inv_mass, point_strand, edge_p0, edge_p1, edge_rest_length, max_strain,
                max_speed):
    """One pass over a state: non-finite values, then edge strain, then point speed.

    ``max_strain`` (dimensionless) and ``max_speed`` [m/s] may be ``inf`` (no bound); only
    points with mass are speed-checked (kinematic points move as prescribed).  Returns
    ``(code, index, strand, value)``: ``CHECK_OK``; ``CHECK_NONFINITE`` with the point;
    ``CHECK_STRAIN`` with the worst edge and its strain ``| |e| / L - 1 |``; ``CHECK_SPEED`` with
    the fastest point and its speed.  ``strand`` is -1 for non-strand points.
    """
    p, strand = first_bad_strand(x, v, point_strand)
    if p >= 0:
        return CHECK_NONFINITE, p, strand, math.nan
    worst = 0.0
    we = -1
    for e in range(edge_p0.shape[0]):
        a = edge_p0[e]
        b = edge_p1[e]
        dx = x[b, 0] - x[a, 0]
        dy = x[b, 1] - x[a, 1]
        dz = x[b, 2] - x[a, 2]
        strain = abs(math.sqrt(dx * dx + dy * dy + dz * dz) / edge_rest_length[e] - 1.0)
        if strain > worst:
            worst = strain
            we = e
    if we >= 0 and worst > max_strain:
        return CHECK_STRAIN, we, point_strand[edge_p0[we]], worst
    fast = 0.0
    fp = -1
    for q in range(v.shape[0]):
        if inv_mass[q] > 0.0:
            sp = v[q, 0] * v[q, 0] + v[q, 1] * v[q, 1] + v[q, 2] * v[q, 2]
            if sp > fast:
                fast = sp
                fp = q
    fast = math.sqrt(fast)
    if fp >= 0 and fast > max_speed:
        return CHECK_SPEED, fp, point_strand[fp], fast
    return CHECK_OK, -1, -1, 0.0
