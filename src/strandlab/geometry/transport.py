"""Parallel transport and twist-free reference directions along polylines.

These functions run once at set-up (Python level, vectorised where it matters); nothing here is
called inside a time step.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

__all__ = [
    "edge_tangents",
    "parallel_transport",
    "perpendicular_unit",
    "twist_free_directions",
    "rotate_about",
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
    for e in range(1, n):
        v = parallel_transport(d[e - 1], t[e - 1], t[e])
        v -= np.dot(v, t[e]) * t[e]
        d[e] = v / np.linalg.norm(v)
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
