"""The experiments of Takahashi and Batty's sections 5.1, 5.3, 5.4 and 5.5 with measured
assertions: a vertical strand (only rest lengths change), a horizontal strand at four bending
stiffnesses (only rest curvatures change; the softest is held by the box), an extra load on the
tip, a high-resolution strand with and without rest twist.

"Stays in place": the largest vertex displacement over 5 s of DER simulation (clamped root,
gravity, default DER settings: one Newton iteration per step, dt = 1/60 s) is under 1e-3 of
the strand length; the same strand with its input shape as rest shape sags by more than 1e-2 of
its length (or, for the stiff vertical strand, 1e3 times more than the sag-free one); the
measured figures are printed with ``-s``."""
import numpy as np
import pytest
from strand_shapes import max_displacement

import strandlab as sl
from strandlab.inverse import SagFreeSettings, apply_rest_shape, optimize_rest_shape
from strandlab.sim.shapes import line

# a soft rod, 1 m long, 5 mm radius: weight 0.77 N, E A = 78.5 N, E I = 4.9e-4 N m^2
SOFT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005, shear_modulus=1e6 / 3)
STAY = 1e-3      # "stays in place": displacement / length (the strands are 1 m long)
SAGS = 1e-2      # the input shape as rest shape sags more than this / length


def _strand(end, n, options=None, load=None, gravity=(0, 0, -9.81)):
    b = sl.SceneBuilder(gravity=gravity)
    s = b.add_strand(line((0, 0, 0), end, n), material=SOFT, options=options)
    b.attach_to_frame(s, b.add_frame(), end=0)
    if load is not None:
        b.add_load(s, n - 1, load)
    return b.build()


def _changes(res):
    m = res.model
    return (np.abs(res.rest.rest_length / m.rest_length - 1).max(),
            np.abs(res.rest.rest_curvature - m.rest_curvature).max(),
            np.abs(res.rest.rest_twist - m.rest_twist).max())


@pytest.mark.parametrize("ks", [78.5, 20.0, 5.0])
def test_vertical_strand_changes_only_rest_lengths_and_stays(ks):
    sc = _strand((0, 0, -1), 20, options={"der": {"stretch_stiffness": ks}})
    res = optimize_rest_shape(sc)
    rep = res.reports[0]
    assert rep.status == "converged" and rep.iterations <= 5
    dl, dk, dt = _changes(res)
    # gravity along the strand: the curvature and twist columns of J are orthogonal to the
    # force, so the minimum-norm steps leave them at round-off
    assert dk < 1e-12 and dt < 1e-12
    # rest lengths shorten, by about the strain the weight below causes (0.77 N / k_s at the
    # root, the mass following the shorter rest length)
    m = res.model
    assert np.all(res.rest.rest_length[1:] < m.rest_length[1:])
    assert 0.5 * 0.77 / ks < dl < 0.77 / ks
    d_opt = max_displacement(apply_rest_shape(sc, res))
    d_naive = max_displacement(sc)
    print(f"\nvertical k_s = {ks:g} N: rest length -{dl:.2%} at the root; displacement over "
          f"5 s {d_opt:.2e} m (sag-free) vs {d_naive:.2e} m (input as rest)")
    assert d_opt < STAY * 1.0
    # the input rest shape stretches by about w L / (2 k_s): 5 mm to 8 cm here
    assert d_naive > 0.5 * 0.77 / (2 * ks) and d_naive > 1e3 * d_opt


def test_vertical_strand_without_gravity_shows_its_shorter_rest_lengths():
    sc = _strand((0, 0, -1), 20, options={"der": {"stretch_stiffness": 5.0}})
    res = optimize_rest_shape(sc)
    free = apply_rest_shape(_strand((0, 0, -1), 20, options={"der": {"stretch_stiffness": 5.0}},
                                    gravity=(0, 0, 0)), res)
    sol = sl.DERSolver(free, sl.DERSettings(damping=5.0))
    st = sol.state()
    for _ in range(600):
        sol.step(st, st, 1.0 / 60)
    tip = sol.output(st).positions[-1, 2]
    # without its weight the strand contracts towards the sum of its rest lengths
    # (the first edge straddles the clamp)
    expect = -(res.rest.rest_length[0] + np.sum(res.rest.rest_length[1:]))
    print(f"\nwithout gravity the sag-free vertical strand's tip rises by {tip + 1.0:.4f} m")
    assert tip > -1.0 + 0.03
    assert tip == pytest.approx(expect, rel=1e-3)


