"""Strain limiting, tension, the stress-strain curve, tearing and flicking (section 5 of
Rungjiratananon et al. 2011), per chain ``a..b`` (vertices; segment ``vertex_edge[i]`` joins
``i`` and ``i + 1``).

Strain limiting keeps every segment no longer than its maximum length
``L_max = L0 (1 + eps_p + sigma / E)``.  Two solvers, ``iterations`` passes each:

- ``gauss-seidel`` (the paper's): one projection per segment, segment after segment,
  alternately forward and backward;
- ``direct``: per pass, the linearised constraints of all stretched segments of the chain
  and of the taut ones (within ``TAUT`` of their maximum length) solved together (a
  tridiagonal system in the segments' multipliers, Thomas algorithm), then applied; a segment
  whose multiplier would push its ends apart is left free.  It reaches the
  maximum lengths of long chains that Gauss-Seidel approaches only after about ``n^2`` passes.

Both move the two particles of a segment in proportion to their inverse masses along the
segment, so every projection keeps the linear and angular momentum of the chain.  Each
segment's own length corrections add up in ``correction`` [m]; the tension (eq. 8) is
``k_stiff dl`` with ``k_stiff = tension_scale mu / h^2`` (``mu`` the segment's reduced mass: the
force that makes a correction ``dl`` in one substep) and ``dl`` those corrections (impulse
mode) or the unconstrained minus constrained length (length mode, eq. 8 as printed).
"""
from __future__ import annotations

import math

from numba import njit

from .model import TENSION_IMPULSE

__all__ = ["natural_scale", "segment_length", "strain_limit", "tension_phase",
           "LENGTH_GAUSS_SEIDEL", "LENGTH_DIRECT"]

LENGTH_GAUSS_SEIDEL = 0
LENGTH_DIRECT = 1

_OPTS = {"cache": True, "error_model": "numpy"}

#: The direct solver includes segments within this fraction of their maximum length (taut),
#: so that a correction carries through a run of segments that are exactly at their length.
TAUT = 1e-3


@njit(**_OPTS)
def _stress(e, tension, m, st):
    """Stress [Pa] of segment ``e`` under ``tension`` [N] on its current (thinned) section."""
    return tension * (1.0 + st.plastic_strain[e]) / m.area0[e]


@njit(**_OPTS)
def natural_scale(e, m, st):
    """Maximum length of segment ``e`` over its rest length: ``1 + eps_p + sigma / E`` (the
    permanent strain plus the elastic strain of its last stress)."""
    s = _stress(e, st.tension[e], m, st)
    return 1.0 + st.plastic_strain[e] + max(s, 0.0) / m.young[e]


@njit(**_OPTS)
def _limit_segment(i, m, st, sc):
    """Project segment ``vertex_edge[i]`` (``i`` to ``i + 1``) onto its maximum length."""
    x = st.x
    e = m.vertex_edge[i]
    dx = x[i + 1, 0] - x[i, 0]
    dy = x[i + 1, 1] - x[i, 1]
    dz = x[i + 1, 2] - x[i, 2]
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    lmax = m.rest_length[e] * natural_scale(e, m, st)
    wa, wb = m.inv_mass[i], m.inv_mass[i + 1]
    if ln > lmax and wa + wb > 0.0:
        c = (ln - lmax) / (ln * (wa + wb))
        x[i, 0] += wa * c * dx
        x[i, 1] += wa * c * dy
        x[i, 2] += wa * c * dz
        x[i + 1, 0] -= wb * c * dx
        x[i + 1, 1] -= wb * c * dy
        x[i + 1, 2] -= wb * c * dz
        sc.correction[e] += ln - lmax


@njit(**_OPTS)
def _gauss_seidel(a, b, m, st, sc, it):
    """One Gauss-Seidel pass, forward when ``it`` is even, else backward."""
    if it % 2 == 0:
        for i in range(a, b):
            _limit_segment(i, m, st, sc)
    else:
        for i in range(b - 1, a - 1, -1):
            _limit_segment(i, m, st, sc)


@njit(**_OPTS)
def _unit_excess(i, m, st):
    """Unit vector of segment ``i`` (three floats) and its excess length over ``L_max`` [m]."""
    x = st.x
    e = m.vertex_edge[i]
    dx = x[i + 1, 0] - x[i, 0]
    dy = x[i + 1, 1] - x[i, 1]
    dz = x[i + 1, 2] - x[i, 2]
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    if ln <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    return dx / ln, dy / ln, dz / ln, ln - m.rest_length[e] * natural_scale(e, m, st)


