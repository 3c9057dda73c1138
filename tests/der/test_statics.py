"""DER statics at a fixed configuration (strandlab.der.statics): the net force as a function of
the rest shape and its Jacobian, checked against the energy terms and finite differences on
straight, gently and sharply bent, twisted and coiled strands."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.der import compile_scene
from strandlab.der.statics import RestShape, StaticForces, vertex_mass_coefficient
from strandlab.der.system import DERSystem

MAT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005, shear_modulus=1e6 / 3)


def _helix(n, turns=1.5, radius=0.1, pitch=0.06):
    t = np.linspace(0, 2 * np.pi * turns, n)
    return np.stack([radius * np.cos(t), radius * np.sin(t), -pitch * t / (2 * np.pi)], 1)


def _zigzag(n, angle_deg=170.0, length=0.05):
    """A planar polyline turning alternately by ``angle_deg`` (sharply bent)."""
    a = np.radians(180.0 - angle_deg)
    pts = [np.zeros(3)]
    d = 0.0
    for k in range(n - 1):
        d = (np.pi - a) / 2 if k % 2 == 0 else -(np.pi - a) / 2
        pts.append(pts[-1] + length * np.array([np.cos(d), np.sin(d) * 0.5, np.sin(d)]))
    return np.array(pts)


def _scene(points, *, rest=None, twist=0.0, clamp=True, load=None, gravity=(0, 0, -9.81),
           radius=None, **kw):
    b = sl.SceneBuilder(gravity=gravity)
    s = b.add_strand(points, rest_points=rest, material=MAT, initial_twist=twist,
                     radius=radius, **kw)
    if clamp:
        b.attach_to_frame(s, b.add_frame(), end=0)
    if load is not None:
        b.add_load(s, len(points) - 1, load)
    return b.build()


def _cases():
    rng = np.random.default_rng(3)
    helix = _helix(14)
    zig = _zigzag(9)
    line = np.stack([np.linspace(0, 0.5, 8), np.zeros(8), np.zeros(8)], 1)
    return {
        # rest shape differs from the input: every stencil has a nonzero residual
        "coiled, twisted": _scene(helix, rest=helix + 0.01 * rng.normal(size=helix.shape),
                                  twist=0.8),
        "sharply bent (170 deg)": _scene(zig, rest=zig + 0.004 * rng.normal(size=zig.shape),
                                         twist=-0.5),
        "straight, tapered, tip load": _scene(line, rest=line * 1.02, load=(0.1, 0.2, -0.3),
                                              radius=np.linspace(0.005, 0.003, 8)),
    }


def _rest_perturbed(model, rng, scale=0.05):
    """The model's rest shape with every parameter perturbed (so that ltilde derivatives and
    all residual weights are exercised)."""
    r = RestShape.of_model(model)
    r.rest_length *= 1 + scale * rng.uniform(-1, 1, r.rest_length.shape)
    r.rest_curvature += scale * rng.normal(size=r.rest_curvature.shape)
    r.rest_twist += scale * rng.normal(size=r.rest_twist.shape)
    return r


@pytest.mark.parametrize("name", list(_cases()))
def test_elastic_force_is_minus_the_energy_gradient_of_the_terms(name):
    # the force kernels re-derive grad E from curvature/twist gradients; the DER terms are the
    # reference (themselves checked against finite differences in test_der_energies.py)
    m = compile_scene(_cases()[name])
    sf = StaticForces(m)
    f = sf.elastic_force(RestShape.of_model(m))
    sys = DERSystem(m)
    sys.prepare(m.q0)
    g = np.zeros(m.n_dofs)
    for term in sys.terms:
        n, k = term.dofs.shape
        e, gg = np.zeros(n), np.zeros((n, k))
        term.evaluate(m.q0, e, gg, None)
        np.add.at(g, term.dofs, gg)
    # tolerance: both sides sum the same terms in another order: round-off of the largest term
    assert np.max(np.abs(f + g)) <= 1e-12 * np.max(np.abs(g))


def test_external_force_is_the_weight_under_the_rest_lengths_plus_loads():
    m = compile_scene(_cases()["straight, tapered, tip load"])
    sf = StaticForces(m)
    f = sf.external_force()
    vd = m.vertex_dof
    # the model's own masses give its weight; the tip load adds (0.1, 0.2, -0.3)
    expect = m.mass[vd][:, None] * m.gravity
    expect[-1] += (0.1, 0.2, -0.3)
    np.testing.assert_allclose(f[vd[:, None] + np.arange(3)], expect, rtol=1e-13, atol=1e-15)
    # mass law m_v = c_v sum(lbar at v): doubling every rest length doubles the weight
    f2 = sf.external_force(2.0 * m.rest_length)
    np.testing.assert_allclose(f2[vd[:, None] + np.arange(3)] - (f[vd[:, None] + np.arange(3)]
                                                                  - m.mass[vd][:, None] * m.gravity),
                               2 * m.mass[vd][:, None] * m.gravity, rtol=1e-13, atol=1e-15)
    c = vertex_mass_coefficient(m)
    # c_v = rho A_v / 2 for the tapered radius
    np.testing.assert_allclose(c, 0.5 * 1000.0 * np.pi * np.linspace(0.005, 0.003, 8) ** 2,
                               rtol=1e-12)


def test_net_force_vanishes_on_fixed_dofs_and_is_zero_at_rest_without_gravity():
    helix = _helix(10)
    m = compile_scene(_scene(helix, gravity=(0, 0, 0)))
    f = StaticForces(m).force(RestShape.of_model(m))
    assert np.all(f[m.fixed] == 0.0)
    # the input shape is its own rest shape: no force (round-off of the stretching force)
    assert np.max(np.abs(f)) < 1e-12 * np.max(m.stretch_stiffness)


@pytest.mark.parametrize("name", list(_cases()))
@pytest.mark.parametrize("twist", [True, False])
def test_jacobian_matches_central_differences(name, twist):
    m = compile_scene(_cases()[name])
    sf = StaticForces(m)
    rng = np.random.default_rng(11)
    rest = _rest_perturbed(m, rng)
    jac = sf.jacobian(rest, 0, twist=twist, scale=1.7)
    p = jac.pack(rest)
    dense = jac.matrix.toarray()
    assert dense.shape == (len(jac.rows), jac.n_params)
    fd = np.zeros_like(dense)
    sc = np.full(m.n_strands, 1.7)
    for k in range(len(p)):
        h = 1e-6 * max(abs(p[k]), 1e-2)
        pp, pm = p.copy(), p.copy()
        pp[k] += h
        pm[k] -= h
        fp = sf.force(jac.unpack(pp, rest), scale=sc)[jac.rows]
        fm = sf.force(jac.unpack(pm, rest), scale=sc)[jac.rows]
        fd[:, k] = (fp - fm) / (2 * h)
    # the force is affine in kappabar and taubar (central differences exact up to round-off)
    # and rational in lbar (central-difference error ~ h^2 |f'''| ~ 1e-12 relative); 1e-7 of
    # the largest entry leaves room for the round-off of the differences
    err = np.abs(dense - fd)
    assert err.max() <= 1e-7 * np.abs(fd).max()
    # and column by column against the column's own scale (lbar columns are ~1e4 larger)
    col = np.abs(fd).max(axis=0)
    assert np.all(err.max(axis=0) <= 1e-6 * col + 1e-9 * np.abs(fd).max())


def test_jacobian_layout_of_a_root_clamped_strand():
    n = 9
    m = compile_scene(_scene(_helix(n)))
    jac = StaticForces(m).jacobian(RestShape.of_model(m), 0)
    # free DOFs: 4n - 1 minus x0, x1, theta0; parameters lbar_1..lbar_{n-2}, 4 kappabar and
    # one taubar per inner vertex
    assert len(jac.rows) == 4 * n - 8
    np.testing.assert_array_equal(jac.length_edges, np.arange(1, n - 1))
    np.testing.assert_array_equal(jac.curvature_stencils, np.arange(n - 2))
    assert jac.n_params == 6 * (n - 2)
    no_tw = StaticForces(m).jacobian(RestShape.of_model(m), 0, twist=False)
    assert no_tw.n_params == 5 * (n - 2) and len(no_tw.twist_stencils) == 0


def test_strand_subsets_and_scales_touch_only_their_strands():
    b = sl.SceneBuilder()
    for k in range(3):
        s = b.add_strand(_helix(7) + (k, 0, 0), material=MAT)
        b.attach_to_frame(s, b.add_frame(), end=0)
    m = compile_scene(b.build())
    sf = StaticForces(m)
    rest = _rest_perturbed(m, np.random.default_rng(0))
    full = sf.force(rest)
    out = np.full(m.n_dofs, 7.0)
    sf.force(rest, strands=[1], out=out)
    d = slice(int(m.strand_dof_start[1]), int(m.strand_dof_start[2]))
    np.testing.assert_array_equal(out[d], full[d])
    assert np.all(np.delete(out, np.arange(d.start, d.stop)) == 7.0)
    # a stiffness scale multiplies the elastic part only
    sc = np.array([1.0, 3.0, 1.0])
    f3 = sf.force(rest, scale=sc)
    fe, fx = sf.elastic_force(rest), sf.external_force(rest.rest_length)
    np.testing.assert_allclose(f3[d], np.where(m.fixed[d], 0.0, 3.0 * fe[d] + fx[d]),
                               rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="strand 3 out of range"):
        sf.force(rest, strands=[3])


def test_rest_shape_options_round_trip_through_compile():
    helix = _helix(10)
    sc = _scene(helix)
    m = compile_scene(sc)
    rest = _rest_perturbed(m, np.random.default_rng(5))
    opts = rest.strand_options(m, 0)
    m2 = compile_scene(_scene(helix, options={"der": opts}))
    np.testing.assert_allclose(m2.rest_length, rest.rest_length, rtol=1e-15)
    np.testing.assert_allclose(m2.rest_curvature, rest.rest_curvature, rtol=1e-15)
    np.testing.assert_allclose(m2.rest_twist, rest.rest_twist, rtol=1e-15)
    # the compiled mass follows the rest lengths as the statics assume
    f_statics = StaticForces(m).force(rest)
    f_model = StaticForces(m2).force(RestShape.of_model(m2))
    np.testing.assert_allclose(f_model, f_statics, rtol=0,
                               atol=1e-12 * np.max(np.abs(f_statics)))


def test_bad_input_is_named():
    m = compile_scene(_scene(_helix(6)))
    with pytest.raises(ValueError, match="q must have shape"):
        StaticForces(m, q=np.zeros(3))
    with pytest.raises(TypeError, match="DERModel"):
        StaticForces("not a model")
    q = m.q0.copy()
    q[m.vertex_dof[3]:m.vertex_dof[3] + 3] = q[m.vertex_dof[2]:m.vertex_dof[2] + 3]
    with pytest.raises(ValueError, match="strand 0: the configuration is degenerate at vertex"):
        StaticForces(m, q=q)
    rest = RestShape.of_model(m)
    rest.rest_length[2] = -1.0
    with pytest.raises(ValueError, match="rest_length of entry 2 must be positive"):
        rest.check(m)


def _dense_min_eigs(model, rest, q=None):
    """Eigenvalues of the exact Hessian over the free DOFs (dense, from the DER terms)."""
    import dataclasses

    m2 = dataclasses.replace(model, rest_length=rest.rest_length,
                             rest_curvature=rest.rest_curvature, rest_twist=rest.rest_twist,
                             voronoi_length=rest.voronoi_length(model))
    sys = DERSystem(m2, project=False)
    sys.prepare(model.q0)
    H = np.zeros((model.n_dofs, model.n_dofs))
    for term in sys.terms:
        n, k = term.dofs.shape
        h = np.zeros((n, k, k))
        term.evaluate(model.q0, np.zeros(n), np.zeros((n, k)), h)
        for s in range(n):
            H[np.ix_(term.dofs[s], term.dofs[s])] += h[s]
    free = ~model.fixed
    return np.linalg.eigvalsh(H[np.ix_(free, free)])


def test_negative_modes_count_the_negative_eigenvalues_of_the_stiffness():
    # a helix whose rest curvature is reversed and rest lengths shortened: a prestressed
    # configuration with several negative modes; its own rest shape has none
    m = compile_scene(_scene(_helix(12, turns=1.2), gravity=(0, 0, 0)))
    sf = StaticForces(m)
    own = RestShape.of_model(m)
    assert np.min(_dense_min_eigs(m, own)) > 0 and sf.negative_modes(own)[0] == 0
    bad = RestShape.of_model(m)
    bad.rest_curvature *= -3.0
    bad.rest_length *= 0.8
    ev = _dense_min_eigs(m, bad)
    n_neg = int(np.sum(ev < -1e-9 * np.abs(ev).max()))
    assert n_neg >= 1
    assert sf.negative_modes(bad)[0] == n_neg
    # strands not listed report -1
    assert sf.negative_modes(bad, strands=[])[0] == -1
