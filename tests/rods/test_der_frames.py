"""Frame kernels of discrete elastic rods: time-parallel transport of the reference frames,
reference twist (unwrapped), material frames, curvature and twist of a configuration, edge
lengths.  References come from ``der_reference.py`` (NumPy, from the definitions) and from
analytic results (holonomy of transport around a cone, curvature of a circle)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from der_reference import Base, signed_angle, stencil_parts, strand_layout, transport_perp, unit
from strandlab.rods import kernels as K


def _model(rng, sizes=(5, 7, 4), closed=(False, True, False), wiggle=0.4):
    """A few strands (one closed) in a permuted layout: q [N] and the index arrays."""
    lay = strand_layout(sizes, closed, rng)
    q = np.zeros(lay["n_dofs"])
    v = 0
    for n, c in zip(sizes, closed):
        if c:
            ang = 2 * np.pi * np.arange(n) / n
            pts = np.c_[np.cos(ang), np.sin(ang), np.zeros(n)]
        else:
            pts = np.c_[np.arange(n), np.zeros(n), np.zeros(n)] * 0.5
        pts = pts + rng.normal(scale=wiggle * 0.3, size=pts.shape) + rng.normal(size=3)
        for i in range(n):
            q[lay["vertex_xyz"][v + i]] = pts[i]
        v += n
    q[lay["edge_dof"]] = rng.normal(size=len(lay["edge_dof"]))
    return q, lay


def _tangents(q, lay):
    x = q[lay["vertex_xyz"]]
    e = x[lay["edge_v"][:, 1]] - x[lay["edge_v"][:, 0]]
    return e / np.linalg.norm(e, axis=1)[:, None]


def _frames(q, lay, rng):
    t = _tangents(q, lay)
    a1 = np.cross(t, rng.normal(size=t.shape))
    a1 /= np.linalg.norm(a1, axis=1)[:, None]
    return a1, np.cross(t, a1)


# --------------------------------------------------------------------------------------------
# time-parallel transport
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("step", [1e-3, 0.3, 1.0])
def test_transport_frames_is_the_minimal_rotation(step):
    """Against ``P(a) = a - (a . t) / (1 + t0 . t) (t0 + t)``; orthonormal, right-handed
    (t = a1 x a2).  Tolerance 1e-14: a few roundings of unit vectors."""
    rng = np.random.default_rng(1)
    q0, lay = _model(rng)
    q1 = q0 + rng.normal(scale=step, size=q0.shape)
    a1, a2 = _frames(q0, lay, rng)
    t0, t1 = _tangents(q0, lay), _tangents(q1, lay)
    ok = np.einsum("ij,ij->i", t0, t1) > -0.99  # keep away from reversed edges here
    expect = np.array([transport_perp(a, u, v) for a, u, v in zip(a1, t0, t1)])
    b1, b2 = a1.copy(), a2.copy()
    fell = K.transport_frames(q0, q1, lay["stretch_dofs"], b1, b2)
    assert fell == 0
    np.testing.assert_allclose(b1[ok], expect[ok], atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(b1, axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(np.einsum("ij,ij->i", b1, t1), 0.0, atol=1e-15)
    np.testing.assert_allclose(np.cross(b1, b2), t1, atol=1e-14)


def test_transport_around_a_cone_turns_by_the_enclosed_solid_angle():
    """An edge whose tangent circles a cone of half-angle alpha (n small steps) returns with
    its director turned about the edge by the enclosed solid angle 2 pi (1 - cos alpha)
    (holonomy of parallel transport on the sphere); the discrete loop is a geodesic polygon of
    n sides whose area falls short by O(1/n^2): 5.4e-4 rad at n = 100, 3.4e-5 at 400, 5.4e-6
    at 1000 (measured), asserted below 1e-5."""
    alpha, n = 0.6, 1000
    dofs = np.arange(6, dtype=np.int64)[None]

    def q_at(phi):
        t = [np.sin(alpha) * np.cos(phi), np.sin(alpha) * np.sin(phi), np.cos(alpha)]
        return np.r_[0.0, 0.0, 0.0, t]

    q = q_at(0.0)
    t = q[3:]
    a1 = unit(np.cross(t, [0.0, 0.0, 1.0]))[None].copy()
    a2 = np.cross(t, a1)
    start = a1[0].copy()
    for k in range(1, n + 1):
        qn = q_at(2 * np.pi * k / n)
        assert K.transport_frames(q, qn, dofs, a1, a2) == 0
        q = qn
    turned = signed_angle(start, a1[0], t)
    solid = 2 * np.pi * (1 - np.cos(alpha))
    # counterclockwise about +z seen from outside: the director turns by +solid about t
    assert abs(turned - solid) < 1e-5


def test_transport_keeps_frames_orthonormal_over_many_steps():
    rng = np.random.default_rng(3)
    q, lay = _model(rng)
    a1, a2 = _frames(q, lay, rng)
    for _ in range(500):
        qn = q + rng.normal(scale=0.02, size=q.shape)
        K.transport_frames(q, qn, lay["stretch_dofs"], a1, a2)
        q = qn
    t = _tangents(q, lay)
    np.testing.assert_allclose(np.linalg.norm(a1, axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(np.einsum("ij,ij->i", a1, t), 0.0, atol=1e-15)
    np.testing.assert_allclose(np.cross(a1, a2), t, atol=1e-14)


def test_transport_of_a_reversed_edge_falls_back():
    q0 = np.r_[0.0, 0, 0, 1, 0, 0]
    q1 = np.r_[1.0, 0, 0, 0, 0, 0]  # the edge turned by pi: no minimal rotation
    a1 = np.array([[0.0, 1.0, 0.0]])
    a2 = np.zeros((1, 3))
    assert K.transport_frames(q0, q1, np.arange(6, dtype=np.int64)[None], a1, a2) == 1
    np.testing.assert_allclose(a1[0], [0, 1, 0], atol=1e-15)  # projected off t: unchanged
    np.testing.assert_allclose(a2[0], np.cross([-1, 0, 0], [0, 1, 0]), atol=1e-15)


# --------------------------------------------------------------------------------------------
# reference twist, material frames, curvature and twist
# --------------------------------------------------------------------------------------------
def test_reference_twist_matches_definition():
    rng = np.random.default_rng(4)
    q, lay = _model(rng)
    a1, a2 = _frames(q, lay, rng)
    m = np.zeros(len(lay["bend_dofs"]))
    K.reference_twists(q, lay["bend_dofs"], lay["bend_edges"], a1, m, m)
    for s, (d, (j0, j1)) in enumerate(zip(lay["bend_dofs"], lay["bend_edges"])):
        base = Base(q[d], a1[[j0, j1]])
        assert m[s] == pytest.approx(base.m_ref, abs=1e-14)
        # the angle is measured from P_{t0 -> t1}(a1_j0) to a1_j1 about t1
        t0, t1 = base.t
        u = transport_perp(a1[j0], t0, t1)
        np.testing.assert_allclose(Rotation.from_rotvec(m[s] * t1).apply(u), a1[j1], atol=1e-14)


def test_reference_twist_unwraps_across_pi():
    """Turning the second edge's director about its edge by 0.3 rad per call, 40 times
    (12 rad, past pi, 2 pi, 3 pi), with the previous value as the branch hint: the reference
    twist follows continuously, start + 0.3 k."""
    rng = np.random.default_rng(5)
    q, lay = _model(rng, sizes=(3,), closed=(False,))
    a1, _ = _frames(q, lay, rng)
    d, e = lay["bend_dofs"], lay["bend_edges"]
    t1 = _tangents(q, lay)[1]
    m = np.zeros(1)
    K.reference_twists(q, d, e, a1, m, m)
    start = m[0]
    for k in range(1, 41):
        a1[1] = Rotation.from_rotvec(0.3 * t1).apply(a1[1])
        out = np.zeros(1)
        K.reference_twists(q, d, e, a1, m, out)
        assert out[0] == pytest.approx(start + 0.3 * k, abs=1e-12)
        m[:] = out
    assert m[0] > start + 3 * np.pi
    K.reference_twists(q, d, e, a1, np.array([0.0]), out)  # no hint: principal value
    assert -np.pi < out[0] <= np.pi
    assert (m[0] - out[0]) / (2 * np.pi) == pytest.approx(round((m[0] - out[0]) / (2 * np.pi)))


def test_material_frames():
    rng = np.random.default_rng(6)
    q, lay = _model(rng)
    a1, a2 = _frames(q, lay, rng)
    m1, m2 = np.zeros_like(a1), np.zeros_like(a1)
    K.material_frames(q, lay["edge_dof"], a1, a2, m1, m2)
    th = q[lay["edge_dof"]][:, None]
    np.testing.assert_allclose(m1, np.cos(th) * a1 + np.sin(th) * a2, atol=1e-15)
    np.testing.assert_allclose(m2, -np.sin(th) * a1 + np.cos(th) * a2, atol=1e-15)
    np.testing.assert_allclose(np.cross(m1, m2), _tangents(q, lay), atol=1e-14)


def test_curvatures_twists_and_lengths_match_reference():
    rng = np.random.default_rng(7)
    q, lay = _model(rng)
    a1, a2 = _frames(q, lay, rng)
    nb = len(lay["bend_dofs"])
    m = np.zeros(nb)
    K.reference_twists(q, lay["bend_dofs"], lay["bend_edges"], a1, m, m)
    m += 2 * np.pi * rng.integers(-2, 3, size=nb)  # any branch: tau follows m_ref
    kappa, tau = np.zeros((nb, 4)), np.zeros(nb)
    K.curvatures_twists(q, lay["bend_dofs"], lay["bend_edges"], a1, a2, m, kappa, tau)
    for s, (d, (j0, j1)) in enumerate(zip(lay["bend_dofs"], lay["bend_edges"])):
        kref, mref, tref, _, _ = stencil_parts(q[d], Base(q[d], a1[[j0, j1]], near=m[s]))
        np.testing.assert_allclose(kappa[s], kref, atol=1e-13)
        assert tau[s] == pytest.approx(tref, abs=1e-13)
    lengths = np.zeros(len(lay["edge_v"]))
    K.edge_lengths(q, lay["stretch_dofs"], lengths)
    x = q[lay["vertex_xyz"]]
    np.testing.assert_allclose(
        lengths, np.linalg.norm(x[lay["edge_v"][:, 1]] - x[lay["edge_v"][:, 0]], axis=1),
        rtol=1e-15)


def test_circle_curvature_converges():
    """A regular n-gon inscribed in a circle of radius R turns by 2 pi / n per vertex:
    |kb| = 2 tan(pi / n), and |kb| / ltilde -> 1 / R as n grows (ltilde = 2 R sin(pi / n))."""
    R, n = 0.3, 64
    rng = np.random.default_rng(8)
    lay = strand_layout([n], [True])
    ang = 2 * np.pi * np.arange(n) / n
    q = np.zeros(lay["n_dofs"])
    q[lay["vertex_xyz"]] = R * np.c_[np.cos(ang), np.sin(ang), np.zeros(n)]
    a1, a2 = _frames(q, lay, rng)
    kappa, tau = np.zeros((n, 4)), np.zeros(n)
    K.curvatures_twists(q, lay["bend_dofs"], lay["bend_edges"], a1, a2, np.zeros(n), kappa, tau)
    kb = np.hypot(kappa[:, 0], kappa[:, 1])
    np.testing.assert_allclose(kb, 2 * np.tan(np.pi / n), rtol=1e-13)
    np.testing.assert_allclose(np.hypot(kappa[:, 2], kappa[:, 3]), kb, rtol=1e-13)
    ltilde = 2 * R * np.sin(np.pi / n)
    assert kb[0] / ltilde == pytest.approx(1 / R, rel=2 * (np.pi / n) ** 2)
