"""Options and report of the Newton solve of a backward Euler step (:mod:`.integrator`):
:class:`NewtonSettings` (fixed count or tolerance, line search, damping),
:class:`StepInfo` (iterations, residuals, line search, linear solver counts) and
:class:`NotConvergedWarning`."""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from ..sim.validate import show

__all__ = ["NewtonSettings", "StepInfo", "NotConvergedWarning", "warn_not_converged"]


class NotConvergedWarning(RuntimeWarning):
    """A step whose Newton solve ended above its tolerance (at ``max_iterations``, or after a
    failed line search) and was kept: a model that keeps such steps warns with it."""


@dataclass(frozen=True)
class NewtonSettings:
    """Options of the Newton solve of a step (module docstring).

    iterations : int >= 1
        Newton steps per time step in fixed-count mode (``tolerance`` None).
    tolerance : float > 0 or None
        Relative tolerance on the free-DOF gradient norm (tolerance mode when given).
    scale : "initial" or "load"
        What ``tolerance`` is relative to: the gradient norm at the first iterate
        (``"initial"``), or the forces that act in the step (``"load"``): the larger of the
        norms of ``f_ext`` and of ``M v_n / h`` on the free DOFs (the weight, and the force that
        would stop the motion within the step), whatever the first iterate (the first iterate's
        gradient norm when both are zero).  A step that starts
        near equilibrium then does not chase a residual far below those forces (with
        ``"initial"`` its first residual is tiny and the tolerance falls to round-off).
    initial_guess : "start" or "inertial"
        The first Newton iterate of a step: ``q_n`` (``"start"``) or the inertial prediction
        ``q_n + h v_n`` (``"inertial"``), fixed DOFs at their targets either way; a tolerance
        step converges to the same solution from both (the inertial one is nearer when the
        motion is smooth), a fixed-count step does not.
    atol : float >= 0
        Absolute tolerance on that norm (N, N m); used with ``tolerance``.
    max_iterations : int >= 1
        Most Newton steps in tolerance mode.
    line_search : bool or None
        Armijo backtracking; None: on in tolerance mode, off in fixed-count mode.
    armijo : float in (0, 1)
        Sufficient-decrease constant.
    backtrack : float in (0, 1)
        Step reduction per rejected trial.
    max_backtracks : int >= 1
        Rejected trials after which Newton stops.
    mass_damping : float >= 0 [1/s]
        ``c``: damping force ``-c M v``.
    stiffness_damping : float >= 0 [s]
        ``beta``: damping force ``-beta K v``.
    """

    iterations: int = 1
    tolerance: float | None = None
    scale: str = "initial"
    initial_guess: str = "start"
    atol: float = 0.0
    max_iterations: int = 50
    line_search: bool | None = None
    armijo: float = 1e-4
    backtrack: float = 0.5
    max_backtracks: int = 30
    mass_damping: float = 0.0
    stiffness_damping: float = 0.0

    def __post_init__(self):
        def number(name, ok, rule, integer=False):
            v = getattr(self, name)
            bad = isinstance(v, bool) or not isinstance(v, (int, float, np.integer,
                                                            np.floating))
            if not bad and integer and not float(v).is_integer():
                bad = True
            if bad or not math.isfinite(float(v)) or not ok(float(v)):
                raise ValueError(f"NewtonSettings.{name} must be {rule}, got {show(v)}")
            object.__setattr__(self, name, int(v) if integer else float(v))

        number("iterations", lambda v: v >= 1, "an integer >= 1", integer=True)
        if self.tolerance is not None:
            number("tolerance", lambda v: v > 0, "a number > 0 or None")
        if self.scale not in ("initial", "load"):
            raise ValueError(f"NewtonSettings.scale must be 'initial' or 'load', got "
                             f"{show(self.scale)}")
        if self.initial_guess not in ("start", "inertial"):
            raise ValueError(f"NewtonSettings.initial_guess must be 'start' or 'inertial', got "
                             f"{show(self.initial_guess)}")
        number("atol", lambda v: v >= 0, "a number >= 0")
        number("max_iterations", lambda v: v >= 1, "an integer >= 1", integer=True)
        if self.line_search not in (None, True, False):
            raise ValueError(f"NewtonSettings.line_search must be None, True or False, got "
                             f"{show(self.line_search)}")
        number("armijo", lambda v: 0 < v < 1, "in (0, 1)")
        number("backtrack", lambda v: 0 < v < 1, "in (0, 1)")
        number("max_backtracks", lambda v: v >= 1, "an integer >= 1", integer=True)
        number("mass_damping", lambda v: v >= 0, "a number >= 0 [1/s]")
        number("stiffness_damping", lambda v: v >= 0, "a number >= 0 [s]")

    @property
    def use_line_search(self) -> bool:
        return (self.tolerance is not None) if self.line_search is None else self.line_search

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class StepInfo:
    """Statistics of one step or static solve.

    iterations: Newton steps taken (linear solves); converged: whether the tolerance was met
    (None in fixed-count mode); residual / residual_initial: free-DOF gradient norm at the last
    evaluated / the first iterate; residuals: the norm at every evaluated iterate;
    shifted_blocks: blocks factored with a diagonal shift, summed over iterations; max_shift:
    largest shift ``mu``; line_search_steps: rejected trials in all; min_step: smallest
    accepted ``alpha``; line_search_failed; evaluations: term evaluations; factorizations:
    numeric factorisations of the linear solver; linear_iterations: iterations of its
    iterative solves; limited_moves: moves (Newton steps and the inertial first iterate) cut
    short by a term's ``max_step``.
    """

    iterations: int
    converged: bool | None
    residual: float
    residual_initial: float
    residuals: tuple
    shifted_blocks: int
    max_shift: float
    line_search_steps: int
    min_step: float
    line_search_failed: bool
    evaluations: int
    factorizations: int = 0
    linear_iterations: int = 0
    limited_moves: int = 0


def warn_not_converged(solver: str, info: StepInfo, step: int, t: float, max_iterations: int,
                       *, stacklevel: int = 2) -> bool:
    """Warn with :class:`NotConvergedWarning` when ``info`` is that of a step in tolerance mode
    kept above its tolerance (``info.converged is False``), naming ``solver``, the ``step``
    number, its end time ``t`` [s], the residual [N] and why Newton stopped; True when it
    warned.  ``stacklevel`` as :func:`warnings.warn`'s, counted from the caller."""
    if info.converged is not False:
        return False
    why = ("a line search failed" if info.line_search_failed
           else f"max_iterations = {max_iterations} reached")
    warnings.warn(f"{solver} solver: step {step} (t = {t:.6g} s) kept unconverged: Newton "
                  f"residual {info.residual:.3g} N (from {info.residual_initial:.3g}) after "
                  f"{info.iterations} iterations, {why}", NotConvergedWarning,
                  stacklevel=stacklevel + 1)
    return True
