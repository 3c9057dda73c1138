"""Edge strain of hair on a nodding head, per implicit step, and where it is.

The README's workflow: a curly hairstyle (``strandlab hair generate --style curly``: 1,000
strands of 100 vertices by default), its sag-free rest shape (``strandlab sagfree
--stabilize``), simulated on the head that nods by 20 degrees and back over 1 s
(``strandlab run --rest``: 8 implicit steps of one Newton iteration per 1/60 s frame).  Every
implicit step is taken alone and the largest edge strain ``| |e| / lbar - 1 |`` is recorded in
four groups of edges: at a vertex pushed out of the head after the step, at a vertex held by
the contact penalty (inside its ball, not pushed), near the root (edges 1 to 3, the first free
ones), and the others; over the nod (0 to 0.5 s, 0.5 to 1 s), its stop and after.

    PYTHONPATH=src python benchmarks/hair_head_strain.py [--strands 1000] [--frames 120]
        [--substeps 8] [--newton-iterations 1] [--tolerance TOL] [--contact-stiffness 1]
        [--no-follow] [--no-head]

The hair and its rest shape are made by the commands themselves (``strandlab hair generate``
and ``strandlab sagfree``, in a temporary folder); the last three options change the
simulation's settings from those of ``strandlab run``; ``--no-follow``: the strands do not
follow the vertices pushed out of the head (der/contact.py), to measure what that does;
``--no-head``: the head is no collider.  Also printed: the largest vertex speed [m/s].
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np

from strandlab.cli import main as cli
from strandlab.der import DERSolver
from strandlab.io.hairfile import read_hair
from strandlab.io.restshape import read_rest_shape
from strandlab.scenes.hair_head import hair_on_head, hair_scene

WINDOWS = ((0.0, 0.5), (0.5, 1.0), (1.0, 1.1), (1.1, np.inf))
GROUPS = ("pushed", "penalty", "root", "other")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strands", type=int, default=1000)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--substeps", type=int, default=None)
    ap.add_argument("--newton-iterations", type=int, default=None)
    ap.add_argument("--contact-stiffness", type=float, default=None)
    ap.add_argument("--tolerance", type=float, default=None)
    ap.add_argument("--no-follow", action="store_true")
    ap.add_argument("--no-head", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        hair_path, rest_path = Path(d) / "c.hair", Path(d) / "rest.npz"
        assert cli(["hair", "generate", "--style", "curly", "--strands", str(args.strands),
                    "--out", str(hair_path)]) == 0
        assert cli(["sagfree", str(hair_path), "--out", str(rest_path), "--stabilize",
                    "--quiet"]) == 0
        hair, rest = read_hair(hair_path), read_rest_shape(rest_path)
    sim = hair_on_head(hair, rest=rest, frames=args.frames)
    if args.no_head:
        scene, _, _ = hair_scene(hair, rest=rest, head=(np.zeros(3), 0.0))
        sim = dataclasses.replace(sim, scene=scene)
    change = {k: v for k, v in (("substeps", args.substeps),
                                ("newton_iterations", args.newton_iterations),
                                ("tolerance", args.tolerance),
                                ("contact_stiffness", args.contact_stiffness)) if v is not None}
    settings = dataclasses.replace(sim.settings, **change)
    sub = settings.substeps
    solver = DERSolver(sim.scene, dataclasses.replace(settings, substeps=1, max_strain=None))
    if args.no_follow:
        solver._follow = 0
    m = solver.model
    st = solver.state()
    centre, radius = (m.spheres[0, :3], m.spheres[0, 3]) if len(m.spheres) else (np.zeros(3),
                                                                               -np.inf)
    first = (m.edge_v0 - m.strand_vertex_start[m.vertex_strand[m.edge_v0]]) <= 3
    worst = np.zeros((len(WINDOWS), len(GROUPS) + 1))
    peak = (0.0, 0.0, -1, -1)
    t1 = time.perf_counter()
    for _ in range(args.frames * sub):
        solver.step(st, st, sim.dt / sub)
        x = m.positions(st.q)
        strain = np.abs(np.linalg.norm(x[m.edge_v1] - x[m.edge_v0], axis=1)
                        / m.rest_length - 1.0)
        gap = np.linalg.norm(x - centre, axis=1) - radius
        inside = gap < m.vertex_radius
        # the solver's record of its pushes (before it had one: the vertices at the push depth)
        pushed = getattr(solver, "_pushed", None)
        if pushed is None:
            pushed = np.abs(gap - 0.5 * m.vertex_radius) < 1e-9 * m.vertex_radius
        at_push = pushed[m.edge_v0] | pushed[m.edge_v1]
        at_pen = (inside[m.edge_v0] | inside[m.edge_v1]) & ~at_push
        root = first & ~at_push & ~at_pen
        groups = (at_push, at_pen, root, ~(at_push | at_pen | root))
        w = next(i for i, (a, b) in enumerate(WINDOWS) if a < st.time <= b)
        for g, sel in enumerate(groups):
            if sel.any():
                worst[w, g] = max(worst[w, g], float(strain[sel].max()))
        speed = np.linalg.norm(m.positions(st.v), axis=1).max()
        worst[w, -1] = max(worst[w, -1], float(speed))
        j = int(np.argmax(strain))
        if strain[j] > peak[0]:
            s = int(m.vertex_strand[m.edge_v0[j]])
            peak = (float(strain[j]), st.time, s, int(j - m.strand_edge_start[s]))
    newton = (f"Newton to {settings.tolerance:g}" if settings.tolerance is not None
              else f"{settings.newton_iterations} Newton iteration(s)")
    print(f"{args.strands} curly strands of 100 vertices, {args.frames} frames of {sub} steps, "
          f"{newton}, {'no head, ' if args.no_head else ''}contact stiffness "
          f"{settings.contact_stiffness:g} (hair and rest shape {t1 - t0:.0f} s, simulation "
          f"{time.perf_counter() - t1:.0f} s)")
    print(f"largest edge strain {peak[0]:.2e} at t = {peak[1]:.4f} s (strand {peak[2]}, edge "
          f"{peak[3]})")
    print(f"{'time [s]':12s}" + "".join(f"{g:>10s}" for g in GROUPS) + f"{'speed':>10s}")
    for (a, b), row in zip(WINDOWS, worst):
        print(f"{a:4.1f} - {b:<5.1f}" + "".join(f"{v:10.1e}" for v in row))


if __name__ == "__main__":
    main()
