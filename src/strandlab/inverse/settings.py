"""Settings of the sag-free rest-shape optimizer (``docs/sagfree.md``).

Every constant of the method is a field with a documented default.  The defaults of the
regularizer, the box and the penalty are the values proposed in
``../shared/notes/sag_free_formulation.md`` (the paper's own were lost); the regularizer and the
penalty are measured relative to the diagonal of the Gauss-Newton matrix (below), which makes
them independent of units and of the strand's scale.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

__all__ = ["SagFreeSettings", "OBJECTIVES", "MODES", "SCALINGS"]

OBJECTIVES = ("kinetic", "force")
MODES = ("penalty", "exact")
SCALINGS = ("diagonal", "absolute")


def _positive(name, v, *, allow_zero=False, integer=False, upper=None):
    ok = not isinstance(v, bool) and isinstance(v, (int, float))
    if integer:
        ok = ok and isinstance(v, int)
    if ok:
        ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if ok and upper is not None:
        ok = v < upper
    if not ok:
        what = "an integer" if integer else "a number"
        rng = ">= 0" if allow_zero else "> 0"
        if upper is not None:
            rng += f" and < {upper:g}"
        raise ValueError(f"sag-free setting {name!r} must be {what} {rng}, got {v!r}")


@dataclass(frozen=True)
class SagFreeSettings:
    """Options of :func:`~strandlab.inverse.optimize_rest_shape` (keyword-only construction).

    Problem
    -------
    objective : ``"kinetic"`` (default): ``O = 1/2 f^T M^-1 f``, the kinetic energy (divided by
        ``h^2``) that one implicit step from rest would produce; ``"force"``: ``1/2 f^T f``
        (Twigg and Kacic-Alesic), for comparison.  ``M`` is the model's diagonal mass at the
        input rest shape, held fixed.
    rest_twist : optimize the rest twists (default True); False keeps them at their input
        values (zero for strands without given material frames).
    mode : ``"penalty"`` (default, the paper's method: the box enforced by a quadratic
        penalty) or ``"exact"`` (net force driven to zero inside the box: an augmented
        Lagrangian on ``f = 0`` whose steps are projected Gauss-Newton steps on an active set).

    Regularizer and box
    -------------------
    regularization : ``w_r`` (default 1e-6); the term is ``w_r / 2 sum_k d_k (p_k - p0_k)^2``.
    regularization_scaling : ``"diagonal"`` (default): ``d_k`` is the diagonal of
        ``J^T W J`` at the input rest shape (``W = M^-1`` or ``I``), so ``w_r`` is relative to
        each parameter's own effect on the objective; ``"absolute"``: ``d_k = 1`` (``w_r`` in
        the objective's SI units per parameter unit squared, the paper's form).
    penalty : ``w_p`` (default 1e4): the box penalty ``w_p / 2 sum_k d_k viol_k^2`` (penalty
        mode), with the same ``d_k``.
    length_bounds : ``(c_lo, c_hi)`` (default (0.5, 1.5)): ``c_lo lbar0 <= lbar <= c_hi lbar0``.
    turning_angle : ``delta_phi`` [rad] (default pi/4): each rest-curvature component stays
        within ``2 tan(delta_phi / 2)`` of its input value (``|kb| = 2 tan(phi / 2)``).
    twist_bound : ``delta_tau`` [rad] (default pi/4): ``|taubar - taubar0| <= delta_tau``.
    project : penalty mode only: clip the parameters into the box after every step (the
        paper's optional projection; default False).

    Gauss-Newton
    ------------
    rtol, atol : converged when ``O <= max(atol, rtol O(p0))`` (defaults 1e-8 and 0 in
        penalty mode; in exact mode ``exact_rtol`` replaces ``rtol``).
    exact_rtol : the relative tolerance of the exact mode (default 1e-20; a strand stopped by
        round-off before it, with ``O`` under ``rtol``, counts as converged).
    polish_rtol : exact mode: under this fraction of ``O(p0)`` the steps become minimum-norm
        increments on ``O`` alone (the regularizer centred on the current parameters, no
        multiplier shift), which are accurate relative to the residual (default 1e-6).
    max_iterations : Gauss-Newton iterations per strand (default 50; the stiffness search of
        the exact mode gives each stiffness its own).
    armijo : sufficient-decrease constant of the backtracking line search (default 1e-4).
    backtrack : step reduction per rejected trial (default 0.5).
    max_backtracks : rejected trials before the line search fails (default 12, a step of
        1/4096 at the least; the Levenberg-Marquardt fallback takes over).
    stall_rtol : stop when an iteration lowers the merit by less than this fraction of it
        (default 1e-6), or, in exact mode, when ``O`` has not halved for ``patience``
        iterations; the strand then ends "held_by_box" if a bound is active, else "stalled".
    patience : see ``stall_rtol`` (default 5).
    active_set_iterations : exact mode: passes of the active-set solve of each step's
        box-constrained model (default 200; each pass is one banded solve and moves one bound
        into or out of the active set).
    damping_retries : Levenberg-Marquardt fallback: a strand whose line search fails computes
        its step again with the damping ``mu/2 sum d_k dp_k^2`` added to the model, ``mu``
        starting at ``damping_start`` (default 1e-6) and multiplied by ``damping_growth``
        (default 10) on each consecutive failure, at most ``damping_retries`` times (default
        10; 0 gives the paper's method: a failed line search ends the strand).  A full step
        divides ``mu`` by ``damping_growth`` (to zero under ``damping_start``).

    Exact mode: stiffness adjustment
    --------------------------------
    stiffen : where the box cannot hold a strand, multiply all its stiffnesses (stretching,
        bending, twisting) by a factor and solve again (default False).
    stiffen_factor : growth of the factor per failed attempt (default 2).
    max_stiffness_scale : largest factor tried (default 64).
    stiffen_refinements : geometric bisections between the last failing and the first
        succeeding factor (default 3).
    stabilize : with ``stiffen``, an equilibrium whose stiffness has negative modes (a saddle
        that a simulation leaves) also counts as failed, so the search goes on to the smallest
        factor that makes the strand's optimum stable (default False).  A strand that no
        factor up to ``max_stiffness_scale`` stabilizes is solved again at its own stiffness
        and reported with its negative modes.

    Stability
    ---------
    check_stability : count the negative modes of each strand's stiffness at the optimum
        (``StrandReport.negative_modes``; default True): an equilibrium is not necessarily a
        stable one.

    Loads
    -----
    time : the time [s] at which point loads given as functions of time are taken (default 0).
    """

    objective: str = "kinetic"
    rest_twist: bool = True
    mode: str = "penalty"
    regularization: float | None = None
    regularization_scaling: str = "diagonal"
    penalty: float = 1e4
    length_bounds: tuple = (0.5, 1.5)
    turning_angle: float = math.pi / 4
    twist_bound: float = math.pi / 4
    project: bool = False
    rtol: float = 1e-8
    atol: float = 0.0
    exact_rtol: float = 1e-20
    polish_rtol: float = 1e-6
    max_iterations: int = 50
    armijo: float = 1e-4
    backtrack: float = 0.5
    max_backtracks: int = 12
    stall_rtol: float = 1e-6
    patience: int = 5
    active_set_iterations: int = 200
    damping_retries: int = 10
    damping_start: float = 1e-6
    damping_growth: float = 10.0
    stiffen: bool = False
    stiffen_factor: float = 2.0
    max_stiffness_scale: float = 64.0
    stiffen_refinements: int = 3
    stabilize: bool = False
    check_stability: bool = True
    time: float = 0.0

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ValueError(f"sag-free setting 'objective' must be one of {list(OBJECTIVES)}, "
                             f"got {self.objective!r}")
        if self.mode not in MODES:
            raise ValueError(f"sag-free setting 'mode' must be one of {list(MODES)}, got "
                             f"{self.mode!r}")
        if self.regularization_scaling not in SCALINGS:
            raise ValueError("sag-free setting 'regularization_scaling' must be one of "
                             f"{list(SCALINGS)}, got {self.regularization_scaling!r}")
        for name in ("rest_twist", "project", "stiffen", "stabilize", "check_stability"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"sag-free setting {name!r} must be true or false, got "
                                 f"{getattr(self, name)!r}")
        if self.regularization is None:
            object.__setattr__(self, "regularization", 1e-16 if self.mode == "penalty" else 1e-14)
        _positive("regularization", self.regularization)
        _positive("penalty", self.penalty)
        _positive("turning_angle", self.turning_angle, upper=math.pi)
        _positive("twist_bound", self.twist_bound)
        _positive("rtol", self.rtol, allow_zero=True)
        _positive("atol", self.atol, allow_zero=True)
        _positive("exact_rtol", self.exact_rtol, allow_zero=True)
        _positive("polish_rtol", self.polish_rtol, allow_zero=True)
        _positive("max_iterations", self.max_iterations, integer=True)
        _positive("armijo", self.armijo, upper=0.5)
        _positive("backtrack", self.backtrack, upper=1.0)
        _positive("max_backtracks", self.max_backtracks, integer=True)
        _positive("stall_rtol", self.stall_rtol, allow_zero=True, upper=1.0)
        _positive("patience", self.patience, integer=True)
        _positive("active_set_iterations", self.active_set_iterations, integer=True)
        _positive("damping_retries", self.damping_retries, allow_zero=True, integer=True)
        _positive("damping_start", self.damping_start)
        if not (isinstance(self.damping_growth, (int, float)) and self.damping_growth > 1
                and math.isfinite(self.damping_growth)):
            raise ValueError("sag-free setting 'damping_growth' must be a number > 1, got "
                             f"{self.damping_growth!r}")
        _positive("time", self.time, allow_zero=True)
        _positive("stiffen_refinements", self.stiffen_refinements, allow_zero=True,
                  integer=True)
        if not (isinstance(self.stiffen_factor, (int, float)) and self.stiffen_factor > 1
                and math.isfinite(self.stiffen_factor)):
            raise ValueError("sag-free setting 'stiffen_factor' must be a number > 1, got "
                             f"{self.stiffen_factor!r}")
        if not (isinstance(self.max_stiffness_scale, (int, float))
                and math.isfinite(self.max_stiffness_scale) and self.max_stiffness_scale >= 1):
            raise ValueError("sag-free setting 'max_stiffness_scale' must be a number >= 1, got "
                             f"{self.max_stiffness_scale!r}")
        if self.stabilize and not (self.stiffen and self.mode == "exact"):
            raise ValueError("sag-free setting 'stabilize' needs mode = 'exact' and "
                             "stiffen = true (it extends the exact mode's stiffness search)")
        lb = self.length_bounds
        try:
            lo, hi = (float(v) for v in lb)
        except (TypeError, ValueError):
            raise ValueError("sag-free setting 'length_bounds' must be two numbers "
                             f"(c_lo, c_hi), got {lb!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= 1 <= hi):
            raise ValueError("sag-free setting 'length_bounds' must satisfy 0 < c_lo <= 1 <= "
                             f"c_hi (the input rest length inside the box), got {lb!r}")
        object.__setattr__(self, "length_bounds", (lo, hi))

    @property
    def curvature_bound(self) -> float:
        """``delta_kappa = 2 tan(delta_phi / 2)`` [1]."""
        return 2.0 * math.tan(0.5 * self.turning_angle)

    def to_dict(self) -> dict:
        return asdict(self)
