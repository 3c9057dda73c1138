"""Parallel transport and twist-free reference directions along polylines.

These functions run once at set-up (Python level, vectorised where it matters); nothing here is
called inside a time step.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

__all__ = [
    "edge_tangents",
    "parallel_transport",
    "perpendicular_unit",
    "twist_free_directions",
    "rotate_about",
    "symmetric_first_direction",
    "material_directions",
    "transport_rows",
    "twist_angles",
]


def edge_tangents(points: np.ndarray, *, closed: bool = False) -> np.ndarray:
    """Unit tangents of the edges of a polyline, shape [n_edges, 3].

    ``closed`` adds the edge from the last point back to the first.
    """
    p = np.asarray(points, dtype=np.float64)
    e = (np.roll(p, -1, axis=0) - p) if closed else np.diff(p, axis=0)
    n = np.linalg.norm(e, axis=1)
    if np.any(n <= 0.0):
        bad = int(np.argmin(n))
        raise ValueError(f"edge {bad} has zero length")
    return e / n[:, None]


def perpendicular_unit(t: np.ndarray, hint=None) -> np.ndarray:
    """A unit vector perpendicular to unit vector ``t`` (shape [3]).

    Uses ``hint`` projected off ``t`` when given and not parallel to it.
    """
    t = np.asarray(t, dtype=np.float64)
    if hint is not None:
        h = np.asarray(hint, dtype=np.float64)
        h = h - np.dot(h, t) * t
        nh = np.linalg.norm(h)
        if nh > 1e-9 * max(1.0, np.linalg.norm(hint)):
            return h / nh
    axis = np.eye(3)[int(np.argmin(np.abs(t)))]
    h = axis - np.dot(axis, t) * t
    return h / np.linalg.norm(h)


def parallel_transport(u: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
    """Transport vector ``u`` from unit tangent ``t0`` to ``t1`` by the minimal rotation.

    For antiparallel tangents the rotation is by pi about an axis perpendicular to both.
    """
    b = np.cross(t0, t1)
    s = np.linalg.norm(b)
    c = float(np.clip(np.dot(t0, t1), -1.0, 1.0))
    if s < 1e-15:
        if c > 0.0:
            return np.array(u, dtype=np.float64)
        axis = perpendicular_unit(t0)
        return Rotation.from_rotvec(np.pi * axis).apply(u)
    angle = np.arctan2(s, c)
    return Rotation.from_rotvec(angle * b / s).apply(u)


def rotate_about(u: np.ndarray, axis: np.ndarray, angle) -> np.ndarray:
    """Rotate vectors ``u`` [n, 3] about unit axes ``axis`` [n, 3] by ``angle`` [n] (radians)."""
    return Rotation.from_rotvec(np.asarray(axis) * np.asarray(angle)[:, None]).apply(u)


def _signed_angle(u, v, axis):
    """Signed angle from ``u`` to ``v`` about ``axis`` (all [n, 3])."""
    return np.arctan2(np.einsum("ij,ij->i", np.cross(u, v), axis), np.einsum("ij,ij->i", u, v))


def transport_rows(u: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
    """Row-wise :func:`parallel_transport`: vectors ``u`` [n, 3] perpendicular to the unit
    tangents ``t0`` [n, 3] carried onto the unit tangents ``t1`` [n, 3] by the minimal rotation
    ``P(a) = a - (a . t1) / (1 + t0 . t1) (t0 + t1)``; rows whose tangents turn back by (nearly)
    pi go through :func:`parallel_transport`."""
    u, t0, t1 = (np.asarray(v, dtype=np.float64).reshape(-1, 3) for v in (u, t0, t1))
    c = 1.0 + np.einsum("ij,ij->i", t0, t1)
    ok = c > 1e-6
    f = np.einsum("ij,ij->i", u, t1) / np.where(ok, c, 1.0)
    out = u - f[:, None] * (t0 + t1)
    for i in np.flatnonzero(~ok):
        out[i] = parallel_transport(u[i], t0[i], t1[i])
    return out


def twist_angles(t0: np.ndarray, t1: np.ndarray, d0: np.ndarray, d1: np.ndarray) -> np.ndarray:
    """Discrete twist [rad] between consecutive edges, shape [n]: the signed angle about
    ``t1`` from ``d0`` (material direction of the edge with unit tangent ``t0``) transported
    onto ``t1`` to ``d1``; all arguments [n, 3]."""
    d1 = np.asarray(d1, dtype=np.float64).reshape(-1, 3)
    t1 = np.asarray(t1, dtype=np.float64).reshape(-1, 3)
    return _signed_angle(transport_rows(d0, t0, t1), d1, t1)


def _transport_along(t: np.ndarray, d: np.ndarray) -> None:
    """``d[e]`` for ``e >= 1``: ``d[e - 1]`` carried onto tangent ``t[e]`` by the minimal
    rotation ``P(a) = a - (a . t1) / (1 + t0 . t1) (t0 + t1)`` (exact for ``a`` perpendicular to
    ``t0``), then made unit and perpendicular to ``t[e]``; a tangent that turns back by (nearly)
    pi goes through :func:`parallel_transport`.  Plain floats: about 30 times faster per edge
    than a SciPy rotation, which matters for hair (hundreds of thousands of edges)."""
    tl = t.tolist()
    ax, ay, az = (float(v) for v in d[0])
    out = [None] * len(tl)
    for e in range(1, len(tl)):
        t0x, t0y, t0z = tl[e - 1]
        t1x, t1y, t1z = tl[e]
        c = 1.0 + t0x * t1x + t0y * t1y + t0z * t1z
        if c > 1e-6:
            f = (ax * t1x + ay * t1y + az * t1z) / c
            ax, ay, az = ax - f * (t0x + t1x), ay - f * (t0y + t1y), az - f * (t0z + t1z)
        else:
            ax, ay, az = (float(v) for v in parallel_transport(np.array([ax, ay, az]),
                                                                t[e - 1], t[e]))
        p = ax * t1x + ay * t1y + az * t1z
        ax, ay, az = ax - p * t1x, ay - p * t1y, az - p * t1z
        nrm = math.sqrt(ax * ax + ay * ay + az * az)
        ax, ay, az = ax / nrm, ay / nrm, az / nrm
        out[e] = (ax, ay, az)
    if len(tl) > 1:
        d[1:] = out[1:]


def twist_free_directions(points: np.ndarray, *, closed: bool = False, first=None,
                          relax: bool = True) -> np.ndarray:
    """Unit directions ``d1`` per edge, perpendicular to the edge, with no twist between edges.

    The first edge's direction is ``first`` projected off its tangent (an arbitrary perpendicular
    when ``None``); the others follow by parallel transport (Bergou et al. 2008). For a closed
    polyline the transport around the loop generally does not return to the start (holonomy);
    the frames are then relaxed as in section 6 of Umetani et al. 2014, whose iterative
    averaging of neighbouring frames spreads the closing twist uniformly over the loop; the
    uniform fixed point is computed directly.  ``relax=False`` returns the transported
    directions without relaxation.
    Returns shape [n_edges, 3].
    """
    t = edge_tangents(points, closed=closed)
    n = len(t)
    d = np.empty_like(t)
    d[0] = perpendicular_unit(t[0], first)
    _transport_along(t, d)
    if not closed or n < 3 or not relax:
        return d
    # Relaxation.  Rotating frame e by theta_e about its tangent changes the twist angle of
    # element (e, e+1) from phi0_e to phi0_e + theta_{e+1} - theta_e (transport commutes with
    # rotations about the tangent).  The paper's iterative averaging of neighbouring frames
    # converges to equal twist angles, phi_e = mean(phi0); that fixed point is reached directly
    # by accumulating the differences.
    nxt = np.roll(np.arange(n), -1)
    transported_next = np.array([parallel_transport(d[e], t[e], t[nxt[e]]) for e in range(n)])
    phi0 = _signed_angle(transported_next, d[nxt], t[nxt])
    theta = np.concatenate([[0.0], np.cumsum(np.mean(phi0) - phi0)[:-1]])
    d = rotate_about(d, t, theta)
    return d / np.linalg.norm(d, axis=1)[:, None]


def symmetric_first_direction(points: np.ndarray, gravity) -> np.ndarray | None:
    """Default first-edge d1 hint that keeps a planar problem's mirror symmetry, or None.

    A material direction off the plane of a planar problem (a straight strand and gravity, or a
    planar strand with gravity in its plane) breaks the problem's mirror symmetry about that
    plane, and a strand whose model distinguishes d1 from d2 drifts out of it (docs/pbd.md,
    "Planar motion").  The hint puts d1 in the plane: along gravity (projected off the first
    edge) for a straight strand, in the strand's plane for a planar one; twist-free transport
    keeps it there.
    """
    t0 = points[1] - points[0]
    t0 = t0 / np.linalg.norm(t0)
    c = points - points[0]
    scale = max(float(np.max(np.linalg.norm(c, axis=1))), 1e-300)
    off = c - np.outer(c @ t0, t0)
    g = np.asarray(gravity, dtype=np.float64)
    gn = float(np.linalg.norm(g))
    if np.max(np.linalg.norm(off, axis=1)) <= 1e-12 * scale:   # straight
        if gn == 0.0:
            return None
        h = g - np.dot(g, t0) * t0
        return h if np.linalg.norm(h) > 1e-9 * gn else None
    _, sv, vt = np.linalg.svd(c - c.mean(axis=0))
    if sv[2] > 1e-12 * max(sv[0], 1e-300):                      # not planar
        return None
    n = vt[2]
    if gn > 0.0 and abs(np.dot(g, n)) > 1e-12 * gn:             # gravity leaves the plane
        return None
    return np.cross(n, t0)


def material_directions(points: np.ndarray, *, closed: bool = False, d1=None,
                        gravity=(0.0, 0.0, 0.0), label: str = "strand") -> np.ndarray:
    """Unit material directions d1 per edge, [n_edges, 3], for a strand's ``points``.

    ``d1`` may be given per edge ([n_edges, 3], projected off each edge), for the first edge
    only ([3], then carried along by twist-free transport), or ``None`` (the first edge's d1 from
    :func:`symmetric_first_direction`, else arbitrary, then transported).  ValueError naming
    ``label`` and the edge when a given direction is parallel to its edge.
    """
    n_edges = len(points) if closed else len(points) - 1
    if d1 is not None and d1.shape == (n_edges, 3):
        t = (np.roll(points, -1, axis=0) - points) if closed else np.diff(points, axis=0)
        t = t / np.linalg.norm(t, axis=1)[:, None]
        d = d1 - np.einsum("ij,ij->i", d1, t)[:, None] * t
        n = np.linalg.norm(d, axis=1)
        bad = np.nonzero(n <= 1e-9 * np.maximum(np.linalg.norm(d1, axis=1), 1e-300))[0]
        if len(bad):
            raise ValueError(f"{label}: d1 of edge {int(bad[0])} is parallel to the edge")
        return d / n[:, None]
    first = d1 if d1 is not None else symmetric_first_direction(points, gravity)
    if d1 is not None:
        t0 = points[1] - points[0]
        t0 = t0 / np.linalg.norm(t0)
        if np.linalg.norm(first - np.dot(first, t0) * t0) <= 1e-9 * np.linalg.norm(first):
            raise ValueError(f"{label}: d1 is parallel to the first edge")
    return twist_free_directions(points, closed=closed, first=first)
