"""Scenes and measurements shared by the verification tests of discrete elastic rods
(``test_verification_*.py``; the figures they measure are recorded in docs/der.md,
"Verification").  Imported by those tests as ``der_verify``.

Clamp convention.  A clamped end (``attach_to_frame(..., orientation=True)``) holds its first two
vertices and the first edge's angle, so the beam's root is the midpoint of that edge: the rods
here place the first edge across the clamp point, and a rod clamped at both ends its last edge
across the other clamp.  The discretisation error then falls as ``1 / n^2``.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

import strandlab as sl
from strandlab.der import DERSettings, DERSolver
from strandlab.reference import cantilever_beta_L

__all__ = ["material", "bending_stiffness", "twisting_stiffness", "root_clamped_x",
           "both_clamped_x", "cantilever", "straight", "free_stiffness", "lowest_eigenvalues",
           "elastic_energy", "kinetic_energy", "cantilever_mode", "with_length_kept",
           "crossing_frequency", "planar", "observed_order", "exact_settings"]


def material(*, young_modulus=1e6, density=1000.0, radius=0.02, poisson_ratio=0.5):
    """A circular section (default ``B / C = 1 + nu = 1.5``)."""
    return sl.Material(young_modulus=young_modulus, density=density, radius=radius,
                       poisson_ratio=poisson_ratio)


def bending_stiffness(mat) -> float:
    """``B = E I`` [N m^2]."""
    return mat.stiffness[0]


def twisting_stiffness(mat) -> float:
    """``C = G J`` [N m^2]."""
    return mat.stiffness[2]


def root_clamped_x(n: int, length: float) -> np.ndarray:
    """Abscissae [n + 1] of a rod of ``n`` equal edges whose first edge's midpoint is at 0 and
    last vertex at ``length``: the beam from the clamp to a loaded tip vertex."""
    return (np.arange(n + 1) - 0.5) * (length / (n - 0.5))


def both_clamped_x(n: int, length: float) -> np.ndarray:
    """Abscissae [n + 1] of a rod of ``n`` equal edges whose first and last edges' midpoints are
    at 0 and ``length``: a beam between two clamps (or loaded by a couple on its last edge)."""
    return (np.arange(n + 1) - 0.5) * (length / (n - 1))


def straight(x: np.ndarray) -> np.ndarray:
    """Points [n, 3] on the x axis."""
    return np.stack([x, np.zeros_like(x), np.zeros_like(x)], axis=1)


def cantilever(n: int, mat, *, length=1.0, gravity=(0.0, 0.0, 0.0), tip_force=None,
               points=None, options=None, settings=None) -> DERSolver:
    """A cantilever along +x clamped at x = 0 (first edge across the clamp), ``n`` edges.

    ``tip_force``: a vector [N] or a function of time on the last vertex; ``points``: initial
    shape (the rest shape stays straight); ``options``: the strand's ``der`` options.
    """
    rest = straight(root_clamped_x(n, length))
    b = sl.SceneBuilder(gravity=gravity)
    s = b.add_strand(rest if points is None else points, rest_points=rest, material=mat,
                     options=None if options is None else {"der": options})
    b.attach_to_frame(s, b.add_frame(), end=0)
    if tip_force is not None:
        b.add_load(s, -1, tip_force)
    return DERSolver(b.build(), settings)


def planar(sol: DERSolver) -> DERSolver:
    """The same model with every vertex's y coordinate and every edge angle held: the planar
    problem (x-z plane) of the references for in-plane bending."""
    m = sol.model
    fixed = m.fixed.copy()
    fixed[m.vertex_dof + 1] = True
    fixed[m.edge_dof] = True
    return DERSolver(dataclasses.replace(m, fixed=fixed), sol.settings)


def free_stiffness(sol: DERSolver, state) -> np.ndarray:
    """The Hessian of the elastic energy [N/m, N, N m] over the free coordinates at ``state``
    (dense, [F, F]); exact when the solver's settings have ``hessian="exact"``.  The terms'
    Hessians are the second derivatives with the reference frames carried by time-parallel
    transport, so this is the second variation of the rod's energy."""
    m = sol.model
    sol.system.load_frames(state.q, state.a1, state.ref_twist)
    sol.system.prepare(state.q)
    asm = sol.integrator.assembly
    asm.evaluate(state.q, hessian=True)
    free = ~m.fixed
    return asm.dense_hessian()[np.ix_(free, free)]


