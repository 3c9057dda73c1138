"""Which hair-like strands optimized with zero rest twist flip (Takahashi and Batty, Sec. 5.6).

A grid of strands of the family of ``tests/inverse/test_sagfree_flip.py`` (40 vertices, 20 cm
centreline leaving the root above the horizontal and turning down, a wave in the plane of the
turn and one of half its wavenumber out of it; hair material E = 3.5 GPa, G = E/3,
1300 kg/m^3) is optimized in penalty mode, with and without rest twist, for two turning-angle
budgets of the box.  Every zero-rest-twist optimum that converged to a saddle is simulated for
5 s (default DER settings: dt = 1/60 s, one Newton iteration, from rest, unperturbed) and
classified:

- ``flip``: it holds (under 1e-3 of its length) for at least 0.25 s, then moves by more than
  1e-2 of its length, and the change of its own shape is one vertex's turn in the middle third
  (curvature change there at least 5 times that of any other stencil);
- ``left``: it moves by more than 1e-2 of its length otherwise (at once, or bending all along);
- ``stays``: the saddle's mode is too fast to grow under backward Euler at this step, or too
  slow to show in 5 s;
- ``diverged``: the one-Newton-iteration step failed (SimulationDiverged).

    PYTHONPATH=src python benchmarks/sagfree_flip_scan.py [--quick] [--around]

``--around``: instead, the strand of the test and its eight neighbours (one parameter changed
each way), with the turning-angle budget pi/2.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import itertools
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "inverse"))
from strand_shapes import hair_strand

import strandlab as sl
from strandlab.der.statics import StaticForces
from strandlab.inverse import (
    SagFreeSettings,
    apply_rest_shape,
    optimize_rest_shape,
)

DT = 1.0 / 60.0


def scene(points, radius):
    mat = sl.Material(young_modulus=3.5e9, density=1300.0, radius=radius,
                      shear_modulus=3.5e9 / 3)
    b = sl.SceneBuilder()
    s = b.add_strand(points, material=mat)
    b.attach_to_frame(s, b.add_frame(), end=0)
    return b.build()


def classify(sc, length, duration=5.0):
    """Simulate the optimized scene; one of flip / left / stays / diverged."""
    sol = sl.DERSolver(sc, sl.DERSettings())
    st = sol.state()
    q0, a10, rt0 = st.q.copy(), st.a1.copy(), st.ref_twist.copy()
    x0 = sol.output(st).positions.copy()
    disp = []
    try:
        for _ in range(int(round(duration / DT))):
            sol.step(st, st, DT)
            disp.append(np.linalg.norm(sol.output(st).positions - x0, axis=1).max() / length)
    except sl.SimulationDiverged:
        return "diverged"
    disp = np.array(disp)
    if disp[-1] <= 1e-2:
        return "stays"
    hold = DT * np.argmax(disp > 1e-3)
    a = StaticForces(sol.model, q0, a10, rt0)
    b = StaticForces(sol.model, st.q, st.a1, st.ref_twist)
    dk = np.linalg.norm(b.curvature - a.curvature, axis=1)
    j = int(np.argmax(dk))
    B = len(dk)
    local = dk[j] > 5 * np.delete(dk, j).max() and B // 3 <= j < 2 * B // 3
    return "flip" if hold >= 0.25 and local else "left"


#: The strand of tests/inverse/test_sagfree_flip.py (radius 0.13 mm).
TESTED = dict(lift=0.3, droop=0.85, amp=0.016, out=1.5, r=1.3e-4)


def around():
    """The tested strand and its neighbours: zero-rest-twist outcome, with and without twist."""
    changes = [{}, dict(r=1.2e-4), dict(r=1.4e-4), dict(amp=0.014), dict(amp=0.018),
               dict(lift=0.25), dict(lift=0.35), dict(droop=0.8), dict(droop=0.9)]
    for ch in changes:
        p = dict(TESTED, **ch)
        pts = hair_strand(40, normal=(1.0, 0.0, p["lift"]), droop=p["droop"], length=0.2,
                          wave_amplitude=p["amp"], wave_length=0.1, out_of_plane=p["out"])
        length = float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)))
        sc = scene(pts, p["r"])
        r0 = optimize_rest_shape(sc, SagFreeSettings(rest_twist=False,
                                                     turning_angle=np.pi / 2))
        r1 = optimize_rest_shape(sc, SagFreeSettings(turning_angle=np.pi / 2)).reports[0]
        rep = r0.reports[0]
        kind = "stable" if rep.stable else classify(apply_rest_shape(sc, r0), length)
        print(f"{ch or 'tested'!s:24s} zero rest twist: {rep.status}, {rep.negative_modes} "
              f"negative modes -> {kind}; with rest twist: {r1.status}, "
              f"{r1.negative_modes} negative modes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller grid")
    ap.add_argument("--around", action="store_true", help="the tested strand's neighbours")
    args = ap.parse_args()
    if args.around:
        around()
        return
    lifts = (0.2, 0.3, 0.4)
    droops = (0.75, 0.85, 0.95)
    amps = (0.008, 0.012, 0.016)
    wls = (0.07, 0.1)
    outs = (0.5, 1.0, 1.5)
    radii = (1e-4, 1.3e-4)
    budgets = (np.pi / 4, np.pi / 2)
    if args.quick:
        lifts, droops, amps, outs = (0.3,), (0.85,), (0.012, 0.016), (1.0, 1.5)
    t0 = time.perf_counter()
    table = {}
    for budget in budgets:
        count = Counter()
        for lift, droop, amp, wl, out, r in itertools.product(lifts, droops, amps, wls, outs,
                                                              radii):
            pts = hair_strand(40, normal=(1.0, 0.0, lift), droop=droop, length=0.2,
                              wave_amplitude=amp, wave_length=wl, out_of_plane=out)
            length = float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)))
            sc = scene(pts, r)
            res0 = optimize_rest_shape(sc, SagFreeSettings(rest_twist=False,
                                                           turning_angle=budget))
            res1 = optimize_rest_shape(sc, SagFreeSettings(turning_angle=budget))
            r0, r1 = res0.reports[0], res1.reports[0]
            count["strands"] += 1
            count["twist: converged"] += r1.status == "converged"
            count["twist: converged, stable"] += r1.status == "converged" and r1.stable
            if r0.status != "converged":
                count["no twist: not converged"] += 1
                continue
            if r0.stable:
                count["no twist: converged, stable"] += 1
                continue
            kind = classify(apply_rest_shape(sc, res0), length)
            count[f"no twist: saddle, {kind}"] += 1
            if r1.stable:
                count[f"no twist: saddle, {kind}; twist: stable"] += 1
        table[budget] = count
    keys = sorted({k for c in table.values() for k in c})
    print(f"{'outcome':48s}" + "".join(f"  budget {b:.2f}" for b in budgets))
    for k in keys:
        print(f"{k:48s}" + "".join(f"  {table[b][k]:11d}" for b in budgets))
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
