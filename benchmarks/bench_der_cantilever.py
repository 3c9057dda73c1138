"""Heavy cantilever hanging under gravity: discrete elastic rods side by side with PyElastica.

The case (``pyelastica_cantilever.CASE``): a 1 m rod, radius 5 mm, E = 1e6 Pa, G = E / 3,
rho = 1000 kg/m^3, clamped horizontally at one end, hanging under g = 9.81 m/s^2 until it
settles.  Each library's side is one function returning rows of the same keys (``library``,
``dt``, ``n_elements``, ``stable``, ``settled``, ``tip``, ``error``, ``error_extensible``,
``wall_per_sim_second``, ``us_per_step``); ``main`` prints them in one table.

The reference is the planar elastica of ``strandlab.reference.elastica_cantilever``: tip drop
0.98500 m, x_tip = 0.03649 m for the inextensible, unshearable rod (``error``); the extensible,
shearable Reissner rod with PyElastica's ``E A`` and ``(27/28) G A`` drops 0.99025 m
(``error_extensible``).  Errors are distances in the x-z plane [m].

Timings: wall time of the integration loop per simulated second, set-up and Numba compilation
excluded, the median of ``--repeats`` runs of 1 simulated second on fresh rods.  ``--busy``
burns one core in a child process during the measurement (the machine doing other work).

strandlab's side (``der_cantilever.run_der``) runs the same rod with discrete elastic rods
(backward Euler, one Newton iteration per step, the same mass-proportional damping) at the
steps ``DER_DTS``; its first edge lies across x = 0 (the root is that edge's midpoint, see
``der_cantilever``).  ``err_own`` is each library's tip error against its own continuum model
(extensible and shearable for PyElastica, extensible for DER); ``to settle`` the wall time of
the run from rest until the largest speed falls below 1e-6 m/s.  ``compare`` prints the
speed-ups of DER over PyElastica at its largest stable step, and ``paired_speedups`` the
same ratio timed in alternation (robust to a machine whose load changes during the run).

Run: ``python benchmarks/bench_der_cantilever.py`` (``--quick`` for PyElastica's dt = 2e-4 and
DER's dt = 1e-2 only, ``--resolution`` adds a refinement study in the number of elements,
``--no-pyelastica`` the DER side alone).
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from busy import busy_core  # noqa: E402
from der_cantilever import build_der, model_reference, run_der  # noqa: E402
from pyelastica_cantilever import (  # noqa: E402
    CASE,
    reference_tips,
    run_pyelastica,
    stable_dt_estimate,
)

#: time steps tried for PyElastica at 100 elements [s]
PYELASTICA_DTS = (5e-5, 1e-4, 2e-4, 2.1e-4, 2.2e-4, 2.5e-4, 3e-4)
#: time steps tried for strandlab's discrete elastic rods at 100 elements [s]
DER_DTS = (1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1)


def pyelastica_rows(dts=PYELASTICA_DTS, n_elements: int = 100, *, t_end: float = 15.0,
                    repeats: int = 3, damping: float = 8.0) -> list[dict]:
    """PyElastica at each ``dt`` (see ``pyelastica_cantilever.run_pyelastica``); [] when
    PyElastica is not installed."""
    if importlib.util.find_spec("elastica") is None:
        print("PyElastica not installed (pip install 'strandlab[bench-der]'): rows skipped")
        return []
    rows = []
    for dt in dts:
        r = run_pyelastica(dt, t_end, n_elements, damping=damping, timing_repeats=repeats)
        r["library"] = "pyelastica"
        rows.append(r)
    return rows


def der_rows(dts=DER_DTS, n_elements: int = 100, *, t_end: float = 30.0, repeats: int = 3,
             damping: float = 8.0) -> list[dict]:
    """strandlab's discrete elastic rods at each ``dt`` (``der_cantilever.run_der``)."""
    refs = dict(reference_tips(CASE), model=model_reference(CASE))
    return [run_der(dt, t_end, n_elements, case=CASE, refs=refs, damping=damping,
                    timing_repeats=repeats) for dt in dts]


