"""The DER stencil terms: input validation, output conventions, shared frame arrays, and the
whole pipeline (time-parallel transport, reference twist, energies) on several strands, one of
them closed, in a scattered layout of ``q``: the assembled gradient and Hessian are the exact
derivatives of the total energy whose frames are transported from the expansion point."""
from __future__ import annotations

import numpy as np
import pytest

from der_reference import strand_layout
from strandlab.rods import kernels as K
from strandlab.rods.terms import BendTerm, BendTwistTerm, StretchTerm, TwistTerm


def _setup(seed=0, sizes=(6, 8, 5), closed=(False, True, False)):
    """A model of a few strands: q, index arrays, frames at q, rest values off the current
    shape (so every residual is nonzero) and the four terms sharing the frame arrays."""
    rng = np.random.default_rng(seed)
    lay = strand_layout(sizes, closed, rng)
    q = np.zeros(lay["n_dofs"])
    v = 0
    for n, c in zip(sizes, closed):
        if c:
            ang = 2 * np.pi * np.arange(n) / n
            pts = 0.2 * np.c_[np.cos(ang), np.sin(ang), 0.3 * np.sin(2 * ang)]
        else:
            s = np.linspace(0, 1, n)
            pts = np.c_[0.1 * np.cos(4 * s), 0.1 * np.sin(4 * s), -0.5 * s]
        pts = pts + rng.normal(scale=0.01, size=pts.shape)
        q[lay["vertex_xyz"][v:v + n]] = pts
        v += n
    q[lay["edge_dof"]] = rng.normal(scale=0.5, size=len(lay["edge_dof"]))
    x = q[lay["vertex_xyz"]]
    t = x[lay["edge_v"][:, 1]] - x[lay["edge_v"][:, 0]]
    t /= np.linalg.norm(t, axis=1)[:, None]
    a1 = np.cross(t, rng.normal(size=t.shape))
    a1 /= np.linalg.norm(a1, axis=1)[:, None]
    a2 = np.cross(t, a1)
    nb, ne = len(lay["bend_dofs"]), len(lay["edge_v"])
    m_ref = np.zeros(nb)
    K.reference_twists(q, lay["bend_dofs"], lay["bend_edges"], a1, m_ref, m_ref)
    lengths = np.zeros(ne)
    K.edge_lengths(q, lay["stretch_dofs"], lengths)
    kappa, tau = np.zeros((nb, 4)), np.zeros(nb)
    K.curvatures_twists(q, lay["bend_dofs"], lay["bend_edges"], a1, a2, m_ref, kappa, tau)
    be = lay["bend_edges"]
    lt = 0.5 * (lengths[be[:, 0]] + lengths[be[:, 1]])
    r = 1e-3
    E, G = 1e6, 4e5
    kb = np.tile([E * np.pi * r**4 / 4 * 1.2, E * np.pi * r**4 / 4 * 0.8], (nb, 1))
    kt = np.full(nb, G * np.pi * r**4 / 2)
    ks = np.full(ne, E * np.pi * r**2)
    bend = dict(dofs=lay["bend_dofs"], edges=be, voronoi_length=lt, a1=a1, a2=a2)
    terms = {
        "stretch": StretchTerm(dofs=lay["stretch_dofs"], rest_length=lengths * 0.97,
                               stiffness=ks, project=False),
        "bend": BendTerm(rest_curvature=kappa + rng.normal(scale=0.2, size=kappa.shape),
                         stiffness=kb, **bend),
        "twist": TwistTerm(dofs=lay["bend_dofs"], rest_twist=tau + 0.3, voronoi_length=lt,
                           stiffness=kt, ref_twist=m_ref),
    }
    terms["bend_twist"] = BendTwistTerm(
        rest_curvature=terms["bend"].rest_curvature, rest_twist=terms["twist"].rest_twist,
        bend_stiffness=kb, twist_stiffness=kt, ref_twist=m_ref, **bend)
    return q, lay, a1, a2, m_ref, terms


