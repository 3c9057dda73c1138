"""The chain-shape-matching scenes with rigid particle clusters: the hanging bridge of Fig. 9
(boards tied with ropes, torn by falling crates) and the mobile of Fig. 6c (an object rolling
back and forth on its twisted string, a torsion pendulum), each with what it shows, measured."""
import numpy as np
from scipy.spatial import cKDTree

from strandlab.scenes import get_scene

CONTACT = 0.02            # two cluster particles (spheres of 1 cm) touch at 2 cm


def _bridge_run(**kw):
    """Run the bridge; returns the scene, solver, state and per step: time, the segments torn
    so far, the crates' centres [2, 3], the least distance between a crate particle and a
    board particle, the crates' largest speed, the boards' centres [B, 3], each rope's largest
    stored stress over its rupture stress, and the largest stretch of an untorn segment past
    its maximum length ``|e| / L_max - 1``."""
    sim = get_scene("csm_bridge", **kw)
    sol = sim.make_solver()
    st = sol.state()
    m = sol.model
    ar = m.arrays
    cs = ar.cluster_start
    nb = sim.params["boards"]
    boards, crates = np.arange(cs[0], cs[nb]), np.arange(cs[nb], cs[-1])
    v0 = np.nonzero(ar.vertex_edge >= 0)[0]              # first vertex of every segment
    se = m.strand_edge_start
    strand_of = np.searchsorted(se, np.arange(se[-1]), side="right") - 1
    rec = []
    for _ in range(sim.frames):
        sol.step(st, st, sim.dt)
        a = st.arrays
        gap = cKDTree(st.x[boards]).query(st.x[crates])[0].min()
        centres = np.array([st.x[cs[c]:cs[c + 1]].mean(axis=0) for c in (nb, nb + 1)])
        speed = np.linalg.norm(st.v[crates], axis=1).max()
        board_c = np.array([st.x[cs[c]:cs[c + 1]].mean(axis=0) for c in range(nb)])
        sigma = a.tension * (1 + a.plastic_strain) / ar.area0
        ratio = np.zeros(len(se) - 1)
        np.maximum.at(ratio, strand_of, np.where(a.torn, 0.0, sigma / a.rupture))
        length = np.linalg.norm(st.x[v0 + 1] - st.x[v0], axis=1)
        l_max = ar.rest_length * (1 + a.plastic_strain + np.maximum(sigma, 0) / ar.young)
        stretch = np.where(a.torn, 0.0, length / l_max - 1).max()
        rec.append((st.time, np.nonzero(a.torn)[0], centres, gap, speed, board_c, ratio,
                    stretch))
    return sim, sol, st, rec


