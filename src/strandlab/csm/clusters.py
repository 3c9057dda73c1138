"""Kernels of the shape-matched particle clusters (the scene's meshes) and of the strand ends
tied to them (:mod:`.cluster_model`).  Clusters are few: the kernels loop over them serially.

Per substep (:meth:`~strandlab.csm.solver.CSMSolver.step` with clusters):

1. :func:`cluster_integrate`: gravity and the twisting torque of tied strands (an angular
   acceleration ``I^-1 tau`` about the centre), damping, predicted positions; held particles to
   their targets; :func:`snap_ties` puts the tied strand ends on their clusters;
2. :func:`cluster_match`: every cluster's particles (weighted like the strings' in contact)
   matched to the rotated rest shape (one region; the rotation of its moment matrix as for the
   strings' regions), fully for a rigid cluster, by ``1 / (1 + c m / h^2)`` for compliance
   ``c``; then its centre and inverse inertia (:func:`cluster_centres`);
3. strain limiting of all chains (:func:`length_all`): Newton passes in which a tied end is the
   cluster itself (:func:`tie_masses`: the rigid-body mass at the tie point, ``(I / M -
   [r] I^-1 [r])^-1``; the momentum balance of that node is the strand's own impulse on the
   cluster so far, the other strands' pulls being in its position), each strand's impulse
   moving its clusters at once (:func:`cluster_apply`) before the next strand's pass:
   Gauss-Seidel over the strands, in alternating order;
4. colliders and velocities of the cluster particles (:func:`cluster_finish`);
5. after the twist update, :func:`tie_torques`: the twisting torque ``-dE/dtheta`` of every tied
   segment about its axis, applied to its cluster in the next substep.
"""
from __future__ import annotations

import math

from numba import njit

from .kernels import HELD_WEIGHT, _collide, _velocity, start_particle
from .length_newton import TOLERANCE, _sym_apply, _sym_inverse, newton_pass
from .rotation import add_moment, quat_rotate, rotation_of_moment
from .tension import length_init, tear

__all__ = ["cluster_integrate", "cluster_centres", "cluster_match", "snap_ties", "tie_masses",
           "cluster_apply", "cluster_commit", "length_all", "cluster_finish", "tie_torques",
           "tear_groups"]

_OPTS = {"cache": True, "error_model": "numpy"}
_INLINE = {"cache": True, "error_model": "numpy", "inline": "always"}


@njit(**_INLINE)
def _held(c, m):
    """Whether cluster ``c`` has a held particle (it is then anchored: ties see it held)."""
    for i in range(m.cluster_start[c], m.cluster_start[c + 1]):
        if m.inv_mass[i] == 0.0:
            return True
    return False


@njit(**_INLINE)
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(**_OPTS)
def cluster_centres(m, st, sc):
    """Centre (plain mass weights) and inverse inertia about it of every cluster, from the
    current positions, into ``sc.cluster_c`` [C, 3] and ``sc.cluster_inv_inertia`` [C, 6]."""
    x = st.x
    for c in range(m.cluster_start.shape[0] - 1):
        a, b = m.cluster_start[c], m.cluster_start[c + 1]
        mt = cx = cy = cz = 0.0
        for i in range(a, b):
            mt += m.mass[i]
            cx += m.mass[i] * x[i, 0]
            cy += m.mass[i] * x[i, 1]
            cz += m.mass[i] * x[i, 2]
        cx, cy, cz = cx / mt, cy / mt, cz / mt
        i00 = i01 = i02 = i11 = i12 = i22 = 0.0
        for i in range(a, b):
            rx, ry, rz = x[i, 0] - cx, x[i, 1] - cy, x[i, 2] - cz
            w = m.mass[i]
            rr = rx * rx + ry * ry + rz * rz
            i00 += w * (rr - rx * rx)
            i11 += w * (rr - ry * ry)
            i22 += w * (rr - rz * rz)
            i01 -= w * rx * ry
            i02 -= w * rx * rz
            i12 -= w * ry * rz
        # a small regularisation keeps a flat or straight cluster invertible
        reg = 1e-9 * (i00 + i11 + i22) + 1e-300
        inv = _sym_inverse(i00 + reg, i01, i02, i11 + reg, i12, i22 + reg)
        sc.cluster_c[c, 0], sc.cluster_c[c, 1], sc.cluster_c[c, 2] = cx, cy, cz
        for k in range(6):
            sc.cluster_inv_inertia[c, k] = inv[k]


