"""Second derivatives of the connection frames, contracted with fixed weights.

For a frame ``F = (m1, m2, m3)`` of :mod:`strandlab.mixed.frames` and weights ``u`` [9] (in the
order of ``F``), each function here adds the exact ``sum_a u_a d^2 F_a / dx dx`` [k, k] over the
frame's slots to a Hessian ``H`` [k, k] (slots as in the frame functions; only the blocks of the
frame's own slots change) and returns :data:`FRAME_OK`, or :data:`FRAME_DEGENERATE` (nothing
added) where the frame function would.  The contraction is symmetric.

Derivation.  With ``m2 = m3 x m1``,
``u . F = w1 . m1 + w3 . m3 + (second order only) u2 . (dm3 x dm1 + dm3' x dm1')``, where
``w1 = u1 + u2 x m3``, ``w3 = u3 + m1 x u2`` are the weights of ``m1`` and ``m3`` once ``m2`` is
expanded, and the last term is the product of the first derivatives of ``m3`` and ``m1`` (both
orders of the two directions of differentiation).  The frames are built from a few reduced
variables (edge vectors, or the vector to a centroid) linear in ``x``; their Hessians are
assembled in those variables from two rules and mapped to the vertices:

- a unit vector ``n = v / |v|``: ``w . n`` has gradient ``p / |v|``, ``p = w - (w . n) n``, and
  Hessian ``-(n p^T + p n^T + (w . n)(I - n n^T)) / |v|^2``; through a map ``v(y)`` the Hessian
  is ``J_v^T Hess J_v`` plus the Hessian of ``(p / |v|) . v(y)`` (reverse-mode chain rule);
- a bilinear ``y . (a x b)``: ``a^T M b`` with ``M = -[y]x``.

Per frame:

- triangle frames: ``m1`` the unit normal of ``c = e x f`` (``e, f`` the two edge vectors), so
  ``J_c^T Hess J_c`` and the bilinear ``p . (e x f)``; ``m3`` the unit edge ``e`` (edge frame) or
  the unit bisector ``b = e / |e| + f / |f|`` (vertex frame: ``J_b^T Hess J_b`` and the
  normalisations of ``e`` and ``f`` weighted by ``b``'s gradient);
- tetrahedron: ``m3`` the unit ``d = g - v``; ``m1`` the unit ``z = w - (w . m3) m3`` with ``w =
  p1 - g``, whose second derivative is that of ``-(w . m3)(y . m3)`` (``y`` its weight), a
  quadratic in ``m3`` times ``w``;
- rod edge: with ``(c, s)`` of ``theta``, ``m1 = c a1 + s a2``, ``m2 = -s a1 + c a2``, so
  ``u . F = p . a1 + q . a2 + u3 . t`` with ``p = c u1 - s u2``, ``q = s u1 + c u2``; ``d/dtheta``
  turns ``p`` into ``-q`` and ``q`` into ``p``.  In ``t`` (taken as a free vector, then ``t =
  e / |e|``): ``a2 = t x a1`` as above, and the transport ``a1 = a1_s - r (t_s + t)``, ``r = (a1_s
  . t) / (1 + t_s . t)``, has ``grad r = v / beta`` and ``Hess r = -(v t_s^T + t_s v^T) / beta^2``
  (``beta = 1 + t_s . t``, ``v = a1_s - r t_s``), so ``omega . a1`` (``omega`` fixed) has Hessian
  ``sigma (v t_s^T + t_s v^T) / beta^2 - (v omega^T + omega v^T) / beta``,
  ``sigma = omega . (t_s + t)``.

Plain Numba functions over 3-tuples and row-major 9-tuples, like the frames; no allocation.
"""
from __future__ import annotations

import math

from numba import njit

from ..rods.energies import _add9, _e9, _i9, _o9, _p9, _t9, cross, dot
from .frames import (
    DEGENERATE_SIN,
    FRAME_DEGENERATE,
    FRAME_OK,
    _mm9,
    _put,
    _sc9,
    _skew,
    _sub,
    _unit,
    _vec,
    corner_bisector,
    edge_axis,
    tet_axes,
)

__all__ = [
    "add_rod_edge_frame_hessian",
    "add_triangle_vertex_frame_hessian",
    "add_triangle_edge_frame_hessian",
    "add_tet_vertex_frame_hessian",
]

_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}


# --------------------------------------------------------------------------- helpers
@njit(**_OPTS)
def _plus_cross(a, b, c):
    """``a + b x c`` (3-tuples): the weights ``w1 = u1 + u2 x m3``, ``w3 = u3 + m1 x u2``."""
    bc = cross(b, c)
    return (a[0] + bc[0], a[1] + bc[1], a[2] + bc[2])


