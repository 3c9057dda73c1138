"""Numba kernels of one position-based elastic rod step (Algorithm 1 of the appendix).

All strands are concatenated: edges of strand ``s`` are ``strand_edge_start[s]:[s+1]`` and its
orientation elements ``strand_oe_start[s]:[s+1]``.  A kernel call runs ``params.n_sub``
substeps; its arguments are the named groups of :mod:`.kernel_args` (model, state in, state
out, scratch, params).

Parallel structure.  When strands are independent (their couplings reach only kinematic
points; no pins, distances or sliding ends), :func:`step_independent` runs one parallel loop
over strands per call, each strand doing prediction, constraint passes, collisions and
velocities for every substep: one parallel region per step, so threads wait for each other
once.  Otherwise :func:`step_coupled` runs, per pass, one serial sweep over the constraints
between strands and bodies and one parallel loop over strands.  Each kernel has a serial twin
(``*_serial``), used for small problems and one thread (see ``pbd/solver.py``).  Contacts
between strands (``params.strand_contact``; argument group ``contact``) run in
:func:`step_coupled` only: the grid search once per substep and one sweep over the pairs per
pass, both serial, between the parallel loops.

Threads.  Numba's threading layer is left to its default (OpenMP where present); the module
sets ``OMP_WAIT_POLICY=PASSIVE`` and ``KMP_BLOCKTIME=0`` unless already set (see below), and
the solver hands the strands of a parallel loop to the threads in chunks, dynamically
(``PBDSolver._run_kernel``).

Compile time.  The projections of one strand's sweep (its edges, its orientation constraints)
are each one compiled function over plain arrays with the projection inlined as Numba IR
(:mod:`.sweeps`); they compile once, and every kernel links them.  The per-strand glue
(``_strand_substeps``, ``_project_strand``, ``_project_couplings``: calls, no arithmetic of
their own) is inlined as IR into the kernels, which saves a level of compiled functions (each
level optimises and emits again all the code it links).  Functions called only from compiled
code have no Python entry point (``no_cpython_wrapper``; generating and optimising the
unboxing of the argument groups is much of a small function's compile time), and arguments
that select a branch are run-time values, never literal constants (a literal compiles the
callee once per value).  Kernels compile without Numba's reference counting (``_nrt=False``;
they allocate nothing): every array taken out of an argument group would otherwise count a
reference on the shared array, an atomic operation on one cache line that all threads fight
over.  Kernels use Numba's NumPy error model (a float division by zero gives inf or NaN, caught
by the solver's finiteness check, instead of a test before every division).
"""
from __future__ import annotations

import math
import os

from numba import njit, prange

from ..collision.analytic import collide_point, contact_friction
from ..collision.grid import SEARCH_OK, find_pairs, voxel_needed
from ..collision.segment_contact import project_pairs
from ..collision.self_contact import project_self_contacts
from .constraints import project_distance, project_line, project_pin
from .kernel_args import StateArrays
from .sweeps import (
    _INNER,
    ORDER_INTERLEAVED,
    ORDER_RANDOM,
    ORDER_SEQUENTIAL,
    _shuffle,
    project_edges,
    project_orientations,
)

# Threads that wait between parallel regions sleep instead of spinning: on cores shared with
# other work a spinning thread takes the time its siblings need.  Read by the OpenMP runtime
# when Numba first starts its threads (its first parallel call, not its import), so this only
# applies when no parallel Numba code ran before this module was imported; a value the user
# set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("KMP_BLOCKTIME", "0")

__all__ = ["ORDER_INTERLEAVED", "ORDER_SEQUENTIAL", "ORDER_RANDOM", "GRAVITY_CORRECTED",
           "GRAVITY_FULL", "GRAVITY_NONE", "CHECK_OK", "CHECK_NONFINITE", "CHECK_STRAIN",
           "CHECK_SPEED", "step_independent", "step_independent_serial", "step_coupled",
           "step_coupled_serial", "first_bad_strand", "check_state"]

