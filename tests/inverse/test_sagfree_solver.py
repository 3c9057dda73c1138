"""The sag-free optimizer's machinery: its Gauss-Newton step against the dense normal equations
built from the public Jacobian, the exact mode's box-constrained step against a bounded
least-squares reference, settings and bad input, the scene it returns, the stiffness search."""
import math

import numpy as np
import pytest
from scipy.optimize import lsq_linear
from strand_shapes import coil_strand

import strandlab as sl
from strandlab.der import compile_scene
from strandlab.der.statics import RestShape, StaticForces
from strandlab.inverse import SagFreeSettings, apply_rest_shape, optimize_rest_shape
from strandlab.inverse.sagfree import _Problem
from strandlab.sim.shapes import line

SOFT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005, shear_modulus=1e6 / 3)
STIFF = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005, shear_modulus=1e7 / 3)


def _scene(points, material=SOFT, options=None, gravity=(0, 0, -9.81), n_strands=1):
    b = sl.SceneBuilder(gravity=gravity)
    f = b.add_frame()
    for k in range(n_strands):
        s = b.add_strand(points + (0.3 * k, 0, 0), material=material, options=options)
        b.attach_to_frame(s, f, end=0)
    return b.build()


def _interleaved(jac, m, P):
    """Column permutation from the Jacobian's order [lbar, kappabar, taubar] to the
    optimizer's slot order [kappabar (4), taubar, lbar] per inner vertex."""
    nslot = len(jac.curvature_stencils)
    nl, nk = len(jac.length_edges), 4 * nslot
    perm = np.zeros(P * nslot, dtype=int)
    for k in range(nslot):
        perm[k * P:k * P + 4] = nl + 4 * k + np.arange(4)
        if P == 6:
            perm[k * P + 4] = nl + nk + k
        perm[k * P + P - 1] = k
    return perm


def _dense_setup(model, pb, objective):
    sf = StaticForces(model)
    jac = sf.jacobian(pb.rest, 0, twist=pb.P == 6)
    J = jac.matrix.toarray()[:, _interleaved(jac, model, pb.P)]
    w = 1.0 / model.mass[jac.rows] if objective == "kinetic" else np.ones(len(jac.rows))
    r = (pb.f + pb.y)[jac.rows]
    return J, w, r


@pytest.mark.parametrize("objective,twist,mu", [("kinetic", True, 0.0), ("force", True, 0.0),
                                                ("kinetic", False, 1e-3)])
def test_penalty_step_solves_the_dense_normal_equations(objective, twist, mu):
    m = compile_scene(_scene(coil_strand(12, radius=0.05, pitch=0.04, turns=1.5)))
    st = SagFreeSettings(objective=objective, rest_twist=twist, regularization=1e-6)
    act = np.array([0])
    pb = _Problem(m, st, act)
    pb.init_scale[act] = True
    rng = np.random.default_rng(2)
    # a point away from p0 with a few bounds violated (penalty terms active)
    pb.p[:] = pb.p0 + 0.3 * (pb.hi - pb.p0) * rng.uniform(-1, 1, pb.p.shape)
    pb.p[3] = pb.hi[3] + 0.05
    pb.p[8] = pb.lo[8] - 0.02
    pb.damping[0] = mu
    pb.evaluate(act)
    pb.direction(act)
    J, w, r = _dense_setup(m, pb, objective)
    d = np.maximum(np.einsum("ij,i,ij->j", J, w, J), 1e-12 * np.max(np.einsum(
        "ij,i,ij->j", J, w, J)))
    # d is computed at the current p here (the optimizer's at p0: same, J's columns for
    # kappabar and taubar do not depend on p, those for lbar only through ltilde): compare
    np.testing.assert_allclose(pb.dscale, d, rtol=0.5)
    d = pb.dscale
    viol = np.where(pb.p > pb.hi, pb.p - pb.hi, np.where(pb.p < pb.lo, pb.p - pb.lo, 0.0))
    g = J.T @ (w * r) + 1e-6 * d * (pb.p - pb.p0) + st.penalty * d * viol
    H = J.T @ (w[:, None] * J) + np.diag(1e-6 * d + mu * d + st.penalty * d * (viol != 0))
    np.testing.assert_allclose(pb.g, g, rtol=1e-10, atol=1e-12 * np.abs(g).max())
    # H has a condition number near 1e14 (the regularizer is 1e-6 of the diagonal and the
    # problem underdetermined), so the reference is the residual of the normal equations
    # (a backward-stable solve leaves ~1e-15 of |g|; a wrong matrix or sign leaves O(1))
    assert np.abs(H @ pb.dp + g).max() <= 1e-12 * np.abs(g).max()
    assert pb.gdp[0] == pytest.approx(g @ pb.dp, rel=1e-12)
    assert pb.gdp[0] < 0


