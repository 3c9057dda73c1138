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

__all__ = ["collide_point", "contact_friction"]


@njit(cache=True)
def _push(p, x, nx, ny, nz, depth, mu, contact_depth, contact_normal, contact_mu):
    x[p, 0] += depth * nx
    x[p, 1] += depth * ny
    x[p, 2] += depth * nz
    contact_depth[p] += depth
    contact_normal[p, 0] = nx
    contact_normal[p, 1] = ny
    contact_normal[p, 2] = nz
    contact_mu[p] = mu


@njit(cache=True)
def collide_point(p, x, rad, planes, spheres, capsules, friction, contact_depth, contact_normal,
                   contact_mu):
    """Push point ``p`` (a sphere of radius ``rad``) out of every collider it penetrates."""
    k = 0
    for c in range(planes.shape[0]):
        nx, ny, nz = planes[c, 3], planes[c, 4], planes[c, 5]
        d = ((x[p, 0] - planes[c, 0]) * nx + (x[p, 1] - planes[c, 1]) * ny
             + (x[p, 2] - planes[c, 2]) * nz) - rad
        if d < 0.0:
            _push(p, x, nx, ny, nz, -d, friction[k + c], contact_depth, contact_normal, contact_mu)
    k += planes.shape[0]
    for c in range(spheres.shape[0]):
        dx = x[p, 0] - spheres[c, 0]
        dy = x[p, 1] - spheres[c, 1]
        dz = x[p, 2] - spheres[c, 2]
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        d = ln - spheres[c, 3] - rad
        if d < 0.0 and ln > 0.0:
            _push(p, x, dx / ln, dy / ln, dz / ln, -d, friction[k + c], contact_depth,
                  contact_normal, contact_mu)
    k += spheres.shape[0]
    for c in range(capsules.shape[0]):
        ax, ay, az = capsules[c, 0], capsules[c, 1], capsules[c, 2]
        ux = capsules[c, 3] - ax
        uy = capsules[c, 4] - ay
        uz = capsules[c, 5] - az
        uu = ux * ux + uy * uy + uz * uz
        t = 0.0
        if uu > 0.0:
            t = ((x[p, 0] - ax) * ux + (x[p, 1] - ay) * uy + (x[p, 2] - az) * uz) / uu
            t = min(1.0, max(0.0, t))
        dx = x[p, 0] - (ax + t * ux)
        dy = x[p, 1] - (ay + t * uy)
        dz = x[p, 2] - (az + t * uz)
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        d = ln - capsules[c, 6] - rad
        if d < 0.0 and ln > 0.0:
            _push(p, x, dx / ln, dy / ln, dz / ln, -d, friction[k + c], contact_depth,
                  contact_normal, contact_mu)


@njit(cache=True)
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
