"""Numba kernels of the sag-free optimizer: one Gauss-Newton step per strand, in parallel.

Parameter layout (per strand of ``n`` vertices, open, stencils ``b0 + k`` for ``k = 0 .. n-3``
centred on vertex ``k + 1`` with edges ``(k, k+1)``): slot ``k`` holds ``P`` parameters
``[kappabar_b (4), taubar_b (if P == 6), lbar_{k+1}]``, slots one after another.  A parameter of
slot ``k`` acts on local DOF rows ``4k .. 4k + 15`` only (vertices ``k .. k+3`` and the angles
between them), so each column of ``J`` is gathered into a window ``Jc[k P + o, 0:16]``.

The Gauss-Newton step minimises the quadratic model
``1/2 |r + J dp|_W^2 + 1/2 (p + dp - c)^T R (p + dp - c)`` with ``r = f + y`` (``y`` the shift
of the exact mode, else 0), ``R = diag(w_r e_k + (mu + w_p [bound violated]) d_k)`` (``d_k`` the
diagonal of ``J^T W J`` at the input rest shape, ``e_k = d_k`` or 1) and centre ``c`` the
weighted mean of ``p0`` (regularizer), the current ``p`` (Levenberg-Marquardt damping ``mu``,
zero unless the line search has failed) and the violated bound (penalty).  Its normal
equations ``(J^T W J + R) dp = -g`` are solved in the equivalent dual form over the DOFs:

    (W^-1 + J R^-1 J^T) lam = r - J (p - c),        p + dp = c - R^-1 J^T lam,

an SPD banded system of the strand's DOFs (half-bandwidth 15: two rows share a parameter only
within one column's window; fixed rows are identity rows).  Unlike the primal matrix, whose
condition grows as ``1 / w_r``, the dual one stays well conditioned however small ``w_r`` is
(``R^-1`` large), and it is smaller (``4n`` rows against ``6n`` parameters).  In the exact mode
a parameter on its bound whose gradient points out of the box is held (``R^-1 = 0``).  The band
(``band[j, d] = A[j + d, j]``, lower band by columns) is factored by a banded Cholesky.  Strands
are split over ``nchunk`` chunks (``strands[c::nchunk]``), each with its own scratch arrays, one
chunk per iteration of a parallel loop.

Return codes of :func:`gn_direction` per strand (``code``): 0 solved, 1 the factorization met a
non-positive or non-finite pivot.
"""
from __future__ import annotations

import math

from numba import njit, prange

__all__ = ["gn_direction", "trial_point", "merit", "accept", "scatter", "add_shift",
           "reset_strands", "copy_strands"]

SOLVED = 0
FACTOR_FAILED = 1


@njit(cache=True)
def _put(Jc, fixed, d, d0, k, o, P, val):
    """Add ``val`` at row ``d`` (global DOF) of the column of slot ``k``, offset ``o``."""
    if fixed[d]:
        return
    Jc[k * P + o, d - d0 - 4 * k] += val


@njit(cache=True)
def _fill_jacobian(Jc, d0, e0, b0, nslot, P, fixed, stretch_dofs, bend_dofs, js, jw, jk, jt,
                   jl):
    """The strand's columns of ``J`` in window form: ``Jc[k P + o, i]`` is the entry of row
    ``4 k + i`` (local DOF) of parameter ``o`` of slot ``k``, ``0 <= i < 16``."""
    for j in range(nslot * P):
        for i in range(16):
            Jc[j, i] = 0.0
    ol = P - 1
    for k in range(nslot):
        e = e0 + k + 1
        for a in range(6):
            _put(Jc, fixed, stretch_dofs[e, a], d0, k, ol, P, js[e, a] + jw[e, a])
        b = b0 + k
        for a in range(11):
            d = bend_dofs[b, a]
            for c in range(4):
                _put(Jc, fixed, d, d0, k, c, P, jk[b, a, c])
            if P == 6:
                _put(Jc, fixed, d, d0, k, 4, P, jt[b, a])
            half = 0.5 * jl[b, a]
            _put(Jc, fixed, d, d0, k, ol, P, half)
            if k >= 1:
                _put(Jc, fixed, d, d0, k - 1, ol, P, half)