GRAVITY_CORRECTED = 0
GRAVITY_FULL = 1
GRAVITY_NONE = 2
CHECK_OK = 0
CHECK_NONFINITE = 1
CHECK_STRAIN = 2
CHECK_SPEED = 3
CONTACT_LENGTH_ROUNDS = 10  # length solves after collision pushes, per pass (direct strands)
DIRECT_MAX_NEWTON = 4  # Newton iterations of the direct length solve per pass


@njit(**_INNER)
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


# --------------------------------------------------------------------------------------------
# One strand: prediction, constraint passes, collisions, velocities
# --------------------------------------------------------------------------------------------
@njit(**_INNER)
def _predict_strand(s, k, model, state_in, state_out, scratch, params):
    """Gravity (with the ghost-point correction of section 6), damping and predicted positions
    of strand ``s``'s vertices and ghost points, for substep ``k`` of the call.

    ``gravity_mode``: corrected (Algorithm 1: each ghost keeps the share ``r`` of its gravity
    that the edge midpoint actually showed over the last substep and hands the rest, as an
    impulse, to the edge's end points), full (gravity on every point) or none (no gravity on
    ghost points).  ``mid_v`` is the midpoint velocity of the previous substep (NaN before the
    first: the ghost keeps its full gravity, as for a free-falling edge); the ratio is clamped
    to [0, 1].  ``state_in`` may be ``state_out``: every value is read before it is written.
    """
    w = model.inv_mass
    g = model.gravity
    dt = params.dt
    x_in, v_in, mid_in = state_in.x, state_in.v, state_in.mid_v
    v_out, mid_out = state_out.v, state_out.mid_v
    x_pred = scratch.x_pred
    share = scratch.share
    gmode = params.gravity_mode
    g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2]
    fd = max(0.0, 1.0 - params.damping * dt)
    e0 = model.strand_edge_start[s]
    e1 = model.strand_edge_start[s + 1]
    for e in range(e0, e1):
        a = model.edge_p0[e]
        b = model.edge_p1[e]
        gp = model.edge_ghost[e]
        m0 = 0.5 * (v_in[a, 0] + v_in[b, 0])
        m1 = 0.5 * (v_in[a, 1] + v_in[b, 1])
        m2 = 0.5 * (v_in[a, 2] + v_in[b, 2])
        sh = 0.0
        if not (g2 == 0.0 or w[gp] == 0.0 or gmode == GRAVITY_FULL):
            if gmode == GRAVITY_NONE:
                sh = 1.0
            elif math.isfinite(mid_in[e, 0]):
                acc_g = (m0 - mid_in[e, 0]) / dt * g[0]
                acc_g += (m1 - mid_in[e, 1]) / dt * g[1]
                acc_g += (m2 - mid_in[e, 2]) / dt * g[2]
                sh = 1.0 - min(1.0, max(0.0, acc_g / g2))
        share[e] = sh
        mid_out[e, 0] = m0
        mid_out[e, 1] = m1
        mid_out[e, 2] = m2
    for p in range(model.strand_vertex_start[s], model.strand_vertex_start[s + 1]):
        _predict_point(p, w, v_in, v_out, dt, g, fd)
    for e in range(e0, e1):
        _predict_point(model.edge_ghost[e], w, v_in, v_out, dt, g, fd)
    for e in range(e0, e1):
        if share[e] == 0.0:
            continue
        a = model.edge_p0[e]
        b = model.edge_p1[e]
        gp = model.edge_ghost[e]
        wg = w[gp]
        for r in range(3):
            imp = share[e] * dt * g[r] * fd  # impulse per unit ghost mass
            v_out[gp, r] -= imp
            if w[a] > 0.0:
                v_out[a, r] += 0.5 * imp * w[a] / wg
            if w[b] > 0.0:
                v_out[b, r] += 0.5 * imp * w[b] / wg
    point_drive, drive_pos = model.point_drive, params.drive_pos
    for p in range(model.strand_vertex_start[s], model.strand_vertex_start[s + 1]):
        _position_point(p, k, point_drive, drive_pos, dt, x_in, v_out, x_pred)
    for e in range(e0, e1):
        _position_point(model.edge_ghost[e], k, point_drive, drive_pos, dt, x_in, v_out, x_pred)


