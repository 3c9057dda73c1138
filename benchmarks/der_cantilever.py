"""The heavy cantilever of ``pyelastica_cantilever`` in strandlab's discrete elastic rods.

Scene
-----
The same rod (``pyelastica_cantilever.CASE``): 1 m, radius 5 mm, E = 1e6 Pa, G = E / 3,
rho = 1000 kg/m^3, clamped horizontally, hanging under g = 9.81 m/s^2, ``n_elements`` edges.

Clamp.  A DER clamp (``attach_to_frame``, ``orientation=True``) holds the first two vertices and
the first edge's angle: the first edge is the clamped section and its midpoint is the root of
the beam (the discrete bending energy lives at vertex 1, between edge 0 and edge 1).  The rod
is therefore laid out with its first edge across x = 0: vertices at ``x_k = (k - 1/2) dl``,
``dl = L / (n - 1/2)``, so that the beam from the root to the tip is exactly 1 m and the tip
error falls as ``dl^2`` (measured: 5.0e-3, 1.4e-3, 3.8e-4, 9.6e-5 m at 50, 100, 200, 400 edges
against the extensible elastica).  PyElastica's ``OneEndFixedBC`` holds node 0 and the first
element's directors: its root is node 0 but the whole first element is rigid and horizontal,
so the bending starts about half an element out and the tip error is first order in ``dl``.

Model.  DER is extensible (``E A``) and unshearable; its own continuum reference is the
elastica with ``EA`` only (``error_model``), against which the discretisation error is
measured; ``error`` is against the inextensible elastica (tip drop 0.98500 m), as for
PyElastica.

Dynamics.  Backward Euler, one Newton iteration per step (the default), mass-proportional
damping ``damping`` [1/s] (the force ``-c M v``, PyElastica's ``uniform_damping_constant``),
from the straight rod at rest.  Settled: the largest vertex speed below ``settle_tol``, checked
every ``check_every`` simulated seconds.  The settled state is the discrete static equilibrium
whatever the step (the step's stationarity condition with ``v = 0``), so the tip is the same at
every stable ``dt`` (checked against ``DERSolver.equilibrium``).

Timing: as ``pyelastica_cantilever.run_pyelastica``: the integration loop only, after warm-up
steps that compile the kernels; the median of ``timing_repeats`` runs of ``timing_t`` simulated
seconds on fresh rods.
"""
from __future__ import annotations

import math
import statistics
import time

import numpy as np

from strandlab.reference import circular_section, elastica_cantilever

__all__ = ["build_der", "run_der", "model_reference"]


def model_reference(case: dict) -> tuple[float, float]:
    """Tip (x, z) [m] of the extensible, unshearable elastica (``EA = E A``): DER's own
    continuum model."""
    A, I, _ = circular_section(case["radius"])
    E = case["youngs_modulus"]
    q = case["density"] * A * case["gravity"]
    return elastica_cantilever(case["length"], E * I, q, EA=E * A).tip


def build_der(n_elements: int, damping: float, case: dict):
    """DER solver of the cantilever with its first edge across x = 0 (module docstring)."""
    import strandlab as sl
    from strandlab.der import DERSettings, DERSolver

    L = case["length"]
    dl = L / (n_elements - 0.5)
    x = (np.arange(n_elements + 1) - 0.5) * dl
    mat = sl.Material(young_modulus=case["youngs_modulus"], density=case["density"],
                      radius=case["radius"], shear_modulus=case["shear_modulus"])
    b = sl.SceneBuilder(gravity=(0.0, 0.0, -case["gravity"]))
    s = b.add_strand(np.stack([x, 0.0 * x, 0.0 * x], axis=1), material=mat, d1=(0, 0, 1))
    b.attach_to_frame(s, b.add_frame(), end=0)
    return DERSolver(b.build(), DERSettings(damping=damping))


def _advance(solver, state, dt: float, n: int) -> None:
    for _ in range(n):
        solver.step(state, state, dt)


def run_der(dt: float, t_end: float, n_elements: int = 100, *, case: dict, refs: dict,
            damping: float = 8.0, settle_tol: float = 1e-6, check_every: float = 0.1,
            warmup_steps: int = 20, timing_repeats: int = 3, timing_t: float = 1.0) -> dict:
    """Hang the rod with DER at step ``dt`` [s] until settled (at most ``t_end`` [s]) and time
    it; the keys of ``pyelastica_cantilever.run_pyelastica`` plus ``error_model`` (against
    :func:`model_reference`), ``equilibrium_gap`` (distance [m] of the settled tip from the
    static equilibrium) and ``wall_to_settle`` (wall time of the settling run from t = 0 [s],
    after a separate warm-up run that compiles the kernels)."""
    warm = build_der(n_elements, damping, case)      # compiles the kernels (not timed)
    _advance(warm, warm.state(), dt, warmup_steps)
    solver = build_der(n_elements, damping, case)
    m = solver.model
    vd = m.vertex_dof
    st = solver.state()
    chunk = max(1, round(check_every / dt))
    stable, settled, wall, speed = True, False, 0.0, math.nan
    try:
        while st.time < t_end - 0.5 * dt:
            n = min(chunk, max(1, round((t_end - st.time) / dt)))
            t0 = time.perf_counter()
            _advance(solver, st, dt, n)
            wall += time.perf_counter() - t0
            v = st.v
            speed = float(np.sqrt(v[vd] ** 2 + v[vd + 1] ** 2 + v[vd + 2] ** 2).max())
            if speed < settle_tol:
                settled = True
                break
    except Exception:               # SimulationDiverged, a failed solve: unstable at this dt
        stable = False
    tip = tuple(float(c) for c in solver.output(st).positions[-1])
    eq = solver.state()
    solver.equilibrium(eq, max_iterations=500)
    tip_eq = solver.output(eq).positions[-1]
    per_sim_s = []
    for _ in range(timing_repeats if stable else 0):
        s2 = build_der(n_elements, damping, case)
        a = s2.state()
        _advance(s2, a, dt, warmup_steps)
        n = max(1, round(timing_t / dt))
        t0 = time.perf_counter()
        _advance(s2, a, dt, n)
        per_sim_s.append((time.perf_counter() - t0) / (n * dt))
    out = {"library": "strandlab-der", "dt": dt, "n_elements": n_elements, "damping": damping,
           "tip": tip, "t": st.time, "settled": settled, "stable": stable,
           "max_speed": speed, "drop": -tip[2], "wall_to_settle": wall,
           "wall_per_sim_second_settle": wall / max(st.time, dt),
           "equilibrium_gap": math.hypot(tip[0] - tip_eq[0], tip[2] - tip_eq[2])}
    for key, name in (("inextensible", "error"), ("extensible", "error_extensible"),
                      ("model", "error_model")):
        rx, rz = refs[key]
        out[name] = math.hypot(tip[0] - rx, tip[2] - rz) if stable else math.nan
    if per_sim_s:
        out["wall_per_sim_second"] = statistics.median(per_sim_s)
        out["wall_per_sim_second_best"] = min(per_sim_s)
        out["us_per_step"] = statistics.median(per_sim_s) * dt * 1e6
    else:
        out["wall_per_sim_second"] = out["wall_per_sim_second_best"] = math.nan
        out["us_per_step"] = math.nan
    return out