def _timed(advance, n: int, dt: float) -> tuple[float, float]:
    """(wall, process) time [s] per simulated second of ``advance(n)``."""
    t0, c0 = time.perf_counter(), time.process_time()
    advance(n)
    return (time.perf_counter() - t0) / (n * dt), (time.process_time() - c0) / (n * dt)


def _time_pyelastica(dt: float, damping: float, t_sim: float = 1.0) -> tuple[float, float]:
    """(wall, process) time [s] per simulated second of PyElastica at ``dt`` (a fresh rod,
    after 20 warm-up steps)."""
    from pyelastica_cantilever import _advance, _build

    sim, _, stepper = _build(100, dt, damping, CASE)
    t = _advance(stepper, sim, 0.0, dt, 20)
    return _timed(lambda n: _advance(stepper, sim, t, dt, n), round(t_sim / dt), dt)


def _time_der(dt: float, damping: float, t_sim: float = 1.0) -> tuple[float, float]:
    s = build_der(100, damping, CASE)
    st = s.state()

    def advance(n):
        for _ in range(n):
            s.step(st, st, dt)

    advance(20)
    return _timed(advance, round(t_sim / dt), dt)


def paired_speedups(py_dt: float, der_dts, *, rounds: int = 5, damping: float = 8.0) -> dict:
    """PyElastica's time per simulated second at ``py_dt`` divided by DER's at each of
    ``der_dts``, timed in alternation (one simulated second each, ``rounds`` rounds), so that a
    change of the machine's load falls on both alike.  Per DER step: the median ratios of wall
    and of process (CPU) time, and the median wall times of PyElastica and DER [s]."""
    out = {dt: [[], [], [], []] for dt in der_dts}
    for _ in range(rounds):
        a = _time_pyelastica(py_dt, damping)
        for dt in der_dts:
            b = _time_der(dt, damping)
            for lst, v in zip(out[dt], (a[0] / b[0], a[1] / b[1], a[0], b[0])):
                lst.append(v)
    return {dt: tuple(statistics.median(v) for v in lists) for dt, lists in out.items()}


def largest_good_dt(rows: list[dict], *, tol: float = 1e-4) -> float | None:
    """Largest ``dt`` of ``rows`` (one library, one resolution) that is stable, settled and
    whose tip lies within ``tol`` [m] of the tip at the smallest stable ``dt``."""
    ok = sorted((r for r in rows if r["stable"] and r["settled"]), key=lambda r: r["dt"])
    if not ok:
        return None
    x0, _, z0 = ok[0]["tip"]
    good = [r["dt"] for r in ok if math.hypot(r["tip"][0] - x0, r["tip"][2] - z0) <= tol]
    return max(good) if good else None


def _own_error(r: dict) -> float:
    """Tip error against the library's own continuum model: the extensible, shearable
    elastica for PyElastica, the extensible one for DER."""
    return r.get("error_model", r["error_extensible"])


def _wall_to_settle(r: dict) -> float:
    return r.get("wall_to_settle", r["wall_per_sim_second_settle"] * r["t"])


def print_table(rows: list[dict]) -> None:
    head = ("library", "n_el", "dt [s]", "stable", "settled", "t [s]", "x_tip [m]", "drop [m]",
            "err [m]", "err_own [m]", "wall/sim-s [s]", "best [s]", "us/step", "to settle [s]")
    print("%-13s %5s %8s %6s %7s %6s %10s %10s %9s %11s %14s %9s %8s %13s" % head)
    for r in rows:
        if r["stable"]:
            print("%-13s %5d %8.2g %6s %7s %6.2f %10.5f %10.5f %9.2e %11.2e %14.4f %9.4f %8.1f "
                  "%13.3f" % (
                      r["library"], r["n_elements"], r["dt"], "yes",
                      "yes" if r["settled"] else "no", r["t"], r["tip"][0], r["drop"],
                      r["error"], _own_error(r), r["wall_per_sim_second"],
                      r["wall_per_sim_second_best"], r["us_per_step"], _wall_to_settle(r)))
        else:
            print("%-13s %5d %8.2g %6s %7s %6.2f %s" % (r["library"], r["n_elements"], r["dt"],
                                                        "NO", "-", r["t"], "diverged"))


