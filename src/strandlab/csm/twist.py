"""Twisting of chain-shape-matched strings (section 4 of Rungjiratananon et al. 2011).

Each segment ``e`` carries a twist angle ``theta[e]`` [rad]: the angle of its material
direction ``m1 = cos(theta) u + sin(theta) t x u`` from the twist-free (Bishop) direction ``u``
of the chain, which is carried along the chain by parallel transport from the chain's first
segment (whose own ``u`` is carried in time).  Per chain, with vertices ``a..b`` and the
segment ``vertex_edge[v]`` from ``v`` to ``v + 1``:

- :func:`update_frames`: after a step moved the particles, each segment's material direction is
  carried in time (minimal rotation from its old tangent to its new one) and its angle is
  measured against the new Bishop frame; clamped segments take the angle of their frame.
- :func:`average_twist`: eqs. (1)-(3): the mass-weighted mean increment ``theta - theta_rest``
  of every region of segments (half-width ``w_twist``, per segment, so region sizes may vary
  along the string for a non-uniform torsional rigidity) is blended into the segments of the
  region, each segment taking the mean of the increments of the regions it belongs to (its
  per-region share ``1 / |R_i|``, as goal positions in shape matching).  Clamped segments keep
  their angles and drive the others.
- :func:`twist_forces`: eqs. (4)-(5): the force on the particles from the discrete twisting
  energy ``E = sum_i beta_i / (2 lbar_i) (m_i - mbar_i)^2``, ``m_i = theta_i - theta_{i-1}``
  at inner vertex ``i``, with the curvature binormal
  ``kb_i = 2 e_{i-1} x e_i / (|e_{i-1}| |e_i| + e_{i-1} . e_i)``:
  ``dm_i / dx_{i-1} = -kb_i / (2 |e_{i-1}|)``, ``dm_i / dx_{i+1} = kb_i / (2 |e_i|)`` and
  ``dm_i / dx_i`` minus their sum.  For a uniform twist it is the paper's eq. (4).
"""
from __future__ import annotations

import math

from numba import njit

from .rotation import signed_angle, transport, wrap_angle

__all__ = ["twist_forces", "update_frames", "average_twist", "twist_energy"]

_OPTS = {"cache": True, "error_model": "numpy"}
_INLINE = {"cache": True, "error_model": "numpy", "inline": "always"}


@njit(**_INLINE)
def _unit(x, i, j):
    """Unit vector from ``x[i]`` to ``x[j]`` and the distance."""
    dx = x[j, 0] - x[i, 0]
    dy = x[j, 1] - x[i, 1]
    dz = x[j, 2] - x[i, 2]
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    if n > 0.0:
        return dx / n, dy / n, dz / n, n
    return 0.0, 0.0, 0.0, 0.0


@njit(**_INLINE)
def _stiffness(v, e0, e1, m, st):
    """Twisting stiffness at inner vertex ``v`` [N m^2], thinned with plastic elongation
    (``J ~ r^4 ~ 1 / (1 + eps_p)^2`` per adjacent segment)."""
    return m.twist_stiffness[v] / ((1.0 + st.plastic_strain[e0]) * (1.0 + st.plastic_strain[e1]))


@njit(**_INLINE)
def _excess_twist(e0, e1, m, st):
    """``m_i - mbar_i`` between segments ``e0`` and ``e1`` [rad]."""
    return (st.theta[e1] - st.theta[e0]) - (m.rest_theta[e1] - m.rest_theta[e0])


