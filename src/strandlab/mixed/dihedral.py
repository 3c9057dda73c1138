"""Signed dihedral angle of a hinge with its exact gradient and Hessian (Numba scalar functions).

A hinge is an edge ``x0 -> x1`` shared by two triangles with wing vertices ``x2`` and ``x3``:
triangle A = ``(x0, x1, x2)`` and triangle B = ``(x1, x0, x3)`` (the orientation B has when the
two triangles are consistently oriented).  With ``e = x1 - x0``, ``a = x2 - x0``,
``b = x3 - x0`` and the (unnormalised) normals ``nA = e x a``, ``nB = b x e``:

    theta = atan2(e_hat . (nA x nB), nA . nB) = atan2(-|e| a . nB, nA . nB)   in (-pi, pi].

Sign convention: theta is the angle that turns ``nA`` into ``nB`` about the edge direction
``e_hat``.  It is 0 when the hinge is flat (both normals point to the same side), > 0 when the
hinge folds away from its normals (a ridge seen from the side the normals point to: moving a
wing against its triangle's normal increases theta) and < 0 when it folds towards them (a
valley); ``|theta| -> pi`` when the two triangles fold onto each other.

Derivatives (derived here; they agree with Tamstorf and Grinspun 2013).  With ``L = |e|``,
``qA = |nA|^2``, ``qB = |nB|^2``, ``alphaA = a.e / L^2``, ``alphaB = b.e / L^2``:

    d theta / d x2 = gA = -L nA / qA          (the wing moves its triangle about the edge)
    d theta / d x3 = gB = -L nB / qB
    d theta / d x1 = ge = -alphaA gA - alphaB gB
    d theta / d x0 = -(ge + gA + gB)           (translation invariance)

The Hessian is worked out in the translation-free coordinates ``y = (e, a, b)``; with
``P(n) = (|n|^2 I - 2 n n^T) / |n|^4`` (the derivative of ``n / |n|^2``) and ``[v]x`` the cross
product matrix:

    H_aa = -L P(nA) [e]x          H_ae = -nA e_hat^T / qA + L P(nA) [a]x
    H_bb =  L P(nB) [e]x          H_be = -nB e_hat^T / qB - L P(nB) [b]x      H_ab = 0
    H_ee = sym(-gA (a - 2 alphaA e)^T / L^2 - alphaA H_ae - gB (b - 2 alphaB e)^T / L^2
               - alphaB H_be)

and ``x -> y`` is linear (``e = x1 - x0``, ...), so ``H_x = J^T H_y J`` with the constant
``J``: the ``x0`` rows and columns are minus the sums of the others.  Every block is written
with its transpose from one value, so the Hessian is exactly symmetric.

Robustness.  ``atan2`` of the two unnormalised products is accurate at every angle, flat
(theta ~ 0) and folded (|theta| ~ pi) alike, and the gradient and Hessian formulas have no
singular factor but ``1 / |n|^2`` and ``1 / L``: they hold uniformly up to the branch cut at
``theta = +-pi`` (where theta itself jumps by 2 pi; callers that compare with a rest angle use
:func:`wrap_angle` on the difference).  A hinge with a zero-length edge or a zero-area triangle
has no angle: :func:`dihedral_gradient` reports it (``ok = False``), and so does a triangle
collinear to rounding (:data:`DEGENERATE_SINE`).

All functions take 3-tuples [m] and are compiled with Numba (``cache=True``, no reference
counting, NumPy's error model: division by zero gives inf / NaN, never raises), so that kernels
of other modules (the shell bending term, the joint energies) can call them.
"""
from __future__ import annotations

import math

from numba import njit

__all__ = [
    "dihedral_angle",
    "dihedral_gradient",
    "add_dihedral_hessian",
    "dihedral_hessian_blocks",
    "write_hinge_hessian",
    "wrap_angle",
    "DEGENERATE_SINE",
]

_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}

#: A hinge is degenerate when a wing's triangle has a sine of its angle at ``x0`` at most this
#: (collinear to rounding: the angle and its derivatives would be noise) or its edge has zero
#: length.
DEGENERATE_SINE = 1e-12