@njit(cache=True)
def _cholesky(band, n, W, low):
    """In-place banded Cholesky of ``band[0:n]`` (the dual matrix ``W^-1 + K``, ``K`` PSD);
    returns False on a non-finite pivot.

    Every pivot of ``W^-1 + K`` is at least ``W^-1`` of its row (Schur complements of
    ``W^-1 + K`` dominate those of the diagonal ``W^-1``), and one below ``1e-12`` of its
    diagonal entry is lost to round-off (``K``'s entries reach ``W^-1 / w_r`` where the free
    parameters do not span the rows); a row whose pivot falls under ``low[j]`` (the larger of
    the two) is taken as numerically dependent: its pivot is set to ``low[j]`` and its column
    of ``L`` to zero, which keeps the factor bounded (the line search judges the step)."""
    for j in range(n):
        piv = band[j, 0]
        if not math.isfinite(piv):
            return False
        if piv < low[j]:
            # a numerically dependent row: decoupled (its column of L zero) at the floor
            band[j, 0] = math.sqrt(low[j])
            for a in range(1, min(W, n - 1 - j) + 1):
                band[j, a] = 0.0
            continue
        ljj = math.sqrt(piv)
        band[j, 0] = ljj
        m = min(W, n - 1 - j)
        for a in range(1, m + 1):
            band[j, a] /= ljj
        for a in range(1, m + 1):
            la = band[j, a]
            if la == 0.0:
                continue
            row = j + a
            for b in range(a, m + 1):
                band[row, b - a] -= la * band[j, b]
    return True


@njit(cache=True)
def _solve(band, n, W, x):
    """Solve ``L L^T x = x`` in place with the factor in ``band``."""
    for j in range(n):
        x[j] /= band[j, 0]
        xj = x[j]
        for a in range(1, min(W, n - 1 - j) + 1):
            x[j + a] -= band[j, a] * xj
    for j in range(n - 1, -1, -1):
        acc = x[j]
        for a in range(1, min(W, n - 1 - j) + 1):
            acc -= band[j, a] * x[j + a]
        x[j] = acc / band[j, 0]


