"""Contact of the mixed model's meshes: two solids dropped on each other, a cloth dropped on a
solid (also at steps of a frame, where it converges) and a heavy block dropped on a soft held
cloth (whose contacts stiffen) never interpenetrate (penalty in the solve,
strandlab.collision.mesh_contact), and the floor holds them."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.collision.mesh_contact import (
    MAX_STIFFENING,
    ContactStiffnessWarning,
    MeshContactTerm,
)
from strandlab.implicit import NotConvergedWarning
from strandlab.mixed import MixedSettings, MixedSolver
from strandlab.mixed.solver import MARGIN_SHARE, predicted_speed
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


def _cloth_over_block(z, n=8):
    """A held rubber block (4 cm, 2 x 2 x 2 cells) and over it, at height ``z`` [m], a 6 cm
    cloth of ``n x n`` cells; returns the scene and the block."""
    cube = _cube((0.0, 0.0, 0.0), 0.04, name="block")
    g = np.linspace(-0.01, 0.05, n + 1)
    gx, gy = np.meshgrid(g, g)
    xc = np.c_[gx.ravel(), gy.ravel(), np.full(gx.size, z)]
    mb = SimplicialBuilder(xc, name="cloth")
    mb.add_shells(grid_triangles(n, n), material=ShellMaterial(2e4, 0.3, 2e-4, 300.0))
    b2 = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    cb = SimplicialBuilder(cube.vertices, name="block")
    cb.add_solids(cube.tets, material=RUBBER)
    cb.hold(np.nonzero(cube.vertices[:, 2] < 1e-9)[0])
    b2.add_simplicial_mesh(cb.build())
    b2.add_simplicial_mesh(mb.build())
    return b2.build(), cube


def test_cloth_dropped_on_a_solid_stays_outside():
    # it lands at 0.27 m/s, 1.4 mm per step against a contact thickness of 1.06 mm: without
    # the limited moves the inertial first iterate put it through the top face at step 7
    scene, cube = _cloth_over_block(0.046)
    sol = MixedSolver(scene, MixedSettings(damping=2.0))
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


def _lowest_cloth(dt, steps, **settings):
    """The cloth of ``_cloth_over_block`` (3 contact thicknesses over the block, 6 x 6 cells)
    stepped ``steps`` times by ``dt`` [s]: the solver and its cloth's lowest height [m],
    checking at every step that no cloth vertex is inside the block."""
    dhat = 0.1 * 0.01 * np.sqrt(2.0)
    scene, cube = _cloth_over_block(0.04 + 3.0 * dhat, n=6)
    sol = MixedSolver(scene, MixedSettings(damping=2.0, linear_solver="direct", **settings))
    s = sol.state()
    nv = cube.n_vertices
    for _ in range(steps):
        sol.step(s, s, dt)
        x = sol.output(s).extra
        assert not _inside(x[nv:], x[:nv], cube.tets).any()
    return sol, float(x[nv:, 2].min())


def test_a_cloth_dropped_at_frame_steps_converges():
    # steps of a frame: with a penalty as stiff as the block's vertices (550 times the cloth's
    # E t) the inertial first iterate, cut by the move limit, left hundreds of pairs deep in
    # contact and Newton stalled (22 steps kept unconverged in 0.2 s despite 17 cutbacks); the
    # two sides in series push with about the cloth's stiffness
    sol, low = _lowest_cloth(1.0 / 30.0, 6)
    assert sol.unconverged_steps == 0 and low < 0.0395
    # at rest after 1 s, steps of 1/60 s and of 10 ms drape it alike (31.33 mm)
    a, low_a = _lowest_cloth(1.0 / 60.0, 60)
    b, low_b = _lowest_cloth(0.01, 100)
    assert a.unconverged_steps == b.unconverged_steps == 0
    assert low_a == pytest.approx(low_b, abs=1e-4) and 0.030 < low_a < 0.0395


def _block_over_cloth(n=8):
    """A cloth (8 cm, ``n x n`` cells, ``E t`` = 40 N/m) held at its rim and, 3 mm over it, a
    heavy rubber block (4 cm, 2000 kg/m^3, 2 x 2 x 2 cells); returns the scene, the block's
    vertex count and tetrahedra."""
    g = np.linspace(-0.02, 0.06, n + 1)
    gx, gy = (a.ravel() for a in np.meshgrid(g, g))
    mb = SimplicialBuilder(np.c_[gx, gy, np.zeros(gx.size)], name="cloth")
    mb.add_shells(grid_triangles(n, n), material=ShellMaterial(2e5, 0.3, 2e-4, 300.0))
    rim = (np.minimum(gx, gy) < g[0] + 1e-9) | (np.maximum(gx, gy) > g[-1] - 1e-9)
    mb.hold(np.nonzero(rim)[0])
    x, tets = box_tets((0.0, 0.0, 0.003), (0.04, 0.04, 0.043), (2, 2, 2))
    cb = SimplicialBuilder(x, name="block")
    cb.add_solids(tets, material=SolidMaterial(young_modulus=2e5, poisson_ratio=0.3,
                                               density=2000.0))
    b = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(cb.build())
    b.add_simplicial_mesh(mb.build())
    return b.build(), len(x), tets


@pytest.mark.filterwarnings("ignore::strandlab.implicit.NotConvergedWarning")
def test_a_heavy_block_dropped_on_a_soft_cloth_stiffens_the_contact():
    # the sides in series push with about the cloth's stiffness, too soft for a 128 g block:
    # without the stiffening its pairs sink through dhat, and cloth vertices end inside it (28
    # of 60 steps); the pairs that end a step within dhat / 2 double their stiffness
    scene, nb, tets = _block_over_cloth()
    sol = MixedSolver(scene, MixedSettings(damping=2.0, linear_solver="direct"))
    s = sol.state()
    for _ in range(60):
        sol.step(s, s, 0.005)
        x = sol.output(s).extra
        assert not _inside(x[nb:], x[:nb], tets).any()
    mc = sol.system.mesh_contact
    assert sol.contact_stiffened > 0 and mc.stiffening.max() >= 8.0
    # one of the 60 steps ends at 1.3e-5 N after its cutbacks, above its tolerance (the
    # stiffest vertex's rule left two)
    assert sol.unconverged_steps <= 1
    # the cloth carries it: the block's bottom 1.2 cm below where the cloth was held, the
    # cloth's lowest point 2.4 mm below that
    low = x[:nb, 2].min()
    assert -0.015 < low < -0.008 and low - 0.005 < x[nb:, 2].min() < low


def test_a_cloth_pinched_between_held_sheets_is_reported():
    # a free cloth 0.3 contact thicknesses under a held sheet and over another: no stiffness
    # lets its pairs reach half the contact thickness, so the stiffening reaches its cap and the
    # solver warns, once, naming a vertex
    dhat = 1e-3
    b = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    for name, z, held in (("under", 0.0, True), ("cloth", 0.3 * dhat, False),
                          ("over", 0.6 * dhat, True)):
        g = np.linspace(0.0, 0.02, 3)
        gx, gy = (a.ravel() for a in np.meshgrid(g, g))
        mb = SimplicialBuilder(np.c_[gx, gy, np.full(gx.size, z)], name=name)
        mb.add_shells(grid_triangles(2, 2), material=ShellMaterial(1e6, 0.3, 1e-4, 300.0))
        if held:
            mb.hold(np.arange(gx.size))
        b.add_simplicial_mesh(mb.build())
    sol = MixedSolver(b.build(), MixedSettings(damping=2.0, contact_thickness=dhat))
    s = sol.state()
    with pytest.warns(ContactStiffnessWarning, match=r"vertex \d+ of mesh '(cloth|under|over)'"
                      ) as record:
        for _ in range(14):
            sol.step(s, s, 0.01)
    assert len([w for w in record if w.category is ContactStiffnessWarning]) == 1
    assert sol.system.mesh_contact.stiffening.max() == MAX_STIFFENING


def test_kept_pair_list_holds_every_pair_in_contact():
    # the pairs are kept over steps (a Verlet list): after every step, each pair closer than
    # the contact thickness is in the list, no vertex has left the margin, and the list was
    # rebuilt far less often than once a step, never too late (no step taken again), with a
    # margin that grew with the fall and narrowed again as the cloth came to rest
    sim = mixed_tunnel(rods=False)           # cloth collapsing on the floor
    sol = MixedSolver(sim.scene, sim.settings)
    mc = sol.system.mesh_contact
    fresh = MeshContactTerm(triangles=mc.triangles, vertex_dofs=mc.vertex_dofs,
                            stiffness=mc.stiffness, dhat=mc.dhat)
    s = sol.state()
    close_steps = 0
    margins = []
    for _ in range(30):
        sol.step(s, s, sim.dt)
        assert mc.excess(s.q) <= 0.0
        fresh.update(s.q)
        kept = {tuple(p) for p in mc.pair_vertices.tolist()}
        assert all(tuple(p) in kept for p in fresh.pair_vertices.tolist())
        close_steps += len(fresh.pair_vertices) > 0
        margins.append(mc.margin)
    assert close_steps > 5                        # the cloth folds onto itself
    assert sol.contact_rebuilds < 20 and sol.contact_retries == 0
    assert 5.0 * mc.dhat < max(margins) < 0.05 and margins[-1] < 0.5 * max(margins)


def test_each_vertex_keeps_a_margin_for_its_own_motion():
    # a cloth falling onto a held block: at each rebuild a vertex's margin is dhat / 2 plus
    # twice its predicted displacement, at least MARGIN_SHARE of the fastest's, so the still
    # block's vertices have the smallest and the list holds fewer pairs than one margin for
    # all (the largest) would; the steps end where they do with that wider list
    scene, cube = _cloth_over_block(0.046)
    settings = MixedSettings(damping=2.0)
    sol, ref = MixedSolver(scene, settings), MixedSolver(scene, settings)
    mc, rmc = sol.system.mesh_contact, ref.system.mesh_contact
    wide = rmc.update
    rmc.update = lambda q, max_displacement=0.0: wide(q, max_displacement=np.max(
        max_displacement))
    s, r = sol.state(), ref.state()
    nv = cube.n_vertices
    listed = [0, 0]
    checked = 0
    for _ in range(30):
        before = sol.contact_rebuilds
        sol.step(s, s, 0.005)
        ref.step(r, r, 0.005)
        if sol.contact_rebuilds > before:
            d = sol._ahead
            want = 0.5 * mc.dhat + 2.0 * np.maximum(d, MARGIN_SHARE * d.max())
            np.testing.assert_allclose(mc.margins, want, rtol=1e-15)
            assert np.all(mc.margins[:nv] == mc.margins.min()) and d.max() > 0.0
            checked += 1
        listed[0] += mc.n_stencils
        listed[1] += rmc.n_stencils
        np.testing.assert_allclose(s.q, r.q, rtol=0, atol=1e-9)
    assert checked >= 3 and sol.contact_retries == 0 and ref.contact_retries == 0
    assert listed[0] < 0.8 * listed[1]


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


def test_cloth_falling_fast_onto_a_solid_stays_outside():
    # thrown down at 1 m/s (4 contact thicknesses per 5 ms step) from just above the block:
    # it never enters it (point in tetrahedron, every step) and lies on its top
    scene, cube = _cloth_over_block(0.0425, n=6)
    sol = MixedSolver(scene, MixedSettings(damping=2.0))
    s = sol.state()
    nv = cube.n_vertices
    s.v[3 * nv + 2::3] = -1.0
    start = sol.output(s).extra[nv:]
    over = np.all((start[:, :2] > 0.005) & (start[:, :2] < 0.035), axis=1)   # 3 x 3
    cut = 0
    for _ in range(8):
        sol.step(s, s, 0.005)
        cut += sol.last_info.limited_moves
        x = sol.output(s).extra
        assert not _inside(x[nv:], x[:nv], cube.tets).any()
    cloth = x[nv:]
    assert over.sum() == 9 and np.all(cloth[over, 2] > 0.04)
    assert cut > 0            # the contact cut moves (without, the cloth tears at step 1)


def test_a_step_leaving_the_margin_is_taken_again_with_a_wider_list():
    # a cloth 3 contact thicknesses over the block, beyond the first list's reach (2 dhat),
    # falls 11 mm in its first step of 1/30 s, from rest (no displacement predicted): it left
    # the margin, so the step is taken again from its start with the list rebuilt there (a
    # margin of dhat / 2 plus twice the distance moved); the result is that of a list wide
    # enough from the start, and the cloth stays out of the block
    dhat = 0.1 * 0.01 * np.sqrt(2.0)          # a tenth of the median surface edge
    scene, cube = _cloth_over_block(0.04 + 3.0 * dhat, n=6)
    # (its step kept, and warned, as it ends at the cap of 8 iterations: no cutback)
    settings = MixedSettings(damping=2.0, linear_solver="direct", max_iterations=8,
                             cutbacks=0)
    sol = MixedSolver(scene, settings)
    mc = sol.system.mesh_contact
    assert mc.dhat == pytest.approx(dhat) and mc.margin == pytest.approx(0.5 * dhat)
    assert mc.n_stencils == 0
    s = sol.state()
    h = 1.0 / 30.0
    with pytest.warns(NotConvergedWarning, match="max_iterations = 8 reached"):
        sol.step(s, s, h)
    assert sol.contact_retries == 1 and sol.contact_rebuilds == 1
    moved = mc.moved(s.q)
    assert 0.5 * dhat < moved <= mc.margin
    nv = cube.n_vertices
    x = sol.output(s).extra
    assert not _inside(x[nv:], x[:nv], cube.tets).any()
    # the same step with a list kept 3 cm wide throughout (never narrowed, never retaken)
    ref = MixedSolver(scene, settings)
    rmc = ref.system.mesh_contact
    narrow = rmc.update
    rmc.update = lambda q, max_displacement=0.0: narrow(q, max_displacement=np.maximum(
        max_displacement, 0.03))
    rmc.update(ref.model.q0)
    r = ref.state()
    with pytest.warns(NotConvergedWarning, match="max_iterations = 8 reached"):
        ref.step(r, r, h)
    assert ref.contact_retries == 0 and rmc.margin > mc.margin
    np.testing.assert_allclose(s.q, r.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(s.v, r.v, rtol=0, atol=1e-9 / h)


def test_steps_past_the_margin_four_times_stop_the_run(monkeypatch):
    from strandlab.mixed import solver as mixed_solver

    monkeypatch.setattr(mixed_solver, "CONTACT_RETRIES", 0)
    scene, _ = _cloth_over_block(0.04 + 0.3 * 0.01 * np.sqrt(2.0), n=6)
    sol = MixedSolver(scene, MixedSettings(damping=2.0))
    s = sol.state()
    with pytest.raises(sl.SimulationDiverged, match="beyond its margin in the contact list "
                                                    "after 0 wider tries"):
        sol.step(s, s, 1.0 / 30.0)


def test_predicted_speed_extrapolates_the_last_change():
    v = np.array([1.0, 0.0, 0.0, 0.0, 3.0, 4.0, 7.0])
    v_prev = np.array([3.0, 0.0, 0.0, 0.0, 1.0, 2.0, -50.0])
    # vertex 0: |2 (1, 0, 0) - (3, 0, 0)| = 1; vertex 1: |(0, 5, 6)|; the angle is no vertex
    assert predicted_speed(v, v_prev, 2) == pytest.approx(np.sqrt(61.0), rel=1e-15)
    assert predicted_speed(v, v_prev, 1) == pytest.approx(1.0, rel=1e-15)
    out = np.full(2, np.nan)
    assert predicted_speed(v, v_prev, 2, out=out) == pytest.approx(np.sqrt(61.0), rel=1e-15)
    np.testing.assert_allclose(out, [1.0, np.sqrt(61.0)], rtol=1e-15)
    with pytest.raises(ValueError, match=r"out must have shape \(2,\)"):
        predicted_speed(v, v_prev, 2, out=np.zeros(3))
