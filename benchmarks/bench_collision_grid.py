"""The uniform grid of collision/grid.py: what the paper's 7-voxel search misses, and its cost.

1. Miss rates.  For random strands of capsules (random walks of 11 particles, segments of
   length l = 2 cm, radius r) the share of the pairs closer than ``r_i + r_j`` (brute force,
   ``brute_force_pairs``) that the 7-voxel search does not report, at the smallest voxel the
   grid accepts (``l + 2 r``) and at twice that; the 27-voxel search is checked to find them all.
   Then pairs of segments whose centrelines cross at a random point, of lengths in
   [0.9, 1] l, searched with a voxel one segment long (the paper's condition) and two segments
   long.
2. Cost.  Milliseconds per search (grid rebuild included) on the positions of the built-in hair
   scene after it has fallen for one second (200 strands x 20 edges), 27 and 7 voxels, against
   the brute-force test of every pair.

Run: ``python benchmarks/bench_collision_grid.py`` (``--seeds N`` random configurations per
case, default 40).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from strandlab.collision.grid import SEARCH_7, SEARCH_27, SegmentGrid, voxel_needed
from strandlab.collision.segment_contact import (
    brute_force_pairs,
    chain_segments,
    make_segment_set,
)


def random_strands(rng, n_strands=40, n_pts=11, seg=0.02, box=0.2):
    d = rng.normal(size=(n_strands, n_pts - 1, 3))
    d *= seg / np.linalg.norm(d, axis=2)[..., None]
    p0 = rng.uniform(0.0, box, (n_strands, 1, 3))
    return np.concatenate([p0, p0 + np.cumsum(d, axis=1)], axis=1).reshape(-1, 3)


def brute(x, segs, margin=0.0):
    out = np.zeros((200000, 2), dtype=np.int64)
    n = brute_force_pairs(x, segs, margin, out)
    return set(map(tuple, out[:n].tolist()))


def found(x, segs, voxel, search, margin=0.0):
    return set(map(tuple, SegmentGrid(segs, voxel=voxel, search=search,
                                      margin=margin).find(x).tolist()))


def capsule_miss_rates(seeds: int) -> None:
    print("random capsule strands (40 x 10 segments of 2 cm): pairs in contact the 7-voxel "
          "search misses")
    print(f"{'r / l':>6}{'voxel':>14}{'pairs':>8}{'missed':>8}{'share':>9}")
    for ratio in (0.05, 0.1, 0.2):
        r = ratio * 0.02
        for fac in (1.0, 2.0):
            total = missed = 0
            for seed in range(seeds):
                rng = np.random.default_rng(seed)
                x = random_strands(rng)
                segs = chain_segments(np.arange(41) * 11, r, skip=2)
                ref = brute(x, segs)
                voxel = fac * voxel_needed(x, segs, 0.0)[0] * (1 + 1e-12)
                assert found(x, segs, voxel, SEARCH_27) == ref
                got = found(x, segs, voxel, SEARCH_7)
                assert got <= ref
                total += len(ref)
                missed += len(ref - got)
            label = "l + 2r" if fac == 1.0 else "2 (l + 2r)"
            print(f"{ratio:6.2f}{label:>14}{total:8d}{missed:8d}{missed / total:9.2%}")


def crossing_miss_rates(seeds: int) -> None:
    print("pairs of crossing centrelines (r = 0), 7 voxels, segments 0.9 to 1 times l long:")
    n = 5000
    for seg_per_voxel in (1.0, 0.5):
        total = missed = 0
        for seed in range(seeds):
            rng = np.random.default_rng(1000 + seed)
            p = rng.uniform(0.0, 1.0, (n, 1, 3)) + np.array([10.0, 0.0, 0.0]) * np.arange(n)[
                :, None, None]
            u = rng.normal(size=(n, 2, 3))
            u /= np.linalg.norm(u, axis=2)[..., None]
            ln = seg_per_voxel * rng.uniform(0.9, 1.0, (n, 2, 1))
            f = rng.uniform(size=(n, 2, 1))
            ends = np.stack([p - f * ln * u, p + (1 - f) * ln * u], axis=2)  # n, 2, 2, 3
            x = np.ascontiguousarray(ends.reshape(-1, 3))
            a = np.arange(0, 4 * n, 2)
            segs = make_segment_set(a, a + 1, 0.0, np.arange(2 * n), 4 * n)
            got = found(x, segs, 1.0, SEARCH_7, 1e-9)
            total += n
            missed += n - len(got)
        print(f"  voxel = {1 / seg_per_voxel:.0f} segment(s): {missed} of {total} missed "
              f"({missed / total:.4%})")


def hair_positions():
    from strandlab.pbd.solver import PBDSolver
    from strandlab.scenes import get_scene
    sim = get_scene("hair")
    solver = PBDSolver(sim.scene, sim.settings)
    state = solver.state()
    for _ in range(60):
        solver.step(state, state, sim.dt)
    m = solver.model
    strand = np.repeat(np.arange(m.n_strands), np.diff(m.strand_edge_start))
    segs = make_segment_set(m.edge_p0, m.edge_p1, 0.5 * (m.collide_radius[m.edge_p0]
                                                         + m.collide_radius[m.edge_p1]),
                            strand, m.n_points)
    return state.x.copy(), segs


def timing(repeats: int = 20) -> None:
    x, segs = hair_positions()
    margin = 2 * segs.max_radius
    voxel = voxel_needed(x, segs, margin)[0]
    print(f"hair after 1 s: {len(segs.a)} segments, voxel {voxel * 1e3:.2f} mm, margin "
          f"{margin * 1e3:.1f} mm")
    for search in (SEARCH_27, SEARCH_7):
        g = SegmentGrid(segs, voxel=voxel, search=search, margin=margin)
        g.find(x)
        best = np.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            n = len(g.find(x))
            best = min(best, time.perf_counter() - t0)
        print(f"  {search:2d} voxels: {best * 1e3:7.2f} ms, {n} pairs")
    out = np.zeros((100000, 2), dtype=np.int64)
    brute_force_pairs(x, segs, margin, out)
    t0 = time.perf_counter()
    n = brute_force_pairs(x, segs, margin, out)
    print(f"  brute force: {(time.perf_counter() - t0) * 1e3:7.2f} ms, {n} pairs")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    a = ap.parse_args(argv)
    capsule_miss_rates(a.seeds)
    crossing_miss_rates(a.seeds)
    timing()


if __name__ == "__main__":
    main()