@njit(**_OPTS)
def _direct(a, b, m, st, sc):
    """One pass of the direct solver on chain ``a..b`` (see the module docstring).

    Unknowns: the multiplier ``lam_i`` [m kg] of each segment, ``dx_j = w_j sum_i lam_i
    grad_j C_i``; rows of segments that are not stretched (or whose ends are both held) read
    ``lam_i = 0``.  Forward elimination keeps the modified upper diagonal in ``sc.tri_c`` and
    right-hand side in ``sc.tri_d``; ``sc.lam`` receives the solution.
    """
    w = m.inv_mass
    px = py = pz = 0.0
    prev_active = False
    for i in range(a, b):
        e = m.vertex_edge[i]
        nx, ny, nz, c = _unit_excess(i, m, st)
        diag = w[i] + w[i + 1]
        active = c > -TAUT * m.rest_length[e] and diag > 0.0
        lower = 0.0
        if active and prev_active:
            lower = -w[i] * (px * nx + py * ny + pz * nz)
        if not active:
            diag, c = 1.0, 0.0
        # upper coupling to the next segment, set when it is active (checked there): use the
        # symmetric value from this side, the next row's lower = this row's upper
        if i > a:
            ep = m.vertex_edge[i - 1]
            den = diag - lower * sc.tri_c[ep]
            rhs = -c - lower * sc.tri_d[ep]
        else:
            den = diag
            rhs = -c
        sc.tri_d[e] = rhs / den
        upper = 0.0
        if active and i + 1 < b:
            qx, qy, qz, cn = _unit_excess(i + 1, m, st)
            if cn > -TAUT * m.rest_length[m.vertex_edge[i + 1]] and w[i + 1] + w[i + 2] > 0.0:
                upper = -w[i + 1] * (nx * qx + ny * qy + nz * qz)
        sc.tri_c[e] = upper / den
        sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2] = nx, ny, nz
        px, py, pz = nx, ny, nz
        prev_active = active
    nxt = 0.0
    for i in range(b - 1, a - 1, -1):
        e = m.vertex_edge[i]
        lam = sc.tri_d[e] - sc.tri_c[e] * nxt
        sc.lam[e] = lam
        nxt = lam
    # apply all along the directions they were solved for (exact momenta); a multiplier that
    # would push the ends apart (lam > 0) is dropped
    for i in range(a, b):
        e = m.vertex_edge[i]
        lam = min(sc.lam[e], 0.0)
        if lam == 0.0:
            continue
        nx, ny, nz = sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2]
        st.x[i, 0] -= w[i] * lam * nx
        st.x[i, 1] -= w[i] * lam * ny
        st.x[i, 2] -= w[i] * lam * nz
        st.x[i + 1, 0] += w[i + 1] * lam * nx
        st.x[i + 1, 1] += w[i + 1] * lam * ny
        st.x[i + 1, 2] += w[i + 1] * lam * nz
        sc.correction[e] -= lam * (w[i] + w[i + 1])


@njit(**_OPTS)
def strain_limit(a, b, m, st, sc, iterations, solver):
    """Strain limiting of chain ``a..b``: ``iterations`` passes of ``solver``
    (LENGTH_GAUSS_SEIDEL or LENGTH_DIRECT); ``sc.correction`` accumulates each segment's own
    length corrections [m]."""
    for i in range(a, b):
        sc.correction[m.vertex_edge[i]] = 0.0
    for it in range(iterations):
        if solver == LENGTH_DIRECT:
            _direct(a, b, m, st, sc)
        else:
            _gauss_seidel(a, b, m, st, sc, it)


@njit(**_OPTS)
def segment_length(x, i):
    """Length of the segment from ``x[i]`` to ``x[i + 1]`` [m]."""
    dx = x[i + 1, 0] - x[i, 0]
    dy = x[i + 1, 1] - x[i, 1]
    dz = x[i + 1, 2] - x[i, 2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(**_OPTS)
def _rebound(i, e, release, m, st, sc, p):
    """Flicking: segment ``e`` (``i`` to ``i + 1``) released ``release`` [N] of tension; its
    particles gain the relative velocity ``release / sqrt(mu k)`` towards each other
    (``mu`` the reduced mass, ``k = E A / L0``: the stored elastic energy
    ``release^2 / (2 k)`` as kinetic energy of the pair), split by mass (momentum kept)."""
    wa, wb = m.inv_mass[i], m.inv_mass[i + 1]
    if wa + wb <= 0.0:
        return
    mu = 1.0 / (wa + wb)
    k = m.young[e] * m.area0[e] / ((1.0 + st.plastic_strain[e]) * m.rest_length[e])
    dv = p.flick_scale * release / math.sqrt(mu * k)
    ln = segment_length(st.x, i)
    if ln <= 0.0:
        return
    for r in range(3):
        n = (st.x[i + 1, r] - st.x[i, r]) / ln
        sc.dv[i, r] += wa * mu * dv * n
        sc.dv[i + 1, r] -= wb * mu * dv * n


@njit(**_OPTS)
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
        dl = sc.correction[e]
    else:
        dl = max(0.0, segment_length(sc.x_free, i) - segment_length(st.x, i))
    return p.tension_scale * dl / ((wa + wb) * p.h * p.h)


@njit(**_OPTS)
def tension_phase(a, b, m, st, sc, p):
    """Phase 4 on chain ``a..b``; returns the number of segments torn."""
    for i in range(a, b + 1):
        for r in range(3):
            sc.x_free[i, r] = st.x[i, r]
    strain_limit(a, b, m, st, sc, p.length_iterations, p.length_solver)
    torn = 0
    for i in range(a, b):
        e = m.vertex_edge[i]
        t_new = _tension(i, m, st, sc, p)
        t_old = st.tension[e]
        sigma = _stress(e, t_new, m, st)
        if p.plasticity and sigma > m.yield_stress[e]:
            # bilinear curve: total strain sigma_y / E + (sigma - sigma_y) / E_p, of which
            # sigma / E comes back on unloading
            eps = (sigma - m.yield_stress[e]) * (1.0 / m.plastic_modulus[e] - 1.0 / m.young[e])
            st.plastic_strain[e] = max(st.plastic_strain[e], eps)
        if p.tearing and sigma > st.rupture[e]:
            st.torn[e] = True
            st.tension[e] = 0.0
            torn += 1
            continue
        st.tension[e] = t_new
        if p.flicking and t_old > t_new:
            _rebound(i, e, t_old - t_new, m, st, sc, p)
    return torn