@njit(**_INNER)
def _predict_point(p, w, v_in, v_out, dt, g, fd):
    for r in range(3):
        if w[p] > 0.0:
            v_out[p, r] = (v_in[p, r] + dt * g[r]) * fd
        else:
            v_out[p, r] = v_in[p, r]


@njit(**_INNER)
def _position_point(p, k, point_drive, drive_pos, dt, x_in, v_out, x_pred):
    d = point_drive[p]
    if d >= 0:
        for r in range(3):
            x_pred[p, r] = drive_pos[k, d, r]
    else:
        for r in range(3):
            x_pred[p, r] = x_in[p, r] + dt * v_out[p, r]


@njit(**_INNER, inline="always")
def _project_strand(s, it, seed, model, scratch, params):
    """One pass over strand ``s``'s own constraints (edges, ghost points, orientation elements,
    self-contacts) on ``scratch.x_pred``; pass ``it`` of the substep whose seed is ``seed``."""
    x = scratch.x_pred
    w = model.inv_mass
    order = params.order
    perm = scratch.perm
    dt2 = params.dt * params.dt
    e0 = model.strand_edge_start[s]
    e1 = model.strand_edge_start[s + 1]
    o0 = model.strand_oe_start[s]
    ne = e1 - e0
    no = model.strand_oe_start[s + 1] - o0
    direct = model.strand_direct[s]
    seed = seed + 7919 * it * (2 * (model.strand_edge_start.shape[0] - 1) + 2)
    if order == ORDER_RANDOM:
        _shuffle(perm, e0, ne, seed + 2 * s)
    # the length is hard in the alpha form (compliance 0), L / (E A) in the XPBD form; the
    # direct solve below handles it instead for an open strand
    project_edges(x, w, model.edge_p0, model.edge_p1, model.edge_ghost, model.edge_rest_length,
                  model.edge_compliance, scratch.lam_len, model.ghost_rest_distance, e0, ne,
                  order, perm, not direct, dt2)
    if no > 0:
        if order == ORDER_RANDOM:
            _shuffle(perm, e0, no, seed + 2 * s + 1)  # reuses the strand's slots (no <= ne)
        # run-time values, never literal constants (a literal argument compiles a callee once
        # per value): here has_rot = False
        project_orientations(x, w, model.oe_idx, model.eye, o0 < 0, model.oe_rest_omega,
                             model.oe_rest_length, params.oe_alpha, model.oe_compliance,
                             params.use_xpbd, scratch.lam_oe, dt2, o0, no, order, perm, e0)
    if model.self_thickness[s] > 0.0:
        project_self_contacts(x, w, model.edge_p0, model.edge_p1, e0, e1,
                              model.self_thickness[s], model.self_skip[s])
    if direct and ne > 0:
        _solve_lengths_direct(x, w, model.edge_p0, model.edge_p1, model.edge_rest_length,
                              model.edge_compliance, scratch.lam_len, e0, e1, dt2,
                              scratch.tri_b, scratch.tri_c, scratch.tri_d, scratch.nrm)


@njit(**_INNER, inline="always")
def _project_couplings(s, model, scratch, params):
    """One pass over the coupling orientation constraints of strand ``s`` (frame ends)."""
    c0 = model.strand_co_start[s]
    c1 = model.strand_co_start[s + 1]
    if c1 == c0:
        return
    # has_rot = True, sequential order, no permutation: run-time values (see _project_strand)
    project_orientations(scratch.x_pred, model.inv_mass, model.co_idx, model.co_rot, c0 >= 0,
                         model.co_rest_omega, model.co_rest_length, params.co_alpha,
                         model.co_compliance, params.use_xpbd, scratch.lam_co,
                         params.dt * params.dt, c0, c1 - c0, c0 - c0 + ORDER_SEQUENTIAL,
                         scratch.perm, c0 - c0)


