"""Peer-library benchmark: a heavy cantilever hanging under gravity, in PyElastica.

Scene
-----
One straight rod along +x, clamped horizontally at the origin, released under gravity
``(0, 0, -9.81)`` and left to settle: length 1 m, radius 5 mm, E = 1e6 Pa, shear modulus
G = E / 3 given explicitly (PyElastica otherwise assumes Poisson's ratio 0.5, which gives the
same value), density 1000 kg/m^3, ``n_elements`` elements (100 by default).  The load is
strong: ``q L^3 / EI = 1570``, so the rod hangs almost vertically below a bent root of width
``sqrt(EI / (q L)) = 2.5 cm``.

How PyElastica models it
------------------------
* ``CosseratRod.straight_rod`` (Gazzola, Dudte, McCormick, Mahadevan 2018): extensible and
  shearable Cosserat rod; shear/stretch matrix ``diag(alpha_c G A, alpha_c G A, E A)`` with
  ``alpha_c = 27/28`` (fixed inside the library), bend/twist matrix ``diag(E I, E I, G J)``.
* Clamp: ``OneEndFixedBC`` with ``constrained_position_idx=(0,)`` and
  ``constrained_director_idx=(0,)``: the first node and the first element's directors are held.
* Gravity: ``GravityForces`` (nodal weights ``m_i g``, i.e. ``q = rho A g`` per unit length).
* Damping: ``AnalyticalLinearDamper`` with ``uniform_damping_constant = gamma`` [1/s]: after every
  step the nodal velocities and element angular velocities are multiplied by
  ``exp(-gamma dt)``, i.e. ``dv/dt = -gamma v`` solved exactly (unconditionally stable).  The
  slowest mode of the hanging rod is the hanging-chain pendulum mode,
  ``omega_1 ~ 1.2 sqrt(g / L) = 3.8 rad/s``; ``gamma = 2 omega_1 ~ 7.5 1/s`` damps it
  critically.  The default ``gamma = 8`` settles (largest nodal speed below 1e-6 m/s) in
  6.0 s of simulated time at dt = 2e-4; gamma = 3, 5, 15 take 9.9, 6.4, 14.1 s and gamma = 30
  has not settled after 15 s (overdamped).  The settled tip does not depend on gamma.
* Time stepping: ``PositionVerlet`` (explicit, symplectic) with a fixed ``dt``, called step by
  step (``stepper.step(simulator, time, dt)``), no callbacks.  The stable step is set by the
  stiffest element mode (``stable_dt_estimate``): 2.09e-4 s at 100 elements; dt = 2e-4 runs,
  2.1e-4 diverges.

Accuracy
--------
``OneEndFixedBC`` holds the whole first element straight and horizontal, so the bending starts
about half an element out: the settled tip lies about ``dl / 2`` too far out and too high.  At
dt = 2e-4 (100 elements) the tip is (0.04127, -0.98491) m against (0.03631, -0.99025) m for
the extensible, shearable reference (distance 7.3e-3 m; 3.4e-3 and 1.5e-3 m at 200 and 400
elements: first order in ``dl``); against the inextensible elastica the distance is 4.8e-3 m,
a partial cancellation of the clamp offset with the 1% stretch at the root.

Measured quantities
-------------------
``run_pyelastica`` returns the settled tip, its error against the planar elastica of
``strandlab.reference.elastica_cantilever`` (inextensible, the classical reference; and the
extensible, shearable Reissner rod with PyElastica's ``E A`` and ``alpha_c G A``, which
separates the discretisation error from the model difference), and the wall time per
simulated second: the integration loop only, after ``warmup_steps`` steps that trigger Numba's
compilation (set-up and compilation are excluded).  ``timing_repeats`` times the loop on fresh
rods for ``timing_t`` simulated seconds each and reports the median and the best.

Run ``python benchmarks/bench_der_cantilever.py`` for the table.  PyElastica is imported lazily
(``pip install strandlab[bench-der]``).
"""
from __future__ import annotations

import math
import statistics
import time

import numpy as np

from strandlab.reference import circular_section, elastica_cantilever

__all__ = ["CASE", "reference_tips", "stable_dt_estimate", "run_pyelastica"]

#: the benchmark case (SI units)
CASE = {"length": 1.0, "radius": 5e-3, "youngs_modulus": 1e6, "shear_modulus": 1e6 / 3.0,
        "density": 1000.0, "gravity": 9.81}

ALPHA_C = 27.0 / 28.0       # PyElastica's shear correction factor (rod/factory_function.py)


def reference_tips(case: dict = CASE) -> dict:
    """Tip of the settled rod from ``elastica_cantilever``: ``inextensible`` and
    ``extensible`` (with ``EA = E A`` and ``GA = (27/28) G A``), each an ``(x, z)`` pair [m]."""
    A, I, _ = circular_section(case["radius"])
    EI = case["youngs_modulus"] * I
    q = case["density"] * A * case["gravity"]
    L = case["length"]
    inex = elastica_cantilever(L, EI, q)
    ext = elastica_cantilever(L, EI, q, EA=case["youngs_modulus"] * A,
                              GA=ALPHA_C * case["shear_modulus"] * A)
    return {"inextensible": inex.tip, "extensible": ext.tip}


def stable_dt_estimate(n_elements: int, case: dict = CASE) -> float:
    """Position Verlet limit ``dt < 2 / omega_max`` [s] from the stiffest element mode, an
    element rocking against its neighbours: rotary inertia ``rho I dl`` against the shear
    stiffness ``alpha_c G A dl`` and the bending stiffness ``4 E I / dl`` of its two joints,
    ``omega_max^2 = 4 alpha_c G / (rho r^2) + 4 E / (rho dl^2)`` (the axial mode,
    ``2 sqrt(E / rho) / dl``, is slower here).  100 elements: 2.1e-4 s."""
    dl = case["length"] / n_elements
    rho, r = case["density"], case["radius"]
    w2 = 4.0 * ALPHA_C * case["shear_modulus"] / (rho * r * r) + 4.0 * case["youngs_modulus"] / (
        rho * dl * dl)
    return 2.0 / math.sqrt(w2)