@njit(cache=True)
def _dual_solve(d0, nrow, n, P, fixed, weight, f, y, Jc, p, rinv, cen, fixdp, band, u, low):
    """Solve ``(W^-1 + J_F R_F^-1 J_F^T) lam = r + J_A fixdp_A - J_F (p_F - c_F)`` into ``u``
    (free parameters: ``rinv > 0``; the others move by ``fixdp``).  False on a bad pivot."""
    W = 15
    for i in range(nrow):
        d = d0 + i
        u[i] = 0.0
        for a in range(W + 1):
            band[i, a] = 0.0
        if fixed[d]:
            band[i, 0] = 1.0
        else:
            band[i, 0] = 1.0 / weight[d]
            u[i] = f[d] + y[d]
    for j in range(n):
        ri = rinv[j]
        r0 = 4 * (j // P)
        dv = fixdp[j] if ri == 0.0 else cen[j] - p[j]
        for i in range(16):
            a = r0 + i
            if a >= nrow:
                break
            v = Jc[j, i]
            if v == 0.0:
                continue
            u[a] += v * dv
            if ri == 0.0:
                continue
            rv = ri * v
            for i2 in range(i, 16):
                b = r0 + i2
                if b >= nrow:
                    break
                band[a, b - a] += rv * Jc[j, i2]
    for i in range(nrow):
        base = 1.0 if fixed[d0 + i] else 1.0 / weight[d0 + i]
        low[i] = max(base, 1e-12 * band[i, 0])
    if not _cholesky(band, nrow, W, low):
        return False
    _solve(band, nrow, W, u)
    return True


@njit(cache=True)
def _jt_lam(Jc, j, P, nrow, u):
    """``J_j . lam`` of local parameter ``j``."""
    r0 = 4 * (j // P)
    z = 0.0
    for i in range(16):
        if r0 + i < nrow:
            z += Jc[j, i] * u[r0 + i]
    return z


@njit(cache=True)
def _direction_one(s, dof_start, edge_start, bend_start, pstart, P, fixed, weight, f, y,
                   stretch_dofs, bend_dofs, js, jw, jk, jt, jl, p, p0, lo, hi, dscale,
                   init_scale, scaling_diag, w_r, w_p, damping, polish, exact, max_active, Jc,
                   band, u, low, rinv, cen, fixdp, g_out, dp_out, gdp, nactive, code):
    d0 = dof_start[s]
    nrow = dof_start[s + 1] - d0
    nslot = bend_start[s + 1] - bend_start[s]
    n = nslot * P
    q0 = pstart[s]
    _fill_jacobian(Jc, d0, edge_start[s], bend_start[s], nslot, P, fixed, stretch_dofs,
                   bend_dofs, js, jw, jk, jt, jl)
    if init_scale[s]:
        top = 0.0
        for j in range(n):
            acc = 0.0
            r0 = 4 * (j // P)
            for i in range(16):
                if r0 + i < nrow:
                    acc += weight[d0 + r0 + i] * Jc[j, i] * Jc[j, i]
            dscale[q0 + j] = acc
            top = max(top, acc)
        floor = 1e-12 * top if top > 0.0 else 1.0
        for j in range(n):
            dscale[q0 + j] = max(dscale[q0 + j], floor)
    # merit gradient g = J^T W (f + y) + w_r e (p - p0) + w_p d viol (e = d, or 1 with the
    # absolute regularizer); the model's diagonal R = w_r e + (mu + w_p [violated]) d and
    # centre c
    for j in range(n):
        k = q0 + j
        r0 = 4 * (j // P)
        acc = 0.0
        for i in range(16):
            if r0 + i < nrow:
                d = d0 + r0 + i
                acc += Jc[j, i] * weight[d] * (f[d] + y[d])
        dk = dscale[k]
        rw = w_r * dk if scaling_diag else w_r
        mu = damping[s]
        if polish[s]:
            # minimum-norm increment: the regularizer centred on the current parameters
            rk = rw + mu * dk
            ck = p[k]
        else:
            acc += rw * (p[k] - p0[k])
            rk = rw + mu * dk
            ck = (rw * p0[k] + mu * dk * p[k]) / rk
        if not exact:
            bound = p[k]
            if p[k] > hi[k]:
                bound = hi[k]
            elif p[k] < lo[k]:
                bound = lo[k]
            if bound != p[k]:
                acc += w_p * dk * (p[k] - bound)
                rk = rw + (mu + w_p) * dk
                ck = (rw * p0[k] + mu * dk * p[k] + w_p * dk * bound) / rk
        g_out[k] = acc
        rinv[j] = 1.0 / rk
        cen[j] = ck
        fixdp[j] = 0.0
        if exact and ((p[k] <= lo[k] and acc > 0.0) or (p[k] >= hi[k] and acc < 0.0)):
            rinv[j] = 0.0          # held on its bound
    if exact:
        ok = _box_qp(q0, d0, nrow, n, P, fixed, weight, f, y, Jc, p, lo, hi, dscale, w_r,
                     scaling_diag, damping[s], max_active, rinv, cen, fixdp, dp_out, band, u, low)
    else:
        ok = _penalty_step(q0, d0, nrow, n, P, fixed, weight, f, y, Jc, p, rinv, cen, fixdp,
                           dp_out, band, u, low)
    act = 0
    for j in range(n):
        k = q0 + j
        if exact:
            if rinv[j] == 0.0:
                act += 1
        elif p[k] > hi[k] or p[k] < lo[k]:
            act += 1
    nactive[s] = act
    if not ok:
        code[s] = FACTOR_FAILED
        gdp[s] = 0.0
        for j in range(n):
            dp_out[q0 + j] = 0.0
        return
    code[s] = SOLVED
    acc = 0.0
    for j in range(n):
        acc += g_out[q0 + j] * dp_out[q0 + j]
    gdp[s] = acc


@njit(cache=True)
def _candidate(j, q0, P, nrow, Jc, p, rinv, cen, fixdp, u):
    """Step of local parameter ``j`` at the solution ``lam = u`` of the dual system."""
    if rinv[j] == 0.0:
        return fixdp[j]
    return cen[j] - rinv[j] * _jt_lam(Jc, j, P, nrow, u) - p[q0 + j]


@njit(cache=True)
def _penalty_step(q0, d0, nrow, n, P, fixed, weight, f, y, Jc, p, rinv, cen, fixdp, dp_out,
                  band, u, low):
    """Penalty mode: the Gauss-Newton step of the model (one dual solve)."""
    if not _dual_solve(d0, nrow, n, P, fixed, weight, f, y, Jc, p[q0:], rinv, cen, fixdp,
                       band, u, low):
        return False
    for j in range(n):
        dp_out[q0 + j] = cen[j] - rinv[j] * _jt_lam(Jc, j, P, nrow, u) - p[q0 + j]
    return True


@njit(cache=True)
def _box_qp(q0, d0, nrow, n, P, fixed, weight, f, y, Jc, p, lo, hi, dscale, w_r,
            scaling_diag, mu,
            max_active, rinv, cen, fixdp, dp_out, band, u, low):
    """Exact mode: the step minimising the model inside the box by a primal active-set method.

    Held parameters (``rinv == 0``) move by ``fixdp`` onto their bound; each pass solves the
    model over the free ones and moves the current (feasible) step towards that solution as far
    as the box allows (ratio test): the first bound met is held; when the solution is feasible,
    the held parameter whose multiplier points most into the box is released; no such parameter
    ends the solve.  The model decreases monotonically from the zero step, so the step returned
    after ``max_active`` passes is still a descent direction."""
    for j in range(n):
        dp_out[q0 + j] = fixdp[j] if rinv[j] == 0.0 else 0.0
    for _ in range(max_active):
        if not _dual_solve(d0, nrow, n, P, fixed, weight, f, y, Jc, p[q0:], rinv, cen, fixdp,
                           band, u, low):
            return False
        t = 1.0
        block = -1
        bval = 0.0
        for j in range(n):
            if rinv[j] == 0.0:
                continue
            k = q0 + j
            cur = p[k] + dp_out[k]
            new = p[k] + _candidate(j, q0, P, nrow, Jc, p, rinv, cen, fixdp, u)
            if new < lo[k] and new < cur:
                tj = (lo[k] - cur) / (new - cur)
                if tj < t:
                    t, block, bval = tj, j, lo[k]
            elif new > hi[k] and new > cur:
                tj = (hi[k] - cur) / (new - cur)
                if tj < t:
                    t, block, bval = tj, j, hi[k]
        t = max(t, 0.0)
        for j in range(n):
            if rinv[j] != 0.0:
                k = q0 + j
                dp_out[k] += t * (_candidate(j, q0, P, nrow, Jc, p, rinv, cen, fixdp, u)
                                  - dp_out[k])
        if block >= 0:
            k = q0 + block
            rinv[block] = 0.0
            fixdp[block] = bval - p[k]
            dp_out[k] = fixdp[block]
            continue
        # feasible: release the held parameter whose multiplier points most into the box
        worst = 0.0
        rel = -1
        for j in range(n):
            if rinv[j] != 0.0:
                continue
            k = q0 + j
            rk = (w_r if not scaling_diag else w_r * dscale[k]) + mu * dscale[k]
            v = p[k] + fixdp[j]
            q = _jt_lam(Jc, j, P, nrow, u) + rk * (v - cen[j])
            score = q * q / dscale[k]
            if ((v <= lo[k] and q < 0.0) or (v >= hi[k] and q > 0.0)) and score > worst:
                worst, rel = score, j
        if rel < 0:
            break
        dk = dscale[q0 + rel]
        rinv[rel] = 1.0 / ((w_r if not scaling_diag else w_r * dk) + mu * dk)
    return True


@njit(cache=True, parallel=True)
def gn_direction(strands, dof_start, edge_start, bend_start, pstart, P, fixed, weight, f, y,
                 stretch_dofs, bend_dofs, js, jw, jk, jt, jl, p, p0, lo, hi, dscale,
                 init_scale, scaling_diag, w_r, w_p, damping, polish, exact, max_active, Jc,
                 band, u, low, rinv, cen, fixdp, g_out, dp_out, gdp, nactive, code):
    """Gauss-Newton direction ``dp`` (into ``dp_out``) and merit gradient ``g`` (``g_out``)
    of every listed strand, the directional derivative ``g . dp`` (``gdp``), the number of
    active bounds (``nactive``: violated bounds in penalty mode, held ones in exact mode) and
    the factorization code.  ``init_scale[s]``: set the strand's ``dscale`` from the diagonal
    of ``J^T W J`` (``scaling_diag``: the regularizer weighs parameter ``k`` by it, else by
    1).  ``damping[s]``: the strand's Levenberg-Marquardt term ``mu/2 sum d_k dp_k^2`` added
    to the model.  ``polish[s]``: the regularizer is centred on the current parameters (a
    minimum-norm increment on the objective alone; the merit then has no regularizer).  In
    exact mode the step solves the box-constrained model by at most ``max_active`` passes of a
    primal active-set method (:func:`_box_qp`, one banded solve each).
    Scratch per chunk: ``Jc`` [C, params, 16], ``band`` [C, rows, 16], ``u``, ``low``
    [C, rows], ``rinv``, ``cen``, ``fixdp`` [C, params]."""
    nchunk = Jc.shape[0]
    for c in prange(nchunk):
        for i in range(c, strands.shape[0], nchunk):
            _direction_one(strands[i], dof_start, edge_start, bend_start, pstart, P, fixed,
                           weight, f, y, stretch_dofs, bend_dofs, js, jw, jk, jt, jl, p, p0,
                           lo, hi, dscale, init_scale, scaling_diag, w_r, w_p, damping, polish,
                           exact, max_active, Jc[c], band[c], u[c], low[c], rinv[c], cen[c],
                           fixdp[c], g_out, dp_out, gdp, nactive, code)


@njit(cache=True)
def _scatter_one(s, edge_start, bend_start, pstart, P, p, rest_length, rest_curvature,
                 rest_twist):
    e0 = edge_start[s]
    b0 = bend_start[s]
    q0 = pstart[s]
    for k in range(bend_start[s + 1] - b0):
        base = q0 + k * P
        for c in range(4):
            rest_curvature[b0 + k, c] = p[base + c]
        if P == 6:
            rest_twist[b0 + k] = p[base + 4]
        rest_length[e0 + k + 1] = p[base + P - 1]


@njit(cache=True, parallel=True)
def scatter(strands, edge_start, bend_start, pstart, P, p, rest_length, rest_curvature,
            rest_twist):
    """Write the parameters ``p`` of the listed strands into the rest arrays."""
    for i in prange(strands.shape[0]):
        _scatter_one(strands[i], edge_start, bend_start, pstart, P, p, rest_length,
                     rest_curvature, rest_twist)


@njit(cache=True, parallel=True)
def trial_point(strands, edge_start, bend_start, pstart, P, p, dp, alpha, lo, hi, clip, g,
                p_trial, pred, rest_length, rest_curvature, rest_twist):
    """``p_trial = p + alpha[s] dp`` (clipped into the box when ``clip``) for the listed
    strands, its rest arrays, and the predicted change ``pred[s] = g . (p_trial - p)``."""
    for i in prange(strands.shape[0]):
        s = strands[i]
        a = alpha[s]
        acc = 0.0
        for k in range(pstart[s], pstart[s + 1]):
            v = p[k] + a * dp[k]
            if clip:
                v = min(max(v, lo[k]), hi[k])
            p_trial[k] = v
            acc += g[k] * (v - p[k])
        pred[s] = acc
        _scatter_one(s, edge_start, bend_start, pstart, P, p_trial, rest_length,
                     rest_curvature, rest_twist)


@njit(cache=True, parallel=True)
def merit(strands, dof_start, pstart, fixed, weight, kin_weight, f, y, p, p0, lo, hi, dscale,
          w_r, scaling_diag, w_p, penalty, polish, obj, kin, reg, pen, out):
    """Per listed strand: the objective ``obj = 1/2 sum W (f + y)^2``, the kinetic objective
    ``kin = 1/2 sum f^2 / m`` (``kin_weight = 1/m``), the regularizer
    ``reg = w_r/2 sum e_k (p - p0)_k^2`` (``e = dscale``, or 1 when not ``scaling_diag``), the
    penalty ``pen = w_p/2 sum d_k viol_k^2`` (when ``penalty``) and the merit
    ``out = obj + reg + pen`` (``obj`` alone for a strand with ``polish[s]``)."""
    for i in prange(strands.shape[0]):
        s = strands[i]
        o = 0.0
        kk = 0.0
        for d in range(dof_start[s], dof_start[s + 1]):
            if fixed[d]:
                continue
            r = f[d] + y[d]
            o += weight[d] * r * r
            kk += kin_weight[d] * f[d] * f[d]
        rg = 0.0
        pn = 0.0
        for k in range(pstart[s], pstart[s + 1]):
            dv = p[k] - p0[k]
            rg += (dscale[k] if scaling_diag else 1.0) * dv * dv
            if penalty:
                v = 0.0
                if p[k] > hi[k]:
                    v = p[k] - hi[k]
                elif p[k] < lo[k]:
                    v = p[k] - lo[k]
                pn += dscale[k] * v * v
        obj[s] = 0.5 * o
        kin[s] = 0.5 * kk
        reg[s] = 0.5 * w_r * rg
        pen[s] = 0.5 * w_p * pn
        out[s] = obj[s] if polish[s] else obj[s] + reg[s] + pen[s]


@njit(cache=True, parallel=True)
def accept(strands, dof_start, pstart, p_trial, f_trial, p, f):
    """Copy the trial parameters and forces of the listed strands into the current ones."""
    for i in prange(strands.shape[0]):
        s = strands[i]
        for k in range(pstart[s], pstart[s + 1]):
            p[k] = p_trial[k]
        for d in range(dof_start[s], dof_start[s + 1]):
            f[d] = f_trial[d]


@njit(cache=True, parallel=True)
def add_shift(strands, dof_start, fixed, f, y):
    """Multiplier update of the augmented Lagrangian: ``y += f`` on the free DOFs."""
    for i in prange(strands.shape[0]):
        s = strands[i]
        for d in range(dof_start[s], dof_start[s + 1]):
            if not fixed[d]:
                y[d] += f[d]


@njit(cache=True, parallel=True)
def reset_strands(strands, dof_start, pstart, p0, p, y):
    """Restart the listed strands: ``p = p0`` and ``y = 0``."""
    for i in prange(strands.shape[0]):
        s = strands[i]
        for k in range(pstart[s], pstart[s + 1]):
            p[k] = p0[k]
        for d in range(dof_start[s], dof_start[s + 1]):
            y[d] = 0.0


@njit(cache=True, parallel=True)
def copy_strands(strands, start, src, dst):
    """``dst[start[s]:start[s+1]] = src[...]`` for the listed strands."""
    for i in prange(strands.shape[0]):
        s = strands[i]
        for k in range(start[s], start[s + 1]):
            dst[k] = src[k]
