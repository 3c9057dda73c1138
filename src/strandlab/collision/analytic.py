"""Contacts of points (spheres of a given radius) with analytic colliders.

Colliders are static: planes (point, unit normal) [N, 6], spheres (centre, radius) [N, 4] and
capsules (end a, end b, radius) [N, 7], with one friction coefficient each (planes first, then
spheres, then capsules).  As in Mueller et al. 2007, a penetrating point is projected to the
surface during the constraint passes; the depth and normal of its contacts are recorded for the
friction applied to velocities at the end of the step.
"""
from __future__ import annotations

import math

from numba import njit

__all__ = ["collider_gap", "n_colliders", "collide_point", "contact_friction"]


@njit(cache=True, inline="always")
def _push(p, x, nx, ny, nz, depth, mu, contact_depth, contact_normal, contact_mu):
    x[p, 0] += depth * nx
    x[p, 1] += depth * ny
    x[p, 2] += depth * nz
    contact_depth[p] += depth
    contact_normal[p, 0] = nx
    contact_normal[p, 1] = ny
    contact_normal[p, 2] = nz
    contact_mu[p] = mu


@njit(cache=True, inline="always")
def collider_gap(k, px, py, pz, planes, spheres, capsules):
    """Distance [m] of the point ``(px, py, pz)`` from the surface of collider ``k`` (planes
    first, then spheres, then capsules; negative inside), the outward unit normal ``n`` there,
    and the derivative of ``n`` with respect to the point, ``dn/dx = c (I - n n^T - u u^T)``:
    returns ``(gap, nx, ny, nz, c, ux, uy, uz)``.

    ``c`` is 0 for a plane and the inverse distance from the centre (sphere) or from the axis
    point (capsule); ``u`` is the capsule's unit axis where the closest axis point is inside
    the segment, else zero.  At a sphere's centre or on a capsule's axis the normal is not
    defined: ``n = 0`` (callers skip the collider there)."""
    npl = planes.shape[0]
    nsp = spheres.shape[0]
    if k < npl:
        nx, ny, nz = planes[k, 3], planes[k, 4], planes[k, 5]
        d = (px - planes[k, 0]) * nx + (py - planes[k, 1]) * ny + (pz - planes[k, 2]) * nz
        return d, nx, ny, nz, 0.0, 0.0, 0.0, 0.0
    if k < npl + nsp:
        c = k - npl
        dx = px - spheres[c, 0]
        dy = py - spheres[c, 1]
        dz = pz - spheres[c, 2]
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        if ln <= 0.0:
            return -spheres[c, 3], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        return ln - spheres[c, 3], dx / ln, dy / ln, dz / ln, 1.0 / ln, 0.0, 0.0, 0.0
    c = k - npl - nsp
    ax, ay, az = capsules[c, 0], capsules[c, 1], capsules[c, 2]
    ux = capsules[c, 3] - ax
    uy = capsules[c, 4] - ay
    uz = capsules[c, 5] - az
    uu = ux * ux + uy * uy + uz * uz
    t = 0.0
    if uu > 0.0:
        t = ((px - ax) * ux + (py - ay) * uy + (pz - az) * uz) / uu
        t = min(1.0, max(0.0, t))
    dx = px - (ax + t * ux)
    dy = py - (ay + t * uy)
    dz = pz - (az + t * uz)
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    if ln <= 0.0:
        return -capsules[c, 6], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if 0.0 < t < 1.0:
        su = 1.0 / math.sqrt(uu)
        ux, uy, uz = ux * su, uy * su, uz * su
    else:
        ux = uy = uz = 0.0
    return ln - capsules[c, 6], dx / ln, dy / ln, dz / ln, 1.0 / ln, ux, uy, uz


@njit(cache=True, inline="always")
def n_colliders(planes, spheres, capsules):
    """Number of colliders (planes, spheres and capsules together)."""
    return planes.shape[0] + spheres.shape[0] + capsules.shape[0]


@njit(cache=True, inline="always")
def collide_point(p, x, rad, planes, spheres, capsules, friction, contact_depth, contact_normal,
                   contact_mu):
    """Push point ``p`` (a sphere of radius ``rad``) out of every collider it penetrates."""
    for k in range(n_colliders(planes, spheres, capsules)):
        g, nx, ny, nz, _c, _ux, _uy, _uz = collider_gap(k, x[p, 0], x[p, 1], x[p, 2], planes,
                                                        spheres, capsules)
        d = g - rad
        if d < 0.0 and (nx != 0.0 or ny != 0.0 or nz != 0.0):
            _push(p, x, nx, ny, nz, -d, friction[k], contact_depth, contact_normal, contact_mu)


@njit(cache=True, inline="always")
def contact_friction(p, v, depth, normal, mu, dt):
    """Coulomb-like friction on the velocity ``v[p]`` [m/s] of a point pushed by ``depth[p]`` [m]
    along ``normal[p]`` during a step of ``dt`` [s]: the tangential velocity loses up to
    ``mu[p] * depth[p] / dt`` (the normal velocity change the push implies), and stops there."""
    if depth[p] > 0.0:
        nx = normal[p, 0]
        ny = normal[p, 1]
        nz = normal[p, 2]
        vn = v[p, 0] * nx + v[p, 1] * ny + v[p, 2] * nz
        tx = v[p, 0] - vn * nx
        ty = v[p, 1] - vn * ny
        tz = v[p, 2] - vn * nz
        vt = math.sqrt(tx * tx + ty * ty + tz * tz)
        if vt > 0.0:
            scale = max(0.0, 1.0 - mu[p] * (depth[p] / dt) / vt)
            v[p, 0] = vn * nx + scale * tx
            v[p, 1] = vn * ny + scale * ty
            v[p, 2] = vn * nz + scale * tz
