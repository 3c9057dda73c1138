"""Analytic and numerical reference solutions for elastic rods.

The classical results that rod models are checked against (axial stretch, small and large
cantilever deflection, the pure-moment arc, Euler buckling, cantilever vibration, Michell's and
Greenhill's instabilities, catenaries, pendulum and hanging chain, close-coiled helix), written
once so that tests, benchmarks and users comparing rod models share one implementation.

Conventions
-----------
SI units throughout: lengths in m, forces in N, moments in N m, distributed loads in N/m,
moduli in Pa, stiffnesses ``B = E I`` (bending) and ``C = G J`` (twisting) in N m^2, angles in
rad, times in s, angular frequencies in rad/s.  A circular section of radius ``r`` has
``A = pi r^2``, ``I = pi r^4 / 4``, ``J = pi r^4 / 2`` (:func:`circular_section`).

Transverse deflections are positive in the direction of the load.  The planar elastica
(:func:`elastica_cantilever`) uses ``x`` along the undeformed rod and ``y`` upwards, with the
loads acting downwards (``-y``), so a hanging tip has ``y < 0``.

This module depends on numpy and scipy only and imports nothing else of strandlab.

Sources
-------
- S. P. Timoshenko, J. M. Gere, *Theory of Elastic Stability*, 2nd ed., McGraw-Hill 1961
  (Euler buckling, effective lengths; Greenhill's twisted shaft, sec. 2.19).
- S. P. Timoshenko, D. H. Young, W. Weaver, *Vibration Problems in Engineering*, 4th ed., 1974
  (cantilever modes, ``1 + cos(beta L) cosh(beta L) = 0``; hanging chain, Bessel ``J0``).
- K. E. Bisshopp, D. C. Drucker, "Large deflection of cantilever beams", Q. Appl. Math. 3 (1945)
  272-275 (elastica under a tip load).
- E. Reissner, "On one-dimensional finite-strain beam theory: the plane problem",
  ZAMP 23 (1972) 795-804 (extensible, shearable planar rod).
- J. H. Michell, "On the stability of a bent and twisted wire", Messenger of Math. 19 (1889)
  181-184; A. Goriely, "Twisted elastic rings and the rediscoveries of Michell's instability",
  J. Elasticity 84 (2006) 281-299.
- J. F. Marko, E. D. Siggia, "Statistical mechanics of supercoiled DNA", Phys. Rev. E 52 (1995)
  2912 (plectoneme onset ``M^2 = 4 B T`` for a long rod under tension).
- H. M. Irvine, *Cable Structures*, MIT Press 1981, ch. 1-2 (inextensible and elastic catenary).
- A. M. Wahl, *Mechanical Springs*, 2nd ed., McGraw-Hill 1963 (close-coiled helical spring).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.integrate import solve_bvp
from scipy.optimize import brentq
from scipy.special import ellipk, jn_zeros

__all__ = [
    # sections and axial load
    "circular_section", "axial_stretch",
    # small-deflection cantilevers and the planar elastica
    "BeamDeflection", "cantilever_tip_load", "cantilever_self_weight",
    "ElasticaSolution", "elastica_cantilever", "EndMomentArc", "end_moment_arc",
    # stability
    "EFFECTIVE_LENGTH_FACTORS", "effective_length_factor", "euler_buckling_load",
    "michell_critical_twist", "greenhill_moment", "plectoneme_onset_tension_moment",
    # vibration
    "cantilever_beta_L", "cantilever_frequencies", "pendulum_period", "hanging_chain_frequency",
    # cables and springs
    "Catenary", "inextensible_catenary", "ElasticCatenary", "elastic_catenary",
    "helix_spring_stiffness", "helix_self_weight_extension",
]


# ------------------------------------------------------------------------------------ checks

def _positive(name: str, value) -> float:
    """``value`` as a float, or ValueError naming ``name`` when it is not finite and > 0."""
    v = float(value)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    return v


def _finite(name: str, value) -> float:
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _points(name: str, x, default_end: float, n_default: int = 101) -> np.ndarray:
    """Evaluation points: ``x`` as a float array, or ``linspace(0, default_end, n_default)``."""
    if x is None:
        return np.linspace(0.0, default_end, n_default)
    a = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


# ------------------------------------------------------------------------ section, stretch

def circular_section(r: float) -> tuple[float, float, float]:
    """Area ``A = pi r^2`` [m^2], second moment ``I = pi r^4 / 4`` [m^4] and polar moment
    ``J = pi r^4 / 2`` [m^4] of a solid circular section of radius ``r`` [m]."""
    r = _positive("r", r)
    return math.pi * r**2, math.pi * r**4 / 4.0, math.pi * r**4 / 2.0


def axial_stretch(L: float, E: float, A: float, F: float, *, large_strain: bool = False) -> float:
    """Elongation [m] of a rod of length ``L`` [m], modulus ``E`` [Pa] and section ``A`` [m^2]
    under an axial end force ``F`` [N] (validation item 1).

    Linear: ``dL = F L / (E A)``.  ``large_strain=True``: ``dL = F L / (E A - F)``, exact for
    the law ``F = E A (l - L) / l`` (strain measured against the *deformed* length ``l``, as in
    Cosserat rods whose internal force is divided by the dilatation, e.g. PyElastica); refused
    for ``F >= E A``.
    """
    L, E, A = _positive("L", L), _positive("E", E), _positive("A", A)
    F = _finite("F", F)
    if not large_strain:
        return F * L / (E * A)
    if F >= E * A:
        raise ValueError(f"F = {F} N must be below E A = {E * A} N for the large-strain formula")
    return F * L / (E * A - F)


# ------------------------------------------------------------------ small-deflection beams

class BeamDeflection(NamedTuple):
    """Small-deflection cantilever: tip deflection ``tip`` [m] and the deflection ``w`` [m]
    (array, shape of ``x``) at the points ``x`` [m] along the beam, both positive along the
    load."""
    tip: float
    x: np.ndarray
    w: np.ndarray


def cantilever_tip_load(L: float, EI: float, F: float, x=None) -> BeamDeflection:
    """Euler-Bernoulli cantilever clamped at ``x = 0`` with a transverse tip force ``F`` [N]
    (validation item 2).

    ``delta = F L^3 / (3 E I)``, ``w(x) = F x^2 (3 L - x) / (6 E I)``; ``L`` [m], ``EI``
    [N m^2], ``x`` [m] (default 101 points over ``[0, L]``).  Valid for ``delta << L``
    (the geometric nonlinearity is of relative order ``(F L^2 / EI)^2``; see
    :func:`elastica_cantilever`).  Source: Timoshenko & Gere, *Mechanics of Materials*.
    """
    L, EI = _positive("L", L), _positive("EI", EI)
    F = _finite("F", F)
    xs = _points("x", x, L)
    return BeamDeflection(F * L**3 / (3.0 * EI), xs, F * xs**2 * (3.0 * L - xs) / (6.0 * EI))


def cantilever_self_weight(L: float, EI: float, q: float, x=None) -> BeamDeflection:
    """Euler-Bernoulli cantilever clamped at ``x = 0`` under a uniform transverse load ``q``
    [N/m] (self-weight ``q = rho A g``; validation item 2).

    ``delta = q L^4 / (8 E I)``, ``w(x) = q x^2 (6 L^2 - 4 L x + x^2) / (24 E I)``; ``x`` [m]
    (default 101 points over ``[0, L]``).  Valid for ``delta << L``.
    """
    L, EI = _positive("L", L), _positive("EI", EI)
    q = _finite("q", q)
    xs = _points("x", x, L)
    w = q * xs**2 * (6.0 * L**2 - 4.0 * L * xs + xs**2) / (24.0 * EI)
    return BeamDeflection(q * L**4 / (8.0 * EI), xs, w)


# ------------------------------------------------------------------------ planar elastica

class ElasticaSolution(NamedTuple):
    """Planar elastica of a cantilever (see :func:`elastica_cantilever`).

    ``s`` [m], shape (n,): arc length of the undeformed rod; ``x``, ``y`` [m], shape (n,): the
    deformed centreline (``x`` along the clamp direction, ``y`` upwards); ``theta`` [rad],
    shape (n,): tangent angle from ``+x`` (negative when hanging); ``moment`` [N m], shape (n,):
    bending moment ``EI theta'(s)``; ``tip`` [m]: ``(x(L), y(L))``; ``tip_drop`` [m]:
    ``-y(L)``; ``n_nodes``: size of the collocation mesh the solver ended on.
    """
    s: np.ndarray
    x: np.ndarray
    y: np.ndarray
    theta: np.ndarray
    moment: np.ndarray
    tip: tuple[float, float]
    tip_drop: float
    n_nodes: int


def _elastica_rhs(alpha: float, beta: float, ea: float, es: float):
    """Right-hand side of the nondimensional elastica in ``sigma = s / L`` for the state
    ``(theta, kappa = L theta', x / L, y / L)``; ``p = alpha (1 - sigma) + beta`` is the
    carried load ``P L^2 / EI``, ``ea = EI / (EA L^2)``, ``es = EI / (GA L^2)``."""

    def fun(sig, u):
        th, kap = u[0], u[1]
        p = alpha * (1.0 - sig) + beta
        c, sn = np.cos(th), np.sin(th)
        stretch = 1.0 - ea * p * sn          # 1 + N / EA with N = -P sin(theta)
        shear = -es * p * c                  # Q / GA with Q = -P cos(theta)
        dx = stretch * c - shear * sn
        dy = stretch * sn + shear * c
        return np.vstack((kap, p * dx, dx, dy))

    return fun


def _elastica_bc(ua, ub):
    # clamp: theta(0) = 0, x(0) = y(0) = 0; free tip: moment (theta') = 0 at s = L
    return np.array([ua[0], ua[2], ua[3], ub[1]])


def elastica_cantilever(L: float, EI: float, q: float = 0.0, F_tip: float = 0.0, *,
                        EA: float | None = None, GA: float | None = None, n: int = 201,
                        tol: float = 1e-8, max_nodes: int = 200_000) -> ElasticaSolution:
    """Large-deflection planar elastica of a cantilever clamped horizontally at the origin.

    Loads act downwards (``-y``): a distributed weight ``q`` [N/m] per unit *undeformed* length
    and a tip force ``F_tip`` [N] (negative values push upwards).  The carried vertical load at
    arc length ``s`` is ``P(s) = q (L - s) + F_tip``; the internal force is ``n = (0, -P)``.

    Equations (``s`` in [0, L], ``theta`` the tangent angle, ``EI`` [N m^2])::

        EI theta''(s) = P(s) x'(s)                 (moment balance m' + r' x n = 0)
        x' = cos(theta),  y' = sin(theta)          (inextensible, unshearable: Euler elastica)
        theta(0) = 0, x(0) = y(0) = 0, theta'(L) = 0

    With ``EA`` [N] and/or ``GA`` [N] given, the rod is Reissner's extensible and shearable
    planar rod with the same balance laws and the strains ``N / EA`` (``N = -P sin theta``, the
    tension) and ``Q / GA`` (``Q = -P cos theta``, the shear force)::

        r' = (1 + N / EA) t + (Q / GA) t_perp,   t = (cos, sin), t_perp = (-sin, cos)

    ``GA`` is the effective shear stiffness (shear-corrected area times ``G``).  ``None`` means
    rigid in that mode.

    Solved with ``scipy.integrate.solve_bvp`` on the nondimensional form (``s / L``, loads
    ``q L^3 / EI`` and ``F_tip L^2 / EI``) to the relative residual ``tol``; large loads are
    reached by continuation in the load factor from the straight rod (the load doubles per
    step, halving the step on a failure).  The centreline is returned at ``n`` equally spaced
    arc-length points, interpolated with the collocation solution's own cubic.

    Reference value (checked in the tests): ``L = 1``, ``r = 5e-3``, ``E = 1e6``, ``rho = 1000``,
    ``g = 9.81`` (``q = rho pi r^2 g = 0.7705 N/m``, ``q L^3 / EI = 1569.6``) hangs with
    ``tip_drop = 0.98500 m`` and ``x(L) = 0.03649 m`` (inextensible); with ``EA = E A`` and
    ``GA = (27/28) (E / 3) A`` the tip drop is ``0.99025 m``.

    Raises ValueError for non-positive ``L``, ``EI``, ``EA``, ``GA`` or ``n < 2``, and when the
    boundary-value solver does not converge.
    """
    L, EI = _positive("L", L), _positive("EI", EI)
    q, F_tip = _finite("q", q), _finite("F_tip", F_tip)
    if int(n) != n or n < 2:
        raise ValueError(f"n (output points) must be an integer >= 2, got {n!r}")
    tol = _positive("tol", tol)
    ea = 0.0 if EA is None else EI / (_positive("EA", EA) * L**2)
    es = 0.0 if GA is None else EI / (_positive("GA", GA) * L**2)
    alpha, beta = q * L**3 / EI, F_tip * L**2 / EI

    sig = np.linspace(0.0, 1.0, 41)
    u = np.zeros((4, sig.size))
    u[2] = sig
    load = abs(alpha) + abs(beta)
    sol = None
    if load > 0.0:
        lam = min(1.0, 1.0 / load)     # first step: a nondimensional load of order one
        step = 2.0
        while True:
            sol = solve_bvp(_elastica_rhs(lam * alpha, lam * beta, ea, es), _elastica_bc, sig, u,
                            tol=tol, max_nodes=max_nodes)
            if sol.success:
                sig, u = sol.x, sol.y
                if lam >= 1.0:
                    break
                lam = min(1.0, lam * step)
            else:
                if step < 1.0 + 1e-3:
                    raise ValueError(
                        f"elastica_cantilever: solve_bvp did not converge at load factor {lam:.4g}"
                        f" of q L^3/EI = {alpha:.4g}, F L^2/EI = {beta:.4g}: {sol.message}")
                lam /= step
                step = math.sqrt(step)
                lam = min(1.0, lam * step)
    s_out = np.linspace(0.0, 1.0, int(n))
    u_out = sol.sol(s_out) if sol is not None else np.vstack(
        (np.zeros_like(s_out), np.zeros_like(s_out), s_out, np.zeros_like(s_out)))
    xs, ys = L * u_out[2], L * u_out[3]
    n_nodes = sol.x.size if sol is not None else 2
    return ElasticaSolution(s=L * s_out, x=xs, y=ys, theta=u_out[0].copy(),
                            moment=EI * u_out[1] / L, tip=(float(xs[-1]), float(ys[-1])),
                            tip_drop=float(-ys[-1]), n_nodes=int(n_nodes))


class EndMomentArc(NamedTuple):
    """Cantilever under a pure end moment: ``curvature`` [1/m] ``= M / B``, ``angle`` [rad]
    ``t = M L / B`` (tip rotation), tip displacement ``u`` [m] along the undeformed rod and
    ``v`` [m] across it (towards the side the moment bends to)."""
    curvature: float
    angle: float
    u: float
    v: float


def end_moment_arc(L: float, B: float, M: float) -> EndMomentArc:
    """Exact large deflection of a cantilever of length ``L`` [m] and bending stiffness ``B``
    [N m^2] under a pure end moment ``M`` [N m] (validation item 3).

    The rod bends into a circular arc of curvature ``M / B``.  With ``t = M L / B``:
    ``u = L (sin t / t - 1)``, ``v = (L / t)(1 - cos t)``; ``t = 2 pi`` closes a full circle
    (``u = -L``, ``v = 0``).  Series forms are used for ``|t| < 1e-4`` (``u = -L t^2 / 6``,
    ``v = L t / 2``).  Exact for the inextensible Euler elastica (the moment is uniform).
    """
    L, B = _positive("L", L), _positive("B", B)
    M = _finite("M", M)
    t = M * L / B
    if abs(t) < 1e-4:
        u = -L * t**2 / 6.0 * (1.0 - t**2 / 20.0)
        v = L * t / 2.0 * (1.0 - t**2 / 12.0)
    else:
        u = L * (math.sin(t) / t - 1.0)
        v = L / t * (1.0 - math.cos(t))
    return EndMomentArc(M / B, t, u, v)


# ------------------------------------------------------------------------------ stability

def _tan_x_equals_x() -> float:
    """First positive root of ``tan x = x`` (4.493409...), on the branch (pi, 3 pi / 2)."""
    return brentq(lambda z: math.sin(z) - z * math.cos(z), math.pi + 1e-9, 1.5 * math.pi - 1e-9,
                  xtol=1e-15)


#: Effective-length factors ``K`` of Euler buckling, ``P = pi^2 E I / (K L)^2``.  The
#: clamped-pinned value is ``pi / z`` with ``z = 4.4934`` the first root of ``tan z = z``
#: (0.6992; often rounded to 0.699 or 0.7).
EFFECTIVE_LENGTH_FACTORS: dict[str, float] = {
    "clamped-free": 2.0,
    "pinned-pinned": 1.0,
    "clamped-clamped": 0.5,
    "clamped-pinned": math.pi / _tan_x_equals_x(),
}


def effective_length_factor(K) -> float:
    """``K`` as a float: a positive number, or one of the names of
    :data:`EFFECTIVE_LENGTH_FACTORS` (``"pinned-clamped"`` etc. accepted in either order, ``_``
    or space for ``-``)."""
    if isinstance(K, str):
        key = K.strip().lower().replace("_", "-").replace(" ", "-")
        if key not in EFFECTIVE_LENGTH_FACTORS and "-" in key:
            a, b = key.split("-", 1)
            key = f"{b}-{a}"
        if key not in EFFECTIVE_LENGTH_FACTORS:
            raise ValueError(f"unknown end conditions {K!r}; known: "
                             f"{', '.join(EFFECTIVE_LENGTH_FACTORS)} (or a number)")
        return EFFECTIVE_LENGTH_FACTORS[key]
    return _positive("K", K)


def euler_buckling_load(E: float, I: float, L: float, K="pinned-pinned") -> float:
    """Euler critical load ``P = pi^2 E I / (K L)^2`` [N] (validation item 4).

    ``E`` [Pa], ``I`` [m^4], ``L`` [m]; ``K`` the effective-length factor, a number or a name:
    ``"clamped-free"`` (2), ``"pinned-pinned"`` (1), ``"clamped-clamped"`` (0.5),
    ``"clamped-pinned"`` (0.6992).  Source: Timoshenko & Gere, ch. 2.
    """
    E, I, L = _positive("E", E), _positive("I", I), _positive("L", L)
    k = effective_length_factor(K)
    return math.pi**2 * E * I / (k * L) ** 2


def michell_critical_twist(B: float, C: float) -> float:
    """Michell's critical total twist ``Gamma_c = 2 pi sqrt(3) B / C`` [rad] of a closed
    isotropic elastic ring (validation item 6): stable below, buckles out of plane above.

    ``B = E I`` and ``C = G J`` [N m^2].  For a circular section with ``G = E / (2 (1 + nu))``,
    ``B / C = 1 + nu``.  Sources: Michell (1889); Goriely (2006).
    """
    B, C = _positive("B", B), _positive("C", C)
    return 2.0 * math.pi * math.sqrt(3.0) * B / C


def greenhill_moment(B: float, L: float) -> float:
    """Greenhill's critical twisting moment [N m] of a rod of length ``L`` [m] clamped at both
    ends, with no axial force (validation item 7): ``M L / B = 2 z = 2.8606 pi``, ``z = 4.4934``
    the first positive root of ``tan z = z``.

    Derivation (Timoshenko & Gere sec. 2.19): the complex transverse deflection obeys
    ``B u'' - i M u' = a + b x``; with ``u = u' = 0`` at both ends the determinant vanishes when
    ``tan(M L / 2B) = M L / 2B``.  (Pinned ends give ``M L / B = 2 pi``.)  The applied twist
    angle relates to the moment as ``angle = M L / C``.
    """
    B, L = _positive("B", B), _positive("L", L)
    return 2.0 * _tan_x_equals_x() * B / L


def plectoneme_onset_tension_moment(B: float, T: float) -> float:
    """Critical twisting moment ``M = sqrt(4 B T)`` [N m] at which a long rod of bending
    stiffness ``B`` [N m^2] under tension ``T`` [N] buckles (``M^2 = 4 B T``; validation
    item 7).  Source: Marko & Siggia (1995); Timoshenko & Gere sec. 2.19 (long-rod limit)."""
    B, T = _positive("B", B), _positive("T", T)
    return 2.0 * math.sqrt(B * T)


# ------------------------------------------------------------------------------ vibration

def cantilever_beta_L(n_modes: int) -> np.ndarray:
    """The first ``n_modes`` roots ``beta_n L`` of ``1 + cos(z) cosh(z) = 0`` (1.87510,
    4.69409, 7.85476, ...), computed with ``brentq`` on ``cos z + 1 / cosh z = 0`` in
    ``[(n - 1) pi, n pi]``; tend to ``(2 n - 1) pi / 2``.  Shape ``(n_modes,)``."""
    if int(n_modes) != n_modes or n_modes < 1:
        raise ValueError(f"n_modes must be an integer >= 1, got {n_modes!r}")

    def f(z):
        return math.cos(z) + (2.0 / (math.exp(z) + math.exp(-z)) if z < 700.0 else 0.0)

    return np.array([brentq(f, (k - 1) * math.pi, k * math.pi, xtol=1e-14)
                     for k in range(1, int(n_modes) + 1)])


def cantilever_frequencies(E: float, I: float, rho: float, A: float, L: float,
                           n_modes: int = 3) -> np.ndarray:
    """Angular frequencies [rad/s], shape ``(n_modes,)``, of the bending modes of an
    Euler-Bernoulli cantilever (validation item 5):
    ``omega_n = (beta_n L)^2 sqrt(E I / (rho A L^4))`` with ``beta_n L`` the roots of
    ``1 + cos cosh = 0`` (:func:`cantilever_beta_L`).

    ``E`` [Pa], ``I`` [m^4], ``rho`` [kg/m^3], ``A`` [m^2], ``L`` [m].  Neglects rotary inertia
    and shear (Rayleigh/Timoshenko corrections of relative order ``(r / L)^2``).
    """
    E, I, rho = _positive("E", E), _positive("I", I), _positive("rho", rho)
    A, L = _positive("A", A), _positive("L", L)
    return cantilever_beta_L(n_modes) ** 2 * math.sqrt(E * I / (rho * A * L**4))


def pendulum_period(L: float, g: float = 9.81, *, amplitude: float = 0.0) -> float:
    """Period [s] of a rigid simple pendulum of length ``L`` [m] in gravity ``g`` [m/s^2]
    (validation item 9).

    Small amplitude: ``T = 2 pi sqrt(L / g)``.  With ``amplitude`` ``theta_0`` [rad] in
    ``[0, pi)``, the exact period ``T = 4 sqrt(L / g) K(m)`` with ``m = sin^2(theta_0 / 2)``
    (``K`` the complete elliptic integral of the first kind; ``T ~ T_0 (1 + theta_0^2 / 16)``).
    """
    L, g = _positive("L", L), _positive("g", g)
    a = _finite("amplitude", amplitude)
    if not 0.0 <= abs(a) < math.pi:
        raise ValueError(f"amplitude must lie in (-pi, pi) rad, got {amplitude!r}")
    return 4.0 * math.sqrt(L / g) * float(ellipk(math.sin(a / 2.0) ** 2))


def hanging_chain_frequency(L: float, g: float = 9.81, mode: int = 1) -> float:
    """Angular frequency [rad/s] of mode ``mode`` of a uniform inextensible chain of length
    ``L`` [m] hanging from one end in gravity ``g`` [m/s^2] (validation item 9):
    ``omega_n = (j_{0,n} / 2) sqrt(g / L)``, ``j_{0,n}`` the zeros of the Bessel function
    ``J0`` (``omega_1 = 1.2024 sqrt(g / L)``).  Source: D. Bernoulli (1733); Timoshenko,
    Young & Weaver."""
    L, g = _positive("L", L), _positive("g", g)
    if int(mode) != mode or mode < 1:
        raise ValueError(f"mode must be an integer >= 1, got {mode!r}")
    return float(jn_zeros(0, int(mode))[-1]) / 2.0 * math.sqrt(g / L)


# ------------------------------------------------------------------------------ catenaries

class Catenary(NamedTuple):
    """Inextensible catenary between supports at equal height, ``span`` apart: parameter
    ``a`` [m] (``H = w a`` for weight ``w`` [N/m]), mid-span ``sag`` [m]; the points ``x`` [m]
    (0 at the left support), their height ``z`` [m] (0 at the supports, negative below) and
    arc length ``s`` [m] from the left support."""
    a: float
    sag: float
    x: np.ndarray
    z: np.ndarray
    s: np.ndarray


def inextensible_catenary(L: float, span: float, x=None) -> Catenary:
    """Inextensible chain of length ``L`` [m] hung between two supports at equal height
    ``span`` [m] apart (validation item 8).

    ``z(x) = a cosh((x - span / 2) / a) - a cosh(span / (2 a))`` with ``a`` solving
    ``L = 2 a sinh(span / (2 a))`` (brentq on ``sinh(u) / u = L / span``, ``u = span / 2a``);
    arc length ``s(x) = a (sinh((x - span / 2) / a) + sinh(span / 2a))``.  ``x`` defaults to
    101 points over ``[0, span]``.  Raises ValueError when ``span >= L`` (the chain cannot
    reach, or hangs straight with infinite tension).  Source: Irvine (1981) ch. 1.
    """
    L, span = _positive("L", L), _positive("span", span)
    if span >= L:
        raise ValueError(f"span = {span} m must be shorter than the chain length L = {L} m")
    ratio = L / span

    def f(u):
        return (math.sinh(u) / u if u > 1e-8 else 1.0 + u * u / 6.0) - ratio

    hi = 1.0
    while f(hi) < 0.0:
        hi *= 2.0
    u = brentq(f, 1e-12, hi, xtol=1e-15, rtol=1e-15)
    a = span / (2.0 * u)
    xs = _points("x", x, span)
    xi = (xs - span / 2.0) / a
    z = a * (np.cosh(xi) - math.cosh(u))
    s = a * (np.sinh(xi) + math.sinh(u))
    return Catenary(a, a * (math.cosh(u) - 1.0), xs, z, s)


class ElasticCatenary(NamedTuple):
    """Elastic catenary: horizontal tension ``H`` [N], vertical support reaction ``V`` [N],
    and at the unstretched arc lengths ``s`` [m] the position ``x`` [m] (from the left
    support) and height ``z`` [m] (0 at the supports, negative below); ``tension`` [N]
    ``= sqrt(H^2 + (w s - V)^2)``."""
    H: float
    V: float
    s: np.ndarray
    x: np.ndarray
    z: np.ndarray
    tension: np.ndarray


def elastic_catenary(L: float, span: float, w: float, EA: float, s=None) -> ElasticCatenary:
    """Elastic cable of unstretched length ``L`` [m], weight ``w`` [N/m] per unstretched length
    and axial stiffness ``EA`` [N] (``math.inf`` for inextensible) hung between supports at
    equal height ``span`` [m] apart (validation item 8).  With ``V = w L / 2``::

        x(s) = H s / EA + (H / w) [asinh((w s - V) / H) + asinh(V / H)]
        z(s) = (w s^2 / 2 - V s) / EA + (sqrt(H^2 + (w s - V)^2) - sqrt(H^2 + V^2)) / w

    ``H`` solves ``x(L) = span`` (brentq on ``H / (w L)``; ``x(L)`` increases monotonically
    with ``H``).  ``s`` defaults to 101 points over ``[0, L]``.  A span longer than ``L`` is
    allowed for finite ``EA`` (the cable is stretched taut); for ``EA = inf`` it raises
    ValueError.  Source: Irvine (1981) ch. 2.
    """
    L, span, w = _positive("L", L), _positive("span", span), _positive("w", w)
    EA = float(EA)
    if not EA > 0.0 or math.isnan(EA):
        raise ValueError(f"EA must be positive (math.inf for inextensible), got {EA!r}")
    if math.isinf(EA) and span >= L:
        raise ValueError(f"span = {span} m must be shorter than the cable length L = {L} m "
                         "for an inextensible cable (EA = inf)")
    c = w * L / EA        # extensibility: weight over axial stiffness

    def f(logh):          # x(L) / L - span / L as a function of log(H / (w L))
        h = math.exp(logh)
        return h * c + 2.0 * h * math.asinh(0.5 / h) - span / L

    lo, hi = -40.0, 0.0
    while f(hi) < 0.0:
        hi += 2.0
        if hi > 80.0:
            raise ValueError(f"elastic_catenary: no horizontal tension reaches span = {span} m")
    if f(lo) > 0.0:
        raise ValueError(f"elastic_catenary: span = {span} m is too short to resolve")
    H = w * L * math.exp(brentq(f, lo, hi, xtol=1e-14, rtol=1e-15))
    V = w * L / 2.0
    ss = _points("s", s, L)
    ws = w * ss - V
    x = H * ss / EA + H / w * (np.arcsinh(ws / H) + math.asinh(V / H))
    tension = np.sqrt(H**2 + ws**2)
    z = (w * ss**2 / 2.0 - V * ss) / EA + (tension - math.sqrt(H**2 + V**2)) / w
    return ElasticCatenary(H, V, ss, x, z, tension)


# ------------------------------------------------------------------------------- springs

def helix_spring_stiffness(G: float, d: float, D: float, n_turns: float) -> float:
    """Axial stiffness [N/m] of a close-coiled helical spring ``k = G d^4 / (8 D^3 n)``
    (validation item 11): shear modulus ``G`` [Pa], wire diameter ``d`` [m], mean coil
    diameter ``D`` [m], ``n_turns`` active turns.  Valid for small pitch angle and
    ``D / d >> 1`` (Wahl's correction is of order ``d / D``).  Source: Wahl (1963)."""
    G, d, D = _positive("G", G), _positive("d", d), _positive("D", D)
    n = _positive("n_turns", n_turns)
    return G * d**4 / (8.0 * D**3 * n)


def helix_self_weight_extension(W: float, k: float) -> float:
    """Extension [m] of a close-coiled spring of stiffness ``k`` [N/m] hanging under its own
    total weight ``W`` [N]: ``W / (2 k)`` (each turn carries the weight below it, so the mean
    load is half the weight; validation item 11, approximate)."""
    W, k = _positive("W", W), _positive("k", k)
    return W / (2.0 * k)
