"""Chain-shape-matching strings: the breakdown of Table 1 of Rungjiratananon et al. 2011.

For strings of 100, 150, 200 and 746 segments (one string each; 1 m, nylon, clamped at one end,
released horizontally over a floor and a sphere), and 100 strings of 150 segments, prints the
milliseconds per step of 0.01 s spent in each part of the step:

- time integration (explicit velocities and positions, then velocities from the displacement),
- shape matching (section 3),
- twisting (twisting forces, frames carried along, twist averaging: section 4),
- tension (strain limiting, tension, stress-strain curve, tearing, flicking: section 5),
- collision (planes and spheres),
- total: the solver's whole step (one fused call for phases 1-6, one for twisting frames).

Each part is timed by running that phase alone over every chain (the phases of a step run in
this order; the numbers are the same as the fused step's).  Run with
``NUMBA_NUM_THREADS=1`` and ``2`` (the 100-string case runs in parallel over strings).

    NUMBA_NUM_THREADS=1 python benchmarks/bench_csm.py [--steps N]
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np

import strandlab as sl
from strandlab.csm import CSMSettings, CSMSolver
from strandlab.csm import kernels as K
from strandlab.sim.shapes import line

NYLON = sl.Material(young_modulus=3e9, density=1150.0, radius=0.001)
PARTS = (("integration", K.PH_INTEGRATE | K.PH_VELOCITY), ("shape matching", K.PH_SHAPE),
         ("twisting", K.PH_TWIST_FORCE | K.PH_TWIST), ("tension", K.PH_TENSION),
         ("collision", K.PH_COLLIDE))
ORDER = (K.PH_TWIST_FORCE, K.PH_INTEGRATE, K.PH_SHAPE, K.PH_TENSION, K.PH_COLLIDE,
         K.PH_VELOCITY, K.PH_TWIST)


def scene(n_strings: int, segments: int):
    b = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    for k in range(n_strings):
        y = 0.02 * k
        s = b.add_strand(line((0.0, y, 1.0), (1.0, y, 1.0), segments), material=NYLON,
                         options={"csm": {"rupture_stress": 1e9}})
        b.attach_to_frame(s, b.add_frame((0.0, y, 1.0)), end=0)
    b.add_plane((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), friction=0.3)
    b.add_sphere((0.5, 0.0, 0.6), 0.15, friction=0.3)
    return b.build()


def bench(n_strings: int, segments: int, steps: int, dt: float = 0.01) -> dict:
    solver = CSMSolver(scene(n_strings, segments), CSMSettings())
    st = solver.state()
    for _ in range(5):                       # compile and settle
        solver.step(st, st, dt)
    parts = dict.fromkeys([p for p, _ in PARTS], 0.0)
    run = solver.kernel()
    m, sc = solver.model.arrays, solver.scratch
    for _ in range(steps):
        solver._set_targets(st.time + dt)
        p = solver.params(st, dt)
        for ph in ORDER:
            t0 = time.perf_counter()
            run(ph, m, st.arrays, sc, p)
            el = time.perf_counter() - t0
            for name, mask in PARTS:
                if ph & mask:
                    parts[name] += el
        st.time += dt
        st.step += 1
    t0 = time.perf_counter()
    for _ in range(steps):
        solver.step(st, st, dt)
    total = time.perf_counter() - t0
    out = {k: 1000.0 * v / steps for k, v in parts.items()}
    out["total"] = 1000.0 * total / steps
    strain = np.linalg.norm(np.diff(st.x.reshape(n_strings, segments + 1, 3), axis=1),
                            axis=2) / (1.0 / segments) - 1.0
    out["max strain"] = float(strain.max())
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args(argv)
    print(f"chain shape matching, ms per step of 0.01 s, {numba.get_num_threads()} thread(s)")
    head = ["segments", "strings"] + [p for p, _ in PARTS] + ["total", "max strain"]
    print(" | ".join(f"{h:>14}" for h in head))
    for n_strings, segments in ((1, 100), (1, 150), (1, 200), (1, 746), (100, 150)):
        r = bench(n_strings, segments, args.steps if n_strings == 1 else args.steps // 4)
        row = [f"{segments:>14d}", f"{n_strings:>14d}"]
        row += [f"{r[p]:>14.3f}" for p, _ in PARTS] + [f"{r['total']:>14.3f}",
                                                        f"{r['max strain']:>14.2e}"]
        print(" | ".join(row))


if __name__ == "__main__":
    main()
