"""Segment-segment contacts of the csm solver (section 6 of the paper) on the shared grid and
capsule projection of collision/: momentum kept, colliding particles three times heavier in
shape matching, and strings that no longer pass through each other or themselves (measured:
the crossing point, and jumps of the writhe, which changes by about 2 when a string passes
through itself)."""
import dataclasses

import numpy as np
import pytest
from csm_helpers import MAT

import strandlab as sl
from strandlab.collision.self_contact import segment_closest
from strandlab.csm import CSMSettings, CSMSolver
from strandlab.csm.contact import drop_torn
from strandlab.csm.kernels import shape_match
from strandlab.geometry import writhe
from strandlab.scenes import get_scene
from strandlab.sim.shapes import line


def _crossing(gap=0.001, settings=None, drop_speed=0.0):
    """String A along x, clamped at both ends; string B along y, ``gap`` [m] above it
    (centre lines), falling at ``drop_speed`` [m/s]; radius 2 mm (contact at 4 mm)."""
    b = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    a = b.add_strand(line((-0.2, 0.0, 0.0), (0.2, 0.0, 0.0), 20), material=MAT, name="A")
    b.attach_to_frame(a, b.add_frame((-0.2, 0.0, 0.0)), end=0)
    b.attach_to_frame(a, b.add_frame((0.2, 0.0, 0.0)), end=-1)
    pts = line((0.01, -0.19, gap), (0.01, 0.21, gap), 20)   # crossing mid-segment
    b.add_strand(pts, material=MAT, name="B",
                 velocities=np.tile([0.0, 0.0, -drop_speed], (len(pts), 1)))
    return CSMSolver(b.build(), settings or CSMSettings())


def _momenta(x, dx, m):
    return (m[:, None] * dx).sum(axis=0), (m[:, None] * np.cross(x, dx)).sum(axis=0)


def test_contact_projection_keeps_momentum_and_weights_colliding_particles_three_times():
    sol = _crossing(gap=0.001)                       # 3 mm inside contact distance
    st = sol.state()
    m = sol.model.arrays
    x0 = st.x.copy()
    weight = np.ones(len(x0))
    n = sol.contacts.find(st.arrays.x, x0, st.arrays.torn)
    assert n >= 1
    sol.contacts.project(st.arrays.x, m.inv_mass, weight, st.arrays.torn, 1)
    dx = st.x - x0
    moved = np.nonzero(np.abs(dx).max(axis=1) > 0)[0]
    # the two free particles of B at the crossing and A's two (free) particles there
    assert len(moved) == 4 and np.all(weight[moved] == 3.0)
    assert np.all(weight[np.setdiff1d(np.arange(len(x0)), moved)] == 1.0)
    lin, ang = _momenta(x0, dx, m.mass)
    scale = (m.mass[:, None] * np.abs(dx)).sum()
    assert np.abs(lin).max() < 1e-12 * scale
    assert np.abs(ang).max() < 1e-12 * scale
    # pushed out to contact distance along z (the closest points lie on the two centres)
    mid_a = 0.5 * (st.x[10] + st.x[11])
    mid_b = 0.5 * (st.x[30] + st.x[31])
    assert mid_b[2] - mid_a[2] == pytest.approx(0.004, rel=1e-9)


def test_heavier_particles_move_less_in_shape_matching():
    # the paper makes colliding particles three times heavier so that shape matching barely
    # moves them back into the contact: a displaced particle of weight 3 is moved back less
    out = []
    for w in (1.0, 3.0):
        sol = _crossing(gap=0.05)
        st = sol.state()
        st.arrays.x[31, 2] += 0.01                   # a bump in B
        sol.scratch.sm_weight[:] = 1.0
        sol.scratch.sm_weight[31] = w
        x0 = st.x.copy()
        shape_match(21, 41, sol.model.arrays, st.arrays, sol.scratch, 1.0)
        out.append(abs(st.x[31, 2] - x0[31, 2]))
        assert sol.scratch.sm_mass[31] == w * sol.model.arrays.mass[31]
    assert out[1] < 0.7 * out[0]


