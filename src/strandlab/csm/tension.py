"""Strain limiting, tension, the stress-strain curve, tearing and flicking (section 5 of
Rungjiratananon et al. 2011), per chain ``a..b`` (vertices; segment ``vertex_edge[i]`` joins
``i`` and ``i + 1``).

Strain limiting keeps every segment no longer than its maximum length
``L_max = L0 (1 + eps_p + sigma / E)``: it projects the positions it starts from onto these
lengths, with a multiplier ``lam >= 0`` [m kg] per segment (its tension times ``h^2``; a
segment may pull, never push).  Three solvers, ``iterations`` passes each:

- ``newton`` (default): Newton's method on the whole chain, with the geometric stiffness of the
  taut segments, warm-started at the stored tensions (:mod:`.length_newton`);
- ``direct``: per pass, the linearised constraints of all stretched segments of the chain
  and of the taut ones (within ``TAUT`` of their maximum length) solved together (a
  tridiagonal system in the segments' multipliers, Thomas algorithm), then applied; a segment
  whose multiplier would push its ends apart is left free and the system solved again.  It
  reaches the maximum lengths of short chains that Gauss-Seidel approaches only after about
  ``n^2`` passes, but the linearisation diverges on long hanging ones (see
  :mod:`.length_newton`);
- ``gauss-seidel`` (the paper's): one projection per segment, segment after segment,
  alternately forward and backward.

All move the two particles of a segment in proportion to their inverse masses along the
segment (equal and opposite), so every projection keeps the linear momentum, and the angular
momentum to first order in the moves (exactly for one pass of ``direct`` or ``newton`` from
the starting positions).  Each constraint has the compliance of the segment's material
(:func:`~.segment.compliance`): negligible for a string that can meet its lengths, it keeps
the system solvable and bounds each pass's multiplier of a string stretched between held
particles to its elastic force (it regularises each pass: the elastic elongation of the stored
tension is already in ``L_max``).  The multipliers add up in ``sc.lam_total``; the
tension (eq. 8) is ``k_stiff dl`` with ``k_stiff = tension_scale mu / h^2`` (``mu`` the segment's
reduced mass: the force that makes a correction ``dl`` in one substep) and ``dl`` the
segment's own corrections ``lam / mu`` (impulse mode: ``T = tension_scale lam / h^2``) or its
unconstrained minus its constrained length (length mode, eq. 8 as printed).
"""
from __future__ import annotations

import math

from numba import njit

from .length_newton import MAX_RESOLVES, TAUT, TOLERANCE, newton_pass
from .model import TENSION_IMPULSE
from .segment import compliance, natural_scale, segment_length, stress

__all__ = ["natural_scale", "segment_length", "length_init", "strain_limit", "tension_phase",
           "tear",
           "LENGTH_GAUSS_SEIDEL", "LENGTH_DIRECT", "LENGTH_NEWTON"]

LENGTH_GAUSS_SEIDEL = 0
LENGTH_DIRECT = 1
LENGTH_NEWTON = 2

_OPTS = {"cache": True, "error_model": "numpy"}
_INLINE = {"cache": True, "error_model": "numpy", "inline": "always"}

#: A segment whose tension estimate falls below this fraction of its stored tension is released.
RELEASED = 0.5


@njit(**_INLINE)
def _unit_excess(i, m, st, sc):
    """Unit vector of segment ``i`` (three floats) and its excess length over ``L_max`` [m]
    (``sc.scale`` holds the maximum over the rest lengths)."""
    x = st.x
    e = m.vertex_edge[i]
    dx = x[i + 1, 0] - x[i, 0]
    dy = x[i + 1, 1] - x[i, 1]
    dz = x[i + 1, 2] - x[i, 2]
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    if ln <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    return dx / ln, dy / ln, dz / ln, ln - m.rest_length[e] * sc.scale[e]


@njit(**_INLINE)
def _pull(i, w, lam, nx, ny, nz, x):
    """Apply the multiplier ``lam`` [m kg] of segment ``i`` (unit direction ``n`` from ``i`` to
    ``i + 1``): its particles move towards each other by their inverse masses ``w``."""
    x[i, 0] += w[i] * lam * nx
    x[i, 1] += w[i] * lam * ny
    x[i, 2] += w[i] * lam * nz
    x[i + 1, 0] -= w[i + 1] * lam * nx
    x[i + 1, 1] -= w[i + 1] * lam * ny
    x[i + 1, 2] -= w[i + 1] * lam * nz


