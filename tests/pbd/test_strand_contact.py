"""Capsule contacts between strands in the position-based solver (``strand_collision``).

Measured: the smallest distance between the centrelines of two strands over a run, against the
sum of their radii (0.01 m).  A rope (r = 5 mm, 20 edges of 5 cm) falls from 0.1 m onto a
second rope held at both ends, crossing it at right angles: with contacts the centrelines never
come closer than the sum of radii (to 0.5 %: each step ends with the contacts projected) and the
falling rope stays above the held one; without, it falls through (ends more than 1 m below).
"""
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import strandlab as sl
from strandlab.collision.self_contact import segment_closest
from strandlab.sim.shapes import line

R = 0.005
DT = 1.0 / 60.0
HELD = np.arange(21)


def _scene(*, joined=False):
    """A held rope along x at z = 0.5 (ends fixed) and a rope along y at z = 0.6, falling; with
    ``joined`` both are one strand (a long edge joins the held rope's end to the other)."""
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mat = sl.Material(young_modulus=1e7, density=1000.0, radius=R)
    held = line((-0.5, 0, 0.5), (0.5, 0, 0.5), 20)
    falling = line((0.02, -0.5, 0.6), (0.02, 0.5, 0.6), 20)
    if joined:
        s = b.add_strand(np.vstack([held, falling]), material=mat, name="folded")
        b.fix_vertex(s, 0)
        b.fix_vertex(s, 20)
    else:
        s = b.add_strand(held, material=mat, name="held")
        b.fix_vertex(s, 0)
        b.fix_vertex(s, -1)
        b.add_strand(falling, material=mat, name="falling")
    return b.build()


def _closest(x, p, q):
    """Smallest centreline distance between polylines ``x[p]`` and ``x[q]``."""
    best = np.inf
    for i in range(len(p) - 1):
        for j in range(len(q) - 1):
            xx = np.ascontiguousarray(x[[p[i], p[i + 1], q[j], q[j + 1]]])
            s, t = segment_closest(xx, 0, 1, 2, 3)
            best = min(best, np.linalg.norm((1 - s) * xx[0] + s * xx[1] - (1 - t) * xx[2]
                                            - t * xx[3]))
    return best


def _run(scene, settings, steps=60):
    """Smallest centreline distance between the held rope and the falling one over the run,
    the falling rope's middle vertex height minus the held one's at every step, last state."""
    solver = sl.make_solver(scene, "pbd", settings)
    state = solver.state()
    falling = np.arange(21, 42)
    dmin, above = np.inf, []
    for _ in range(steps):
        solver.step(state, state, DT)
        x = solver.output(state).positions
        dmin = min(dmin, _closest(x, HELD, falling))
        above.append(x[31, 2] - x[10, 2])
    return dmin, np.array(above), solver, state


def test_falling_rope_rests_on_the_held_rope_with_contact_and_falls_through_without():
    dmin, above, solver, _ = _run(_scene(), {"strand_collision": True})
    assert solver.substeps_for(DT) == 4  # 4 cm of fall per substep at most: no tunnelling
    assert 0.995 * 2 * R < dmin < 1.05 * 2 * R  # it touched, and never came closer
    assert above.min() > 0.0
    dmin_off, above_off, _, _ = _run(_scene(), {"strand_collision": False})
    assert dmin_off < 0.9 * 2 * R
    assert above_off[-1] < -1.0


def test_contacts_within_one_strand_come_from_the_grid_with_self_collision():
    # the same ropes as one strand: its two parts are far apart along it, so only
    # self-contact (skip = ceil(2 r / l) + 1 edges) can hold one on the other
    scene = _scene(joined=True)
    on = {"strand_collision": True, "self_collision": True}
    dmin, _, solver, _ = _run(scene, on)
    assert 0.995 * 2 * R < dmin < 1.05 * 2 * R
    assert np.all(solver._self_thickness == 0.0)  # the quadratic search is off
    dmin_strand_only, _, _, _ = _run(scene, {"strand_collision": True}, steps=40)
    assert dmin_strand_only < 0.9 * 2 * R  # between strands only: falls through itself


