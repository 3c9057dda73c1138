"""Per-stencil energies of discrete elastic rods: energy, gradient and Hessian of one stencil.

Plain Python functions over array slots, scalars and 3-tuples (no decorator, no allocation, no
exception: they return a status), compiled where the kernels are defined
(:mod:`strandlab.rods.kernels`).  Each ``add_*`` function ADDS one stencil's energy [J] to
``e_out[s]``, its gradient to ``g_out[s, :]`` [J/m | J/rad] and, when ``want_hess``, its Hessian
to ``H_out[s, :, :]`` [J/m^2 | J/(m rad) | J/rad^2].  Coordinates ``q`` [m | rad] are read
through the stencil's row ``dofs[s, :]`` only.

Stretch stencil (one edge, ``dofs[s] = (x_a, x_b)``, 6 slots), ``e = x_b - x_a``,
``t = e / |e|``::

    E_s = 1/2 k_s lbar (|e| / lbar - 1)^2                       k_s = E pi r^2 [N], lbar [m]
    dE/de = k_s (|e| / lbar - 1) t
    d2E/de2 = k_s / lbar [t t^T + (1 - lbar / |e|) (I - t t^T)]

``project=True`` clamps the transverse coefficient ``1 - lbar/|e|`` at 0: the exact projection of
the Hessian onto the positive semi-definite cone.

Bend-twist stencil (inner vertex ``i``, edges ``j0 = (i-1, i)``, ``j1 = (i, i+1)``, 11 slots
``(x_{i-1}, theta_j0, x_i, theta_j1, x_{i+1})``), ``e0 = x_i - x_{i-1}``, ``e1 = x_{i+1} - x_i``:

- reference frames ``a1_j``, ``a2_j = t_j x a1_j`` (unit, [E, 3]); material frames
  ``m1 = cos(theta) a1 + sin(theta) a2``, ``m2 = -sin(theta) a1 + cos(theta) a2``;
- curvature binormal ``kb = 2 (e0 x e1) / (|e0| |e1| + e0 . e1)`` [1] (``|kb| = 2 tan(phi/2)``
  for a turning angle ``phi``);
- curvature ``kappa = (kb.m2_j0, -kb.m1_j0, kb.m2_j1, -kb.m1_j1)`` [1];
- bending ``E_b = 1/(4 ltilde) sum_j [k1 (kappa_j,1 - kbar_j,1)^2 + k2 (kappa_j,2 - kbar_j,2)^2]``,
  ``k1 = E I2``, ``k2 = E I1`` [N m^2] (``E pi r^4 / 4`` for a circular section), ``ltilde`` the
  Voronoi length [m];
- twist ``tau = theta_j1 - theta_j0 + m_ref`` [rad] with ``m_ref`` the reference twist (signed
  angle from the space-parallel transport of ``a1_j0`` to edge ``j1`` to ``a1_j1``, about
  ``t_j1``); ``E_t = k_t / (2 ltilde) (tau - taubar)^2``, ``k_t = G pi r^4 / 2`` [N m^2].

Exact derivatives.  The energy a Newton step minimises takes the reference frames by time-parallel
transport from the frames at the expansion point (the current iterate, at which the frames and
``m_ref`` passed in are given): ``a1_j(x) = P_{t_j^0 -> t_j(x)}(a1_j^0)`` with the minimal
rotation ``P``.  Gradients and Hessians here are the exact derivatives of that function at the
expansion point:

- a curvature component ``c = kb . m`` has ``grad c = (dkb/dx)^T m`` and
  ``Hess c = sum_k m_k Hess kb_k + (m kb^T + kb m^T) / (2 |e_j|^2)`` on the ``(e_j, e_j)`` block
  of the edge carrying ``m`` (the second-order change of the transported frame);
  ``dc/dtheta = kb . dm/dtheta``, ``d2c/dtheta2 = -c``, mixed ``(dkb/dx)^T dm/dtheta``;
- the reference twist has ``dm_ref/de_j = kb / (2 |e_j|)`` for both edges and, as Hessian, the
  symmetric part of the Jacobian of that field (the antisymmetric rest is the holonomy of
  transport, which does not enter a second derivative);
- ``Hess(kb . m)`` over ``(e0, e1)`` follows from ``kb = 2 N / D``, ``N = e0 x e1``,
  ``D = |e0||e1| + e0 . e1`` by the quotient rule:
  ``(2 Hess(m.N) - G gD^T - gD G^T - (kb.m) Hess D) / D`` with ``G = grad(kb.m)``.

Internally the bend-twist stencil works in the translation-free coordinates
``y = (e0, theta_j0, e1, theta_j1)`` (8 slots) whose layout mirrors the 11 slots: slot ``a`` of an
edge component maps to ``-x`` slot ``a`` and ``+x`` slot ``a + 4``; angle slots map to themselves.
"""
from __future__ import annotations

