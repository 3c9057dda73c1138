"""A mixed run resumed from save_state repeats the uninterrupted run bit for bit, also when the
solver carries a surface pair list and a kept factorisation between steps (the cloth of the
tunnel scene collapsing onto the floor and itself) or stiffened contacts (a heavy block on a
soft cloth)."""
import numpy as np
import pytest
from test_mixed_contact import _block_over_cloth

from strandlab.mixed import MixedSettings, MixedSolver
from strandlab.scenes.mixed_objects import mixed_tunnel


def _run(sol, s, steps, dt):
    for _ in range(steps):
        sol.step(s, s, dt)
    return s


def test_resume_repeats_the_run_with_the_contact_list_and_the_kept_factorisation():
    sim = mixed_tunnel(rods=False)
    a = MixedSolver(sim.scene, sim.settings)
    s = _run(a, a.state(), 6, sim.dt)
    saved = a.save_state(s)
    drift = a.system.mesh_contact.moved(s.q)
    assert {"cache_contact_q", "cache_contact_margins", "cache_v_start",
            "cache_linear_precond_data"} <= set(saved)
    full = _run(a, s, 6, sim.dt)
    assert a.system.mesh_contact.n_stencils > 0          # in contact while resumed

    b = MixedSolver(sim.scene, sim.settings)
    r = b.load_state(saved)
    ma, mb = a.system.mesh_contact, b.system.mesh_contact
    assert np.array_equal(mb.margins, saved["cache_contact_margins"])
    assert mb.margin > 0.5 * mb.dhat                    # widened by the fall
    assert mb.moved(r.q) == drift > 0.0                 # built where the saved list was
    assert np.array_equal(b._v_start, saved["cache_v_start"]) and np.any(b._v_start)
    la, lb = a.integrator.linear_solver, b.integrator.linear_solver
    assert lb._precond is not None and np.array_equal(
        lb._precond_matrix.data, saved["cache_linear_precond_data"])
    res = _run(b, r, 6, sim.dt)
    assert np.array_equal(res.q, full.q) and np.array_equal(res.v, full.v)
    assert np.array_equal(mb.pair_vertices, ma.pair_vertices)
    assert np.array_equal(mb.margins, ma.margins)
    assert lb.factorizations < la.factorizations     # b started from the kept factorisation


@pytest.mark.filterwarnings("ignore::strandlab.implicit.NotConvergedWarning")
def test_resume_keeps_the_stiffened_contacts():
    scene, _, _ = _block_over_cloth()
    settings = MixedSettings(damping=2.0, linear_solver="direct")
    a = MixedSolver(scene, settings)
    s = _run(a, a.state(), 16, 0.005)
    saved = a.save_state(s)
    assert saved["cache_contact_stiffening"].max() >= 4.0     # the block has landed
    full = _run(a, s, 4, 0.005)
    b = MixedSolver(scene, settings)
    res = _run(b, b.load_state(saved), 4, 0.005)
    assert np.array_equal(res.q, full.q) and np.array_equal(res.v, full.v)
    assert np.array_equal(b.system.mesh_contact.stiffening, a.system.mesh_contact.stiffening)


def test_bad_cache_arrays_are_named():
    sim = mixed_tunnel(rods=False)
    sol = MixedSolver(sim.scene, sim.settings)
    saved = sol.save_state(sol.state())
    with pytest.raises(ValueError, match="cache_v_start"):
        sol.load_state({**saved, "cache_v_start": np.zeros(3)})
    with pytest.raises(ValueError, match="cache_bogus"):
        sol.load_state({**saved, "cache_bogus": np.zeros(3)})
