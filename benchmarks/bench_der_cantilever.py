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

Run: ``python benchmarks/bench_der_cantilever.py`` (``--quick`` for the dt = 2e-4 row only,
``--resolution`` adds a refinement study in the number of elements).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from pyelastica_cantilever import (  # noqa: E402
    CASE,
    reference_tips,
    run_pyelastica,
    stable_dt_estimate,
)

#: time steps tried for PyElastica at 100 elements [s]
PYELASTICA_DTS = (5e-5, 1e-4, 2e-4, 2.1e-4, 2.2e-4, 2.5e-4, 3e-4)


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


def largest_good_dt(rows: list[dict], *, tol: float = 1e-4) -> float | None:
    """Largest ``dt`` of ``rows`` (one library, one resolution) that is stable, settled and
    whose tip lies within ``tol`` [m] of the tip at the smallest stable ``dt``."""
    ok = sorted((r for r in rows if r["stable"] and r["settled"]), key=lambda r: r["dt"])
    if not ok:
        return None
    x0, _, z0 = ok[0]["tip"]
    good = [r["dt"] for r in ok if math.hypot(r["tip"][0] - x0, r["tip"][2] - z0) <= tol]
    return max(good) if good else None


def print_table(rows: list[dict]) -> None:
    head = ("library", "n_el", "dt [s]", "stable", "settled", "t [s]", "x_tip [m]", "drop [m]",
            "err [m]", "err_ext [m]", "wall/sim-s [s]", "best [s]", "us/step")
    print("%-11s %5s %8s %6s %7s %6s %10s %10s %9s %11s %14s %9s %8s" % head)
    for r in rows:
        if r["stable"]:
            print("%-11s %5d %8.2g %6s %7s %6.2f %10.5f %10.5f %9.2e %11.2e %14.3f %9.3f %8.1f" % (
                r["library"], r["n_elements"], r["dt"], "yes", "yes" if r["settled"] else "no",
                r["t"], r["tip"][0], r["drop"], r["error"], r["error_extensible"],
                r["wall_per_sim_second"], r["wall_per_sim_second_best"], r["us_per_step"]))
        else:
            print("%-11s %5d %8.2g %6s %7s %6.2f %s" % (r["library"], r["n_elements"], r["dt"],
                                                      "NO", "-", r["t"], "diverged"))


@contextlib.contextmanager
def busy_core(enabled: bool):
    """Burn one core in a child process for the duration (``enabled``); stopped by its pid."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if enabled else None
    try:
        yield
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="dt = 2e-4 only")
    ap.add_argument("--busy", action="store_true", help="one core busy in a child process")
    ap.add_argument("--resolution", action="store_true",
                    help="also 50, 200, 400 elements (dt scaled with the element length)")
    ap.add_argument("--repeats", type=int, default=3, help="timing repeats (median reported)")
    ap.add_argument("--damping", type=float, default=8.0, help="uniform damping constant [1/s]")
    args = ap.parse_args(argv)

    refs = reference_tips(CASE)
    print("reference tip (x, z): inextensible (%.5f, %.5f), extensible+shearable (%.5f, %.5f) m"
          % (*refs["inextensible"], *refs["extensible"]))
    print("PyElastica stable dt estimate (stiffest element mode), 100 elements: %.3g s"
          % stable_dt_estimate(100))
    dts = (2e-4,) if args.quick else PYELASTICA_DTS
    with busy_core(args.busy):
        rows = pyelastica_rows(dts, repeats=args.repeats, damping=args.damping)
        if rows:
            print_table(rows)
            if not args.quick:
                print("largest dt, stable and within 1e-4 m of dt = %.0e: %s s"
                      % (min(dts), largest_good_dt(rows)))
        if args.resolution and rows:
            res = [r for n, dt in ((50, 2e-4), (200, 1e-4), (400, 5e-5))
                   for r in pyelastica_rows((dt,), n, repeats=1, damping=args.damping)]
            print("\nresolution (dt proportional to the element length):")
            print_table(sorted(res + [r for r in rows if r["dt"] == 2e-4],
                               key=lambda r: r["n_elements"]))


if __name__ == "__main__":
    main()
