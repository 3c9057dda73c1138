"""Contacts between the segments of one strand (capsule against capsule).

Without them a twisted rod passes through itself and loses its linking number; with them loops
(plectonemes) stay tied.  Each contact is the distance constraint
``C = |p(s) - q(t)| - (r_i + r_j) >= 0`` between the closest points ``p(s)`` and ``q(t)`` of two
non-adjacent segments, projected with the points' inverse masses and the barycentric weights
``(1 - s, s, 1 - t, t)``, so the projection conserves linear and angular momentum.
"""
from __future__ import annotations

import math

from numba import njit

__all__ = ["segment_closest", "capsule_gap", "push_capsule_pair", "project_self_contacts"]


@njit(cache=True)
def segment_closest(x, a, b, c, d):
    """Parameters ``(s, t)`` of the closest points of segments ``x[a]x[b]`` and ``x[c]x[d]``."""
    d1x = x[b, 0] - x[a, 0]
    d1y = x[b, 1] - x[a, 1]
    d1z = x[b, 2] - x[a, 2]
    d2x = x[d, 0] - x[c, 0]
    d2y = x[d, 1] - x[c, 1]
    d2z = x[d, 2] - x[c, 2]
    rx = x[a, 0] - x[c, 0]
    ry = x[a, 1] - x[c, 1]
    rz = x[a, 2] - x[c, 2]
    aa = d1x * d1x + d1y * d1y + d1z * d1z
    ee = d2x * d2x + d2y * d2y + d2z * d2z
    ff = d2x * rx + d2y * ry + d2z * rz
    cc = d1x * rx + d1y * ry + d1z * rz
    bb = d1x * d2x + d1y * d2y + d1z * d2z
    den = aa * ee - bb * bb
    s = 0.0
    if den > 1e-14 * aa * ee:
        s = min(1.0, max(0.0, (bb * ff - cc * ee) / den))
    t = (bb * s + ff) / ee if ee > 0.0 else 0.0
    if t < 0.0:
        t = 0.0
        s = min(1.0, max(0.0, -cc / aa)) if aa > 0.0 else 0.0
    elif t > 1.0:
        t = 1.0
        s = min(1.0, max(0.0, (bb - cc) / aa)) if aa > 0.0 else 0.0
    return s, t


@njit(cache=True)
def capsule_gap(x, a, b, c, d):
    """Closest points of segments ``x[a]x[b]`` and ``x[c]x[d]``: ``(s, t, px, py, pz, dist)``,
    with ``(px, py, pz) = p(s) - q(t)`` [m] (from the second segment to the first) and ``dist``
    its length [m]."""
    s, t = segment_closest(x, a, b, c, d)
    px = (1 - s) * x[a, 0] + s * x[b, 0] - (1 - t) * x[c, 0] - t * x[d, 0]
    py = (1 - s) * x[a, 1] + s * x[b, 1] - (1 - t) * x[c, 1] - t * x[d, 1]
    pz = (1 - s) * x[a, 2] + s * x[b, 2] - (1 - t) * x[c, 2] - t * x[d, 2]
    dist = math.sqrt(px * px + py * py + pz * pz)
    return s, t, px, py, pz, dist


@njit(cache=True)
def push_capsule_pair(x, w, a, b, c, d, s, t, px, py, pz, dist, thickness):
    """Move the end points of two segments so that their closest points ``p(s)``, ``q(t)`` (gap
    vector ``(px, py, pz)`` of length ``dist`` > 0, from :func:`capsule_gap`) end ``thickness``
    [m] apart along the gap's direction.

    The constraint ``C = |p(s) - q(t)| - thickness`` is projected with the inverse masses ``w``
    [1/kg] and the barycentric weights ``(1 - s, s, 1 - t, t)``: point ``k`` moves by
    ``lambda w_k beta_k n``, so ``sum m dx = 0`` (linear momentum) and, about any origin,
    ``sum m x x dx = lambda (p - q) x n = 0`` (angular momentum).  Returns False (nothing moved)
    when all four points are kinematic.
    """
    wa = (1 - s) * (1 - s) * w[a]
    wb = s * s * w[b]
    wc = (1 - t) * (1 - t) * w[c]
    wd = t * t * w[d]
    wsum = wa + wb + wc + wd
    if wsum <= 0.0:
        return False
    lam = (thickness - dist) / wsum
    move_capsule_pair(x, w, a, b, c, d, s, t, lam, px / dist, py / dist, pz / dist)
    return True


@njit(cache=True, _nrt=False)
def move_capsule_pair(x, w, a, b, c, d, s, t, lam, nx, ny, nz):
    """Move segment ``a-b`` by ``+lam n`` and segment ``c-d`` by ``-lam n`` at their points
    ``s``, ``t``: point ``k`` by ``lam w_k beta_k n`` with the barycentric weights
    ``beta = (1 - s, s, 1 - t, t)`` (linear momentum kept)."""
    for r in range(3):
        nr = nx if r == 0 else (ny if r == 1 else nz)
        x[a, r] += lam * (1 - s) * w[a] * nr
        x[b, r] += lam * s * w[b] * nr
        x[c, r] -= lam * (1 - t) * w[c] * nr
        x[d, r] -= lam * t * w[d] * nr


@njit(cache=True)
def project_self_contacts(x, w, edge_p0, edge_p1, e0, e1, thickness, skip):
    """Push apart every pair of segments of edges ``e0..e1`` closer than ``thickness`` [m].

    Pairs within ``skip`` edges of each other (along the strand) are ignored: neighbours touch
    by construction.  Returns the number of contacts projected.
    """
    n = 0
    ne = e1 - e0
    for i in range(e0, e1):
        a = edge_p0[i]
        b = edge_p1[i]
        for j in range(i + skip + 1, e1):
            if ne - (j - i) <= skip and edge_p1[e1 - 1] == edge_p0[e0]:
                continue  # neighbours across the seam of a closed strand
            c = edge_p0[j]
            d = edge_p1[j]
            # cheap rejection on midpoint distance
            mx = 0.5 * (x[a, 0] + x[b, 0] - x[c, 0] - x[d, 0])
            my = 0.5 * (x[a, 1] + x[b, 1] - x[c, 1] - x[d, 1])
            mz = 0.5 * (x[a, 2] + x[b, 2] - x[c, 2] - x[d, 2])
            hx = x[b, 0] - x[a, 0]
            hy = x[b, 1] - x[a, 1]
            hz = x[b, 2] - x[a, 2]
            kx = x[d, 0] - x[c, 0]
            ky = x[d, 1] - x[c, 1]
            kz = x[d, 2] - x[c, 2]
            reach = 0.5 * (math.sqrt(hx * hx + hy * hy + hz * hz)
                           + math.sqrt(kx * kx + ky * ky + kz * kz)) + thickness
            if mx * mx + my * my + mz * mz > reach * reach:
                continue
            s, t, px, py, pz, dist = capsule_gap(x, a, b, c, d)
            if dist >= thickness or dist <= 0.0:
                continue
            if push_capsule_pair(x, w, a, b, c, d, s, t, px, py, pz, dist, thickness):
                n += 1
    return n
