"""Twist density (parallel transport of d1) and strain per edge, and edges to vertices."""
import numpy as np
import pytest

from strandlab.geometry.transport import transport_rows, twist_angles
from strandlab.render.scalars import edge_pairs, edge_strain, edge_to_vertex, twist_density


def _twisted_rod(n=9, rate=3.0, length=0.8, bend=0.0):
    """A rod along x (bent in the x-y plane by ``bend`` rad per edge) whose d1 turns by
    ``rate`` [rad/m] about the tangent."""
    h = length / (n - 1)
    ang = bend * np.arange(n - 1)
    t = np.c_[np.cos(ang), np.sin(ang), np.zeros(n - 1)]
    pos = np.vstack([[0, 0, 0], np.cumsum(h * t, axis=0)])
    # the twist-free d1 of a planar curve is the plane's normal z; turn it about t
    phi = rate * h * np.arange(n - 1)
    n_vec = np.cross(t, [0, 0, 1.0])
    d1 = np.cos(phi)[:, None] * np.array([0, 0, 1.0]) + np.sin(phi)[:, None] * n_vec
    return pos, d1, h


@pytest.mark.parametrize("bend", [0.0, 0.3])
def test_twist_density_of_a_uniformly_twisted_rod(bend):
    pos, d1, h = _twisted_rod(bend=bend)
    tw = twist_density(pos, d1, [0, 9], [0, 8], [False])
    assert tw.shape == (8,)
    assert np.allclose(tw, 3.0, rtol=0, atol=1e-9)      # bending alone adds no twist
    # the sign follows the sense of rotation
    _, d1_neg, _ = _twisted_rod(rate=-3.0, bend=bend)
    assert np.allclose(twist_density(pos, d1_neg, [0, 9], [0, 8], [False]), -tw, atol=1e-9)


def test_twist_angle_of_transport_is_zero_and_sign_is_right_handed():
    t0 = np.array([[1.0, 0, 0]])
    t1 = np.array([[np.cos(0.4), np.sin(0.4), 0]])
    d0 = np.array([[0, 0, 1.0]])
    carried = transport_rows(d0, t0, t1)
    assert np.allclose(carried, d0) and twist_angles(t0, t1, d0, carried)[0] == pytest.approx(0)
    # d1 turned by +0.2 rad about t1 (right-handed) gives +0.2
    turned = np.cos(0.2) * d0 + np.sin(0.2) * np.cross(t1, d0)
    assert twist_angles(t0, t1, d0, turned)[0] == pytest.approx(0.2, abs=1e-12)
    # a tangent that turns back goes through the exact transport
    back = transport_rows(np.array([[0, 1.0, 0]]), t0, -t0)
    assert np.allclose(np.linalg.norm(back), 1.0) and abs(back[0] @ -t0[0]) < 1e-12


def test_edge_pairs_of_open_and_closed_strands():
    e, f = edge_pairs([0, 4, 8, 10], [0, 3, 7, 8], [False, True, False])
    assert e.tolist() == [0, 1, 3, 4, 5, 6]
    assert f.tolist() == [1, 2, 4, 5, 6, 3]


def test_strain_and_vertex_averages():
    ref = np.c_[np.arange(4.0), np.zeros(4), np.zeros(4)]
    pos = ref.copy()
    pos[3, 0] = 3.5                         # last edge stretched by half
    s = edge_strain(pos, ref, [0, 4], [0, 3], [False])
    assert np.allclose(s, [0, 0, 0.5])
    v = edge_to_vertex(s, 4, [0, 4], [0, 3], [False])
    assert np.allclose(v, [0, 0, 0.25, 0.5])
