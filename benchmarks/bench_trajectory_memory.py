"""Trajectory output: memory and write cost of streaming HDF5 frames against one ``.npz``.

A synthetic run of 200 open strands of 21 vertices (V = 4200 vertices, E = 4000 edges; no
solver: every frame is a random-walk step of the previous one, positions [m] and unit d1) is
written with 60 and with 2,000 frames by:

- ``h5``: :class:`strandlab.io.store.TrajectoryWriter`, one flushed append per frame,
  uncompressed (the default);
- ``h5-gzip``: the same with gzip level 4 and byte shuffling;
- ``npz``: frames copied into preallocated [T, V, 3] / [T, E, 3] arrays as the run goes (what
  an in-memory trajectory holds), then ``np.savez_compressed`` of the whole run at the end.

Each case runs in its own child process, twice: once for the wall time and the peak resident
set size (``resource.getrusage`` maxrss; ``growth``: over the process with numpy and h5py
loaded before writing; ``2nd half``: from the middle frame to the end), once
under ``tracemalloc`` for the peak of Python-tracked allocations (numpy arrays included; HDF5's
own C buffers are not tracked, the maxrss figure covers them).  ``ms/frame`` is the time spent
in writing calls (append + close, or the copies + savez_compressed) divided by the frames;
generating the synthetic frames is not timed.  For the 2,000-frame ``h5`` file the script also
times reading one frame (``traj.frame(k)``, random k) and one strand over all frames
(``traj.strand(i)``) through the lazy reader.

Run: ``python benchmarks/bench_trajectory_memory.py`` (``--quick`` for 60 and 400 frames).
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
import tracemalloc

import numpy as np

N_STRANDS, N_VERTS = 200, 21
METHODS = ("h5", "h5-gzip", "npz")


def layout():
    """Offsets, flags and radii of the synthetic run."""
    so = np.arange(N_STRANDS + 1) * N_VERTS
    eo = np.arange(N_STRANDS + 1) * (N_VERTS - 1)
    return so, eo, np.zeros(N_STRANDS, dtype=bool), np.full(N_STRANDS, 1e-4)


def frames(n: int, seed: int = 0):
    """``n`` frames (time [s], positions [V, 3], d1 [E, 3]) of a random walk."""
    rng = np.random.default_rng(seed)
    v, e = N_STRANDS * N_VERTS, N_STRANDS * (N_VERTS - 1)
    x = np.zeros((v, 3))
    x[:, 0] = np.repeat(np.arange(N_STRANDS) * 5e-3, N_VERTS)
    x[:, 2] = -np.tile(np.arange(N_VERTS) * 1e-2, N_STRANDS)
    d1 = np.zeros((e, 3))
    d1[:, 1] = 1.0
    for k in range(n):
        if k:
            x += rng.normal(scale=1e-4, size=x.shape)
            d1 += rng.normal(scale=1e-2, size=d1.shape)
            d1 /= np.linalg.norm(d1, axis=1, keepdims=True)
        yield k / 60.0, x, d1


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # kB on Linux


def child(method: str, n: int, folder: str, trace: bool) -> dict:
    """Write one case; returns its measurements."""
    import h5py  # noqa: F401  (loaded before measuring, like the library's own code)

    from strandlab.io.store import TrajectoryWriter

    so, eo, closed, radii = layout()
    v, e = int(so[-1]), int(eo[-1])
    for _ in frames(2):             # warm up numpy / h5py code paths before measuring
        pass
    rss0 = maxrss_mb()
    if trace:
        tracemalloc.start()
    spent = 0.0
    if method.startswith("h5"):
        path = os.path.join(folder, f"{method}_{n}.h5")
        t0 = time.perf_counter()
        w = TrajectoryWriter(path, strand_offsets=so, edge_offsets=eo, closed=closed,
                             radii=radii, metadata={"synthetic": True},
                             solver={"type": "none", "settings": {}},
                             compression="gzip" if method == "h5-gzip" else None)
        spent += time.perf_counter() - t0
        for k, (t, x, d1) in enumerate(frames(n)):
            t0 = time.perf_counter()
            w.append(t, x, d1)
            spent += time.perf_counter() - t0
            if k == n // 2:
                rss_half = maxrss_mb()
        t0 = time.perf_counter()
        w.close()
        spent += time.perf_counter() - t0
    else:
        path = os.path.join(folder, f"{method}_{n}.npz")
        t0 = time.perf_counter()
        times, pos, dd = np.zeros(n), np.zeros((n, v, 3)), np.zeros((n, e, 3))
        spent += time.perf_counter() - t0
        for k, (t, x, d1) in enumerate(frames(n)):
            t0 = time.perf_counter()
            times[k], pos[k], dd[k] = t, x, d1
            spent += time.perf_counter() - t0
            if k == n // 2:
                rss_half = maxrss_mb()
        t0 = time.perf_counter()
        np.savez_compressed(path, times=times, positions=pos, d1=dd, strand_offsets=so,
                            edge_offsets=eo, closed=closed, radii=radii)
        spent += time.perf_counter() - t0
    out = {"method": method, "frames": n, "ms_per_frame": 1e3 * spent / n,
           "total_s": spent, "file_mb": os.path.getsize(path) / 2**20,
           "rss_before_mb": rss0, "rss_half_mb": rss_half, "rss_peak_mb": maxrss_mb()}
    if trace:
        out["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    elif method == "h5" and n >= 1000:
        out.update(read_costs(path))
    os.remove(path)
    return out


def read_costs(path: str) -> dict:
    """Lazy reading: one frame at random, and one strand over every frame [ms]."""
    from strandlab.io.trajectory import load_trajectory

    rng = np.random.default_rng(1)
    with load_trajectory(path) as tr:
        ks = rng.integers(0, tr.n_frames, size=50)
        t0 = time.perf_counter()
        for k in ks:
            tr.frame(int(k))
        frame_ms = 1e3 * (time.perf_counter() - t0) / ks.size
        t0 = time.perf_counter()
        tr.strand(N_STRANDS // 2)
        strand_ms = 1e3 * (time.perf_counter() - t0)
    return {"read_frame_ms": frame_ms, "read_strand_ms": strand_ms}


def run_child(method: str, n: int, folder: str, trace: bool) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", method, str(n), folder]
    if trace:
        cmd.append("--trace")
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"case {method} x {n} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="60 and 400 frames")
    ap.add_argument("--frames", type=int, nargs="+", help="frame counts (default 60 2000)")
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--child", nargs=3, metavar=("METHOD", "FRAMES", "DIR"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        method, n, folder = args.child
        print(json.dumps(child(method, int(n), folder, args.trace)))
        return 0
    counts = args.frames or ([60, 400] if args.quick else [60, 2000])
    frame_kb = N_STRANDS * (2 * N_VERTS - 1) * 3 * 8 / 1024
    print(f"{N_STRANDS} strands x {N_VERTS} vertices: {frame_kb:.0f} kB of positions + d1 "
          f"per frame (float64)")
    head = (f"{'method':8s} {'frames':>6s} {'ms/frame':>9s} {'total s':>8s} {'file MB':>8s} "
            f"{'maxrss MB':>10s} {'growth MB':>10s} {'2nd half':>9s} {'traced MB':>10s}")
    print(head)
    print("-" * len(head))
    reads = []
    with tempfile.TemporaryDirectory() as folder:
        for n in counts:
            for method in args.methods:
                r = run_child(method, n, folder, trace=False)
                tr = run_child(method, n, folder, trace=True)
                print(f"{method:8s} {n:6d} {r['ms_per_frame']:9.2f} {r['total_s']:8.2f} "
                      f"{r['file_mb']:8.1f} {r['rss_peak_mb']:10.1f} "
                      f"{r['rss_peak_mb'] - r['rss_before_mb']:10.1f} "
                      f"{r['rss_peak_mb'] - r['rss_half_mb']:9.1f} "
                      f"{tr['traced_peak_mb']:10.2f}", flush=True)
                if "read_frame_ms" in r:
                    reads.append(r)
    for r in reads:
        print(f"lazy read of the {r['frames']}-frame h5 file: one frame {r['read_frame_ms']:.2f} "
              f"ms, one strand over all frames {r['read_strand_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