import math

__all__ = [
    "STATUS_OK",
    "STATUS_DEGENERATE",
    "cross",
    "dot",
    "transport",
    "curvature_binormal",
    "material_frame",
    "material_curvatures",
    "reference_twist",
    "unwrap_angle",
    "add_stretch",
    "add_bend",
    "add_twist",
    "add_bend_twist",
]

STATUS_OK = 0
STATUS_DEGENERATE = 1  # an edge of zero length, or two antiparallel edges (kb infinite)

_ZERO3 = (0.0, 0.0, 0.0)
_ZERO9 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# --------------------------------------------------------------------------------------------
# Scalar helpers on 3-tuples
# --------------------------------------------------------------------------------------------
def cross(a, b):
    """``a x b`` of two 3-tuples."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a, b):
    """``a . b`` of two 3-tuples."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def transport(a, t0, t1):
    """Parallel transport of vector ``a`` from unit tangent ``t0`` to unit tangent ``t1``.

    The minimal rotation taking ``t0`` to ``t1`` (axis ``b = t0 x t1``, ``c = t0 . t1``):
    ``R a = c a + b x a + (b . a) / (1 + c) b``; for ``a`` perpendicular to ``t0`` this is
    ``a - (a . t1) / (1 + c) (t0 + t1)``.  Undefined (division by zero) when ``t1 = -t0``.
    """
    b = cross(t0, t1)
    c = dot(t0, t1)
    ba = cross(b, a)
    f = dot(b, a) / (1.0 + c)
    return (c * a[0] + ba[0] + f * b[0], c * a[1] + ba[1] + f * b[1], c * a[2] + ba[2] + f * b[2])


def curvature_binormal(e0, e1):
    """``kb = 2 (e0 x e1) / (|e0| |e1| + e0 . e1)`` [1] of two consecutive edges (3-tuples, m)."""
    n = cross(e0, e1)
    d = math.sqrt(dot(e0, e0) * dot(e1, e1)) + dot(e0, e1)
    return (2.0 * n[0] / d, 2.0 * n[1] / d, 2.0 * n[2] / d)


def material_frame(a1, a2, theta):
    """``(m1, m2)``: the reference frame ``(a1, a2)`` turned by ``theta`` [rad] about the edge."""
    c = math.cos(theta)
    s = math.sin(theta)
    m1 = (c * a1[0] + s * a2[0], c * a1[1] + s * a2[1], c * a1[2] + s * a2[2])
    m2 = (-s * a1[0] + c * a2[0], -s * a1[1] + c * a2[1], -s * a1[2] + c * a2[2])
    return m1, m2


def material_curvatures(kb, m1_0, m2_0, m1_1, m2_1):
    """4-D curvature ``(kb.m2_0, -kb.m1_0, kb.m2_1, -kb.m1_1)`` [1] on the two material frames."""
    return (dot(kb, m2_0), -dot(kb, m1_0), dot(kb, m2_1), -dot(kb, m1_1))


def reference_twist(t0, t1, a1_0, a1_1):
    """Signed angle [rad] from ``P_{t0 -> t1}(a1_0)`` to ``a1_1`` about ``t1``, in (-pi, pi].

    ``t0``, ``t1``: unit tangents of the stencil's two edges; ``a1_0``, ``a1_1``: their
    reference directors.
    """
    u = transport(a1_0, t0, t1)
    return math.atan2(dot(cross(u, a1_1), t1), dot(u, a1_1))


