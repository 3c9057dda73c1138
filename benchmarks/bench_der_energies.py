"""Time the discrete-elastic-rod energy and frame kernels at hair scale.

1,900 strands of 100 vertices (186,200 bend-twist stencils, 188,100 edges), wavy helices;
prints the best of several calls of each kernel with and without Hessians.

    PYTHONPATH=src python benchmarks/bench_der_energies.py [--strands N] [--vertices n]
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from strandlab.rods import kernels as K


def build(n_strands, n_vertices, seed=0):
    rng = np.random.default_rng(seed)
    n = n_vertices
    per = 4 * n - 1
    off = per * np.arange(n_strands)[:, None]
    vx = off[:, :, None] + (4 * np.arange(n))[None, :, None] + np.arange(3)   # [S, n, 3]
    th = off + 4 * np.arange(n - 1) + 3                                         # [S, n-1]
    q = np.zeros(per * n_strands)
    s = np.linspace(0.0, 6.0, n)
    for k in range(n_strands):
        x = np.c_[0.01 * np.cos(3 * s), 0.01 * np.sin(3 * s), -0.03 * s]
        q[vx[k]] = x + rng.normal(scale=1e-4, size=x.shape) + rng.normal(size=3)
    q[th] = rng.normal(scale=0.1, size=th.shape)
    stretch = np.concatenate([vx[:, :-1], vx[:, 1:]], axis=2).reshape(-1, 6)
    bend = np.concatenate([vx[:, :-2], th[:, :-1, None], vx[:, 1:-1], th[:, 1:, None],
                           vx[:, 2:]], axis=2).reshape(-1, 11)
    e = (np.arange(n_strands) * (n - 1))[:, None] + np.arange(n - 2)
    edges = np.stack([e, e + 1], axis=2).reshape(-1, 2)
    return q, stretch.astype(np.int64), bend.astype(np.int64), edges.astype(np.int64)


def best(f, reps=5):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return 1e3 * min(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strands", type=int, default=1900)
    ap.add_argument("--vertices", type=int, default=100)
    a = ap.parse_args()
    q, sd, bd, be = build(a.strands, a.vertices)
    ne, nb = len(sd), len(bd)
    rng = np.random.default_rng(1)
    x = q[sd]
    t = x[:, 3:] - x[:, :3]
    t /= np.linalg.norm(t, axis=1)[:, None]
    a1 = np.cross(t, rng.normal(size=t.shape))
    a1 /= np.linalg.norm(a1, axis=1)[:, None]
    a2 = np.cross(t, a1)
    m_ref = np.zeros(nb)
    K.reference_twists(q, bd, be, a1, m_ref, m_ref)
    kbar, tbar = np.zeros((nb, 4)), np.zeros(nb)
    K.curvatures_twists(q, bd, be, a1, a2, m_ref, kbar, tbar)
    kbar *= 0.9
    lt, kb, kt = np.full(nb, 3e-3), np.full((nb, 2), 1e-9), np.full(nb, 1e-9)
    lb, ks = np.full(ne, 3e-3), np.full(ne, 1.0)
    e, g, H, H0 = np.zeros(nb), np.zeros((nb, 11)), np.zeros((nb, 11, 11)), np.zeros((0, 11, 11))
    es, gs, Hs = np.zeros(ne), np.zeros((ne, 6)), np.zeros((ne, 6, 6))
    q2 = q + rng.normal(scale=1e-4, size=q.shape)
    b1, b2 = a1.copy(), a2.copy()  # timing only: transported q -> q2 on every call
    print(f"{a.strands} strands x {a.vertices} vertices: {nb} bend-twist stencils, {ne} edges, "
          f"{numba.get_num_threads()} threads")
    rows = [
        ("bend+twist fused, Hessian", lambda: K.bend_twist_terms(
            q, bd, be, a1, a2, m_ref, kbar, tbar, lt, kb, kt, e, g, H, True)),
        ("bend+twist fused, gradient", lambda: K.bend_twist_terms(
            q, bd, be, a1, a2, m_ref, kbar, tbar, lt, kb, kt, e, g, H0, False)),
        ("bend, Hessian", lambda: K.bend_terms(q, bd, be, a1, a2, kbar, lt, kb, e, g, H, True)),
        ("twist, Hessian", lambda: K.twist_terms(q, bd, m_ref, tbar, lt, kt, e, g, H, True)),
        ("stretch, Hessian", lambda: K.stretch_terms(q, sd, lb, ks, True, es, gs, Hs, True)),
        ("transport_frames", lambda: K.transport_frames(q, q2, sd, b1, b2)),
        ("reference_twists", lambda: K.reference_twists(q, bd, be, a1, m_ref, m_ref)),
    ]
    for name, f in rows:
        print(f"  {name:28s} {best(f):8.1f} ms")


if __name__ == "__main__":
    main()
