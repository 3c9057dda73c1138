"""Rods, shells and solids: time per frame of the built-in objects against Table 1 of Chang et
al. 2019 (single-threaded, 2.8 GHz, 2019).

Table 1 (vertices, frames, total seconds): nylon frisbee 289, 700, 24.83; toy ball 229, 1300,
218.3; umbrella 3168, 600, 4364.8; sandwich composite 395, 5000, 1311.2.  A frame is taken as
1/30 s of simulated time (the paper gives no frame rate); each scene keeps its own time step
(``Simulation.dt``), so a frame is ``round(1/30 / dt)`` steps.  The objects (:data:`CASES`, one
row each; add a row for a new scene): the umbrella at the paper's size (``rings=32``: 3173
vertices, 6144 shell triangles, 202 rod edges), the sandwich composite at 400 vertices (the
paper's 395), the nylon frisbee (271, the paper's 289) and the toy ball (249, the paper's 229)
against the paper's same objects, the tunnel (144), the Fig. 18 strip (352) and the sticky hand (109, not in
Table 1) against the paper's frisbee (its cheapest object per vertex).  The toy ball twice more:
with backward Euler at 5 ms steps (the scene's integrator and step before it took BDF2 at 1/60
s) and with BDF2 at a frame a step (its wobble then damped about as much as with backward Euler
at 5 ms); a ``--baseline`` tree without BDF2 cannot run these two.  Each case steps one frame untimed (compiling
its kernels, first factorisation), then is timed over ``frames`` frames; printed: vertices,
steps per frame, Newton iterations and factorisations per step, milliseconds per frame (wall
clock, and the process's CPU time: with one thread on a machine shared with other jobs, the
undisturbed time), the paper's, the speed-up (of the CPU time with one thread, of the wall
clock otherwise) and ``jit``, the number of Numba compilations inside the timed frames (0: a
kernel compiled there would be timed as a step; a parallel twin first used when a scene's
work crosses :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK` after the first step, with
an empty cache, cost seconds per frame).
Target (issue 9): 10 times faster per frame than the paper.

Every case runs in its own process, for each thread count (``NUMBA_NUM_THREADS``, and
``OPENBLAS_NUM_THREADS`` for NumPy's and SciPy's BLAS unless it is set; the OpenBLAS that
cvxopt bundles under CHOLMOD is a single-threaded build) and each source tree:
``--baseline PATH`` times the same cases with the ``strandlab`` package found in ``PATH``
(e.g. ``/path/to/main/src``) side by side, in the same run.  ``--rounds R`` repeats every
process R times, alternating, and prints the medians (the machine's load varies), or with
``--stat min`` the fastest round's times (the least disturbed).
``--busy`` burns one core in another process during the measurement (threads must never make
a step slower than one thread; the last column, ``thr/1``, is the wall time over that of the
first thread count listed).

    python benchmarks/bench_mixed.py [--frames 2] [--threads 1,2] [--cases sandwich,umbrella]
                                     [--baseline ../main/src] [--rounds 3] [--stat min]
                                     [--busy]
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from busy import busy_core

PAPER_MS_PER_FRAME = {"frisbee": 24.8301 / 700 * 1e3, "toy ball": 218.301 / 1300 * 1e3,
                      "umbrella": 4364.83 / 600 * 1e3, "sandwich": 1311.2 / 5000 * 1e3}
FRAME = 1.0 / 30.0


@dataclass(frozen=True)
class Case:
    """One object: ``factory`` (``module:function`` returning a ``Simulation``), its keyword
    arguments, the Table 1 object it is compared with, and how many frames to time (None:
    ``--frames``)."""

    name: str
    factory: str
    kwargs: dict = field(default_factory=dict)
    paper: str = "frisbee"
    frames: int | None = None


CASES = (
    Case("frisbee", "strandlab.scenes.mixed_toys:mixed_frisbee", {}, "frisbee"),
    Case("toy ball", "strandlab.scenes.mixed_toys:mixed_toy_ball", {}, "toy ball"),
    Case("toy ball BE 5 ms", "strandlab.scenes.mixed_toys:mixed_toy_ball",
         dict(integrator="euler", dt=0.005), "toy ball"),
    Case("toy ball BDF2 1/30", "strandlab.scenes.mixed_toys:mixed_toy_ball",
         dict(integrator="bdf2", dt=1.0 / 30.0), "toy ball"),
    Case("sandwich", "strandlab.scenes.mixed_objects:mixed_sandwich",
         dict(nx=19, ny=3, nz=4), "sandwich"),
    Case("umbrella", "strandlab.scenes.mixed_objects:mixed_umbrella", dict(rings=32),
         "umbrella", frames=4),
    Case("tunnel", "strandlab.scenes.mixed_objects:mixed_tunnel", {}, "frisbee"),
    Case("strip (Fig. 18)", "strandlab.scenes.mixed_strips:mixed_strips", {}, "frisbee"),
    Case("sticky hand", "strandlab.scenes.mixed_toys:mixed_sticky_hand", {}, "frisbee"),
)


class _CompileCounter:
    """Counts Numba compilations while installed (``numba:compile`` events)."""

    def __init__(self):
        from numba.core import event

        class Listener(event.Listener):
            count = 0

            def on_start(self, ev):
                Listener.count += 1

            def on_end(self, ev):
                pass

        self.listener = Listener()
        self.install = lambda: event.install_listener("numba:compile", self.listener)


def start_case(case: Case):
    """``case``'s simulation, its solver and state after one frame stepped untimed (kernels
    compiled, first factorisation), and its steps per frame."""
    from strandlab.mixed import MixedSolver

    module, name = case.factory.split(":")
    sim = getattr(importlib.import_module(module), name)(**case.kwargs)
    sol = MixedSolver(sim.scene, sim.settings)
    s = sol.state()
    steps = max(1, round(FRAME / sim.dt))
    for _ in range(steps):
        sol.step(s, s, sim.dt)
    return sim, sol, s, steps


def time_case(case: Case, frames: int) -> dict:
    """Step ``case`` one frame untimed, then time ``frames`` frames; the figures as a dict."""
    sim, sol, s, steps = start_case(case)
    iters = facts = 0
    counter = _CompileCounter()
    with counter.install():
        c0 = time.process_time()
        t0 = time.perf_counter()
        for _ in range(frames * steps):
            sol.step(s, s, sim.dt)
            iters += sol.last_info.iterations
            facts += getattr(sol.last_info, "factorizations", -1)
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0
    n = frames * steps
    return dict(vertices=int(sol.model.n_vertices), steps=steps, newton=iters / n,
                factorizations=facts / n, ms=1e3 * elapsed / frames, cpu=1e3 * cpu / frames,
                jit=counter.listener.count)


def _worker(args) -> None:
    case = next(c for c in CASES if c.name == args.worker)
    print(json.dumps(time_case(case, args.frames)))


def _run(case: Case, frames: int, threads: int, src: str | None) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    env.setdefault("OPENBLAS_NUM_THREADS", str(threads))
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", case.name,
           "--frames", str(frames)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"case {case.name!r} ({src or 'this tree'}, {threads} threads) "
                           f"failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict], stat: str = "median") -> dict:
    """The rounds' medians, or with ``stat="min"`` the times of the fastest round (the least
    disturbed on a shared machine) with the median counts."""
    out = dict(runs[0])
    for key in ("ms", "cpu", "newton", "factorizations"):
        values = [r[key] for r in runs]
        out[key] = min(values) if stat == "min" and key in ("ms", "cpu") else \
            statistics.median(values)
    out["jit"] = max(r["jit"] for r in runs)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=2)
    ap.add_argument("--threads", default="1", help="comma-separated thread counts")
    ap.add_argument("--cases", default=None, help="comma-separated case names (default all)")
    ap.add_argument("--baseline", default=None,
                    help="a source tree (its src/ folder) to time side by side")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each process (medians)")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="times over the rounds: their median, or the fastest round's")
    ap.add_argument("--busy", action="store_true", help="one core busy in a child process")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker is not None:
        _worker(a)
        return
    names = None if a.cases is None else a.cases.split(",")
    cases = [c for c in CASES if names is None or c.name in names]
    if names is not None and len(cases) != len(names):
        known = ", ".join(c.name for c in CASES)
        raise SystemExit(f"unknown case in {a.cases!r}; known: {known}")
    trees = [("this", None)] + ([("baseline", a.baseline)] if a.baseline else [])
    thread_counts = [int(t) for t in a.threads.split(",")]
    print(f"{'object':16s} {'tree':8s} {'thr':>3s} {'vertices':>8s} {'steps/fr':>8s} "
          f"{'Newton/st':>9s} {'fact/st':>7s} {'ms/frame':>9s} {'CPU ms':>9s} {'paper ms':>9s} "
          f"{'speed-up':>8s} {'jit':>3s} {'thr/1':>5s}")
    with busy_core(a.busy):
        for case in cases:
            frames = case.frames or a.frames
            runs = {(t, tree): [] for t in thread_counts for tree, _ in trees}
            for _ in range(a.rounds):
                for threads in thread_counts:
                    for tree, src in trees:
                        runs[threads, tree].append(_run(case, frames, threads, src))
            for threads in thread_counts:
                for tree, _ in trees:
                    r = _summary(runs[threads, tree], a.stat)
                    one = _summary(runs[thread_counts[0], tree], a.stat)["ms"]
                    paper = PAPER_MS_PER_FRAME[case.paper]
                    fact = (f"{r['factorizations']:7.2f}" if r["factorizations"] >= 0
                            else "      -")
                    speed = paper / (r["cpu"] if threads == 1 else r["ms"])
                    print(f"{case.name:16s} {tree:8s} {threads:3d} {r['vertices']:8d} "
                          f"{r['steps']:8d} {r['newton']:9.1f} {fact} {r['ms']:9.1f} "
                          f"{r['cpu']:9.1f} {paper:9.1f} {speed:8.2f} {r['jit']:3d} "
                          f"{r['ms'] / one:5.2f}", flush=True)


if __name__ == "__main__":
    main()