def unwrap_angle(angle, prev):
    """``angle + 2 pi k`` nearest to ``prev`` [rad]."""
    d = angle - prev
    return prev + (d - 2.0 * math.pi * math.floor(d / (2.0 * math.pi) + 0.5))


# --------------------------------------------------------------------------------------------
# Stretching
# --------------------------------------------------------------------------------------------
def add_stretch(s, q, dofs, lbar, ks, project, e_out, g_out, H_out, want_hess):
    """Add edge stencil ``s``'s stretching energy, gradient [6] and Hessian [6, 6].

    ``dofs[s, 0:6]`` = (x_a, x_b); ``lbar`` rest length [m], ``ks`` stiffness [N] (scalars).
    Returns STATUS_DEGENERATE (energy +inf, nothing else added) for a zero-length edge.
    """
    ex = q[dofs[s, 3]] - q[dofs[s, 0]]
    ey = q[dofs[s, 4]] - q[dofs[s, 1]]
    ez = q[dofs[s, 5]] - q[dofs[s, 2]]
    ln = math.sqrt(ex * ex + ey * ey + ez * ez)
    if not ln > 0.0:
        e_out[s] += math.inf
        return STATUS_DEGENERATE
    strain = ln / lbar - 1.0
    e_out[s] += 0.5 * ks * lbar * strain * strain
    t = (ex / ln, ey / ln, ez / ln)
    f = ks * strain
    for i in range(3):
        g_out[s, i] -= f * t[i]
        g_out[s, 3 + i] += f * t[i]
    if not want_hess:
        return STATUS_OK
    k = ks / lbar
    perp = 1.0 - lbar / ln
    if project and perp < 0.0:
        perp = 0.0
    for i in range(3):
        for j in range(3):
            h = k * ((1.0 - perp) * (t[i] * t[j]) + (perp if i == j else 0.0))  # symmetric
            H_out[s, i, j] += h
            H_out[s, i, 3 + j] -= h
            H_out[s, 3 + i, j] -= h
            H_out[s, 3 + i, 3 + j] += h
    return STATUS_OK


# --------------------------------------------------------------------------------------------
# Bending and twisting: shared pieces
# --------------------------------------------------------------------------------------------
def _grad_kb_dot(m, e0, e1, kbm, gd0, gd1, inv_d):
    """``grad (kb . m)`` at fixed ``m``: its ``e0`` and ``e1`` parts (3-tuples);
    ``kbm = kb . m``, ``gd0``, ``gd1`` the gradient of ``D``, ``inv_d = 1 / D``."""
    u = cross(e1, m)
    w = cross(m, e0)
    return (((2.0 * u[0] - kbm * gd0[0]) * inv_d, (2.0 * u[1] - kbm * gd0[1]) * inv_d,
             (2.0 * u[2] - kbm * gd0[2]) * inv_d),
            ((2.0 * w[0] - kbm * gd1[0]) * inv_d, (2.0 * w[1] - kbm * gd1[1]) * inv_d,
             (2.0 * w[2] - kbm * gd1[2]) * inv_d))


def _neg(a):
    return (-a[0], -a[1], -a[2])


def _lin(w0, a0, w1, a1):
    """``w0 a0 + w1 a1`` of 3-tuples."""
    return (w0 * a0[0] + w1 * a1[0], w0 * a0[1] + w1 * a1[1], w0 * a0[2] + w1 * a1[2])


def _comb(w0, a0, w1, a1, w2, a2, w3, a3):
    """``w0 a0 + w1 a1 + w2 a2 + w3 a3`` of 3-tuples."""
    return (w0 * a0[0] + w1 * a1[0] + w2 * a2[0] + w3 * a3[0],
            w0 * a0[1] + w1 * a1[1] + w2 * a2[1] + w3 * a3[1],
            w0 * a0[2] + w1 * a1[2] + w2 * a2[2] + w3 * a3[2])


# 3x3 blocks are 9-tuples in row-major order, every index written out (no runtime indexing of
# tuples: Numba lowers that to a chain of branches per access).
def _o9(k, a, b):
    """``k a b^T``."""
    p = k * a[0]
    r = k * a[1]
    t = k * a[2]
    return (p * b[0], p * b[1], p * b[2], r * b[0], r * b[1], r * b[2], t * b[0], t * b[1],
            t * b[2])


