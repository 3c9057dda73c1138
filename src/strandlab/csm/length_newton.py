"""Strain limiting of one chain by Newton's method with geometric stiffness
(``length_solver = "newton"``, the default; docs/csm.md, "Strain limiting").

The strain limiting of a chain ``a..b`` (particles; segment ``k`` joins ``k`` and ``k + 1``)
projects the positions ``x_free`` it starts from onto the maximum lengths: it seeks positions
``x`` and multipliers ``lam >= 0`` [m kg] (the segments' tensions times ``h^2``) with

    R1 = M (x - x_free) + J^T lam = 0          (each particle moved by the pull of its segments)
    R2 = C(x) = 0                             (each taut segment at its maximum length)

where ``C_k = |x_{k+1} - x_k| - L_max`` and ``J`` its gradient (rows ``-d_k``, ``+d_k`` on the
segment's particles, ``d_k`` its unit direction).  A Newton pass solves

    [ M + G   J^T    ] [dx  ]     [R1]
    [ J      -alpha  ] [dlam] = - [R2],       G = sum_k lam_k (I - d_k d_k^T) / l_k  (blocks
                                              +, -, -, + on the segment's two particles)

with the compliance ``alpha = L / (E A h^2)`` [1/kg] of each segment regularising the pass
(negligible where the lengths can be met; for a string stretched between held particles it
bounds each pass's multiplier to the elastic force).  The elastic elongation of the stored
tension is part of ``L_max``, so the compliance does not act on the total multiplier (that
would count it twice, or, about the warm start, make every release an elastic recoil: the
flicking model's business).

``G`` is the geometric stiffness: a taut segment resists sideways motion of its particles
relative to each other, to second order in the motion (its length grows by ``s^2 / (2 l)``
for a sideways shift ``s``).  The linearised (Gauss-Newton) solve of the ``"direct"`` solver
leaves it out; with a long run of taut, nearly straight segments it then finds it cheaper to
shorten a stretched segment by shifting its particles sideways (by ``excess / angle``, where
the angle between neighbouring segments is small) than by lifting the whole run, and moves
them by more than a segment: the next step's velocities amplify the zigzag and the string
diverges.  With ``G`` the sideways shift costs ``lam s^2 / (2 l)``, which the tension of a
hanging string makes large.  The multipliers start from the stored tensions
(``lam = T h^2 / tension_scale``, a warm start), so that ``G`` is known in the first pass.

The matrix is block tridiagonal with 4 x 4 blocks ``(dx_k, dlam_k)`` and quasi-definite
(positive definite position part, negative definite multiplier part), so block elimination
without pivoting is stable: each block's 3 x 3 position part stays positive definite.  Only
the position part of the next block changes in the elimination, and each step needs the
inverse of one symmetric 3 x 3 matrix, written out in scalars.  Segments are *active* when
taut (within ``TAUT`` of their maximum length) or carrying tension; an active segment whose
total multiplier would push its particles apart is released (its multiplier set to zero) and
the system solved again.  Held particles (inverse mass 0) do not move.  Each pass keeps the
linear momentum ``sum m (x - x_free)`` at zero (``G`` and ``J^T`` move no mass centre).
"""
from __future__ import annotations

import math

from numba import njit

from .segment import compliance

__all__ = ["newton_pass", "TAUT", "MAX_RESOLVES", "TOLERANCE"]

_OPTS = {"cache": True, "error_model": "numpy"}
_INLINE = {"cache": True, "error_model": "numpy", "inline": "always"}

#: Segments within this fraction of their maximum length count as taut (active).
TAUT = 1e-3
#: Solves at most per pass (each releases the segments found pushing).
MAX_RESOLVES = 30
#: Passes stop once every taut segment is within this fraction of its rest length of its
#: (compliant) maximum length, after a full Newton step.
TOLERANCE = 1e-5
#: Largest sideways move of a segment's particles relative to each other in one pass, over
#: its length.
MAX_SIDEWAYS = 0.25