@njit(**_INNER, inline="always")
def _collide_points(p0, p1, model, scratch):
    """Push points ``p0..p1`` out of the colliders (records contacts for friction).  Returns
    whether a point moved.  Inlined: without colliders a pass pays one test, not a call."""
    if model.planes.shape[0] + model.spheres.shape[0] + model.capsules.shape[0] == 0:
        return False
    return _collide_range(p0, p1, scratch.x_pred, model.collide_radius, model.inv_mass,
                          model.point_friction, model.planes, model.spheres, model.capsules,
                          model.collider_friction, scratch.contact_depth,
                          scratch.contact_normal, scratch.contact_mu)


@njit(**_INNER)
def _collide_range(p0, p1, x, radius, w, friction, planes, spheres, capsules, collider_friction,
                   depth, normal, contact_mu):
    """:func:`_collide_points` on plain arrays (a call with the argument groups would pass
    every array of the groups)."""
    moved = False
    for p in range(p0, p1):
        if radius[p] > 0.0 and w[p] > 0.0:
            x0, x1, x2 = x[p, 0], x[p, 1], x[p, 2]
            before = depth[p]
            collide_point(p, x, radius[p], planes, spheres, capsules, collider_friction, depth,
                          normal, contact_mu)
            mu = friction[p]
            if mu == mu and depth[p] > before:
                # pushed now, so contact_mu holds a collider's coefficient: the strand's own
                # combines with it as their geometric mean, once per push (NaN: the strand has
                # none, the collider's applies)
                contact_mu[p] = math.sqrt(mu * contact_mu[p])
            moved |= x[p, 0] != x0 or x[p, 1] != x1 or x[p, 2] != x2
    return moved


@njit(**_INNER)
def _solve_strand_lengths(s, model, scratch, params):
    """The direct edge-length solve of strand ``s`` on ``scratch.x_pred``."""
    _solve_lengths_direct(scratch.x_pred, model.inv_mass, model.edge_p0, model.edge_p1,
                          model.edge_rest_length, model.edge_compliance, scratch.lam_len,
                          model.strand_edge_start[s], model.strand_edge_start[s + 1],
                          params.dt * params.dt, scratch.tri_b, scratch.tri_c, scratch.tri_d,
                          scratch.nrm)


@njit(**_INNER)
def _finish_point(p, w, x_in, x_pred, depth, normal, mu, dt, x_out, v_out):
    """Velocity from positions, Coulomb-like friction on contacts, commit the position."""
    for r in range(3):
        v_out[p, r] = (x_pred[p, r] - x_in[p, r]) / dt
        x_out[p, r] = x_pred[p, r]
    if w[p] > 0.0:
        contact_friction(p, v_out, depth, normal, mu, dt)


@njit(**_INNER)
def _finish_strand(s, model, x_in, scratch, dt, x_out, v_out):
    w, x_pred = model.inv_mass, scratch.x_pred
    depth, normal, mu = scratch.contact_depth, scratch.contact_normal, scratch.contact_mu
    for p in range(model.strand_vertex_start[s], model.strand_vertex_start[s + 1]):
        _finish_point(p, w, x_in, x_pred, depth, normal, mu, dt, x_out, v_out)
    for e in range(model.strand_edge_start[s], model.strand_edge_start[s + 1]):
        _finish_point(model.edge_ghost[e], w, x_in, x_pred, depth, normal, mu, dt, x_out, v_out)


@njit(**_INNER)
def _clear_strand(s, model, scratch, use_xpbd):
    """Zero strand ``s``'s multipliers and contact depths at the start of a substep.  The
    orientation multipliers are neither read nor written in the relaxation (alpha) form, so
    they are cleared only for XPBD; the edge multipliers always (a hard edge reads its
    multiplier times a zero compliance)."""
    for e in range(model.strand_edge_start[s], model.strand_edge_start[s + 1]):
        scratch.lam_len[e] = 0.0
    if use_xpbd:
        for o in range(model.strand_oe_start[s], model.strand_oe_start[s + 1]):
            for r in range(3):
                scratch.lam_oe[o, r] = 0.0
        for c in range(model.strand_co_start[s], model.strand_co_start[s + 1]):
            for r in range(3):
                scratch.lam_co[c, r] = 0.0
    for p in range(model.strand_vertex_start[s], model.strand_vertex_start[s + 1]):
        scratch.contact_depth[p] = 0.0