def test_a_step_makes_the_colliding_particles_three_times_heavier_in_shape_matching():
    sol = _crossing(gap=0.003)
    st = sol.state()
    sol.step(st, st, 0.005)
    sc, m = sol.scratch, sol.model.arrays
    heavy = np.nonzero(sc.sm_weight > 1.0)[0]
    assert set(heavy) >= {30, 31} and np.all(sc.sm_weight[heavy] == 3.0)
    assert np.all(sc.sm_mass[heavy] == 3.0 * m.mass[heavy] * np.where(m.inv_mass[heavy] > 0,
                                                                       1.0, 1e6))


def test_torn_segments_are_no_contacts():
    pairs = np.array([[0, 5], [1, 6], [2, 7], [3, 8]], dtype=np.int64)
    normals = np.arange(12.0).reshape(4, 3)
    torn = np.zeros(10, dtype=np.bool_)
    torn[[1, 8]] = True
    n = drop_torn(pairs, normals, 4, torn)
    assert n == 2 and pairs[:2].tolist() == [[0, 5], [2, 7]]
    assert normals[:2].tolist() == [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]


def _signed_gap(x):
    """Distance [m] between the centre lines of A (particles 0-20) and B (21-41) where they
    are closest, negative when B's point there is below A's."""
    best = (np.inf, 0.0)
    for i in range(20):
        for j in range(21, 41):
            s, t = segment_closest(x, i, i + 1, j, j + 1)
            p = (1 - s) * x[i] + s * x[i + 1]
            q = (1 - t) * x[j] + t * x[j + 1]
            d = np.linalg.norm(q - p)
            if d < best[0]:
                best = (d, np.sign(q[2] - p[2]))
    return best[0] * best[1]


@pytest.mark.parametrize("collide", [True, False])
def test_crossing_strings_do_not_pass_through_each_other(collide):
    # B falls at 1 m/s onto A, which sags under it; with contacts B stays on top
    sol = _crossing(gap=0.01, drop_speed=1.0,
                    settings=CSMSettings(segment_collision=collide, damping=1.0))
    st = sol.state()
    gaps = []
    for _ in range(60):
        sol.step(st, st, 0.005)
        gaps.append(_signed_gap(st.x))
    if collide:
        assert min(gaps) > 0.9 * 0.004             # B stays on top, a contact distance away
        assert st.x[10, 2] < -0.005                # and it weighs A down
    else:
        assert gaps[-1] < -0.05                    # without contacts B falls through


def _writhe_jumps(name, frames, collide, **kw):
    sim = get_scene(name, frames=frames, **kw)
    sim = dataclasses.replace(sim, settings=dataclasses.replace(sim.settings,
                                                                segment_collision=collide))
    sol = sim.make_solver()
    st = sol.state()
    w = [writhe(st.x)]
    for _ in range(frames * sim.steps_per_frame):
        sol.step(st, st, sim.dt)
        w.append(writhe(st.x))
    return np.abs(np.diff(w)).max(), np.array(w)


def test_twisted_loop_does_not_pass_through_itself():
    # Fig. 6a run on to 6 s: without contacts the loop passes through itself once it forms
    # (the writhe jumps by about 2 in one step); with them it keeps coiling
    jump, w = _writhe_jumps("csm_twist_loop", 600, True)
    assert jump < 0.2
    assert w.max() > 2.0
    jump, w = _writhe_jumps("csm_twist_loop", 400, False)
    assert jump > 1.5


def test_telephone_cord_coils_do_not_slip_through_each_other():
    # Fig. 6b: without contacts the coils slip through each other as they form (the writhe
    # jumps by about 2 in a step, twice in 5 s); with them it changes smoothly
    jump, _ = _writhe_jumps("csm_telephone_cord", 500, True)
    assert jump < 0.2
    jump, _ = _writhe_jumps("csm_telephone_cord", 300, False)
    assert jump > 1.5