@njit(**_OPTS)
def twist_forces(a, b, m, st, f_out, k_out):
    """Twisting forces [N] on the particles ``a..b`` of one chain into ``f_out`` [V, 3], and
    an estimate of their stiffness on each particle [N/m] into ``k_out`` [V] (the diagonal of
    the force Jacobian, ``|dE/dm| / l^2`` per stencil: the time integration divides the
    force's velocity change by ``1 + h^2 k / m``, which keeps explicit twisting forces
    stable); both overwritten there.  Returns the twisting energy [J]."""
    x = st.x
    for v in range(a, b + 1):
        f_out[v, 0] = 0.0
        f_out[v, 1] = 0.0
        f_out[v, 2] = 0.0
        k_out[v] = 0.0
    energy = 0.0
    for v in range(a + 1, b):
        e0 = m.vertex_edge[v - 1]
        e1 = m.vertex_edge[v]
        ax, ay, az = x[v, 0] - x[v - 1, 0], x[v, 1] - x[v - 1, 1], x[v, 2] - x[v - 1, 2]
        bx, by, bz = x[v + 1, 0] - x[v, 0], x[v + 1, 1] - x[v, 1], x[v + 1, 2] - x[v, 2]
        la = math.sqrt(ax * ax + ay * ay + az * az)
        lb = math.sqrt(bx * bx + by * by + bz * bz)
        den = la * lb + ax * bx + ay * by + az * bz
        if not (den > 1e-12 * la * lb):
            continue  # folded back on itself: the binormal is undefined
        kx = 2.0 * (ay * bz - az * by) / den
        ky = 2.0 * (az * bx - ax * bz) / den
        kz = 2.0 * (ax * by - ay * bx) / den
        lbar = 0.5 * (m.rest_length[e0] + m.rest_length[e1])
        tw = _excess_twist(e0, e1, m, st)
        beta = _stiffness(v, e0, e1, m, st)
        energy += 0.5 * beta / lbar * tw * tw
        c = beta * tw / lbar          # dE/dm
        ca = 0.5 * c / la             # F_{v-1} = -dE/dx_{v-1} = +c kb / (2 la)
        cb = 0.5 * c / lb             # F_{v+1} = -c kb / (2 lb)
        f_out[v - 1, 0] += ca * kx
        f_out[v - 1, 1] += ca * ky
        f_out[v - 1, 2] += ca * kz
        f_out[v + 1, 0] -= cb * kx
        f_out[v + 1, 1] -= cb * ky
        f_out[v + 1, 2] -= cb * kz
        f_out[v, 0] += (cb - ca) * kx
        f_out[v, 1] += (cb - ca) * ky
        f_out[v, 2] += (cb - ca) * kz
        ac = abs(c)
        k_out[v - 1] += ac / (la * la)
        k_out[v + 1] += ac / (lb * lb)
        k_out[v] += ac * (1.0 / la + 1.0 / lb) ** 2
    return energy


@njit(**_OPTS)
def twist_energy(a, b, m, st):
    """Twisting energy [J] of the chain ``a..b`` (the sum :func:`twist_forces` returns)."""
    energy = 0.0
    for v in range(a + 1, b):
        e0 = m.vertex_edge[v - 1]
        e1 = m.vertex_edge[v]
        lbar = 0.5 * (m.rest_length[e0] + m.rest_length[e1])
        tw = _excess_twist(e0, e1, m, st)
        energy += 0.5 * _stiffness(v, e0, e1, m, st) / lbar * tw * tw
    return energy


@njit(**_OPTS)
def update_frames(a, b, m, st, x_old, twist_target):
    """Carry the material directions of chain ``a..b``'s segments from ``x_old`` to the
    current positions and measure their angles against the new Bishop frames (see the module
    docstring); clamped segments take the angle of ``twist_target`` (nearest branch)."""
    x, u, theta = st.x, st.u, st.theta
    px = py = pz = 0.0   # previous segment's new tangent and Bishop direction
    qx = qy = qz = 0.0
    for v in range(a, b):
        e = m.vertex_edge[v]
        sx, sy, sz, ls = _unit(x_old, v, v + 1)
        tx, ty, tz, lt = _unit(x, v, v + 1)
        if ls == 0.0 or lt == 0.0:
            tx, ty, tz = sx, sy, sz
        # the old material frame's reference, carried in time onto the new tangent
        wx, wy, wz = transport(u[e, 0], u[e, 1], u[e, 2], sx, sy, sz, tx, ty, tz)
        if v == a:
            nx, ny, nz = wx, wy, wz
        else:
            nx, ny, nz = transport(qx, qy, qz, px, py, pz, tx, ty, tz)
        theta[e] += signed_angle(nx, ny, nz, wx, wy, wz, tx, ty, tz)
        u[e, 0], u[e, 1], u[e, 2] = nx, ny, nz
        d = m.edge_drive[e]
        if d >= 0:
            phi = signed_angle(nx, ny, nz, twist_target[d, 0], twist_target[d, 1],
                               twist_target[d, 2], tx, ty, tz)
            theta[e] += wrap_angle(phi - theta[e])
        px, py, pz = tx, ty, tz
        qx, qy, qz = nx, ny, nz