@njit(**_INLINE)
def _limit_segment(i, m, st, sc, h):
    """Project segment ``vertex_edge[i]`` (``i`` to ``i + 1``) onto its maximum length, a
    compliant constraint whose multiplier accumulates in ``sc.lam_total`` (never pushing)."""
    e = m.vertex_edge[i]
    wa, wb = m.inv_mass[i], m.inv_mass[i + 1]
    total = sc.lam_total[e]
    nx, ny, nz, c = _unit_excess(i, m, st, sc)
    if wa + wb <= 0.0 or (c <= 0.0 and total <= 0.0) or \
            (nx == 0.0 and ny == 0.0 and nz == 0.0):
        return
    comp = compliance(e, m, st, h)
    lam = max(c / (wa + wb + comp), -total)
    _pull(i, m.inv_mass, lam, nx, ny, nz, st.x)
    sc.lam_total[e] = total + lam


@njit(**_OPTS)
def _gauss_seidel(a, b, m, st, sc, it, h):
    """One Gauss-Seidel pass, forward when ``it`` is even, else backward."""
    if it % 2 == 0:
        for i in range(a, b):
            _limit_segment(i, m, st, sc, h)
    else:
        for i in range(b - 1, a - 1, -1):
            _limit_segment(i, m, st, sc, h)


@njit(**_OPTS)
def _solve(a, b, m, st, sc, h):
    """The tridiagonal system of the active segments of chain ``a..b`` (``sc.active``), from
    the directions ``sc.dirs`` and excess lengths ``sc.excess``, into ``sc.lam`` (Thomas
    algorithm: modified upper diagonal in ``sc.tri_c``, right-hand side in ``sc.tri_d``).
    Returns the number of active multipliers whose total came out negative (pushing apart);
    those segments are made inactive."""
    w = m.inv_mass
    for i in range(a, b):
        e = m.vertex_edge[i]
        act = sc.active[e] > 0.0
        diag, c, lower, upper = 1.0, 0.0, 0.0, 0.0
        if act:
            comp = compliance(e, m, st, h)
            diag, c = w[i] + w[i + 1] + comp, sc.excess[e]
            if i > a and sc.active[m.vertex_edge[i - 1]] > 0.0:
                ep = m.vertex_edge[i - 1]
                lower = -w[i] * (sc.dirs[ep, 0] * sc.dirs[e, 0] + sc.dirs[ep, 1] * sc.dirs[e, 1]
                                 + sc.dirs[ep, 2] * sc.dirs[e, 2])
            if i + 1 < b and sc.active[m.vertex_edge[i + 1]] > 0.0:
                en = m.vertex_edge[i + 1]
                upper = -w[i + 1] * (sc.dirs[en, 0] * sc.dirs[e, 0]
                                     + sc.dirs[en, 1] * sc.dirs[e, 1]
                                     + sc.dirs[en, 2] * sc.dirs[e, 2])
        den, rhs = diag, c
        if i > a:
            ep = m.vertex_edge[i - 1]
            den -= lower * sc.tri_c[ep]
            rhs -= lower * sc.tri_d[ep]
        sc.tri_d[e] = rhs / den
        sc.tri_c[e] = upper / den
    nxt = 0.0
    pushing = 0
    for i in range(b - 1, a - 1, -1):
        e = m.vertex_edge[i]
        lam = sc.tri_d[e] - sc.tri_c[e] * nxt
        sc.lam[e] = lam
        nxt = lam
        if sc.active[e] > 0.0 and lam + sc.lam_total[e] < 0.0:
            sc.active[e] = 0.0
            pushing += 1
    return pushing