@njit(cache=True, error_model="numpy", inline="always")
def _sym_inverse(s00, s01, s02, s11, s12, s22):
    """Inverse of the symmetric 3 x 3 matrix ``S`` (upper entries), as six upper entries."""
    c00 = s11 * s22 - s12 * s12
    c01 = s02 * s12 - s01 * s22
    c02 = s01 * s12 - s02 * s11
    c11 = s00 * s22 - s02 * s02
    c12 = s01 * s02 - s00 * s12
    c22 = s00 * s11 - s01 * s01
    inv = 1.0 / (s00 * c00 + s01 * c01 + s02 * c02)
    return c00 * inv, c01 * inv, c02 * inv, c11 * inv, c12 * inv, c22 * inv


@njit(cache=True, error_model="numpy", inline="always")
def _sym_apply(i00, i01, i02, i11, i12, i22, u0, u1, u2):
    """``S^-1 u`` for the symmetric inverse (six upper entries)."""
    return (i00 * u0 + i01 * u1 + i02 * u2, i01 * u0 + i11 * u1 + i12 * u2,
            i02 * u0 + i12 * u1 + i22 * u2)


@njit(**_INLINE)
def _segment(k, m, st, sc):
    """Unit direction, length [m] and excess length over ``L_max`` [m] of segment ``k``
    (from its particles' positions); the maximum length comes from ``sc.scale``."""
    x = st.x
    e = m.vertex_edge[k]
    dx = x[k + 1, 0] - x[k, 0]
    dy = x[k + 1, 1] - x[k, 1]
    dz = x[k + 1, 2] - x[k, 2]
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    if ln <= 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    return dx / ln, dy / ln, dz / ln, ln, ln - m.rest_length[e] * sc.scale[e]


@njit(**_OPTS)
def _prepare(a, b, m, st, sc):
    """Directions, lengths, excesses and active flags of the segments of chain ``a..b`` (into
    ``sc.dirs`` [E, 3], ``sc.seg_len``, ``sc.excess``, ``sc.active``); returns the largest
    excess ``|C| / L0`` of the active segments (a slack one carrying no tension counts 0)."""
    w = m.inv_mass
    worst = 0.0
    for k in range(a, b):
        e = m.vertex_edge[k]
        nx, ny, nz, ln, c = _segment(k, m, st, sc)
        sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2] = nx, ny, nz
        sc.seg_len[e] = ln
        sc.excess[e] = c
        live = (c > -TAUT * m.rest_length[e] or sc.lam_total[e] > 0.0) and \
            w[k] + w[k + 1] > 0.0 and ln > 0.0
        sc.active[e] = 1.0 if live else 0.0
        if live:
            r = c
            if sc.lam_total[e] <= 0.0 and r < 0.0:
                r = 0.0                      # slack and carrying nothing: fine as it is
            worst = max(worst, abs(r) / m.rest_length[e])
    return worst


@njit(**_INLINE)
def _geometric(e, k, m, sc):
    """Geometric stiffness factor ``lam_k / l_k`` [kg] of segment ``e`` (particles ``k``,
    ``k + 1``); 0 when it carries no tension or is not active."""
    if sc.active[e] <= 0.0 or sc.lam_total[e] <= 0.0:
        return 0.0
    return sc.lam_total[e] / sc.seg_len[e]


