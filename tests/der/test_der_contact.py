"""The push after a DER step (der/contact.py): a vertex found deep in a collider is pushed out
along the normal, and its strand follows it: the edge lengths of the step are restored by a
mass-weighted projection (Newton on all lengths, tridiagonal), the held and pushed vertices
staying where they are."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.der import DERSettings, DERSolver
from strandlab.der.contact import FOLLOW_TOLERANCE, collide_vertices, collide_vertices_serial
from strandlab.der.solver import FOLLOW_ITERATIONS, PUSH_SCALE

MAT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005, shear_modulus=1e6 / 3)
DT = 1e-3


def _strands():
    """Two strands of 11 vertices, clamped at x = 0, lying 1 cm over the plane z = 0 (a wavy
    one and a straight one), and their solver."""
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    x = np.linspace(0.0, 0.2, 11)
    for k, wave in enumerate((0.01, 0.0)):
        pts = np.stack([x, 0.05 * k + wave * np.sin(30 * x), np.full_like(x, 0.01)], axis=1)
        s = b.add_strand(pts, material=MAT)
        b.attach_to_frame(s, b.add_frame(), end=0)
    b.add_plane(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0))
    return DERSolver(b.build(), DERSettings())


def _push(sol, q_out, v_out, kern):
    m = sol.model
    nv = m.n_vertices
    pushed = np.zeros(nv, dtype=np.bool_)
    n = kern(m.strand_vertex_start, m.strand_edge_start, m.edge_v0, m.edge_v1, m.vertex_dof,
             m.fixed, m.vertex_radius, m.vertex_friction, m.planes, m.spheres, m.capsules,
             m.collider_friction, DT, PUSH_SCALE, np.zeros(nv), m.mass, FOLLOW_ITERATIONS,
             m.q0.copy(), q_out, v_out, np.zeros((nv, 3)), np.zeros(nv), np.zeros((nv, 3)),
             np.zeros(nv), np.zeros(m.n_edges), pushed, np.zeros((m.n_edges, 3)),
             np.zeros(m.n_edges), np.zeros(m.n_edges), np.zeros(m.n_edges))
    return n, pushed


def _lengths(m, q):
    x = m.positions(q)
    return np.linalg.norm(x[m.edge_v1] - x[m.edge_v0], axis=1)


@pytest.mark.parametrize("kern", [collide_vertices, collide_vertices_serial])
def test_a_pushed_vertex_carries_its_strand_and_keeps_the_edge_lengths(kern):
    sol = _strands()
    m = sol.model
    q = m.q0.copy()
    # the step ended with vertex 6 of the first strand 8 mm deep in the plane (its ball: 5 mm)
    p = 6
    d = m.vertex_dof[p]
    q[d + 2] = -0.008
    before = _lengths(m, q)
    q_out, v_out = q.copy(), np.zeros(m.n_dofs)
    n, pushed = _push(sol, q_out, v_out, kern)
    x, x_in = m.positions(q_out), m.positions(q)
    assert n == 1 and np.flatnonzero(pushed).tolist() == [p]
    # pushed out to half its radius (the penalty holds the rest), and kept there
    assert x[p, 2] == pytest.approx(PUSH_SCALE * MAT.radius, rel=1e-12)
    np.testing.assert_array_equal(x[p, :2], x_in[p, :2])
    # its strand follows: every edge has the length of the step again, to the tolerance
    # (measured after 4 Newton iterations), where the push alone changes the two edges of the
    # pushed vertex by 20 %
    after = _lengths(m, q_out)
    e = slice(int(m.strand_edge_start[0]), int(m.strand_edge_start[1]))
    np.testing.assert_allclose(after[e], before[e], rtol=FOLLOW_TOLERANCE)
    # the clamp stays, the neighbours moved up after the pushed vertex, the other strand (no
    # push) is untouched
    held = m.fixed[m.vertex_dof]
    np.testing.assert_array_equal(x[held], x_in[held])
    assert x[p - 1, 2] > x_in[p - 1, 2] + 1e-3 and x[p + 1, 2] > x_in[p + 1, 2] + 1e-3
    other = slice(int(m.strand_vertex_start[1]), int(m.strand_vertex_start[2]))
    np.testing.assert_array_equal(x[other], x_in[other])
    # velocities follow the moves: (q_out - q) / dt for the vertices the projection moved
    moved = ~held & (np.arange(m.n_vertices) != p)
    vx = m.positions(v_out)
    np.testing.assert_allclose(vx[moved], (x - x_in)[moved] / DT, rtol=1e-9, atol=1e-12)


def test_the_serial_and_parallel_kernels_agree_on_many_pushes():
    sol = _strands()
    m = sol.model
    q = m.q0.copy()
    rng = np.random.default_rng(2)
    free = np.flatnonzero(~m.fixed[m.vertex_dof])
    for p in rng.choice(free, 6, replace=False):
        q[m.vertex_dof[p] + 2] = rng.uniform(-0.01, 0.002)
    out = []
    for kern in (collide_vertices, collide_vertices_serial):
        qq, vv = q.copy(), np.zeros(m.n_dofs)
        n, pushed = _push(sol, qq, vv, kern)
        out.append((n, pushed, qq, vv))
    assert out[0][0] == out[1][0] >= 4
    for a, b in zip(out[0][1:], out[1][1:]):
        np.testing.assert_array_equal(a, b)
    # two pushed neighbours hold the edge between them; all other edges keep their length
    pushed = out[0][1]
    both = pushed[m.edge_v0] & pushed[m.edge_v1]
    before, after = _lengths(m, q), _lengths(m, out[0][2])
    np.testing.assert_allclose(after[~both], before[~both], rtol=FOLLOW_TOLERANCE)


def test_a_follow_that_cannot_be_met_moves_no_vertex_far():
    # a straight clamped strand through the edge of a small sphere: vertex 6 is pushed
    # sideways, away from the clamp, and the straight segment between the clamp and the held
    # pushed vertex cannot keep its lengths.  No vertex moves by more than the push changed a
    # length, per iteration, and the free end beyond the pushed vertex follows exactly.
    b = sl.SceneBuilder(gravity=(0.0, 0.0, 0.0))
    x = np.linspace(0.0, 0.2, 11)
    s = b.add_strand(np.stack([x, 0 * x, 0 * x], axis=1), material=MAT)
    b.attach_to_frame(s, b.add_frame(), end=0)
    b.add_sphere((0.12, -0.004, 0.0), 0.005)
    sol = DERSolver(b.build(), DERSettings())
    m = sol.model
    q = m.q0.copy()
    before = _lengths(m, q)
    q_out, v_out = q.copy(), np.zeros(m.n_dofs)
    n, pushed = _push(sol, q_out, v_out, collide_vertices_serial)
    assert n == 1 and np.flatnonzero(pushed).tolist() == [6]
    pushed_only = q.copy()
    pushed_only[m.vertex_dof[6]:m.vertex_dof[6] + 3] = q_out[m.vertex_dof[6]:m.vertex_dof[6] + 3]
    reach = np.abs(_lengths(m, pushed_only) - before).max()
    move = np.linalg.norm(m.positions(q_out) - m.positions(q), axis=1)
    move[6] = 0.0
    print(f"\nfollow that cannot be met: largest move {move.max() / reach:.2f} times the "
          "push's length change")
    assert 0.0 < move.max() <= FOLLOW_ITERATIONS * reach * (1 + 1e-12)
    after = _lengths(m, q_out)
    np.testing.assert_allclose(after[6:], before[6:], rtol=FOLLOW_TOLERANCE)
    assert np.abs(after[:6] / before[:6] - 1).max() > 1e-3      # the part that cannot