def _s9(k, a, b):
    """``k (a b^T + b a^T)`` (exactly symmetric)."""
    return (2.0 * k * a[0] * b[0], k * (a[0] * b[1] + b[0] * a[1]), k * (a[0] * b[2] + b[0] * a[2]),
            k * (a[1] * b[0] + b[1] * a[0]), 2.0 * k * a[1] * b[1], k * (a[1] * b[2] + b[1] * a[2]),
            k * (a[2] * b[0] + b[2] * a[0]), k * (a[2] * b[1] + b[2] * a[1]), 2.0 * k * a[2] * b[2])


def _p9(k, t):
    """``k (I - t t^T)``."""
    return (k * (1.0 - t[0] * t[0]), -k * t[0] * t[1], -k * t[0] * t[2],
            -k * t[1] * t[0], k * (1.0 - t[1] * t[1]), -k * t[1] * t[2],
            -k * t[2] * t[0], -k * t[2] * t[1], k * (1.0 - t[2] * t[2]))


def _i9(k):
    """``k I``."""
    return (k, 0.0, 0.0, 0.0, k, 0.0, 0.0, 0.0, k)


def _e9(k, v):
    """``k sum_k eps_ijk v_k`` = ``-k [v]x``."""
    return (0.0, k * v[2], -k * v[1], -k * v[2], 0.0, k * v[0], k * v[1], -k * v[0], 0.0)


def _add9(x, y):
    return (x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5],
            x[6] + y[6], x[7] + y[7], x[8] + y[8])


def _sub9(x, y):
    return (x[0] - y[0], x[1] - y[1], x[2] - y[2], x[3] - y[3], x[4] - y[4], x[5] - y[5],
            x[6] - y[6], x[7] - y[7], x[8] - y[8])


def _t9(x):
    """Transpose."""
    return (x[0], x[3], x[6], x[1], x[4], x[7], x[2], x[5], x[8])


def _add_block(H_out, s, r, c, x):
    """Add block ``x`` at rows ``r..r+2``, columns ``c..c+2`` and its transpose at ``(c, r)``."""
    H_out[s, r, c] += x[0]
    H_out[s, r, c + 1] += x[1]
    H_out[s, r, c + 2] += x[2]
    H_out[s, r + 1, c] += x[3]
    H_out[s, r + 1, c + 1] += x[4]
    H_out[s, r + 1, c + 2] += x[5]
    H_out[s, r + 2, c] += x[6]
    H_out[s, r + 2, c + 1] += x[7]
    H_out[s, r + 2, c + 2] += x[8]
    H_out[s, c, r] += x[0]
    H_out[s, c + 1, r] += x[1]
    H_out[s, c + 2, r] += x[2]
    H_out[s, c, r + 1] += x[3]
    H_out[s, c + 1, r + 1] += x[4]
    H_out[s, c + 2, r + 1] += x[5]
    H_out[s, c, r + 2] += x[6]
    H_out[s, c + 1, r + 2] += x[7]
    H_out[s, c + 2, r + 2] += x[8]


def _add_diag_block(H_out, s, r, x):
    """Add the symmetric block ``x`` (upper triangle read) on the diagonal at ``r``."""
    H_out[s, r, r] += x[0]
    H_out[s, r + 1, r + 1] += x[4]
    H_out[s, r + 2, r + 2] += x[8]
    H_out[s, r, r + 1] += x[1]
    H_out[s, r + 1, r] += x[1]
    H_out[s, r, r + 2] += x[2]
    H_out[s, r + 2, r] += x[2]
    H_out[s, r + 1, r + 2] += x[5]
    H_out[s, r + 2, r + 1] += x[5]


def _add_cross(H_out, s, r, c, v):
    """Add 3-tuple ``v`` at rows ``r..r+2`` of column ``c`` and the transposed row."""
    H_out[s, r, c] += v[0]
    H_out[s, r + 1, c] += v[1]
    H_out[s, r + 2, c] += v[2]
    H_out[s, c, r] += v[0]
    H_out[s, c, r + 1] += v[1]
    H_out[s, c, r + 2] += v[2]


