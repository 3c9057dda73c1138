"""Orthonormal frames of simplices at a connection, with exact Jacobians.

Each frame is a function of the coordinates of its simplex (its *stencil*), read from a local
coordinate vector ``x`` [k] (positions [m], angles [rad]) at given slot offsets (a vertex at
offset ``i`` occupies ``x[i:i+3]``).  A frame function writes the three directors into
``F[0:9] = (m1, m2, m3)`` and their Jacobian ``dF/dx`` into ``J[0:9, 0:k]`` (every entry of ``J``
is overwritten; rows 0-2 are ``dm1/dx``, 3-5 ``dm2/dx``, 6-8 ``dm3/dx``), and returns
:data:`FRAME_OK` or :data:`FRAME_DEGENERATE` (then ``F`` and ``J`` are undefined).  All frames
are right-handed (``m2 = m3 x m1``).

Frames (Chang et al. 2019, sections 3.3 and 4.2):

- :func:`rod_edge_frame`, a rod edge ``(x_a, x_b)`` with material angle ``theta``: ``m3 = t =
  (x_b - x_a) / |x_b - x_a|``; ``a1 = P(t_s -> t) a1_s`` the base's reference director
  ``a1_s`` (the step start's or the last accepted Newton iterate's; unit, perpendicular to the
  base's tangent ``t_s``) parallel transported by the
  minimal rotation taking ``t_s`` to ``t``, ``a1 = a1_s - (a1_s . t) / (1 + t_s . t) (t_s + t)``;
  ``a2 = t x a1``; ``m1 = cos(theta) a1 + sin(theta) a2``, ``m2 = t x m1``.  The Jacobian is
  that of this function of ``x`` at fixed ``(t_s, a1_s)``, holonomy of the transport included
  (``t != t_s``).  Degenerate: a zero-length edge or ``t = -t_s``.
- :func:`triangle_vertex_frame`, a triangle ``(v, p1, p2)`` at its vertex ``v``: ``m3`` the unit
  bisector of the corner at ``v`` (pointing into the triangle), ``m1`` the unit normal
  ``(p1 - v) x (p2 - v)`` normalised, ``m2 = m3 x m1``.  Degenerate: zero area (to
  :data:`DEGENERATE_SIN`).
- :func:`triangle_edge_frame`, a triangle ``(a, b, c)`` at its edge ``(a, b)``: ``m3 = (b - a)``
  normalised, ``m1`` the unit normal of ``(b - a) x (c - a)``, ``m2 = m3 x m1`` (in the plane,
  perpendicular to the edge).  Degenerate: zero area.
- :func:`tet_vertex_frame`, a tetrahedron ``(v, p1, p2, p3)`` at its vertex ``v``: ``m3`` the
  unit direction from ``v`` to the centroid ``g`` of the opposite face; ``m1`` the direction from
  ``g`` to ``p1`` with its component along ``m3`` removed, normalised; ``m2 = m3 x m1``.  The one
  simplex per side variant of section 3.3.2 with the face centroid in place of a surface normal:
  it needs no neighbours and is defined for every tetrahedron of non-zero volume.  Degenerate:
  ``v`` in the plane of the opposite face (zero volume, to :data:`DEGENERATE_SIN`).

Plain Numba functions over array slots and 3-tuples (3x3 matrices as row-major 9-tuples); they
allocate nothing and can be called from Python with NumPy arrays (tests) or from kernels.  Their
exact second derivatives, contracted with weights (``sum_a u_a Hess F_a``, what the connection
Hessians need), are in :mod:`strandlab.mixed.frame_hessians`, one function per frame with the
same arguments and degenerate cases.
"""
from __future__ import annotations

import math

from numba import njit

from ..rods import kernels as _rods_kernels  # noqa: F401  (makes the helpers below jitable)
from ..rods.energies import _add9, _e9, _i9, _o9, _p9, _sub9, cross, dot

__all__ = [
    "FRAME_OK",
    "FRAME_DEGENERATE",
    "DEGENERATE_SIN",
    "ROD_EDGE",
    "TRIANGLE_VERTEX",
    "TRIANGLE_EDGE",
    "TET_VERTEX",
    "rod_edge_frame",
    "triangle_vertex_frame",
    "triangle_edge_frame",
    "tet_vertex_frame",
    "corner_bisector",
    "edge_axis",
    "tet_axes",
]

