"""Contact of the mixed model's meshes: two solids dropped on each other and a cloth dropped on
a solid never interpenetrate (penalty in the solve, strandlab.collision.mesh_contact), and the
floor holds them."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.collision.mesh_contact import MeshContactTerm
from strandlab.mixed import MixedSettings, MixedSolver
from strandlab.scenes.meshing import box_tets, grid_triangles
from strandlab.scenes.mixed_objects import mixed_tunnel
from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

RUBBER = SolidMaterial(young_modulus=2e5, poisson_ratio=0.3, density=500.0)


def _cube(lo, size, n=2, name="cube"):
    x, t = box_tets(lo, np.add(lo, size), (n, n, n))
    mb = SimplicialBuilder(x, name=name)
    mb.add_solids(t, material=RUBBER)
    return mb.build()


def _inside(p, x, tets):
    """Which points ``p`` [n, 3] lie strictly inside a tetrahedron of ``(x, tets)``."""
    a = x[tets[:, 0]]
    m = np.stack([x[tets[:, k]] - a for k in (1, 2, 3)], axis=2)        # [K, 3, 3]
    inv = np.linalg.inv(m)
    b = np.einsum("kij,nkj->nki", inv, p[:, None, :] - a[None])          # [n, K, 3]
    w = np.concatenate([b, 1.0 - b.sum(axis=2, keepdims=True)], axis=2)
    return np.any(np.all(w > 1e-9, axis=2), axis=1)


@pytest.mark.slow
def test_two_solids_dropped_on_each_other_never_interpenetrate():
    lower = _cube((0.0, 0.0, 0.0), 0.04, name="lower")
    upper = _cube((0.008, 0.005, 0.05), 0.03, name="upper")
    b = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(lower)
    b.add_simplicial_mesh(upper)
    b.add_plane((0.0, 0.0, -0.001), (0.0, 0.0, 1.0))
    sol = MixedSolver(b.build(), MixedSettings(damping=2.0))
    s = sol.state()
    n0 = lower.n_vertices
    top_start = []
    for _ in range(60):
        sol.step(s, s, 0.005)
        x = sol.output(s).extra
        xa, xb = x[:n0], x[n0:]
        assert not _inside(xb, xa, lower.tets).any()
        assert not _inside(xa, xb, upper.tets).any()
        top_start.append(xb[:, 2].min())
    # the upper cube has landed and rests on the lower one, a contact thickness above it
    assert top_start[0] > 0.045 and abs(top_start[-1] - top_start[-5]) < 2e-4
    assert 0.040 < top_start[-1] < 0.046
    assert x[:, 2].min() > -0.002


@pytest.mark.slow
def test_cloth_dropped_on_a_solid_stays_outside():
    cube = _cube((0.0, 0.0, 0.0), 0.04, name="block")
    n = 8
    g = np.linspace(-0.01, 0.05, n + 1)
    gx, gy = np.meshgrid(g, g)
    xc = np.c_[gx.ravel(), gy.ravel(), np.full(gx.size, 0.046)]
    mb = SimplicialBuilder(xc, name="cloth")
    mb.add_shells(grid_triangles(n, n), material=ShellMaterial(2e4, 0.3, 2e-4, 300.0))
    b2 = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    cb = SimplicialBuilder(cube.vertices, name="block")
    cb.add_solids(cube.tets, material=RUBBER)
    cb.hold(np.nonzero(cube.vertices[:, 2] < 1e-9)[0])
    b2.add_simplicial_mesh(cb.build())
    b2.add_simplicial_mesh(mb.build())
    sol = MixedSolver(b2.build(), MixedSettings(damping=2.0))
    s = sol.state()
    nv = cube.n_vertices
    for _ in range(40):
        sol.step(s, s, 0.005)
        x = sol.output(s).extra
        assert not _inside(x[nv:], x[:nv], cube.tets).any()
    cloth = x[nv:]
    over = (cloth[:, 0] > 0.005) & (cloth[:, 0] < 0.035) & (cloth[:, 1] > 0.005) & \
        (cloth[:, 1] < 0.035)
    # the middle of the cloth lies on the block's top, the rim has draped below it
    assert np.all(cloth[over, 2] > 0.040) and np.all(cloth[over, 2] < 0.0415 + 0.002)
    assert cloth[:, 2].min() < 0.035


def test_kept_pair_list_holds_every_pair_in_contact():
    # the pairs are kept over steps (a Verlet list): after every step, each pair closer than
    # the contact thickness is in the list, no vertex has left the margin, and the list was
    # rebuilt far less often than once a step
    sim = mixed_tunnel(rods=False)           # cloth collapsing on the floor
    sol = MixedSolver(sim.scene, sim.settings)
    mc = sol.system.mesh_contact
    fresh = MeshContactTerm(triangles=mc.triangles, vertex_dofs=mc.vertex_dofs,
                            stiffness=mc.stiffness, dhat=mc.dhat)
    s = sol.state()
    close_steps = 0
    for _ in range(30):
        sol.step(s, s, sim.dt)
        assert mc.moved(s.q) <= mc.margin
        fresh.update(s.q)
        kept = {tuple(p) for p in mc.pair_vertices.tolist()}
        assert all(tuple(p) in kept for p in fresh.pair_vertices.tolist())
        close_steps += len(fresh.pair_vertices) > 0
    assert close_steps > 5                        # the cloth folds onto itself
    assert sol.contact_rebuilds < 30


def test_moved_measures_the_drift_since_the_update():
    term = MeshContactTerm(triangles=[[0, 1, 2]], vertex_dofs=[0, 3, 6, 9], stiffness=1.0,
                           dhat=0.01)
    q = np.array([0.0, 0, 0, 1, 0, 0, 0, 1, 0, 0.3, 0.3, 0.5])
    term.update(q, max_displacement=0.02)
    assert term.margin == 0.02 and term.reach == pytest.approx(0.05)
    assert term.moved(q) == 0.0
    q2 = q.copy()
    q2[9:12] += [0.003, -0.004, 0.0]
    q2[0] -= 0.001
    assert term.moved(q2) == pytest.approx(0.005)
    q2[4] = np.nan
    assert term.moved(q2) == np.inf
