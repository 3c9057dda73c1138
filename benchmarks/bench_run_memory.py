"""A real run streamed to disk: peak memory at few and many frames, write cost against step cost.

The built-in ``hair`` scene (200 strands of 20 edges on a head, position-based solver) runs with
``strandlab.simulate(sim, out=...)`` for each frame count (default 60 and 2,000), each in its own
child process, and the script prints per run:

- ``maxrss MB``: peak resident set size of the child (``resource.getrusage``);
- ``growth MB``: peak minus the resident size after the first frame (kernels compiled, solver and
  writer allocated), i.e. what the frames themselves cost;
- ``step ms``: steady-state solver time per step (``RunStats.steady_step_ms``);
- ``write ms/frame``: time spent appending frames to the HDF5 file, per frame;
- ``write/step``: the ratio.

Memory must not grow with the number of frames.  Run: ``python benchmarks/bench_run_memory.py``
(``--frames 60 600`` for a shorter run).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child(frames: int, folder: str) -> dict:
    import strandlab as sl
    from strandlab.io import store
    from strandlab.scenes import get_scene
    from strandlab.sim.runner import RunStats

    sim = get_scene("hair", frames=frames)
    write = {"s": 0.0, "n": 0}
    original = store.TrajectoryWriter.append

    def timed(self, *a, **k):
        t0 = time.perf_counter()
        out = original(self, *a, **k)
        write["s"] += time.perf_counter() - t0
        write["n"] += 1
        return out

    store.TrajectoryWriter.append = timed
    base = {}

    def after_first(f, state):
        if f == 1:
            base["rss"] = maxrss_mb()

    stats = RunStats()
    path = os.path.join(folder, f"hair_{frames}.h5")
    sl.simulate(sim, out=path, stats=stats, callback=after_first).close()
    peak = maxrss_mb()
    return {"frames": frames, "maxrss_mb": peak, "growth_mb": peak - base["rss"],
            "step_ms": stats.steady_step_ms, "write_ms": 1000.0 * write["s"] / write["n"],
            "file_mb": os.path.getsize(path) / 2**20}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, nargs="+", default=[60, 2000])
    ap.add_argument("--child", nargs=2, metavar=("FRAMES", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1])))
        return 0
    print(f"{'frames':>7} {'maxrss MB':>10} {'growth MB':>10} {'file MB':>8} {'step ms':>8} "
          f"{'write ms/frame':>15} {'write/step':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for n in args.frames:
            out = subprocess.run([sys.executable, __file__, "--child", str(n), folder],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{r['frames']:>7} {r['maxrss_mb']:>10.1f} {r['growth_mb']:>10.1f} "
                  f"{r['file_mb']:>8.1f} {r['step_ms']:>8.2f} {r['write_ms']:>15.3f} "
                  f"{r['write_ms'] / r['step_ms']:>10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
