"""Surface contact of the mixed model: the cost of its candidate pairs, step by step.

Steps the umbrella (``mixed_umbrella(rings=32)``, 3173 vertices; its canopy buckles from the
eighth step, its rim moving up to 2 mm a step while most of it hardly moves, and the pair list
grows to about 20 000 candidates while none touches; with one margin for all vertices, the
fastest's, it grew to 100 000-200 000) and,
after each step, times the contact term on the step's end state: one evaluation with
Hessians into the buffer it filled last (the solver's case), one into a fresh ``np.zeros``
buffer (after a new pair list), and one move limit (``max_step``) of a move of 1 mm per vertex;
the fastest of ``--repeats``.  Prints per step: pairs listed, pairs in contact, the three
times [ms] and ns per pair of the first.

    python benchmarks/bench_mesh_contact.py [--steps 21] [--repeats 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def _best(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=21)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)

    from strandlab.mixed import MixedSolver
    from strandlab.scenes.mixed_objects import mixed_umbrella

    sim = mixed_umbrella(rings=32)
    sol = MixedSolver(sim.scene, sim.settings)
    s = sol.state()
    asm = sol.integrator.linear_solver.assembly
    t = next(i for i, term in enumerate(asm.terms) if term.dynamic)
    term = asm.terms[t]
    rng = np.random.default_rng(1)
    print(f"{'step':>4} {'pairs':>8} {'contact':>7} {'kept ms':>8} {'fresh ms':>8} "
          f"{'move ms':>8} {'ns/pair':>8}")
    for step in range(args.steps):
        sol.step(s, s, sim.dt)
        n = term.n_stencils
        if n == 0:
            print(f"{step:>4} {0:>8}")
            continue
        q = np.ascontiguousarray(s.q).reshape(-1)
        e, g = np.zeros(n), np.zeros((n, 12))
        kept = np.zeros((n, 12, 12))
        term.evaluate(q, e, g, kept)
        dq = 1e-3 * rng.normal(size=q.size)
        t_kept = _best(lambda a=(q, e, g, kept): term.evaluate(*a), args.repeats)
        t_fresh = _best(lambda a=(q, e, g, n): term.evaluate(*a[:3], np.zeros((a[3], 12, 12))),
                        args.repeats)
        t_move = _best(lambda a=(q, dq): term.max_step(*a), args.repeats)
        print(f"{step:>4} {n:>8} {term.n_active:>7} {1e3 * t_kept:8.2f} {1e3 * t_fresh:8.2f} "
              f"{1e3 * t_move:8.2f} {1e9 * t_kept / n:8.1f}")


if __name__ == "__main__":
    main()
