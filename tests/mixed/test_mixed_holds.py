"""Held vertices and driven rod edges of the mixed model: a frame that only turns rod edges
(``turn_only``, the axial rotation of the frisbee's rim, Fig. 13)."""
import math

import numpy as np
import pytest

import strandlab as sl
from strandlab.mixed import MixedSettings, MixedSolver
from strandlab.sim.simplicial import MeshHold, SimplicialBuilder

ROD = sl.Material(young_modulus=1e7, density=1e3, radius=0.005)


def _arc(n=8, radius=0.1, span=math.pi / 2):
    a = np.linspace(0.0, span, n + 1)
    return np.c_[radius * np.cos(a), radius * np.sin(a), np.zeros(n + 1)]


def _turned(turn_only: bool, x, held, angle=1.0, steps=10):
    """The rod ``x`` with ``held`` vertices held by a frame turning about the y axis through
    the arc's start by ``angle`` [rad] over the steps; returns the solver and state."""
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    f = b.add_frame(tuple(x[0]), angular_velocity=(0.0, angle / (0.01 * steps), 0.0),
                    stop=0.01 * steps)
    mb = SimplicialBuilder(x, name="arc")
    mb.add_rods(np.c_[np.arange(len(x) - 1), np.arange(1, len(x))], material=ROD,
                d1=np.tile([0.0, 0.0, 1.0], (len(x) - 1, 1)))     # normal to the arc's plane
    mb.hold(held, frame=f, turn_only=turn_only)
    b.add_simplicial_mesh(mb.build())
    sol = MixedSolver(b.build(), MixedSettings(damping=5.0))
    s = sol.state()
    for _ in range(steps):
        sol.step(s, s, 0.01)
    return sol, s


def test_turn_only_turns_the_held_edges_about_themselves_and_leaves_their_vertices():
    x = _arc()
    sol, s = _turned(True, x, [0, 1, 2])
    pos = sol.model.positions(s.q)
    assert np.array_equal(pos[:3], x[:3])                    # held where they were
    assert sol.model.fixed[3 * sol.model.n_vertices + np.arange(2)].all()
    d1 = sol.rod_d1(s)
    d0 = sol.rod_d1(sol.state())
    for e in (0, 1):
        t = x[e + 1] - x[e]
        t /= np.linalg.norm(t)
        # the frame's turn about y, projected off the edge: d1 = z turns about the edge by
        # atan(tan(1) t_y) (t_y: the cosine between the edge and the axis)
        want = math.atan(math.tan(1.0) * abs(t[1]))
        got = math.atan2(np.dot(np.cross(d0[e], d1[e]), t), np.dot(d0[e], d1[e]))
        assert abs(got) == pytest.approx(want, abs=1e-9)
    # a plain hold by the same frame moves the vertices off the axis with it
    sol2, s2 = _turned(False, x, [0, 1, 2])
    moved = np.linalg.norm(sol2.model.positions(s2.q)[1:3] - x[1:3], axis=1)
    assert moved.min() > 1e-3


def test_turn_only_on_the_frames_axis_is_a_plain_hold():
    # vertices on the turning axis do not move with a plain hold either: both holds agree
    x = np.c_[np.zeros(6), np.linspace(0.0, 0.1, 6), np.zeros(6)]
    a = _turned(True, x, [0, 1, 2])
    b = _turned(False, x, [0, 1, 2])
    assert np.allclose(a[1].q, b[1].q, atol=1e-12)
    assert np.allclose(a[1].q[18:20], 1.0, atol=1e-9)      # the held edges turned 1 rad


def test_turn_only_needs_a_frame():
    with pytest.raises(ValueError, match="turn_only needs a frame"):
        MeshHold((0, 1), None, True, None, True)
    with pytest.raises(ValueError, match="turn_only needs a frame"):
        MeshHold((0, 1), 0, False, None, True)


def test_an_edge_between_two_holds_is_free():
    # vertices 0-2 turned by a frame, 3-5 held still: the edges inside each hold are held
    # (driven by the frame, or still), the edge from vertex 2 to vertex 3 is free
    x = _arc()
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    f = b.add_frame(tuple(x[0]), angular_velocity=(0.0, 1.0, 0.0))
    mb = SimplicialBuilder(x, name="arc")
    mb.add_rods(np.c_[np.arange(len(x) - 1), np.arange(1, len(x))], material=ROD)
    mb.hold([0, 1, 2], frame=f, turn_only=True)
    mb.hold([3, 4, 5])
    b.add_simplicial_mesh(mb.build())
    m = MixedSolver(b.build()).model
    held = m.fixed[3 * m.n_vertices:]
    assert held.tolist() == [True, True, False, True, True, False, False, False]
    assert m.drive_edge.tolist() == [0, 1] and len(m.drive_vertex) == 0


def test_an_overstretched_edge_is_reported_by_its_two_ends():
    """A rod pulled down by its tip, far past ``max_strain``: the divergence names the edge
    by both its points (the first of them held, not the one that moved)."""
    x = np.c_[np.zeros(4), np.zeros(4), -0.1 * np.arange(4.0)]
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    mb = SimplicialBuilder(x, name="cord", velocities=np.r_[np.zeros((3, 3)), [[0, 0, -50.0]]])
    mb.add_rods([[0, 1], [1, 2], [2, 3]], material=sl.Material(young_modulus=1e3, density=1e3,
                                                                radius=0.005))
    mb.hold([0, 1, 2])
    b.add_simplicial_mesh(mb.build())
    sol = MixedSolver(b.build(), MixedSettings(max_strain=0.5))
    s = sol.state()
    with pytest.raises(sl.SimulationDiverged, match=r"edge strain [0-9.]+ of the edge between "
                                                    r"points 2 and 3 exceeds max_strain = 0\.5 "
                                                    r"\(mesh 'cord'\)"):
        for _ in range(20):
            sol.step(s, s, 0.01)
