"""The discrete-elastic-rods solver (Bergou et al. 2008/2010, as used by Takahashi and Batty).

Each step is one backward-Euler step of the shared implicit integrator
(:mod:`strandlab.implicit`) over the model's stretching, bending and twisting terms, followed by
the contacts with static colliders.  See docs/der.md.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import ClassVar

import numpy as np

from ..implicit import (
    ImplicitEuler,
    ImplicitStepError,
    LinearSolveError,
    NewtonSettings,
    warn_not_converged,
)
from ..implicit.assembly import use_parallel
from ..rods.kinematics import check_state, drive_edge_angles, strain_change_by_strand
from ..sim.scene import Scene
from ..sim.solver import Output, solver_inputs
from ..sim.validate import SimulationDiverged, check_number, check_state_arrays
from .compile import compile_scene
from .contact import collide_vertices, collide_vertices_serial
from .model import DERModel, DERState
from .system import DERSystem

__all__ = ["DERSettings", "DERSolver"]

_LINEAR = ("auto", "banded", "sparse")

#: With the contact penalty in the solve, vertices are pushed out of colliders only past this
#: fraction of their radius (the penalty holds them in the rest of it).
PUSH_SCALE = 0.5

#: Most Newton iterations by which a strand follows its pushed vertices, restoring the edge
#: lengths of the step (:mod:`strandlab.der.contact`; two to four reach its tolerance), with
#: the contact penalty in the solve.
FOLLOW_ITERATIONS = 8

#: Serial cost of one vertex's contact test per collider, in the work units of
#: :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK` (below that, the serial kernel runs).
CONTACT_WORK = 10

#: Relative Newton tolerance of a step taken again because its fixed-count iterations changed
#: an edge's strain by more than ``DERSettings.adaptive_strain``.
ADAPTIVE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class DERSettings:
    """Solver options (docs/der.md).

    newton_iterations : Newton iterations per step when ``tolerance`` is None (default 1, as the
        paper).
    adaptive_strain : with ``newton_iterations`` (no ``tolerance``), the strands whose
        iterations change an edge's strain ``|e| / lbar`` by more than this (> 0) in a step
        take the step again from its start, with Newton iterations to the relative residual
        :data:`ADAPTIVE_TOLERANCE` (at most ``max_iterations``) and a line search, the other
        strands held where their iterations put them (``DERSolver.adaptive_steps`` counts the
        steps, ``adaptive_strands`` the strands): the linearised step stretches edges that turn
        fast or meet a contact (a rope's end landing on the floor: 8 %); None or inf: never.
    tolerance : when given, iterate each step until the relative residual falls below it (at
        most ``max_iterations``), with a backtracking line search; a step still above it is
        kept, warned (:class:`~strandlab.implicit.NotConvergedWarning`, naming the step, its
        time and residual) and counted (``DERSolver.unconverged_steps``).
    max_iterations : cap on Newton iterations in tolerance mode.
    substeps : implicit steps per ``step`` call (the step ``dt / substeps``).
    linear_solver : ``"auto"`` (per-strand banded Cholesky for open strands, sparse otherwise),
        ``"banded"`` or ``"sparse"``.
    hessian : ``"projected"`` (default: the stretching Hessian's transverse part clamped at zero,
        exact otherwise) or ``"exact"``.
    damping : mass-proportional damping rate [1/s].
    viscous_damping : stiffness-proportional (Rayleigh) damping time [s] of stretching,
        bending and twisting.
    check_finite : stop with :class:`SimulationDiverged` when a step produces NaN or inf, or
        exceeds ``max_strain`` or ``max_speed``.
    max_strain : largest allowed edge strain ``| |e| / lbar - 1 |`` (> 0), or None or inf (no
        bound).
    max_speed : largest allowed vertex speed [m/s] (> 0), or None or inf (no bound).
    contact_stiffness : stiffness of the contact penalty in the solve, as a multiple of the
        axial spring constant ``k_s / lbar`` of the vertex's edges (default 1;
        :mod:`strandlab.collision.penalty`).  0: contacts by the push after the step alone.
    """

    newton_iterations: int = 1
    adaptive_strain: float | None = 5e-3
    tolerance: float | None = None
    max_iterations: int = 50
    substeps: int = 1
    linear_solver: str = "auto"
    hessian: str = "projected"
    damping: float = 0.0
    viscous_damping: float = 0.0
    check_finite: bool = True
    max_strain: float | None = 0.5
    max_speed: float | None = 1e3
    contact_stiffness: float = 1.0

    OPTIONAL_KINDS: ClassVar[dict] = {"tolerance": float, "max_strain": float,
                                      "max_speed": float, "adaptive_strain": float}

    def __post_init__(self):
        for name in ("newton_iterations", "max_iterations", "substeps"):
            check_number(name, getattr(self, name), integer=True)
        check_number("tolerance", self.tolerance, positive=True, allow_none=True)
        for name in ("max_strain", "max_speed", "adaptive_strain"):     # inf: no bound
            check_number(name, getattr(self, name), positive=True, allow_none=True,
                         allow_inf=True)
        for name in ("damping", "viscous_damping", "contact_stiffness"):
            check_number(name, getattr(self, name))
        if self.linear_solver not in _LINEAR:
            raise ValueError(f"unknown linear_solver {self.linear_solver!r}; choose one of "
                             f"{list(_LINEAR)}")
        if self.hessian not in ("projected", "exact"):
            raise ValueError(f"unknown hessian {self.hessian!r}; choose 'projected' or 'exact'")
        if not isinstance(self.check_finite, (bool, np.bool_)):
            raise ValueError(f"check_finite must be true or false, got {self.check_finite!r}")

    def newton(self) -> NewtonSettings:
        """The integrator settings these options stand for."""
        return NewtonSettings(iterations=self.newton_iterations, tolerance=self.tolerance,
                              max_iterations=self.max_iterations,
                              mass_damping=self.damping,
                              stiffness_damping=self.viscous_damping)

    def to_dict(self) -> dict:
        return asdict(self)


class DERSolver:
    """Discrete elastic rods: compiles a :class:`~strandlab.sim.scene.Scene` into a
    :class:`~strandlab.der.model.DERModel` and steps it (the solver protocol of
    :mod:`strandlab.sim.solver`).  ``scene`` may also be an already compiled DERModel."""

    name = "der"
    Settings = DERSettings

    def __init__(self, scene: Scene | DERModel, settings: DERSettings | None = None):
        model, self.settings = solver_inputs(type(self), scene, settings, compile_scene,
                                             DERModel)
        self.model = model
        self.scene = model.scene
        st = self.settings
        self.system = DERSystem(model, project=st.hessian == "projected",
                                contact_stiffness=st.contact_stiffness)
        kind = st.linear_solver
        if kind == "auto":
            kind = "sparse" if np.any(model.strand_closed) else "banded"
        self.integrator = ImplicitEuler(self.system, st.newton(), linear_solver=kind)
        # the settings of a step taken again (DERSettings.adaptive_strain), None: never
        self._adaptive = None
        if st.tolerance is None and st.adaptive_strain is not None:
            self._adaptive = replace(st.newton(), tolerance=ADAPTIVE_TOLERANCE)
        nv, nd = model.n_vertices, model.n_dofs
        self._f_ext = np.zeros(nd)
        self._q_start = np.zeros(nd)
        self._v_start = np.zeros(nd)
        # a step taken again (adaptive_strain): each strand's strain change, which strands take
        # it again, the coordinates held (the others' and the held ones) and their values
        self._change = np.zeros(model.n_strands)
        self._again = np.zeros(model.n_strands, dtype=np.bool_)
        self._dof_strand = np.repeat(np.arange(model.n_strands),
                                     np.diff(model.strand_dof_start))
        self._held_again = np.zeros(nd, dtype=np.bool_)
        self._q_again = np.zeros(nd)
        self._q_target = np.zeros(nd)
        self._loads = self.scene.loads if self.scene is not None else ()
        # gravity once (constant); each load's three coordinates
        m = model
        self._f_gravity = np.zeros(nd)
        for r in range(3):
            self._f_gravity[m.vertex_dof + r] = m.mass[m.vertex_dof + r] * m.gravity[r]
        self._load_dofs = [m.vertex_dof[m.load_vertex[k]] + np.arange(3)
                           for k in range(len(self._loads))]
        # only the held coordinates of moving frames change during a step
        frames = self.scene.frames if self.scene is not None else ()
        moving = np.array([bool(getattr(f.motion, "moves", True)) for f in frames], dtype=bool)
        self._moving_frames = np.nonzero(moving)[0]
        self._rot = np.zeros((len(frames), 3, 3))
        self._origin = np.zeros((len(frames), 3))
        self._dv = np.nonzero(moving[m.drive_vertex_frame])[0] if len(frames) else np.zeros(0, int)
        self._de = np.nonzero(moving[m.drive_edge_frame])[0] if len(frames) else np.zeros(0, int)
        self._de_dof0 = np.ascontiguousarray(m.vertex_dof[m.edge_v0[m.drive_edge[self._de]]])
        self._de_dof1 = np.ascontiguousarray(m.vertex_dof[m.edge_v1[m.drive_edge[self._de]]])
        self._de_want = np.zeros((len(self._de), 3))
        self._x = np.zeros((nv, 3))
        self._depth = np.zeros(nv)
        self._normal = np.zeros((nv, 3))
        self._mu = np.zeros(nv)
        ne = model.n_edges
        self._length, self._tangent = np.zeros(ne), np.zeros((ne, 3))
        self._tri = np.zeros((3, ne))
        self._pushed = np.zeros(nv, dtype=np.bool_)
        self._has_colliders = len(model.collider_friction) > 0
        ct = self.system.contact
        self._k_pen = ct.vertex_stiffness if ct is not None else np.zeros(nv)
        # with the penalty in the solve, the push corrects penetrations past half the radius,
        # and the strand follows the vertices it pushes
        self._push_scale = PUSH_SCALE if ct is not None else 1.0
        self._follow = FOLLOW_ITERATIONS if ct is not None else 0
        self.last_info = None
        self.unconverged_steps = 0     # steps kept above the Newton tolerance (warned)
        self.adaptive_steps = 0        # steps taken again to a tolerance (adaptive_strain)
        self.adaptive_strands = 0      # strands that took them again

    # ------------------------------------------------------------------ protocol
    def state(self) -> DERState:
        """A new state at the scene's initial configuration."""
        return self.model.state()

    def output(self, state: DERState) -> Output:
        """Vertex positions [V, 3], the material direction d1 = m1 of every edge [E, 3], and no
        extra points beyond the frames' (origin and two axis tips each)."""
        m = self.model
        x = m.positions(state.q)
        d1 = self.system.material_d1(state.q, state.a1)
        extra = np.zeros((0, 3))
        if self.scene is not None and self.scene.frames:
            pts = []
            for f in range(len(self.scene.frames)):
                rot, origin = self.scene.frames[f].pose(state.time)
                size = self.scene.frame_size(f)
                pts += [origin, origin + size * rot[:, 0], origin + size * rot[:, 1]]
            extra = np.asarray(pts)
        return Output(positions=x, d1=d1, extra=extra)

    def save_state(self, state: DERState) -> dict:
        """The complete state as arrays (see :meth:`load_state`)."""
        return {"q": state.q.copy(), "v": state.v.copy(), "a1": state.a1.copy(),
                "ref_twist": state.ref_twist.copy(), "time": np.float64(state.time),
                "step": np.int64(state.step)}

    def load_state(self, arrays: dict) -> DERState:
        """A state from :meth:`save_state`'s arrays; ValueError naming a missing, misshapen or
        non-finite entry."""
        m = self.model
        out = check_state_arrays(arrays, {"q": (m.n_dofs,), "v": (m.n_dofs,),
                                          "a1": (m.n_edges, 3), "ref_twist": (m.n_bend,),
                                          "time": (), "step": ()})
        step, time = int(out["step"]), float(out["time"])
        return DERState(q=out["q"].astype(np.float64), v=out["v"].astype(np.float64),
                        a1=out["a1"].astype(np.float64),
                        ref_twist=out["ref_twist"].astype(np.float64), time=time, step=step)

    # ------------------------------------------------------------------ stepping
    def frame_poses(self, t: float):
        """Rotations [F, 3, 3] and origins [F, 3] of the scene's frames at time ``t``."""
        frames = self.scene.frames if self.scene is not None else ()
        rot = np.zeros((len(frames), 3, 3))
        origin = np.zeros((len(frames), 3))
        for f, fr in enumerate(frames):
            rot[f], origin[f] = fr.pose(t)
        return rot, origin

    def step(self, state_in: DERState, state_out: DERState, dt: float) -> None:
        """Advance ``state_in`` by ``dt`` [s] into ``state_out`` (which may be the same object).

        Raises ``ValueError`` for a bad ``dt``, and :class:`SimulationDiverged` naming the step
        and strand when a linear solve fails (a matrix that stays indefinite or non-finite after
        the regularisation), when the result is not finite, or when it exceeds the settings'
        bounds.
        """
        if isinstance(dt, bool) or not (isinstance(dt, (float, int, np.floating))
                                        and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive finite number, got {dt!r}")
        st, m = self.settings, self.model
        if state_out is not state_in:
            state_out.assign(state_in)
        h = float(dt) / st.substeps
        try:
            for _ in range(st.substeps):
                self._substep(state_out, h)
        except (LinearSolveError, ImplicitStepError) as exc:
            b = exc.block
            name = self.scene.strands[b].name if self.scene is not None and b >= 0 else ""
            raise SimulationDiverged(state_in.step + 1, state_out.time, b, -1,
                                     what=f"the implicit step of {name or 'the model'} failed: "
                                          f"{exc}") from exc
        state_out.step = state_in.step + 1
        if st.check_finite:
            self._check(state_out)
        del m

    def equilibrium(self, state: DERState, *, tolerance: float = 1e-10,
                    atol: float | None = None, max_iterations: int = 200):
        """Replace ``state`` by the static equilibrium near it under the scene's gravity, loads
        (at ``state.time``) and held coordinates: Newton's method with a line search on the
        total potential (no inertia), stopping when the free-coordinate force norm falls below
        ``tolerance`` times its initial value, or below ``atol`` [N] (default ``1e-13`` times
        the largest stretching stiffness times the square root of the number of free coordinates:
        the round-off floor of the stretching forces).
        Velocities are zeroed.  Returns the integrator's statistics (``converged``,
        ``residual``, ``iterations``)."""
        m = self.model
        if atol is None:
            # round-off of the stretching forces, summed in a norm over the free coordinates
            free = int(m.n_dofs - np.count_nonzero(m.fixed))
            atol = 1e-13 * float(np.max(m.stretch_stiffness)) * math.sqrt(max(free, 1))
        self.system.load_frames(state.q, state.a1, state.ref_twist)
        f = self._external_force(state.time)
        info = self.integrator.equilibrium(state.q, fixed=m.fixed, f_ext=f, tolerance=tolerance,
                                           atol=atol, max_iterations=max_iterations)
        self.system.prepare(state.q)
        state.a1[...] = self.system.a1
        state.ref_twist[...] = self.system.ref_twist
        state.v[...] = 0.0
        return info

    def _external_force(self, t: float) -> np.ndarray:
        """Gravity and the scene's loads at time ``t`` [N] (a buffer; gravity alone when there
        are no loads)."""
        if not self._loads:
            return self._f_gravity
        f = self._f_ext
        f[:] = self._f_gravity
        for k, ld in enumerate(self._loads):
            f[self._load_dofs[k]] += ld.at(t)
        return f

    def _substep(self, s: DERState, h: float) -> None:
        m = self.model
        t_next = s.time + h
        self._q_start[:] = s.q
        self._v_start[:] = s.v
        self.system.load_frames(s.q, s.a1, s.ref_twist)
        q_fixed = None
        if len(self._dv) or len(self._de):
            q_fixed = self._q_target
            q_fixed[:] = s.q
            self._drive(q_fixed, t_next)
        f = self._external_force(t_next)
        info = self.integrator.step(s.q, s.v, s.q, s.v, h, f_ext=f, fixed=m.fixed,
                                    q_fixed=q_fixed)
        if self._adaptive is not None and self._strain_jumped(s):
            info = self._step_again(s, h, f)
        self.last_info = info
        self.unconverged_steps += warn_not_converged(
            "der", info, s.step + 1, t_next, self.settings.max_iterations, stacklevel=3)
        if self._has_colliders:
            work = CONTACT_WORK * m.n_vertices * len(m.collider_friction)
            kern = collide_vertices if use_parallel(m.n_strands, work) else \
                collide_vertices_serial
            kern(m.strand_vertex_start, m.strand_edge_start, m.edge_v0, m.edge_v1,
                 m.vertex_dof, m.fixed, m.vertex_radius, m.vertex_friction, m.planes, m.spheres,
                 m.capsules, m.collider_friction, h, self._push_scale, self._k_pen, m.mass,
                 self._follow, self._q_start, s.q, s.v, self._x, self._depth,
                 self._normal, self._mu, self._length, self._pushed, self._tangent,
                 self._tri[0], self._tri[1], self._tri[2])
        self.system.prepare(s.q)
        s.a1[...] = self.system.a1
        s.ref_twist[...] = self.system.ref_twist
        s.time = t_next

    def _strain_jumped(self, s: DERState) -> bool:
        """Whether the step just taken changed an edge's strain by more than
        ``adaptive_strain`` in some strand (those strands marked in ``_again``)."""
        m = self.model
        strain_change_by_strand(self._q_start, s.q, m.vertex_dof, m.edge_v0, m.edge_v1,
                                m.rest_length, m.strand_edge_start, self._change)
        np.greater(self._change, self.settings.adaptive_strain, out=self._again)
        return bool(self._again.any())

    def _step_again(self, s: DERState, h: float, f: np.ndarray):
        """The step taken again from its start by the strands marked in ``_again``, with Newton
        iterations to a tolerance, the other strands held where the step put them
        (``DERSettings.adaptive_strain``); its StepInfo."""
        m, integ = self.model, self.integrator
        held = self._held_again
        np.take(self._again, self._dof_strand, out=held)
        np.logical_not(held, out=held)
        np.logical_or(held, m.fixed, out=held)
        # held coordinates end at the step's values (the moving frames' targets included)
        self._q_again[:] = s.q
        s.q[:] = self._q_start
        s.v[:] = self._v_start
        self.system.load_frames(s.q, s.a1, s.ref_twist)
        fixed_count, integ.settings = integ.settings, self._adaptive
        try:
            info = integ.step(s.q, s.v, s.q, s.v, h, f_ext=f, fixed=held,
                              q_fixed=self._q_again)
        finally:
            integ.settings = fixed_count
        self.adaptive_steps += 1
        self.adaptive_strands += int(np.count_nonzero(self._again))
        return info

    def _drive(self, q: np.ndarray, t: float) -> None:
        """Targets of the held coordinates of moving frames at time ``t`` in ``q`` (the held
        coordinates of still frames keep their values): the held vertices move with their
        frames and the held edges' angles turn d1 onto the frame's direction."""
        m = self.model
        rot, origin = self._rot, self._origin
        for f in self._moving_frames:
            rot[f], origin[f] = self.scene.frames[f].pose(t)
        if len(self._dv):
            dv = self._dv
            fr = m.drive_vertex_frame[dv]
            x = origin[fr] + np.einsum("nij,nj->ni", rot[fr], m.drive_vertex_local[dv])
            q[m.vertex_dof[m.drive_vertex[dv]][:, None] + np.arange(3)] = x
        if len(self._de):
            de = self._de
            np.einsum("nij,nj->ni", rot[m.drive_edge_frame[de]], m.drive_edge_local[de],
                      out=self._de_want)
            e = m.drive_edge[de]
            drive_edge_angles(q, self.system.frames.q_prev, self._de_dof0, self._de_dof1,
                              self.system.frames.a1_prev[e], self._de_want, m.edge_dof[e])

    def _check(self, s: DERState) -> None:
        st, m = self.settings, self.model
        max_strain = -1.0 if st.max_strain is None else float(st.max_strain)
        max_speed = -1.0 if st.max_speed is None else float(st.max_speed)
        bad, e, strain, p, speed = check_state(s.q, s.v, m.vertex_dof, m.edge_v0, m.edge_v1,
                                               m.rest_length, max_strain, max_speed)
        if bad >= 0:
            strand = int(np.searchsorted(m.strand_dof_start, bad, side="right") - 1)
            v = int(np.searchsorted(m.vertex_dof, bad, side="right") - 1)
            raise SimulationDiverged(s.step, s.time, strand,
                                     v - int(m.strand_vertex_start[strand]))
        if e >= 0:
            strand = int(m.vertex_strand[m.edge_v0[e]])
            raise SimulationDiverged(
                s.step, s.time, strand, int(m.edge_v1[e] - m.strand_vertex_start[strand]),
                what=f"edge strain {strain:.3g} exceeds max_strain = {st.max_strain:g} "
                     f"at edge {e}")
        if p >= 0:
            strand = int(m.vertex_strand[p])
            raise SimulationDiverged(
                s.step, s.time, strand, p - int(m.strand_vertex_start[strand]),
                what=f"speed {speed:.3g} m/s exceeds max_speed = {st.max_speed:g} m/s")