def lowest_eigenvalues(sol: DERSolver, state, k: int = 4) -> np.ndarray:
    """The ``k`` smallest eigenvalues of :func:`free_stiffness` (ascending)."""
    return np.linalg.eigvalsh(free_stiffness(sol, state))[:k]


def elastic_energy(sol: DERSolver, state) -> float:
    """Sum of the model's stretching, bending and twisting energies at ``state`` [J], each
    term evaluated by its own :meth:`evaluate`."""
    sol.system.load_frames(state.q, state.a1, state.ref_twist)
    sol.system.prepare(state.q)
    total = 0.0
    for term in sol.system.terms:
        ns, k = term.dofs.shape
        e = np.zeros(ns)
        term.evaluate(state.q, e, np.zeros((ns, k)), None)
        total += float(e.sum())
    return total


def kinetic_energy(sol: DERSolver, state) -> float:
    """``1/2 v^T M v`` [J] (positions and edge angles)."""
    return 0.5 * float(np.sum(sol.model.mass * state.v ** 2))


def cantilever_mode(k: int, x: np.ndarray, length: float) -> np.ndarray:
    """Euler-Bernoulli cantilever mode ``k`` (0: first) at abscissae ``x`` [m] (zero for
    ``x <= 0``): ``cosh bx - cos bx - s (sinh bx - sin bx)``,
    ``s = (cosh bL + cos bL) / (sinh bL + sin bL)``, ``bL`` from :func:`cantilever_beta_L`."""
    bl = float(cantilever_beta_L(k + 1)[k])
    b = bl / length
    s = (math.cosh(bl) + math.cos(bl)) / (math.sinh(bl) + math.sin(bl))
    xx = np.clip(x, 0.0, None)
    return np.cosh(b * xx) - np.cos(b * xx) - s * (np.sinh(b * xx) - np.sin(b * xx))


def with_length_kept(rest: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The straight rest polyline [n, 3] deflected by ``w`` [n] along z, each edge rescaled to
    its rest length (no stretching energy in the initial shape); the first vertex stays."""
    p = rest.copy()
    p[:, 2] += w
    e = np.diff(p, axis=0)
    e *= (np.linalg.norm(np.diff(rest, axis=0), axis=1) / np.linalg.norm(e, axis=1))[:, None]
    return np.concatenate([rest[:1], rest[0] + np.cumsum(e, axis=0)])


def crossing_frequency(signal: np.ndarray, h: float) -> float:
    """Angular frequency [rad/s] of a sampled oscillation (step ``h`` [s]) from its zero
    crossings (linear interpolation): pi over the mean spacing of successive crossings."""
    s = np.asarray(signal)
    i = np.nonzero(np.signbit(s[:-1]) != np.signbit(s[1:]))[0]
    if len(i) < 3:
        raise ValueError(f"only {len(i)} zero crossings: simulate longer")
    tc = (i + s[i] / (s[i] - s[i + 1])) * h
    return math.pi / float(np.mean(np.diff(tc)))


def observed_order(ns, errors) -> np.ndarray:
    """Observed orders ``log(e_i / e_{i+1}) / log(n_{i+1} / n_i)`` of successive errors."""
    e = np.abs(np.asarray(errors, dtype=float))
    n = np.asarray(ns, dtype=float)
    return np.log(e[:-1] / e[1:]) / np.log(n[1:] / n[:-1])


def exact_settings(**kw) -> DERSettings:
    """Settings with the exact Hessian (no stretching clamp): the second variation."""
    return DERSettings(hessian="exact", **kw)