@njit(**_OPTS)
def cluster_integrate(m, st, sc, p):
    """Explicit velocities and predicted positions of the cluster particles: gravity, the
    angular acceleration ``I^-1 tau`` of the tied strands' twisting torque ``tau``
    (``sc.cluster_torque``, then cleared), damping; held particles to their targets."""
    x, v, g, h = st.x, st.v, m.gravity, p.h
    for c in range(m.cluster_start.shape[0] - 1):
        q = sc.cluster_inv_inertia[c]
        ax, ay, az = _sym_apply(q[0], q[1], q[2], q[3], q[4], q[5], sc.cluster_torque[c, 0],
                                sc.cluster_torque[c, 1], sc.cluster_torque[c, 2])
        cx, cy, cz = sc.cluster_c[c, 0], sc.cluster_c[c, 1], sc.cluster_c[c, 2]
        for i in range(m.cluster_start[c], m.cluster_start[c + 1]):
            if start_particle(i, x, m, sc):
                continue
            tx, ty, tz = _cross(ax, ay, az, x[i, 0] - cx, x[i, 1] - cy, x[i, 2] - cz)
            for r in range(3):
                acc = g[r] + (tx if r == 0 else (ty if r == 1 else tz))
                v[i, r] = (v[i, r] + h * acc) * p.damping
                x[i, r] += h * v[i, r]
        for r in range(3):
            sc.cluster_torque[c, r] = 0.0


@njit(**_OPTS)
def cluster_match(m, st, sc, p):
    """Shape matching of every cluster as one region: goals ``c_w + R (r_i - r_w)`` with the
    rotation ``R`` of the moment matrix (warm-started at ``st.cluster_quat``) and the weighted
    centres ``c_w``, ``r_w`` (particles weighted by mass, contact weight ``sc.sm_weight`` and
    :data:`~.kernels.HELD_WEIGHT` when held); each free particle moves the fraction
    ``1 / (1 + compliance m_i / h^2)`` to its goal.  Then :func:`cluster_centres`."""
    x, h = st.x, p.h
    rest = m.cluster_rest
    for c in range(m.cluster_start.shape[0] - 1):
        a, b = m.cluster_start[c], m.cluster_start[c + 1]
        mt = cx = cy = cz = rx = ry = rz = 0.0
        for i in range(a, b):
            w = m.mass[i] * sc.sm_weight[i] * (HELD_WEIGHT if m.inv_mass[i] == 0.0 else 1.0)
            mt += w
            cx += w * x[i, 0]
            cy += w * x[i, 1]
            cz += w * x[i, 2]
            rx += w * rest[i, 0]
            ry += w * rest[i, 1]
            rz += w * rest[i, 2]
        cx, cy, cz, rx, ry, rz = cx / mt, cy / mt, cz / mt, rx / mt, ry / mt, rz / mt
        mom = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for i in range(a, b):
            w = m.mass[i] * sc.sm_weight[i] * (HELD_WEIGHT if m.inv_mass[i] == 0.0 else 1.0)
            mom = add_moment(mom, x[i, 0] - cx, x[i, 1] - cy, x[i, 2] - cz,
                             w * (rest[i, 0] - rx), w * (rest[i, 1] - ry), w * (rest[i, 2] - rz))
        q = st.cluster_quat
        qw, qx_, qy_, qz_ = rotation_of_moment(mom[0], mom[1], mom[2], mom[3], mom[4], mom[5],
                                               mom[6], mom[7], mom[8],
                                               q[c, 0], q[c, 1], q[c, 2], q[c, 3])
        q[c, 0], q[c, 1], q[c, 2], q[c, 3] = qw, qx_, qy_, qz_
        comp = m.cluster_compliance[c]
        for i in range(a, b):
            if m.inv_mass[i] == 0.0:
                continue
            gx, gy, gz = quat_rotate(qw, qx_, qy_, qz_, rest[i, 0] - rx, rest[i, 1] - ry,
                                     rest[i, 2] - rz)
            f = 1.0 / (1.0 + comp * m.mass[i] / (h * h))
            x[i, 0] += f * (gx + cx - x[i, 0])
            x[i, 1] += f * (gy + cy - x[i, 1])
            x[i, 2] += f * (gz + cz - x[i, 2])
    cluster_centres(m, st, sc)