@njit(**_OPTS)
def _sub(u, v):
    return (u[0] - v[0], u[1] - v[1], u[2] - v[2])


@njit(**_OPTS)
def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


@njit(**_OPTS)
def _dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


@njit(**_OPTS)
def _hinge(x0, x1, x2, x3):
    """``e, a, b, nA, nB`` of the hinge (module docstring)."""
    e = _sub(x1, x0)
    a = _sub(x2, x0)
    b = _sub(x3, x0)
    return e, a, b, _cross(e, a), _cross(b, e)


@njit(**_OPTS)
def wrap_angle(angle):
    """``angle`` [rad] moved by a multiple of 2 pi into [-pi, pi)."""
    return angle - 2.0 * math.pi * math.floor(angle / (2.0 * math.pi) + 0.5)


@njit(**_OPTS)
def dihedral_angle(x0, x1, x2, x3):
    """Signed dihedral angle theta [rad] in (-pi, pi] of the hinge ``x0 -> x1`` with wings
    ``x2``, ``x3`` (3-tuples [m]); 0 for a degenerate hinge (see :func:`dihedral_gradient`)."""
    e, a, _, nA, nB = _hinge(x0, x1, x2, x3)
    return math.atan2(-math.sqrt(_dot(e, e)) * _dot(a, nB), _dot(nA, nB))


@njit(**_OPTS)
def dihedral_gradient(x0, x1, x2, x3):
    """``(theta, g0, g1, g2, g3, ok)``: the angle [rad], its gradient with respect to each
    vertex (3-tuples [1/m]) and ``ok``, False for a degenerate hinge (zero-length edge, a
    triangle collinear to rounding, non-finite input; the other values are then
    meaningless)."""
    e, a, b, nA, nB = _hinge(x0, x1, x2, x3)
    ll = _dot(e, e)
    L = math.sqrt(ll)
    qa = _dot(nA, nA)
    qb = _dot(nB, nB)
    tol = DEGENERATE_SINE * DEGENERATE_SINE * ll
    ok = (ll > 0.0 and qa > tol * _dot(a, a) and qb > tol * _dot(b, b)
          and math.isfinite(ll * qa * qb))
    theta = math.atan2(-L * _dot(a, nB), _dot(nA, nB))
    ka = -L / qa
    kb = -L / qb
    ga = (ka * nA[0], ka * nA[1], ka * nA[2])
    gb = (kb * nB[0], kb * nB[1], kb * nB[2])
    al = _dot(a, e) / ll
    be = _dot(b, e) / ll
    ge = (-al * ga[0] - be * gb[0], -al * ga[1] - be * gb[1], -al * ga[2] - be * gb[2])
    g0 = (-(ge[0] + ga[0] + gb[0]), -(ge[1] + ga[1] + gb[1]), -(ge[2] + ga[2] + gb[2]))
    return theta, g0, ge, ga, gb, ok


# ------------------------------------------------------------------ 3x3 blocks as 9-tuples
@njit(**_OPTS)
def _proj(n, q):
    """``P(n) = (q I - 2 n n^T) / q^2`` with ``q = |n|^2``."""
    r = 1.0 / (q * q)
    return ((q - 2.0 * n[0] * n[0]) * r, -2.0 * n[0] * n[1] * r, -2.0 * n[0] * n[2] * r,
            -2.0 * n[1] * n[0] * r, (q - 2.0 * n[1] * n[1]) * r, -2.0 * n[1] * n[2] * r,
            -2.0 * n[2] * n[0] * r, -2.0 * n[2] * n[1] * r, (q - 2.0 * n[2] * n[2]) * r)


@njit(**_OPTS)
def _row_cross(r0, r1, r2, v, c):
    """``c (r0, r1, r2) [v]x`` (``[v]x w = v x w``) for one row."""
    return c * (r1 * v[2] - r2 * v[1]), c * (r2 * v[0] - r0 * v[2]), c * (r0 * v[1] - r1 * v[0])