FRAME_OK = 0
FRAME_DEGENERATE = 1

#: A triangle whose area is below ``DEGENERATE_SIN |e1| |e2| / 2``, a tetrahedron whose apex is
#: within ``DEGENERATE_SIN |g - v|`` of the plane through ``g`` and ``p1``, or a bisector shorter
#: than this, has no frame.
DEGENERATE_SIN = 1e-12

#: Frame kind codes (the stencil layouts of :mod:`strandlab.mixed.joint_terms` use them).
ROD_EDGE = 0
TRIANGLE_VERTEX = 1
TRIANGLE_EDGE = 2
TET_VERTEX = 3

_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}


# --------------------------------------------------------------------------- 3x3 helpers
@njit(**_OPTS)
def _mm9(a, b):
    """``a b`` of row-major 3x3 9-tuples."""
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6], a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8], a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7], a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6], a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


@njit(**_OPTS)
def _sc9(k, a):
    return (k * a[0], k * a[1], k * a[2], k * a[3], k * a[4], k * a[5], k * a[6], k * a[7],
            k * a[8])


@njit(**_OPTS)
def _skew(v):
    """``[v]x`` (so that ``[v]x u = v x u``)."""
    return _e9(-1.0, v)


@njit(**_OPTS)
def _unit(v):
    """``v / |v|`` and ``|v|``."""
    n = math.sqrt(dot(v, v))
    return (v[0] / n, v[1] / n, v[2] / n), n


@njit(**_OPTS)
def _vec(x, i):
    return (x[i], x[i + 1], x[i + 2])


@njit(**_OPTS)
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(**_OPTS)
def _put(J, r, c, m, k):
    """``J[r:r+3, c:c+3] += k m``."""
    J[r, c] += k * m[0]
    J[r, c + 1] += k * m[1]
    J[r, c + 2] += k * m[2]
    J[r + 1, c] += k * m[3]
    J[r + 1, c + 1] += k * m[4]
    J[r + 1, c + 2] += k * m[5]
    J[r + 2, c] += k * m[6]
    J[r + 2, c + 1] += k * m[7]
    J[r + 2, c + 2] += k * m[8]


@njit(**_OPTS)
def _zero(J):
    for i in range(J.shape[0]):
        for j in range(J.shape[1]):
            J[i, j] = 0.0


@njit(**_OPTS)
def _store(F, m1, m2, m3):
    for i in range(3):
        F[i] = m1[i]
        F[3 + i] = m2[i]
        F[6 + i] = m3[i]


@njit(**_OPTS)
def _m2_jacobian(m1, m3, d1, d3):
    """``d(m3 x m1) = [m3]x dm1 - [m1]x dm3`` for blocks ``d1 = dm1/dy``, ``d3 = dm3/dy``."""
    return _sub9(_mm9(_skew(m3), d1), _mm9(_skew(m1), d3))


@njit(**_OPTS)
def _put_frame(J, c, k, d1, d2, d3):
    """Add ``k`` times the blocks ``(dm1, dm2, dm3)/dy`` at column ``c`` of ``J``."""
    _put(J, 0, c, d1, k)
    _put(J, 3, c, d2, k)
    _put(J, 6, c, d3, k)


@njit(**_OPTS)
def _put_edges(J, i0, i1, i2, m1, m3, d1e, d3e, d1f, d3f):
    """Jacobian of a frame that is a function of ``e = x_1 - x_0`` and ``f = x_2 - x_0``,
    given the blocks ``dm1/de``, ``dm3/de``, ``dm1/df``, ``dm3/df``."""
    d2e = _m2_jacobian(m1, m3, d1e, d3e)
    d2f = _m2_jacobian(m1, m3, d1f, d3f)
    _put_frame(J, i1, 1.0, d1e, d2e, d3e)
    _put_frame(J, i2, 1.0, d1f, d2f, d3f)
    _put_frame(J, i0, -1.0, d1e, d2e, d3e)
    _put_frame(J, i0, -1.0, d1f, d2f, d3f)


@njit(**_OPTS)
def _normal(e, f):
    """Unit normal ``n`` of ``e x f``, its Jacobians w.r.t. ``e`` and ``f``, and
    ``|e x f| / (|e| |f|)`` (the sine of the angle between them)."""
    nn, ln = _unit(cross(e, f))
    pn = _p9(1.0 / ln, nn)
    de = _mm9(pn, _skew(f))
    df = _mm9(pn, _skew(e))
    return nn, _sc9(-1.0, de), df, ln / math.sqrt(dot(e, e) * dot(f, f))


