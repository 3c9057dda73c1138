"""Chain-shape-matching strings: the breakdown of Table 1 of Rungjiratananon et al. 2011.

For strings of 100, 150, 200 and 746 segments (one string each; 1 m of nylon hanging from a
clamp, swinging (0.5 m/s sideways at the start) against a sphere, its lower end on the floor),
and 100 strings of 150 segments, prints the
milliseconds per step of 0.01 s spent in each part of the step:

- time integration (explicit velocities and positions, then velocities from the displacement),
- shape matching (section 3),
- twisting (twisting forces, frames carried along, twist averaging: section 4),
- tension (strain limiting, tension, stress-strain curve, tearing, flicking: section 5),
- collision (planes and spheres),
- total: the solver's whole step (one fused call for phases 1-6, one for twisting frames),
  with the substeps each case needs to stay stable (``CASES``).

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
#: (strings, segments, substeps): the fewest substeps per step of 0.01 s with which the
#: swinging strings stay within the solver's strain bound (one substep diverges past 100
#: segments: docs/csm.md, "Limits")
CASES = ((1, 100, 1), (1, 150, 2), (1, 200, 2), (1, 746, 8), (100, 150, 2))
ORDER = (K.PH_TWIST_FORCE, K.PH_INTEGRATE, K.PH_SHAPE, K.PH_TENSION, K.PH_COLLIDE,
         K.PH_VELOCITY, K.PH_TWIST)


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


def bench(n_strings: int, segments: int, steps: int, substeps: int, dt: float = 0.01) -> dict:
    solver = CSMSolver(scene(n_strings, segments), CSMSettings(substeps=substeps))
    st = solver.state()
    for _ in range(5):                       # compile and settle
        solver.step(st, st, dt)
    parts = dict.fromkeys([p for p, _ in PARTS], 0.0)
    run = solver.kernel()
    m, sc = solver.model.arrays, solver.scratch
    h = dt / substeps
    for _ in range(steps * substeps):
        solver._set_targets(st.time + h)
        p = solver.params(st, h)
        for ph in ORDER:
            t0 = time.perf_counter()
            run(ph, m, st.arrays, sc, p)
            el = time.perf_counter() - t0
            for name, mask in PARTS:
                if ph & mask:
                    parts[name] += el
        st.time += h
    st.step += steps
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
    head = ["segments", "strings", "substeps"] + [p for p, _ in PARTS] + ["total", "max strain"]
    print(" | ".join(f"{h:>14}" for h in head))
    for n_strings, segments, sub in CASES:
        r = bench(n_strings, segments, args.steps if n_strings == 1 else args.steps // 4, sub)
        row = [f"{segments:>14d}", f"{n_strings:>14d}", f"{sub:>14d}"]
        row += [f"{r[p]:>14.3f}" for p, _ in PARTS] + [f"{r['total']:>14.3f}",
                                                        f"{r['max strain']:>14.2e}"]
        print(" | ".join(row))


if __name__ == "__main__":
    main()
