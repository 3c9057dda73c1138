"""The sparse solver's factorisations on the mixed model's umbrella matrix: SciPy's SuperLU,
CHOLMOD's supernodal Cholesky through cvxopt (numeric refactorisation of the analysed
pattern, as the solver does) and MKL's PARDISO through pypardiso's public API (``factorize``: ordering, symbolic analysis and
numeric factorisation, phase 12; ``solve``, phase 33), against PARDISO's phases run apart
through pypardiso's private ``_call_pardiso`` (analysis, phase 11, once per pattern; numeric
factorisation, phase 22; what the public API cannot do), with the METIS (``iparm(2) = 2``, the
solver's) and the AMD (``iparm(2) = 0``) orderings.

The matrix: the reduced Newton matrix of the first step of ``mixed_umbrella(rings=32)`` (3173
vertices, as in ``bench_mixed.py``), the fixed DOFs removed, as the sparse solver factors it.
Printed: CPU milliseconds of one thread (``MKL_Set_Num_Threads(1)``), best of ``--repeats``,
and the relative residual of a solve.  PARDISO needs the ``pardiso`` extra (``pip install
'strandlab[pardiso]'``); without it only SuperLU is timed.

    PYTHONPATH=src python benchmarks/bench_sparse_factor.py [--rings 32] [--repeats 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.sparse.linalg import splu


def umbrella_matrix(rings: int):
    """The reduced matrix (CSC, sorted, both triangles) of the umbrella's first Newton
    iteration, and its size."""
    from strandlab.mixed import MixedSettings, MixedSolver
    from strandlab.scenes.mixed_objects import mixed_umbrella

    sim = mixed_umbrella(rings=rings)
    settings = MixedSettings(**{**sim.settings.to_dict(), "linear_solver": "direct"})
    sol = MixedSolver(sim.scene, settings)
    s = sol.state()
    sol.step(s, s, sim.dt)
    A, _, _ = sol.integrator.linear_solver._reduced_matrix()
    A.sort_indices()
    return A


def cpu_ms(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return 1e3 * best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rings", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    A = umbrella_matrix(a.rings)
    n = A.shape[0]
    b = np.random.default_rng(0).normal(size=n)
    print(f"umbrella (rings={a.rings}): {n} free coordinates, {A.nnz} non-zeros; CPU ms of one "
          f"thread, best of {a.repeats}")

    def residual(x):
        return np.linalg.norm(A @ x - b) / np.linalg.norm(b)

    lu = splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
              options={"SymmetricMode": True})
    t_f = cpu_ms(lambda: splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                              options={"SymmetricMode": True}), a.repeats)
    t_s = cpu_ms(lambda: lu.solve(b), a.repeats)
    print(f"SuperLU: factorisation {t_f:.1f}, solve {t_s:.2f}, residual {residual(lu.solve(b)):.1e}")

    from strandlab.implicit.supernodal import SupernodalFactor, cvxopt_available

    if cvxopt_available():
        f = SupernodalFactor()
        f.factor(A)                               # ordering and analysis, once per pattern
        t_f = cpu_ms(lambda: f.factor(A), a.repeats)
        t_s = cpu_ms(lambda: f.solve(b), a.repeats)
        print(f"CHOLMOD (cvxopt, supernodal): numeric factorisation {t_f:.1f}, solve "
              f"{t_s:.2f}, residual {residual(f.solve(b)):.1e}")
    else:
        print("CHOLMOD (cvxopt): cvxopt not installed (the cvxopt extra)")

    from strandlab.implicit.sparse import PARDISO_IPARM, _import_pypardiso, pardiso_available

    if not pardiso_available():
        print("PARDISO: pypardiso not installed (the pardiso extra)")
        return
    import scipy.sparse as sp

    pypardiso = _import_pypardiso()
    upper = sp.triu(A, format="csr")
    upper.sort_indices()
    for order, name in ((2, "METIS"), (0, "AMD")):
        ps = pypardiso.PyPardisoSolver(mtype=2)
        ps.libmkl.MKL_Set_Num_Threads(1)
        for i, v in PARDISO_IPARM:
            ps.set_iparm(i, order if i == 2 else v)
        t_12 = cpu_ms(lambda ps=ps: ps.factorize(upper), a.repeats)
        t_33 = cpu_ms(lambda ps=ps: ps.solve(upper, b), a.repeats)
        res = residual(ps.solve(upper, b))

        def phase(p, ps=ps):
            ps.set_phase(p)
            ps._call_pardiso(upper, b)          # private: the single phases

        t_11 = cpu_ms(lambda: phase(11), a.repeats)
        t_22 = cpu_ms(lambda: phase(22), a.repeats)
        print(f"PARDISO {name:5s}: public factorize (12) {t_12:.1f}, solve (33) {t_33:.2f}, "
              f"residual {res:.1e}; private analysis (11) {t_11:.1f}, numeric (22) "
              f"{t_22:.1f}; factor non-zeros {int(ps.iparm[17])}")


if __name__ == "__main__":
    main()