@njit(**_OPTS)
def _eliminate(a, b, m, st, sc, h):
    """Forward elimination of the pass's system over chain ``a..b``: for every particle
    ``k`` its block's ``z_k = D_k^-1 r_k`` and ``Y_k = D_k^-1 U_k`` (the coupling to particle
    ``k + 1``) into ``sc.kkt[k]`` (``Y`` row-major 4 x 3 in 0..11, ``z`` in 12..15)."""
    w = m.inv_mass
    x, xf, kk = st.x, sc.x_free, sc.kkt
    for k in range(a, b + 1):
        free = w[k] > 0.0
        mk = m.mass[k]
        # diagonal position block K and residual r_x = -R1
        s00 = s11 = s22 = mk if free else 1.0
        s01 = s02 = s12 = 0.0
        r0 = r1 = r2 = 0.0
        if free:
            r0 = -mk * (x[k, 0] - xf[k, 0])
            r1 = -mk * (x[k, 1] - xf[k, 1])
            r2 = -mk * (x[k, 2] - xf[k, 2])
        for side in range(2):
            j = k - 1 + side           # segment j joins j and j + 1
            if j < a or j >= b or not free:
                continue
            e = m.vertex_edge[j]
            nx, ny, nz = sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2]
            g = _geometric(e, j, m, sc)
            s00 += g * (1.0 - nx * nx)
            s11 += g * (1.0 - ny * ny)
            s22 += g * (1.0 - nz * nz)
            s01 -= g * nx * ny
            s02 -= g * nx * nz
            s12 -= g * ny * nz
            # -J^T lam: grad_k C_j = -d (k = j) or +d (k = j + 1); fixed rows count with
            # their prescribed change
            lam = sc.lam_total[e]
            if sc.active[e] <= 0.0:
                lam += sc.lam[e]
            sgn = -1.0 if side == 1 else 1.0   # grad_k C_j: -d when k is j's first particle
            r0 -= sgn * lam * nx
            r1 -= sgn * lam * ny
            r2 -= sgn * lam * nz
        t = m.vertex_tie[k]
        if t >= 0 and free:
            # a tied end is its cluster: the rigid-body mass at the tie point, and the
            # momentum this strand gave it so far in place of M (x - x_free) (the other
            # strands' pulls on the cluster are in the positions: Gauss-Seidel)
            tm = sc.tie_mass
            s00 += tm[t, 0] - mk
            s11 += tm[t, 3] - mk
            s22 += tm[t, 5] - mk
            s01 += tm[t, 1]
            s02 += tm[t, 2]
            s12 += tm[t, 4]
            r0 += mk * (x[k, 0] - xf[k, 0]) - sc.tie_p[t, 0]
            r1 += mk * (x[k, 1] - xf[k, 1]) - sc.tie_p[t, 1]
            r2 += mk * (x[k, 2] - xf[k, 2]) - sc.tie_p[t, 2]
        if k > a and free:
            # Schur update from the previous block: S -= P Y_x + q Y_l, r -= P z_x + q z_l
            e = m.vertex_edge[k - 1]
            pk = k - 1
            if w[pk] > 0.0:
                gp = _geometric(e, pk, m, sc)
            else:
                gp = 0.0
            nx, ny, nz = sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2]
            q = 1.0 if sc.active[e] > 0.0 else 0.0
            # P = -gp (I - d d^T); rows of P Y_x (Y_x[r][c] = kk[pk, 3 r + c])
            for c in range(3):
                y0, y1, y2 = kk[pk, c], kk[pk, 3 + c], kk[pk, 6 + c]
                yl = kk[pk, 9 + c]
                dy = nx * y0 + ny * y1 + nz * y2
                # column c of (P Y_x + q d Y_l)
                v0 = -gp * (y0 - nx * dy) + q * nx * yl
                v1 = -gp * (y1 - ny * dy) + q * ny * yl
                v2 = -gp * (y2 - nz * dy) + q * nz * yl
                if c == 0:
                    s00 -= v0
                elif c == 1:
                    s01 -= v0
                    s11 -= v1
                else:
                    s02 -= v0
                    s12 -= v1
                    s22 -= v2
            z0, z1, z2, zl = kk[pk, 12], kk[pk, 13], kk[pk, 14], kk[pk, 15]
            dz = nx * z0 + ny * z1 + nz * z2
            r0 -= -gp * (z0 - nx * dz) + q * nx * zl
            r1 -= -gp * (z1 - ny * dz) + q * ny * zl
            r2 -= -gp * (z2 - nz * dz) + q * nz * zl
        i00, i01, i02, i11, i12, i22 = _sym_inverse(s00, s01, s02, s11, s12, s22)
        # the multiplier row of segment k: g^T dx - c dlam = beta
        g0 = g1 = g2 = 0.0
        cc, beta = 1.0, 0.0
        gn = 0.0
        nx = ny = nz = 0.0
        if k < b:
            e = m.vertex_edge[k]
            nx, ny, nz = sc.dirs[e, 0], sc.dirs[e, 1], sc.dirs[e, 2]
            if sc.active[e] > 0.0:
                comp = compliance(e, m, st, h)
                cc = comp
                beta = -sc.excess[e]
                if free:
                    g0, g1, g2 = -nx, -ny, -nz
            else:
                beta = -sc.lam[e]          # fixed: dlam = lam (gives back its multiplier)
            if w[k + 1] > 0.0:
                gn = _geometric(e, k, m, sc) if free else 0.0
        t0, t1, t2 = _sym_apply(i00, i01, i02, i11, i12, i22, g0, g1, g2)
        s = -cc - (g0 * t0 + g1 * t1 + g2 * t2)
        # z = D^-1 (r, beta)
        zl = (beta - (t0 * r0 + t1 * r1 + t2 * r2)) / s
        u0, u1, u2 = _sym_apply(i00, i01, i02, i11, i12, i22, r0, r1, r2)
        kk[k, 12] = u0 - t0 * zl
        kk[k, 13] = u1 - t1 * zl
        kk[k, 14] = u2 - t2 * zl
        kk[k, 15] = zl
        # Y = D^-1 U, U = [P; q d^T] (the coupling of block k to particle k + 1)
        qa = 1.0 if (k < b and w[k + 1] > 0.0 and sc.active[m.vertex_edge[k]] > 0.0) else 0.0
        for c in range(3):
            pc0 = -gn * ((1.0 if c == 0 else 0.0) - nx * (nx if c == 0 else (ny if c == 1
                                                                            else nz)))
            pc1 = -gn * ((1.0 if c == 1 else 0.0) - ny * (nx if c == 0 else (ny if c == 1
                                                                            else nz)))
            pc2 = -gn * ((1.0 if c == 2 else 0.0) - nz * (nx if c == 0 else (ny if c == 1
                                                                            else nz)))
            qc = qa * (nx if c == 0 else (ny if c == 1 else nz))
            yl = (qc - (t0 * pc0 + t1 * pc1 + t2 * pc2)) / s
            v0, v1, v2 = _sym_apply(i00, i01, i02, i11, i12, i22, pc0, pc1, pc2)
            kk[k, c] = v0 - t0 * yl
            kk[k, 3 + c] = v1 - t1 * yl
            kk[k, 6 + c] = v2 - t2 * yl
            kk[k, 9 + c] = yl


