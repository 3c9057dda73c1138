"""Linear algebra of the implicit integrator at hair scale: banded assembly, factor and solve.

B independent blocks of 399 DOFs laid out like rods with interleaved coordinates (100 points of
3 coordinates and 99 angles: x0 t0 x1 t1 ... x99) carry two synthetic terms with the stencils of
discrete elastic rods: stretch (x_i, x_{i+1}; 6 DOFs) and bend-twist (x_{i-1}, t_{i-1}, x_i,
t_i, x_{i+1}; 11 DOFs), so the bandwidth is 10.  Stencil Hessians are random symmetric positive
semi-definite, the diagonal is a mass term.  The script times, per call (best of ``--repeat``):

- ``gradient``: scatter of both terms' per-stencil gradients (:class:`Assembly`);
- ``assemble``: diagonal reset and scatter of the per-stencil Hessians into the band;
- ``factor``: per-block banded Cholesky; ``solve``: the two triangular solves (also as
  process CPU time, ``cpu``: the sum over threads, the undisturbed time with one thread);
- ``step``: one :class:`ImplicitEuler` step (one Newton iteration) with these terms, whose
  evaluation (``terms evaluate``: copying the fixed per-stencil values) stands in for a model's;
- the same for the sparse solver (SciPy SuperLU) with ``--sparse`` (slow at this size);

for each thread count of ``--threads`` (default 1 and 2), and the parallel/serial crossover for
small problems (``--small``).  Run: ``python benchmarks/bench_implicit_banded.py``.
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from strandlab.implicit import Assembly, BandedSolver, ImplicitEuler, SparseSolver, StencilTerm


class FixedTerm(StencilTerm):
    """A term whose per-stencil values are fixed arrays (copied on evaluation)."""

    def __init__(self, name, dofs, rng):
        self.name = name
        self.dofs = dofs
        n, k = dofs.shape
        a = rng.normal(size=(n, k, k))
        self.H = np.einsum("sab,scb->sac", a, a)
        self.g = rng.normal(size=(n, k))

    def evaluate(self, q, energy_out, grad_out, hess_out):
        energy_out[:] = 0.0
        grad_out[:] = self.g
        if hess_out is not None:
            hess_out[:] = self.H


def rod_dofs(n_blocks: int, n_points: int = 100):
    """Stretch and bend-twist stencils of ``n_blocks`` rods of ``n_points`` points."""
    per = 4 * n_points - 1
    base = np.arange(n_blocks)[:, None] * per
    i = np.arange(n_points - 1)
    stretch = np.concatenate([4 * i[:, None] + np.arange(3), 4 * i[:, None] + 4 + np.arange(3)],
                             axis=1)
    j = np.arange(1, n_points - 1)
    bend = 4 * (j[:, None] - 1) + np.arange(11)
    st = (base[:, :, None] + stretch[None]).reshape(-1, 6)
    bt = (base[:, :, None] + bend[None]).reshape(-1, 11)
    return per * n_blocks, per, st, bt


def best(f, repeat):
    """Smallest wall time of ``repeat`` calls [s] (the machine may be shared: the minimum is
    the least disturbed call)."""
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def cpu(f, repeat):
    """Smallest process CPU time of ``repeat`` calls [s]: all threads' time, so with one
    thread it is the wall time the call would take on an idle core."""
    t = []
    for _ in range(repeat):
        t0 = time.process_time()
        f()
        t.append(time.process_time() - t0)
    return min(t)


def measure(n_blocks, threads, repeat, sparse=False, parallel=None):
    rng = np.random.default_rng(0)
    n, per, st, bt = rod_dofs(n_blocks)
    terms = [FixedTerm("stretch", st, rng), FixedTerm("bend_twist", bt, rng)]
    asm = Assembly(terms, n, np.arange(n_blocks + 1) * per, parallel=parallel)
    asm.evaluate(np.zeros(n), hessian=True)
    diag = np.full(n, 10.0)
    fixed = np.zeros(n, dtype=bool)
    g, x = np.zeros(n), np.zeros(n)
    numba.set_num_threads(threads)
    out = {}
    sol = BandedSolver(asm, parallel=parallel)
    sol.assemble(hess_scale=1.0, diagonal=diag)  # warm up
    sol.factor(fixed)
    sol.solve(g, x)
    asm.gradient(g)
    out["gradient"] = best(lambda: asm.gradient(g), repeat)
    out["assemble"] = best(lambda: sol.assemble(hess_scale=1.0, diagonal=diag), repeat)
    out["factor"] = best(lambda: sol.factor(fixed), repeat)
    out["solve"] = best(lambda: sol.solve(g, x), repeat)
    out["factor cpu"] = cpu(lambda: sol.factor(fixed), repeat)
    out["solve cpu"] = cpu(lambda: sol.solve(g, x), repeat)
    # one integrator step (fixed count, one Newton iteration) with these terms
    system = type("S", (), {"n_dofs": n, "mass": np.full(n, 1e-3), "terms": terms,
                            "block_start": np.arange(n_blocks + 1) * per,
                            "begin_step": lambda self, q: None,
                            "prepare": lambda self, q: None})()
    integ = ImplicitEuler(system, parallel=parallel, solver_options={"parallel": parallel})
    q, v = np.zeros(n), np.zeros(n)
    integ.step(q, v, q, v, 1e-3)
    out["terms evaluate"] = best(lambda: asm.evaluate(q, hessian=True), repeat)
    out["step"] = best(lambda: integ.step(q, v, q, v, 1e-3), repeat)
    if sparse:
        sp = SparseSolver(asm, parallel=parallel)
        sp.assemble(hess_scale=1.0, diagonal=diag)  # warm up (compilation, reduced pattern)
        sp.factor(fixed)
        out["sparse assemble"] = best(lambda: sp.assemble(hess_scale=1.0, diagonal=diag), 3)
        out["sparse factor"] = best(lambda: sp.factor(fixed), 3)
        out["sparse solve"] = best(lambda: sp.solve(g, x), 3)
    return n, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", type=int, default=1900)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--sparse", action="store_true")
    ap.add_argument("--small", action="store_true", help="parallel vs serial, small problems")
    a = ap.parse_args()
    if a.small:
        for nb in (1, 2, 4, 8, 16, 64):
            row = []
            for par in (False, True):
                _, o = measure(nb, 2, 50, parallel=par)
                row.append(o)
            print(f"{nb:4d} blocks  " + "  ".join(
                f"{k} ser {row[0][k] * 1e6:7.1f} us par {row[1][k] * 1e6:7.1f} us"
                for k in ("gradient", "assemble", "factor", "solve")))
        return
    for th in a.threads:
        n, o = measure(a.blocks, th, a.repeat, sparse=a.sparse)
        print(f"{a.blocks} blocks x 399 DOFs ({n} DOFs), bandwidth 10, {th} thread(s):")
        for k, v in o.items():
            print(f"  {k:16s} {v * 1e3:8.2f} ms")
        print(f"  factor + solve   {(o['factor'] + o['solve']) * 1e3:8.2f} ms")
        print(f"  step - evaluate  {(o['step'] - o['terms evaluate']) * 1e3:8.2f} ms "
              f"(the integrator's own work in a one-iteration step)")


if __name__ == "__main__":
    main()
