"""Rods, shells and solids: what one Newton iteration costs at least, against the budget per
iteration that 10 times the paper's speed per frame leaves (issue 9).

For each object of :data:`bench_mixed.CASES` (the same scenes and sizes): the Newton iterations
a frame takes at the scene's defaults (its step, the tolerance), the CPU time a frame and an
iteration, then, at the state reached, the best of ``--repeat`` calls of what every iteration
does at least once: every term evaluated with its Hessian (the rods' frames prepared first),
every term evaluated without (a line search trial), the Hessians scattered into the sparse
matrix, one numeric factorisation of the reduced matrix by QDLDL and by CHOLMOD (through
cvxopt, in the order the sparse solver takes for it), and one solve with each; then the entries
of CHOLMOD's factor ``L`` and the rate of its factorisation (``sum(c_j^2)`` over the columns'
counts ``c_j``, about its floating-point operations, over its time).  The budget is
the paper's time a frame over 10, divided by the iterations a frame.  Run with one thread
(``NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``, set here before the imports when not given).

    python benchmarks/bench_mixed_floor.py [--cases frisbee,"toy ball"] [--frames 8]
                                           [--repeat 15]
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from bench_mixed import CASES, PAPER_MS_PER_FRAME, start_case


def _best_ms(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times)


def floor(case, frames: int, repeat: int) -> dict:
    """The figures of one case (module docstring) as a dict."""
    from strandlab.implicit.ldl import QdldlFactor
    from strandlab.implicit.supernodal import SupernodalFactor

    sim, sol, s, steps = start_case(case)
    frames = case.frames or frames
    iterations = 0
    c0 = time.process_time()
    for _ in range(frames * steps):
        sol.step(s, s, sim.dt)
        iterations += sol.last_info.iterations
    cpu = 1e3 * (time.process_time() - c0) / frames
    integ = sol.integrator
    a, solver, q = integ.assembly, integ.linear_solver, s.q.copy()

    def terms(hessian):
        integ.system.prepare(q)
        a.evaluate(q, hessian=hessian)

    out = dict(iterations=iterations / frames, cpu=cpu, paper=PAPER_MS_PER_FRAME[case.paper],
               hessians=_best_ms(lambda: terms(True), repeat),
               gradients=_best_ms(lambda: terms(False), repeat),
               assembly=_best_ms(lambda: solver.assemble(hess_scale=1.0,
                                                         diagonal=integ._diag), repeat))
    A, diag, _ = solver._reduced_matrix()
    A = A.tocsc()
    A.sort_indices()
    scale, b = np.abs(diag), np.ones(A.shape[0])
    out["dofs"] = A.shape[0]
    # CHOLMOD in the order the solver chose for its cvxopt backend at its reduction
    nested = solver._nested
    cholmod = SupernodalFactor(nested=nested)
    for label, f in (("qdldl", QdldlFactor()), ("cholmod", cholmod)):
        out[label] = _best_ms(lambda f=f: f.factor(A, scale, 0.0), repeat)
        out[label + "_solve"] = _best_ms(lambda f=f: f.solve(b), 3 * repeat)
    c = cholmod.column_counts().astype(np.float64)
    out["l_entries"], out["flops"] = int(c.sum()), float(np.sum(c * c))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="frisbee,toy ball,umbrella",
                    help="comma-separated names of bench_mixed.CASES")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args(argv)
    names = a.cases.split(",")
    cases = [c for c in CASES if c.name in names]
    if len(cases) != len(names):
        raise SystemExit(f"unknown case in {a.cases!r}; known: "
                         f"{', '.join(c.name for c in CASES)}")
    print(f"{'object':12s} {'DOFs':>5s} {'it/frame':>8s} {'ms/frame':>8s} {'ms/it':>6s} "
          f"{'budget/it':>9s} {'Hessians':>8s} {'gradients':>9s} {'assembly':>8s} "
          f"{'QDLDL':>7s} {'CHOLMOD':>7s} {'solves':>13s} {'L entries':>9s} {'GFlop/s':>7s}")
    for case in cases:
        r = floor(case, a.frames, a.repeat)
        budget = r["paper"] / 10.0 / r["iterations"]
        print(f"{case.name:12s} {r['dofs']:5d} {r['iterations']:8.1f} {r['cpu']:8.1f} "
              f"{r['cpu'] / r['iterations']:6.2f} {budget:9.2f} {r['hessians']:8.3f} "
              f"{r['gradients']:9.3f} {r['assembly']:8.3f} {r['qdldl']:7.3f} "
              f"{r['cholmod']:7.3f} {r['qdldl_solve']:6.3f}/{r['cholmod_solve']:6.3f} "
              f"{r['l_entries']:9d} {r['flops'] / r['cholmod'] / 1e6:7.2f}", flush=True)


if __name__ == "__main__":
    main()