@njit(**_OPTS)
def _weights(u):
    """The weights of ``m1``, ``m2``, ``m3`` as 3-tuples."""
    return (u[0], u[1], u[2]), (u[3], u[4], u[5]), (u[6], u[7], u[8])


@njit(**_OPTS)
def _unit_grad(n, ln, w):
    """Gradient of ``w . v / |v|`` w.r.t. ``v`` (``n = v / |v|``, ``ln = |v|``)."""
    wn = dot(w, n)
    return ((w[0] - wn * n[0]) / ln, (w[1] - wn * n[1]) / ln, (w[2] - wn * n[2]) / ln)


@njit(**_OPTS)
def _unit_hess(n, ln, w):
    """Hessian of ``w . v / |v|`` w.r.t. ``v``:
    ``-(n p^T + p n^T + (w . n)(I - n n^T)) / |v|^2``, ``p = w - (w . n) n``."""
    wn = dot(w, n)
    p = (w[0] - wn * n[0], w[1] - wn * n[1], w[2] - wn * n[2])
    k = -1.0 / (ln * ln)
    return _add9(_add9(_o9(k, n, p), _o9(k, p, n)), _p9(k * wn, n))


@njit(**_OPTS)
def _mtv(a, v):
    """``a^T v`` of a 3x3 9-tuple and a 3-tuple."""
    return (a[0] * v[0] + a[3] * v[1] + a[6] * v[2], a[1] * v[0] + a[4] * v[1] + a[7] * v[2],
            a[2] * v[0] + a[5] * v[1] + a[8] * v[2])


@njit(**_OPTS)
def _sandwich(a, h, b):
    """``a^T h b`` of 3x3 9-tuples."""
    return _mm9(_t9(a), _mm9(h, b))


@njit(**_OPTS)
def _sym(a):
    """``a + a^T``."""
    return _add9(a, _t9(a))


@njit(**_OPTS)
def _put_edges(H, i0, i1, i2, hee, hef, hff):
    """Add the Hessian with blocks ``hee``, ``hef`` (rows ``e``), ``hff`` in ``e = x_1 - x_0``,
    ``f = x_2 - x_0`` to the vertex slots ``i0, i1, i2`` of ``H``."""
    hfe = _t9(hef)
    _put(H, i1, i1, hee, 1.0)
    _put(H, i1, i2, hef, 1.0)
    _put(H, i2, i1, hfe, 1.0)
    _put(H, i2, i2, hff, 1.0)
    _put(H, i0, i0, _add9(_add9(hee, hff), _add9(hef, hfe)), 1.0)
    _put(H, i0, i1, _add9(hee, hfe), -1.0)
    _put(H, i1, i0, _add9(hee, hef), -1.0)
    _put(H, i0, i2, _add9(hef, hff), -1.0)
    _put(H, i2, i0, _add9(hfe, hff), -1.0)


@njit(**_OPTS)
def _normal_part(e, f, m3, d3e, d3f, u1, u2):
    """Second derivatives of a triangle frame's normal ``m1 = (e x f) / |e x f|`` (weight
    ``w1 = u1 + u2 x m3``) and of the product of ``dm3`` and ``dm1`` in ``m2 = m3 x m1``, given
    ``dm3/de = d3e``, ``dm3/df = d3f``.  Returns ``(m1, hee, hef, hff, sine)``."""
    m1, lc = _unit(cross(e, f))
    sn = lc / math.sqrt(dot(e, e) * dot(f, f))
    w1 = _plus_cross(u1, u2, m3)
    hn = _unit_hess(m1, lc, w1)
    y = _unit_grad(m1, lc, w1)
    jce = _e9(1.0, f)                   # dc/de = -[f]x
    jcf = _skew(e)                      # dc/df = [e]x
    hee = _sandwich(jce, hn, jce)
    hef = _add9(_sandwich(jce, hn, jcf), _e9(1.0, y))     # y . (e x f)
    hff = _sandwich(jcf, hn, jcf)
    # u2 . (dm3 x dm1), both orders: J3^T M J1 + its transpose, M = -[u2]x
    mu = _e9(1.0, u2)
    pc = _p9(1.0 / lc, m1)
    b1e = _mm9(pc, jce)
    b1f = _mm9(pc, jcf)
    hee = _add9(hee, _sym(_sandwich(d3e, mu, b1e)))
    hff = _add9(hff, _sym(_sandwich(d3f, mu, b1f)))
    hef = _add9(hef, _add9(_sandwich(d3e, mu, b1f), _t9(_sandwich(d3f, mu, b1e))))
    return m1, hee, hef, hff, sn