@njit(**_OPTS)
def _times_cross(m, v, c):
    """``c M [v]x``."""
    u0, u1, u2 = _row_cross(m[0], m[1], m[2], v, c)
    v0, v1, v2 = _row_cross(m[3], m[4], m[5], v, c)
    w0, w1, w2 = _row_cross(m[6], m[7], m[8], v, c)
    return (u0, u1, u2, v0, v1, v2, w0, w1, w2)


@njit(**_OPTS)
def _lin(p, x, r, y):
    """``p X + r Y``."""
    return (p * x[0] + r * y[0], p * x[1] + r * y[1], p * x[2] + r * y[2],
            p * x[3] + r * y[3], p * x[4] + r * y[4], p * x[5] + r * y[5],
            p * x[6] + r * y[6], p * x[7] + r * y[7], p * x[8] + r * y[8])


@njit(**_OPTS)
def _outer(c, u, v):
    """``c u v^T``."""
    return (c * u[0] * v[0], c * u[0] * v[1], c * u[0] * v[2],
            c * u[1] * v[0], c * u[1] * v[1], c * u[1] * v[2],
            c * u[2] * v[0], c * u[2] * v[1], c * u[2] * v[2])


@njit(**_OPTS)
def _tr(m):
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


@njit(**_OPTS)
def _wing_blocks(n, q, L, e_hat, e, w, sign):
    """``(H_ww, H_we)`` of one wing (``w = a`` with ``sign = 1``, ``w = b`` with -1)."""
    p = _proj(n, q)
    h_ww = _times_cross(p, e, -sign * L)
    h_we = _lin(1.0, _outer(-1.0 / q, n, e_hat), 1.0, _times_cross(p, w, sign * L))
    return h_ww, h_we


@njit(**_OPTS)
def _neg(m):
    return (-m[0], -m[1], -m[2], -m[3], -m[4], -m[5], -m[6], -m[7], -m[8])


@njit(**_OPTS)
def _sym(m):
    """``(M + M^T) / 2``, symmetric to the bit."""
    return _lin(0.5, m, 0.5, _tr(m))


@njit(**_OPTS)
def dihedral_hessian_blocks(x0, x1, x2, x3):
    """The Hessian of theta [1/m^2] as its 3x3 blocks between vertices ``(i, j)``, each a
    9-tuple (row-major): ``(B00, B01, B02, B03, B11, B12, B13, B22, B33)``; ``B23`` is zero,
    ``Bji = Bij^T`` and the diagonal blocks are symmetric.  The hinge must not be degenerate
    (:func:`dihedral_gradient`)."""
    e, a, b, nA, nB = _hinge(x0, x1, x2, x3)
    ll = _dot(e, e)
    L = math.sqrt(ll)
    e_hat = (e[0] / L, e[1] / L, e[2] / L)
    qa = _dot(nA, nA)
    qb = _dot(nB, nB)
    h_aa, h_ae = _wing_blocks(nA, qa, L, e_hat, e, a, 1.0)
    h_bb, h_be = _wing_blocks(nB, qb, L, e_hat, e, b, -1.0)
    al = _dot(a, e) / ll
    be = _dot(b, e) / ll
    ga = (-L / qa * nA[0], -L / qa * nA[1], -L / qa * nA[2])
    gb = (-L / qb * nB[0], -L / qb * nB[1], -L / qb * nB[2])
    ra = (a[0] - 2.0 * al * e[0], a[1] - 2.0 * al * e[1], a[2] - 2.0 * al * e[2])
    rb = (b[0] - 2.0 * be * e[0], b[1] - 2.0 * be * e[1], b[2] - 2.0 * be * e[2])
    h_ee = _lin(1.0, _lin(-1.0 / ll, _outer(1.0, ga, ra), -1.0 / ll, _outer(1.0, gb, rb)),
                1.0, _lin(-al, h_ae, -be, h_be))
    # blocks of H_x: vertex 1 <- e, 2 <- a, 3 <- b; vertex 0 <- minus the column sums
    h_ea = _tr(h_ae)
    h_eb = _tr(h_be)
    col_e = _lin(1.0, _lin(1.0, h_ee, 1.0, h_ae), 1.0, h_be)    # sum over rows of column e
    col_a = _lin(1.0, h_ea, 1.0, h_aa)
    col_b = _lin(1.0, h_eb, 1.0, h_bb)
    b00 = _sym(_lin(1.0, _lin(1.0, col_e, 1.0, col_a), 1.0, col_b))
    return (b00, _neg(col_e), _neg(col_a), _neg(col_b), _sym(h_ee), h_ea, h_eb, _sym(h_aa),
            _sym(h_bb))


