"""Numba kernels of chain shape matching (Rungjiratananon et al. 2010, 2011).

One substep runs these phases on every chain (a run of particles joined by untorn segments),
in this order; chains are independent, so the drivers loop over them with ``prange``:

1. ``PH_TWIST_FORCE``: twisting forces from the current state (:mod:`.twist`, eqs. 4-5);
2. ``PH_INTEGRATE``: time integration: ``v += h f / m`` (gravity, loads; the twisting force
   divided by ``m + h^2 k`` with ``k`` its stiffness estimate), damping,
   ``x* = x + h v``; held particles move to their targets;
3. ``PH_SHAPE``: chain shape matching: per region (half-width ``w``) the rotation of its moment
   matrix and the goal positions, blended per particle by its per-region mass (held particles
   count :data:`HELD_WEIGHT` times theirs); then
   ``x += alpha (goal - x)`` (``sm_iterations`` times);
4. ``PH_TENSION``: strain limiting (per-segment maximum lengths, Gauss-Seidel passes in
   alternating directions), the tension of each segment (eq. 8), the stress-strain curve
   (plastic elongation and thinning), tearing and the rebound (flicking) of released tension;
5. ``PH_COLLIDE``: contacts with planes, spheres and capsules
   (:mod:`strandlab.collision.analytic`);
6. ``PH_VELOCITY``: ``v = (x - x_old) / h`` plus the rebound, contact friction;
7. ``PH_TWIST``: material frames carried to the new positions and twist averaging (eqs. 1-3).

The solver runs phases 1-6 in one call, renumbers the chains when a segment tore, and runs
phase 7 in a second call.  Running the phases one call at a time gives the same numbers (the
benchmark's breakdown does that).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..collision.analytic import collide_point, contact_friction
from .rotation import add_moment, quat_rotate, rotation_of_moment
from .tension import natural_scale, segment_length, tension_phase
from .twist import average_twist, twist_forces, update_frames

__all__ = ["step_chains", "step_chains_serial", "renumber_chains", "check_state",
           "PH_TWIST_FORCE", "PH_INTEGRATE", "PH_SHAPE", "PH_TENSION",
           "PH_COLLIDE", "PH_VELOCITY", "PH_TWIST", "PH_MOTION", "PH_NO_LIMIT",
           "PH_DEFER_TEAR", "CHECK_OK",
           "CHECK_NONFINITE", "CHECK_STRAIN", "CHECK_SPEED"]

PH_TWIST_FORCE = 1
PH_INTEGRATE = 2
PH_SHAPE = 4
PH_TENSION = 8
PH_COLLIDE = 16
PH_VELOCITY = 32
PH_TWIST = 64
PH_MOTION = 63          #: phases 1-6
PH_NO_LIMIT = 128       #: with PH_TENSION: the strain limiting is done (with the clusters)
PH_DEFER_TEAR = 256     #: with PH_TENSION: record the tear candidates, tear nothing

#: Mass factor of held particles in shape matching: they set the fit of their regions (a
#: clamp holds the orientation of the string's end instead of acting as a hinge).
HELD_WEIGHT = 1e6

CHECK_OK = 0
CHECK_NONFINITE = 1
CHECK_STRAIN = 2
CHECK_SPEED = 3

_OPTS = {"cache": True, "error_model": "numpy"}
#: Per-element helpers are inlined into the phases: a call that is not inlined passes (and
#: reference-counts) every array of the model, state and scratch groups.
_INLINE = {"cache": True, "error_model": "numpy", "inline": "always"}


# ------------------------------------------------------------------------------- helpers
# ------------------------------------------------------------------------------- phases
@njit(**_INLINE)
def start_particle(i, x, m, sc):
    """Keep particle ``i``'s position in ``sc.x_old``; a driven particle goes to its target
    (returns True: nothing is integrated for it)."""
    for r in range(3):
        sc.x_old[i, r] = x[i, r]
    d = m.vertex_drive[i]
    if d < 0:
        return False
    for r in range(3):
        x[i, r] = sc.drive_pos[d, r]
    return True


@njit(**_INLINE)
def _integrate(a, b, m, st, sc, p):
    """Phase 2: explicit velocities and unconstrained positions of chain ``a..b``."""
    x, v = st.x, st.v
    h = p.h
    g = m.gravity
    for i in range(a, b + 1):
        if start_particle(i, x, m, sc):
            continue
        w = m.inv_mass[i]
        wt = 1.0 / (m.mass[i] + h * h * sc.k_twist[i])
        for r in range(3):
            f = m.mass[i] * g[r] + sc.f_load[i, r]
            v[i, r] = (v[i, r] + h * (w * f + wt * sc.f_twist[i, r])) * p.damping
            x[i, r] += h * v[i, r]


@njit(**_INLINE)
def _advance(i, m, sc, px, py, pz):
    """Rest coordinates of particle ``i + 1`` from those of ``i``: its segment's rest vector
    scaled by :func:`natural_scale` (``sc.scale``, set once per pass)."""
    e = m.vertex_edge[i]
    s = sc.scale[e]
    return px + s * m.rest_edge[e, 0], py + s * m.rest_edge[e, 1], pz + s * m.rest_edge[e, 2]


@njit(**_INLINE)
def _region_sums(lo, hi, m, st, sc):
    """Mass, centre and rest centre (rest coordinates counted from the region's first particle)
    of the region ``lo..hi``."""
    x = st.x
    mt = 0.0
    cx = cy = cz = 0.0
    rx = ry = rz = 0.0
    px = py = pz = 0.0
    for i in range(lo, hi + 1):
        w = sc.sm_mass[i] / sc.count[i]
        mt += w
        cx += w * x[i, 0]
        cy += w * x[i, 1]
        cz += w * x[i, 2]
        rx += w * px
        ry += w * py
        rz += w * pz
        if i < hi:
            px, py, pz = _advance(i, m, sc, px, py, pz)
    return mt, cx / mt, cy / mt, cz / mt, rx / mt, ry / mt, rz / mt


@njit(**_INLINE)
def _match_region(k, lo, hi, m, st, sc):
    """Goal positions of region ``k`` (particles ``lo..hi``) added to ``sc.goal``."""
    x = st.x
    mt, cx, cy, cz, rx, ry, rz = _region_sums(lo, hi, m, st, sc)
    a = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    px = py = pz = 0.0
    for i in range(lo, hi + 1):
        w = sc.sm_mass[i] / sc.count[i]
        a = add_moment(a, x[i, 0] - cx, x[i, 1] - cy, x[i, 2] - cz,
                       w * (px - rx), w * (py - ry), w * (pz - rz))
        if i < hi:
            px, py, pz = _advance(i, m, sc, px, py, pz)
    q = st.quat
    qw, qx_, qy_, qz_ = rotation_of_moment(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                                           q[k, 0], q[k, 1], q[k, 2], q[k, 3])
    q[k, 0], q[k, 1], q[k, 2], q[k, 3] = qw, qx_, qy_, qz_
    px = py = pz = 0.0
    for i in range(lo, hi + 1):
        gx, gy, gz = quat_rotate(qw, qx_, qy_, qz_, px - rx, py - ry, pz - rz)
        sc.goal[i, 0] += gx + cx
        sc.goal[i, 1] += gy + cy
        sc.goal[i, 2] += gz + cz
        if i < hi:
            px, py, pz = _advance(i, m, sc, px, py, pz)


@njit(**_OPTS)
def shape_match(a, b, m, st, sc, alpha):
    """One shape-matching pass over chain ``a..b``: regions, goals, and
    ``x += alpha (goal - x)`` for the free particles."""
    for i in range(a, b):
        e = m.vertex_edge[i]
        sc.scale[e] = natural_scale(e, m, st)
    for i in range(a, b + 1):
        sc.count[i] = 0.0
        held = m.inv_mass[i] == 0.0 or m.vertex_tie[i] >= 0   # a tie holds like a clamp
        sc.sm_mass[i] = m.mass[i] * sc.sm_weight[i] * (HELD_WEIGHT if held else 1.0)
        sc.goal[i, 0] = 0.0
        sc.goal[i, 1] = 0.0
        sc.goal[i, 2] = 0.0
    for k in range(a, b + 1):
        w = m.sm_half_width[k]
        for i in range(max(a, k - w), min(b, k + w) + 1):
            sc.count[i] += 1.0
    for k in range(a, b + 1):
        w = m.sm_half_width[k]
        _match_region(k, max(a, k - w), min(b, k + w), m, st, sc)
    x = st.x
    for i in range(a, b + 1):
        if m.inv_mass[i] > 0.0 and m.vertex_tie[i] < 0:
            c = 1.0 / sc.count[i]
            for r in range(3):
                x[i, r] += alpha * (sc.goal[i, r] * c - x[i, r])


@njit(**_INLINE)
def _collide(a, b, m, st, sc):
    """Phase 5: free particles of chain ``a..b`` pushed out of the colliders."""
    for i in range(a, b + 1):
        sc.depth[i] = 0.0
        if m.inv_mass[i] == 0.0:
            continue
        collide_point(i, st.x, m.vertex_radius[i], m.planes, m.spheres, m.capsules,
                      m.collider_friction, sc.depth, sc.normal, sc.mu)
        f = m.vertex_friction[i]
        if sc.depth[i] > 0.0 and f == f:  # the strand's coefficient combines with the collider's
            sc.mu[i] = math.sqrt(f * sc.mu[i])


@njit(**_INLINE)
def _velocity(a, b, m, st, sc, p, collide):
    """Phase 6: velocities from the displacement, the rebound, and contact friction."""
    x, v = st.x, st.v
    inv_h = 1.0 / p.h
    for i in range(a, b + 1):
        for r in range(3):
            v[i, r] = (x[i, r] - sc.x_old[i, r]) * inv_h + sc.dv[i, r]
            sc.dv[i, r] = 0.0
        if collide and sc.depth[i] > 0.0:
            vn = v[i, 0] * sc.normal[i, 0] + v[i, 1] * sc.normal[i, 1] + v[i, 2] * sc.normal[i, 2]
            if vn < 0.0:
                for r in range(3):
                    v[i, r] -= vn * sc.normal[i, r]
            contact_friction(i, v, sc.depth, sc.normal, sc.mu, p.h)


@njit(**_OPTS)
def _step_chain(c, phases, m, st, sc, p):
    """The phases ``phases`` (a bit mask) on chain ``c``; returns the segments torn."""
    a = st.chain_start[c]
    b = st.chain_start[c + 1] - 1
    torn = 0
    if phases & PH_TWIST_FORCE:
        twist_forces(a, b, m, st, sc.f_twist, sc.k_twist)
    if phases & PH_INTEGRATE:
        _integrate(a, b, m, st, sc, p)
    if phases & PH_SHAPE:
        for _ in range(p.sm_iterations):
            shape_match(a, b, m, st, sc, p.alpha)
    if phases & PH_TENSION:
        torn = tension_phase(a, b, m, st, sc, p, c, not (phases & PH_NO_LIMIT),
                             (phases & PH_DEFER_TEAR) != 0)
    collide = m.collider_friction.shape[0] > 0
    if phases & PH_COLLIDE and collide:
        _collide(a, b, m, st, sc)
    if phases & PH_VELOCITY:
        _velocity(a, b, m, st, sc, p, collide)
    if phases & PH_TWIST:
        update_frames(a, b, m, st, sc.x_old, sc.twist_target)
        average_twist(a, b, m, st, sc.tw_goal, sc.tw_count, p.twist_iterations)
    return torn


# ------------------------------------------------------------------------------- drivers
@njit(cache=True, error_model="numpy", parallel=True)
def step_chains(phases, model, state, scratch, params):
    """Run ``phases`` on every chain, in parallel over chains; returns the segments torn."""
    torn = 0
    for c in prange(params.n_chains):
        torn += _step_chain(c, phases, model, state, scratch, params)
    return torn


@njit(**_OPTS)
def step_chains_serial(phases, model, state, scratch, params):
    """Serial twin of :func:`step_chains` (the same numbers; no threads for small models)."""
    torn = 0
    for c in range(params.n_chains):
        torn += _step_chain(c, phases, model, state, scratch, params)
    return torn


@njit(**_OPTS)
def renumber_chains(strand_vertex_start, vertex_edge, torn, chain_start, chain_strand):
    """Chains from the torn flags: a new chain at every strand start and after every torn
    segment.  Fills ``chain_start`` [V + 1] and ``chain_strand`` [V]; returns their count."""
    n = 0
    for s in range(strand_vertex_start.shape[0] - 1):
        for i in range(strand_vertex_start[s], strand_vertex_start[s + 1]):
            if i == strand_vertex_start[s] or torn[vertex_edge[i - 1]]:
                chain_start[n] = i
                chain_strand[n] = s
                n += 1
    chain_start[n] = strand_vertex_start[strand_vertex_start.shape[0] - 1]
    return n


@njit(**_OPTS)
def check_state(m, st, max_strain, max_speed):
    """``(code, index, value)``: the first non-finite particle (CHECK_NONFINITE, vertex), the
    largest strain ``|e| / L_max - 1`` of an untorn segment above ``max_strain``
    (CHECK_STRAIN, vertex at its start, strain) or the largest speed above ``max_speed``
    (CHECK_SPEED, vertex, m/s); ``(CHECK_OK, -1, 0)`` otherwise."""
    x, v = st.x, st.v
    n = x.shape[0]
    for i in range(n):
        for r in range(3):
            if not (np.isfinite(x[i, r]) and np.isfinite(v[i, r])):
                return CHECK_NONFINITE, i, 0.0
    worst, at = max_strain, -1
    for i in range(n):
        e = m.vertex_edge[i]
        if e >= 0 and not st.torn[e]:
            s = segment_length(x, i) / (m.rest_length[e] * natural_scale(e, m, st)) - 1.0
            if s > worst:
                worst, at = s, i
    if at >= 0:
        return CHECK_STRAIN, at, worst
    worst = max_speed
    for i in range(n):
        s = math.sqrt(v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        if s > worst:
            worst, at = s, i
    if at >= 0:
        return CHECK_SPEED, at, worst
    return CHECK_OK, -1, 0.0