@pytest.mark.parametrize("in_place", [True, False])
def test_a_full_pair_buffer_retakes_the_step_and_a_small_voxel_is_raised(in_place):
    scene = _scene()
    ref = sl.make_solver(scene, "pbd", {"strand_collision": True})
    state = ref.state()
    for _ in range(15):
        ref.step(state, state, DT)
    assert ref._contact_buf.status[3] >= 2  # in contact now
    start = ref.save_state(state)
    expect = ref.state()
    ref.step(state, expect, DT)
    for poke in ("buffer", "voxel"):
        s = sl.make_solver(scene, "pbd", {"strand_collision": True})
        if poke == "buffer":
            s._contact_buf.grow(0)  # room for no pair at all: the step is taken again
            s._contact_args = s._contact_args._replace(pairs=s._contact_buf.pairs)
        else:
            s._contact_voxel = 0.01  # below one edge: each substep searches with what it needs
        st_in = s.load_state(start)
        st_out = st_in if in_place else s.state()
        s.step(st_in, st_out, DT)
        assert len(s._contact_buf.pairs) >= 2
        tol = 0.0 if poke == "buffer" else 1e-9  # another voxel may order the pairs otherwise
        assert np.abs(st_out.x - expect.x).max() <= tol
        assert st_out.step == expect.step and st_out.time == expect.time
        if not in_place:
            assert np.array_equal(st_in.x, start["x"])  # the input is left as it was


def test_strands_stay_independent_unless_they_collide():
    b = sl.SceneBuilder()
    mat = sl.Material(young_modulus=1e7, density=1000.0, radius=R)
    for k in range(2):
        s = b.add_strand(line((0, k, 0), (1, k, 0), 4), material=mat)
        b.attach_to_frame(s, b.add_frame((0, k, 0)), end=0)
    free = b.build()
    assert sl.make_solver(free, "pbd").independent_strands is True
    assert sl.make_solver(free, "pbd", {"strand_collision": True}).independent_strands is False
    assert sl.make_solver(_scene(joined=True), "pbd",
                          {"strand_collision": True}).independent_strands is False


@pytest.mark.parametrize("key, value, msg", [
    ("strand_collision", "yes", "strand_collision must be True or False"),
    ("contact_search", 9, "contact_search must be 7 or 27"),
    ("contact_search", True, "contact_search must be 7 or 27"),
    ("contact_margin", -0.001, "contact_margin must be a finite length >= 0"),
    ("contact_margin", float("nan"), "contact_margin must be a finite length >= 0"),
])
def test_contact_settings_are_checked(key, value, msg):
    with pytest.raises(ValueError, match=msg):
        sl.PBDSettings(**{key: value})


def _positions_after(steps, threads):
    """Positions after ``steps`` steps of the crossing ropes with contacts, on ``threads``
    threads, with the parallel kernel forced whenever there are two."""
    from strandlab.pbd import solver as pbd_solver
    old_work, old_threads = pbd_solver.PARALLEL_MIN_WORK, numba.get_num_threads()
    pbd_solver.PARALLEL_MIN_WORK = 1
    numba.set_num_threads(threads)
    try:
        solver = sl.make_solver(_scene(), "pbd", {"strand_collision": True})
        state = solver.state()
        for _ in range(steps):
            solver.step(state, state, DT)
        return state.x.copy(), solver._kernel(1).__name__
    finally:
        pbd_solver.PARALLEL_MIN_WORK = old_work
        numba.set_num_threads(old_threads)


@pytest.mark.slow
def test_parallel_kernel_with_contacts_gives_the_serial_result():
    # the parallel coupled kernel (strands in a parallel loop, contacts between them serial)
    # compiles and is bit-identical to its serial twin; about 4 minutes of compilation
    if numba.config.NUMBA_NUM_THREADS < 2:
        env = dict(os.environ, NUMBA_NUM_THREADS="2")
        node = f"{__file__}::test_parallel_kernel_with_contacts_gives_the_serial_result"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "slow",
                               "-p", "no:cacheprovider", node], env=env, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stdout[-2000:]
        return
    serial, name1 = _positions_after(20, 1)
    parallel, name2 = _positions_after(20, 2)
    assert (name1, name2) == ("step_coupled_serial", "step_coupled")
    np.testing.assert_array_equal(parallel, serial)
