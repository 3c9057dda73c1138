"""Verification of discrete elastic rods: instabilities.  Euler buckling of a cantilever,
Michell's instability of a twisted ring, Greenhill's instability of a rod twisted between two
clamps (validation.md items 4, 6, 7; references in strandlab.reference).

Method.  The critical load or twist is where the rod's equilibrium stops being a minimum: the
smallest eigenvalue of the Hessian of the elastic energy over the free coordinates (exact
Hessian, with the reference frames carried by time-parallel transport, so the second
variation) at the unbuckled equilibrium crosses zero.  It is located by Brent's method to 1e-7
relative; the straight (or circular) equilibrium is found by ``DERSolver.equilibrium`` under
the load.  This is robust where a perturbed static solve is not (Newton, with its shift on
indefinite matrices, can settle on the unstable equilibrium, and the buckled branch of a
twisted ring is subcritical).  Dynamic checks confirm that a small perturbation decays below
the threshold and grows above it.  Figures: docs/der.md, "Verification".
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from der_verify import (
    both_clamped_x,
    cantilever,
    exact_settings,
    lowest_eigenvalues,
    material,
    observed_order,
    straight,
)
from scipy.optimize import brentq

import strandlab as sl
from strandlab.der import DERSettings, DERSolver
from strandlab.reference import euler_buckling_load, greenhill_moment, michell_critical_twist

L = 1.0


# ------------------------------------------------------------------ 4. Euler buckling
def buckling_load(n, mat, *, stiff_stretch=1e3):
    """Critical axial tip load [N] of a clamped-free rod of ``n`` edges: the load at which the
    smallest eigenvalue of the reduced Hessian at the compressed straight equilibrium is zero.
    Stretching ``stiff_stretch`` times E A (the reference is inextensible; with E A itself the
    pre-compression ``P / E A = 2.5e-4`` raises the load by that fraction)."""
    P = np.zeros(3)
    sol = cantilever(n, mat, tip_force=lambda t: P, settings=exact_settings(),
                     options={"stretch_stiffness": stiff_stretch * mat.young_modulus * mat.area})
    B = mat.stiffness[0]
    ref = math.pi ** 2 * B / (2.0 * L) ** 2

    def lowest(p):
        P[:] = (-p, 0.0, 0.0)
        st = sol.state()
        info = sol.equilibrium(st)
        assert info.converged, (n, p, info.residual)
        return lowest_eigenvalues(sol, st, 1)[0]

    return brentq(lowest, 0.5 * ref, 1.5 * ref, xtol=1e-7 * ref)


def test_euler_buckling_load_of_a_cantilever():
    # validation.md item 4: P = pi^2 E I / (K L)^2 with K = 2 (clamped-free).  Compressive
    # dead load on the tip vertex.  Measured errors -2.3e-3, -5.4e-4, -1.3e-4 (10, 20, 40
    # edges; -3.2e-5 at 80): within 2% from 10 edges, order 2.0.
    mat = material(radius=0.02)
    ref = euler_buckling_load(mat.young_modulus, mat.second_moments[0], L, "clamped-free")
    ns = (10, 20, 40)
    err = np.array([buckling_load(n, mat) / ref - 1.0 for n in ns])
    assert np.all(np.abs(err) < 0.02), err
    order = observed_order(ns, err)
    assert np.all((order > 1.9) & (order < 2.1)), (err, order)


def test_buckling_load_includes_the_pre_compression_of_an_extensible_rod():
    # With the material's own E A, the critical load exceeds the inextensible Euler load by
    # about the compressive strain P / E A (2.47e-4): the difference between the two models at
    # 40 edges is measured 2.46e-4 of the load.
    mat = material(radius=0.02)
    ref = euler_buckling_load(mat.young_modulus, mat.second_moments[0], L, "clamped-free")
    d = (buckling_load(40, mat, stiff_stretch=1.0) - buckling_load(40, mat)) / ref
    strain = ref / (mat.young_modulus * mat.area)
    assert 0.8 * strain < d < 1.3 * strain, (d, strain)


# ------------------------------------------------------------------ 6. Michell's instability
def twisted_ring(n, mat, gamma, *, radius=0.2, perturbation=0.0, settings=None):
    """A naturally straight closed rod of ``n`` vertices bent into a circle of ``radius`` [m]
    (explicit zero rest curvature) with the total excess twist ``gamma`` [rad] spread evenly
    (rest twist ``-gamma / n`` per stencil, the edge angles zero), optionally displaced out of
    plane by ``perturbation * radius * cos(2 phi)`` (Michell's mode)."""
    phi = 2.0 * math.pi * np.arange(n) / n
    flat = np.stack([radius * np.cos(phi), radius * np.sin(phi), 0.0 * phi], axis=1)
    pts = flat.copy()
    pts[:, 2] = perturbation * radius * np.cos(2.0 * phi)
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_strand(pts, rest_points=flat, closed=True, material=mat,
                 options={"der": {"rest_curvature": np.zeros((n, 4)),
                                  "rest_twist": np.full(n, -gamma / n)}})
    return DERSolver(b.build(), settings)


def michell_ratio(n, mat):
    """Critical twist of the discrete ring over Michell's Gamma_c: where the smallest
    eigenvalue of the Hessian beyond its 7 null modes (3 translations, 3 rotations, one
    uniform turn of all edge angles) crosses zero."""
    gc = michell_critical_twist(mat.stiffness[0], mat.stiffness[2])
    model = twisted_ring(n, mat, gc).model       # compiled once; the rest twist is swapped

    def lowest(ratio):
        sol = DERSolver(dataclasses.replace(model, rest_twist=np.full(n, -ratio * gc / n)),
                        exact_settings())
        st = sol.state()
        info = sol.equilibrium(st)
        assert info.converged, (n, ratio, info.residual)
        ev = lowest_eigenvalues(sol, st, 9)
        return np.sort(ev[np.argsort(np.abs(ev))][7:])[0]

    return brentq(lowest, 0.5, 2.0, xtol=1e-7)


def test_michell_critical_twist_converges():
    # validation.md item 6: Gamma_c = 2 pi sqrt(3) B / C (= 16.32 rad for nu = 0.5).  Ring of
    # radius 0.2 m, r = 0.01.  Measured discrete critical twist / Gamma_c - 1: 8.1e-2, 1.9e-2,
    # 4.6e-3 (20, 40, 80 vertices; 0.37 at 10), orders 2.06, 2.08.
    mat = material(radius=0.01)
    ns = (20, 40, 80)
    err = np.array([michell_ratio(n, mat) - 1.0 for n in ns])
    order = observed_order(ns, err)
    assert np.all((order > 1.9) & (order < 2.3)), (err, order)
    assert np.all(err > 0) and err[1] < 0.025 and err[2] < 0.006, err


def _out_of_plane_growth(n, mat, ratio, *, steps, dt=0.01):
    gc = michell_critical_twist(mat.stiffness[0], mat.stiffness[2])
    sol = twisted_ring(n, mat, ratio * gc, perturbation=1e-4)
    st = sol.state()
    z0 = np.ptp(sol.output(st).positions[:, 2])
    amp = []
    for _ in range(steps):
        sol.step(st, st, dt)
        amp.append(np.ptp(sol.output(st).positions[:, 2]))
    return np.array(amp) / z0


def test_michell_ring_is_stable_below_and_buckles_above():
    # Dynamics (backward Euler, dt = 0.01 s, 2.5 s; closed strands take the sparse solver):
    # with 40 vertices (discrete threshold 1.019 Gamma_c) an out-of-plane perturbation of
    # 1e-4 of the radius never exceeds its initial size at 0.9 Gamma_c, and grows
    # exponentially at 1.1 Gamma_c (measured: largest ratio 0.98 below; above, 2.3 times per
    # 0.25 s, 970 times after 2.5 s).
    mat = material(radius=0.01)
    below = _out_of_plane_growth(40, mat, 0.9, steps=250)
    above = _out_of_plane_growth(40, mat, 1.1, steps=250)
    assert below.max() < 1.0, below.max()
    assert above[-1] > 30.0, above[-1]
    assert np.all(above[100::25][1:] > above[100::25][:-1])     # still growing


# ------------------------------------------------------------------ 7. Greenhill
def greenhill_ratio(n, mat):
    """Critical end rotation of a straight rod clamped at both ends (first and last edges
    across the clamps, 1 m apart), one end turned about the axis, over Greenhill's
    ``M_c L / C`` with ``M_c L / B = 2.8606 pi``.  The turned clamp holds its edge's angle;
    the equilibrium (uniform twist) is found from a linear guess."""
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    s = b.add_strand(straight(both_clamped_x(n, L)), material=mat)
    b.attach_to_frame(s, b.add_frame(), end=0)
    b.attach_to_frame(s, b.add_frame(), end=-1)
    sol = DERSolver(b.build(), DERSettings(hessian="exact"))
    m = sol.model
    angle_c = greenhill_moment(mat.stiffness[0], L) * L / mat.stiffness[2]

    def lowest(ratio):
        st = sol.state()
        st.q[m.edge_dof] = np.linspace(0.0, ratio * angle_c, m.n_edges)
        info = sol.equilibrium(st)
        assert info.converged, (n, ratio, info.residual)
        assert abs(st.q[m.edge_dof[-1]] - ratio * angle_c) < 1e-12     # the clamp held
        return lowest_eigenvalues(sol, st, 1)[0]

    return brentq(lowest, 0.5, 2.0, xtol=1e-7)


def test_greenhill_onset_converges():
    # validation.md item 7: clamped-clamped rod, no tension, buckles at M L / B = 2.861 pi,
    # end rotation M L / C (13.48 rad for B / C = 1.5).  Measured critical rotation / reference
    # - 1: 9.8e-2, 2.0e-2, 4.7e-3 (10, 20, 40 edges), orders 2.3, 2.1; 1.1e-3 at 80 (slow).
    mat = material(radius=0.01)
    ns = (10, 20, 40)
    err = np.array([greenhill_ratio(n, mat) - 1.0 for n in ns])
    order = observed_order(ns, err)
    assert np.all((order > 1.9) & (order < 2.4)), (err, order)
    assert np.all(err > 0) and err[1] < 0.03 and err[2] < 0.006, err


def test_greenhill_onset_by_turning_the_clamp_frame():
    # The same instability reached as a user would: the end clamp's frame turns about the rod
    # (angular velocity 12 rad/s, mass damping 20 / s, dt = 0.01 s) through 0.9 and 1.1 times
    # the critical rotation (almost two turns: the held angle must follow the frame across
    # the +-pi branch cut), then the equilibrium of the driven state.  Below, the rod is a
    # minimum (smallest eigenvalue > 0); above, the straight rod is unstable.  Reference:
    # greenhill_moment, discrete threshold 1.020 at 20 edges.
    n = 20
    mat = material(radius=0.01)
    angle_c = greenhill_moment(mat.stiffness[0], L) * L / mat.stiffness[2]
    for ratio, stable in ((0.9, True), (1.1, False)):
        b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
        s = b.add_strand(straight(both_clamped_x(n, L)), material=mat)
        b.attach_to_frame(s, b.add_frame(), end=0)
        w = 12.0
        turn = b.add_frame(origin=(L, 0.0, 0.0), angular_velocity=(w, 0.0, 0.0),
                           stop=ratio * angle_c / w)
        b.attach_to_frame(s, turn, end=-1)
        sol = DERSolver(b.build(), DERSettings(damping=20.0, hessian="exact"))
        m = sol.model
        st = sol.state()
        for _ in range(150):
            sol.step(st, st, 0.01)
        theta = st.q[m.edge_dof]
        assert abs(theta[-1] - theta[0] - ratio * angle_c) < 1e-9, (ratio, theta[-1])
        info = sol.equilibrium(st)
        assert info.converged
        assert (lowest_eigenvalues(sol, st, 1)[0] > 0.0) == stable, ratio


@pytest.mark.slow
def test_greenhill_onset_at_80_edges():
    mat = material(radius=0.01)
    err = greenhill_ratio(80, mat) - 1.0
    assert 0.0 < err < 0.0015, err
