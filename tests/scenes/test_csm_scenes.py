"""The chain-shape-matching scenes (Rungjiratananon et al. 2011, Figs. 6-8), each with the
quantity it shows, measured."""
import numpy as np

from strandlab.geometry import writhe
from strandlab.scenes import get_scene


def _run(sim, frames=None, each=None):
    """Step ``sim`` for ``frames`` frames; ``each(solver, state)`` after every step."""
    solver = sim.make_solver()
    st = solver.state()
    for _ in range((frames or sim.frames) * sim.steps_per_frame):
        solver.step(st, st, sim.dt)
        if each is not None:
            each(solver, st)
    return solver, st


def _twist(solver, st, s=0):
    """Twist of strand ``s``'s material frames from end to end [rad]."""
    e = solver.model.strand_edge_start
    return st.arrays.theta[e[s + 1] - 1] - st.arrays.theta[e[s]]


def _max_writhe(sim, frames):
    out = []
    _run(sim, frames, lambda sol, st: out.append(writhe(st.x)) if st.step % 10 == 0 else None)
    return np.max(np.abs(out))


def test_twisted_string_forms_a_loop():
    # Fig. 6a: turning one clamped end stores twist that buckles the string into a loop;
    # without turning it stays flat (its small initial bump has no writhe)
    assert _max_writhe(get_scene("csm_twist_loop"), 300) > 0.8
    assert _max_writhe(get_scene("csm_twist_loop", turns=0.0), 100) < 0.05


def test_telephone_cord_coils():
    assert _max_writhe(get_scene("csm_telephone_cord", frames=250), 250) > 0.5
    assert _max_writhe(get_scene("csm_telephone_cord", turns=0.0), 100) < 0.05


def test_twist_spreads_by_the_torsional_rigidity():
    # Figs. 6d-e: uniform regions spread the turn evenly; wider regions on the second half of
    # the other string (more torsional rigidity there) leave it less of the twist
    sim = get_scene("csm_twist_rigidity")
    solver, st = _run(sim)
    n = sim.params["segments"]
    rates = []
    for s in range(2):
        e0 = int(solver.model.strand_edge_start[s])
        th = st.arrays.theta[e0:e0 + n]
        rates.append((th[n // 2 - 1] - th[0], th[n - 1] - th[n // 2]))
    uniform, stiff = rates
    assert abs(uniform[1] / uniform[0] - 1.0) < 0.01
    # uniform rigidity: every segment holds the same share of the turn (within 1 %)
    e0 = int(solver.model.strand_edge_start[0])
    steps = np.diff(st.arrays.theta[e0:e0 + n])
    assert np.abs(steps / (2 * np.pi / (n - 1)) - 1.0).max() < 0.01
    # non-uniform: the wide (rigid) half holds under 2 % of the turn (measured 1.2 %)
    assert stiff[1] < 0.02 * 2 * np.pi < stiff[0]
    # the full turn is held between the clamps
    for s in range(2):
        assert abs(_twist(solver, st, s) - 2 * np.pi) < 1e-6


def test_weakest_thread_tears_first():
    sim = get_scene("csm_tearing")
    first = {}
    peak = []      # the largest stored stress over rupture stress of intact segments

    def record(sol, st):
        a = st.arrays
        ratio = a.tension * (1.0 + a.plastic_strain) / sol.model.arrays.area0 / a.rupture
        peak.append(float(np.max(np.where(a.torn, 0.0, ratio))))
        for s in range(5):
            e0, e1 = sol.model.strand_edge_start[s:s + 2]
            if s not in first and np.any(st.arrays.torn[e0:e1]):
                first[s] = (st.time, int(np.argmax(st.arrays.torn[e0:e1])))

    solver, st = _run(sim, 60, record)
    assert 0 in first
    # a segment tears as its stress passes its rupture stress, not far past it
    assert max(peak) < 1.1
    assert all(first[0][0] < first[s][0] for s in first if s)
    # it tore at its weakest segment among the most loaded (the top ones carry the weight)
    e0 = int(solver.model.strand_edge_start[0])
    assert first[0][1] in (1, 2)
    # the torn thread is two strings in the output
    o = solver.output(st)
    assert o.edge_broken[e0 + first[0][1]]
    assert len(solver.pieces(st)) - 1 >= 6


def test_released_cord_flicks_back():
    heights = {}
    for name in ("csm_flicking", "csm_no_flicking"):
        sim = get_scene(name)
        top = []
        _run(sim, None, lambda sol, st, top=top: top.append(st.x[-1, 2]) if st.time > 0.5
             else None)
        heights[name] = max(top)
    # with flicking the bob is thrown up past its rest height (0); without it stays there
    assert heights["csm_flicking"] > 0.02
    assert heights["csm_no_flicking"] < 1e-3