# --------------------------------------------------------------------------- frames
@njit(**_OPTS)
def add_rod_edge_frame_hessian(x, ia, ib, ith, t_s, a1_s, u, H):
    """``H += sum_a u_a Hess F_a`` of :func:`strandlab.mixed.frames.rod_edge_frame` (same
    arguments; ``u`` [9])."""
    t, ln = _unit(_sub(_vec(x, ib), _vec(x, ia)))
    beta = 1.0 + dot(t_s, t)
    if not (ln > 0.0 and beta > DEGENERATE_SIN):
        return FRAME_DEGENERATE
    u1, u2, u3 = _weights(u)
    r = dot(a1_s, t) / beta
    w = (t_s[0] + t[0], t_s[1] + t[1], t_s[2] + t[2])
    a1 = (a1_s[0] - r * w[0], a1_s[1] - r * w[1], a1_s[2] - r * w[2])
    a2 = cross(t, a1)
    v = (a1_s[0] - r * t_s[0], a1_s[1] - r * t_s[1], a1_s[2] - r * t_s[2])
    da1 = _add9(_o9(-1.0 / beta, w, v), _i9(-r))                 # da1/dt, t free
    c = math.cos(x[ith])
    s = math.sin(x[ith])
    p = (c * u1[0] - s * u2[0], c * u1[1] - s * u2[1], c * u1[2] - s * u2[2])
    q = (s * u1[0] + c * u2[0], s * u1[1] + c * u2[1], s * u1[2] + c * u2[2])
    # u . F = p . a1 + q . (t x a1) + u3 . t: weights om of a1 and gt of t
    qt = cross(q, t)
    om = (p[0] + qt[0], p[1] + qt[1], p[2] + qt[2])
    ga = _mtv(da1, om)
    aq = cross(a1, q)
    gt = (ga[0] + aq[0] + u3[0], ga[1] + aq[1] + u3[1], ga[2] + aq[2] + u3[2])
    # Hessian in t: om . a1 through the transport's r, and q . (dt x da1) both orders
    sig = dot(om, w)
    kb = sig / (beta * beta)
    htt = _add9(_add9(_o9(kb, v, t_s), _o9(kb, t_s, v)),
                _add9(_o9(-1.0 / beta, v, om), _o9(-1.0 / beta, om, v)))
    htt = _add9(htt, _sym(_mm9(_e9(1.0, q), da1)))
    pt = _p9(1.0 / ln, t)                                      # dt/de
    hee = _add9(_sandwich(pt, htt, pt), _unit_hess(t, ln, gt))
    # d(u . F)/dtheta = -q . a1 + p . (t x a1): its gradient in t, then in e
    pq = cross(p, t)
    gq = _mtv(da1, (pq[0] - q[0], pq[1] - q[1], pq[2] - q[2]))
    ap = cross(a1, p)
    hte = _mtv(pt, (gq[0] + ap[0], gq[1] + ap[1], gq[2] + ap[2]))
    _put(H, ib, ib, hee, 1.0)
    _put(H, ia, ia, hee, 1.0)
    _put(H, ia, ib, hee, -1.0)
    _put(H, ib, ia, hee, -1.0)
    for i in range(3):
        H[ith, ib + i] += hte[i]
        H[ib + i, ith] += hte[i]
        H[ith, ia + i] -= hte[i]
        H[ia + i, ith] -= hte[i]
    H[ith, ith] -= dot(p, a1) + dot(q, a2)         # d^2/dtheta^2 turns (p, q) into -(p, q)
    return FRAME_OK


@njit(**_OPTS)
def add_triangle_vertex_frame_hessian(x, iv, i1, i2, u, H):
    """``H += sum_a u_a Hess F_a`` of :func:`strandlab.mixed.frames.triangle_vertex_frame`
    (same slots; ``u`` [9])."""
    e1, e2, n1, l1, n2, l2, m3, lb = corner_bisector(x, iv, i1, i2)
    if not (l1 > 0.0 and l2 > 0.0 and lb > DEGENERATE_SIN):
        return FRAME_DEGENERATE
    u1, u2, u3 = _weights(u)
    pb = _p9(1.0 / lb, m3)
    p1 = _p9(1.0 / l1, n1)
    p2 = _p9(1.0 / l2, n2)
    m1, hee, hef, hff, sn = _normal_part(e1, e2, m3, _mm9(pb, p1), _mm9(pb, p2), u1, u2)
    if not sn > DEGENERATE_SIN:
        return FRAME_DEGENERATE
    # w3 . m3 with m3 = b / |b|, b = e1 / |e1| + e2 / |e2|
    w3 = _plus_cross(u3, m1, u2)
    hb = _unit_hess(m3, lb, w3)
    yb = _unit_grad(m3, lb, w3)
    hee = _add9(hee, _add9(_sandwich(p1, hb, p1), _unit_hess(n1, l1, yb)))
    hff = _add9(hff, _add9(_sandwich(p2, hb, p2), _unit_hess(n2, l2, yb)))
    hef = _add9(hef, _sandwich(p1, hb, p2))
    _put_edges(H, iv, i1, i2, hee, hef, hff)
    return FRAME_OK


