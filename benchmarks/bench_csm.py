"""Chain-shape-matching strings: the breakdown of Table 1 of Rungjiratananon et al. 2011.

For strings of 100, 150, 200 and 746 segments (one string each; 1 m of nylon hanging from a
clamp, swinging (0.5 m/s sideways at its lower end at the start) against a sphere, its lower
end just above the floor) and 100 such strings of 150 segments side by side (2 cm apart),
prints the milliseconds per step of 0.01 s (one step, no substeps, as the paper) spent in each
part of the step, with the segment contacts on and off:

- integration: explicit velocities and positions, then velocities from the displacement;
- shape matching (section 3);
- twisting: twisting forces, frames carried along, twist averaging (section 4);
- tension: strain limiting, tension, stress-strain curve, tearing, flicking (section 5);
- collision: segment contacts (the grid search and the sweeps, section 6) and the colliders
  (plane and sphere);
- total: the solver's whole ``step`` (timed on its own).

Each part is timed by running it alone over every chain, in the order of a step, from the
same state each round (the numbers are the same as the fused step's).  Every step is timed:
the figures are the least over ``--rounds`` rounds of ``--steps`` steps (the least disturbed
by other work on the machine), with the median of the total beside it.  ``--threads 1 2``
times each case with one and with two Numba threads, alternately round by round; ``--busy``
burns one core in a child process meanwhile.  ``cpu`` is the process time per step of the
total (both threads counted), the steadier measure on a shared machine.

    python benchmarks/bench_csm.py [--steps N] [--rounds R] [--threads 1 2] [--busy]
        [--cases 746 100x150]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np

import strandlab as sl
from strandlab.csm import CSMSettings, CSMSolver
from strandlab.csm import kernels as K
from strandlab.sim.shapes import line

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_der_cantilever import busy_core

NYLON = sl.Material(young_modulus=3e9, density=1150.0, radius=0.001)
PARTS = ("integration", "shape matching", "twisting", "tension", "collision")
#: (strings, segments)
CASES = {"100": (1, 100), "150": (1, 150), "200": (1, 200), "746": (1, 746),
         "100x150": (100, 150)}


def scene(n_strings: int, segments: int):
    b = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    for k in range(n_strings):
        y = 0.02 * k
        pts = line((0.0, y, 1.03), (0.0, y, 0.03), segments)
        vel = np.outer(np.linspace(0.0, 1.0, segments + 1), [0.5, 0.0, 0.0])
        s = b.add_strand(pts, material=NYLON, velocities=vel,
                         options={"csm": {"rupture_stress": 1e9}})
        b.attach_to_frame(s, b.add_frame(pts[0]), end=0)
    b.add_plane((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), friction=0.3)
    b.add_sphere((0.12, 0.0, 0.5), 0.1, friction=0.3)
    return b.build()


def _substep_parts(solver, st, parts: dict, dt: float) -> None:
    """One step of ``dt`` [s] (one substep) phase by phase, the time of each part added to
    ``parts`` [s]; the same work as ``solver.step`` (``CSMSolver._contact_substep``)."""
    m, sc, a = solver.model.arrays, solver.scratch, st.arrays
    run = solver.kernel()
    solver._set_targets(st.time + dt)
    p = solver.params(st, dt)
    c = solver.contacts
    it = solver.settings.contact_iterations

    def timed(name, f):
        t0 = time.perf_counter()
        f()
        parts[name] += time.perf_counter() - t0

    timed("twisting", lambda: run(K.PH_TWIST_FORCE, m, a, sc, p))
    timed("integration", lambda: run(K.PH_INTEGRATE, m, a, sc, p))
    sc.sm_weight[...] = 1.0
    if c is not None:
        timed("collision", lambda: (c.find(a.x, sc.x_old, a.torn),
                                    c.project(a.x, m.inv_mass, sc.sm_weight, a.torn, it)))
    timed("shape matching", lambda: run(K.PH_SHAPE, m, a, sc, p))
    timed("tension", lambda: run(K.PH_TENSION, m, a, sc, p))
    if c is not None:
        timed("collision", lambda: c.project(a.x, m.inv_mass, sc.sm_weight, a.torn, 1))
    timed("collision", lambda: run(K.PH_COLLIDE, m, a, sc, p))
    timed("integration", lambda: run(K.PH_VELOCITY, m, a, sc, p))
    timed("twisting", lambda: run(K.PH_TWIST, m, a, sc, p))
    st.time += dt
    st.step += 1


def bench(n_strings: int, segments: int, steps: int, rounds: int, threads: list[int],
          collide: bool, dt: float = 0.01) -> dict:
    """Figures per thread count [ms per step]: each part and the total, the least over all
    timed steps (the least disturbed by other work), the median total, the process time of
    the total per step (least over rounds), and the largest strain at the end."""
    solver = CSMSolver(scene(n_strings, segments), CSMSettings(segment_collision=collide))
    st = solver.state()
    for _ in range(20):                      # compile, and swing onto the sphere
        solver.step(st, st, dt)
    start = st.copy()
    best = {t: dict.fromkeys((*PARTS, "total", "cpu"), np.inf) for t in threads}
    totals = {t: [] for t in threads}
    for _ in range(rounds):
        for t in threads:
            numba.set_num_threads(t)
            st.assign(start)
            for _ in range(steps):
                parts = dict.fromkeys(PARTS, 0.0)
                _substep_parts(solver, st, parts, dt)
                for k, v in parts.items():
                    best[t][k] = min(best[t][k], 1e3 * v)
            st.assign(start)
            c0 = time.process_time()
            for _ in range(steps):
                t0 = time.perf_counter()
                solver.step(st, st, dt)
                totals[t].append(1e3 * (time.perf_counter() - t0))
            best[t]["cpu"] = min(best[t]["cpu"], 1e3 * (time.process_time() - c0) / steps)
    seg_len = np.linalg.norm(np.diff(st.x.reshape(n_strings, segments + 1, 3), axis=1), axis=2)
    for t in threads:
        best[t]["total"] = float(np.min(totals[t]))
        best[t]["median"] = float(np.median(totals[t]))
        best[t]["max strain"] = float((seg_len * segments - 1.0).max())
    return best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50, help="steps per round (100x150: a fifth)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--busy", action="store_true", help="one core busy in a child process")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    args = ap.parse_args(argv)
    threads = [t for t in args.threads if t <= numba.config.NUMBA_NUM_THREADS]
    print(f"chain shape matching, ms per step of 0.01 s (one step), best of {args.rounds} "
          f"rounds{', one core busy with another process' if args.busy else ''}")
    head = ["case", "contacts", "threads", *PARTS, "total", "median", "cpu", "max strain"]
    print(" | ".join(head))
    with busy_core(args.busy):
        for case in args.cases:
            n_strings, segments = CASES[case]
            steps = args.steps if n_strings == 1 else max(2, args.steps // 5)
            for collide in (True, False):
                res = bench(n_strings, segments, steps, args.rounds, threads, collide)
                for t in threads:
                    r = res[t]
                    print(" | ".join([case, "on" if collide else "off", str(t)]
                                     + [f"{r[p]:.3f}" for p in PARTS]
                                     + [f"{r['total']:.3f}", f"{r['median']:.3f}",
                                        f"{r['cpu']:.3f}", f"{r['max strain']:.1e}"]),
                      flush=True)


if __name__ == "__main__":
    main()
