"""Per-step cost of the DER solver: serial twins of the kernels give the parallel kernels' bits,
a step allocates no arrays, the state checks name the offending edge or vertex, and only the
held coordinates of moving frames are driven."""
import tracemalloc

import numpy as np
import pytest

import strandlab as sl
from strandlab.collision.penalty import contact_terms, contact_terms_serial
from strandlab.der import DERSettings, DERSolver
from strandlab.der.contact import collide_vertices, collide_vertices_serial
from strandlab.der.solver import check_state
from strandlab.rods import kernels as K
from strandlab.sim.shapes import line
from strandlab.sim.validate import SimulationDiverged

MAT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005, shear_modulus=1e6 / 3)


def _rods(n_strands=3, n=12, sphere=False, seed=0):
    rng = np.random.default_rng(seed)
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    for k in range(n_strands):
        t = np.linspace(0, 3, n)
        pts = np.stack([0.1 * np.cos(t + k), 0.1 * np.sin(t + k), 0.3 - 0.05 * t], axis=1)
        b.add_strand(pts + 1e-3 * rng.normal(size=pts.shape), material=MAT)
        b.attach_to_frame(k, b.add_frame(pts[0]), end=0)
    if sphere:
        b.add_sphere((0, 0, 0.1), 0.12, friction=0.4)
    return b.build()


def test_serial_twins_compute_the_parallel_kernels_bits():
    # two strands after a few steps (curved, twisted, frames transported); each twin is called
    # on the same inputs as its parallel kernel and must agree bit for bit
    sol = DERSolver(_rods(sphere=True))
    st = sol.state()
    for _ in range(5):
        sol.step(st, st, 5e-3)
    m, sy = sol.model, sol.system
    q = st.q + 1e-4 * np.random.default_rng(1).normal(size=st.q.shape)
    sy.load_frames(st.q, st.a1, st.ref_twist)
    outs = []
    for tf, rt in ((K.transport_frames, K.reference_twists),
                   (K.transport_frames_serial, K.reference_twists_serial)):
        a1, a2, tw = st.a1.copy(), np.zeros((m.n_edges, 3)), np.zeros(m.n_bend)
        tf(st.q, q, sy.frames.edge_dofs, a1, a2)
        rt(q, m.bend_dofs, m.bend_edges, a1, st.ref_twist, tw)
        outs.append((a1, a2, tw))
    for x, y in zip(*outs):
        np.testing.assert_array_equal(x, y)
    a1, a2, tw = outs[0]
    nb, ne = m.n_bend, m.n_edges
    res = []
    for bt, sk in ((K.bend_twist_terms, K.stretch_terms),
                   (K.bend_twist_terms_serial, K.stretch_terms_serial)):
        e, g, h = np.zeros(nb), np.zeros((nb, 11)), np.zeros((nb, 11, 11))
        es, gs, hs = np.zeros(ne), np.zeros((ne, 6)), np.zeros((ne, 6, 6))
        bad = bt(q, m.bend_dofs, m.bend_edges, a1, a2, tw, m.rest_curvature, m.rest_twist,
                 m.voronoi_length, m.bend_stiffness, m.twist_stiffness, e, g, h, True)
        bad += sk(q, m.stretch_dofs, m.rest_length, m.stretch_stiffness, True, es, gs, hs, True)
        res.append((bad, e, g, h, es, gs, hs))
    assert res[0][0] == res[1][0] == 0
    for x, y in zip(res[0][1:], res[1][1:]):
        np.testing.assert_array_equal(x, y)
    # the contact penalty's kernels, on vertices pushed into the sphere
    ct = sol.system.contact
    assert ct is not None
    qc = st.q.copy()
    qc[m.vertex_dof[~m.fixed[m.vertex_dof]]] *= 0.9
    pen = []
    for kern in (contact_terms, contact_terms_serial):
        n = len(ct.dofs)
        e, g, h = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
        active = kern(qc, ct.dofs, ct.radius, ct.stiffness, True, ct.planes, ct.spheres,
                      ct.capsules, e, g, h, True)
        pen.append((active, e, g, h))
    assert pen[0][0] == pen[1][0] > 0
    for x, y in zip(pen[0][1:], pen[1][1:]):
        np.testing.assert_array_equal(x, y)
    # contacts: push every vertex into the sphere's reach
    qs = [st.q.copy(), st.q.copy()]
    vs = [st.v.copy(), st.v.copy()]
    for kern, qq, vv in zip((collide_vertices, collide_vertices_serial), qs, vs):
        nv = m.n_vertices
        kern(m.strand_vertex_start, m.strand_edge_start, m.edge_v0, m.edge_v1, m.vertex_dof,
             m.fixed, m.vertex_radius, m.vertex_friction, m.planes, m.spheres, m.capsules,
             m.collider_friction, 5e-3, 0.5, np.full(m.n_vertices, 1e3), m.mass, 8, st.q, qq,
             vv, np.zeros((nv, 3)), np.zeros(nv), np.zeros((nv, 3)), np.zeros(nv),
             np.zeros(m.n_edges), np.zeros(nv, dtype=np.bool_), np.zeros((m.n_edges, 3)),
             np.zeros(m.n_edges), np.zeros(m.n_edges), np.zeros(m.n_edges))
    np.testing.assert_array_equal(qs[0], qs[1])
    np.testing.assert_array_equal(vs[0], vs[1])