def _assemble(term, q, hess=True):
    n, k = term.dofs.shape
    e, g, H = np.zeros(n), np.zeros((n, k)), (np.zeros((n, k, k)) if hess else None)
    term.evaluate(q, e, g, H)
    gq = np.zeros(len(q))
    np.add.at(gq, term.dofs, g)
    Hq = None
    if hess:
        Hq = np.zeros((len(q), len(q)))
        np.add.at(Hq, (term.dofs[:, :, None], term.dofs[:, None, :]), H)
    return e.sum(), gq, Hq


@pytest.mark.parametrize("name", ["stretch", "bend", "twist", "bend_twist"])
def test_assembled_derivatives_are_exact_for_transported_frames(name):
    """Total energy E(q') with the frames carried from q by ``transport_frames`` and the
    reference twist by ``reference_twists`` (branch of its value at q), as the model does.
    Directional checks along unit vectors (edges are 0.02 to 0.2 m): central differences of E
    against g . v (step 3e-6; measured relative error ~1e-9, asserted 1e-6), and second
    differences against u^T H v (step 3e-5: truncation ~1e-8, rounding ~1e-16 / 1e-9;
    measured ~1e-7, asserted 2e-6)."""
    q, lay, a1, a2, m_ref, terms = _setup()
    term = terms[name]
    a1_0, m_0 = a1.copy(), m_ref.copy()
    e0, g, H = _assemble(term, q)

    def energy(qq):
        a1[:] = a1_0  # the term holds a1, a2, m_ref: update them in place
        K.transport_frames(q, qq, lay["stretch_dofs"], a1, a2)
        K.reference_twists(qq, lay["bend_dofs"], lay["bend_edges"], a1, m_0, m_ref)
        return _assemble(term, qq, hess=False)[0]

    assert energy(q) == pytest.approx(e0, rel=1e-14)
    rng = np.random.default_rng(11)
    for _ in range(3):
        u, v = rng.normal(size=(2, len(q)))
        u /= np.linalg.norm(u)
        v /= np.linalg.norm(v)
        h = 3e-6
        d1 = (energy(q + h * v) - energy(q - h * v)) / (2 * h)
        assert d1 == pytest.approx(g @ v, rel=1e-6)
        h = 3e-5
        d2 = (energy(q + h * u + h * v) - energy(q + h * u - h * v) - energy(q - h * u + h * v)
              + energy(q - h * u - h * v)) / (4 * h * h)
        assert d2 == pytest.approx(u @ H @ v, rel=2e-6)


def test_fused_term_equals_bend_plus_twist():
    q, _, _, _, _, terms = _setup(seed=1)
    eb, gb, Hb = _assemble(terms["bend"], q)
    et, gt, Ht = _assemble(terms["twist"], q)
    e, g, H = _assemble(terms["bend_twist"], q)
    assert e == pytest.approx(eb + et, rel=1e-13)
    np.testing.assert_allclose(g, gb + gt, rtol=0, atol=1e-13 * np.abs(g).max())
    np.testing.assert_allclose(H, Hb + Ht, rtol=0, atol=1e-13 * np.abs(H).max())


def test_evaluate_overwrites_and_follows_shared_frames():
    q, _, a1, a2, m_ref, terms = _setup(seed=2)
    t = terms["bend_twist"]
    n = t.n_stencils
    e, g, H = np.full(n, 5.0), np.full((n, 11), 5.0), np.full((n, 11, 11), 5.0)
    t.evaluate(q, e, g, H)
    e1, g1, H1 = np.zeros(n), np.zeros((n, 11)), np.zeros((n, 11, 11))
    t.evaluate(q, e1, g1, H1)
    assert np.array_equal(e, e1) and np.array_equal(g, g1) and np.array_equal(H, H1)
    e2 = np.zeros(n)
    t.evaluate(q, e2, np.zeros((n, 11)), None)  # no Hessian wanted
    assert np.array_equal(e2, e1)
    # the term reads the model's arrays, not copies: turning every a1 (and a2) about its edge
    # changes the bending energy; a shift of m_ref changes the twist energy
    m_ref += 0.1
    t.evaluate(q, e2, g1, None)
    assert not np.allclose(e2, e1)
    m_ref -= 0.1
    a1[:], a2[:] = a2.copy(), -a1
    t.evaluate(q, e2, g1, None)
    assert not np.allclose(e2, e1)
    assert t.n_degenerate == 0 and t.first_degenerate == -1


