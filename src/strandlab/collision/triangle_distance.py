"""Unsigned point-triangle and edge-edge distances with exact gradients and Hessians.

A contact primitive has four vertices (12 coordinates): a point ``p`` and a triangle
``(t0, t1, t2)``, or two edges ``(a0, a1)`` and ``(b0, b1)``.  Vertex ``j`` of a primitive has
its coordinates at ``q[i_j], q[i_j + 1], q[i_j + 2]`` of a flat array ``q`` [m] (the DOF index
of its ``x``), so the functions read a solver's generalized coordinates directly.

Classification (the closest-point *type*, as in IPC, Li et al. 2020).  The closest points are
written as ``r = sum_j c_j x_j`` (the vector between them), with barycentric coefficients ``c``
(summing to zero) that are affine in ``m`` free parameters ``lambda``:

- point-point (``m = 0``): ``r = p - t_i`` (or an edge end against an edge end);
- point-edge (``m = 1``): ``r = p - (1 - l) e_0 - l e_1`` with ``0 < l < 1``;
- point-plane (``m = 2``): ``r = p - (t0 + l1 (t1 - t0) + l2 (t2 - t0))``, projection inside
  the triangle;
- edge-edge (``m = 2``): ``r = a0 + s (a1 - a0) - b0 - t (b1 - b0)``, ``0 < s, t < 1``.

A point whose projection is not inside the triangle is closest to its boundary: the nearest of
the three point-edge (or point-point) distances.  Two edges whose line-line closest points are
not both interior, or that are nearly parallel (``|u x v|^2 <= PARALLEL_EPS |u|^2 |v|^2``, the
sine of their angle below 1e-5), take the nearest of the four endpoint-to-edge distances: exact
for parallel edges, and for nearly parallel ones too large by at most ``sin(angle)`` times the
edge length (a relative 1e-5).  A triangle whose area is tiny against its edges (the same test
on its two edges at ``t0``) is treated by its edges alike.  No type divides by a vanishing
quantity.

Derivatives.  Within a type, ``f(x) = d^2 = min_lambda |r(x, lambda)|^2`` with ``r`` linear in
``x`` for fixed ``lambda`` and in ``lambda`` for fixed ``x``.  By the envelope theorem the
gradient is ``df/dx_(j,a) = 2 c_j r_a``, continuous across types.  The Hessian is the Schur
complement ``f_xx - B A^{-1} B^T`` with ``f_xx = 2 c_j c_k delta_ab``, ``A = 2 u_m . u_n``
(``u_m = sum_j g_jm x_j``, ``g_jm = dc_j / dlambda_m``) and
``B_(j,a),m = 2 (c_j u_m,a + r_a g_jm)``: exact inside each type (it jumps between types).
The distance ``d = sqrt(f)`` has ``grad d = grad f / (2 d)`` and
``hess d = hess f / (2 d) - grad f grad f^T / (4 d^3)`` (:func:`distance_derivatives`).

Scratch.  The coefficients live in a row ``w[s]`` of 12 slots: ``c`` in 0:4, ``g_.0`` in 4:8,
``g_.1`` in 8:12; gradients in ``grad[s]`` (12) and Hessians in ``hess[s]`` (12 x 12), slot
``3 j + a`` for coordinate ``a`` of vertex ``j``.  The Numba functions allocate nothing.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["POINT_POINT", "POINT_EDGE", "POINT_PLANE", "EDGE_EDGE", "PARALLEL_EPS",
           "point_triangle_coefficients", "edge_edge_coefficients", "squared_distance",
           "squared_distance_derivatives", "point_triangle_distance", "edge_edge_distance",
           "distance_derivatives", "edge_sine2", "edge_sine2_gradient", "edge_sine2_hessian",
           "mollifier"]

POINT_POINT = 0   #: Closest points are two vertices
POINT_EDGE = 1    #: A vertex and the interior of an edge
POINT_PLANE = 2   #: A vertex and the interior of a triangle
EDGE_EDGE = 3     #: The interiors of two edges
PARALLEL_EPS = 1e-10
"""Squared sine of the angle of two edges (or of a triangle's corner at ``t0``) below which the
edge-edge (point-plane) type is not used (module docstring)."""


@njit(cache=True, _nrt=False)
def _clear_row(w, s):
    for i in range(12):
        w[s, i] = 0.0


@njit(cache=True, _nrt=False)
def _diff_dot(q, ia, ib, ic, id_):
    """``(x_b - x_a) . (x_d - x_c)`` of the points at DOF indices ``ia, ib, ic, id_``."""
    acc = 0.0
    for a in range(3):
        acc += (q[ib + a] - q[ia + a]) * (q[id_ + a] - q[ic + a])
    return acc


@njit(cache=True, _nrt=False)
def _point_edge_param(q, ip, ia, ib):
    """Parameter ``l`` in [0, 1] of the point of edge ``(a, b)`` closest to ``p``, and the
    squared distance."""
    e2 = _diff_dot(q, ia, ib, ia, ib)
    t = 0.0
    if e2 > 0.0:
        t = min(1.0, max(0.0, _diff_dot(q, ia, ib, ia, ip) / e2))
    d2 = 0.0
    for a in range(3):
        r = q[ip + a] - (1.0 - t) * q[ia + a] - t * q[ib + a]
        d2 += r * r
    return t, d2


@njit(cache=True, _nrt=False)
def _set_point_edge(w, s, sp, sa, sb, t):
    """Coefficients of point slot ``sp`` against the edge of slots ``(sa, sb)`` at parameter
    ``t``; returns ``(type, m)``."""
    _clear_row(w, s)
    w[s, sp] = 1.0
    w[s, sa] = -(1.0 - t)
    w[s, sb] = -t
    if 0.0 < t < 1.0:
        w[s, 4 + sa] = 1.0
        w[s, 4 + sb] = -1.0
        return POINT_EDGE, 1
    return POINT_POINT, 0


@njit(cache=True, _nrt=False)
def _nearest_point_edge(q, i0, i1, i2, i3, cand, w, s):
    """The nearest of the point-edge candidates ``cand`` (rows ``(point, edge start, edge end)``
    of slots 0..3; -1 rows skipped) written into ``w[s]``; returns ``(type, m)``."""
    idx = (i0, i1, i2, i3)
    best = -1
    best_t = 0.0
    best_d2 = np.inf
    for c in range(4):
        if cand[c][0] < 0:
            continue
        t, d2 = _point_edge_param(q, idx[cand[c][0]], idx[cand[c][1]], idx[cand[c][2]])
        if d2 < best_d2:
            best, best_t, best_d2 = c, t, d2
    return _set_point_edge(w, s, cand[best][0], cand[best][1], cand[best][2], best_t)


@njit(cache=True, _nrt=False)
def point_triangle_coefficients(q, ip, i0, i1, i2, w, s):
    """Closest-point type of point ``p`` (DOF index ``ip``) and triangle ``(t0, t1, t2)``
    (``i0, i1, i2``); writes ``c`` and ``g`` into ``w[s]`` (slots: p, t0, t1, t2).  Returns
    ``(type, m)``: :data:`POINT_POINT`, :data:`POINT_EDGE` or :data:`POINT_PLANE`, and the
    number of free parameters."""
    a11 = _diff_dot(q, i0, i1, i0, i1)
    a12 = _diff_dot(q, i0, i1, i0, i2)
    a22 = _diff_dot(q, i0, i2, i0, i2)
    det = a11 * a22 - a12 * a12
    if det > PARALLEL_EPS * a11 * a22:
        b1 = _diff_dot(q, i0, i1, i0, ip)
        b2 = _diff_dot(q, i0, i2, i0, ip)
        l1 = (a22 * b1 - a12 * b2) / det
        l2 = (a11 * b2 - a12 * b1) / det
        if l1 > 0.0 and l2 > 0.0 and l1 + l2 < 1.0:
            _clear_row(w, s)
            w[s, 0] = 1.0
            w[s, 1] = -(1.0 - l1 - l2)
            w[s, 2] = -l1
            w[s, 3] = -l2
            w[s, 5] = 1.0
            w[s, 6] = -1.0
            w[s, 9] = 1.0
            w[s, 11] = -1.0
            return POINT_PLANE, 2
    cand = ((0, 1, 2), (0, 2, 3), (0, 3, 1), (-1, -1, -1))
    return _nearest_point_edge(q, ip, i0, i1, i2, cand, w, s)


@njit(cache=True, _nrt=False)
def edge_edge_coefficients(q, ia0, ia1, ib0, ib1, w, s):
    """Closest-point type of edges ``(a0, a1)`` and ``(b0, b1)`` (DOF indices); writes ``c``
    and ``g`` into ``w[s]`` (slots: a0, a1, b0, b1).  Returns ``(type, m)``:
    :data:`EDGE_EDGE`, or :data:`POINT_EDGE` / :data:`POINT_POINT` of an endpoint."""
    aa = _diff_dot(q, ia0, ia1, ia0, ia1)
    bb = _diff_dot(q, ib0, ib1, ib0, ib1)
    ab = _diff_dot(q, ia0, ia1, ib0, ib1)
    da = _diff_dot(q, ia0, ia1, ib0, ia0)    # u . (a0 - b0)
    db = _diff_dot(q, ib0, ib1, ib0, ia0)    # v . (a0 - b0)
    den = aa * bb - ab * ab
    if den > PARALLEL_EPS * aa * bb:
        sa = (ab * db - bb * da) / den
        tb = (aa * db - ab * da) / den
        if 0.0 < sa < 1.0 and 0.0 < tb < 1.0:
            _clear_row(w, s)
            w[s, 0] = 1.0 - sa
            w[s, 1] = sa
            w[s, 2] = -(1.0 - tb)
            w[s, 3] = -tb
            w[s, 4] = -1.0
            w[s, 5] = 1.0
            w[s, 10] = 1.0
            w[s, 11] = -1.0
            return EDGE_EDGE, 2
    cand = ((0, 2, 3), (1, 2, 3), (2, 0, 1), (3, 0, 1))
    return _nearest_point_edge(q, ia0, ia1, ib0, ib1, cand, w, s)


@njit(cache=True, _nrt=False)
def _r(q, i0, i1, i2, i3, w, s, a, col):
    """Coordinate ``a`` of ``sum_j w[s, col + j] x_j`` (``col`` 0: r, 4: u_0, 8: u_1)."""
    return (w[s, col] * q[i0 + a] + w[s, col + 1] * q[i1 + a] + w[s, col + 2] * q[i2 + a]
            + w[s, col + 3] * q[i3 + a])


@njit(cache=True, _nrt=False)
def squared_distance(q, i0, i1, i2, i3, w, s):
    """``|r|^2`` [m^2] for the coefficients in ``w[s]``."""
    d2 = 0.0
    for a in range(3):
        r = _r(q, i0, i1, i2, i3, w, s, a, 0)
        d2 += r * r
    return d2


@njit(cache=True, _nrt=False)
def _b(w, s, r, u0, u1, i, n):
    """``B_(j,a),n / 2`` of the Schur complement, ``i = 3 j + a``."""
    j = i // 3
    a = i - 3 * j
    if n == 0:
        return w[s, j] * u0[a] + r[a] * w[s, 4 + j]
    return w[s, j] * u1[a] + r[a] * w[s, 8 + j]


@njit(cache=True, _nrt=False)
def squared_distance_derivatives(q, i0, i1, i2, i3, w, s, m, grad_out, hess_out, want_hess):
    """``f = d^2`` [m^2] for the coefficients in ``w[s]`` (``m`` free parameters); writes
    ``df/dx`` into ``grad_out[s]`` [12] and, when ``want_hess``, ``d^2f/dx^2`` into
    ``hess_out[s]`` [12, 12] (module docstring).  Returns ``f``."""
    r = (_r(q, i0, i1, i2, i3, w, s, 0, 0), _r(q, i0, i1, i2, i3, w, s, 1, 0),
         _r(q, i0, i1, i2, i3, w, s, 2, 0))
    for i in range(12):
        grad_out[s, i] = 2.0 * w[s, i // 3] * r[i - 3 * (i // 3)]
    if want_hess:
        u0 = (_r(q, i0, i1, i2, i3, w, s, 0, 4), _r(q, i0, i1, i2, i3, w, s, 1, 4),
              _r(q, i0, i1, i2, i3, w, s, 2, 4))
        u1 = (_r(q, i0, i1, i2, i3, w, s, 0, 8), _r(q, i0, i1, i2, i3, w, s, 1, 8),
              _r(q, i0, i1, i2, i3, w, s, 2, 8))
        a00 = u0[0] * u0[0] + u0[1] * u0[1] + u0[2] * u0[2]
        a01 = u0[0] * u1[0] + u0[1] * u1[1] + u0[2] * u1[2]
        a11 = u1[0] * u1[0] + u1[1] * u1[1] + u1[2] * u1[2]
        # (A / 2)^-1 for the free parameters; 0 where absent
        v00 = v01 = v11 = 0.0
        if m == 1:
            v00 = 1.0 / a00
        elif m == 2:
            det = a00 * a11 - a01 * a01
            v00, v01, v11 = a11 / det, -a01 / det, a00 / det
        for i in range(12):
            bi0 = _b(w, s, r, u0, u1, i, 0)
            bi1 = _b(w, s, r, u0, u1, i, 1)
            for k in range(i, 12):
                h = 0.0
                if i - 3 * (i // 3) == k - 3 * (k // 3):
                    h = 2.0 * w[s, i // 3] * w[s, k // 3]
                if m > 0:
                    bk0 = _b(w, s, r, u0, u1, k, 0)
                    bk1 = _b(w, s, r, u0, u1, k, 1)
                    h -= 2.0 * (bi0 * (v00 * bk0 + v01 * bk1) + bi1 * (v01 * bk0 + v11 * bk1))
                hess_out[s, i, k] = h
                hess_out[s, k, i] = h
    return r[0] * r[0] + r[1] * r[1] + r[2] * r[2]


# ------------------------------------------------------------------ parallel edges

@njit(cache=True, _nrt=False)
def edge_sine2(q, ia0, ia1, ib0, ib1):
    """``s = sin^2`` of the angle of edges ``u = a1 - a0`` and ``v = b1 - b0``,
    ``1 - (u.v)^2 / (|u|^2 |v|^2)`` (1 when an edge has zero length).  Returns
    ``(s, u, v)`` (``u``, ``v`` as 3-tuples)."""
    u = (q[ia1] - q[ia0], q[ia1 + 1] - q[ia0 + 1], q[ia1 + 2] - q[ia0 + 2])
    v = (q[ib1] - q[ib0], q[ib1 + 1] - q[ib0 + 1], q[ib1 + 2] - q[ib0 + 2])
    p = u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    aa = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    bb = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    if aa * bb == 0.0:
        return 1.0, u, v
    return 1.0 - p * p / (aa * bb), u, v


@njit(cache=True, _nrt=False)
def _uv_slot(i):
    """Slot ``i`` (0..11, over a0, a1, b0, b1) as ``(sign, which, axis)``: ``u = a1 - a0`` is
    which 0, ``v = b1 - b0`` which 1."""
    j = i // 3
    return (1.0 if j % 2 == 1 else -1.0), j // 2, i - 3 * j


@njit(cache=True, _nrt=False)
def edge_sine2_gradient(u, v, i):
    """Entry ``i`` (slot over a0, a1, b0, b1) of the gradient of :func:`edge_sine2`."""
    sg, which, a = _uv_slot(i)
    p = u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    aa = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    bb = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    c = 2.0 * p / (aa * bb)
    if which == 0:
        return -sg * c * (v[a] - p / aa * u[a])
    return -sg * c * (u[a] - p / bb * v[a])


@njit(cache=True, _nrt=False)
def edge_sine2_hessian(u, v, i, k):
    """Entry ``(i, k)`` of the Hessian of :func:`edge_sine2`: minus that of
    ``w = p^2 / (A B)``, ``p = u.v``, ``A = |u|^2``, ``B = |v|^2``, by the chain rule."""
    si, wi, a = _uv_slot(i)
    sk, wk, b = _uv_slot(k)
    p = u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    aa = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    bb = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    # d p, d A, d B with respect to the u / v coordinate of each slot
    gpi = v[a] if wi == 0 else u[a]
    gpk = v[b] if wk == 0 else u[b]
    gai = 2.0 * u[a] if wi == 0 else 0.0
    gak = 2.0 * u[b] if wk == 0 else 0.0
    gbi = 2.0 * v[a] if wi == 1 else 0.0
    gbk = 2.0 * v[b] if wk == 1 else 0.0
    ab = aa * bb
    h = (2.0 / ab * gpi * gpk - 2.0 * p / (aa * ab) * (gpi * gak + gai * gpk)
         - 2.0 * p / (bb * ab) * (gpi * gbk + gbi * gpk) + 2.0 * p * p / (aa * aa * ab) * gai * gak
         + 2.0 * p * p / (bb * bb * ab) * gbi * gbk + p * p / (ab * ab) * (gai * gbk + gbi * gak))
    if a == b:
        if wi != wk:
            h += 2.0 * p / ab
        elif wi == 0:
            h -= 2.0 * p * p / (aa * ab)
        else:
            h -= 2.0 * p * p / (bb * ab)
    return -si * sk * h


@njit(cache=True, _nrt=False)
def mollifier(s, kappa):
    """``(m, dm/ds, d^2m/ds^2)`` of ``m = (2 - s / kappa) s / kappa`` for ``s < kappa``, else
    ``(1, 0, 0)``: C1, zero at ``s = 0``."""
    if s >= kappa:
        return 1.0, 0.0, 0.0
    r = s / kappa
    return (2.0 - r) * r, (2.0 - 2.0 * r) / kappa, -2.0 / (kappa * kappa)


# ------------------------------------------------------------------ convenience (allocating)

def distance_derivatives(f: float, grad_f: np.ndarray, hess_f: np.ndarray):
    """``(d, grad d, hess d)`` from ``f = d^2`` and its gradient [12] and Hessian [12, 12];
    ValueError at ``d = 0`` (no derivative)."""
    d = float(np.sqrt(f))
    if d == 0.0:
        raise ValueError("the distance is zero: it has no derivative there")
    g = np.asarray(grad_f) / (2.0 * d)
    h = np.asarray(hess_f) / (2.0 * d) - np.outer(grad_f, grad_f) / (4.0 * d ** 3)
    return d, g, h


def _four(name, points) -> np.ndarray:
    try:
        x = np.ascontiguousarray(points, dtype=np.float64)
    except ValueError:
        x = None
    if x is None or x.shape != (4, 3) or not np.isfinite(x).all():
        raise ValueError(f"{name}: four finite points of 3 coordinates expected, got "
                         f"{points!r}")
    return x.reshape(-1)


def _evaluate(classify, q):
    w = np.zeros((1, 12))
    g = np.zeros((1, 12))
    h = np.zeros((1, 12, 12))
    kind, m = classify(q, 0, 3, 6, 9, w, 0)
    f = squared_distance_derivatives(q, 0, 3, 6, 9, w, 0, m, g, h, True)
    return f, g[0], h[0], int(kind)


def point_triangle_distance(p, t0, t1, t2):
    """Distance [m] of point ``p`` from triangle ``(t0, t1, t2)`` (each [3]).

    Returns ``(d2, grad, hess, type)``: ``d^2`` [m^2], its gradient [12] and Hessian [12, 12]
    over ``(p, t0, t1, t2)`` and the closest-point type."""
    return _evaluate(point_triangle_coefficients, _four("point_triangle_distance",
                                                        [p, t0, t1, t2]))


def edge_edge_distance(a0, a1, b0, b1):
    """Distance [m] of edges ``(a0, a1)`` and ``(b0, b1)`` (each point [3]).

    Returns ``(d2, grad, hess, type)`` as :func:`point_triangle_distance` over
    ``(a0, a1, b0, b1)``."""
    return _evaluate(edge_edge_coefficients, _four("edge_edge_distance", [a0, a1, b0, b1]))
