"""Sag-free rest-shape optimization of discrete elastic rods (Takahashi and Batty), per strand,
all strands at once.

Given a scene whose strands are in the shape they should keep under gravity (and loads), find
rest lengths, rest curvatures and rest twists ``p`` for which that shape is a static equilibrium
of the discrete-elastic-rods model: ``f(p) = f_ext - grad_q E(q0; p) = 0`` on the free DOFs
(``docs/sagfree.md``; ``../shared/notes/sag_free_formulation.md``).  Forces and Jacobians come
from :class:`strandlab.der.statics.StaticForces`; each strand's Gauss-Newton system is banded
and solved by :mod:`.kernels`, strands in parallel.

Penalty mode (the paper): minimise ``O(p) + R(p) + P(p)`` by Gauss-Newton with a backtracking
line search, ``O = 1/2 f^T W f`` (``W = M^-1`` or ``I``), ``R = w_r/2 sum d_k (p - p0)_k^2``,
``P = w_p/2 sum d_k viol_k^2``.

Exact mode: minimise ``R`` subject to ``f = 0`` and the box, by the method of multipliers: each
Gauss-Newton step minimises ``1/2 |f + y|_W^2 + R`` with the box held by an active set and a
projected line search, then the shift is updated, ``y <- y + f``.  At a solution ``f = 0``
exactly (to round-off) and the regularizer only selects among the equilibria.  Where no
parameters inside the box balance the strand, ``O`` stops falling and the strand is "held by
the box"; with ``stiffen`` its stiffnesses are then scaled up until it can be held.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np
from numba import get_num_threads

from ..der import DERModel, compile_scene
from ..der.statics import RestJacobianBlocks, RestShape, StaticForces
from ..sim.scene import Scene
from . import kernels as _k
from .settings import SagFreeSettings

__all__ = ["StrandReport", "SagFreeResult", "optimize_rest_shape", "apply_rest_shape",
           "STATUSES"]

#: How a strand's optimization ended.
STATUSES = ("converged", "stiffened", "held_by_box", "line_search_failed", "max_iterations",
            "stalled", "factorization_failed")
_RUNNING = -1
_CONV, _STIFF, _HELD, _LSF, _MAXIT, _STALL, _FACT = range(7)


@dataclass(frozen=True)
class StrandReport:
    """How the optimization of one strand ended.

    status : one of :data:`STATUSES`: ``converged`` (``O`` under the tolerance),
        ``stiffened`` (converged after its stiffnesses were multiplied by
        ``stiffness_scale``), ``held_by_box`` (stopped with bounds active and ``O`` above the
        tolerance: the box cannot hold the strand), ``line_search_failed``, ``max_iterations``,
        ``stalled`` (no more progress, no bound active), ``factorization_failed``.
    iterations : Gauss-Newton iterations (all stiffness attempts together).
    objective, objective0 : the chosen objective ``1/2 f^T W f`` at the end and at the input
        rest shape [W/s = N^2/kg for "kinetic", N^2 for "force"].
    kinetic, kinetic0 : ``1/2 f^T M^-1 f`` at the end and at the start [N^2/kg] (whatever the
        objective).
    residual_force : largest norm of the net force on a free vertex [N].
    residual_torque : largest net torque on a free edge angle [N m].
    weight : the strand's weight ``|g| sum m`` plus its loads' magnitudes [N] (a scale for
        ``residual_force``).
    active_bounds : parameters outside (penalty mode) or on (exact mode) their bounds.
    stiffness_scale : factor applied to the strand's stiffnesses (1 unless stiffened).
    negative_modes : negative eigenvalues of the strand's stiffness at the input shape with the
        optimized rest shape (:meth:`~strandlab.der.statics.StaticForces.negative_modes`): 0
        for a stable equilibrium, more for a saddle that a simulation leaves; -1 when not
        checked (``check_stability=False``).
    """

    strand: int
    name: str
    status: str
    iterations: int
    objective: float
    objective0: float
    kinetic: float
    kinetic0: float
    residual_force: float
    residual_torque: float
    weight: float
    active_bounds: int
    stiffness_scale: float
    negative_modes: int = -1

    @property
    def stable(self) -> bool | None:
        """Whether the stiffness is positive definite at the optimum (None: not checked)."""
        return None if self.negative_modes < 0 else self.negative_modes == 0

    @property
    def relative_residual(self) -> float:
        """``sqrt(kinetic / kinetic0)``: the fraction of the initial net force (in the kinetic
        norm) left (0 when there was none)."""
        return math.sqrt(self.kinetic / self.kinetic0) if self.kinetic0 > 0 else 0.0


@dataclass
class SagFreeResult:
    """The optimized rest shape of a model and the report of every strand.

    model : the DERModel optimized (at its input configuration).
    settings : the settings used.
    rest : the rest shape of every strand (strands not optimized keep the model's).
    stiffness_scale : factor of each strand's stiffnesses, [S] (1 unless stiffened).
    reports : one :class:`StrandReport` per optimized strand.
    strands : the optimized strands, int [K].
    seconds : wall-clock time of the optimization [s] (compilation of a new scene excluded).
    """

    model: DERModel
    settings: SagFreeSettings
    rest: RestShape
    stiffness_scale: np.ndarray
    reports: tuple
    strands: np.ndarray
    seconds: float

    def report(self, strand: int) -> StrandReport:
        """The report of strand ``strand`` (KeyError if it was not optimized)."""
        for r in self.reports:
            if r.strand == strand:
                return r
        raise KeyError(f"strand {strand} was not optimized")

    def strand_options(self, strand: int) -> dict:
        """Strand ``strand``'s DER options: the explicit rest shape (``rest_length``,
        ``rest_curvature``, ``rest_twist``) and, when stiffened, the scaled stiffnesses
        (``stretch_stiffness``, ``bend_stiffness``, ``twist_stiffness``)."""
        m = self.model
        out = self.rest.strand_options(m, strand)
        sc = float(self.stiffness_scale[strand])
        if sc != 1.0:
            es = slice(int(m.strand_edge_start[strand]), int(m.strand_edge_start[strand + 1]))
            bs = slice(int(m.strand_bend_start[strand]), int(m.strand_bend_start[strand + 1]))
            out["stretch_stiffness"] = (sc * m.stretch_stiffness[es]).tolist()
            out["bend_stiffness"] = (sc * m.bend_stiffness[bs]).tolist()
            out["twist_stiffness"] = (sc * m.twist_stiffness[bs]).tolist()
        return out

    @property
    def iterations(self) -> np.ndarray:
        """Gauss-Newton iterations of each optimized strand, [K]."""
        return np.array([r.iterations for r in self.reports], dtype=np.int64)

    def summary(self) -> dict:
        """Counts per status, mean and largest iterations, the largest residual force [N] and
        the largest ``relative_residual``, the number of strands whose optimum is unstable
        (a negative stiffness mode), and the time [s]."""
        it = self.iterations
        return {"strands": len(self.reports),
                "status": dict(Counter(r.status for r in self.reports)),
                "mean_iterations": float(it.mean()) if len(it) else 0.0,
                "max_iterations": int(it.max()) if len(it) else 0,
                "max_residual_force": max((r.residual_force for r in self.reports),
                                          default=0.0),
                "max_relative_residual": max((r.relative_residual for r in self.reports),
                                             default=0.0),
                "unstable": sum(1 for r in self.reports if r.negative_modes > 0),
                "seconds": self.seconds}


# --------------------------------------------------------------------------------------------
# Set-up
# --------------------------------------------------------------------------------------------
def _label(model, s):
    sc = model.scene
    return sc.strands[s].name if sc is not None else f"strand {s}"


def _said(model, s):
    """How messages name strand ``s`` (:meth:`~strandlab.sim.scene.StrandSpec.label`)."""
    sc = model.scene
    return sc.strands[s].label(s) if sc is not None else f"strand {s}"


def _check_layout(model: DERModel, strands: np.ndarray) -> None:
    m = model
    for s in strands:
        s = int(s)
        if m.strand_closed[s]:
            raise ValueError(f"{_said(m, s)}: the sag-free optimizer handles open "
                             "strands only (a closed strand has no root to hang from)")
        e0, b0, b1 = (int(m.strand_edge_start[s]), int(m.strand_bend_start[s]),
                      int(m.strand_bend_start[s + 1]))
        k = np.arange(b1 - b0)
        if not (np.array_equal(m.bend_edges[b0:b1, 0], e0 + k)
                and np.array_equal(m.bend_edges[b0:b1, 1], e0 + k + 1)):
            raise ValueError(f"{_said(m, s)}: unexpected stencil layout (the "
                             "optimizer needs stencil k on edges (k, k+1))")


class _Problem:
    """Arrays of one optimization (layout, box, weights, iterates) and the batched steps."""

    def __init__(self, model: DERModel, settings: SagFreeSettings, strands: np.ndarray):
        st = settings
        m = model
        self.m, self.st = m, st
        self.diag = st.regularization_scaling == "diagonal"
        self.strands = strands
        S = m.n_strands
        self.P = 6 if st.rest_twist else 5
        nslot = np.diff(m.strand_bend_start)
        opt = np.zeros(S, dtype=bool)
        opt[strands] = True
        counts = np.where(opt, nslot * self.P, 0)
        self.pstart = np.zeros(S + 1, dtype=np.int64)
        self.pstart[1:] = np.cumsum(counts)
        npar = int(self.pstart[-1])
        self.sf = StaticForces(m, time=st.time)
        self.rest = RestShape.of_model(m)
        self.trial = self.rest.copy()
        # parameter gather indices (slot-major, P per slot)
        s_of = np.repeat(strands, nslot[strands])
        k_of = np.concatenate([np.arange(nslot[s]) for s in strands]) if len(strands) else \
            np.zeros(0, dtype=np.int64)
        base = self.pstart[s_of] + k_of * self.P
        b_of = m.strand_bend_start[s_of] + k_of
        e_of = m.strand_edge_start[s_of] + k_of + 1
        self.p0 = np.zeros(npar)
        lo = np.zeros(npar)
        hi = np.zeros(npar)
        dk, dt = st.curvature_bound, st.twist_bound
        for c in range(4):
            self.p0[base + c] = self.rest.rest_curvature[b_of, c]
            lo[base + c] = self.p0[base + c] - dk
            hi[base + c] = self.p0[base + c] + dk
        if self.P == 6:
            self.p0[base + 4] = self.rest.rest_twist[b_of]
            lo[base + 4] = self.p0[base + 4] - dt
            hi[base + 4] = self.p0[base + 4] + dt
        lb = self.rest.rest_length[e_of]
        self.p0[base + self.P - 1] = lb
        lo[base + self.P - 1] = st.length_bounds[0] * lb
        hi[base + self.P - 1] = st.length_bounds[1] * lb
        self.lo, self.hi = lo, hi
        self.p = self.p0.copy()
        self.p_trial = self.p0.copy()
        self.p_saved = self.p0.copy()
        self.dp = np.zeros(npar)
        self.g = np.zeros(npar)
        self.dscale = np.ones(npar)
        # weights: the objective's and the kinetic one, zero on fixed DOFs
        free = ~m.fixed
        self.fixed = np.ascontiguousarray(m.fixed)
        self.kin_weight = np.where(free, 1.0 / np.where(free, m.mass, 1.0), 0.0)
        self.weight = self.kin_weight if st.objective == "kinetic" else free.astype(np.float64)
        nd = m.n_dofs
        self.f = np.zeros(nd)
        self.f_trial = np.zeros(nd)
        self.y = np.zeros(nd)
        self.scale = np.ones(S)
        self.blocks = RestJacobianBlocks.empty(m)
        # per-strand scalars
        z = np.zeros(S)
        self.obj, self.kin, self.reg, self.pen, self.merit = z.copy(), z.copy(), z.copy(), \
            z.copy(), z.copy()
        self.t_obj, self.t_kin, self.t_reg, self.t_pen, self.t_merit = z.copy(), z.copy(), \
            z.copy(), z.copy(), z.copy()
        self.gdp, self.pred, self.alpha = z.copy(), z.copy(), z.copy()
        ii = np.zeros(S, dtype=np.int64)
        self.nactive, self.code = ii.copy(), ii.copy()
        self.init_scale = np.zeros(S, dtype=np.bool_)
        self.damping = np.zeros(S)
        self.polish = np.zeros(S, dtype=np.bool_)
        # scratch per chunk
        nchunk = max(1, min(get_num_threads(), len(strands)))
        rows = int(np.max(np.diff(m.strand_dof_start)[strands])) if len(strands) else 1
        cols = int(np.max(counts)) if len(strands) else 1
        self.Jc = np.zeros((nchunk, cols, 16))
        self.band = np.zeros((nchunk, rows, 16))
        self.u = np.zeros((nchunk, rows))
        self.low = np.zeros((nchunk, rows))
        self.rinv = np.zeros((nchunk, cols))
        self.cen = np.zeros((nchunk, cols))
        self.fixdp = np.zeros((nchunk, cols))

    # -- batched pieces ---------------------------------------------------------------------
    def evaluate(self, act):
        """Forces at the current parameters and the merit of the listed strands."""
        m = self.m
        _k.scatter(act, m.strand_edge_start, m.strand_bend_start, self.pstart, self.P, self.p,
                   self.rest.rest_length, self.rest.rest_curvature, self.rest.rest_twist)
        self.sf.force(self.rest, strands=act, scale=self.scale, out=self.f)
        self.update_merit(act)

    def update_merit(self, act):
        m = self.m
        _k.merit(act, m.strand_dof_start, self.pstart, self.fixed, self.weight,
                 self.kin_weight, self.f, self.y, self.p, self.p0, self.lo, self.hi,
                 self.dscale, self.st.regularization, self.diag, self.st.penalty,
                 self.st.mode == "penalty", self.polish, self.obj, self.kin, self.reg, self.pen,
                 self.merit)

    def plain_objective(self, act):
        """``1/2 f^T W f`` (without the shift) of the listed strands."""
        if self.st.mode == "penalty":
            return self.obj[act]
        w = self.weight * self.f * self.f
        cs = np.concatenate([[0.0], np.cumsum(w)])
        ds = self.m.strand_dof_start
        return 0.5 * (cs[ds[act + 1]] - cs[ds[act]])

    def n_at_bounds(self, act):
        """Parameters outside (penalty) or on (exact, or penalty with ``project``) their
        bounds, per listed strand."""
        if self.st.mode == "penalty" and not self.st.project:
            bad = (self.p > self.hi) | (self.p < self.lo)
        else:
            bad = (self.p >= self.hi) | (self.p <= self.lo)
        cs = np.concatenate([[0], np.cumsum(bad)])
        return cs[self.pstart[act + 1]] - cs[self.pstart[act]]

    def direction(self, act):
        m, st = self.m, self.st
        self.sf.jacobian_blocks(self.rest, strands=act, scale=self.scale, out=self.blocks)
        b = self.blocks
        _k.gn_direction(act, m.strand_dof_start, m.strand_edge_start, m.strand_bend_start,
                        self.pstart, self.P, self.fixed, self.weight, self.f, self.y,
                        m.stretch_dofs, m.bend_dofs, b.stretch, b.weight, b.curvature,
                        b.twist, b.voronoi, self.p, self.p0, self.lo, self.hi, self.dscale,
                        self.init_scale, self.diag, st.regularization, st.penalty,
                        self.damping, self.polish, st.mode == "exact",
                        st.active_set_iterations, self.Jc, self.band, self.u, self.low,
                        self.rinv, self.cen, self.fixdp, self.g, self.dp, self.gdp,
                        self.nactive, self.code)
        self.init_scale[act] = False

    def line_search(self, act):
        """Backtracking from ``alpha = 1``; returns the accepted and the failed strands."""
        m, st = self.m, self.st
        clip = st.mode == "exact" or st.project
        self.alpha[act] = 1.0
        searching = act
        accepted = []
        tiny = 64.0 * np.finfo(float).eps
        for _ in range(st.max_backtracks + 1):
            _k.trial_point(searching, m.strand_edge_start, m.strand_bend_start, self.pstart,
                           self.P, self.p, self.dp, self.alpha, self.lo, self.hi, clip, self.g,
                           self.p_trial, self.pred, self.trial.rest_length,
                           self.trial.rest_curvature, self.trial.rest_twist)
            self.sf.force(self.trial, strands=searching, scale=self.scale, out=self.f_trial)
            _k.merit(searching, m.strand_dof_start, self.pstart, self.fixed, self.weight,
                     self.kin_weight, self.f_trial, self.y, self.p_trial, self.p0, self.lo,
                     self.hi, self.dscale, st.regularization, self.diag, st.penalty,
                     st.mode == "penalty", self.polish,
                     self.t_obj, self.t_kin, self.t_reg, self.t_pen, self.t_merit)
            m0 = self.merit[searching]
            mt = self.t_merit[searching]
            ok = np.isfinite(mt) & (mt <= m0 + st.armijo * self.pred[searching]
                                    + tiny * np.abs(m0))
            good = searching[ok]
            if len(good):
                _k.accept(good, m.strand_dof_start, self.pstart, self.p_trial, self.f_trial,
                          self.p, self.f)
                for a, b in ((self.obj, self.t_obj), (self.kin, self.t_kin),
                             (self.reg, self.t_reg), (self.pen, self.t_pen),
                             (self.merit, self.t_merit)):
                    a[good] = b[good]
                _k.scatter(good, m.strand_edge_start, m.strand_bend_start, self.pstart, self.P,
                           self.p, self.rest.rest_length, self.rest.rest_curvature,
                           self.rest.rest_twist)
                accepted.append(good)
            searching = searching[~ok]
            if not len(searching):
                break
            self.alpha[searching] *= st.backtrack
        acc = np.concatenate(accepted) if accepted else act[:0]
        return np.sort(acc), searching


# --------------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------------
class _Stiffening:
    """Per-strand search of the exact mode for the smallest stiffness factor that the box can
    hold: growth by ``stiffen_factor`` until a factor succeeds, then geometric bisection."""

    def __init__(self, S, settings):
        self.st = settings
        self.fail = np.ones(S)
        self.ok = np.full(S, np.inf)
        self.left = np.full(S, settings.stiffen_refinements)

    def next_scale(self, s, scale, succeeded):
        """The next factor to try for strand ``s`` after an attempt at ``scale``, or None when
        the search is over."""
        st = self.st
        if succeeded:
            self.ok[s] = scale
        else:
            self.fail[s] = scale
        if not np.isfinite(self.ok[s]):
            nxt = scale * st.stiffen_factor
            return nxt if nxt <= st.max_stiffness_scale * (1 + 1e-12) else None
        if self.left[s] <= 0:
            return None
        self.left[s] -= 1
        return math.sqrt(self.fail[s] * self.ok[s])


def _as_model(scene_or_model) -> DERModel:
    if isinstance(scene_or_model, DERModel):
        return scene_or_model
    if isinstance(scene_or_model, Scene):
        return compile_scene(scene_or_model)
    raise TypeError("optimize_rest_shape needs a Scene or a DERModel, got "
                    f"{type(scene_or_model).__name__}")


def _round_off_floor(pb: _Problem) -> np.ndarray:
    """Per strand, the objective of forces of ``1e-13`` times its largest stretching
    stiffness on every free vertex coordinate: below it the stretching forces are round-off
    (the floor ``DERSolver.equilibrium`` uses too), so the optimizer cannot tell it from 0."""
    m = pb.m
    S = m.n_strands
    ne = np.diff(m.strand_edge_start)
    ks = np.zeros(S)
    has = ne > 0
    ks[has] = np.maximum.reduceat(m.stretch_stiffness, m.strand_edge_start[:-1][has])
    w = np.zeros(m.n_dofs)
    pos = (m.vertex_dof[:, None] + np.arange(3)).ravel()
    w[pos] = pb.weight[pos]
    cs = np.concatenate([[0.0], np.cumsum(w)])
    sw = cs[m.strand_dof_start[1:]] - cs[m.strand_dof_start[:-1]]
    return 0.5 * (1e-13 * ks) ** 2 * sw


class _Driver:
    """Per-strand state of the iteration: status, phase, counters, the stiffness search."""

    def __init__(self, pb: _Problem, sel):
        st = pb.st
        S = pb.m.n_strands
        self.pb, self.st, self.sel = pb, st, sel
        self.exact = st.mode == "exact"
        self.status = np.full(S, _RUNNING)
        self.phase = np.zeros(S, dtype=np.int64)    # exact mode: 0 equilibrium, 1 least squares
        self.iters = np.zeros(S, dtype=np.int64)
        self.attempt = np.zeros(S, dtype=np.int64)
        self.stall = np.zeros(S, dtype=np.int64)
        self.best = np.full(S, np.inf)
        self.retries = np.zeros(S, dtype=np.int64)
        self.stiff = _Stiffening(S, st) if (self.exact and st.stiffen) else None
        self.stabilize = self.stiff is not None and st.stabilize
        self.settled = np.zeros(S, dtype=np.bool_)      # stability no longer checked
        self._converged = []
        pb.init_scale[sel] = True
        pb.evaluate(sel)
        self.obj0 = np.zeros(S)
        self.obj0[sel] = pb.plain_objective(sel)
        self.kin0 = np.zeros(S)
        self.kin0[sel] = pb.kin[sel]
        rtol = st.exact_rtol if self.exact else st.rtol
        floor = _round_off_floor(pb)
        self.tol = np.maximum(np.maximum(st.atol, rtol * self.obj0), floor)
        self.loose = np.maximum(np.maximum(st.atol, st.rtol * self.obj0), floor)
        self.status[sel[self.obj0[sel] <= self.tol[sel]]] = _CONV
        self._restart = []

    def restart(self, s, scale, phase):
        """Start strand ``s`` again from the input rest shape."""
        self.pb.scale[s] = scale
        self.phase[s] = phase
        self.status[s] = _RUNNING
        self.attempt[s] = 0
        self.stall[s] = 0
        self.best[s] = np.inf
        self.retries[s] = 0
        self.pb.damping[s] = 0.0
        self.pb.polish[s] = False
        self._restart.append(s)

    def flush(self):
        if not self._restart:
            return
        pb = self.pb
        r = np.asarray(sorted(set(self._restart)), dtype=np.int64)
        self._restart = []
        _k.reset_strands(r, pb.m.strand_dof_start, pb.pstart, pb.p0, pb.p, pb.y)
        pb.init_scale[r] = True
        pb.evaluate(r)

    def held_exact(self, s):
        """Exact mode: the box cannot hold strand ``s`` at its current stiffness."""
        pb = self.pb
        if self.stiff is not None:
            nxt = self.stiff.next_scale(s, pb.scale[s], False)
            if nxt is not None:
                self.restart(s, nxt, 0)
                return
            if np.isfinite(self.stiff.ok[s]):      # the smallest factor that held
                self.keep_stiffest_success(s)
                return
        # least squares inside the box at the input stiffness
        self.restart(s, 1.0, 1)

    def converged(self, s):
        """Strand ``s`` reached an equilibrium (exact mode); with ``stabilize`` its stability
        is checked with the others of the same iteration in :meth:`settle`."""
        if self.stabilize and not self.settled[s]:
            self._converged.append(s)
            return
        self.accept(s)

    def settle(self):
        """Count the negative modes of the strands that converged in this iteration: a stable
        one is accepted, an unstable one fails its stiffness factor."""
        if not self._converged:
            return
        pb = self.pb
        r = np.asarray(self._converged, dtype=np.int64)
        self._converged = []
        neg = pb.sf.negative_modes(pb.rest, strands=r, scale=pb.scale)
        for s in r:
            s = int(s)
            if neg[s] == 0:
                self.accept(s)
                continue
            nxt = self.stiff.next_scale(s, pb.scale[s], False)
            if nxt is not None:
                self.restart(s, nxt, 0)
            elif np.isfinite(self.stiff.ok[s]):
                self.keep_stiffest_success(s)
            else:       # nothing stabilizes it: its own equilibrium, reported unstable
                self.settled[s] = True
                self.restart(s, 1.0, 0)

    def keep_stiffest_success(self, s):
        """End strand ``s`` at the smallest factor that succeeded (its saved parameters)."""
        pb = self.pb
        a, b = pb.pstart[s], pb.pstart[s + 1]
        pb.scale[s] = self.stiff.ok[s]
        pb.p[a:b] = pb.p_saved[a:b]
        self.status[s] = _STIFF
        pb.evaluate(np.array([s]))

    def accept(self, s):
        pb = self.pb
        if pb.scale[s] == 1.0:
            self.status[s] = _CONV
            return
        a, b = pb.pstart[s], pb.pstart[s + 1]
        pb.p_saved[a:b] = pb.p[a:b]
        self.status[s] = _STIFF
        nxt = self.stiff.next_scale(s, pb.scale[s], True)
        if nxt is not None:
            self.restart(s, nxt, 0)

    def classify(self, act, ls_failed, merit_before, retry):
        """Decide for every strand just stepped whether it goes on or how it ended."""
        pb, st = self.pb, self.st
        obj = pb.plain_objective(act)
        nb = pb.n_at_bounds(act)
        drop = merit_before[act] - pb.merit[act]
        small_drop = drop <= st.stall_rtol * np.abs(merit_before[act])
        if self.exact:
            halved = obj <= 0.5 * self.best[act]
            self.stall[act] = np.where(halved, 0, self.stall[act] + 1)
            self.best[act] = np.minimum(self.best[act], obj)
        lsf = np.isin(act, ls_failed)
        again = np.isin(act, retry)
        for i, s in enumerate(act):
            s = int(s)
            eq = self.exact and self.phase[s] == 0
            stalled = self.stall[s] >= st.patience if eq else small_drop[i]
            if eq and self.stall[s] >= 1 and obj[i] <= self.loose[s]:
                stalled = True      # at the round-off floor, under the penalty tolerance
            if obj[i] <= self.tol[s]:
                self.converged(s) if eq else self.status.__setitem__(s, _CONV)
                continue
            if again[i]:
                stalled = False     # the step is computed again with more damping
            if not (lsf[i] or stalled or self.attempt[s] >= st.max_iterations):
                continue
            if eq and obj[i] <= self.loose[s]:
                self.converged(s)                  # at round-off, under the penalty tolerance
            elif nb[i] > 0 and eq:
                self.held_exact(s)
            elif nb[i] > 0:
                self.status[s] = _HELD
            elif lsf[i]:
                self.status[s] = _LSF
            elif stalled:
                self.status[s] = _STALL
            else:
                self.status[s] = _MAXIT
        self.settle()
        self.flush()

    def start_polish(self, acc):
        """Exact mode: a strand whose objective fell under ``polish_rtol`` of its initial value
        goes on with minimum-norm increments (the regularizer centred on the current
        parameters, no shift): near the solution the steps of the regularized problem are only
        as accurate as the whole change from ``p0`` allows, the increments as the residual."""
        pb = self.pb
        cand = acc[(self.phase[acc] == 0) & ~pb.polish[acc]]
        if not len(cand):
            return
        go = cand[pb.plain_objective(cand) <= self.st.polish_rtol * self.obj0[cand]]
        if not len(go):
            return
        pb.polish[go] = True
        ds = pb.m.strand_dof_start
        for s in go:
            pb.y[ds[s]:ds[s + 1]] = 0.0
        pb.update_merit(go)
        self.stall[go] = 0
        self.best[go] = np.inf

    def damp(self, acc, failed):
        """Levenberg-Marquardt damping: a strand whose line search failed tries again with
        ``mu`` raised (``damping_start``, then times ``damping_growth``) up to
        ``damping_retries`` times in a row; a full step lowers it again.  Returns the strands
        whose line search failed for good."""
        pb, st = self.pb, self.st
        full = acc[pb.alpha[acc] == 1.0]
        mu = pb.damping[full] / st.damping_growth
        pb.damping[full] = np.where(mu < st.damping_start, 0.0, mu)
        self.retries[acc] = 0
        again = failed[self.retries[failed] < st.damping_retries]
        pb.damping[again] = np.maximum(st.damping_start, pb.damping[again] * st.damping_growth)
        self.retries[again] += 1
        return failed[self.retries[failed] >= st.damping_retries] if len(again) else failed

    def run(self):
        pb = self.pb
        m = pb.m
        while True:
            act = self.sel[self.status[self.sel] == _RUNNING]
            if not len(act):
                break
            pb.direction(act)
            bad = pb.code[act] != _k.SOLVED
            self.status[act[bad]] = _FACT
            act = act[~bad]
            merit_before = pb.merit.copy()
            acc, ls_failed = pb.line_search(act)
            self.iters[act] += 1
            self.attempt[act] += 1
            retry = ls_failed
            ls_failed = self.damp(acc, ls_failed)
            retry = np.setdiff1d(retry, ls_failed)
            if self.exact:
                # multiplier update after full steps (near a solution; a damped step far from
                # one would only push the shift around)
                shift = acc[(self.phase[acc] == 0) & (pb.alpha[acc] == 1.0)]
                if len(shift):
                    _k.add_shift(shift, m.strand_dof_start, pb.fixed, pb.f, pb.y)
                    pb.update_merit(shift)
                self.start_polish(acc)
            self.classify(act, ls_failed, merit_before, retry)


def optimize_rest_shape(scene, settings: SagFreeSettings | None = None, *,
                        strands=None) -> SagFreeResult:
    """Optimize the rest shape of the strands of ``scene`` (a Scene or a compiled DERModel) so
    that their input shape is a static equilibrium under gravity and loads.

    strands : the strands to optimize (default all); the others keep their rest shape.

    Returns a :class:`SagFreeResult` (``rest``, per-strand reports, DER options per strand;
    :func:`apply_rest_shape` makes the scene that simulates with it).  ValueError for a closed
    strand or a strand index out of range.
    """
    st = settings or SagFreeSettings()
    if not isinstance(st, SagFreeSettings):
        raise TypeError(f"settings must be SagFreeSettings, got {type(st).__name__}")
    model = _as_model(scene)
    S = model.n_strands
    if strands is None:
        sel = np.arange(S, dtype=np.int64)
    else:
        sel = np.unique(np.asarray(strands, dtype=np.int64).reshape(-1))
        bad = sel[(sel < 0) | (sel >= S)]
        if len(bad):
            raise ValueError(f"strand {int(bad[0])} out of range (0..{S - 1})")
    _check_layout(model, sel)
    t0 = time.perf_counter()
    pb = _Problem(model, st, sel)
    drv = _Driver(pb, sel)
    drv.run()
    pb.update_merit(sel)
    neg = pb.sf.negative_modes(pb.rest, strands=sel, scale=pb.scale) if st.check_stability \
        else np.full(S, -1)
    seconds = time.perf_counter() - t0
    reports = _reports(pb, sel, drv.status, drv.iters, drv.obj0, drv.kin0, neg)
    return SagFreeResult(model=model, settings=st, rest=pb.rest.copy(),
                         stiffness_scale=pb.scale.copy(), reports=tuple(reports),
                         strands=sel, seconds=seconds)


def _reports(pb: _Problem, sel, status, iters, first, kin0, neg):
    m = pb.m
    obj = pb.plain_objective(sel)
    nb = pb.n_at_bounds(sel)
    f = pb.f
    free = ~m.fixed
    ext = np.abs(pb.sf.external_force())
    out = []
    for i, s in enumerate(sel):
        s = int(s)
        vs = slice(int(m.strand_vertex_start[s]), int(m.strand_vertex_start[s + 1]))
        vd = m.vertex_dof[vs]
        fx = f[vd[:, None] + np.arange(3)]
        fx = np.where(free[vd[:, None] + np.arange(3)], fx, 0.0)
        ed = m.edge_dof[int(m.strand_edge_start[s]):int(m.strand_edge_start[s + 1])]
        ft = np.where(free[ed], f[ed], 0.0)
        wx = ext[vd[:, None] + np.arange(3)]
        out.append(StrandReport(
            strand=s, name=_label(m, s), status=STATUSES[int(status[s])],
            iterations=int(iters[s]), objective=float(obj[i]), objective0=float(first[s]),
            kinetic=float(pb.kin[s]), kinetic0=float(kin0[s]),
            residual_force=float(np.max(np.linalg.norm(fx, axis=1))) if len(fx) else 0.0,
            residual_torque=float(np.max(np.abs(ft))) if len(ft) else 0.0,
            weight=float(np.sum(np.linalg.norm(wx, axis=1))), active_bounds=int(nb[i]),
            stiffness_scale=float(pb.scale[s]), negative_modes=int(neg[s])))
    return out


def apply_rest_shape(scene: Scene, result: SagFreeResult) -> Scene:
    """A new Scene: ``scene`` with every optimized strand's DER options set to its optimized
    rest shape (and scaled stiffnesses when stiffened), other options kept.  ``scene`` must be
    the scene the result was computed from (same strands and sizes)."""
    if not isinstance(scene, Scene):
        raise TypeError(f"apply_rest_shape needs a Scene, got {type(scene).__name__}")
    m = result.model
    if scene.n_strands != m.n_strands or scene.n_vertices != m.n_vertices:
        raise ValueError(f"the scene ({scene.n_strands} strands, {scene.n_vertices} vertices) "
                         f"does not match the optimized model ({m.n_strands} strands, "
                         f"{m.n_vertices} vertices)")
    strands = list(scene.strands)
    for s in result.strands:
        s = int(s)
        st = strands[s]
        if st.n_vertices != int(m.strand_vertex_start[s + 1] - m.strand_vertex_start[s]):
            raise ValueError(f"{st.label(s)}: {st.n_vertices} vertices, the optimized "
                             "model has a different number")
        opts = {k: dict(v) for k, v in st.options.items()}
        der = opts.get("der", {})
        der.update(result.strand_options(s))
        opts["der"] = der
        frozen = MappingProxyType({k: MappingProxyType(v) for k, v in opts.items()})
        strands[s] = replace(st, options=frozen)
    return replace(scene, strands=tuple(strands))