@njit(**_INLINE)
def _increment(j, first, n_e, held0, held1, m, theta):
    """Increment ``theta - theta_rest`` and weight of the chain's segment ``j``, which may lie
    beyond a clamped end (``j < 0`` with ``held0``, ``j >= n_e`` with ``held1``): there the
    increments continue by odd reflection about the clamped one, so that a uniform twist
    between clamps is kept as it is."""
    if j < 0:
        e0 = m.vertex_edge[first]
        e = m.vertex_edge[first - j]
        return 2.0 * (theta[e0] - m.rest_theta[e0]) - (theta[e] - m.rest_theta[e]), \
            m.edge_mass[e]
    if j >= n_e:
        e1 = m.vertex_edge[first + n_e - 1]
        e = m.vertex_edge[first + 2 * (n_e - 1) - j]
        return 2.0 * (theta[e1] - m.rest_theta[e1]) - (theta[e] - m.rest_theta[e]), \
            m.edge_mass[e]
    e = m.vertex_edge[first + j]
    return theta[e] - m.rest_theta[e], m.edge_mass[e]


@njit(**_OPTS)
def average_twist(a, b, m, st, goal, count, iterations):
    """Eqs. (1)-(3) on the segments of chain ``a..b``, ``iterations`` times (each pass reads
    the angles of the previous one); ``goal`` and ``count`` [E] are scratch.

    Regions are clipped at a free end (where the twist relaxes to none) and continued by odd
    reflection past a clamped one (:func:`_increment`; regions centred there too), so that
    between two clamps the angles
    settle to a uniform twist, the minimum of the twisting energy, instead of crowding next to
    the clamps."""
    theta = st.theta
    n_e = b - a        # segments of the chain: vertex_edge[a + j], j = 0 .. n_e - 1
    if n_e < 2:
        return
    held0 = m.edge_drive[m.vertex_edge[a]] >= 0
    held1 = m.edge_drive[m.vertex_edge[b - 1]] >= 0
    for _ in range(iterations):
        for j in range(n_e):
            e = m.vertex_edge[a + j]
            goal[e] = 0.0
            count[e] = 0.0
        k0 = -m.twist_half_width[m.vertex_edge[a]] if held0 else 0
        k1 = n_e - 1 + (m.twist_half_width[m.vertex_edge[b - 1]] if held1 else 0)
        for k in range(max(k0, -(n_e - 1)), min(k1, 2 * (n_e - 1)) + 1):
            km = -k if k < 0 else (2 * (n_e - 1) - k if k >= n_e else k)   # mirrored
            w = m.twist_half_width[m.vertex_edge[a + km]]
            lo = max(k - w, -(n_e - 1)) if held0 else max(0, k - w)
            hi = min(k + w, 2 * (n_e - 1)) if held1 else min(n_e - 1, k + w)
            num = 0.0
            den = 0.0
            for j in range(lo, hi + 1):
                d, wt = _increment(j, a, n_e, held0, held1, m, theta)
                num += d * wt
                den += wt
            inc = num / den                                  # eq. (1)
            for j in range(max(lo, 0), min(hi, n_e - 1) + 1):
                e = m.vertex_edge[a + j]
                goal[e] += inc                               # eq. (2)
                count[e] += 1.0
        for j in range(n_e):
            e = m.vertex_edge[a + j]
            if m.edge_drive[e] < 0:
                theta[e] = m.rest_theta[e] + goal[e] / count[e]   # eq. (3)