@njit(**_OPTS)
def _direct(a, b, m, st, sc, h):
    """One pass of the linearised direct solver on chain ``a..b`` (see the module docstring).

    Unknowns: the multiplier ``lam_i`` [m kg] of each segment, ``dx_j = -w_j sum_i lam_i
    grad_j C_i``; active rows (stretched or taut segments with a free end) ask for
    ``C_i + grad C_i . dx - alpha_i lam_i = 0`` (the compliance regularises each pass), the
    others read ``lam_i = 0``.  A segment whose
    multiplier comes out pushing its ends apart is made inactive and the system solved again
    (at most ``MAX_RESOLVES`` times), so that no multiplier is dropped after its neighbours
    counted on it.
    """
    w = m.inv_mass
    for i in range(a, b):
        e = m.vertex_edge[i]
        nx, ny, nz, c = _unit_excess(i, m, st, sc)
        sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2] = nx, ny, nz
        sc.excess[e] = c
        taut = c > -TAUT * m.rest_length[e] and w[i] + w[i + 1] > 0.0
        sc.active[e] = 1.0 if taut else 0.0
    for _ in range(MAX_RESOLVES):
        if _solve(a, b, m, st, sc, h) == 0:
            break
    # apply all along the directions they were solved for (exact momenta)
    for i in range(a, b):
        e = m.vertex_edge[i]
        lam = max(sc.lam[e], -sc.lam_total[e]) if sc.active[e] > 0.0 else 0.0
        if lam == 0.0:
            continue
        _pull(i, w, lam, sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2], st.x)
        sc.lam_total[e] += lam


@njit(**_OPTS)
def length_init(a, b, m, st, sc, solver, h, warm):
    """Start the strain limiting of chain ``a..b``: the current positions into
    ``sc.x_free``, the maximum lengths over the rest lengths into ``sc.scale``, and the
    multipliers ``sc.lam_total`` [m kg] at 0, or for the Newton solver at ``warm T h^2``
    (``T`` the stored tension [N], ``warm`` = ``1 / tension_scale``)."""
    for i in range(a, b + 1):
        for r in range(3):
            sc.x_free[i, r] = st.x[i, r]
    for i in range(a, b):
        e = m.vertex_edge[i]
        sc.scale[e] = natural_scale(e, m, st)
        sc.lam_total[e] = warm * st.tension[e] * h * h if solver == LENGTH_NEWTON else 0.0


@njit(**_OPTS)
def strain_limit(a, b, m, st, sc, iterations, solver, h, warm=0.0):
    """Strain limiting of chain ``a..b`` over a substep ``h`` [s]: ``iterations`` passes of
    ``solver`` (LENGTH_NEWTON, LENGTH_DIRECT or LENGTH_GAUSS_SEIDEL) from the current
    positions (:func:`length_init`; ``warm`` = ``1 / tension_scale``, 0: no warm start)."""
    length_init(a, b, m, st, sc, solver, h, warm)
    full = False
    for it in range(iterations):
        if solver == LENGTH_NEWTON:
            # once a full Newton step has been taken, stop when the lengths are met
            step = newton_pass(a, b, m, st, sc, h, TOLERANCE if full else -1.0)
            if step == 0.0:
                break
            full = step == 1.0
        elif solver == LENGTH_DIRECT:
            _direct(a, b, m, st, sc, h)
        else:
            _gauss_seidel(a, b, m, st, sc, it, h)


@njit(**_INLINE)
def _rebound(i, e, release, span, m, st, sc, p):
    """Flicking: segment ``e`` (``i`` to ``i + 1``) released ``release`` [N] of tension.  The
    tension acts as the bouncing-back force (the paper) for the time the release takes to run
    along the string and back, ``2 span / c`` (``span`` [m] the chain's rest length,
    ``c = sqrt(E / rho)`` the speed of sound in it): equal and opposite impulses on the two
    particles, towards each other (momentum kept).  Inside a uniformly tensed string they
    cancel; they throw the ends back, with the impulse ``T 2 L / c`` of a released elastic
    string, whose energy ``T^2 L / (2 E A)`` a heavy end takes (``flick_scale`` scales it)."""
    wa, wb = m.inv_mass[i], m.inv_mass[i + 1]
    if wa + wb <= 0.0:
        return
    rho = m.edge_mass[e] / (m.area0[e] * m.rest_length[e])
    impulse = p.flick_scale * release * 2.0 * span / math.sqrt(m.young[e] / rho)
    ln = segment_length(st.x, i)
    if ln <= 0.0:
        return
    for r in range(3):
        n = (st.x[i + 1, r] - st.x[i, r]) / ln
        sc.dv[i, r] += wa * impulse * n
        sc.dv[i + 1, r] -= wb * impulse * n


