"""Where a DER step's time goes: wraps the parts of one ``DERSolver`` instance with timers.

``instrument(solver)`` replaces, on that instance only, the methods that do the work of a step
with timed wrappers and returns the dict of accumulated seconds they fill:

- ``terms``: the energy terms' kernels (energy, gradient, Hessian per stencil);
- ``frames``: the reference frames (time-parallel transport, reference twists) at each
  iterate and at the step's start and end;
- ``assembly``: the gradient scatter and the band assembly of the Newton matrix;
- ``factor/solve``: the banded Cholesky factorisation and the triangular solves;
- ``checks``: the state bounds after the step (non-finite values, strain, speed);

``overhead`` (the rest of ``step``: the integrator's and solver's Python, small vector
operations) is the step's wall time less these.  The wrappers cost about 1 us per call.
"""
from __future__ import annotations

import time

__all__ = ["instrument", "breakdown"]

PARTS = ("terms", "frames", "assembly", "factor/solve", "checks")


def _wrap(obj, name: str, acc: dict, key: str) -> None:
    f = getattr(obj, name)

    def timed(*a, **k):
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            acc[key] += time.perf_counter() - t0

    setattr(obj, name, timed)


def instrument(solver) -> dict:
    """Timers on ``solver``'s parts (module docstring); returns their accumulator, with
    ``step`` (the whole ``solver.step``) and ``steps`` (its calls)."""
    acc = dict.fromkeys((*PARTS, "step"), 0.0)
    acc["steps"] = 0
    integ = solver.integrator
    _wrap(integ.assembly, "evaluate", acc, "terms")
    _wrap(solver.system, "prepare", acc, "frames")
    _wrap(solver.system, "load_frames", acc, "frames")
    _wrap(integ.assembly, "gradient", acc, "assembly")
    _wrap(integ.linear_solver, "assemble", acc, "assembly")
    _wrap(integ.linear_solver, "factor", acc, "factor/solve")
    _wrap(integ.linear_solver, "solve", acc, "factor/solve")
    _wrap(solver, "_check", acc, "checks")
    step = solver.step

    def timed_step(*a, **k):
        t0 = time.perf_counter()
        try:
            return step(*a, **k)
        finally:
            acc["step"] += time.perf_counter() - t0
            acc["steps"] += 1

    solver.step = timed_step
    return acc


def breakdown(acc: dict) -> dict:
    """Milliseconds per step of each part and of the overhead, and the step's total."""
    n = max(acc["steps"], 1)
    out = {k: 1e3 * acc[k] / n for k in PARTS}
    out["overhead"] = 1e3 * acc["step"] / n - sum(out.values())
    out["step"] = 1e3 * acc["step"] / n
    return out
