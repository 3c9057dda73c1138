"""Kinematics of rods shared by the implicit models: held edges turned by frames, and the
bounds of a state (non-finite values, edge strain, speed)."""
from __future__ import annotations

import math

from numba import njit

__all__ = ["check_state", "drive_edge_angles", "strain_change_by_strand"]


@njit(cache=True)
def check_state(q, v, vertex_dof, edge_v0, edge_v1, rest_length, max_strain, max_speed):
    """Bounds of a state: ``(first non-finite coordinate of q or v, edge of the largest strain
    ``| |e| / lbar - 1 |`` if above ``max_strain`` (else -1), that strain, vertex of the largest
    speed [m/s] if above ``max_speed`` (else -1), that speed)``; a bound < 0 is not checked.

    q, v [N]; vertex_dof [V]; edge_v0, edge_v1 [E]; rest_length [E] [m].
    """
    bad = -1
    for j in range(q.shape[0]):
        if not (q[j] - q[j] == 0.0 and v[j] - v[j] == 0.0):
            bad = j
            break
    worst_e, worst_strain = -1, -1.0
    if max_strain >= 0.0:
        for e in range(edge_v0.shape[0]):
            a, b = vertex_dof[edge_v0[e]], vertex_dof[edge_v1[e]]
            x, y, z = q[b] - q[a], q[b + 1] - q[a + 1], q[b + 2] - q[a + 2]
            strain = abs(math.sqrt(x * x + y * y + z * z) / rest_length[e] - 1.0)
            if strain > worst_strain:
                worst_e, worst_strain = e, strain
        if not worst_strain > max_strain:
            worst_e = -1
    worst_p, worst_speed = -1, -1.0
    if max_speed >= 0.0:
        for p in range(vertex_dof.shape[0]):
            d = vertex_dof[p]
            speed = math.sqrt(v[d] * v[d] + v[d + 1] * v[d + 1] + v[d + 2] * v[d + 2])
            if speed > worst_speed:
                worst_p, worst_speed = p, speed
        if not worst_speed > max_speed:
            worst_p = -1
    return bad, worst_e, worst_strain, worst_p, worst_speed


@njit(cache=True)
def strain_change_by_strand(q_from, q_to, vertex_dof, edge_v0, edge_v1, rest_length,
                            strand_edge_start, change_out):
    """Largest change of an edge's strain ``| |e_to| - |e_from| | / lbar`` from ``q_from`` to
    ``q_to`` [N] in each strand, into ``change_out`` [S] (0 for a strand without edges).

    vertex_dof [V]; edge_v0, edge_v1, rest_length [E] ([m]); strand_edge_start [S + 1].
    """
    for s in range(change_out.shape[0]):
        worst = 0.0
        for e in range(strand_edge_start[s], strand_edge_start[s + 1]):
            a, b = vertex_dof[edge_v0[e]], vertex_dof[edge_v1[e]]
            x, y, z = q_to[b] - q_to[a], q_to[b + 1] - q_to[a + 1], q_to[b + 2] - q_to[a + 2]
            length_to = math.sqrt(x * x + y * y + z * z)
            x, y = q_from[b] - q_from[a], q_from[b + 1] - q_from[a + 1]
            z = q_from[b + 2] - q_from[a + 2]
            worst = max(worst, abs(length_to - math.sqrt(x * x + y * y + z * z))
                        / rest_length[e])
        change_out[s] = worst


@njit(cache=True)
def drive_edge_angles(q, q_prev, dof0, dof1, a1_prev, want, theta_dof):
    """Angles of held edges that turn their d1 onto ``want`` [D, 3] (unit, perpendicular to
    the edge): the reference director ``a1_prev`` [D, 3] is transported from the edge of
    ``q_prev`` (the step's start) onto the edge of ``q`` (vertices at ``dof0``, ``dof1`` [D],
    as in the model's frame transport), and ``q[theta_dof]`` [D] is set to the angle from it to
    ``want`` on the branch nearest its previous value, so that full turns accumulate."""
    for k in range(dof0.shape[0]):
        a, b = dof0[k], dof1[k]
        x, y, z = q[b] - q[a], q[b + 1] - q[a + 1], q[b + 2] - q[a + 2]
        n = math.sqrt(x * x + y * y + z * z)
        tx, ty, tz = x / n, y / n, z / n
        x = q_prev[b] - q_prev[a]
        y = q_prev[b + 1] - q_prev[a + 1]
        z = q_prev[b + 2] - q_prev[a + 2]
        n = math.sqrt(x * x + y * y + z * z)
        px, py, pz = x / n, y / n, z / n
        ux, uy, uz = a1_prev[k, 0], a1_prev[k, 1], a1_prev[k, 2]
        c = 1.0 + px * tx + py * ty + pz * tz
        if c > 1e-12:
            f = (ux * tx + uy * ty + uz * tz) / c
            ux -= f * (px + tx)
            uy -= f * (py + ty)
            uz -= f * (pz + tz)
        d = ux * tx + uy * ty + uz * tz
        ux -= d * tx
        uy -= d * ty
        uz -= d * tz
        nu = math.sqrt(ux * ux + uy * uy + uz * uz)
        ux /= nu
        uy /= nu
        uz /= nu
        wx, wy, wz = want[k, 0], want[k, 1], want[k, 2]
        cx = uy * wz - uz * wy
        cy = uz * wx - ux * wz
        cz = ux * wy - uy * wx
        ang = math.atan2(cx * tx + cy * ty + cz * tz, ux * wx + uy * wy + uz * wz)
        old = q[theta_dof[k]]
        q[theta_dof[k]] = old + (ang - old + math.pi) % (2.0 * math.pi) - math.pi
