"""The mixed rod/shell/solid solver (Chang et al. 2019): backward Euler (or BDF2) with Newton's
method on the shared implicit integrator, over the energies of every labelled simplex and
connection.  See docs/mixed.md.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from ..collision.mesh_contact import MAX_STIFFENING, ContactStiffnessWarning
from ..implicit import (
    BDF2_MAX_RATIO,
    ImplicitEuler,
    ImplicitStepError,
    LinearSolveError,
    NewtonSettings,
    bdf2_coefficients,
    warn_not_converged,
)
from ..implicit.sparse import METHODS
from ..rods.kinematics import check_state, drive_edge_angles
from ..sim.scene import Scene
from ..sim.solver import Output, solver_inputs
from ..sim.validate import SimulationDiverged, check_number, check_state_arrays
from .compile import compile_scene
from .model import MixedState
from .system import MixedSystem, default_contact_thickness, vertex_contact_stiffness
from .terms import build_terms

__all__ = ["MixedSettings", "MixedSolver", "CONTACT_RETRIES", "INTEGRATORS", "MAX_CUTBACKS"]

INTEGRATORS = ("euler", "bdf2")
"""The time integrators of :class:`MixedSettings` (``integrator``)."""

CONTACT_RETRIES = 4
"""Times a step is taken again with a wider surface-pair margin before the solver stops with
:class:`SimulationDiverged` (:meth:`MixedSolver._contact_step`)."""

MARGIN_SHARE = 0.5
"""Each vertex's surface-pair margin covers at least this share of the fastest vertex's
predicted displacement (:meth:`MixedSolver._contact_step`): a slow vertex can be set moving
within a step by a fast neighbour, and a step that leaves a margin is taken again."""

MAX_CUTBACKS = 8
"""The most halvings of an unconverged step (:class:`MixedSettings` ``cutbacks``): a step of
1/256 of its length."""


def predicted_speed(v: np.ndarray, v_prev: np.ndarray, n_vertices: int,
                    out: np.ndarray | None = None) -> float:
    """The largest vertex speed [m/s] extrapolated one step on, ``max |2 v - v_prev|`` over the
    first ``n_vertices`` vertices of the velocities ``v`` and those of the step before,
    ``v_prev`` (flat, 3 per vertex first): ``h`` times it predicts a step's displacement, the
    speed's change included (a fall from rest moves ``g h^2`` in a step).  ``out`` float
    [n_vertices]: each vertex's extrapolated speed [m/s], when given."""
    nv = int(n_vertices)
    if out is None:
        out = np.empty(nv)
    elif out.shape != (nv,):
        raise ValueError(f"out must have shape ({nv},), got {out.shape}")
    return float(_predicted_speed(v, v_prev, nv, out))


@njit(cache=True, _nrt=False)
def _predicted_speed(v, v_prev, nv, speed_out):
    worst = 0.0
    for i in range(nv):
        s2 = 0.0
        for a in range(3):
            w = 2.0 * v[3 * i + a] - v_prev[3 * i + a]
            s2 += w * w
        speed_out[i] = math.sqrt(s2)
        worst = max(worst, speed_out[i])
    return worst