@njit(**_OPTS)
def _back(a, b, m, sc):
    """Back substitution: ``dx`` into ``sc.dx`` [V, 3], ``dlam`` into ``sc.lam`` [E]; returns
    the number of active segments whose total multiplier came out pushing (now released)."""
    kk = sc.kkt
    n0 = n1 = n2 = 0.0
    pushing = 0
    for k in range(b, a - 1, -1):
        d0 = kk[k, 12] - (kk[k, 0] * n0 + kk[k, 1] * n1 + kk[k, 2] * n2)
        d1 = kk[k, 13] - (kk[k, 3] * n0 + kk[k, 4] * n1 + kk[k, 5] * n2)
        d2 = kk[k, 14] - (kk[k, 6] * n0 + kk[k, 7] * n1 + kk[k, 8] * n2)
        dl = kk[k, 15] - (kk[k, 9] * n0 + kk[k, 10] * n1 + kk[k, 11] * n2)
        if m.inv_mass[k] <= 0.0:
            d0 = d1 = d2 = 0.0
        sc.dx[k, 0], sc.dx[k, 1], sc.dx[k, 2] = d0, d1, d2
        if k < b:
            e = m.vertex_edge[k]
            if sc.active[e] > 0.0:
                sc.lam[e] = dl
                if sc.lam_total[e] + dl < 0.0:
                    sc.active[e] = 0.0
                    sc.lam[e] = -sc.lam_total[e]
                    pushing += 1
        n0, n1, n2 = d0, d1, d2
    return pushing