def test_a_step_allocates_no_arrays():
    # 40 strands of 30 vertices: 4760 DOFs, one vector is 38 kB; a step with gravity, a still
    # clamp per strand and the state checks allocates only small Python objects
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    for k in range(40):
        s = b.add_strand(line((0, 0.01 * k, 0), (0.5, 0.01 * k, 0), 29), material=MAT)
        b.attach_to_frame(s, b.add_frame((0, 0.01 * k, 0)), end=0)
    sol = DERSolver(b.build())
    st = sol.state()
    sol.step(st, st, 1e-3)
    tracemalloc.start()
    try:
        sol.step(st, st, 1e-3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16_000, peak


def test_check_state_finds_the_worst_edge_and_vertex():
    sol = DERSolver(_rods(n_strands=2, n=6))
    m = sol.model
    st = sol.state()
    q, v = st.q.copy(), np.zeros_like(st.q)
    args = (m.vertex_dof, m.edge_v0, m.edge_v1, m.rest_length)
    bad, e, _, p, _ = check_state(q, v, *args, 0.5, 10.0)
    assert (bad, e, p) == (-1, -1, -1)
    # stretch edge 7 (strand 1) by 60 %: moving its second vertex along the edge
    d0, d1 = m.vertex_dof[m.edge_v0[7]], m.vertex_dof[m.edge_v1[7]]
    q[d1:d1 + 3] += 0.6 * (q[d1:d1 + 3] - q[d0:d0 + 3])
    bad, e, strain, p, _ = check_state(q, v, *args, 0.5, 10.0)
    assert (bad, e, p) == (-1, 7, -1) and strain == pytest.approx(0.6, rel=1e-12)
    assert check_state(q, v, *args, -1.0, 10.0)[1] == -1          # strain not checked
    v[m.vertex_dof[9] + 2] = -20.0
    assert check_state(q, v, *args, 0.5, 10.0)[3] == 9
    v[m.edge_dof[3]] = np.nan
    assert check_state(q, v, *args, 0.5, 10.0)[0] == m.edge_dof[3]
    st.q[...] = q
    with pytest.raises(SimulationDiverged, match="edge strain 0.6 exceeds max_strain = 0.5 at "
                                                 "edge 7"):
        sol._check(st)


def test_only_moving_frames_are_driven():
    # strand 0 clamped to a still frame, strand 1 to a frame that turns about the strand's
    # axis: the drive holds strand 0's clamp exactly and turns strand 1's clamped edge
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    s0 = b.add_strand(line((0, 0, 0), (1, 0, 0), 8), material=MAT)
    s1 = b.add_strand(line((0, 1, 0), (1, 1, 0), 8), material=MAT)
    b.attach_to_frame(s0, b.add_frame((0, 0, 0)), end=0)
    b.attach_to_frame(s1, b.add_frame((0, 1, 0), angular_velocity=(np.pi, 0, 0)), end=0)
    sol = DERSolver(b.build(), DERSettings(damping=5.0))
    m = sol.model
    assert list(sol._moving_frames) == [1]
    st = sol.state()
    q0 = st.q.copy()
    for _ in range(50):                          # half a second: a quarter turn
        sol.step(st, st, 1e-2)
    e0, e1 = m.strand_edge_start[0], m.strand_edge_start[1]
    assert st.q[m.edge_dof[e0]] == q0[m.edge_dof[e0]]
    assert st.q[m.edge_dof[e1]] - q0[m.edge_dof[e1]] == pytest.approx(np.pi / 2, abs=1e-12)
    held = m.vertex_dof[m.drive_vertex][:, None] + np.arange(3)
    np.testing.assert_array_equal(st.q[held], q0[held])