def _build(n_elements: int, dt: float, damping: float, case: dict):
    import elastica as ea

    class Simulator(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping):
        pass

    sim = Simulator()
    rod = ea.CosseratRod.straight_rod(
        n_elements, np.zeros(3), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]),
        case["length"], case["radius"], case["density"],
        youngs_modulus=case["youngs_modulus"], shear_modulus=case["shear_modulus"])
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,))
    sim.add_forcing_to(rod).using(ea.GravityForces,
                                  acc_gravity=np.array([0.0, 0.0, -case["gravity"]]))
    sim.dampen(rod).using(ea.AnalyticalLinearDamper, uniform_damping_constant=damping,
                          time_step=dt)
    sim.finalize()
    return sim, rod, ea.PositionVerlet()


def _advance(stepper, sim, t: float, dt: float, n_steps: int) -> float:
    for _ in range(n_steps):
        t = stepper.step(sim, t, dt)
    return t


def run_pyelastica(dt: float, t_end: float, n_elements: int = 100, *, damping: float = 8.0,
                   settle_tol: float | None = 1e-6, check_every: float = 0.1,
                   warmup_steps: int = 20, timing_repeats: int = 3, timing_t: float = 1.0,
                   case: dict = CASE) -> dict:
    """Hang the benchmark rod in PyElastica and measure the settled tip and the speed.

    Parameters
    ----------
    dt : time step [s].
    t_end : longest simulated time [s]; the run stops earlier once settled.
    n_elements : rod elements.
    damping : ``uniform_damping_constant`` of ``AnalyticalLinearDamper`` [1/s].
    settle_tol : settled when the largest nodal speed is below this [m/s] (checked every
        ``check_every`` simulated seconds); ``None`` runs to ``t_end``.
    warmup_steps : steps taken (and not timed) before timing, to compile the Numba kernels.
    timing_repeats, timing_t : the loop is timed on ``timing_repeats`` fresh rods for
        ``timing_t`` simulated seconds each (0 repeats: only the settling run is timed).

    Returns
    -------
    dict with ``tip`` (x, y, z) [m]; ``t`` simulated time reached [s]; ``settled`` (bool);
    ``stable`` (False when positions went non-finite or left a 2 L box);
    ``max_speed`` [m/s] at the end; ``error`` = distance in the x-z plane from the
    inextensible elastica tip [m]; ``error_extensible`` the same against the extensible,
    shearable reference; ``drop`` = -z_tip [m]; ``wall_per_sim_second`` median wall time per
    simulated second over the timing repeats [s] (``wall_per_sim_second_best``: the best;
    ``wall_per_sim_second_settle``: the settling run's own); ``us_per_step`` median [us].
    """
    if dt <= 0 or t_end <= 0:
        raise ValueError(f"dt and t_end must be positive, got dt={dt}, t_end={t_end}")
    L = case["length"]
    sim, rod, stepper = _build(n_elements, dt, damping, case)
    t = _advance(stepper, sim, 0.0, dt, warmup_steps)

    chunk = max(1, round(check_every / dt))
    stable, settled, wall = True, False, 0.0
    while t < t_end - 0.5 * dt:
        n = min(chunk, round((t_end - t) / dt))
        t0 = time.perf_counter()
        t = _advance(stepper, sim, t, dt, n)
        wall += time.perf_counter() - t0
        x = rod.position_collection
        if not np.all(np.isfinite(x)) or np.abs(x).max() > 2.0 * L:
            stable = False
            break
        speed = float(np.sqrt((rod.velocity_collection ** 2).sum(axis=0)).max())
        if settle_tol is not None and speed < settle_tol:
            settled = True
            break
    sim_time = t - warmup_steps * dt
    tip = tuple(float(v) for v in rod.position_collection[:, -1])

    per_sim_s = []
    for _ in range(timing_repeats if stable else 0):
        s2, _r2, st2 = _build(n_elements, dt, damping, case)
        t2 = _advance(st2, s2, 0.0, dt, warmup_steps)
        n = max(1, round(timing_t / dt))
        t0 = time.perf_counter()
        _advance(st2, s2, t2, dt, n)
        per_sim_s.append((time.perf_counter() - t0) / (n * dt))
    refs = reference_tips(case)
    out = {"dt": dt, "n_elements": n_elements, "damping": damping, "tip": tip, "t": t,
           "settled": settled, "stable": stable,
           "max_speed": speed if stable else math.nan,
           "drop": -tip[2], "wall_per_sim_second_settle": wall / sim_time if sim_time else None}
    for key, name in (("inextensible", "error"), ("extensible", "error_extensible")):
        rx, rz = refs[key]
        out[name] = math.hypot(tip[0] - rx, tip[2] - rz) if stable else math.nan
        out["ref_" + key] = (rx, rz)
    if per_sim_s:
        out["wall_per_sim_second"] = statistics.median(per_sim_s)
        out["wall_per_sim_second_best"] = min(per_sim_s)
        out["us_per_step"] = statistics.median(per_sim_s) * dt * 1e6
    else:
        out["wall_per_sim_second"] = out["wall_per_sim_second_settle"] if stable else math.nan
        out["wall_per_sim_second_best"] = out["wall_per_sim_second"]
        out["us_per_step"] = out["wall_per_sim_second"] * dt * 1e6
    return out


if __name__ == "__main__":
    print(run_pyelastica(2e-4, 10.0))