@njit(**_OPTS)
def newton_pass(a, b, m, st, sc, h, tolerance):
    """One Newton pass of the strain limiting of chain ``a..b`` (module docstring): moves
    ``st.x`` and adds to the multipliers ``sc.lam_total`` [m kg].  The maximum lengths over
    the rest lengths are in ``sc.scale``, the starting positions in ``sc.x_free``; ``h`` is
    the substep [s].  Returns the fraction of the Newton step taken, or 0 (nothing done) when
    every active segment's ``|C|`` is already below ``tolerance`` times its rest length."""
    if _prepare(a, b, m, st, sc) <= tolerance:
        return 0.0
    for k in range(a, b):
        e = m.vertex_edge[k]
        sc.lam[e] = 0.0 if sc.active[e] > 0.0 else -sc.lam_total[e]
    for _ in range(MAX_RESOLVES):
        _eliminate(a, b, m, st, sc, h)
        if _back(a, b, m, sc) == 0:
            break
    step = _step_length(a, b, m, sc)
    w = m.inv_mass
    for k in range(a, b + 1):
        if w[k] > 0.0:
            st.x[k, 0] += step * sc.dx[k, 0]
            st.x[k, 1] += step * sc.dx[k, 1]
            st.x[k, 2] += step * sc.dx[k, 2]
    for k in range(a, b):
        e = m.vertex_edge[k]
        sc.lam_total[e] += step * sc.lam[e]
    for k in range(a, b + 1):
        t = m.vertex_tie[k]
        if t >= 0 and w[k] > 0.0:
            # the impulse this pass gave the tied cluster (its mass at the tie times the move)
            tm = sc.tie_mass
            d0, d1, d2 = step * sc.dx[k, 0], step * sc.dx[k, 1], step * sc.dx[k, 2]
            p0 = tm[t, 0] * d0 + tm[t, 1] * d1 + tm[t, 2] * d2
            p1 = tm[t, 1] * d0 + tm[t, 3] * d1 + tm[t, 4] * d2
            p2 = tm[t, 2] * d0 + tm[t, 4] * d1 + tm[t, 5] * d2
            sc.tie_dp[t, 0] += p0
            sc.tie_dp[t, 1] += p1
            sc.tie_dp[t, 2] += p2
            sc.tie_p[t, 0] += p0
            sc.tie_p[t, 1] += p1
            sc.tie_p[t, 2] += p2
    return step


@njit(**_INLINE)
def _step_length(a, b, m, sc):
    """Fraction of the Newton step to take: at most so much that no segment carrying no
    tension yet has its particles move sideways to it, relative to each other, by more than
    ``MAX_SIDEWAYS`` of its length (without a multiplier the step knows nothing of its
    sideways stiffness: a first pass from rest can ask for much more)."""
    step = 1.0
    for k in range(a, b):
        e = m.vertex_edge[k]
        if sc.lam_total[e] > 0.0:
            continue                       # its geometric stiffness is in the step
        r0 = sc.dx[k + 1, 0] - sc.dx[k, 0]
        r1 = sc.dx[k + 1, 1] - sc.dx[k, 1]
        r2 = sc.dx[k + 1, 2] - sc.dx[k, 2]
        along = r0 * sc.dirs[e, 0] + r1 * sc.dirs[e, 1] + r2 * sc.dirs[e, 2]
        side = math.sqrt(max(r0 * r0 + r1 * r1 + r2 * r2 - along * along, 0.0))
        room = MAX_SIDEWAYS * sc.seg_len[e]
        if side * step > room:
            step = room / side
    return step
