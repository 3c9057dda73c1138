"""Rods, shells and solids: time per frame of the built-in objects against Table 1 of Chang et
al. 2019 (single-threaded, 2.8 GHz, 2019).

Table 1 (vertices, frames, total seconds): nylon frisbee 289, 700, 24.83; toy ball 229, 1300,
218.3; umbrella 3168, 600, 4364.8; sandwich composite 395, 5000, 1311.2.  A frame is taken as
1/30 s of simulated time (the paper gives no frame rate).  Our objects of similar size: the
sandwich composite (``mixed_sandwich``, 260 vertices at the default resolution, 395 at
``--fine``), the umbrella (127 vertices; the paper's has 3168), the tunnel (144) and the
Fig. 18 strip.  Each is stepped after one warm-up step (compiling), and the figures printed:
vertices, steps per frame, Newton iterations per step, milliseconds per frame, and the ratio to
the paper's milliseconds per frame for the object of that kind (sandwich to sandwich; the others
to the frisbee, the paper's fastest per vertex).  Target: 10 times faster per frame.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_mixed.py [--frames 20] [--fine]
"""
from __future__ import annotations

import argparse
import time

from strandlab.mixed import MixedSolver
from strandlab.scenes.mixed_objects import mixed_sandwich, mixed_tunnel, mixed_umbrella
from strandlab.scenes.mixed_strips import mixed_strips

PAPER_MS_PER_FRAME = {"frisbee": 24.8301 / 700 * 1e3, "toy ball": 218.301 / 1300 * 1e3,
                      "umbrella": 4364.83 / 600 * 1e3, "sandwich": 1311.2 / 5000 * 1e3}


def _time(sim, frames: int):
    sol = MixedSolver(sim.scene, sim.settings)
    s = sol.state()
    steps = max(1, round((1.0 / 30.0) / sim.dt))
    sol.step(s, s, sim.dt)                                  # compile
    iters = 0
    t0 = time.perf_counter()
    for _ in range(frames * steps):
        sol.step(s, s, sim.dt)
        iters += sol.last_info.iterations
    dt = time.perf_counter() - t0
    return sol.model.n_vertices, steps, iters / (frames * steps), 1e3 * dt / frames


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--fine", action="store_true", help="the sandwich at 395 vertices")
    a = ap.parse_args(argv)
    sandwich = mixed_sandwich(nx=18, ny=4, nz=4) if a.fine else mixed_sandwich()
    cases = [("sandwich", sandwich, "sandwich"), ("umbrella", mixed_umbrella(), "umbrella"),
             ("tunnel", mixed_tunnel(), "frisbee"), ("strip (Fig. 18)", mixed_strips(),
                                                      "frisbee")]
    print(f"{'object':18s} {'vertices':>8s} {'steps/frame':>11s} {'Newton/step':>11s} "
          f"{'ms/frame':>9s} {'paper ms/frame':>14s} {'speed-up':>8s}")
    for name, sim, ref in cases:
        nv, steps, iters, ms = _time(sim, a.frames)
        paper = PAPER_MS_PER_FRAME[ref]
        print(f"{name:18s} {nv:8d} {steps:11d} {iters:11.1f} {ms:9.1f} {paper:14.1f} "
              f"{paper / ms:8.2f}")


if __name__ == "__main__":
    main()