@njit(**_OPTS)
def add_triangle_edge_frame_hessian(x, ia, ib, ic, u, H):
    """``H += sum_a u_a Hess F_a`` of :func:`strandlab.mixed.frames.triangle_edge_frame`
    (same slots; ``u`` [9])."""
    e, f, m3, le = edge_axis(x, ia, ib, ic)
    if not le > 0.0:
        return FRAME_DEGENERATE
    u1, u2, u3 = _weights(u)
    m1, hee, hef, hff, sn = _normal_part(e, f, m3, _p9(1.0 / le, m3), _i9(0.0), u1, u2)
    if not sn > DEGENERATE_SIN:
        return FRAME_DEGENERATE
    w3 = _plus_cross(u3, m1, u2)
    _put_edges(H, ia, ib, ic, _add9(hee, _unit_hess(m3, le, w3)), hef, hff)
    return FRAME_OK


@njit(**_OPTS)
def add_tet_vertex_frame_hessian(x, iv, i1, i2, i3, u, H):
    """``H += sum_a u_a Hess F_a`` of :func:`strandlab.mixed.frames.tet_vertex_frame` (same
    slots; ``u`` [9])."""
    m3, lg, w, wm, m1, lu = tet_axes(x, iv, i1, i2, i3)
    if not (lg > 0.0 and lu > DEGENERATE_SIN * math.sqrt(dot(w, w))):
        return FRAME_DEGENERATE
    u1, u2, u3 = _weights(u)
    # variables d = g - v (m3 = d / |d|) and w = p1 - g (m1 = z / |z|, z = (I - m3 m3^T) w)
    w1 = _plus_cross(u1, u2, m3)
    w3 = _plus_cross(u3, m1, u2)
    a3 = _p9(1.0 / lg, m3)                                     # dm3/dd
    hdd = _unit_hess(m3, lg, w3)
    hz = _unit_hess(m1, lu, w1)
    y = _unit_grad(m1, lu, w1)
    jzw = _p9(1.0, m3)
    jzd = _mm9(_sc9(-1.0, _add9(_i9(wm), _o9(1.0, m3, w))), a3)
    hww = _sandwich(jzw, hz, jzw)
    hdw = _sandwich(jzd, hz, jzw)
    hdd = _add9(hdd, _sandwich(jzd, hz, jzd))
    # y . z = y . w - (w . m3)(y . m3): quadratic in m3, bilinear in (w, m3)
    ym = dot(y, m3)
    ay = _mtv(a3, y)
    hdw = _add9(hdw, _add9(_sc9(-ym, a3), _o9(-1.0, ay, m3)))
    gm = (-(w[0] * ym + y[0] * wm), -(w[1] * ym + y[1] * wm), -(w[2] * ym + y[2] * wm))
    hdd = _add9(hdd, _add9(_sandwich(a3, _add9(_o9(-1.0, w, y), _o9(-1.0, y, w)), a3),
                           _unit_hess(m3, lg, gm)))
    # u2 . (dm3 x dm1), both orders (m3 depends on d only)
    mu = _e9(1.0, u2)
    pu = _p9(1.0 / lu, m1)
    hdd = _add9(hdd, _sym(_sandwich(a3, mu, _mm9(pu, jzd))))
    hdw = _add9(hdw, _sandwich(a3, mu, _mm9(pu, jzw)))
    # onto the vertices: d = (p1 + p2 + p3) / 3 - v, w = (2 p1 - p2 - p3) / 3
    hwd = _t9(hdw)
    third = 1.0 / 3.0
    sl = (iv, i1, i2, i3)
    cd = (-1.0, third, third, third)
    cw = (0.0, 2.0 * third, -third, -third)
    for i in range(4):
        for j in range(4):
            _put(H, sl[i], sl[j], _add9(_add9(_sc9(cd[i] * cd[j], hdd), _sc9(cd[i] * cw[j], hdw)),
                                        _add9(_sc9(cw[i] * cd[j], hwd), _sc9(cw[i] * cw[j], hww))),
                 1.0)
    return FRAME_OK