@njit(**_INLINE)
def _tension(i, m, st, sc, p):
    """Eq. (8) for segment ``vertex_edge[i]``: ``T = k_stiff * dl`` with
    ``k_stiff = tension_scale * mu / h^2`` [N/m] (the force that makes the correction ``dl`` in
    one substep) and ``dl`` its own length corrections (impulse mode) or the positive part of
    its unconstrained minus its constrained length (length mode)."""
    e = m.vertex_edge[i]
    wa, wb = m.inv_mass[i], m.inv_mass[i + 1]
    if wa + wb <= 0.0:
        return 0.0
    if p.tension_mode == TENSION_IMPULSE:
        return p.tension_scale * sc.lam_total[e] / (p.h * p.h)
    dl = max(0.0, segment_length(sc.x_free, i) - segment_length(st.x, i))
    return p.tension_scale * dl / ((wa + wb) * p.h * p.h)


@njit(**_OPTS)
def tension_phase(a, b, m, st, sc, p, chain, limit=True, defer=False):
    """Phase 4 on chain ``a..b`` (number ``chain``): strain limiting (unless ``limit`` is
    false: done already, with the clusters), then per segment the tension estimate
    (eq. 8) and its stress, plastic elongation past the yield stress, tearing past the
    rupture stress (one per chain and substep: the most overstressed); the stored tension
    ``st.tension`` (which sets the stress and the elastic part of the maximum length) follows
    the estimates at the rate ``tension_rate`` per substep, and while a segment is released
    (its estimate below ``RELEASED`` times the stored tension) the tension it lets go throws
    its ends back (flicking).  Returns the number of segments torn; the segment that tears or
    would tear (``defer``: the caller chooses one per group of chains tied together) and its
    stress over its rupture stress go to ``sc.tear_at[chain]`` (-1: none) and
    ``sc.tear_ratio[chain]``."""
    if limit:
        strain_limit(a, b, m, st, sc, p.length_iterations, p.length_solver, p.h, p.warm)
    torn = 0
    worst, at = 1.0, -1
    span = 0.0
    for i in range(a, b):
        span += m.rest_length[m.vertex_edge[i]]
    for i in range(a, b):
        e = m.vertex_edge[i]
        t_new = _tension(i, m, st, sc, p)
        t_old = st.tension[e]
        # the stored tension follows the estimates over ``tension_time``
        t = t_old + p.tension_rate * (t_new - t_old)
        st.tension[e] = t
        if p.flicking and t_new < RELEASED * t_old:
            # released: the tension let go throws the segment's ends back (flicking)
            _rebound(i, e, t_old - t, span, m, st, sc, p)
        sigma = stress(e, t, m, st)
        if p.plasticity and sigma > m.yield_stress[e]:
            # bilinear curve: total strain sigma_y / E + (sigma - sigma_y) / E_p, of which
            # sigma / E comes back on unloading
            eps = (sigma - m.yield_stress[e]) * (1.0 / m.plastic_modulus[e] - 1.0 / m.young[e])
            st.plastic_strain[e] = max(st.plastic_strain[e], eps)
        # tearing: the stored stress and this substep's estimate both past the rupture stress
        # (not one noisy estimate; not the stored tension of a piece already let go)
        sigma_tear = stress(e, min(t, t_new), m, st)
        if p.tearing and sigma_tear > worst * st.rupture[e]:
            worst, at = sigma_tear / st.rupture[e], i
    if at >= 0 and not defer:
        # one tear per chain and substep, where the stress is furthest past the rupture
        # stress: the tension of the rest of the chain is gone with it
        tear(at, m, st)
        torn = 1
    sc.tear_at[chain] = at
    sc.tear_ratio[chain] = worst
    return torn


@njit(**_INLINE)
def tear(i, m, st):
    """Tear segment ``vertex_edge[i]``: its tension is gone."""
    e = m.vertex_edge[i]
    st.torn[e] = True
    st.tension[e] = 0.0