@njit(**_INNER)
def _collide_strand_coupled(s, model, scratch, params):
    """Collisions of strand ``s``'s vertices; with colliders, a direct-length strand then
    re-solves its lengths (collision pushes stretch edges) and collides once more."""
    v0 = model.strand_vertex_start[s]
    v1 = model.strand_vertex_start[s + 1]
    _collide_points(v0, v1, model, scratch)
    n_colliders = model.planes.shape[0] + model.spheres.shape[0] + model.capsules.shape[0]
    e0 = model.strand_edge_start[s]
    if n_colliders > 0 and model.strand_direct[s] and model.strand_edge_start[s + 1] > e0:
        _solve_strand_lengths(s, model, scratch, params)
        _collide_points(v0, v1, model, scratch)


@njit(**_INNER)
def _substep_seed(params, k):
    return (params.seed + 7919 * k) % 2147483648


@njit(**_INNER, inline="always")
def _strand_substeps(s, model, state_in, state_out, scratch, params):
    """All substeps of strand ``s`` when strands are independent: predict, ``iterations``
    passes (couplings, own constraints, collisions of its vertices), velocities."""
    v0 = model.strand_vertex_start[s]
    v1 = model.strand_vertex_start[s + 1]
    direct = model.strand_direct[s] and model.strand_edge_start[s + 1] > model.strand_edge_start[s]
    for k in range(params.n_sub):
        st_in = state_in if k == 0 else state_out
        _predict_strand(s, k, model, st_in, state_out, scratch, params)
        _clear_strand(s, model, scratch, params.use_xpbd)
        seed = _substep_seed(params, k)
        for it in range(params.iterations):
            _project_couplings(s, model, scratch, params)
            _project_strand(s, it, seed, model, scratch, params)
            moved = _collide_points(v0, v1, model, scratch)
            # collision pushes stretch edges: alternate exact lengths and the remaining
            # (shrinking) penetrations a few times
            rounds = 0
            while moved and direct and rounds < CONTACT_LENGTH_ROUNDS:
                rounds += 1
                _solve_strand_lengths(s, model, scratch, params)
                moved = _collide_points(v0, v1, model, scratch)
        _finish_strand(s, model, st_in.x, scratch, params.dt, state_out.x, state_out.v)


# --------------------------------------------------------------------------------------------
# Points that belong to no strand (frames, meshes, bodies) and serial couplings
# --------------------------------------------------------------------------------------------
@njit(**_INNER)
def _predict_extra(k, model, state_in, state_out, scratch, params):
    g = model.gravity
    fd = max(0.0, 1.0 - params.damping * params.dt)
    for p in range(model.n_strand_points, model.inv_mass.shape[0]):
        _predict_point(p, model.inv_mass, state_in.v, state_out.v, params.dt, g, fd)
        _position_point(p, k, model.point_drive, params.drive_pos, params.dt, state_in.x,
                        state_out.v, scratch.x_pred)
        scratch.contact_depth[p] = 0.0


@njit(**_INNER)
def _finish_extra(model, state_in, state_out, scratch, params):
    for p in range(model.n_strand_points, model.inv_mass.shape[0]):
        _finish_point(p, model.inv_mass, state_in.x, scratch.x_pred, scratch.contact_depth,
                      scratch.contact_normal, scratch.contact_mu, params.dt, state_out.x,
                      state_out.v)


@njit(**_INNER)
def _project_slides(k, model, scratch, params):
    """Sliding ends back onto their kinematic lines (substep ``k``): run after the strands'
    own constraints and length solves, so that a pass ends with every sliding end on its line."""
    for q in range(model.slide_point.shape[0]):
        project_line(scratch.x_pred, model.inv_mass, model.slide_point[q],
                     params.slide_origin[k, q], params.slide_dir[k, q])


