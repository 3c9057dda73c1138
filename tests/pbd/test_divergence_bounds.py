"""Divergence that stays finite, and damping that would freeze a strand.

References (docs/pbd.md "Divergence" and "Collisions and damping"): after every step the solver
checks, in one pass, that positions and velocities are finite, that no edge strain exceeds
``max_strain`` and no point with mass moves faster than ``max_speed``; a violation raises
SimulationDiverged naming the step, the strand and the bound.  A substep with
``damping * h >= 1`` would multiply every velocity by zero and is refused.
"""
import numpy as np
import pytest

import strandlab as sl
from strandlab.pbd import compile_scene
from strandlab.pbd import kernels as K
from strandlab.sim.shapes import line


def _strands(n=3, velocity=(0.0, 0.0, 0.0), gravity=(0, 0, -9.81)):
    b = sl.SceneBuilder(gravity=gravity)
    mat = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)
    for k in range(n):
        pts = line((0, k, 0), (0.5, k, 0), 10)
        b.add_strand(pts, material=mat, velocities=np.tile(velocity, (len(pts), 1)))
    return compile_scene(b.build())


def test_stretched_edge_raises_naming_step_strand_and_bound():
    # A strand whose edge is stretched 100 % is far outside any physical state; a single step of
    # the default solver does not pull it back below max_strain = 0.5 with a tiny budget.
    m = _strands()
    solver = sl.PBDSolver(m, sl.PBDSettings.interactive(iterations=1))
    st = m.state()
    st.x[m.strand_vertices(1).start + 10] += [0.0, 0.0, 3.0]   # tip of strand 1 pulled 3 m away
    with pytest.raises(sl.SimulationDiverged, match=r"step 1\b.*max_strain = 0\.5.*strand 1\b") \
            as info:
        solver.step(st, st, 1 / 60)
    assert info.value.strand == 1 and "strain" in info.value.what


def test_fast_point_raises_and_none_disables_the_bound():
    # Rigid translation at 2 km/s: no strain, speed beyond max_speed = 1e3 m/s.
    m = _strands(velocity=(2000.0, 0.0, 0.0), gravity=(0, 0, 0))
    solver = sl.PBDSolver(m)
    st = m.state()
    with pytest.raises(sl.SimulationDiverged, match=r"speed 2e\+03 m/s exceeds max_speed"):
        solver.step(st, st, 1 / 60)
    relaxed = sl.PBDSolver(m, sl.PBDSettings(max_speed=None))
    st = m.state()
    relaxed.step(st, st, 1 / 60)
    assert st.x[0, 0] == pytest.approx(2000.0 / 60, rel=1e-12)
    faster = sl.PBDSolver(m, sl.PBDSettings(max_speed=5e3))
    st = m.state()
    faster.step(st, st, 1 / 60)


def test_check_kernel_reports_each_kind():
    # check_state: non-finite first, then the worst edge strain, then the fastest point.
    m = _strands(n=2)
    x, v = m.x0.copy(), np.zeros_like(m.x0)
    args = (m.inv_mass, m.point_strand, m.edge_p0, m.edge_p1, m.edge_rest_length)
    assert K.check_state(x, v, *args, 0.5, 1e3)[0] == K.CHECK_OK
    y = x.copy()
    y[m.edge_p1[13]] += [0.0, 0.0, 0.04]        # edge 13 (strand 1) stretched by 8 %
    code, e, s, value = K.check_state(y, v, *args, 0.05, 1e3)
    assert (code, e, s) == (K.CHECK_STRAIN, 13, 1)
    assert value == pytest.approx(np.sqrt(0.05 ** 2 + 0.04 ** 2) / 0.05 - 1, rel=1e-12)
    assert K.check_state(y, v, *args, np.inf, 1e3)[0] == K.CHECK_OK
    w = v.copy()
    w[5] = [0.0, 30.0, 40.0]
    assert K.check_state(x, w, *args, 0.5, 49.0)[:4] == (K.CHECK_SPEED, 5, 0, 50.0)
    w[7, 1] = np.nan
    assert K.check_state(x, w, *args, 0.5, 49.0)[:3] == (K.CHECK_NONFINITE, 7, 0)


def test_state_is_checked_once_per_step_not_per_substep(monkeypatch):
    m = _strands(n=1)
    calls = []
    real = K.check_state

    def counting(*a):
        calls.append(1)
        return real(*a)

    monkeypatch.setattr(K, "check_state", counting)
    solver = sl.PBDSolver(m, sl.PBDSettings(substeps=7))
    st = m.state()
    solver.step(st, st, 1 / 60)
    solver.step(st, st, 1 / 60)
    assert len(calls) == 2


def test_damping_that_would_freeze_the_strand_is_refused():
    # Velocity factor 1 - damping * h with h = dt / substeps: 1 - 100 / 60 < 0 would set every
    # velocity to zero (a rope frozen in mid-air).
    m = _strands(n=1)
    solver = sl.PBDSolver(m, sl.PBDSettings(damping=100.0, substeps=1))
    st = m.state()
    with pytest.raises(ValueError, match=r"damping = 100.*dt = 0\.0166"):
        solver.step(st, st, 1 / 60)
    assert st.step == 0 and np.array_equal(st.x, m.x0)
    # the automatic substeps keep damping * h <= 1/2, and the strand falls
    auto = sl.PBDSolver(m, sl.PBDSettings(damping=100.0))
    assert auto.substeps_for(1 / 60) >= 4
    auto.step(st, st, 1 / 60)
    assert st.x[m.strand_vertices(0), 2].min() < 0.0