@njit(**_OPTS)
def _normal_frame(F, J, i0, i1, i2, e, f, m3, d3e, d3f):
    """Frame ``(n, m3 x n, m3)`` of a triangle, ``n`` the unit normal of ``e x f`` (``e = x_1 -
    x_0``, ``f = x_2 - x_0``), ``m3`` given with its blocks ``dm3/de``, ``dm3/df``."""
    m1, d1e, d1f, sn = _normal(e, f)
    if not sn > DEGENERATE_SIN:
        return FRAME_DEGENERATE
    _put_edges(J, i0, i1, i2, m1, m3, d1e, d3e, d1f, d3f)
    _store(F, m1, cross(m3, m1), m3)
    return FRAME_OK


# --------------------------------------------------------------------------- frames
@njit(**_OPTS)
def rod_edge_frame(x, ia, ib, ith, t_s, a1_s, F, J):
    """Material frame of a rod edge ``(x[ia:ia+3], x[ib:ib+3])``, angle ``x[ith]`` [rad];
    ``t_s``, ``a1_s`` the step start's unit tangent and reference director (3-tuples)."""
    _zero(J)
    t, ln = _unit(_sub(_vec(x, ib), _vec(x, ia)))
    beta = 1.0 + dot(t_s, t)
    if not (ln > 0.0 and beta > DEGENERATE_SIN):
        return FRAME_DEGENERATE
    alpha = dot(a1_s, t)
    r = alpha / beta
    w = (t_s[0] + t[0], t_s[1] + t[1], t_s[2] + t[2])
    a1 = (a1_s[0] - r * w[0], a1_s[1] - r * w[1], a1_s[2] - r * w[2])
    a2 = cross(t, a1)
    pt = _p9(1.0 / ln, t)                                      # dt/de
    v = (a1_s[0] - r * t_s[0], a1_s[1] - r * t_s[1], a1_s[2] - r * t_s[2])
    da1_dt = _sub9(_o9(-1.0 / beta, w, v), _i9(r))
    da1 = _mm9(da1_dt, pt)                                     # da1/de
    da2 = _sub9(_mm9(_skew(t), da1), _mm9(_skew(a1), pt))     # da2/de
    c = math.cos(x[ith])
    s = math.sin(x[ith])
    m1 = (c * a1[0] + s * a2[0], c * a1[1] + s * a2[1], c * a1[2] + s * a2[2])
    m2 = (-s * a1[0] + c * a2[0], -s * a1[1] + c * a2[1], -s * a1[2] + c * a2[2])
    dm1 = _add9(_sc9(c, da1), _sc9(s, da2))
    dm2 = _sub9(_sc9(c, da2), _sc9(s, da1))
    _put_frame(J, ib, 1.0, dm1, dm2, pt)
    _put_frame(J, ia, -1.0, dm1, dm2, pt)
    for i in range(3):
        J[i, ith] = m2[i]
        J[3 + i, ith] = -m1[i]
    _store(F, m1, m2, t)
    return FRAME_OK


@njit(**_OPTS)
def corner_bisector(x, iv, i1, i2):
    """The corner of triangle ``(v, p1, p2)`` at ``v``: edges ``e1 = p1 - v``, ``e2 = p2 - v``,
    their unit vectors and lengths, and the unit bisector ``m3`` of ``e1/|e1| + e2/|e2|`` with
    that sum's length: ``(e1, e2, n1, l1, n2, l2, m3, lb)``."""
    v = _vec(x, iv)
    e1 = _sub(_vec(x, i1), v)
    e2 = _sub(_vec(x, i2), v)
    n1, l1 = _unit(e1)
    n2, l2 = _unit(e2)
    m3, lb = _unit((n1[0] + n2[0], n1[1] + n2[1], n1[2] + n2[2]))
    return e1, e2, n1, l1, n2, l2, m3, lb


@njit(**_OPTS)
def edge_axis(x, ia, ib, ic):
    """Triangle ``(a, b, c)`` seen from its edge ``(a, b)``: ``e = b - a``, ``f = c - a``, the
    unit ``m3`` along ``e`` and ``|e|``: ``(e, f, m3, le)``."""
    a = _vec(x, ia)
    e = _sub(_vec(x, ib), a)
    f = _sub(_vec(x, ic), a)
    m3, le = _unit(e)
    return e, f, m3, le