@njit(**_INNER)
def _project_serial(k, model, scratch, params):
    """One pass over the constraints between strands and other bodies: distances, pins,
    sliding ends and coupling orientation constraints (substep ``k``)."""
    x = scratch.x_pred
    w = model.inv_mass
    dt2 = params.dt * params.dt
    for q in range(model.dist_i.shape[0]):
        project_distance(x, w, model.dist_i[q], model.dist_j[q], model.dist_rest[q],
                         model.dist_compliance[q], scratch.lam_dist, q, dt2)
    for q in range(model.pin_point.shape[0]):
        project_pin(x, w, model.pin_point[q], model.pin_targets[q], model.pin_weights[q])
    for q in range(model.slide_point.shape[0]):
        project_line(x, w, model.slide_point[q], params.slide_origin[k, q],
                     params.slide_dir[k, q])
    nc = model.co_idx.shape[0]
    # has_rot = True, sequential order: run-time values (see _project_strand)
    project_orientations(x, w, model.co_idx, model.co_rot, nc >= 0, model.co_rest_omega,
                         model.co_rest_length, params.co_alpha, model.co_compliance,
                         params.use_xpbd, scratch.lam_co, dt2, nc - nc, nc,
                         nc - nc + ORDER_SEQUENTIAL, scratch.perm, nc - nc)


# --------------------------------------------------------------------------------------------
# Capsule contacts between strands (collision/grid.py, collision/segment_contact.py)
# --------------------------------------------------------------------------------------------
@njit(**_INNER)
def _find_strand_contacts(contact, scratch, params):
    """Candidate segment pairs of the substep at the predicted positions (within contact
    distance plus ``params.contact_margin``), in voxels of ``params.contact_voxel`` or more when
    a predicted edge is longer.  ``contact.status``: [0] the largest count found (above
    ``len(pairs)``: the buffer overflowed), [1] a search status other than ``SEARCH_OK`` (a
    non-finite position) and [2] its item, [3] the pairs the passes project."""
    x = scratch.x_pred
    # the prediction may stretch edges past the voxel the solver chose: never below the need
    voxel = max(params.contact_voxel, voxel_needed(x, contact.segs, params.contact_margin)[0])
    n, status, item = find_pairs(x, contact.segs, voxel, params.contact_search,
                                 params.contact_margin, contact.grid, contact.pairs)
    st = contact.status
    if status != SEARCH_OK:
        st[1] = status
        st[2] = item
        n = 0
    st[0] = max(st[0], n)
    st[3] = min(n, contact.pairs.shape[0])


@njit(**_INNER)
def _project_strand_contacts(model, contact, scratch):
    """One Gauss-Seidel sweep over the substep's candidate pairs."""
    project_pairs(scratch.x_pred, model.inv_mass, contact.segs, contact.pairs,
                  contact.status[3], contact.mass_scale, 1.0)

# --------------------------------------------------------------------------------------------
# Kernels: a parallel and a serial variant of each (small problems step serially)
# --------------------------------------------------------------------------------------------
@njit(cache=True, parallel=True, error_model="numpy", _nrt=False)
def step_independent(model, state_in, state_out, scratch, params):
    """``params.n_sub`` substeps of a scene whose strands are independent of each other, in
    one parallel loop over strands.

    Valid when every coupling of a strand ties it only to kinematic points and there are no
    pins, distance constraints or sliding ends; then each strand's substeps (its couplings, its
    own constraints, the collisions of its vertices) run start to finish on one thread, which
    gives the same result as sweeping all strands per pass.  The points of no strand must be
    kinematic, and held still when ``n_sub > 1`` (they are predicted for the first substep).
    ``state_in`` may be ``state_out``.
    """
    k0 = params.n_sub - params.n_sub  # substep 0, a run-time value (one compiled version)
    _predict_extra(k0, model, state_in, state_out, scratch, params)
    for s in prange(model.strand_edge_start.shape[0] - 1):
        _strand_substeps(s, model, state_in, state_out, scratch, params)
    _finish_extra(model, state_in, state_out, scratch, params)
    for k in range(1, params.n_sub):
        _predict_extra(k, model, state_out, state_out, scratch, params)
        _finish_extra(model, state_out, state_out, scratch, params)