def test_degenerate_stencil_is_reported():
    q, lay, _, _, _, terms = _setup(seed=3)
    s = 4
    d = lay["bend_dofs"][s]
    q[d[8:11]] = q[d[4:7]]  # the stencil's second edge has zero length
    t = terms["bend_twist"]
    n = t.n_stencils
    e = np.zeros(n)
    t.evaluate(q, e, np.zeros((n, 11)), np.zeros((n, 11, 11)))
    assert t.n_degenerate == 2  # the stencils on both sides of that edge
    assert t.first_degenerate == s and e[s] == np.inf


def test_validation_names_the_offending_stencil():
    q, lay, a1, a2, m_ref, terms = _setup(seed=4)
    bend = terms["bend"]
    n = bend.n_stencils
    kw = dict(dofs=lay["bend_dofs"], edges=lay["bend_edges"], rest_curvature=np.zeros((n, 4)),
              voronoi_length=np.ones(n), stiffness=np.ones((n, 2)), a1=a1, a2=a2)
    BendTerm(**kw)
    bad = np.ones((n, 2))
    bad[3, 1] = -1.0
    with pytest.raises(ValueError, match="stiffness of stencil 3"):
        BendTerm(**{**kw, "stiffness": bad})
    rc = np.zeros((n, 4))
    rc[5, 2] = np.nan
    with pytest.raises(ValueError, match="rest_curvature of stencil 5"):
        BendTerm(**{**kw, "rest_curvature": rc})
    with pytest.raises(ValueError, match="shape"):
        BendTerm(**{**kw, "rest_curvature": np.zeros((n, 3))})
    ed = lay["bend_edges"].copy()
    ed[2, 1] = len(a1)
    with pytest.raises(ValueError, match="stencil 2 names edge"):
        BendTerm(**{**kw, "edges": ed})
    with pytest.raises(TypeError, match="a1 must be a C-contiguous float64"):
        BendTerm(**{**kw, "a1": a1.astype(np.float32)})
    with pytest.raises(ValueError, match="11 slots"):
        BendTerm(**{**kw, "dofs": lay["bend_dofs"][:, :6]})
    with pytest.raises(ValueError, match="negative DOF"):
        BendTerm(**{**kw, "dofs": -lay["bend_dofs"]})
    lt = np.ones(n)
    lt[7] = 0.0
    with pytest.raises(ValueError, match="voronoi_length of stencil 7"):
        TwistTerm(dofs=lay["bend_dofs"], rest_twist=np.zeros(n), voronoi_length=lt,
                  stiffness=np.ones(n), ref_twist=m_ref)
    with pytest.raises(ValueError, match="ref_twist must have shape"):
        TwistTerm(dofs=lay["bend_dofs"], rest_twist=np.zeros(n), voronoi_length=np.ones(n),
                  stiffness=np.ones(n), ref_twist=np.zeros(n + 1))
    ne = len(lay["edge_v"])
    rl = np.ones(ne)
    rl[1] = np.inf
    with pytest.raises(ValueError, match="rest_length of stencil 1"):
        StretchTerm(dofs=lay["stretch_dofs"], rest_length=rl, stiffness=np.ones(ne))
    with pytest.raises(ValueError, match="hess_out must have shape"):
        bend.evaluate(q, np.zeros(n), np.zeros((n, 11)), np.zeros((n, 11, 10)))