@dataclass(frozen=True)
class MixedSettings:
    """Solver options (docs/mixed.md).

    tolerance : Newton stops when the free-coordinate residual [N] falls below this fraction of
        the larger of its first value and the weight (the gravity load's norm on the free
        coordinates), or below the round-off floor (:meth:`MixedSolver.roundoff_force`); line
        search on.  None: exactly ``newton_iterations`` Newton steps.
    newton_iterations : Newton steps per step when ``tolerance`` is None.
    max_iterations : cap on Newton iterations in tolerance mode.
    cutbacks : a step that ends above its Newton tolerance (tolerance mode) is taken again from
        its start as two steps of half its length, each of them likewise, at most ``cutbacks``
        halvings deep; a step still unconverged at the deepest is kept, counted and warned
        (:class:`~strandlab.implicit.NotConvergedWarning`).  0: every step is kept.
    substeps : implicit steps per ``step`` call.
    hessian : ``"projected"`` (the rods' stretching Hessian clamped PSD; default) or
        ``"exact"``.
    linear_solver : ``"auto"`` (default: ``"direct_cg"`` with CHOLMOD's supernodal factorisation
        through cvxopt, else ``"reuse"``), ``"direct_cg"`` (a new factorisation at every Newton
        iteration; where it fails, not positive definite, conjugate gradients preconditioned by the
        last good one), ``"reuse"`` (a sparse factorisation kept over Newton iterations and steps
        as the preconditioner of conjugate gradients, factored again when they need more than 10
        iterations, 20 from 2000 free coordinates on), ``"direct"`` (a new factorisation at every
        Newton iteration) or ``"jacobi"`` (conjugate gradients with a diagonal preconditioner;
        slow, for comparison).  The factorisation is CHOLMOD when scikit-sparse is installed, else
        MKL's PARDISO with the ``pardiso`` extra, else QDLDL below 2000 free coordinates (the
        ``qdldl`` extra) and CHOLMOD through cvxopt (the ``cvxopt`` extra) from there on, else
        SuperLU (:mod:`strandlab.implicit.sparse`).
    damping : mass-proportional damping rate [1/s]; viscous_damping : stiffness-proportional
        (Rayleigh) damping time [s].
    contact_stiffness : penalty against the colliders and between surfaces, times each
        vertex's stiffest axial spring (:func:`strandlab.mixed.system.vertex_contact_stiffness`;
        a surface pair: its two sides in series, stiffened where a step ends closer than half
        the contact thickness, :mod:`strandlab.collision.mesh_contact`); 0: no contact.
    self_contact : contact of the meshes' surfaces (shell triangles, solid boundary faces) with
        themselves and each other (:mod:`strandlab.collision.mesh_contact`).
    contact_thickness : the distance [m] at which surfaces stop (default: a tenth of the
        surface's median edge; shells do not stop at their half thickness).
    integrator : ``"euler"`` (default: backward Euler, as the paper) or ``"bdf2"`` (the
        second-order backward differentiation formula on the same Newton solve, each step
        reading the last one's start from the state; backward Euler for the first step, after
        ``MixedState.h_prev`` was reset and when the step grows by ``1 + sqrt 2`` or more;
        docs/implicit.md, "BDF2").  BDF2 damps slow oscillations far less at a given step:
        the toy ball's wobble at steps of 1/60 s keeps more of its swing than backward
        Euler's at 1 ms (docs/mixed.md, "Toy ball").
    check_finite, max_strain, max_speed : stop with :class:`SimulationDiverged` on a
        non-finite state, an edge strain above ``max_strain`` or a speed above ``max_speed``
        [m/s] (None: not checked).
    """

    tolerance: float | None = 1e-6
    newton_iterations: int = 1
    max_iterations: int = 30
    cutbacks: int = 2
    substeps: int = 1
    hessian: str = "projected"
    linear_solver: str = "auto"
    damping: float = 0.0
    viscous_damping: float = 0.0
    contact_stiffness: float = 1.0
    self_contact: bool = True
    contact_thickness: float | None = None
    integrator: str = "euler"
    check_finite: bool = True
    max_strain: float | None = 0.5
    max_speed: float | None = 1e3

    OPTIONAL_KINDS: ClassVar[dict] = {"tolerance": float, "max_strain": float,
                                      "max_speed": float, "contact_thickness": float}

    def __post_init__(self):
        for n in ("newton_iterations", "max_iterations", "substeps"):
            check_number(n, getattr(self, n), integer=True)
        if isinstance(self.cutbacks, bool) or not isinstance(self.cutbacks, (int, np.integer)) \
                or not 0 <= self.cutbacks <= MAX_CUTBACKS:
            raise ValueError(f"cutbacks must be an integer from 0 to {MAX_CUTBACKS}, got "
                             f"{self.cutbacks!r}")
        if not isinstance(self.self_contact, (bool, np.bool_)):
            raise ValueError(f"self_contact must be true or false, got {self.self_contact!r}")
        for n in ("tolerance", "max_strain", "max_speed", "contact_thickness"):
            check_number(n, getattr(self, n), positive=True, allow_none=True)
        for n in ("damping", "viscous_damping", "contact_stiffness"):
            check_number(n, getattr(self, n))
        if self.hessian not in ("projected", "exact"):
            raise ValueError(f"unknown hessian {self.hessian!r}; choose 'projected' or 'exact'")
        if self.linear_solver not in METHODS:
            raise ValueError(f"unknown linear_solver {self.linear_solver!r}; choose one of "
                             f"{', '.join(repr(m) for m in METHODS)}")
        if self.integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator {self.integrator!r}; choose one of "
                             f"{', '.join(repr(m) for m in INTEGRATORS)}")
        if not isinstance(self.check_finite, (bool, np.bool_)):
            raise ValueError(f"check_finite must be true or false, got {self.check_finite!r}")

    def newton(self, atol: float = 0.0) -> NewtonSettings:
        return NewtonSettings(iterations=self.newton_iterations, tolerance=self.tolerance,
                              scale="load", initial_guess="inertial", atol=atol,
                              max_iterations=self.max_iterations, mass_damping=self.damping,
                              stiffness_damping=self.viscous_damping)

    def solver_options(self) -> dict:
        """Options of the integrator's sparse solver."""
        return {"method": self.linear_solver}

    def to_dict(self) -> dict:
        return asdict(self)