def test_exact_step_is_the_box_constrained_least_squares_minimizer():
    # a soft horizontal strand: its Gauss-Newton step leaves the box, so bounds are active
    m = compile_scene(_scene(line((0, 0, 0), (1, 0, 0), 10),
                             options={"der": {"bend_stiffness": 5e-3}}))
    st = SagFreeSettings(mode="exact", regularization=1e-6)
    act = np.array([0])
    pb = _Problem(m, st, act)
    pb.init_scale[act] = True
    pb.evaluate(act)
    pb.direction(act)
    assert pb.nactive[0] > 0
    J, w, r = _dense_setup(m, pb, "kinetic")
    R = 1e-6 * pb.dscale
    A = np.vstack([np.sqrt(w)[:, None] * J, np.diag(np.sqrt(R))])
    b = -np.concatenate([np.sqrt(w) * r, np.sqrt(R) * (pb.p - pb.p0)])
    ref = lsq_linear(A, b, bounds=(pb.lo - pb.p, pb.hi - pb.p), method="bvls", tol=1e-14)
    assert ref.success
    # the active-set solve ends on the same minimizer (strictly convex model): agreement to
    # the conditioning of the model (~1e6) times round-off
    np.testing.assert_allclose(pb.dp, ref.x, rtol=0, atol=1e-7 * np.abs(ref.x).max())
    assert np.all(pb.p + pb.dp >= pb.lo - 1e-15) and np.all(pb.p + pb.dp <= pb.hi + 1e-15)


def test_settings_are_checked_and_named():
    assert SagFreeSettings().regularization == 1e-16
    assert SagFreeSettings(mode="exact").regularization == 1e-14
    assert SagFreeSettings().curvature_bound == pytest.approx(2 * math.tan(math.pi / 8))
    for kw, name in [({"objective": "energy"}, "objective"), ({"mode": "strict"}, "mode"),
                     ({"regularization": -1.0}, "regularization"),
                     ({"length_bounds": (1.2, 1.5)}, "length_bounds"),
                     ({"turning_angle": 4.0}, "turning_angle"),
                     ({"max_iterations": 0}, "max_iterations"),
                     ({"backtrack": 1.0}, "backtrack"), ({"rest_twist": 1}, "rest_twist"),
                     ({"stiffen_factor": 1.0}, "stiffen_factor"),
                     ({"regularization_scaling": "unit"}, "regularization_scaling")]:
        with pytest.raises(ValueError, match=name):
            SagFreeSettings(**kw)


def test_bad_input_is_named():
    b = sl.SceneBuilder()
    t = np.linspace(0, 2 * np.pi, 9)[:-1]
    b.add_strand(np.stack([np.cos(t), np.sin(t), 0 * t], 1), material=SOFT, closed=True,
                 name="ring")
    with pytest.raises(ValueError, match=r"ring \(strand 0\): the sag-free optimizer handles "
                                         "open strands only"):
        optimize_rest_shape(b.build())
    sc = _scene(line((0, 0, 0), (0, 0, -1), 6))
    with pytest.raises(ValueError, match="strand 2 out of range"):
        optimize_rest_shape(sc, strands=[2])
    with pytest.raises(TypeError, match="Scene or a DERModel"):
        optimize_rest_shape("scene.toml")
    with pytest.raises(TypeError, match="SagFreeSettings"):
        optimize_rest_shape(sc, {"mode": "exact"})
    res = optimize_rest_shape(sc)
    with pytest.raises(ValueError, match="does not match the optimized model"):
        apply_rest_shape(_scene(line((0, 0, 0), (0, 0, -1), 7)), res)


def test_without_gravity_nothing_changes():
    sc = _scene(coil_strand(15), gravity=(0, 0, 0))
    res = optimize_rest_shape(sc)
    rep = res.reports[0]
    assert rep.status == "converged" and rep.iterations == 0
    m = res.model
    np.testing.assert_array_equal(res.rest.rest_curvature, m.rest_curvature)
    np.testing.assert_array_equal(res.rest.rest_length, m.rest_length)


