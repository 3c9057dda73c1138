"""Cold start: how long a new user waits for the first simulated frame of ``strandlab demo``.

Each run starts ``python -m strandlab.cli demo --out TMP --frames 3`` in a child process with an
empty Numba cache (a fresh ``NUMBA_CACHE_DIR``, as after a fresh install), reads its progress bar
and stops it once the bar shows the first frame.  It prints, per run:

- ``import``: seconds to import ``strandlab.cli`` and the scenes (a separate child process);
- ``first frame``: seconds from the start of the process to the first frame on the progress bar
  (wall clock: what the user waits), and the CPU seconds the process had used by then (less
  sensitive to other work on a shared machine).

``--compare-to PATH`` runs the same with the strandlab of another checkout (``PATH/src``, e.g. a
copy of the main branch made with ``git worktree add``), alternating run by run, so that both
see the same load.  ``--kernels`` instead compiles the demo's step in this process from an empty
cache and lists the compiled functions by their own compile CPU time (time in the functions
they call excluded), with the time to build the solver and to take the first step.

Run: ``python benchmarks/bench_first_run.py [--repeats 3] [--compare-to PATH]`` or
``python benchmarks/bench_first_run.py --kernels``.
"""
from __future__ import annotations

import argparse
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIRST_FRAME = re.compile(r"\|\s*([1-9]\d*)/\d+")


def _env(src: str, cache: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_CACHE_DIR"] = cache
    return env


def import_seconds(src: str) -> float:
    """Seconds to import strandlab.cli and strandlab.scenes in a fresh interpreter."""
    code = ("import time\nt = time.perf_counter()\nimport strandlab.cli, strandlab.scenes\n"
            "print(time.perf_counter() - t)\n")
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=_env(src, cache), check=True)
    return float(out.stdout.strip().splitlines()[-1])


def first_frame(src: str, timeout: float = 900.0) -> tuple[float, float]:
    """``(wall, cpu)`` seconds from starting ``strandlab demo`` with an empty Numba cache to its
    progress bar showing the first frame."""
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "numba_cache")
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "strandlab.cli", "demo", "--out",
                                 os.path.join(tmp, "out"), "--frames", "3"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=_env(src, cache), cwd=tmp)
        text = ""
        wall = None
        try:
            while time.perf_counter() - t0 < timeout:
                ready, _, _ = select.select([proc.stderr], [], [], 0.05)
                if not ready:
                    continue
                chunk = os.read(proc.stderr.fileno(), 65536)
                if not chunk:
                    break
                text += chunk.decode(errors="replace")
                if FIRST_FRAME.search(text):
                    wall = time.perf_counter() - t0
                    break
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            _, _, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            proc.stderr.close()
        if wall is None:
            raise RuntimeError(f"no first frame from strandlab demo ({src}):\n{text[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime


def kernels(top: int) -> int:
    """Compile the demo's step from an empty cache in this process; list compile times."""
    if "NUMBA_CACHE_DIR" not in os.environ:
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="strandlab_cold_")
    from numba.core import event

    clock = time.process_time
    records = []
    stack = []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append([clock(), 0.0])

        def on_end(self, ev):
            start, inner = stack.pop()
            took = clock() - start
            if stack:
                stack[-1][1] += took
            f = ev.data["dispatcher"].py_func
            records.append((took - inner, took, f"{f.__module__}.{f.__qualname__}"))

    event.register("numba:compile", Listener())
    c0, w0 = clock(), time.perf_counter()
    from strandlab.scenes import get_scene

    c1 = clock()
    sim = get_scene("demo", frames=1)
    solver = sim.make_solver()
    state = solver.state()
    c2 = clock()
    solver.step(state, state, sim.dt)
    c3 = clock()
    print(f"CPU seconds: import {c1 - c0:.1f}, build the solver {c2 - c1:.1f}, first step "
          f"{c3 - c2:.1f}; total {c3 - c0:.1f} (wall {time.perf_counter() - w0:.1f}); "
          f"{len(records)} functions compiled")
    print(f"{'own s':>6} {'incl s':>6}  function")
    for own, incl, name in sorted(records, reverse=True)[:top]:
        print(f"{own:6.2f} {incl:6.2f}  {name}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="runs per tree (default 3)")
    ap.add_argument("--compare-to", metavar="PATH", help="also time the checkout at PATH")
    ap.add_argument("--kernels", action="store_true",
                    help="list the demo's compiled functions by compile time instead")
    ap.add_argument("--top", type=int, default=25, help="functions listed by --kernels")
    args = ap.parse_args(argv)
    if args.kernels:
        return kernels(args.top)
    trees = [("this", os.path.join(ROOT, "src"))]
    if args.compare_to:
        trees.append(("other", os.path.join(os.path.abspath(args.compare_to), "src")))
    res = {name: [] for name, _ in trees}
    for _ in range(args.repeats):
        for name, src in trees:  # alternate so that both see the same load
            res[name].append((import_seconds(src), *first_frame(src)))
    print(f"strandlab demo from an empty Numba cache, {args.repeats} runs per tree (seconds; "
          f"min / median)" + (f"; other = {args.compare_to}" if args.compare_to else ""))
    print(f"{'tree':>6} | {'import':>13} | {'first frame wall':>17} | {'first frame CPU':>16}")
    for name, _ in trees:
        cols = []
        for k in range(3):
            v = sorted(r[k] for r in res[name])
            cols.append(f"{v[0]:6.1f} / {v[len(v) // 2]:6.1f}")
        print(f"{name:>6} | {cols[0]:>13} | {cols[1]:>17} | {cols[2]:>16}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
