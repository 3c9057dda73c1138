"""Determinism across thread counts, parallel and serial kernels; no allocation per step."""
from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

import numba
import numpy as np
import pytest
from implicit_toys import SpringTerm, ToySystem, chain_springs

from strandlab.implicit import ImplicitEuler, NewtonSettings


def system(n_chains, n_points, coupled, seed=0):
    rng = np.random.default_rng(seed)
    pairs, k, rest = chain_springs(n_chains, n_points)
    if coupled:  # springs between neighbouring chains: stencils spanning two blocks
        extra = [(c * n_points + 2, (c + 1) * n_points + 3) for c in range(n_chains - 1)]
        pairs = np.vstack([pairs, extra])
    n_p = n_chains * n_points
    x = np.zeros((n_p, 3))
    x[:, 0] = np.tile(np.arange(n_points) * rest, n_chains)
    x[:, 1] = np.repeat(np.arange(n_chains) * 0.1, n_points)
    x += 0.02 * rng.normal(size=x.shape)
    sys_ = ToySystem(3 * n_p, np.full(3 * n_p, 0.05), [SpringTerm(pairs, k, rest)],
                     np.arange(n_chains + 1) * 3 * n_points)
    return sys_, x.reshape(-1), rng.normal(size=3 * n_p)


def run(kind, coupled, parallel, threads):
    sys_, q, v = system(30, 20, coupled)
    settings = NewtonSettings(tolerance=1e-12, max_iterations=10, stiffness_damping=1e-3,
                              mass_damping=0.5)
    integ = ImplicitEuler(sys_, settings, linear_solver=kind, parallel=parallel,
                          solver_options={"parallel": parallel})
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        f = np.tile([0.0, 0.0, -0.5], len(q) // 3)
        for _ in range(3):
            integ.step(q, v, q, v, 0.01, f_ext=f)
    finally:
        numba.set_num_threads(old)
    return q, v


@pytest.mark.parametrize("kind,coupled", [("banded", False), ("sparse", False),
                                          ("sparse", True)])
def test_bit_identical_across_threads_and_kernels(kind, coupled):
    if numba.config.NUMBA_NUM_THREADS < 2:
        # one core: run this very test in a process given two Numba threads
        env = dict(os.environ, NUMBA_NUM_THREADS="2")
        node = f"{__file__}::test_bit_identical_across_threads_and_kernels[{kind}-{coupled}]"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               node], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:]
        return
    ref = run(kind, coupled, False, 1)
    for parallel, threads in [(True, 1), (True, 2), (None, 2)]:
        q, v = run(kind, coupled, parallel, threads)
        np.testing.assert_array_equal(q, ref[0])
        np.testing.assert_array_equal(v, ref[1])


def test_banded_step_allocates_no_arrays():
    sys_, q, v = system(40, 50, False)  # 6000 DOFs: one vector is 48 kB
    sys_.track = False
    integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-10, stiffness_damping=1e-3))
    f = np.tile([0.0, 0.0, -0.5], len(q) // 3)
    integ.step(q, v, q, v, 0.01, f_ext=f)  # first call: compilation and caches
    tracemalloc.start()
    try:
        integ.step(q, v, q, v, 0.01, f_ext=f)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16_000, peak  # Python bookkeeping (statistics objects) only