@pytest.mark.parametrize("mode", ["penalty", "exact"])
def test_result_scene_simulates_the_balanced_rest_shape(mode):
    # three strands, the middle one not optimized; the strands carry a stiffness option that
    # the result must keep
    pts = coil_strand(14, radius=0.05, pitch=0.05, turns=1.2)
    sc = _scene(pts, STIFF, options={"der": {"twist_stiffness": 5e-3}}, n_strands=3)
    res = optimize_rest_shape(sc, SagFreeSettings(mode=mode), strands=[0, 2])
    assert [r.strand for r in res.reports] == [0, 2]
    assert all(r.status == "converged" for r in res.reports)
    new = apply_rest_shape(sc, res)
    assert new.strands[0].options["der"]["twist_stiffness"] == 5e-3
    assert "rest_length" not in new.strands[1].options["der"]
    m2 = compile_scene(new)
    f = StaticForces(m2).force(RestShape.of_model(m2))
    for r in res.reports:
        d = slice(int(m2.strand_dof_start[r.strand]), int(m2.strand_dof_start[r.strand + 1]))
        vd = m2.vertex_dof[sc.strand_vertices(r.strand)]
        fx = np.linalg.norm(f[vd[:, None] + np.arange(3)], axis=1)
        # the recompiled scene carries the same rest shape and mass: the reported residual
        # (to the round-off of the recompilation)
        assert np.max(fx) == pytest.approx(r.residual_force, rel=1e-6, abs=1e-12 * r.weight)
        assert np.max(np.abs(f[d])) < 1e-9 * r.weight
    # the strand left alone still sags: its net force is its weight's order
    vd = m2.vertex_dof[sc.strand_vertices(1)]
    assert np.max(np.abs(f[vd[2:, None] + np.arange(3)])) > 1e-3 * res.reports[0].weight / 14
    s = res.summary()
    assert s["strands"] == 2 and s["status"] == {"converged": 2}


def test_stiffness_search_finds_the_factor_the_box_can_hold():
    # too soft for the box: the rest curvatures needed exceed 2 tan(pi/8) by about 2.1x
    pts = line((0, 0, 0), (1, 0, 0), 20)
    opts = {"der": {"bend_stiffness": 1e-2}}
    sc = _scene(pts, options=opts)
    held = optimize_rest_shape(sc, SagFreeSettings(mode="exact"))
    assert held.reports[0].status == "held_by_box"
    res = optimize_rest_shape(sc, SagFreeSettings(mode="exact", stiffen=True))
    rep = res.reports[0]
    assert rep.status == "stiffened"
    print(f"\nstiffened by {rep.stiffness_scale:.3f} after {rep.iterations} iterations, relative "
          f"residual {rep.relative_residual:.1e}")
    assert 2.0 < rep.stiffness_scale <= 4.0
    assert rep.relative_residual < 1e-6
    o = res.strand_options(0)
    m = res.model
    np.testing.assert_allclose(o["bend_stiffness"], rep.stiffness_scale * m.bend_stiffness)
    # the factor is the smallest within the bisection's resolution (2^(1/8)): a strand 15 %
    # less stiff than it is held by the box
    weaker = _scene(pts, options={"der": {"bend_stiffness": 1e-2 * rep.stiffness_scale / 1.15,
                                          "stretch_stiffness": float(m.stretch_stiffness[0])
                                          * rep.stiffness_scale / 1.15}})
    assert optimize_rest_shape(weaker, SagFreeSettings(mode="exact")).reports[0].status == \
        "held_by_box"


def test_projection_keeps_the_penalty_iterates_inside_the_box():
    # the soft horizontal rod needs twice the curvature change the box allows: the penalty
    # lets the held parameters a little past their bounds, the projection clips them onto it
    sc = _scene(line((0, 0, 0), (1, 0, 0), 20), options={"der": {"bend_stiffness": 1e-2}})
    box = SagFreeSettings().curvature_bound
    free = optimize_rest_shape(sc)
    proj = optimize_rest_shape(sc, SagFreeSettings(project=True))
    m = free.model
    dk_free = np.abs(free.rest.rest_curvature - m.rest_curvature).max()
    dk_proj = np.abs(proj.rest.rest_curvature - m.rest_curvature).max()
    assert free.reports[0].status == proj.reports[0].status == "held_by_box"
    assert dk_free > box                          # w_p = 1e4: past the bound by ~1e-4 of it
    assert dk_proj <= box * (1 + 1e-15)
    # both hold a similar share of the weight (measured: 0.46 and 0.52 of the net force left;
    # clipping drops the penalty's pull towards the best point past the bound)
    assert 0.3 < free.reports[0].relative_residual < 0.7
    assert proj.reports[0].relative_residual == pytest.approx(
        free.reports[0].relative_residual, rel=0.25)