@njit(**_OPTS)
def snap_ties(m, st, sc):
    """Every tied strand end onto its tie point ``c + R r_tie`` of its cluster (centre
    ``sc.cluster_c``, rotation ``st.cluster_quat``), and the clamped material direction of its
    segment to ``R d_tie``."""
    x, q = st.x, st.cluster_quat
    for t in range(m.tie_vertex.shape[0]):
        c = m.tie_cluster[t]
        px, py, pz = quat_rotate(q[c, 0], q[c, 1], q[c, 2], q[c, 3], m.tie_local[t, 0],
                                 m.tie_local[t, 1], m.tie_local[t, 2])
        v = m.tie_vertex[t]
        x[v, 0] = sc.cluster_c[c, 0] + px
        x[v, 1] = sc.cluster_c[c, 1] + py
        x[v, 2] = sc.cluster_c[c, 2] + pz
        dx, dy, dz = quat_rotate(q[c, 0], q[c, 1], q[c, 2], q[c, 3], m.tie_twist_local[t, 0],
                                 m.tie_twist_local[t, 1], m.tie_twist_local[t, 2])
        row = m.edge_drive[m.tie_edge[t]]
        sc.twist_target[row, 0], sc.twist_target[row, 1], sc.twist_target[row, 2] = dx, dy, dz


@njit(**_OPTS)
def tie_masses(m, st, sc):
    """The cluster's rigid-body mass matrix at every tie point, ``(I / M - [r] I^-1 [r])^-1``
    (``r`` from the centre, ``[r]`` its cross-product matrix), into ``sc.tie_mass`` [K, 6]; an
    anchored cluster (a held particle) counts as immovable."""
    x = st.x
    for t in range(m.tie_vertex.shape[0]):
        c = m.tie_cluster[t]
        mt = 0.0
        for i in range(m.cluster_start[c], m.cluster_start[c + 1]):
            mt += m.mass[i]
        if _held(c, m):
            big = 1e12 * mt
            sc.tie_mass[t, 0], sc.tie_mass[t, 3], sc.tie_mass[t, 5] = big, big, big
            sc.tie_mass[t, 1] = sc.tie_mass[t, 2] = sc.tie_mass[t, 4] = 0.0
            continue
        v = m.tie_vertex[t]
        rx = x[v, 0] - sc.cluster_c[c, 0]
        ry = x[v, 1] - sc.cluster_c[c, 1]
        rz = x[v, 2] - sc.cluster_c[c, 2]
        q = sc.cluster_inv_inertia[c]
        cols = _w_columns(rx, ry, rz, q)              # W = I / M + [r]^T J [r]
        w00 = 1.0 / mt + cols[0]
        w01 = cols[1]
        w02 = cols[2]
        w11 = 1.0 / mt + cols[3]
        w12 = cols[4]
        w22 = 1.0 / mt + cols[5]
        inv = _sym_inverse(w00, w01, w02, w11, w12, w22)
        for k in range(6):
            sc.tie_mass[t, k] = inv[k]