def _add3(g_out, s, r, v):
    g_out[s, r] += v[0]
    g_out[s, r + 1] += v[1]
    g_out[s, r + 2] += v[2]


def _lin5(w0, a0, w1, a1, w2, a2, w3, a3, w4, a4):
    """``w0 a0 + ... + w4 a4`` of 3-tuples."""
    return (w0 * a0[0] + w1 * a1[0] + w2 * a2[0] + w3 * a3[0] + w4 * a4[0],
            w0 * a0[1] + w1 * a1[1] + w2 * a2[1] + w3 * a3[1] + w4 * a4[1],
            w0 * a0[2] + w1 * a1[2] + w2 * a2[2] + w3 * a3[2] + w4 * a4[2])


def _bend_twist_core(s, q, dofs, f0, g0, f1, g1, kbar, k1, k2, m_ref, taubar, kt, ltilde,
                     do_bend, do_twist, e_out, g_out, H_out, want_hess):
    """Bending (``do_bend``) and/or twisting (``do_twist``) of bend-twist stencil ``s``.

    ``f0, g0`` / ``f1, g1``: reference frames ``(a1, a2)`` of edges j0 / j1 (3-tuples);
    ``kbar`` rest curvature (4-tuple); ``k1, k2, kt`` [N m^2]; ``m_ref``, ``taubar`` [rad];
    ``ltilde`` [m].  Returns STATUS_DEGENERATE (energy +inf, nothing else added) when an edge has
    zero length or the edges are antiparallel.

    Works in ``y = (e0, theta0, e1, theta1)``: 3x3 blocks ``h00``, ``h01``, ``h11`` over the
    edges, edge-angle vectors and the 2x2 angle block, then maps them onto the 11 slots
    (``x0 = -e0``, ``x1 = e0 - e1``, ``x2 = e1`` in the gradient, likewise in the Hessian).
    """
    x0 = (q[dofs[s, 0]], q[dofs[s, 1]], q[dofs[s, 2]])
    x1 = (q[dofs[s, 4]], q[dofs[s, 5]], q[dofs[s, 6]])
    x2 = (q[dofs[s, 8]], q[dofs[s, 9]], q[dofs[s, 10]])
    th0 = q[dofs[s, 3]]
    th1 = q[dofs[s, 7]]
    e0 = (x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2])
    e1 = (x2[0] - x1[0], x2[1] - x1[1], x2[2] - x1[2])
    l0 = math.sqrt(dot(e0, e0))
    l1 = math.sqrt(dot(e1, e1))
    d = l0 * l1 + dot(e0, e1)
    if not (l0 > 0.0 and l1 > 0.0 and d > 0.0):
        e_out[s] += math.inf
        return STATUS_DEGENERATE
    inv_d = 1.0 / d
    n = cross(e0, e1)
    kb = (2.0 * n[0] * inv_d, 2.0 * n[1] * inv_d, 2.0 * n[2] * inv_d)
    t0 = (e0[0] / l0, e0[1] / l0, e0[2] / l0)
    t1 = (e1[0] / l1, e1[1] / l1, e1[2] / l1)
    gd0 = (l1 * t0[0] + e1[0], l1 * t0[1] + e1[1], l1 * t0[2] + e1[2])  # dD/de0
    gd1 = (l0 * t1[0] + e0[0], l0 * t1[1] + e0[1], l0 * t1[2] + e0[2])  # dD/de1

    # ---- bending: components c = kb . m with m = (m2_0, -m1_0, m2_1, -m1_1); weights
    # K = k / (2 ltilde), residual weights w = K (c - kbar); gradients gA (e0), gB (e1), dth
    kk = (0.0, 0.0, 0.0, 0.0)
    w = (0.0, 0.0, 0.0, 0.0)
    dth = (0.0, 0.0, 0.0, 0.0)
    ga0 = _ZERO3
    ga1 = _ZERO3
    ga2 = _ZERO3
    ga3 = _ZERO3
    gb0 = _ZERO3
    gb1 = _ZERO3
    gb2 = _ZERO3
    gb3 = _ZERO3
    mres0 = _ZERO3  # w0 m2_0 - w1 m1_0: residual-weighted frame vector of edge j0
    mres1 = _ZERO3
    ee = 0.0
    if do_bend:
        m1_0, m2_0 = material_frame(f0, g0, th0)
        m1_1, m2_1 = material_frame(f1, g1, th1)
        c = material_curvatures(kb, m1_0, m2_0, m1_1, m2_1)
        ka = 0.5 * k1 / ltilde
        kbb = 0.5 * k2 / ltilde
        kk = (ka, kbb, ka, kbb)
        r = (c[0] - kbar[0], c[1] - kbar[1], c[2] - kbar[2], c[3] - kbar[3])
        w = (ka * r[0], kbb * r[1], ka * r[2], kbb * r[3])
        ee = 0.5 * (w[0] * r[0] + w[1] * r[1] + w[2] * r[2] + w[3] * r[3])
        # dc0/dth = kb . dm2/dth = -kb . m1 = c1; dc1/dth = -kb . dm1/dth = -kb . m2 = -c0
        dth = (c[1], -c[0], c[3], -c[2])
        ga0, gb0 = _grad_kb_dot(m2_0, e0, e1, c[0], gd0, gd1, inv_d)
        ga1, gb1 = _grad_kb_dot(m1_0, e0, e1, -c[1], gd0, gd1, inv_d)
        ga1 = _neg(ga1)
        gb1 = _neg(gb1)
        ga2, gb2 = _grad_kb_dot(m2_1, e0, e1, c[2], gd0, gd1, inv_d)
        ga3, gb3 = _grad_kb_dot(m1_1, e0, e1, -c[3], gd0, gd1, inv_d)
        ga3 = _neg(ga3)
        gb3 = _neg(gb3)
        mres0 = (w[0] * m2_0[0] - w[1] * m1_0[0], w[0] * m2_0[1] - w[1] * m1_0[1],
                 w[0] * m2_0[2] - w[1] * m1_0[2])
        mres1 = (w[2] * m2_1[0] - w[3] * m1_1[0], w[2] * m2_1[1] - w[3] * m1_1[1],
                 w[2] * m2_1[2] - w[3] * m1_1[2])

    # ---- twisting: tau = th1 - th0 + m_ref, dm_ref/de_j = kb / (2 l_j) = F_j
    ktl = 0.0
    wt = 0.0
    f_0 = _ZERO3
    f_1 = _ZERO3
    if do_twist:
        ktl = kt / ltilde
        rt = th1 - th0 + m_ref - taubar
        wt = ktl * rt
        ee += 0.5 * wt * rt
        f_0 = (0.5 * kb[0] / l0, 0.5 * kb[1] / l0, 0.5 * kb[2] / l0)
        f_1 = (0.5 * kb[0] / l1, 0.5 * kb[1] / l1, 0.5 * kb[2] / l1)

    e_out[s] += ee
    # residual-weighted gradient of the bending part: grad(kb . M), M = mres0 + mres1
    gma = _comb(w[0], ga0, w[1], ga1, w[2], ga2, w[3], ga3)
    gmb = _comb(w[0], gb0, w[1], gb1, w[2], gb2, w[3], gb3)
    ge0 = _lin(1.0, gma, wt, f_0)
    ge1 = _lin(1.0, gmb, wt, f_1)
    _add3(g_out, s, 0, _neg(ge0))
    _add3(g_out, s, 4, _lin(1.0, ge0, -1.0, ge1))
    _add3(g_out, s, 8, ge1)
    g_out[s, 3] += w[0] * dth[0] + w[1] * dth[1] - wt
    g_out[s, 7] += w[2] * dth[2] + w[3] * dth[3] + wt
    if not want_hess:
        return STATUS_OK

    mres = (mres0[0] + mres1[0], mres0[1] + mres1[1], mres0[2] + mres1[2])
    kbm = dot(kb, mres)  # sum_c w_c c_c
    # reference twist: symmetric Jacobian of F, (0,0) block -(kb u0^T + u0 kb^T), (0,1) block
    # (-2 eps(t0 + t1) - kb gd1^T / l0 - gd0 kb^T / l1) / (4 D)
    u0 = _lin(0.25 * inv_d / l0, gd0, 0.25 / (l0 * l0), t0)
    u1 = _lin(0.25 * inv_d / l1, gd1, 0.25 / (l1 * l1), t1)
    # edge-edge blocks: Gauss-Newton, then Hess(kb . M) = (2 Hess(M . N) - G gD^T - gD G^T
    # - (kb . M) Hess D) / D, the transported-frame term (M_j kb^T + kb M_j^T) / (2 l_j^2),
    # and the twist residual
    gn00 = _add9(_add9(_o9(kk[0], ga0, ga0), _o9(kk[1], ga1, ga1)),
                 _add9(_add9(_o9(kk[2], ga2, ga2), _o9(kk[3], ga3, ga3)), _o9(ktl, f_0, f_0)))
    gn11 = _add9(_add9(_o9(kk[0], gb0, gb0), _o9(kk[1], gb1, gb1)),
                 _add9(_add9(_o9(kk[2], gb2, gb2), _o9(kk[3], gb3, gb3)), _o9(ktl, f_1, f_1)))
    gn01 = _add9(_add9(_o9(kk[0], ga0, gb0), _o9(kk[1], ga1, gb1)),
                 _add9(_add9(_o9(kk[2], ga2, gb2), _o9(kk[3], ga3, gb3)), _o9(ktl, f_0, f_1)))
    h00 = _add9(_add9(gn00, _s9(-inv_d, gma, gd0)),
                _add9(_p9(-kbm * inv_d * l1 / l0, t0),
                      _s9(1.0, kb, _lin(0.5 / (l0 * l0), mres0, -wt, u0))))
    h11 = _add9(_add9(gn11, _s9(-inv_d, gmb, gd1)),
                _add9(_p9(-kbm * inv_d * l0 / l1, t1),
                      _s9(1.0, kb, _lin(0.5 / (l1 * l1), mres1, -wt, u1))))
    wq = 0.25 * wt * inv_d
    sp = (t0[0] + t1[0], t0[1] + t1[1], t0[2] + t1[2])
    h01 = _add9(_add9(gn01, _e9(2.0 * inv_d, mres)),
                _add9(_add9(_o9(-inv_d, gma, gd1), _o9(-inv_d, gd0, gmb)),
                      _add9(_add9(_o9(-kbm * inv_d, t0, t1), _i9(-kbm * inv_d)),
                            _add9(_e9(-2.0 * wq, sp),
                                  _add9(_o9(-wq / l0, kb, gd1), _o9(-wq / l1, gd0, kb))))))
    # onto the vertices: x0 = -e0, x1 = e0 - e1, x2 = e1
    _add_diag_block(H_out, s, 0, h00)
    _add_block(H_out, s, 0, 4, _sub9(h01, h00))
    _add_block(H_out, s, 0, 8, _sub9(_ZERO9, h01))
    _add_diag_block(H_out, s, 4, _sub9(_add9(h00, h11), _add9(h01, _t9(h01))))
    _add_block(H_out, s, 4, 8, _sub9(h01, h11))
    _add_diag_block(H_out, s, 8, h11)
    # edge-angle: Gauss-Newton of the components on that angle's edge, twist, and the residual
    # d/dth grad c (c0 -> grad c1, c1 -> -grad c0)
    va0 = _lin5(kk[0] * dth[0], ga0, kk[1] * dth[1], ga1, -ktl, f_0, w[0], ga1, -w[1], ga0)
    vb0 = _lin5(kk[0] * dth[0], gb0, kk[1] * dth[1], gb1, -ktl, f_1, w[0], gb1, -w[1], gb0)
    va1 = _lin5(kk[2] * dth[2], ga2, kk[3] * dth[3], ga3, ktl, f_0, w[2], ga3, -w[3], ga2)
    vb1 = _lin5(kk[2] * dth[2], gb2, kk[3] * dth[3], gb3, ktl, f_1, w[2], gb3, -w[3], gb2)
    _add_cross(H_out, s, 0, 3, _neg(va0))
    _add_cross(H_out, s, 4, 3, _lin(1.0, va0, -1.0, vb0))
    _add_cross(H_out, s, 8, 3, vb0)
    _add_cross(H_out, s, 0, 7, _neg(va1))
    _add_cross(H_out, s, 4, 7, _lin(1.0, va1, -1.0, vb1))
    _add_cross(H_out, s, 8, 7, vb1)
    # d2c/dth2 = -c: residual part -(w0 c0 + w1 c1) = -kb . mres0
    H_out[s, 3, 3] += kk[0] * dth[0] * dth[0] + kk[1] * dth[1] * dth[1] + ktl - dot(kb, mres0)
    H_out[s, 7, 7] += kk[2] * dth[2] * dth[2] + kk[3] * dth[3] * dth[3] + ktl - dot(kb, mres1)
    H_out[s, 3, 7] -= ktl
    H_out[s, 7, 3] -= ktl
    return STATUS_OK