def test_falling_crates_tear_the_bridge_ropes_and_fall_through():
    sim, sol, st, rec = _bridge_run(frames=150)
    t = np.array([r[0] for r in rec])
    gap = np.array([r[3] for r in rec])
    n_torn = np.array([len(r[1]) for r in rec])
    landed = t[np.argmax(gap < CONTACT * 1.05)]          # the crates reach the boards
    k_first = int(np.argmax(n_torn > 0))
    first = t[k_first]
    assert n_torn[-1] > 0
    # nothing tears under the bridge's own weight; the crates' impact tears the ropes
    assert landed < first < landed + 0.2
    se = sol.model.strand_edge_start
    ropes = len(se) - 1
    # the ropes that tear first are the most stressed (against their rupture stresses) just
    # before; the most stressed is a rope at a post, which holds its half of the bridge
    ratio = rec[k_first - 1][6]
    first_ropes = np.searchsorted(se, rec[k_first][1], side="right") - 1
    assert ratio[first_ropes].max() > 0.97 * ratio.max()
    assert ratio.argmax() in (0, ropes // 2 - 1, ropes // 2, ropes - 1)
    # one rope at a time: the ropes and boards are one structure, whose tension goes with the
    # first tear (at most one per substep)
    assert np.all(np.diff(n_torn) <= sim.params["substeps"])
    assert len(np.unique(t[np.nonzero(np.diff(n_torn))[0] + 1])) >= 2
    # each tear is in a different rope, on both sides of the bridge
    torn = rec[-1][1]
    strands = np.searchsorted(se, torn, side="right") - 1
    assert len(set(strands)) == len(torn)
    y = [sol.scene.strands[s].points[0, 1] for s in strands]
    assert min(y) < 0 < max(y)
    # until the first tear the boards hold the crates: no particle of a crate inside a board
    # by more than 10 % of the contact distance
    assert gap[t < first].min() > 0.9 * CONTACT
    # until then the ropes stretch past their maximum length by less than 2 %
    assert max(r[7] for r in rec[:k_first]) < 0.02
    # then the crates fall through: 0.5 m below the lowest board's start
    z_board = sim.params["height"] - sim.params["sag"]
    assert np.all(rec[-1][2][:, 2] < z_board - 0.5)
    # and the torn bridge falls: its boards hang at least 0.2 m lower on average
    assert rec[0][5][:, 2].mean() - rec[-1][5][:, 2].mean() > 0.2


def test_strong_ropes_hold_the_crates_on_the_bridge():
    sim, sol, st, rec = _bridge_run(frames=300, rupture=4e7)
    t = np.array([r[0] for r in rec])
    assert len(rec[-1][1]) == 0
    gap = np.array([r[3] for r in rec])
    assert gap.min() > 0.95 * CONTACT
    # the ropes stretch past their maximum length by less than 5 % in the impact, and by
    # less than 0.5 % once the crates rest
    stretch = np.array([r[7] for r in rec])
    assert stretch.max() < 0.05
    # the crates come to rest on the boards (above them, not through them): their heights
    # vary by less than 5 mm over the last second
    z = np.array([r[2][:, 2] for r in rec])
    late = t > t[-1] - 1.0
    assert np.ptp(z[late], axis=0).max() < 0.005
    assert stretch[late].max() < 0.005
    cs = sol.model.arrays.cluster_start
    boards = st.x[cs[0]:cs[sim.params["boards"]]]
    for c in rec[-1][2]:
        near = boards[np.linalg.norm(boards[:, :2] - c[:2], axis=1) < 0.1]
        assert len(near) and c[2] > near[:, 2].max()
    # the bridge sags under them and holds: its boards' mean height drops, by less than 5 cm
    drop = rec[0][5][:, 2].mean() - rec[-1][5][:, 2].mean()
    assert 0.0 < drop < 0.05


def _turn(sol, st, x0):
    """Angle [rad] of the mobile's object about the vertical: the line from the centre of its
    particles at rest at x < 0 to the centre of those at x > 0 (``x0`` the rest positions),
    against x."""
    x = st.x[sol.model.n_vertices:]
    d = x[x0[:, 0] > 0].mean(axis=0) - x[x0[:, 0] < 0].mean(axis=0)
    return np.arctan2(d[1], d[0])


def test_mobile_rolls_back_and_forth_as_a_torsion_pendulum():
    # Fig. 6c: the object set turning at 1 rad/s twists its string, whose twist turns it back.
    # A string of uniform twist between a clamp and the object is a torsion spring of
    # stiffness beta / L; with the object's inertia I about the string the angle swings as
    # phi = (omega0 / w) sin(w t), w = sqrt(beta / (L I))
    sim = get_scene("csm_mobile")
    sol = sim.make_solver()
    st = sol.state()
    x = st.x[sol.model.n_vertices:].copy()
    mass = sol.model.arrays.mass[sol.model.n_vertices:]
    r2 = ((x[:, :2] - x[:, :2].mean(axis=0)) ** 2).sum(axis=1)
    inertia = float((mass * r2).sum())
    p = sim.params
    w = np.sqrt(p["twist_stiffness"] / (p["length"] * inertia))
    phi, twist, t = [], [], []
    e = sol.model.strand_edge_start
    for _ in range(sim.frames):
        sol.step(st, st, sim.dt)
        t.append(st.time)
        phi.append(_turn(sol, st, x))
        twist.append(st.arrays.theta[e[1] - 1] - st.arrays.theta[e[0]])
    phi, twist, t = np.unwrap(phi), np.array(twist), np.array(t)
    # the amplitude and the period of the torsion pendulum (quarter and half periods: the
    # largest turn, and the return through zero)
    assert abs(phi.max() / (p["spin"] / w) - 1) < 0.1
    assert abs(t[np.argmax(phi)] / (0.5 * np.pi / w) - 1) < 0.1
    back = t[np.nonzero((phi[:-1] > 0) & (phi[1:] <= 0))[0][0]]
    assert abs(back / (np.pi / w) - 1) < 0.1
    # it rolls back and forth: the angle changes sign, and swings as far the other way
    assert phi.min() < -0.8 * phi.max()
    # the string holds the turn as twist: its ends' frames differ by the object's angle
    assert np.abs(twist + phi).max() < 0.05 * phi.max()
    # with no spin nothing turns
    calm = get_scene("csm_mobile", spin=0.0, frames=100)
    sol = calm.make_solver()
    st = sol.state()
    x = st.x[sol.model.n_vertices:].copy()
    for _ in range(calm.frames):
        sol.step(st, st, calm.dt)
    assert abs(_turn(sol, st, x)) < 1e-9