@njit(**_INLINE)
def _w_columns(rx, ry, rz, q):
    """Upper entries of ``-[r] J [r]`` for the symmetric ``J`` (``q``: xx, xy, xz, yy, yz,
    zz): ``[r]^T J [r]``, the point's response to an impulse through the rotation."""
    # columns of [r] (r x e_k): c0 = (0, rz, -ry), c1 = (-rz, 0, rx), c2 = (ry, -rx, 0);
    # entry (k, l) of [r]^T J [r] is c_k . J c_l
    c0x, c0y, c0z = 0.0, rz, -ry
    c1x, c1y, c1z = -rz, 0.0, rx
    c2x, c2y, c2z = ry, -rx, 0.0
    j0x, j0y, j0z = _sym_apply(q[0], q[1], q[2], q[3], q[4], q[5], c0x, c0y, c0z)
    j1x, j1y, j1z = _sym_apply(q[0], q[1], q[2], q[3], q[4], q[5], c1x, c1y, c1z)
    j2x, j2y, j2z = _sym_apply(q[0], q[1], q[2], q[3], q[4], q[5], c2x, c2y, c2z)
    return (c0x * j0x + c0y * j0y + c0z * j0z, c0x * j1x + c0y * j1y + c0z * j1z,
            c0x * j2x + c0y * j2y + c0z * j2z, c1x * j1x + c1y * j1y + c1z * j1z,
            c1x * j2x + c1y * j2y + c1z * j2z, c2x * j2x + c2y * j2y + c2z * j2z)


@njit(**_OPTS)
def cluster_apply(m, st, sc):
    """Move every cluster's pose (centre ``sc.cluster_c``, rotation ``st.cluster_quat``)
    rigidly by the impulses its ties took since the last call (``sc.tie_dp``, then cleared):
    translation ``sum P / M``, turn ``I^-1 sum r x P``; then :func:`snap_ties`.  Anchored
    clusters do not move.  The particles follow in :func:`cluster_commit`."""
    x = st.x
    for c in range(m.cluster_start.shape[0] - 1):
        px = py = pz = lx = ly = lz = 0.0
        for t in range(m.tie_vertex.shape[0]):
            if m.tie_cluster[t] != c:
                continue
            v = m.tie_vertex[t]
            dpx, dpy, dpz = sc.tie_dp[t, 0], sc.tie_dp[t, 1], sc.tie_dp[t, 2]
            px += dpx
            py += dpy
            pz += dpz
            cx, cy, cz = _cross(x[v, 0] - sc.cluster_c[c, 0], x[v, 1] - sc.cluster_c[c, 1],
                                x[v, 2] - sc.cluster_c[c, 2], dpx, dpy, dpz)
            lx += cx
            ly += cy
            lz += cz
            sc.tie_dp[t, 0] = sc.tie_dp[t, 1] = sc.tie_dp[t, 2] = 0.0
        if _held(c, m) or (px == 0.0 and py == 0.0 and pz == 0.0 and lx == 0.0 and ly == 0.0
                           and lz == 0.0):
            continue
        mt = 0.0
        for i in range(m.cluster_start[c], m.cluster_start[c + 1]):
            mt += m.mass[i]
        tx, ty, tz = px / mt, py / mt, pz / mt
        q = sc.cluster_inv_inertia[c]
        ox, oy, oz = _sym_apply(q[0], q[1], q[2], q[3], q[4], q[5], lx, ly, lz)
        cx, cy, cz = sc.cluster_c[c, 0], sc.cluster_c[c, 1], sc.cluster_c[c, 2]
        # the pose only: the particles follow once, in :func:`cluster_commit`
        sc.cluster_c[c, 0], sc.cluster_c[c, 1], sc.cluster_c[c, 2] = cx + tx, cy + ty, cz + tz
        # turn the rotation by the small rotation vector o
        w = math.sqrt(ox * ox + oy * oy + oz * oz)
        if w > 0.0:
            qc = st.cluster_quat
            hw, sh = math.cos(0.5 * w), math.sin(0.5 * w) / w
            dw, dx, dy, dz = hw, ox * sh, oy * sh, oz * sh
            qw, qx, qy, qz = qc[c, 0], qc[c, 1], qc[c, 2], qc[c, 3]
            nw = dw * qw - dx * qx - dy * qy - dz * qz
            nx = dw * qx + dx * qw + dy * qz - dz * qy
            ny = dw * qy - dx * qz + dy * qw + dz * qx
            nz = dw * qz + dx * qy - dy * qx + dz * qw
            n = 1.0 / math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
            qc[c, 0], qc[c, 1], qc[c, 2], qc[c, 3] = nw * n, nx * n, ny * n, nz * n
    snap_ties(m, st, sc)