# --------------------------------------------------------------------------------------------
# Bending and twisting: the stencil functions
# --------------------------------------------------------------------------------------------
def add_bend(s, q, dofs, edges, a1, a2, kappabar, ltilde, kbend, e_out, g_out, H_out,
             want_hess):
    """Add bend stencil ``s``'s bending energy, gradient [11] and Hessian [11, 11].

    ``edges[s] = (j0, j1)`` index the reference frames ``a1``, ``a2`` [E, 3];
    ``kappabar`` [S, 4] rest curvature [1]; ``ltilde`` [S] Voronoi length [m]; ``kbend`` [S, 2]
    ``(k1, k2)`` [N m^2].  Returns a status (STATUS_OK or STATUS_DEGENERATE).
    """
    j0 = edges[s, 0]
    j1 = edges[s, 1]
    return _bend_twist_core(
        s, q, dofs, (a1[j0, 0], a1[j0, 1], a1[j0, 2]), (a2[j0, 0], a2[j0, 1], a2[j0, 2]),
        (a1[j1, 0], a1[j1, 1], a1[j1, 2]), (a2[j1, 0], a2[j1, 1], a2[j1, 2]),
        (kappabar[s, 0], kappabar[s, 1], kappabar[s, 2], kappabar[s, 3]),
        kbend[s, 0], kbend[s, 1], 0.0, 0.0, 0.0, ltilde[s], True, False,
        e_out, g_out, H_out, want_hess)


