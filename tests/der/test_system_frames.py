"""The frame updates the solver runs (``DERSystem.load_frames`` / ``prepare``, implemented in
``rods/kernels.py``): time-parallel transport of the reference directors by the minimal rotation
for finite turns of the edges, and the reference twist unwrapped across +-pi.  References:
``der_reference.py`` (NumPy, from the definitions).  Small rotations cannot show a wrong
transport (re-orthonormalising a first-order transport is exact to first order), so the edges
here turn by up to a radian."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import strandlab as sl
from der_reference import signed_angle, transport_perp, unit
from strandlab.der import compile_scene
from strandlab.der.system import DERSystem

MAT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005)


def _system(points):
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_strand(points, material=MAT)
    m = compile_scene(b.build())
    return m, DERSystem(m)


def _tangents(m, q):
    x = m.positions(q)
    e = x[m.edge_v1] - x[m.edge_v0]
    return e / np.linalg.norm(e, axis=1)[:, None]


@pytest.mark.parametrize("turn", [0.3, 1.0])
def test_prepare_transports_the_directors_by_the_minimal_rotation(turn):
    # P(a) = a - (a . t) / (1 + t0 . t) (t0 + t), to 1e-14 (a few roundings); a2 = t x a1
    rng = np.random.default_rng(3)
    pts = np.cumsum(rng.normal(size=(6, 3)), axis=0)
    m, sys_ = _system(pts)
    q0 = m.q0.copy()
    q1 = q0.copy()
    x = m.positions(q0)
    e = np.diff(x, axis=0)
    for j in range(len(e)):        # turn every edge by ``turn`` rad about a normal axis
        axis = unit(np.cross(e[j], rng.normal(size=3)))
        e[j] = Rotation.from_rotvec(turn * axis).apply(e[j])
    x[1:] = x[0] + np.cumsum(e, axis=0)
    q1[m.vertex_dof[:, None] + np.arange(3)] = x
    sys_.load_frames(q0, m.a1_0, m.ref_twist0)
    sys_.prepare(q1)
    t0, t1 = _tangents(m, q0), _tangents(m, q1)
    np.testing.assert_allclose(np.einsum("ij,ij->i", t0, t1), np.cos(turn), atol=1e-12)
    expect = np.array([transport_perp(a, u, v) for a, u, v in zip(m.a1_0, t0, t1)])
    np.testing.assert_allclose(sys_.a1, expect, atol=1e-14)
    np.testing.assert_allclose(sys_.a2, np.cross(t1, expect), atol=1e-14)


def test_prepare_unwraps_the_reference_twist_across_pi():
    # The second edge's director turned about its edge by 0.3 rad per step, 40 steps (past
    # pi, 2 pi, 3 pi), each step loading the previous frames and twist: the reference twist
    # follows continuously, start + 0.3 k; its principal value differs by whole turns.
    pts = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.5, 0.8, 0.3]])
    m, sys_ = _system(pts)
    q = m.q0.copy()
    t = _tangents(m, q)
    a1 = m.a1_0.copy()
    twist = m.ref_twist0.copy()
    start = twist[0]
    for k in range(1, 41):
        a1[1] = Rotation.from_rotvec(0.3 * t[1]).apply(a1[1])
        sys_.load_frames(q, a1, twist)
        sys_.prepare(q)
        assert sys_.ref_twist[0] == pytest.approx(start + 0.3 * k, abs=1e-12)
        twist = sys_.ref_twist.copy()
    principal = signed_angle(transport_perp(a1[0], t[0], t[1]), a1[1], t[1])
    turns = (twist[0] - principal) / (2 * np.pi)
    assert twist[0] > start + 3 * np.pi and turns == pytest.approx(round(turns), abs=1e-12)