@njit(**_OPTS)
def tet_axes(x, iv, i1, i2, i3):
    """The axes of tetrahedron ``(v, p1, p2, p3)`` at ``v``: ``m3`` along ``g - v`` (``g`` the
    opposite face's centroid) with ``|g - v|``, ``w = p1 - g``, ``w . m3``, and ``m1`` along
    ``w`` with its ``m3`` part removed, with that part's length: ``(m3, lg, w, wm, m1, lu)``."""
    v = _vec(x, iv)
    p1 = _vec(x, i1)
    p2 = _vec(x, i2)
    p3 = _vec(x, i3)
    g = ((p1[0] + p2[0] + p3[0]) / 3.0, (p1[1] + p2[1] + p3[1]) / 3.0,
         (p1[2] + p2[2] + p3[2]) / 3.0)
    m3, lg = _unit(_sub(g, v))
    w = _sub(p1, g)
    wm = dot(w, m3)
    m1, lu = _unit((w[0] - wm * m3[0], w[1] - wm * m3[1], w[2] - wm * m3[2]))
    return m3, lg, w, wm, m1, lu


@njit(**_OPTS)
def triangle_vertex_frame(x, iv, i1, i2, F, J):
    """Frame of triangle ``(v, p1, p2)`` at ``v`` (slots ``iv, i1, i2``): ``m3`` the corner's
    unit bisector, ``m1`` the unit normal."""
    _zero(J)
    e1, e2, u1, l1, u2, l2, m3, lb = corner_bisector(x, iv, i1, i2)
    if not (l1 > 0.0 and l2 > 0.0 and lb > DEGENERATE_SIN):
        return FRAME_DEGENERATE
    pb = _p9(1.0 / lb, m3)
    return _normal_frame(F, J, iv, i1, i2, e1, e2, m3, _mm9(pb, _p9(1.0 / l1, u1)),
                         _mm9(pb, _p9(1.0 / l2, u2)))


@njit(**_OPTS)
def triangle_edge_frame(x, ia, ib, ic, F, J):
    """Frame of triangle ``(a, b, c)`` at its edge ``(a, b)`` (slots ``ia, ib, ic``): ``m3``
    along ``b - a``, ``m1`` the unit normal."""
    _zero(J)
    e, f, m3, le = edge_axis(x, ia, ib, ic)
    if not le > 0.0:
        return FRAME_DEGENERATE
    return _normal_frame(F, J, ia, ib, ic, e, f, m3, _p9(1.0 / le, m3), _i9(0.0))


@njit(**_OPTS)
def tet_vertex_frame(x, iv, i1, i2, i3, F, J):
    """Frame of tetrahedron ``(v, p1, p2, p3)`` at ``v`` (slots ``iv, i1, i2, i3``): ``m3``
    towards the opposite face's centroid ``g``, ``m1`` from ``g`` towards ``p1`` (made
    perpendicular to ``m3``)."""
    _zero(J)
    m3, lg, w, wm, m1, lu = tet_axes(x, iv, i1, i2, i3)
    if not (lg > 0.0 and lu > DEGENERATE_SIN * math.sqrt(dot(w, w))):
        return FRAME_DEGENERATE
    m2 = cross(m3, m1)
    d3g = _p9(1.0 / lg, m3)                                    # dm3/dg, g - v
    pu = _p9(1.0 / lu, m1)
    d1w = _mm9(pu, _p9(1.0, m3))                               # dm1/dw
    d1g = _mm9(_sc9(-1.0, pu), _mm9(_add9(_i9(wm), _o9(1.0, m3, w)), d3g))
    d2g = _m2_jacobian(m1, m3, d1g, d3g)
    z = _i9(0.0)
    d2w = _m2_jacobian(m1, m3, d1w, z)
    _put_frame(J, iv, -1.0, d1g, d2g, d3g)
    third = 1.0 / 3.0
    for i in (i1, i2, i3):
        _put_frame(J, i, third, d1g, d2g, d3g)
        _put_frame(J, i, -third, d1w, d2w, z)
    _put_frame(J, i1, 1.0, d1w, d2w, z)
    _store(F, m1, m2, m3)
    return FRAME_OK