@njit(cache=True, error_model="numpy", _nrt=False)
def step_independent_serial(model, state_in, state_out, scratch, params):
    """:func:`step_independent` on the calling thread."""
    k0 = params.n_sub - params.n_sub  # substep 0, a run-time value (one compiled version)
    _predict_extra(k0, model, state_in, state_out, scratch, params)
    for s in range(model.strand_edge_start.shape[0] - 1):
        _strand_substeps(s, model, state_in, state_out, scratch, params)
    _finish_extra(model, state_in, state_out, scratch, params)
    for k in range(1, params.n_sub):
        _predict_extra(k, model, state_out, state_out, scratch, params)
        _finish_extra(model, state_out, state_out, scratch, params)


@njit(**_INNER)
def _clear_serial(scratch):
    for q in range(scratch.lam_dist.shape[0]):
        scratch.lam_dist[q] = 0.0
    for c in range(scratch.lam_co.shape[0]):
        for r in range(3):
            scratch.lam_co[c, r] = 0.0


@njit(**_INNER)
def _substep_input(k, state_in, state_out):
    """The state substep ``k`` starts from, built anew (a parallel loop body takes an argument
    group only when its definition is one call, not a choice between two groups)."""
    if k == 0:
        return StateArrays(state_in.x, state_in.v, state_in.mid_v)
    return StateArrays(state_out.x, state_out.v, state_out.mid_v)


@njit(cache=True, parallel=True, error_model="numpy", _nrt=False)
def step_coupled(model, state_in, state_out, scratch, params, contact):
    """``params.n_sub`` substeps of any scene: per pass, the constraints between strands and
    other bodies in one serial sweep, then every strand's own constraints and collisions in a
    parallel loop over strands.  ``state_in`` may be ``state_out``."""
    n_strands = model.strand_edge_start.shape[0] - 1
    n_points = model.inv_mass.shape[0]
    for k in range(params.n_sub):
        st_in = _substep_input(k, state_in, state_out)
        for s in prange(n_strands):
            _predict_strand(s, k, model, st_in, state_out, scratch, params)
            _clear_strand(s, model, scratch, params.use_xpbd)
        _predict_extra(k, model, st_in, state_out, scratch, params)
        _clear_serial(scratch)
        if params.strand_contact:
            _find_strand_contacts(contact, scratch, params)
        seed = _substep_seed(params, k)
        for it in range(params.iterations):
            _project_serial(k, model, scratch, params)
            for s in prange(n_strands):
                _project_strand(s, it, seed, model, scratch, params)
                _collide_strand_coupled(s, model, scratch, params)
            if params.strand_contact:
                _project_strand_contacts(model, contact, scratch)
            _project_slides(k, model, scratch, params)
            _collide_points(model.n_strand_points, n_points, model, scratch)
        for s in prange(n_strands):
            _finish_strand(s, model, st_in.x, scratch, params.dt, state_out.x, state_out.v)
        _finish_extra(model, st_in, state_out, scratch, params)


@njit(cache=True, error_model="numpy", _nrt=False)
def step_coupled_serial(model, state_in, state_out, scratch, params, contact):
    """:func:`step_coupled` on the calling thread."""
    n_strands = model.strand_edge_start.shape[0] - 1
    n_points = model.inv_mass.shape[0]
    for k in range(params.n_sub):
        st_in = _substep_input(k, state_in, state_out)
        for s in range(n_strands):
            _predict_strand(s, k, model, st_in, state_out, scratch, params)
            _clear_strand(s, model, scratch, params.use_xpbd)
        _predict_extra(k, model, st_in, state_out, scratch, params)
        _clear_serial(scratch)
        if params.strand_contact:
            _find_strand_contacts(contact, scratch, params)
        seed = _substep_seed(params, k)
        for it in range(params.iterations):
            _project_serial(k, model, scratch, params)
            for s in range(n_strands):
                _project_strand(s, it, seed, model, scratch, params)
                _collide_strand_coupled(s, model, scratch, params)
            if params.strand_contact:
                _project_strand_contacts(model, contact, scratch)
            _project_slides(k, model, scratch, params)
            _collide_points(model.n_strand_points, n_points, model, scratch)
        for s in range(n_strands):
            _finish_strand(s, model, st_in.x, scratch, params.dt, state_out.x, state_out.v)
        _finish_extra(model, st_in, state_out, scratch, params)


@njit(cache=True, error_model="numpy", _nrt=False)
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