@njit(**_OPTS)
def cluster_commit(m, st, sc):
    """Move every cluster's particles rigidly from the pose saved in ``sc.cluster_c0``,
    ``sc.cluster_q0`` to the current one (the turn ``R R0^T`` about the centre and the
    centre's shift)."""
    x, q = st.x, st.cluster_quat
    for c in range(m.cluster_start.shape[0] - 1):
        # the relative turn: q q0^-1 (unit quaternions)
        aw, ax, ay, az = q[c, 0], q[c, 1], q[c, 2], q[c, 3]
        bw, bx, by, bz = sc.cluster_q0[c, 0], -sc.cluster_q0[c, 1], -sc.cluster_q0[c, 2], \
            -sc.cluster_q0[c, 3]
        rw = aw * bw - ax * bx - ay * by - az * bz
        rx = aw * bx + ax * bw + ay * bz - az * by
        ry = aw * by - ax * bz + ay * bw + az * bx
        rz = aw * bz + ax * by - ay * bx + az * bw
        c0x, c0y, c0z = sc.cluster_c0[c, 0], sc.cluster_c0[c, 1], sc.cluster_c0[c, 2]
        cx, cy, cz = sc.cluster_c[c, 0], sc.cluster_c[c, 1], sc.cluster_c[c, 2]
        if rx == 0.0 and ry == 0.0 and rz == 0.0 and cx == c0x and cy == c0y and cz == c0z:
            continue
        for i in range(m.cluster_start[c], m.cluster_start[c + 1]):
            if m.inv_mass[i] == 0.0:
                continue
            ux, uy, uz = quat_rotate(rw, rx, ry, rz, x[i, 0] - c0x, x[i, 1] - c0y,
                                     x[i, 2] - c0z)
            x[i, 0], x[i, 1], x[i, 2] = cx + ux, cy + uy, cz + uz


@njit(**_OPTS)
def length_all(m, st, sc, p):
    """Strain limiting of every chain with the Newton solver, tied ends coupled to their
    clusters (module docstring): chains whose residuals are met stop, chains with a tie run
    every pass (their clusters move with the others' impulses)."""
    n_chains = p.n_chains
    for c in range(n_chains):
        a, b = st.chain_start[c], st.chain_start[c + 1] - 1
        length_init(a, b, m, st, sc, p.length_solver, p.h, p.warm)
        tied = False
        for i in range(a, b + 1):
            if m.vertex_tie[i] >= 0:
                tied = True
        sc.chain_flag[c] = 3.0 if tied else 1.0
    for t in range(m.tie_vertex.shape[0]):
        for r in range(3):
            sc.tie_p[t, r] = 0.0
            sc.tie_dp[t, r] = 0.0
    for c in range(m.cluster_start.shape[0] - 1):
        for r in range(3):
            sc.cluster_c0[c, r] = sc.cluster_c[c, r]
        for r in range(4):
            sc.cluster_q0[c, r] = st.cluster_quat[c, r]
    tie_masses(m, st, sc)
    for it in range(p.length_iterations):
        going = False
        for k in range(n_chains):
            c = k if it % 2 == 0 else n_chains - 1 - k      # symmetric sweeps
            f = sc.chain_flag[c]
            if f == 0.0:
                continue
            a, b = st.chain_start[c], st.chain_start[c + 1] - 1
            step = newton_pass(a, b, m, st, sc, p.h, TOLERANCE if f == 2.0 else -1.0)
            if f == 3.0:
                cluster_apply(m, st, sc)        # the next strand sees the clusters moved
            else:
                sc.chain_flag[c] = 0.0 if step == 0.0 else (2.0 if step == 1.0 else 1.0)
            going = going or step != 0.0
        if not going:
            break
    cluster_commit(m, st, sc)


