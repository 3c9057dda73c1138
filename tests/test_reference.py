"""strandlab.reference against independent checks.

Each reference is checked by something that does not share its code path: a published table,
a different numerical method (shooting instead of collocation, finite elements instead of the
characteristic equation, ODE integration instead of an elliptic integral), an asymptotic limit,
or the defining differential equation evaluated by finite differences on the returned shape.
References are given beside each test (see also ../shared/validation.md).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp
from scipy.linalg import eigh, eigh_tridiagonal
from scipy.optimize import brentq

from strandlab import reference as ref

# the heavy cantilever of the PyElastica benchmark: L = 1 m, r = 5 mm, E = 1 MPa, rho = 1000
A5, I5, J5 = ref.circular_section(5e-3)
EI5 = 1e6 * I5
Q5 = 1000.0 * A5 * 9.81


# ------------------------------------------------------------------------ independent tools

def shoot_hanging(alpha: float, beta: float = 0.0, ea: float = 0.0, es: float = 0.0):
    """Tip (x, y) / L of the cantilever (EI = L = 1) by shooting from the free end.

    In ``phi = theta + pi / 2`` (angle from the downward vertical) the tension is
    ``N = P cos(phi)`` and the shear force ``Q = -P sin(phi)``, ``P = alpha (1 - s) + beta``;
    with ``ea = 1 / EA`` and ``es = 1 / GA`` the centreline tangent is
    ``r' = (1 + ea N) (sin phi, -cos phi) + es Q (cos phi, sin phi)`` and ``phi'' = P x'``.
    Start at the tip with ``phi(1) = exp(c)``, ``phi'(1) = 0``, integrate to the clamp and find
    ``c`` with ``phi(0) = pi / 2``.  The log-parametrisation keeps the exponentially small tip
    angle of a heavy rod representable.  DOP853 at rtol 1e-12.
    """
    def rhs(s, u):
        ph = u[0]
        p = alpha * (1.0 - s) + beta
        sn, c = math.sin(ph), math.cos(ph)
        stretch, shear = 1.0 + ea * p * c, -es * p * sn
        dx = stretch * sn + shear * c
        dy = -stretch * c + shear * sn
        return [u[1], p * dx, dx, dy]

    def run(c):
        return solve_ivp(rhs, (1.0, 0.0), [math.exp(c), 0.0, 0.0, 0.0], method="DOP853",
                         rtol=1e-12, atol=1e-14)

    c = brentq(lambda c: run(c).y[0, -1] - math.pi / 2, -80.0, math.log(math.pi / 2),
               xtol=1e-13)
    end = run(c).y[:, -1]
    return -end[2], -end[3]


def bisshopp_drucker(beta: float):
    """Tip (x, y) / L of the cantilever under a tip load ``beta = F L^2 / EI`` from the first
    integral of Bisshopp & Drucker (1945): ``theta'^2 = 2 beta (sin phi0 - sin theta)`` (theta
    downward), ``sqrt(beta) = int_0^phi0 dtheta / sqrt(2 (sin phi0 - sin theta))``,
    ``x / L = sqrt(2 sin phi0 / beta)``.  Quadrature with the (phi0 - theta)^-1/2 weight."""
    def integral(phi0, f):
        # (phi0 - t) / (2 (sin phi0 - sin t)) = 1 / (2 cos((phi0 + t) / 2) sinc((phi0 - t) / 2))
        def g(t):
            v = 0.5 * (phi0 - t)
            sinc = math.sin(v) / v if v > 1e-12 else 1.0
            return f(t) / math.sqrt(2.0 * math.cos(0.5 * (phi0 + t)) * sinc)
        return quad(g, 0.0, phi0, weight="alg", wvar=(0.0, -0.5), epsabs=1e-13, epsrel=1e-13)[0]

    phi0 = brentq(lambda p: integral(p, lambda t: 1.0) - math.sqrt(beta), 1e-6, math.pi / 2 - 1e-3,
                  xtol=1e-14)
    drop = integral(phi0, math.sin) / math.sqrt(beta)
    return math.sqrt(2.0 * math.sin(phi0) / beta), -drop


def hermite_beam(n_el: int, L: float):
    """Unit-property Euler-Bernoulli finite elements (cubic Hermite): stiffness ``K`` (EI = 1),
    consistent mass ``M`` (rho A = 1) and geometric stiffness ``G`` (unit axial compression);
    dofs (w_0, w'_0, w_1, w'_1, ...)."""
    h = L / n_el
    k = np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                  [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]]) / h**3
    m = np.array([[156, 22 * h, 54, -13 * h], [22 * h, 4 * h * h, 13 * h, -3 * h * h],
                  [54, 13 * h, 156, -22 * h], [-13 * h, -3 * h * h, -22 * h, 4 * h * h]]) * h / 420
    g = np.array([[36, 3 * h, -36, 3 * h], [3 * h, 4 * h * h, -3 * h, -h * h],
                  [-36, -3 * h, 36, -3 * h], [3 * h, -h * h, -3 * h, 4 * h * h]]) / (30 * h)
    nd = 2 * (n_el + 1)
    K, M, G = np.zeros((nd, nd)), np.zeros((nd, nd)), np.zeros((nd, nd))
    for e in range(n_el):
        sl = slice(2 * e, 2 * e + 4)
        K[sl, sl] += k
        M[sl, sl] += m
        G[sl, sl] += g
    return K, M, G


def keep(nd: int, fixed) -> np.ndarray:
    return np.array([i for i in range(nd) if i not in {f % nd for f in fixed}])


# ------------------------------------------------------------------- sections and stretch

def test_circular_section_and_axial_stretch():
    A, I, J = ref.circular_section(0.025)
    assert A == pytest.approx(1.9634954e-3, rel=1e-7)          # pi 0.025^2
    assert I == pytest.approx(3.0679616e-7, rel=1e-7) and J == pytest.approx(2 * I)
    # item 1: L = 1, r = 0.025, E = 1e4, F = 1 -> dL = 1 / 19.635 = 0.050929 m
    dl = ref.axial_stretch(1.0, 1e4, A, 1.0)
    assert dl == pytest.approx(1.0 / (1e4 * A), rel=1e-12)
    dl_big = ref.axial_stretch(1.0, 1e4, A, 1.0, large_strain=True)
    l = 1.0 + dl_big    # the large-strain law F = E A (l - L) / l holds exactly
    assert 1e4 * A * (l - 1.0) / l == pytest.approx(1.0, rel=1e-12)


# ------------------------------------------------------------- small-deflection cantilevers

def test_cantilever_tip_load_shape_satisfies_the_beam_equation():
    # item 2: L = 1, r = 0.02, E = 1e6, F = 7.5e-3 -> delta = F L^3 / 3EI = 0.0199 (2% of L)
    _, I, _ = ref.circular_section(0.02)
    EI, F = 1e6 * I, 7.5e-3
    d = ref.cantilever_tip_load(1.0, EI, F, x=np.linspace(0.0, 1.0, 2001))
    assert d.tip == pytest.approx(0.019894, rel=1e-4)
    assert d.w[-1] == pytest.approx(d.tip, rel=1e-12) and d.w[0] == 0.0
    # EI w'' = F (L - x): second differences are exact for the cubic up to rounding
    h = d.x[1] - d.x[0]
    w2 = (d.w[2:] - 2 * d.w[1:-1] + d.w[:-2]) / h**2
    assert np.allclose(EI * w2, F * (1.0 - d.x[1:-1]), rtol=0, atol=1e-7 * F)
    # clamped slope, second-order one-sided difference: error h^2 F / (3 EI) ~ 5e-9
    assert (-3 * d.w[0] + 4 * d.w[1] - d.w[2]) / (2 * h) == pytest.approx(0.0, abs=1e-7)


def test_cantilever_self_weight_shape_satisfies_the_beam_equation():
    q, EI, L = 0.77, 5e-4, 0.8
    d = ref.cantilever_self_weight(L, EI, q, x=np.linspace(0.0, L, 2001))
    assert d.tip == pytest.approx(q * L**4 / (8 * EI), rel=1e-12) == d.w[-1]
    h = d.x[1] - d.x[0]
    w2 = (d.w[2:] - 2 * d.w[1:-1] + d.w[:-2]) / h**2
    # EI w'' = q (L - x)^2 / 2, second differences of a quartic: error q h^2 / 12 EI
    assert np.allclose(EI * w2, q * (L - d.x[1:-1]) ** 2 / 2, rtol=0, atol=q * h**2)


# ---------------------------------------------------------------------- planar elastica

def test_elastica_small_load_is_the_linear_beam():
    # q L^3 / EI = 0.01: geometric nonlinearity of relative order (delta / L)^2 ~ 2e-6
    L, EI = 1.3, 0.7
    q = 0.01 * EI / L**3
    sol = ref.elastica_cantilever(L, EI, q, n=51)
    lin = ref.cantilever_self_weight(L, EI, q, x=sol.x)
    assert sol.tip_drop == pytest.approx(q * L**4 / (8 * EI), rel=1e-4)
    assert np.allclose(-sol.y, lin.w, rtol=0, atol=1e-4 * lin.tip)
    F = 1e-3 * EI / L**2
    tip = ref.elastica_cantilever(L, EI, 0.0, F)
    assert tip.tip_drop == pytest.approx(F * L**3 / (3 * EI), rel=1e-5)
    # bending moment M = EI theta' = -F (x_L - x) [N m]
    assert np.allclose(tip.moment, -F * (tip.tip[0] - tip.x), rtol=0, atol=1e-6 * F * L)


@pytest.mark.parametrize("beta", [1.0, 2.0, 10.0])
def test_elastica_tip_load_matches_bisshopp_drucker(beta):
    # quadrature of the first integral, tol 1e-7 (BVP tol 1e-8 on the residual)
    sol = ref.elastica_cantilever(2.0, 3.0, 0.0, beta * 3.0 / 4.0)
    x, y = bisshopp_drucker(beta)
    assert sol.tip[0] / 2.0 == pytest.approx(x, abs=1e-7)
    assert sol.tip[1] / 2.0 == pytest.approx(y, abs=1e-7)


def test_elastica_tip_load_table_of_bisshopp_drucker():
    # Bisshopp & Drucker (1945), F L^2 / EI = 1: vertical 0.30172 L, horizontal 1 - 0.05643 L
    sol = ref.elastica_cantilever(1.0, 1.0, 0.0, 1.0)
    assert sol.tip_drop == pytest.approx(0.30172, abs=1e-5)
    assert sol.tip[0] == pytest.approx(1.0 - 0.05643, abs=1e-5)


@pytest.mark.parametrize("alpha, beta", [(50.0, 0.0), (20.0, 3.0), (Q5 / EI5, 0.0)])
def test_elastica_distributed_load_matches_shooting(alpha, beta):
    # shooting from the tip with DOP853 at rtol 1e-12 against collocation at tol 1e-8
    sol = ref.elastica_cantilever(1.0, 1.0, alpha, beta)
    x, y = shoot_hanging(alpha, beta)
    assert sol.tip[0] == pytest.approx(x, abs=1e-8)
    assert sol.tip[1] == pytest.approx(y, abs=1e-8)


def test_elastica_heavy_benchmark_rod():
    # L = 1, r = 5 mm, E = 1e6, rho = 1000, g = 9.81: tip drop 0.9850 m (4 digits)
    sol = ref.elastica_cantilever(1.0, EI5, Q5)
    assert sol.tip_drop == pytest.approx(0.98500, abs=1e-5)
    assert sol.tip[0] == pytest.approx(0.036486, abs=1e-6)
    # converged in the solver tolerance: 1e-5 -> 1e-8 moves the tip by < 1e-8 m
    coarse = ref.elastica_cantilever(1.0, EI5, Q5, tol=1e-5)
    assert abs(coarse.tip_drop - sol.tip_drop) < 1e-8 and coarse.n_nodes < sol.n_nodes
    # boundary-layer asymptotics (ell = sqrt(EI / qL) = 0.0252 << L): x_tip -> sqrt(2) ell,
    # L - drop -> (2 - sqrt(2)) ell, corrections O(ell^2 / L) ~ 1e-3
    ell = math.sqrt(EI5 / Q5)
    assert sol.tip[0] == pytest.approx(math.sqrt(2) * ell, abs=2e-3)
    assert sol.tip_drop == pytest.approx(1.0 - (2 - math.sqrt(2)) * ell, abs=1e-3)
    # inextensible: the centreline has unit speed; theta(0) = 0 and the tip moment vanishes
    ds = np.hypot(np.diff(sol.x), np.diff(sol.y))
    assert ds.sum() == pytest.approx(1.0, abs=1e-3)           # polyline chord < arc length
    assert sol.theta[0] == 0.0 and abs(sol.moment[-1]) < 1e-8 * Q5


def test_elastica_shear_compliance_at_small_load_is_timoshenko():
    # linear Timoshenko cantilever: tip load F L^3 / 3EI + F L / GA, weight q L^4 / 8EI +
    # q L^2 / 2GA; loads of 1e-4 EI / L^2 keep the geometric correction below 1e-8 relative
    L, EI, GA, EA = 1.5, 2.0, 40.0, 100.0
    F = 1e-4 * EI / L**2
    tip = ref.elastica_cantilever(L, EI, 0.0, F, EA=EA, GA=GA)
    assert tip.tip_drop == pytest.approx(F * L**3 / (3 * EI) + F * L / GA, rel=1e-6)
    q = 1e-4 * EI / L**3
    heavy = ref.elastica_cantilever(L, EI, q, EA=EA, GA=GA)
    assert heavy.tip_drop == pytest.approx(q * L**4 / (8 * EI) + q * L**2 / (2 * GA), rel=1e-6)


@pytest.mark.parametrize("ea, es", [(1e-4, 0.0), (1e-4, 3e-4)])
def test_elastica_extensible_shearable_matches_shooting(ea, es):
    # the benchmark rod's load (q L^3 / EI = 1570) with axial / shear compliance EI / (EA L^2)
    # ~ 1e-4: strains up to 15% / 45%; shooting at rtol 1e-12 against collocation at tol 1e-8
    alpha = Q5 / EI5
    sol = ref.elastica_cantilever(1.0, 1.0, alpha, EA=1.0 / ea if ea else None,
                                  GA=1.0 / es if es else None)
    x, y = shoot_hanging(alpha, 0.0, ea, es)
    assert sol.tip[0] == pytest.approx(x, abs=1e-8)
    assert sol.tip[1] == pytest.approx(y, abs=1e-8)
    base = ref.elastica_cantilever(1.0, 1.0, alpha)
    if ea:   # stretch of a rod hanging nearly straight: ~ q L^2 / 2EA less the bent root
        assert sol.tip_drop - base.tip_drop == pytest.approx(alpha * ea / 2, rel=0.1)


def test_elastica_no_load_and_upward_load():
    flat = ref.elastica_cantilever(1.0, 1.0)
    assert flat.tip == (1.0, 0.0)
    up = ref.elastica_cantilever(1.0, 1.0, 0.0, -2.0)
    down = ref.elastica_cantilever(1.0, 1.0, 0.0, 2.0)
    assert up.tip[1] == pytest.approx(-down.tip[1], abs=1e-10)


# ------------------------------------------------------------------------- end moment arc

def test_end_moment_arc_against_quadrature():
    L, B = 0.7, 2.0
    for M in (0.3, 5.0, -4.0):
        arc = ref.end_moment_arc(L, B, M)
        k = M / B
        x = quad(lambda s, k=k: math.cos(k * s), 0, L, epsabs=1e-14)[0]
        y = quad(lambda s, k=k: math.sin(k * s), 0, L, epsabs=1e-14)[0]
        assert arc.u == pytest.approx(x - L, abs=1e-12)
        assert arc.v == pytest.approx(y, abs=1e-12)
    circle = ref.end_moment_arc(1.0, 1.0, 2 * math.pi)       # t = 2 pi closes the circle
    assert circle.u == pytest.approx(-1.0, abs=1e-12) and circle.v == pytest.approx(0, abs=1e-12)
    # series branch continuous with the closed form at the switch |t| = 1e-4
    a, b = ref.end_moment_arc(1.0, 1.0, 0.99999e-4), ref.end_moment_arc(1.0, 1.0, 1.00001e-4)
    assert a.v == pytest.approx(b.v, rel=1e-4) and a.u == pytest.approx(b.u, rel=1e-3)


# ---------------------------------------------------------------------------- stability

@pytest.mark.parametrize("name, fixed, K", [
    ("clamped-free", (0, 1), 2.0),
    ("pinned-pinned", (0, -2), 1.0),
    ("clamped-clamped", (0, 1, -2, -1), 0.5),
    ("clamped-pinned", (0, 1, -2), 0.699),
])
def test_euler_buckling_against_finite_elements(name, fixed, K):
    # 40 cubic Hermite elements: buckling loads converge as h^2 from above, error < 1e-4 here
    E, I, L = 2e9, 3e-10, 0.9
    Kel, _, G = hermite_beam(40, L)
    idx = keep(Kel.shape[0], fixed)
    p_fe = eigh(E * I * Kel[np.ix_(idx, idx)], G[np.ix_(idx, idx)], eigvals_only=True)
    p_fe = min(p_fe[p_fe > 0])
    p = ref.euler_buckling_load(E, I, L, name)
    assert p == pytest.approx(p_fe, rel=1e-4)
    assert ref.effective_length_factor(name) == pytest.approx(K, abs=5e-4)   # tabulated
    assert p == pytest.approx(ref.euler_buckling_load(E, I, L, ref.effective_length_factor(name)))
    assert ref.euler_buckling_load(E, I, L, "pinned_clamped") == ref.euler_buckling_load(
        E, I, L, "clamped-pinned")


def test_greenhill_moment_is_the_first_root_of_the_clamped_determinant():
    # Timoshenko & Gere 2.19: u = A e^{i mu s} + D + a s + b s^2 (L = 1), u = u' = 0 at both ends
    def bc_matrix(mu):
        e = np.exp(1j * mu)
        return np.array([[1, 1, 0, 0], [1j * mu, 0, 1, 0], [e, 1, 1, 1], [1j * mu * e, 0, 1, 2]])

    mu_c = ref.greenhill_moment(1.0, 1.0)
    assert mu_c / math.pi == pytest.approx(2.861, abs=5e-4)            # tabulated 2.861 pi
    # det ~ mu^4 / 12 as mu -> 0 (the basis degenerates, not a mode): scale it out
    scaled = [abs(np.linalg.det(bc_matrix(m))) / m**4 for m in np.linspace(0.05, 0.98 * mu_c, 400)]
    assert abs(np.linalg.det(bc_matrix(mu_c))) / mu_c**4 < 1e-12
    assert min(scaled) > 1e-4                                         # no smaller root
    assert ref.greenhill_moment(3.0, 2.0) == pytest.approx(mu_c * 3.0 / 2.0)


def test_michell_and_plectoneme():
    nu, E = 0.3, 1e6
    G = E / (2 * (1 + nu))
    # circular section: B / C = E I / (G J) = 1 + nu
    assert ref.michell_critical_twist(E * I5, G * J5) == pytest.approx(
        2 * math.pi * math.sqrt(3) * (1 + nu), rel=1e-12)
    assert ref.michell_critical_twist(1.0, 1.0) == pytest.approx(10.8828, abs=1e-4)
    M = ref.plectoneme_onset_tension_moment(2.0, 0.5)
    assert M**2 == pytest.approx(4 * 2.0 * 0.5)


# ----------------------------------------------------------------------------- vibration

def test_cantilever_frequencies_against_table_and_finite_elements():
    bl = ref.cantilever_beta_L(6)
    assert bl[:2] == pytest.approx([1.8751, 4.6941], abs=5e-5)      # tabulated (item 5)
    assert bl[5] == pytest.approx(11 * math.pi / 2, rel=1e-6)        # (2n - 1) pi / 2
    E, rho, L = 1e6, 1000.0, 1.0
    omega = ref.cantilever_frequencies(E, I5, rho, A5, L, 3)
    # 40 Hermite elements with consistent mass: the third mode converges from above, 1.0e-6
    Kel, M, _ = hermite_beam(40, L)
    idx = keep(Kel.shape[0], (0, 1))
    w2 = eigh(E * I5 * Kel[np.ix_(idx, idx)], rho * A5 * M[np.ix_(idx, idx)], eigvals_only=True)
    assert omega == pytest.approx(np.sqrt(w2[:3]), rel=3e-6)


def test_pendulum_period_against_integration():
    L, g = 0.7, 9.81
    assert ref.pendulum_period(L, g) == pytest.approx(2 * math.pi * math.sqrt(L / g), rel=1e-14)
    for a in (0.3, 2.0):
        # time from rest at amplitude a to the bottom is a quarter period (RK45 rtol 1e-11)
        ev = lambda t, u: u[0]  # noqa: E731
        ev.terminal = True
        s = solve_ivp(lambda t, u: [u[1], -g / L * math.sin(u[0])], (0, 10), [a, 0.0],
                      events=ev, rtol=1e-11, atol=1e-13)
        assert 4 * s.t_events[0][0] == pytest.approx(ref.pendulum_period(L, g, amplitude=a),
                                                     rel=1e-8)


def test_hanging_chain_against_table_and_finite_differences():
    L, g = 1.3, 9.81
    assert ref.hanging_chain_frequency(L, g) / math.sqrt(g / L) == pytest.approx(1.2024,
                                                                                 abs=5e-5)
    # omega^2 u = -g (x u')' with x from the free end, u(L) = 0; finite volumes on 600 cells,
    # second order: error ~ 1e-5 for the first two modes
    n = 600
    h = L / n
    xm = (np.arange(n) + 0.5) * h                      # flux points between the nodes 0..n
    diag = g * xm / h                                 # node n is fixed
    diag[1:] += g * xm[:-1] / h
    off = -g * xm[:-1] / h
    mass = np.full(n, h)
    mass[0] = h / 2
    m = 1.0 / np.sqrt(mass)                           # symmetric scaling M^-1/2 K M^-1/2
    w2 = eigh_tridiagonal(diag * m * m, off * m[1:] * m[:-1], eigvals_only=True,
                          select="i", select_range=(0, 1))
    ours = [ref.hanging_chain_frequency(L, g, mode=m) for m in (1, 2)]
    assert ours == pytest.approx(np.sqrt(w2), rel=2e-5)


# ---------------------------------------------------------------------------- catenaries

def test_inextensible_catenary_closes_and_has_the_right_length():
    L, span = 1.0, 0.8
    c = ref.inextensible_catenary(L, span, x=np.linspace(0.0, span, 20001))
    assert c.z[0] == pytest.approx(0, abs=1e-14) and c.z[-1] == pytest.approx(0, abs=1e-14)
    assert c.s[-1] == pytest.approx(L, rel=1e-13)
    # polyline length of the returned shape: chord error ~ L (h kappa)^2 / 24 < 1e-9
    assert np.hypot(np.diff(c.x), np.diff(c.z)).sum() == pytest.approx(L, abs=1e-8)
    assert -c.z.min() == pytest.approx(c.sag, rel=1e-12)
    # nearly taut: sag -> sqrt(3 span (L - span) / 8) (parabola)
    t = ref.inextensible_catenary(1.0, 0.9999)
    assert t.sag == pytest.approx(math.sqrt(3 * 0.9999 * 1e-4 / 8), rel=1e-3)


def test_elastic_catenary_geometry_and_stretch():
    L, span, w, EA = 1.0, 0.8, 2.0, 50.0
    c = ref.elastic_catenary(L, span, w, EA, s=np.linspace(0.0, L, 20001))
    assert c.x[-1] == pytest.approx(span, rel=1e-12)
    assert c.z[-1] == pytest.approx(0.0, abs=1e-12) and c.z[0] == 0.0
    assert c.V == pytest.approx(w * L / 2)
    # stretched length = L + int T / EA ds (chord error < 1e-9; trapezoid on T ~ 1e-10)
    stretched = np.hypot(np.diff(c.x), np.diff(c.z)).sum()
    assert stretched == pytest.approx(L + np.trapezoid(c.tension, c.s) / EA, abs=1e-8)
    # the tangent is along the force (H, w s - V) everywhere
    dx, dz = np.diff(c.x), np.diff(c.z)
    sm = 0.5 * (c.s[1:] + c.s[:-1])
    assert np.allclose(dz / dx, (w * sm - c.V) / c.H, atol=1e-6)
    # stiff limit: the inextensible catenary, H = w a
    stiff = ref.elastic_catenary(L, span, w, 1e12 * w * L, s=np.linspace(0, L, 5))
    inex = ref.inextensible_catenary(L, span)
    assert stiff.H == pytest.approx(w * inex.a, rel=1e-9)
    assert -stiff.z[2] == pytest.approx(inex.sag, rel=1e-9)
    assert ref.elastic_catenary(L, span, w, math.inf).H == pytest.approx(w * inex.a, rel=1e-12)
    taut = ref.elastic_catenary(L, 1.05, w, EA)                       # span > L: stretched
    assert taut.x[-1] == pytest.approx(1.05) and taut.H > 0


# ------------------------------------------------------------------------------- springs

def test_helix_spring_from_wire_torsion():
    # the wire (length pi D n) is twisted by T = F D / 2: delta = (D / 2) T (pi D n) / (G J)
    G, d, D, n = 8e10, 1e-3, 1e-2, 12
    _, _, J = ref.circular_section(d / 2)
    F = 1.0
    delta = (D / 2) * (F * D / 2) * math.pi * D * n / (G * J)
    k = ref.helix_spring_stiffness(G, d, D, n)
    assert k == pytest.approx(F / delta, rel=1e-12)
    assert ref.helix_self_weight_extension(0.3, k) == pytest.approx(0.15 / k)


# ------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("call, match", [
    (lambda: ref.cantilever_tip_load(0.0, 1.0, 1.0), "L must be"),
    (lambda: ref.cantilever_self_weight(1.0, -1.0, 1.0), "EI must be"),
    (lambda: ref.elastica_cantilever(1.0, 0.0, 1.0), "EI must be"),
    (lambda: ref.elastica_cantilever(1.0, 1.0, 1.0, EA=-2.0), "EA must be"),
    (lambda: ref.elastica_cantilever(1.0, 1.0, math.nan), "q must be finite"),
    (lambda: ref.elastica_cantilever(1.0, 1.0, 1.0, n=1), "n .output points"),
    (lambda: ref.elastica_cantilever(1.0, 1.0, 100.0, max_nodes=5), "did not converge"),
    (lambda: ref.euler_buckling_load(1.0, 1.0, 1.0, "free-free"), "unknown end conditions"),
    (lambda: ref.euler_buckling_load(1.0, 1.0, 1.0, 0.0), "K must be"),
    (lambda: ref.cantilever_frequencies(1.0, 1.0, 0.0, 1.0, 1.0), "rho must be"),
    (lambda: ref.cantilever_beta_L(0), "n_modes"),
    (lambda: ref.inextensible_catenary(1.0, 1.2), "shorter than the chain"),
    (lambda: ref.elastic_catenary(1.0, 1.2, 1.0, math.inf), "shorter than the cable"),
    (lambda: ref.elastic_catenary(1.0, 0.5, 1.0, 0.0), "EA must be positive"),
    (lambda: ref.elastic_catenary(1.0, 0.5, -1.0, 1.0), "w must be"),
    (lambda: ref.pendulum_period(1.0, amplitude=4.0), "amplitude"),
    (lambda: ref.hanging_chain_frequency(1.0, mode=0), "mode"),
    (lambda: ref.axial_stretch(1.0, 1.0, 1.0, 2.0, large_strain=True), "below E A"),
    (lambda: ref.michell_critical_twist(1.0, 0.0), "C must be"),
    (lambda: ref.greenhill_moment(-1.0, 1.0), "B must be"),
    (lambda: ref.plectoneme_onset_tension_moment(1.0, -1.0), "T must be"),
    (lambda: ref.helix_spring_stiffness(1.0, 1.0, 1.0, 0.0), "n_turns must be"),
])
def test_bad_input_raises_value_error_naming_the_item(call, match):
    with pytest.raises(ValueError, match=match):
        call()
