"""Backward (implicit) Euler by Newton's method on an objective, generic over energy terms.

The system.  A model gives the integrator an object with these members
(:class:`ImplicitSystem`):

- ``n_dofs`` (int): number of generalized coordinates ``q``;
- ``mass`` float64 [n_dofs]: diagonal mass (kg for positions, kg m^2 for angles), > 0 on every
  DOF that is free in a dynamic step (a fixed DOF may have zero mass);
- ``terms``: sequence of :class:`~.terms.StencilTerm`; their sum is the potential ``E(q)`` [J];
- ``block_start`` int64 [B + 1]: DOF ranges of independent blocks (for the banded solver every
  stencil lies inside one block; the sparse solver accepts stencils spanning blocks);
- ``begin_step(q)``: called once at the start of a step with the step's start configuration
  ``q_n`` (a buffer the integrator owns: copy what is kept), e.g. to snapshot reference frames;
- ``prepare(q)``: called before the terms are evaluated at a new iterate ``q`` (e.g. transport
  reference frames from the step start to ``q``); must be idempotent for a given ``q`` between
  two calls of ``accept``;
- ``accept(q)`` (optional): called after each accepted Newton move that the solve goes on
  from (or that ends a line-searched step), right after ``prepare(q)`` at the new iterate
  ``q``.  A system whose terms read reference frames transported from a base re-bases them on
  ``q`` (:meth:`strandlab.rods.frames.RodFrames.rebase`), leaving the frames and the energy at
  ``q`` unchanged: the merit of the next line search is then the energy with frames
  transported from ``q``, the one whose gradient and Hessian the terms compute at ``q``.
  (Transported from the step's start instead, the frames differ from those by the transport's
  holonomy once an edge has turned within the step, and the computed gradient is not the
  merit's: Newton stalls with line searches of ``1/512``.)  Terms whose derivatives at ``q``
  depend on the base (:attr:`~.terms.StencilTerm.reads_base`) are evaluated again after it.
  Not called after the last move of a fixed-count step without line search (that iterate is
  not evaluated).

The step.  From ``(q_n, v_n)`` with step ``h`` [s], :meth:`ImplicitEuler.step` minimises over
the free DOFs

    Phi(q) = 1/(2 h^2) (q - qhat)^T M (q - qhat) + E(q) - f_ext . q
             + c/(2 h) (q - q_n)^T M (q - q_n),          qhat = q_n + h v_n,

with ``c = mass_damping`` [1/s], and sets ``v_{n+1} = (q_{n+1} - q_n) / h``.  Stationarity is
``M (v_{n+1} - v_n) / h = -grad E(q_{n+1}) + f_ext - c M v_{n+1}``: backward Euler with
mass-proportional damping.  Stiffness-proportional (Rayleigh) damping ``beta =
stiffness_damping`` [s] adds the force ``-beta K v_{n+1}``, ``K`` the Hessian of ``E`` at the
iterate: the gradient gains ``(beta / h) K (q - q_n)`` and the Newton matrix ``(beta / h) K``,
so the Newton matrix is ``M (1/h^2 + c/h) + (1 + beta/h) K`` (``K`` includes every term).  This
damping force has no potential when ``K`` varies; the line search merit of Newton iteration
``k`` is therefore ``Phi(q) + beta/(2h) (q - q_n)^T K_k (q - q_n)`` with ``K_k`` frozen at that
iteration's iterate, whose gradient and Hessian at ``q_k`` are exactly the Newton system's.

Newton.  Iterates start at ``q_n`` with the fixed DOFs set to their targets.  Each iteration
evaluates the terms (energy, gradient, Hessian) at the iterate, solves ``A dx = g`` (the linear
solver; an indefinite ``A`` is regularised there, :mod:`.linear`) and moves to ``q - alpha dx``.
Two modes (:class:`NewtonSettings`):

- fixed count (``tolerance=None``): exactly ``iterations`` Newton steps (default 1, the
  linearised backward Euler); the last iterate is not evaluated again, so the reported residual
  is the one at the iterate the last step started from;
- tolerance: iterate until ``|g_free| <= max(tolerance * |g_0|, atol)``, ``g_0`` the gradient at
  the first iterate (units of ``dPhi/dq``: N for positions, N m for angles), at most
  ``max_iterations`` steps.  The Hessian at the iterate that ends the step is never used: a
  trial iterate whose residual, predicted at Newton's quadratic rate from the last two
  (``r_k (r_k / r_{k-1})^2``), is below :data:`PREDICT_MARGIN` times the tolerance is
  evaluated without Hessians (when the step has no stiffness damping) and, once the line
  search accepts it, tested first; a prediction that misses costs that evaluation, and the
  iterate is evaluated again with Hessians.  The iterates are the same either way.

The line search (on by default in tolerance mode, off in fixed-count mode) backtracks
``alpha <- backtrack * alpha`` from 1 until the Armijo condition ``merit(q - alpha dx) <=
merit(q) - armijo * alpha * g.dx + 64 eps (|merit(q)| + sum_j |f_j q_j|)`` holds (the last term
absorbs round-off near convergence; the load terms ``f_j q_j`` can be far larger than the merit
they sum to, e.g. a couple of large opposite forces); after ``max_backtracks`` halvings Newton
goes back to the iterate and, in tolerance mode while iterations and shifts are left, solves
again with the linear solver's next diagonal shift (a direction along a nearly singular mode,
a mechanism, is too long for the backtracking); otherwise the iterate is kept, Newton stops
and the step reports ``line_search_failed``.

Limited moves.  A term with ``limits_step`` (:meth:`~.terms.StencilTerm.max_step`; the surface
contact of :mod:`strandlab.collision.mesh_contact`) bounds each move of an iterate: a Newton
move starts its line search at (or, without line search, takes) ``alpha = min(1, max_step)``
of the Newton step, and the inertial first iterate is ``q_n + alpha h v_n`` on the free DOFs
(fixed DOFs go to their targets whatever the bound).  Contact surfaces therefore never pass
through each other between iterates, where a penalty alone would let a fast vertex jump across
a thin surface and then push it on through.  ``StepInfo.limited_moves`` counts the moves cut.

Fixed (Dirichlet) DOFs.  ``fixed`` bool [n_dofs]; their values at the end of the step are taken
from ``q_fixed`` [n_dofs] (only the fixed entries are read) or, when it is None, kept at
``q_n``.  They never move in the solve (their rows and columns are removed from the linear
system and their gradient entries ignored), and their velocity is ``(q_fixed - q_n) / h``.
In tolerance mode, and whenever the line search is on, they are set to their targets before the
first evaluation.  In fixed-count mode without line search (the linearised backward Euler) the
first Newton step is taken at ``q_n`` with the held DOFs there too, their increments
``dh = q_fixed - q_n`` entering through the coupling of the Newton matrix,
``A_ff dx_f = -(g_f + A_fh dh)``; the held DOFs are set to their targets after that step.
Setting them first would linearise at a distorted configuration: a clamp carried by ``dh``
per step leaves its first free edge turned by ``|dh| / l``, and the linear step, which moves
along tangents instead of arcs, stretches that edge by about ``(|dh| / l)^2 / 2`` every step
(on thin hair carried by a nodding head, a spurious tension larger than the bending forces).
Linearised at ``q_n``, a strand carried at constant velocity by its clamp moves rigidly.

BDF2.  Given the step before, ``history = (q_{n-1}, v_{n-1}, h_{n-1})``, :meth:`ImplicitEuler.step`
takes a step of the second-order backward differentiation formula instead, with the step ratio
``r = h / h_{n-1}`` (variable-step BDF2):

    q_{n+1} = q_b + ht v_{n+1},     v_{n+1} = vt + ht M^-1 F(q_{n+1}, v_{n+1}),
    q_b = a1 q_n - a2 q_{n-1},      vt = a1 v_n - a2 v_{n-1},
    a1 = (1 + r)^2 / (1 + 2 r),     a2 = r^2 / (1 + 2 r),     ht = h (1 + r) / (1 + 2 r)

(``r = 1``: ``q_{n+1} - 4/3 q_n + 1/3 q_{n-1} = 2/3 h v_{n+1}``).  That is the backward Euler
step above with ``h -> ht``, its velocity base ``q_n -> q_b`` and ``v_n -> vt``: ``Phi`` keeps its
form with ``qhat = q_b + ht vt``, the damping terms are taken about ``q_b`` and the step ends with
``v_{n+1} = (q_{n+1} - q_b) / ht``.  The Newton solve is unchanged, and better conditioned than
backward Euler's at the same ``h`` (its inertia is ``M / ht^2``, ``ht = 2 h / 3``).  What stays
at ``q_n``: the first iterate (``q_n`` or ``qhat``), ``begin_step``, the held DOFs' increments of
the linearised step and the move limits.  BDF2 is second order and A-stable; with variable
steps it is zero-stable for ``r < 1 + sqrt(2)`` (:data:`BDF2_MAX_RATIO`), and a larger ratio
raises ``ValueError``.  For a linear oscillator its
numerical damping per step is of order ``(w h)^4`` against backward Euler's ``(w h)^2``
(``w`` the angular frequency): at 30 steps a period an undamped oscillator loses 2.6 % of
its energy a period, against backward Euler's 72 %; at 10 steps a period 32 % against 96 %.

Energy.  Backward Euler dissipates: for a linear oscillator of angular frequency ``w`` the
energy is multiplied by exactly ``1 / (1 + w^2 h^2)`` per step (with mass damping ``c`` the
eigenvalues of the step have squared modulus ``1 / (1 + c h + w^2 h^2)``), so modes with
``w h >> 1`` are removed within a step and slow modes lose energy at the rate ``w^2 h``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

import numpy as np
from numba import njit, prange

from ..sim.validate import show
from .assembly import Assembly, use_parallel
from .linear import LinearSolveError, LinearSolver, check_fixed, make_linear_solver
from .newton import NewtonSettings, StepInfo
from .terms import StencilTerm

__all__ = ["ImplicitSystem", "NewtonSettings", "StepInfo", "ImplicitEuler", "ImplicitStepError",
           "static_equilibrium", "bdf2_coefficients", "BDF2_MAX_RATIO"]

_EPS = np.finfo(np.float64).eps

BDF2_MAX_RATIO = 1.0 + math.sqrt(2.0)
"""The largest step ratio ``h / h_{n-1}`` of a BDF2 step (its zero-stability bound)."""

PREDICT_MARGIN = 0.1
"""A Newton iterate whose predicted residual (:func:`_predicts_convergence`) is below this
fraction of the tolerance is evaluated without Hessians, its convergence tested first."""


def bdf2_coefficients(h: float, h_prev: float) -> tuple[float, float, float]:
    """``(a1, a2, ht)`` of a BDF2 step of ``h`` [s] after one of ``h_prev`` [s] (module
    docstring, "BDF2"); ``ValueError`` when ``h / h_prev`` is not below
    :data:`BDF2_MAX_RATIO`.

    >>> bdf2_coefficients(0.01, 0.01)   # 4/3, 1/3, 2/3 h
    (1.3333333333333333, 0.3333333333333333, 0.006666666666666667)
    """
    r = h / h_prev
    if not r < BDF2_MAX_RATIO:
        raise ValueError(f"a BDF2 step of {show(h)} s after one of {show(h_prev)} s: the ratio "
                         f"{r:.4g} is not below {BDF2_MAX_RATIO:.4f} (1 + sqrt 2), where the "
                         f"formula is unstable; start again without history")
    d = 1.0 + 2.0 * r
    return (1.0 + r) ** 2 / d, r * r / d, h * (1.0 + r) / d


def _predicts_convergence(residuals: list, tol: float, atol: float) -> bool:
    """Whether the next residual, predicted from the last two at Newton's quadratic rate
    (``r_{k+1} = r_k (r_k / r_{k-1})^2``), is below ``PREDICT_MARGIN`` times the tolerance
    ``max(tol, atol)`` [N]."""
    if len(residuals) < 2:
        return False
    r1, r0 = residuals[-1], residuals[-2]
    if not 0.0 < r1 < r0:
        return False
    return r1 * (r1 / r0) ** 2 <= PREDICT_MARGIN * max(tol, atol)


@runtime_checkable
class ImplicitSystem(Protocol):
    """What a model gives the integrator (module docstring)."""

    n_dofs: int
    mass: np.ndarray
    terms: Sequence[StencilTerm]
    block_start: np.ndarray

    def begin_step(self, q: np.ndarray) -> None: ...

    def prepare(self, q: np.ndarray) -> None: ...


class ImplicitStepError(RuntimeError):
    """A step met bad input or a non-finite energy, gradient or Hessian; ``block`` is the
    block concerned (-1 when not known)."""

    def __init__(self, block: int, message: str):
        self.block = int(block)
        super().__init__(message)


# ------------------------------------------------------------------------------- kernels

@njit(cache=True)
def _combine_block(b, bs, q, qhat, qn, mass, a, cn, f, fixed, g, part):
    """g += M (a (q - qhat) + cn (q - qn)) - f on free DOFs, 0 on fixed; partial sums of
    |g|^2, of the inertial and load parts of Phi and of the load terms' magnitudes |f_j q_j|
    (the scale of Phi's round-off where those terms cancel)."""
    norm2 = 0.0
    phi = 0.0
    load = 0.0
    for j in range(bs[b], bs[b + 1]):
        if fixed[j]:
            g[j] = 0.0
            continue
        dh = q[j] - qhat[j]
        dn = q[j] - qn[j]
        gj = g[j] + mass[j] * (a * dh + cn * dn) - f[j]
        phi += 0.5 * mass[j] * (a * dh * dh + cn * dn * dn) - f[j] * q[j]
        load += abs(f[j] * q[j])
        g[j] = gj
        norm2 += gj * gj
    part[b, 0] = norm2
    part[b, 1] = phi
    part[b, 2] = load


@njit(cache=True)
def _phi_block(b, bs, q, qhat, qn, mass, a, cn, f, fixed, part):
    phi = 0.0
    for j in range(bs[b], bs[b + 1]):
        if not fixed[j]:
            dh = q[j] - qhat[j]
            dn = q[j] - qn[j]
            phi += 0.5 * mass[j] * (a * dh * dh + cn * dn * dn) - f[j] * q[j]
    part[b, 1] = phi


@njit(cache=True)
def _dot_block(b, bs, x, y, part):
    acc = 0.0
    for j in range(bs[b], bs[b + 1]):
        acc += x[j] * y[j]
    part[b, 0] = acc


@njit(cache=True, parallel=True)
def _blocks_par(op, bs, q, qhat, qn, mass, a, cn, f, fixed, g, part):
    for b in prange(bs.shape[0] - 1):
        if op == 0:
            _combine_block(b, bs, q, qhat, qn, mass, a, cn, f, fixed, g, part)
        elif op == 1:
            _phi_block(b, bs, q, qhat, qn, mass, a, cn, f, fixed, part)
        else:
            _dot_block(b, bs, q, g, part)


@njit(cache=True)
def _blocks_ser(op, bs, q, qhat, qn, mass, a, cn, f, fixed, g, part):
    for b in range(bs.shape[0] - 1):
        if op == 0:
            _combine_block(b, bs, q, qhat, qn, mass, a, cn, f, fixed, g, part)
        elif op == 1:
            _phi_block(b, bs, q, qhat, qn, mass, a, cn, f, fixed, part)
        else:
            _dot_block(b, bs, q, g, part)


@njit(cache=True)
def _sum_column(part, col):
    """Serial sum of the per-block partials (fixed order: deterministic)."""
    acc = 0.0
    for b in range(part.shape[0]):
        acc += part[b, col]
    return acc


@njit(cache=True)
def _force_scale(f, mass, v, h, fixed):
    """max(|f|, |M v / h|) over the free DOFs (NewtonSettings.scale = "load")."""
    f2 = 0.0
    p2 = 0.0
    for j in range(f.shape[0]):
        if not fixed[j]:
            f2 += f[j] * f[j]
            p = mass[j] * v[j] / h
            p2 += p * p
    return math.sqrt(max(f2, p2))


@njit(cache=True)
def _first_massless_free(mass, fixed):
    for j in range(mass.shape[0]):
        if not fixed[j] and not (mass[j] > 0.0):
            return j
    return -1


@njit(cache=True)
def _set_fixed(q, q_fixed, fixed):
    for j in range(q.shape[0]):
        if fixed[j]:
            q[j] = q_fixed[j]


@njit(cache=True)
def _fixed_increment(out, q_fixed, qn, fixed):
    """out = q_fixed - qn on the fixed DOFs, 0 on the free ones."""
    for j in range(out.shape[0]):
        out[j] = q_fixed[j] - qn[j] if fixed[j] else 0.0


@njit(cache=True)
def _add_free(g, alpha, y, fixed):
    """g += alpha * y on the free DOFs."""
    for j in range(g.shape[0]):
        if not fixed[j]:
            g[j] += alpha * y[j]


@njit(cache=True)
def _axpy_to(out, x, alpha, y):
    """out = x + alpha * y."""
    for j in range(out.shape[0]):
        out[j] = x[j] + alpha * y[j]


# ------------------------------------------------------------------------------- integrator

class ImplicitEuler:
    """Backward Euler for an :class:`ImplicitSystem` (module docstring).

    Parameters
    ----------
    system : ImplicitSystem
    settings : NewtonSettings or None
    linear_solver : "auto", "banded", "sparse" or a LinearSolver
        A solver instance must have been made for this system's terms
        (``make_linear_solver(Assembly(system.terms, ...))``); its assembly is then used.
    solver_options : dict or None
        Options of :func:`~.linear.make_linear_solver` (shift, pivot tolerance, ...).
    parallel : bool or None
        Force the parallel (True) or serial (False) kernels; None chooses by size.

    All buffers are allocated here; a step allocates no arrays (the sparse solver's SciPy
    factorisation excepted).  Counters over the integrator's life: ``predicted_iterates``
    (iterates evaluated without Hessians because Newton's rate predicted them converged) and
    ``missed_predictions`` (those that were not, and were evaluated again with Hessians).
    """

    def __init__(self, system: ImplicitSystem, settings: NewtonSettings | None = None, *,
                 linear_solver: str | LinearSolver = "auto", solver_options: dict | None = None,
                 parallel: bool | None = None):
        for member in ("n_dofs", "mass", "terms", "block_start", "begin_step", "prepare"):
            if not hasattr(system, member):
                raise TypeError(f"system lacks the member {member!r} of ImplicitSystem")
        self.system = system
        self.settings = NewtonSettings() if settings is None else settings
        if not isinstance(self.settings, NewtonSettings):
            raise TypeError(f"settings must be NewtonSettings, got {type(settings).__name__}")
        n = int(system.n_dofs)
        mass = np.ascontiguousarray(system.mass, dtype=np.float64)
        if mass.shape != (n,):
            raise ValueError(f"system.mass must have shape ({n},), got {mass.shape}")
        bad = np.nonzero(~(np.isfinite(mass) & (mass >= 0.0)))[0]
        if bad.size:
            raise ValueError(f"system.mass[{int(bad[0])}] = {show(mass[bad[0]])} is not a "
                             f"finite number >= 0")
        self.mass = mass
        if isinstance(linear_solver, LinearSolver):
            a = linear_solver.assembly
            if a.n_dofs != n or tuple(a.terms) != tuple(system.terms):
                raise ValueError("linear_solver was made for other terms or another n_dofs")
            if solver_options:
                raise ValueError("solver_options apply only when linear_solver is a kind")
            self.assembly = a
            self.linear_solver = linear_solver
        else:
            self.assembly = Assembly(system.terms, n, system.block_start, parallel=parallel)
            self.linear_solver = make_linear_solver(self.assembly, linear_solver,
                                                    **(solver_options or {}))
        self.n_dofs = n
        self.parallel = parallel
        self._qn, self._qhat, self._qk = np.zeros(n), np.zeros(n), np.zeros(n)
        self._qb, self._vt = np.zeros(n), np.zeros(n)     # velocity base and start (BDF2)
        self._g, self._dx, self._kv, self._dq = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        self._diag, self._zeros, self._dh = np.zeros(n), np.zeros(n), np.zeros(n)
        self._dir = np.zeros(n)
        self._limiters = tuple(t for t in system.terms if getattr(t, "limits_step", False))
        self._accept = getattr(system, "accept", None)
        self._reads_base = tuple(k for k, t in enumerate(system.terms)
                                 if getattr(t, "reads_base", False))
        self._not_base = tuple(k for k in range(len(system.terms)) if k not in self._reads_base)
        self._limited = 0
        self.missed_predictions = 0
        self.predicted_iterates = 0
        self._no_fixed = np.zeros(n, dtype=np.bool_)
        self._part = np.zeros((self.assembly.n_blocks, 3))
        self._load_scale = 0.0

    # ------------------------------------------------------------------ helpers
    def _blocks(self, op, q, qhat, qn, a, cn, f, fixed, g) -> None:
        par = use_parallel(self.assembly.n_blocks, self.n_dofs, self.parallel)
        (_blocks_par if par else _blocks_ser)(op, self.assembly.block_start, q, qhat, qn,
                                              self.mass, a, cn, f, fixed, g, self._part)

    def _move_limit(self, q, dq) -> float:
        """``min(1, max_step)`` over the terms that limit moves from ``q`` along ``dq``."""
        alpha = 1.0
        for t in self._limiters:
            alpha = min(alpha, float(t.max_step(q, dq)))
        if alpha < 1.0:
            self._limited += 1
        return alpha

    def _dot(self, x, y) -> float:
        self._blocks(2, x, x, x, 0.0, 0.0, x, self._no_fixed, y)
        return _sum_column(self._part, 0)

    def _check_vector(self, name: str, x) -> np.ndarray:
        if not (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (self.n_dofs,)
                and x.flags.c_contiguous):
            raise ValueError(f"{name} must be a C-contiguous float64 array of shape "
                             f"({self.n_dofs},)")
        return x

    def _evaluate(self, q, *, hessian: bool, prepare: bool = True,
                  base_hessian: bool = True) -> None:
        """Evaluate the terms at ``q``; with ``base_hessian`` False the terms that read the
        base get no Hessian (a trial point that, once accepted, becomes the base, where
        :meth:`_rebase` evaluates them again)."""
        if prepare:
            self.system.prepare(q)
        if hessian and not base_hessian and self._reads_base:
            self.assembly.evaluate(q, hessian=True, only=self._not_base)
            self.assembly.evaluate(q, hessian=False, only=self._reads_base)
        else:
            self.assembly.evaluate(q, hessian=hessian)

    def _rebase(self, q, evaluated: bool, gradient: bool = False) -> None:
        """Tell the system that ``q`` (prepared there) is accepted; the terms that read the
        base are evaluated again when the others' evaluation at ``q`` is kept (with their
        Hessians when ``evaluated``, else without when ``gradient``)."""
        self._accept(q)
        if (evaluated or gradient) and self._reads_base:
            self.assembly.evaluate(q, hessian=evaluated, only=self._reads_base)

    def _nonfinite(self, hessian: bool) -> ImplicitStepError:
        where = self.assembly.first_nonfinite(hessian=hessian)
        if where is None:
            return ImplicitStepError(-1, "non-finite objective or gradient (check q, v, f_ext "
                                         "and the fixed targets)")
        t, s, what = where
        name = self.assembly.terms[t].name
        block = self.assembly.block_of(int(self.assembly.dofs[t][s, 0]))
        return ImplicitStepError(block, f"term {name!r} gave a non-finite {what} at stencil {s} "
                                        f"(block {block})")

    def _gradient(self, q, a, cn, beta_h, f, fixed) -> tuple[float, float]:
        """g = free-DOF gradient of the merit at q (after evaluation with Hessian); returns
        (merit, |g|)."""
        g = self._g
        self.assembly.gradient(g)
        damp = 0.0
        if beta_h > 0.0:
            np.subtract(q, self._qb, out=self._dq)
            self._kv.fill(0.0)
            self.assembly.hessian_matvec(self._dq, self._kv)
            damp = 0.5 * beta_h * self._dot(self._dq, self._kv)
            _axpy_to(g, g, beta_h, self._kv)
        self._blocks(0, q, self._qhat, self._qb, a, cn, f, fixed, g)
        norm = math.sqrt(_sum_column(self._part, 0))
        self._load_scale = _sum_column(self._part, 2)
        merit = self.assembly.energy_sum() + _sum_column(self._part, 1) + damp
        return merit, norm

    def _merit(self, q, a, cn, beta_h, f, fixed) -> float:
        """The merit at a trial q (terms evaluated there; K_k still in the Hessian buffers)."""
        self._blocks(1, q, self._qhat, self._qb, a, cn, f, fixed, self._g)
        merit = self.assembly.energy_sum() + _sum_column(self._part, 1)
        if beta_h > 0.0:
            np.subtract(q, self._qb, out=self._dq)
            self._kv.fill(0.0)
            self.assembly.hessian_matvec(self._dq, self._kv)
            merit += 0.5 * beta_h * self._dot(self._dq, self._kv)
        return merit

    # ------------------------------------------------------------------ Newton
    def _newton(self, q, a, cn, beta_h, f, fixed, st: NewtonSettings,
                load: float = 0.0, q_fixed=None) -> StepInfo:
        tol_mode = st.tolerance is not None
        max_it = st.max_iterations if tol_mode else st.iterations
        line_search = st.use_line_search
        solver = self.linear_solver
        np.multiply(self.mass, a + cn, out=self._diag)
        hess_scale = 1.0 + beta_h
        residuals = []
        it = shifted = backtracks = evals = 0
        max_shift = 0.0
        min_step = 1.0
        converged = None
        failed = False
        retry_shift = 0.0      # > 0: the last line search failed; the next direction is shifted
        evaluated = False
        prepared = False
        checked = False        # q's terms evaluated without Hessians: test convergence first
        g0 = 0.0
        fact0, lin0 = solver.factorizations, solver.linear_iterations
        limited0 = self._limited
        while True:
            if checked:
                checked = False
                merit0, gnorm = self._gradient(q, a, cn, beta_h, f, fixed)
                if math.isfinite(gnorm) and gnorm <= max(st.tolerance * g0, st.atol):
                    residuals.append(gnorm)
                    converged = True
                    break
                self.missed_predictions += 1
            if not evaluated:
                self._evaluate(q, hessian=True, prepare=not prepared)
                evals += 1
                prepared = False
            merit0, gnorm = self._gradient(q, a, cn, beta_h, f, fixed)
            if not (math.isfinite(gnorm) and math.isfinite(merit0)):
                raise self._nonfinite(hessian=True)
            residuals.append(gnorm)
            if it == 0:
                g0 = load if load > 0.0 else gnorm
                if q_fixed is not None:
                    # the first step's right-hand side gains A_fh dh (A_fh = (1 + beta/h) K_fh)
                    self._kv.fill(0.0)
                    self.assembly.hessian_matvec(self._dh, self._kv)
                    _add_free(self._g, hess_scale, self._kv, fixed)
            if tol_mode:
                if gnorm <= max(st.tolerance * g0, st.atol):
                    converged = True
                    break
                if it == max_it:
                    converged = False
                    break
            # Newton direction -dx, A dx = g, with A positive definite on the free DOFs
            solver.assemble(hess_scale=hess_scale, diagonal=self._diag)
            mu = retry_shift
            while True:
                info = solver.factor(fixed, min_shift=mu)
                solver.solve(self._g, self._dx)
                if solver.solve_info is not None:    # the solver had to factor itself
                    info = solver.solve_info
                slope = self._dot(self._g, self._dx)
                if slope > 0.0 or gnorm == 0.0:
                    break
                mu = solver.next_shift(max(info.max_shift, mu))
                if not math.isfinite(mu):
                    raise LinearSolveError(-1, "no descent direction within the diagonal "
                                               "shift limit (shift_max)")
            shifted += info.shifted_blocks
            max_shift = max(max_shift, info.max_shift)
            it += 1
            last = not tol_mode and it == max_it
            cap = 1.0
            if self._limiters:
                np.negative(self._dx, out=self._dir)
                cap = self._move_limit(q, self._dir)
            if line_search:
                np.copyto(self._qk, q)
                alpha = cap
                # a trial predicted to converge is evaluated without Hessians (tested first)
                predicted = (tol_mode and beta_h == 0.0 and cap == 1.0
                             and _predicts_convergence(residuals, st.tolerance * g0, st.atol))
                trial_hessian = beta_h == 0.0 and not last and not predicted
                slack = 64.0 * _EPS * (abs(merit0) + self._load_scale)
                tries = 0
                while True:
                    _axpy_to(q, self._qk, -alpha, self._dx)
                    self._evaluate(q, hessian=trial_hessian,
                                   base_hessian=self._accept is None)
                    evals += 1
                    merit = self._merit(q, a, cn, beta_h, f, fixed)
                    if merit <= merit0 - st.armijo * alpha * slope + slack:
                        break
                    backtracks += 1
                    tries += 1
                    if tries >= st.max_backtracks:
                        failed = True
                        break
                    alpha *= st.backtrack
                if failed:
                    np.copyto(q, self._qk)
                    # a direction along a nearly singular mode (a mechanism, e.g. a free hinge
                    # in a static solve, whose pivot passed the positivity test) can be too
                    # long for the backtracking: retry from q with a growing diagonal shift
                    # (Levenberg-Marquardt), unless the shift is exhausted
                    nxt = solver.next_shift(max(retry_shift, info.max_shift))
                    if tol_mode and it < max_it and math.isfinite(nxt):
                        retry_shift = nxt
                        failed = False
                        evaluated = prepared = False
                        continue
                    converged = False if tol_mode else None
                    break
                retry_shift = 0.0
                min_step = min(min_step, alpha)
                evaluated = trial_hessian
                checked = predicted
                self.predicted_iterates += checked
                if self._accept is not None:
                    self._rebase(q, evaluated, gradient=checked)
            else:
                _axpy_to(q, q, -cap, self._dx)
                if q_fixed is not None and it == 1:
                    _set_fixed(q, q_fixed, fixed)
                evaluated = False
                if self._accept is not None and not last:
                    self.system.prepare(q)
                    self._rebase(q, False)
                    prepared = True
            if last:
                break
        return StepInfo(iterations=it, converged=converged, residual=residuals[-1],
                        residual_initial=residuals[0], residuals=tuple(residuals),
                        shifted_blocks=shifted, max_shift=max_shift,
                        line_search_steps=backtracks, min_step=min_step,
                        line_search_failed=failed, evaluations=evals,
                        factorizations=solver.factorizations - fact0,
                        linear_iterations=solver.linear_iterations - lin0,
                        limited_moves=self._limited - limited0)

    # ------------------------------------------------------------------ public
    def step(self, q_in: np.ndarray, v_in: np.ndarray, q_out: np.ndarray, v_out: np.ndarray,
             h: float, *, f_ext: np.ndarray | None = None, fixed: np.ndarray | None = None,
             q_fixed: np.ndarray | None = None, history: tuple | None = None) -> StepInfo:
        """One backward Euler (with ``history``, BDF2) step of ``h`` [s] from ``q_in``,
        ``v_in`` [n_dofs] into ``q_out``, ``v_out`` (which may be ``q_in``, ``v_in``).

        ``f_ext`` [n_dofs]: external generalized force (N, N m), constant over the step.
        ``fixed`` bool [n_dofs]: Dirichlet DOFs; ``q_fixed`` [n_dofs]: their values at the end
        of the step (fixed entries read; None: held at ``q_in``).
        ``history``: ``(q_prev, v_prev, h_prev)``, the start and step [s] of the step before
        (the arrays as ``q_in``): a BDF2 step (module docstring); None: backward Euler.
        """
        n = self.n_dofs
        if not (isinstance(h, (int, float, np.floating)) and math.isfinite(h) and h > 0):
            raise ValueError(f"time step h must be a positive finite number, got {show(h)}")
        h = float(h)
        q_in = self._check_vector("q_in", q_in)
        v_in = self._check_vector("v_in", v_in)
        q_out = self._check_vector("q_out", q_out)
        v_out = self._check_vector("v_out", v_out)
        f = self._zeros if f_ext is None else self._check_vector("f_ext", f_ext)
        fixed = self._no_fixed if fixed is None else check_fixed(fixed, n)
        j = _first_massless_free(self.mass, fixed)
        if j >= 0:
            b = self.assembly.block_of(j)
            raise ImplicitStepError(b, f"DOF {j} (block {b}) is free but has mass "
                                       f"{show(self.mass[j])}; fix it or give it a mass")
        he = self._velocity_base(q_in, v_in, h, history)
        self.assembly.refresh()
        np.copyto(self._qn, q_in)
        _axpy_to(self._qhat, self._qb, he, self._vt)
        st = self.settings
        first = self._limited
        increment = None
        if q_fixed is not None:
            q_fixed = self._check_vector("q_fixed", q_fixed)
        # linearised backward Euler: one linearization at q_n, the held DOFs' increments enter
        # the first step through the coupling of the Newton matrix
        linearised = q_fixed is not None and st.tolerance is None and not st.use_line_search
        if st.initial_guess == "inertial":
            np.copyto(q_out, self._qhat)
            targets = self._qn if q_fixed is None or linearised else q_fixed
            _set_fixed(q_out, targets, fixed)
            if self._limiters:
                np.subtract(q_out, self._qn, out=self._dir)
                alpha = self._move_limit(self._qn, self._dir)
                if alpha < 1.0:
                    _axpy_to(q_out, self._qn, alpha, self._dir)
                    _set_fixed(q_out, targets, fixed)
        else:
            np.copyto(q_out, self._qn)
            if q_fixed is not None and not linearised:
                _set_fixed(q_out, q_fixed, fixed)
        if linearised:
            _fixed_increment(self._dh, q_fixed, self._qn, fixed)
            increment = q_fixed
        self.system.begin_step(self._qn)
        load = (_force_scale(f, self.mass, self._vt, he, fixed)
                if st.tolerance is not None and st.scale == "load" else 0.0)
        info = self._newton(q_out, 1.0 / (he * he), st.mass_damping / he,
                            st.stiffness_damping / he, f, fixed, st, load, increment)
        if self._limited - first > info.limited_moves:        # the first iterate was cut
            info = replace(info, limited_moves=self._limited - first)
        np.subtract(q_out, self._qb, out=v_out)
        v_out *= 1.0 / he
        return info

    def _velocity_base(self, q_in, v_in, h: float, history) -> float:
        """Set ``_qb`` and ``_vt``, the positions the step's velocity is measured from and the
        velocity its inertia keeps, from the step's start and ``history`` (module docstring,
        "BDF2"); returns the step ``ht`` [s] of the backward Euler form."""
        if history is None:
            np.copyto(self._qb, q_in)
            np.copyto(self._vt, v_in)
            return h
        try:
            q_prev, v_prev, h_prev = history
        except (TypeError, ValueError):
            raise ValueError("history must be (q_prev, v_prev, h_prev) or None") from None
        q_prev = self._check_vector("history's q_prev", q_prev)
        v_prev = self._check_vector("history's v_prev", v_prev)
        if not (isinstance(h_prev, (int, float, np.floating)) and math.isfinite(h_prev)
                and h_prev > 0):
            raise ValueError(f"history's h_prev must be a positive finite number, got "
                             f"{show(h_prev)}")
        a1, a2, ht = bdf2_coefficients(h, float(h_prev))
        np.multiply(q_in, a1, out=self._qb)
        _axpy_to(self._qb, self._qb, -a2, q_prev)
        np.multiply(v_in, a1, out=self._vt)
        _axpy_to(self._vt, self._vt, -a2, v_prev)
        return ht

    def equilibrium(self, q: np.ndarray, *, fixed: np.ndarray | None = None,
                    f_ext: np.ndarray | None = None, tolerance: float = 1e-10,
                    atol: float = 0.0, max_iterations: int = 100) -> StepInfo:
        """Static equilibrium: minimise ``E(q) - f_ext . q`` over the free DOFs in place
        (Newton with line search, no inertia, no damping); ``q`` holds the start and the
        fixed values.  A singular or indefinite stiffness is regularised by the shift."""
        q = self._check_vector("q", q)
        f = self._zeros if f_ext is None else self._check_vector("f_ext", f_ext)
        fixed = self._no_fixed if fixed is None else check_fixed(fixed, self.n_dofs)
        self.assembly.refresh()
        st = NewtonSettings(tolerance=tolerance, atol=atol, max_iterations=max_iterations,
                            line_search=True, armijo=self.settings.armijo,
                            backtrack=self.settings.backtrack,
                            max_backtracks=self.settings.max_backtracks)
        np.copyto(self._qn, q)
        np.copyto(self._qb, q)
        np.copyto(self._qhat, q)
        self.system.begin_step(self._qn)
        return self._newton(q, 0.0, 0.0, 0.0, f, fixed, st)


def static_equilibrium(system: ImplicitSystem, q: np.ndarray, fixed: np.ndarray | None = None,
                       f_ext: np.ndarray | None = None, *, tolerance: float = 1e-10,
                       atol: float = 0.0, max_iterations: int = 100,
                       linear_solver: str = "auto", solver_options: dict | None = None
                       ) -> StepInfo:
    """Solve for the static equilibrium of ``system`` in place in ``q`` [n_dofs] (see
    :meth:`ImplicitEuler.equilibrium`); for verification (cantilevers, buckling)."""
    integ = ImplicitEuler(system, linear_solver=linear_solver, solver_options=solver_options)
    return integ.equilibrium(q, fixed=fixed, f_ext=f_ext, tolerance=tolerance, atol=atol,
                             max_iterations=max_iterations)
