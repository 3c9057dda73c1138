"""Rendering speed: seconds per frame of the shaded-tube renderer (PyVista/VTK offscreen) and of
the matplotlib fallback, for a head of hair of N strands of V vertices.

The strands are synthetic (no simulation): N strands of V vertices rooted on a sphere of radius
0.1 m, 0.2 m long, radius 50 um, swaying a little from frame to frame so every frame is new
geometry.  Each renderer writes ``--frames`` PNG images of ``--size`` pixels to a temporary
folder; the first image (window and pipeline set-up) is timed apart from the steady mean of the
rest.

Run: ``python benchmarks/bench_render.py`` (``--strands 200 --vertices 20 --frames 10 --size
800x600``; ``--color-by strand|twist|strain``; ``--no-matplotlib`` for the tubes alone).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from strandlab.io.trajectory import Trajectory
from strandlab.render import render_trajectory


def hair(n_strands: int, n_vertices: int, n_frames: int) -> Trajectory:
    """Synthetic swaying hair (see the module docstring)."""
    rng = np.random.default_rng(0)
    d = rng.normal(size=(n_strands, 3))
    d[:, 2] = np.abs(d[:, 2])
    d /= np.linalg.norm(d, axis=1)[:, None]
    s = np.linspace(0.0, 0.2, n_vertices)
    frames = []
    for k in range(n_frames):
        sway = np.array([0.05 * np.sin(0.3 * k), 0.0, -0.1])
        pts = (0.1 * d[:, None, :] + s[None, :, None] * d[:, None, :]
               + (s[None, :, None] / 0.2) ** 2 * sway)
        frames.append(pts.reshape(-1, 3))
    pos = np.array(frames)
    so = np.arange(n_strands + 1) * n_vertices
    eo = np.arange(n_strands + 1) * (n_vertices - 1)
    d1 = np.tile([0.0, 0.0, 1.0], (n_frames, int(eo[-1]), 1))
    return Trajectory(times=np.arange(n_frames) / 30, positions=pos, d1=d1, strand_offsets=so,
                      edge_offsets=eo, closed=np.zeros(n_strands, bool),
                      radii=np.full(n_strands, 5e-5), extra_points=np.zeros((n_frames, 0, 3)),
                      extra_triangles=np.zeros((0, 3), int), metadata={})


def time_backend(traj, backend: str, size, color_by: str) -> tuple[float, float]:
    """(first image [s], steady mean per image [s]) of ``backend``."""
    stamps = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        render_trajectory(traj, Path(tmp), backend=backend, size=size,
                          color_by=color_by if backend == "pyvista" else "strand",
                          colliders=[{"type": "sphere", "center": [0, 0, 0], "radius": 0.1}],
                          progress=lambda k: stamps.append(time.perf_counter()))
    first = stamps[0] - t0
    steady = (stamps[-1] - stamps[0]) / max(len(stamps) - 1, 1)
    return first, steady


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strands", type=int, default=200)
    p.add_argument("--vertices", type=int, default=20)
    p.add_argument("--frames", type=int, default=10)
    p.add_argument("--size", default="800x600")
    p.add_argument("--color-by", default="strand")
    p.add_argument("--no-matplotlib", action="store_true")
    a = p.parse_args(argv)
    size = tuple(int(v) for v in a.size.split("x"))
    traj = hair(a.strands, a.vertices, a.frames)
    backends = ["pyvista"] + ([] if a.no_matplotlib else ["matplotlib"])
    print(f"{a.strands} strands x {a.vertices} vertices, {a.frames} frames, {size[0]}x{size[1]} "
          f"px, colour by {a.color_by}")
    print(f"{'renderer':<12}{'first image [s]':>18}{'steady [s/frame]':>20}")
    for b in backends:
        first, steady = time_backend(traj, b, size, a.color_by)
        print(f"{b:<12}{first:>18.3f}{steady:>20.3f}")


if __name__ == "__main__":
    main()