@njit(**_OPTS)
def cluster_finish(m, st, sc, p):
    """Colliders (planes, spheres, capsules) and velocities of the cluster particles."""
    collide = m.collider_friction.shape[0] > 0
    for c in range(m.cluster_start.shape[0] - 1):
        a, b = m.cluster_start[c], m.cluster_start[c + 1] - 1
        if collide:
            _collide(a, b, m, st, sc)
        _velocity(a, b, m, st, sc, p, collide)


@njit(**_OPTS)
def tie_torques(m, st, sc):
    """The twisting torque of every tied segment on its cluster, ``-dE/dtheta`` about the
    segment's axis (``E`` the twisting energy at the vertex next to the tie), added to
    ``sc.cluster_torque``: a turn of the cluster turns the clamped segment's angle."""
    x, th = st.x, st.theta
    for t in range(m.tie_vertex.shape[0]):
        e = m.tie_edge[t]
        vt = m.tie_vertex[t]
        sg = m.tie_sign[t]
        # the tied segment joins (vt - 1, vt) for a tied last vertex, (vt, vt + 1) for a first
        va = vt - 1 if sg > 0.0 else vt
        inner = vt - 1 if sg > 0.0 else vt + 1
        if st.torn[e]:
            continue
        eo = m.vertex_edge[inner - 1] if sg > 0.0 else m.vertex_edge[inner]
        if inner - 1 < 0 or eo < 0 or st.torn[eo] or m.vertex_edge[va] != e:
            continue
        e0, e1 = (eo, e) if sg > 0.0 else (e, eo)
        tw = (th[e1] - th[e0]) - (m.rest_theta[e1] - m.rest_theta[e0])
        beta = m.twist_stiffness[inner] / ((1.0 + st.plastic_strain[e0])
                                           * (1.0 + st.plastic_strain[e1]))
        lbar = 0.5 * (m.rest_length[e0] + m.rest_length[e1])
        tau = -sg * beta * tw / lbar
        dx = x[va + 1, 0] - x[va, 0]
        dy = x[va + 1, 1] - x[va, 1]
        dz = x[va + 1, 2] - x[va, 2]
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        if ln <= 0.0:
            continue
        c = m.tie_cluster[t]
        sc.cluster_torque[c, 0] += tau * dx / ln
        sc.cluster_torque[c, 1] += tau * dy / ln
        sc.cluster_torque[c, 2] += tau * dz / ln


@njit(**_INLINE)
def _root(g, i):
    while g[i] != i:
        g[i] = g[g[i]]
        i = g[i]
    return i


@njit(**_OPTS)
def tear_groups(m, st, sc, p):
    """One tear per substep in every group of chains tied together through clusters (the
    bridge's ropes and boards are one structure: the tension of the rest of it is gone with
    the first rope that tears), where the stress is furthest past the rupture stress (the
    candidates of ``tension_phase(..., defer=True)``).  Returns the number of segments torn."""
    if not p.tearing:
        return 0
    n = p.n_chains
    nc = m.cluster_start.shape[0] - 1
    g = sc.group
    for i in range(n + nc):
        g[i] = i
    for c in range(n):
        for v in range(st.chain_start[c], st.chain_start[c + 1]):
            t = m.vertex_tie[v]
            if t >= 0:
                ra, rb = _root(g, c), _root(g, n + m.tie_cluster[t])
                if ra != rb:
                    g[ra] = rb
    torn = 0
    for c in range(n):
        if sc.tear_at[c] < 0:
            continue
        r = _root(g, c)
        best = c
        for d in range(n):
            if sc.tear_at[d] >= 0 and _root(g, d) == r and sc.tear_ratio[d] > \
                    sc.tear_ratio[best]:
                best = d
        if best == c:
            tear(sc.tear_at[c], m, st)
            torn += 1
    return torn