@njit(**_OPTS)
def _add_block(H, s, r, c, m, k):
    """``H[s]`` += ``k M`` at rows ``r..r+2``, columns ``c..c+2``, and ``k M^T`` at ``(c, r)``
    (once when ``r == c``: ``M`` is then symmetric)."""
    for i in range(3):
        for j in range(3):
            v = k * m[3 * i + j]
            H[s, r + i, c + j] += v
            if r != c:
                H[s, c + j, r + i] += v


@njit(**_OPTS)
def add_dihedral_hessian(x0, x1, x2, x3, c, H, s, slots):
    """Add ``c`` times the Hessian of theta [1/m^2] to ``H[s]`` (a [k, k] block of a stencil
    array [n, k, k]); vertex ``i``'s xyz rows and columns start at ``slots[i]`` (4 ints).  The
    hinge must not be degenerate (:func:`dihedral_gradient`)."""
    b00, b01, b02, b03, b11, b12, b13, b22, b33 = dihedral_hessian_blocks(x0, x1, x2, x3)
    s0, s1, s2, s3 = slots[0], slots[1], slots[2], slots[3]
    _add_block(H, s, s0, s0, b00, c)
    _add_block(H, s, s0, s1, b01, c)
    _add_block(H, s, s0, s2, b02, c)
    _add_block(H, s, s0, s3, b03, c)
    _add_block(H, s, s1, s1, b11, c)
    _add_block(H, s, s1, s2, b12, c)
    _add_block(H, s, s1, s3, b13, c)
    _add_block(H, s, s2, s2, b22, c)
    _add_block(H, s, s3, s3, b33, c)


@njit(**_OPTS)
def _put_block(H, s, r, c, w, gr, gc, k, m):
    """``H[s]`` rows ``r..r+2``, columns ``c..c+2`` = ``w gr gc^T + k M``, and the transpose at
    ``(c, r)`` (the same entries again when ``r == c``: ``M`` is then symmetric)."""
    for i in range(3):
        for j in range(3):
            v = w * gr[i] * gc[j] + k * m[3 * i + j]
            H[s, r + i, c + j] = v
            H[s, c + j, r + i] = v


@njit(**_OPTS)
def write_hinge_hessian(x0, x1, x2, x3, w, c, g0, g1, g2, g3, H, s):
    """Overwrite ``H[s]`` [12, 12] with ``w g g^T + c`` times the Hessian of theta, ``g`` the
    gradient of theta (``g0..g3``: vertices 0-3, 3-tuples [1/m]): each entry written once."""
    b00, b01, b02, b03, b11, b12, b13, b22, b33 = dihedral_hessian_blocks(x0, x1, x2, x3)
    _put_block(H, s, 0, 0, w, g0, g0, c, b00)
    _put_block(H, s, 0, 3, w, g0, g1, c, b01)
    _put_block(H, s, 0, 6, w, g0, g2, c, b02)
    _put_block(H, s, 0, 9, w, g0, g3, c, b03)
    _put_block(H, s, 3, 3, w, g1, g1, c, b11)
    _put_block(H, s, 3, 6, w, g1, g2, c, b12)
    _put_block(H, s, 3, 9, w, g1, g3, c, b13)
    _put_block(H, s, 6, 6, w, g2, g2, c, b22)
    _put_block(H, s, 6, 9, w, g2, g3, 0.0, b22)      # B23 = 0
    _put_block(H, s, 9, 9, w, g3, g3, c, b33)