def add_twist(s, q, dofs, m_ref, taubar, ltilde, ktwist, e_out, g_out, H_out, want_hess):
    """Add stencil ``s``'s twisting energy, gradient [11] and Hessian [11, 11].

    ``m_ref`` [S] reference twist at ``q`` [rad]; ``taubar`` [S] rest twist [rad]; ``ltilde``
    [S] [m]; ``ktwist`` [S] [N m^2].  Returns a status.
    """
    return _bend_twist_core(
        s, q, dofs, _ZERO3, _ZERO3, _ZERO3, _ZERO3, (0.0, 0.0, 0.0, 0.0), 0.0, 0.0,
        m_ref[s], taubar[s], ktwist[s], ltilde[s], False, True, e_out, g_out, H_out, want_hess)


def add_bend_twist(s, q, dofs, edges, a1, a2, m_ref, kappabar, taubar, ltilde, kbend, ktwist,
                   e_out, g_out, H_out, want_hess):
    """Add stencil ``s``'s bending plus twisting energy, gradient and Hessian in one pass
    (arguments as :func:`add_bend` and :func:`add_twist`).  Returns a status."""
    j0 = edges[s, 0]
    j1 = edges[s, 1]
    return _bend_twist_core(
        s, q, dofs, (a1[j0, 0], a1[j0, 1], a1[j0, 2]), (a2[j0, 0], a2[j0, 1], a2[j0, 2]),
        (a1[j1, 0], a1[j1, 1], a1[j1, 2]), (a2[j1, 0], a2[j1, 1], a2[j1, 2]),
        (kappabar[s, 0], kappabar[s, 1], kappabar[s, 2], kappabar[s, 3]),
        kbend[s, 0], kbend[s, 1], m_ref[s], taubar[s], ktwist[s], ltilde[s], True, True,
        e_out, g_out, H_out, want_hess)
