"""Sag-free rest-shape optimization of a synthetic hairstyle: 1,900 strands of 100 vertices.

The reference is Takahashi and Batty's hair example: 1.9K strands of 100 vertices optimized in
11.2 s on an 8-core CPU (about 7.6 Gauss-Newton iterations per strand).  Strands are generated
here (seeded): roots on the upper part of a head-sized sphere, each strand leaving the scalp
along its normal and turning down under a styling droop, straight, wavy or curly (a small coil
about the centreline), with per-strand length, droop, wave and curl; human-hair material
(E = 3.5 GPa, G = E/3, 1300 kg/m^3, radius 50 um, tapering to 60 % at the tip).

Reported per mode (penalty = the paper's method; exact = equilibrium inside the box): the
optimization time (after a warm-up run that compiles the kernels), Gauss-Newton iterations per
strand (mean, max), how the strands ended, the largest remaining net force relative to the
strand's weight, and the residual of the kinetic objective.

    PYTHONPATH=src python benchmarks/bench_sagfree.py [--strands 1900] [--vertices 100]
"""
from __future__ import annotations

import os

# The scene set-up computes one small SVD per strand (material frames); OpenBLAS's thread pool
# makes each of them ~500 times slower on a loaded two-core machine.  Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import time

import numpy as np

import strandlab as sl
from strandlab.der import compile_scene
from strandlab.inverse import SagFreeSettings, optimize_rest_shape

HAIR = {"young_modulus": 3.5e9, "density": 1300.0, "radius": 50e-6,
        "shear_modulus": 3.5e9 / 3.0}


def _resample(points, n):
    seg = np.linalg.norm(np.diff(points, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    t = np.linspace(0.0, s[-1], n)
    return np.stack([np.interp(t, s, points[:, k]) for k in range(3)], axis=1)


def strand(n, rng, root, normal):
    """One hair-like strand of ``n`` vertices rooted at ``root`` [m] with scalp normal
    ``normal``: straight, wavy or curly."""
    length = rng.uniform(0.15, 0.30)
    droop = rng.uniform(0.6, 1.0)
    kind = rng.integers(3)
    wave = rng.uniform(0.002, 0.008) if kind == 1 else 0.0
    wl = rng.uniform(0.04, 0.10)
    curl = rng.uniform(0.002, 0.004) if kind == 2 else 0.0
    pitch = rng.uniform(0.015, 0.03)
    down = np.array([0.0, 0.0, -1.0])
    s = np.linspace(0.0, length, 2000)
    axis = np.cross(normal, down)
    na = np.linalg.norm(axis)
    axis = axis / na if na > 1e-9 else np.array([1.0, 0.0, 0.0])
    ang = droop * np.arccos(np.clip(normal @ down, -1, 1)) * np.sqrt(s / length)
    c, sn = np.cos(ang)[:, None], np.sin(ang)[:, None]
    tan = c * normal + sn * np.cross(axis, normal) + (1 - c) * (axis @ normal) * axis
    centre = root + np.cumsum(tan * np.gradient(s)[:, None], axis=0)
    u = np.cross(axis, tan)
    ramp = np.minimum(1.0, s / (0.2 * length))[:, None]
    phase = rng.uniform(0, 2 * np.pi)
    k = 2 * np.pi / wl
    pts = centre + ramp * wave * (np.sin(k * s + phase)[:, None] * u
                                  + 0.5 * np.sin(0.5 * k * s)[:, None] * axis)
    if curl > 0:
        phi = 2 * np.pi * s / pitch + phase
        pts = pts + ramp * curl * (np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * axis)
    return _resample(pts, n)


def hairstyle(n_strands, n_vertices, seed=7):
    """A scene of ``n_strands`` clamped hair-like strands on a 9 cm head."""
    rng = np.random.default_rng(seed)
    mat = sl.Material(**HAIR)
    b = sl.SceneBuilder()
    frame = b.add_frame()
    taper = np.linspace(1.0, 0.6, n_vertices) * HAIR["radius"]
    for _ in range(n_strands):
        th = rng.uniform(0, 2 * np.pi)
        ph = rng.uniform(0.05, 1.3)
        nrm = np.array([np.cos(th) * np.cos(ph), np.sin(th) * np.cos(ph), np.sin(ph)])
        s = b.add_strand(strand(n_vertices, rng, 0.09 * nrm, nrm), material=mat,
                         radius=taper)
        b.attach_to_frame(s, frame, end=0)
    return b.build()


def run(model, settings, label):
    optimize_rest_shape(model, settings, strands=[0, 1])     # compile / load the kernels
    t0 = time.perf_counter()
    res = optimize_rest_shape(model, settings)
    wall = time.perf_counter() - t0
    sm = res.summary()
    it = res.iterations
    rel_f = max(r.residual_force / r.weight for r in res.reports)
    print(f"{label:8s} {wall:7.2f} s   iterations mean {it.mean():5.2f} max {it.max():3d}   "
          f"status {sm['status']}   unstable optima {sm['unstable']}")
    print(f"{'':8s} largest residual force / strand weight {rel_f:.2e}   largest "
          f"sqrt(O_K / O_K0) {sm['max_relative_residual']:.2e}   "
          f"median {np.median([r.relative_residual for r in res.reports]):.2e}")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strands", type=int, default=1900)
    ap.add_argument("--vertices", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    t0 = time.perf_counter()
    scene = hairstyle(a.strands, a.vertices, a.seed)
    model = compile_scene(scene)
    print(f"{a.strands} strands x {a.vertices} vertices ({model.n_dofs:,} DOFs), scene and "
          f"model built in {time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPU cores; "
          "reference: 11.2 s on 8 cores, 7.6 iterations per strand")
    run(model, SagFreeSettings(), "penalty")
    run(model, SagFreeSettings(rest_twist=False), "no twist")
    run(model, SagFreeSettings(mode="exact"), "exact")


if __name__ == "__main__":
    main()