def test_horizontal_strand_changes_only_rest_curvatures_softest_held_by_box():
    stiff = [2e-1, 1e-1, 4e-2, 1e-2]
    dks, naive = [], []
    for kb in stiff:
        sc = _strand((1, 0, 0), 20, options={"der": {"bend_stiffness": kb}})
        res = optimize_rest_shape(sc)
        rep = res.reports[0]
        dl, dk, dt = _changes(res)
        dks.append(dk)
        d_opt = max_displacement(apply_rest_shape(sc, res))
        naive.append(max_displacement(sc))
        print(f"\nhorizontal k_b = {kb:g}: {rep.status}, {rep.iterations} iterations, max rest "
              f"curvature change {dk:.3f} (box {SagFreeSettings().curvature_bound:.3f}), "
              f"relative residual {rep.relative_residual:.1e}; displacement {d_opt:.2e} m vs "
              f"{naive[-1]:.2e} m")
        assert naive[-1] > SAGS
        assert dt < 1e-12
        if kb > 1e-2:
            assert rep.status == "converged"
            assert dl < 1e-9                     # gravity across the strand: no axial force
            assert d_opt < STAY
        else:
            # the curvature needed is twice what the box allows: it holds what it can
            assert rep.status == "held_by_box"
            box = SagFreeSettings().curvature_bound
            assert box * 0.999 < dk < box * 1.001    # at the bound (penalty: slightly past)
            assert 0.05 < rep.relative_residual < 0.9
            # fails gracefully: no divergence, and it sags less than with its input rest shape
            assert d_opt < 0.5 * naive[-1]
    # the rest curvature change scales as 1 / k_b where the box does not bind
    assert dks[1] == pytest.approx(2.0 * dks[0], rel=0.02)
    assert dks[2] == pytest.approx(2.5 * dks[1], rel=0.02)


@pytest.mark.parametrize("mode", ["penalty", "exact"])
def test_tip_load_needs_more_rest_curvature_and_is_balanced(mode):
    kb = {"der": {"bend_stiffness": 1e-1}}
    load = (0.0, 0.0, -0.4)      # ten times the tip vertex's weight, half the strand's
    plain = optimize_rest_shape(_strand((1, 0, 0), 20, options=kb), SagFreeSettings(mode=mode))
    sc = _strand((1, 0, 0), 20, options=kb, load=load)
    res = optimize_rest_shape(sc, SagFreeSettings(mode=mode))
    assert res.reports[0].status == "converged"
    dk0, dk = _changes(plain)[1], _changes(res)[1]
    # the root moment grows from w L^2 / 2 = 0.385 N m to 0.385 + 0.4 N m
    assert dk / dk0 == pytest.approx((0.385 + 0.4) / 0.385, rel=0.05)
    d_opt = max_displacement(apply_rest_shape(sc, res))
    d_naive = max_displacement(sc)
    print(f"\ntip load ({mode}): curvature change {dk:.3f} vs {dk0:.3f} without; "
          f"displacement {d_opt:.2e} m vs {d_naive:.2e} m")
    assert d_opt < STAY and d_naive > SAGS


def _high_resolution(n, mode):
    sc = _strand((1, 0, 0), n, options={"der": {"bend_stiffness": 1e-1}})
    out = {}
    for twist in (True, False):
        res = optimize_rest_shape(sc, SagFreeSettings(rest_twist=twist, mode=mode))
        rep = res.reports[0]
        assert rep.status == "converged", rep
        out[twist] = (res, rep)
    d = max_displacement(apply_rest_shape(sc, out[False][0]))
    d_naive = max_displacement(sc)
    print(f"\n{n} vertices, {mode}: {out[True][1].iterations} / {out[False][1].iterations} "
          f"iterations in {out[True][0].seconds:.3f} s / {out[False][0].seconds:.3f} s with / "
          f"without rest twist, relative residual {out[True][1].relative_residual:.1e}; "
          f"displacement {d:.2e} m vs {d_naive:.2e} m")
    assert d < STAY and d_naive > SAGS
    m = out[True][0].model
    np.testing.assert_array_equal(out[False][0].rest.rest_twist, m.rest_twist)


def test_high_resolution_strand_with_and_without_rest_twist():
    _high_resolution(200, "penalty")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["penalty", "exact"])
def test_high_resolution_strand_1000_vertices(mode):
    _high_resolution(1000, mode)