def compare(py: list[dict], der: list[dict], *, py_dt: float = 2e-4) -> None:
    """The ratio of PyElastica's wall time to DER's, per simulated second and to settle, at
    PyElastica's largest stable step ``py_dt`` and every settled DER step (the settled DER tip
    is the same at every step, module docstring of ``der_cantilever``)."""
    ref = next((r for r in py if r["dt"] == py_dt and r["stable"] and r["settled"]), None)
    if ref is None:
        return
    print("\nPyElastica dt = %.0e: tip error %.2e m (inextensible elastica), %.2e m (own "
          "model); wall %.4f s per simulated second, %.3f s to settle"
          % (py_dt, ref["error"], _own_error(ref), ref["wall_per_sim_second"],
             _wall_to_settle(ref)))
    print("%-8s %10s %10s %13s %13s %11s" % ("DER dt", "err [m]", "err_own", "speedup/sim-s",
                                            "speedup/settle", "eq gap [m]"))
    for r in der:
        if r["stable"] and r["settled"]:
            print("%-8.0e %10.2e %10.2e %13.1f %13.1f %11.1e" % (
                r["dt"], r["error"], _own_error(r),
                ref["wall_per_sim_second"] / r["wall_per_sim_second"],
                _wall_to_settle(ref) / _wall_to_settle(r), r["equilibrium_gap"]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="dt = 2e-4 only")
    ap.add_argument("--busy", action="store_true", help="one core busy in a child process")
    ap.add_argument("--resolution", action="store_true",
                    help="also 50, 200, 400 elements (dt scaled with the element length)")
    ap.add_argument("--repeats", type=int, default=3, help="timing repeats (median reported)")
    ap.add_argument("--damping", type=float, default=8.0, help="uniform damping constant [1/s]")
    ap.add_argument("--no-pyelastica", action="store_true", help="the DER side only")
    args = ap.parse_args(argv)

    refs = reference_tips(CASE)
    print("reference tip (x, z): inextensible (%.5f, %.5f), extensible+shearable (%.5f, %.5f) m"
          % (*refs["inextensible"], *refs["extensible"]))
    print("PyElastica stable dt estimate (stiffest element mode), 100 elements: %.3g s"
          % stable_dt_estimate(100))
    print("DER's own model (extensible, unshearable) tip (x, z): (%.5f, %.5f) m"
          % model_reference(CASE))
    dts = (2e-4,) if args.quick else PYELASTICA_DTS
    with busy_core(args.busy):
        rows = [] if args.no_pyelastica else pyelastica_rows(dts, repeats=args.repeats,
                                                              damping=args.damping)
        if rows:
            print_table(rows)
            if not args.quick:
                print("largest dt, stable and within 1e-4 m of dt = %.0e: %s s"
                      % (min(dts), largest_good_dt(rows)))
        der = der_rows((1e-2,) if args.quick else DER_DTS, repeats=args.repeats,
                       damping=args.damping)
        print()
        print_table(der)
        compare(rows, der)
        if rows:
            paired = paired_speedups(2e-4, (1e-2, 2e-2, 5e-2), rounds=args.repeats + 2,
                                     damping=args.damping)
            print("\nalternating timings (per simulated second, medians): PyElastica dt = 2e-4 "
                  "against DER")
            for dt, (ratio, cpu_ratio, a, b) in paired.items():
                print("  DER dt = %.0e: wall %.4f s against %.4f s: %.1fx (CPU time: %.1fx)"
                      % (dt, b, a, ratio, cpu_ratio))
        if args.resolution and rows:
            res = [r for n, dt in ((50, 2e-4), (200, 1e-4), (400, 5e-5))
                   for r in pyelastica_rows((dt,), n, repeats=1, damping=args.damping)]
            print("\nresolution (dt proportional to the element length):")
            print_table(sorted(res + [r for r in rows if r["dt"] == 2e-4],
                               key=lambda r: r["n_elements"]))
        if args.resolution:
            res = [r for n in (25, 50, 200) for r in der_rows((1e-2,), n, repeats=1,
                                                              damping=args.damping)]
            print("\nDER resolution (dt = 1e-2):")
            print_table(sorted(res + [r for r in der if r["dt"] == 1e-2],
                               key=lambda r: r["n_elements"]))


if __name__ == "__main__":
    main()
