"""The built-in PBD hair scene with and without contacts between strands.

``get_scene("hair")``: 200 strands of 20 edges (r = 0.5 mm, 12.5 mm edges) rooted on a head,
the paper's budget (one substep of 10 passes per step of 1/60 s, direct edge lengths).  The
script lets the hair fall for ``--settle`` steps, then times ``--steps`` steps (ms per step,
best of ``--repeats``) with ``strand_collision`` off, on with the 27-voxel search (the default)
and on with the paper's 7-voxel search, and prints the ratios to the run without contacts.  It
also counts, at the end of each run, the pairs of segments of different strands closer than the
sum of their radii by more than 1 % (capsules overlapping), and the candidate pairs a step
projects.

Run: ``python benchmarks/bench_pbd_strand_contact.py`` (``--threads N`` sets Numba's threads;
default 1).  Kernels are compiled and warmed up before timing.
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from strandlab.collision.grid import SegmentGrid, voxel_needed
from strandlab.collision.segment_contact import make_segment_set, pair_gap
from strandlab.pbd.solver import PBDSolver
from strandlab.scenes import get_scene


def overlapping_pairs(solver: PBDSolver, x: np.ndarray) -> int:
    """Pairs of edges of different strands whose capsules overlap by more than 1 % of their
    contact distance (centreline distance < 0.99 (r_i + r_j))."""
    m = solver.model
    strand = np.repeat(np.arange(m.n_strands), np.diff(m.strand_edge_start))
    radius = 0.5 * (m.collide_radius[m.edge_p0] + m.collide_radius[m.edge_p1])
    segs = make_segment_set(m.edge_p0, m.edge_p1, radius, strand, m.n_points)
    grid = SegmentGrid(segs, voxel=1.01 * voxel_needed(x, segs, 0.0)[0])
    deep = 0
    for i, j in grid.find(x):
        s, t, _, _, _, dist, contact = pair_gap(x, segs, i, j)
        deep += dist < 0.99 * contact
    return deep


def run(case: str, *, settle: int, steps: int, repeats: int) -> dict:
    on = case != "off"
    sim = get_scene("hair", strand_collision=on)
    settings = sim.settings
    if case == "7":
        settings = type(settings)(**{**settings.to_dict(), "contact_search": 7})
    best = np.inf
    for _ in range(repeats):
        solver = PBDSolver(sim.scene, settings)
        state = solver.state()
        for _ in range(settle):
            solver.step(state, state, sim.dt)
        t0 = time.perf_counter()
        for _ in range(steps):
            solver.step(state, state, sim.dt)
        best = min(best, (time.perf_counter() - t0) / steps * 1e3)
    pairs = int(solver._contact_buf.status[3]) if on else 0
    return {"case": case, "ms": best, "overlaps": overlapping_pairs(solver, state.x),
            "pairs": pairs}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settle", type=int, default=60)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))
    run("27", settle=2, steps=2, repeats=1)  # compile
    run("off", settle=2, steps=2, repeats=1)
    rows = [run(c, settle=a.settle, steps=a.steps, repeats=a.repeats) for c in ("off", "27", "7")]
    base = rows[0]["ms"]
    print(f"hair scene (200 strands x 20 edges), {numba.get_num_threads()} thread(s), "
          f"after {a.settle} steps, best of {a.repeats} x {a.steps} steps")
    print(f"{'strand contacts':<18}{'ms/step':>9}{'ratio':>8}{'pairs/step':>12}"
          f"{'overlaps':>10}")
    for r in rows:
        name = {"off": "off", "27": "on, 27 voxels", "7": "on, 7 voxels"}[r["case"]]
        print(f"{name:<18}{r['ms']:9.2f}{r['ms'] / base:8.2f}{r['pairs']:12d}"
              f"{r['overlaps']:10d}")


if __name__ == "__main__":
    main()