class MixedSolver:
    """Rods, shells and solids on one simplicial mesh: compiles a
    :class:`~strandlab.sim.scene.Scene`'s simplicial meshes into a :class:`MixedModel` and steps
    it (the solver protocol of :mod:`strandlab.sim.solver`)."""

    name = "mixed"
    Settings = MixedSettings

    def __init__(self, scene: Scene, settings: MixedSettings | None = None):
        self.model, self.settings = m, st = solver_inputs(type(self), scene, settings,
                                                          compile_scene)
        self.scene = scene
        project = st.hessian == "projected"
        self.elastic = build_terms(m, project=project)
        dhat = None
        if st.self_contact and (len(m.triangles) or len(m.tets)):
            dhat = st.contact_thickness or default_contact_thickness(m)
        self.system = MixedSystem(m, project=project, contact_stiffness=st.contact_stiffness,
                                  extra_terms=self.elastic.terms, contact_thickness=dhat)
        self.system.terms += self.elastic.bind(self.system.frames)
        if self.system.mesh_contact is not None:
            self.system.mesh_contact.update(m.q0, max_displacement=0.5 * dhat)
        self.integrator = ImplicitEuler(self.system, st.newton(), linear_solver="sparse",
                                        solver_options=st.solver_options())
        nd, nv = m.n_dofs, m.n_vertices
        self._vertex_k = vertex_contact_stiffness(m, 1.0)
        self._floor_h = None
        self._f = np.zeros(nd)
        self._f[: 3 * nv] = (m.mass[: 3 * nv].reshape(-1, 3) * m.gravity).ravel()
        self._q_target = np.zeros(nd)
        self._fixed = m.fixed.copy()
        frames = scene.frames
        self._rot = np.zeros((len(frames), 3, 3))
        self._origin = np.zeros((len(frames), 3))
        self._de_dof0 = np.ascontiguousarray(3 * m.rod_edges[m.drive_edge, 0])
        self._de_dof1 = np.ascontiguousarray(3 * m.rod_edges[m.drive_edge, 1])
        self._de_want = np.zeros((len(m.drive_edge), 3))
        self._v_start = np.zeros(nd)   # the last contact step's start velocity (predictions)
        self._ahead = np.zeros(nv)     # each vertex's predicted displacement [m] in a step
        self._want = np.zeros(nv)      # and the contact margin it asks for [m]
        self._q_n = np.zeros(nd)       # the step's start: a retry's restart, BDF2's history
        self._v_n = np.zeros(nd)
        self.contact_rebuilds = 0      # surface pair lists built
        self.contact_retries = 0       # steps taken again because a vertex left the margin
        self.contact_stiffened = 0     # pairs that ended a step closer than dhat / 2 (stiffened)
        self._warned_saturated = False
        self.unconverged_steps = 0     # steps kept with Newton above its tolerance (warned)
        self.cutbacks_taken = 0        # steps taken again as two halves (unconverged)
        # a cut-back step's start: its halves start from it only after it is put back, so one
        # state serves every depth
        self._cut_start = m.state(self.elastic.n_angles)
        self.last_info = None

    # ------------------------------------------------------------------ protocol
    def state(self) -> MixedState:
        """A new state at the scene's initial configuration."""
        s = self.model.state(self.elastic.n_angles)
        self.elastic.initial_angles(s.joint_angle)
        return s

    def output(self, state: MixedState) -> Output:
        """No strands; the extra points are the frames' (origin and two axis tips each) and then
        every simplicial mesh's vertices [m] (the scene's ``extra_layout``)."""
        pts = []
        for f in range(len(self.scene.frames)):
            rot, origin = self.scene.frames[f].pose(state.time)
            size = self.scene.frame_size(f)
            pts.append(np.stack([origin, origin + size * rot[:, 0], origin + size * rot[:, 1]]))
        pts.append(self.model.positions(state.q))
        return Output(positions=np.zeros((0, 3)), d1=np.zeros((0, 3)),
                      extra=np.concatenate(pts))

    def rod_d1(self, state: MixedState) -> np.ndarray:
        """The material direction of every rod edge [R, 3] (oriented edges of the model)."""
        return self.system.frames.material_d1(state.q, state.a1)

    def save_state(self, state: MixedState) -> dict:
        """The state's arrays and what the solver carries between steps (the surface pair
        list, the start velocity of the last step, the linear solver's kept factorisation:
        keys ``cache_*``), so that a run resumed from them repeats the uninterrupted run bit
        for bit."""
        out = {"q": state.q.copy(), "v": state.v.copy(), "a1": state.a1.copy(),
               "ref_twist": state.ref_twist.copy(), "joint_angle": state.joint_angle.copy(),
               "time": np.float64(state.time), "step": np.int64(state.step),
               "q_prev": state.q_prev.copy(), "v_prev": state.v_prev.copy(),
               "h_prev": np.float64(state.h_prev)}
        for k, v in self.integrator.linear_solver.cache().items():
            out[f"cache_linear_{k}"] = v
        mc = self.system.mesh_contact
        if mc is not None:
            for k, v in mc.list_state().items():
                out[f"cache_contact_{k}"] = v
            out["cache_v_start"] = self._v_start.copy()
        return out

    def load_state(self, arrays: dict) -> MixedState:
        m = self.model
        cache = {k: v for k, v in arrays.items() if k.startswith("cache_")}
        arrays = {k: v for k, v in arrays.items() if not k.startswith("cache_")}
        shapes = {"q": (m.n_dofs,), "v": (m.n_dofs,), "a1": (m.n_rod_edges, 3),
                  "ref_twist": (len(m.bend_dofs),), "joint_angle": (self.elastic.n_angles,),
                  "time": (), "step": ()}
        history = "h_prev" in arrays      # states saved before BDF2 have none: h_prev = 0
        if history:
            shapes.update(q_prev=(m.n_dofs,), v_prev=(m.n_dofs,), h_prev=())
        out = check_state_arrays(arrays, shapes)
        if history and not float(out["h_prev"]) >= 0.0:
            raise ValueError(f"state entry 'h_prev' is negative ({float(out['h_prev'])})")
        self._restore_cache(cache)
        f64 = {k: np.array(out[k], dtype=np.float64)
               for k in ("q", "v", "a1", "ref_twist", "joint_angle")}
        return MixedState(**f64, time=float(out["time"]), step=int(out["step"]),
                          q_prev=np.array(out["q_prev"] if history else out["q"],
                                          dtype=np.float64),
                          v_prev=np.array(out["v_prev"] if history else out["v"],
                                          dtype=np.float64),
                          h_prev=float(out["h_prev"]) if history else 0.0)

    def _restore_cache(self, cache: dict) -> None:
        """Put back what :meth:`save_state` saved under ``cache_*`` (nothing is kept from
        before: a state saved without it starts with fresh caches)."""
        def part(prefix):
            return {k[len(prefix):]: v for k, v in cache.items() if k.startswith(prefix)}

        self.integrator.linear_solver.restore_cache(part("cache_linear_"))
        mc = self.system.mesh_contact
        if mc is not None:
            contact = part("cache_contact_")
            mc.restore_list(contact if contact else {"q": self.model.q0,
                                                    "margin": 0.5 * mc.dhat})
            v = cache.get("cache_v_start")
            if v is not None and np.shape(v) != self._v_start.shape:
                raise ValueError(f"cache_v_start: shape {np.shape(v)}, expected "
                                 f"{self._v_start.shape}")
            self._v_start[...] = 0.0 if v is None else v
        unknown = sorted(k for k in cache if not k.startswith(
            ("cache_linear_", "cache_contact_", "cache_v_start")))
        if unknown:
            raise ValueError(f"unknown cache arrays in the mixed state: {unknown}")

    def equilibrium(self, state: MixedState, *, tolerance: float = 1e-10,
                    atol: float | None = None, max_iterations: int = 200):
        """Replace ``state`` by the static equilibrium near it under gravity with the held
        vertices at their places at ``state.time``: Newton's method with a line search on the
        total potential (no inertia), until the free force norm falls below ``tolerance``
        times its first value or below ``atol`` [N] (default: the round-off floor, ``1e-13``
        times the stiffest vertex spring times the longest edge times the square root of the
        number of free coordinates).  Velocities are zeroed.  Returns the integrator's
        statistics (``converged``, ``residual``, ``iterations``)."""
        m = self.model
        if atol is None:
            free = int(m.n_dofs - np.count_nonzero(m.fixed))
            atol = 1e-13 * float(np.max(vertex_contact_stiffness(m, 1.0))) * \
                float(np.max(m.check_rest_length)) * math.sqrt(max(free, 1))
        self.system.load_frames(state.q, state.a1, state.ref_twist)
        self.elastic.load_angles(state.joint_angle)
        if len(m.drive_vertex) or len(m.drive_edge):
            self._drive(state.q, state.time)
        np.less(state.time, m.release_time, out=self._fixed)
        self._fixed &= m.fixed
        info = self.integrator.equilibrium(state.q, fixed=self._fixed, f_ext=self._f,
                                           tolerance=tolerance, atol=atol,
                                           max_iterations=max_iterations)
        self._end_step(state)
        state.v[...] = 0.0
        state.h_prev = 0.0                # at rest: no step before this state
        return info

    # ------------------------------------------------------------------ stepping
    def step(self, state_in: MixedState, state_out: MixedState, dt: float) -> None:
        """Advance by ``dt`` [s]; :class:`SimulationDiverged` naming the step and mesh when a
        solve fails or the state leaves its bounds."""
        if isinstance(dt, bool) or not (isinstance(dt, (float, int, np.floating))
                                        and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive finite number, got {dt!r}")
        st = self.settings
        if state_out is not state_in:
            state_out.assign(state_in)
        h = float(dt) / st.substeps
        try:
            for _ in range(st.substeps):
                self._advance(state_out, h, st.cutbacks)
        except (LinearSolveError, ImplicitStepError) as exc:
            raise SimulationDiverged(state_in.step + 1, state_out.time, 0, -1,
                                     what=f"the implicit step failed: {exc}",
                                     where="the simplicial meshes") from exc
        state_out.step = state_in.step + 1
        if st.check_finite:
            self.check_number(state_out)

    def _advance(self, s: MixedState, h: float, cutbacks: int) -> None:
        """One implicit step of ``h`` [s]; when it ends above its Newton tolerance and
        ``cutbacks`` > 0, taken again from its start as two steps of ``h / 2`` (each with one
        cutback fewer); else kept, and reported when unconverged."""
        if cutbacks == 0 or self.settings.tolerance is None:
            self._substep(s, h)
            # the warning names the caller of step(): above it, one _advance per halving
            self._report_convergence(s, s.time, 4 + self.settings.cutbacks - cutbacks)
            return
        self._cut_start.assign(s)
        self._substep(s, h)
        if self.last_info.converged is not False:
            return
        s.assign(self._cut_start)
        self.cutbacks_taken += 1
        self._advance(s, 0.5 * h, cutbacks - 1)
        self._advance(s, 0.5 * h, cutbacks - 1)

    def _substep(self, s: MixedState, h: float) -> None:
        m = self.model
        t_next = s.time + h
        self.system.load_frames(s.q, s.a1, s.ref_twist)
        self.elastic.load_angles(s.joint_angle)
        q_fixed = None
        if len(m.drive_vertex) or len(m.drive_edge):
            q_fixed = self._q_target
            q_fixed[:] = s.q
            self._drive(q_fixed, t_next)
        np.less(t_next - 0.5 * h, m.release_time, out=self._fixed)    # held until released
        self._fixed &= m.fixed
        history, ht = None, h
        if (self.settings.integrator == "bdf2" and s.h_prev > 0.0
                and h < BDF2_MAX_RATIO * s.h_prev):
            history = (s.q_prev, s.v_prev, s.h_prev)
            ht = bdf2_coefficients(h, s.h_prev)[2]
        if self.settings.tolerance is not None:
            self.integrator.settings = self.settings.newton(self.roundoff_force(s.q, ht))
        np.copyto(self._q_n, s.q)
        np.copyto(self._v_n, s.v)
        mc = self.system.mesh_contact
        if mc is None:
            self.last_info = self.integrator.step(s.q, s.v, s.q, s.v, h, f_ext=self._f,
                                                  fixed=self._fixed, q_fixed=q_fixed,
                                                  history=history)
        else:
            self._contact_step(s, h, q_fixed, history)
        self._end_step(s)
        np.copyto(s.q_prev, self._q_n)
        np.copyto(s.v_prev, self._v_n)
        s.h_prev = h
        s.time = t_next

    def _report_convergence(self, s: MixedState, t: float, stacklevel: int) -> None:
        """Count and warn (:class:`~strandlab.implicit.NotConvergedWarning`) when the step
        just taken ended with its Newton residual above the tolerance (tolerance mode)."""
        self.unconverged_steps += warn_not_converged(
            "mixed", self.last_info, s.step + 1, t, self.settings.max_iterations,
            stacklevel=stacklevel)

    def _contact_step(self, s: MixedState, h: float, q_fixed, history) -> None:
        """The implicit step with the surface pairs kept as a Verlet list (docs/mixed.md,
        "Contact"): rebuilt at the step's start, each vertex's margin ``dhat / 2 + 2
        max(d_v, MARGIN_SHARE d_max)`` (``d_v`` its predicted displacement,
        :func:`predicted_speed` times ``h``, ``d_max`` the largest), when a vertex's drift
        since the last rebuild plus ``d_v`` would leave its margin, or when the largest margin
        is more than twice the largest wanted now (a list kept from faster motion holds
        needless pairs); after the solve, a vertex that left its margin may have met a
        surface the list lacks, so the step is taken again from its start with the pairs
        rebuilt there, every margin ``dhat / 2`` plus twice the largest drift."""
        mc = self.system.mesh_contact
        ahead, want = self._ahead, self._want
        fastest = h * predicted_speed(s.v, self._v_start, self.model.n_vertices, out=ahead)
        ahead *= h
        np.maximum(ahead, MARGIN_SHARE * fastest, out=want)
        want *= 2.0
        want += 0.5 * mc.dhat
        if mc.excess(s.q, ahead) > 0.0 or mc.margin > 2.0 * (0.5 * mc.dhat + 2.0 * fastest):
            mc.update(s.q, max_displacement=want)
            self.contact_rebuilds += 1
        np.copyto(self._v_start, s.v)
        for attempt in range(CONTACT_RETRIES + 1):
            self.last_info = self.integrator.step(s.q, s.v, s.q, s.v, h, f_ext=self._f,
                                                  fixed=self._fixed, q_fixed=q_fixed,
                                                  history=history)
            over = mc.excess(s.q)
            if over <= 0.0:
                self.contact_stiffened += mc.stiffen(s.q)
                if mc.saturated >= 0 and not self._warned_saturated:
                    self._warn_saturated(s, h, mc)
                return
            moved = mc.moved(s.q)
            if attempt == CONTACT_RETRIES or not math.isfinite(over):
                break
            np.copyto(s.q, self._q_n)                    # again, with a wider margin
            np.copyto(s.v, self._v_n)
            self.system.load_frames(s.q, s.a1, s.ref_twist)
            self.elastic.load_angles(s.joint_angle)
            mc.update(s.q, max_displacement=0.5 * mc.dhat + 2.0 * moved)
            self.contact_rebuilds += 1
            self.contact_retries += 1
        raise SimulationDiverged(s.step + 1, s.time + h, 0, -1,
                                 what=f"a vertex moved {moved:.3g} m in one step, {over:.3g} m "
                                      f"beyond its margin in the contact list after "
                                      f"{CONTACT_RETRIES} wider tries",
                                 where="the simplicial meshes")

    def roundoff_force(self, q: np.ndarray, h: float) -> float:
        """The round-off floor of the Newton residual norm [N] at ``q`` with step ``h`` [s]:
        ``4 eps X sqrt(sum_j (k_j + m_j (1/h^2 + c/h))^2)`` over the vertex coordinates, with
        ``X`` the largest coordinate magnitude [m], ``k_j`` the vertex's stiffest axial spring
        [N/m] (:func:`~strandlab.mixed.system.vertex_contact_stiffness`), ``m_j`` its mass and
        ``c`` the mass damping.  A coordinate is stored to ``eps X``, so forces computed from
        it carry errors of about ``k eps X``: a residual below this is noise."""
        m = self.model
        nv = m.n_vertices
        if h != self._floor_h:
            a = 1.0 / (h * h) + self.settings.damping / h
            k = self._vertex_k[:, None] + m.mass[: 3 * nv].reshape(-1, 3) * a
            self._floor_norm = float(np.sqrt(np.sum(k * k)))
            self._floor_h = h
        x = float(np.max(np.abs(q[: 3 * nv]))) if nv else 0.0
        return 4.0 * float(np.finfo(np.float64).eps) * x * self._floor_norm

    def _end_step(self, s: MixedState) -> None:
        """The rods' frames at the step's end, loaded as the next step's start, and the
        connection angles followed there."""
        self.system.prepare(s.q)
        s.a1[...] = self.system.frames.a1
        s.ref_twist[...] = self.system.frames.ref_twist
        self.system.load_frames(s.q, s.a1, s.ref_twist)
        self.elastic.store_angles(s.q, s.joint_angle)

    def _drive(self, q: np.ndarray, t: float) -> None:
        m = self.model
        rot, origin = self._rot, self._origin
        for f in range(len(self.scene.frames)):
            rot[f], origin[f] = self.scene.frames[f].pose(t)
        if len(m.drive_vertex):
            fr = m.drive_vertex_frame
            x = origin[fr] + np.einsum("nij,nj->ni", rot[fr], m.drive_vertex_local)
            q[3 * m.drive_vertex[:, None] + np.arange(3)] = x
        if len(m.drive_edge):
            np.einsum("nij,nj->ni", rot[m.drive_edge_frame], m.drive_edge_local,
                      out=self._de_want)
            f = self.system.frames
            drive_edge_angles(q, f.q_prev, self._de_dof0, self._de_dof1,
                              f.a1_prev[m.drive_edge], self._de_want, m.edge_dof[m.drive_edge])

    def check_number(self, s: MixedState) -> None:
        st, m = self.settings, self.model
        max_strain = -1.0 if st.max_strain is None else float(st.max_strain)
        max_speed = -1.0 if st.max_speed is None else float(st.max_speed)
        vdof = 3 * np.arange(m.n_vertices)
        bad, e, strain, p, speed = check_state(s.q, s.v, vdof, m.check_edges[:, 0],
                                               m.check_edges[:, 1], m.check_rest_length,
                                               max_strain, max_speed)
        if bad >= 0:
            k = self._mesh_of(min(bad // 3, m.n_vertices - 1))
            raise SimulationDiverged(s.step, s.time, k, -1, what=f"coordinate {bad} is not "
                                     "finite", where=self._mesh_name(k))
        if e >= 0:
            a, b = (int(v) for v in m.check_edges[e])
            k = self._mesh_of(a)
            raise SimulationDiverged(s.step, s.time, k, -1,
                                     what=f"edge strain {strain:.3g} of the edge between points "
                                          f"{self._local(k, a)} and {self._local(k, b)} exceeds "
                                          f"max_strain = {st.max_strain:g}",
                                     where=self._mesh_name(k))
        if p >= 0:
            k = self._mesh_of(p)
            raise SimulationDiverged(s.step, s.time, k, self._local(k, p),
                                     what=f"speed {speed:.3g} m/s exceeds max_speed = "
                                          f"{st.max_speed:g} m/s", where=self._mesh_name(k))

    def _warn_saturated(self, s: MixedState, h: float, mc) -> None:
        """Warn, once a run, that surface pairs stay within ``dhat / 2`` at the stiffening's
        cap (:class:`~strandlab.collision.mesh_contact.ContactStiffnessWarning`)."""
        self._warned_saturated = True
        k = self._mesh_of(mc.saturated)
        warnings.warn(f"mixed solver: step {s.step + 1} (t = {s.time + h:.6g} s): surface pairs "
                      f"stay closer than half the contact thickness ({0.5 * mc.dhat:.3g} m) "
                      f"with their stiffness at its cap ({MAX_STIFFENING:g} times the series "
                      f"value), at vertex {self._local(k, mc.saturated)} of "
                      f"{self._mesh_name(k)} among others: surfaces pinched between held "
                      f"vertices, or a load the contact cannot carry (warned once)",
                      ContactStiffnessWarning, stacklevel=6)   # the caller of step()

    def _mesh_of(self, v: int) -> int:
        return int(np.searchsorted(self.model.mesh_vertex_start, v, side="right") - 1)

    def _local(self, k: int, v: int) -> int:
        return int(v - self.model.mesh_vertex_start[k])

    def _mesh_name(self, k: int) -> str:
        return f"mesh {self.scene.simplicial[k].name!r}"
