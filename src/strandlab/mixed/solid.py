"""Solid energy of the mixed model: St. Venant-Kirchhoff tetrahedra (O'Brien and Hodgins 1999)
as a :class:`~strandlab.implicit.terms.StencilTerm`.

One stencil per tetrahedron, 12 slots ``(x0, x1, x2, x3)``; the kernel is the simplex kernel
of :mod:`strandlab.mixed.stvk` with ``d = 3``:

    F = Ds Dm^-1,  Ds = [x1 - x0, x2 - x0, x3 - x0],  Dm = [X1 - X0, X2 - X0, X3 - X0]
    W = V (mu tr(E^2) + lambda / 2 tr(E)^2),   E = (F^T F - I) / 2

with ``V`` the rest volume [m^3], ``mu = E / (2 (1 + nu))``,
``lambda = E nu / ((1 + nu)(1 - 2 nu))`` [Pa]; the gradient and the 12 x 12 Hessian are exact.

Orientation: the rest tetrahedron must be positively oriented, ``det Dm > 0``, i.e. ``X3`` lies
on the side of the triangle ``(X0, X1, X2)`` towards which ``(X1 - X0) x (X2 - X0)`` points
(seen from ``X3``, ``X0, X1, X2`` turn clockwise).  A negative rest volume is reported as an
inverted tetrahedron (swap two of its vertices), a (nearly) zero one as degenerate.
"""
from __future__ import annotations

import numpy as np

from .elements import check_positions, check_simplices, lame, per_element, stencil_dofs
from .stvk import StVKTerm

__all__ = ["SolidTerm", "ZERO_VOLUME"]

#: A rest tetrahedron is degenerate when ``6 |V| <= ZERO_VOLUME * (longest edge)^3``.
ZERO_VOLUME = 1e-12


class SolidTerm(StVKTerm):
    """StVK tetrahedra (module docstring).

    rest_positions : [V, 3] [m].
    tetrahedra : int [N, 4], positively oriented at rest (module docstring).
    young [Pa] > 0, poisson in (-1, 1/2) : scalars or [N].
    dofs : int [N, 12]; default the standard layout ``q[3 v : 3 v + 3]`` = vertex ``v``.

    Attributes ``rest_volume`` [N] [m^3].  ValueError names the tetrahedron for a zero or
    negative rest volume, repeated or out-of-range vertices and a bad parameter.
    """

    def __init__(self, *, rest_positions, tetrahedra, young, poisson, dofs=None,
                 name: str = "solid"):
        self.name = name
        term = f"term {name!r}"
        x = check_positions(term, rest_positions)
        tet = check_simplices(term, "tetrahedron", tetrahedra, len(x), 4)
        n = len(tet)
        young = per_element(term, "tetrahedron", "young", young, n)
        poisson = per_element(term, "tetrahedron", "poisson", poisson, n, lo=-1.0, hi=0.5)
        dm = np.transpose(x[tet[:, 1:]] - x[tet[:, :1]], (0, 2, 1))    # columns X_i - X0
        six_vol = np.linalg.det(dm) if n else np.zeros(0)
        edges = x[tet[:, [1, 2, 3, 2, 3, 3]]] - x[tet[:, [0, 0, 0, 1, 1, 2]]]
        longest = np.max(np.linalg.norm(edges, axis=2), axis=1) if n else np.zeros(0)
        small = np.abs(six_vol) <= ZERO_VOLUME * longest**3
        for bad, what in ((small, "has zero rest volume"),
                          (six_vol < 0.0, "is inverted (negative rest volume with its vertex "
                                          "order; swap two vertices)")):
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{term}: tetrahedron {i} = {tet[i].tolist()} {what}: "
                                 f"6 V = {six_vol[i]:.3e} m^3")
        inv = np.linalg.inv(dm) if n else np.zeros((0, 3, 3))     # rows beta_1..beta_3
        beta = np.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)
        mu, lam = lame(young, poisson)
        self.rest_volume = six_vol / 6.0
        self._setup(stencil_dofs(term, dofs, tet), beta, self.rest_volume, mu, lam)
        self.tetrahedra = tet
