"""The chain-shape-matching string solver (Rungjiratananon et al. 2010 and 2011): twisting,
tension, tearing, flicking and plasticity.  See docs/csm.md."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import ClassVar

import numba
import numpy as np

from ..collision.segment_contact import make_segment_set
from ..sim.scene import Scene, UnsupportedFeature
from ..sim.solver import Output, solver_inputs
from ..sim.validate import SimulationDiverged, check_state_arrays
from . import clusters as CL
from . import kernels as K
from .compile import compile_scene
from .contact import ClusterContacts, SegmentContacts
from .model import (
    TENSION_IMPULSE,
    TENSION_LENGTH,
    CSMModel,
    CSMState,
    Scratch,
    StateArrays,
    StepParams,
)
from .tension import LENGTH_DIRECT, LENGTH_GAUSS_SEIDEL, LENGTH_NEWTON

__all__ = ["CSMSettings", "CSMSolver"]

_TENSION = {"impulse": TENSION_IMPULSE, "length": TENSION_LENGTH}
_LENGTH = {"newton": LENGTH_NEWTON, "direct": LENGTH_DIRECT,
           "gauss-seidel": LENGTH_GAUSS_SEIDEL}

#: Below this many particles x passes per step a step runs on the calling thread.
PARALLEL_MIN_WORK = 20000

#: Parallel loops over chains are cut into about this many chunks per thread, handed out to
#: the threads as they become free (dynamic scheduling).
PARALLEL_CHUNKS = 8


def _check(name, v, *, integer=False, lo=None, lo_open=False, hi=None, allow_none=False):
    if v is None and allow_none:
        return
    ok = not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, float, np.integer,
                                                                np.floating))
    if integer:
        ok = ok and isinstance(v, (int, np.integer))
    ok = ok and math.isfinite(v)
    if ok and lo is not None:
        ok = v > lo if lo_open else v >= lo
    if ok and hi is not None:
        ok = v <= hi
    if not ok:
        kind = "an integer" if integer else "a number"
        rng = ""
        if lo is not None:
            rng = f" {'>' if lo_open else '>='} {lo:g}"
        if hi is not None:
            rng += f"{' and' if rng else ''} <= {hi:g}"
        raise ValueError(f"{name} must be {kind}{rng}{' or None' if allow_none else ''}, got "
                         f"{v!r}")


@dataclass(frozen=True)
class CSMSettings:
    """Solver options (docs/csm.md).

    alpha : shape-matching stiffness in (0, 1]: the fraction of the way to the goal positions
        a particle moves per pass.
    shape_iterations : shape-matching passes per substep.
    iterations : strain-limiting passes per substep.
    length_solver : ``"newton"`` (default: the taut segments of a chain solved together per
        pass, Newton's method with their geometric stiffness, warm-started at the stored
        tensions), ``"direct"`` (the same without geometric stiffness or warm start: the
        linearised solve, which diverges on long hanging strings at large steps) or
        ``"gauss-seidel"`` (the paper's: one projection per segment, alternating directions;
        long strings need many passes).
    twist_iterations : twist-averaging passes (eqs. 1-3) per substep (0: no propagation).
    substeps : substeps per ``step`` call.
    damping : velocity damping rate [1/s]: velocities scale by ``1 - damping h`` per substep.
    tension : ``"impulse"`` (each segment's own length corrections; default) or ``"length"``
        (its unconstrained minus constrained length, eq. 8 as printed).
    tension_scale : ``k_stiff`` of eq. 8 in units of ``mu / h^2`` (the stiffness that turns a
        correction made in one substep into a force: 1 gives the constraint force).
    tension_time : time [s] over which the stored tension of a segment follows its
        estimates (the estimates of one substep are noisy); the stored tension sets the
        elastic elongation and is what a released segment rebounds with.
    flicking : rebound of released tension (false: strings fall quietly, for comparison).
    flick_scale : factor on the rebound velocity.
    plasticity : permanent elongation past the yield stress.
    tearing : segments tear when their stress passes their rupture stress.
    seed : seed of the random variation of the rupture stresses along the strings.
    contact_weight : mass factor of particles in segment contact during shape matching (the
        paper: 3; also what a ``CSMSolver.contact_hook`` should use).
    segment_collision : capsule contacts between segments (of different strands, and of one
        strand beyond its neighbours), found on the shared uniform grid (docs/csm.md,
        "Contacts").
    contact_search : 27 (every neighbouring voxel: exact) or 7 (the paper's faster search,
        which misses a few near pairs; docs/collision.md).
    contact_margin : pairs are found this much [m] beyond contact distance, at the positions
        after time integration (None: twice the largest contact radius).
    contact_iterations : contact sweeps before shape matching (one more follows the strain
        limiting).
    contact_friction : Coulomb coefficient of the contacts of cluster particles (with each
        other and with segments); those contacts are inelastic.
    check_finite : stop with :class:`SimulationDiverged` when a step produces NaN or inf, or
        exceeds ``max_strain`` or ``max_speed``.
    max_strain : largest allowed ``|e| / L_max - 1`` of an untorn segment (> 0), or None or inf
        (no bound).
    max_speed : largest allowed particle speed [m/s] (> 0), or None or inf (no bound).
    """

    alpha: float = 1.0
    shape_iterations: int = 1
    iterations: int = 8
    length_solver: str = "newton"
    twist_iterations: int = 1
    substeps: int = 1
    damping: float = 0.0
    tension: str = "impulse"
    tension_scale: float = 1.0
    tension_time: float = 0.05
    flicking: bool = True
    flick_scale: float = 1.0
    plasticity: bool = True
    tearing: bool = True
    seed: int = 0
    contact_weight: float = 3.0
    segment_collision: bool = True
    contact_search: int = 27
    contact_margin: float | None = None
    contact_iterations: int = 2
    contact_friction: float = 0.5
    check_finite: bool = True
    max_strain: float | None = 0.5
    max_speed: float | None = 1e3

    OPTIONAL_KINDS: ClassVar[dict] = {"max_strain": float, "max_speed": float,
                                      "contact_margin": float}

    def __post_init__(self):
        _check("alpha", self.alpha, lo=0.0, lo_open=True, hi=1.0)
        for name in ("shape_iterations", "iterations", "substeps"):
            _check(name, getattr(self, name), integer=True, lo=1)
        _check("twist_iterations", self.twist_iterations, integer=True, lo=0)
        _check("seed", self.seed, integer=True, lo=0)
        for name in ("damping", "flick_scale"):
            _check(name, getattr(self, name), lo=0.0)
        _check("tension_scale", self.tension_scale, lo=0.0, lo_open=True)
        _check("tension_time", self.tension_time, lo=0.0, lo_open=True)
        _check("contact_weight", self.contact_weight, lo=1.0)
        _check("contact_margin", self.contact_margin, lo=0.0, allow_none=True)
        _check("contact_iterations", self.contact_iterations, integer=True, lo=0)
        _check("contact_friction", self.contact_friction, lo=0.0)
        if self.contact_search not in (7, 27) or isinstance(self.contact_search, bool):
            raise ValueError(f"contact_search must be 7 or 27 (voxels), got "
                             f"{self.contact_search!r}")
        for name in ("max_strain", "max_speed"):
            if getattr(self, name) != math.inf:        # inf: no bound, as None
                _check(name, getattr(self, name), lo=0.0, lo_open=True, allow_none=True)
        if self.length_solver not in _LENGTH:
            raise ValueError(f"unknown length_solver {self.length_solver!r}; choose one of "
                             f"{sorted(_LENGTH)}")
        if self.tension not in _TENSION:
            raise ValueError(f"unknown tension {self.tension!r}; choose one of "
                             f"{sorted(_TENSION)}")
        for name in ("flicking", "plasticity", "tearing", "check_finite", "segment_collision"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")

    def to_dict(self) -> dict:
        return asdict(self)


class CSMSolver:
    """Chain shape matching: compiles a :class:`~strandlab.sim.scene.Scene` into a
    :class:`~strandlab.csm.model.CSMModel` and steps it (the solver protocol of
    :mod:`strandlab.sim.solver`).  All scratch memory is allocated here, once.

    ``contact_hook``: None, or a function ``hook(solver, x, weight)`` called every substep
    after time integration and before shape matching, with the unconstrained positions ``x``
    [V, 3] (it may move them to resolve segment-segment contacts) and the shape-matching mass
    factors ``weight`` [V] (reset to 1 before the call; set ``settings.contact_weight`` on the
    particles in contact to make them heavier while the shapes are matched, as the paper).
    """

    name = "csm"
    #: State arrays that may hold +inf (no rupture threshold), for checkpoints.
    UNBOUNDED_STATE = ("rupture",)
    Settings = CSMSettings

    def __init__(self, scene: Scene | CSMModel, settings: CSMSettings | None = None):
        model, self.settings = solver_inputs(type(self), scene, settings, compile_scene,
                                             CSMModel)
        self.model = model
        self.scene = model.scene
        self.contact_hook: Callable | None = None
        m = model
        nv, ne, npt = m.n_particles, m.n_edges, m.n_particles
        nc, nk = m.n_clusters, m.n_ties
        if nk and self.settings.length_solver != "newton":
            raise UnsupportedFeature("solver 'csm': strands tied to meshes need "
                                     "length_solver = 'newton'")
        z = np.zeros
        self.scratch = Scratch(
            x_old=z((nv, 3)), x_free=z((nv, 3)), goal=z((nv, 3)), count=z(nv), scale=z(ne),
            sm_mass=z(nv), sm_weight=np.ones(nv), f_twist=z((nv, 3)), k_twist=z(nv),
            f_load=z((nv, 3)),
            dv=z((nv, 3)), lam=z(ne), lam_total=z(ne), seg_len=z(ne), dx=z((nv, 3)),
            kkt=z((nv, 16)), tri_c=z(ne), tri_d=z(ne),
            dirs=z((ne, 3)), excess=z(ne), active=z(ne),
            tw_goal=z(ne), tw_count=z(ne), depth=z(nv),
            normal=z((nv, 3)), mu=z(nv), drive_pos=np.array(m.drive_local),
            twist_target=np.vstack([m.twist_local, m.arrays.tie_twist_local]),
            cluster_c=z((nc, 3)), cluster_c0=z((nc, 3)), cluster_q0=z((nc, 4)),
            cluster_inv_inertia=z((nc, 6)), cluster_torque=z((nc, 3)),
            tie_mass=z((nk, 6)), tie_dp=z((nk, 3)), tie_p=z((nk, 3)), chain_flag=z(npt),
            tear_at=np.zeros(npt, np.int64), tear_ratio=z(npt),
            group=np.zeros(npt + nc, np.int64))
        frames = self.scene.frames if self.scene is not None else ()
        self._moving = [f for f, fr in enumerate(frames) if getattr(fr.motion, "moves", True)]
        self._drive_rows = np.nonzero(m.drive_frame >= 0)[0]
        self._set_targets(0.0, force=True)
        self._loads = self.scene.loads if self.scene is not None else ()
        self.last_torn = 0
        st = self.settings
        self.contacts = self.cluster_contacts = None
        if st.segment_collision and ne:
            self.contacts = SegmentContacts(m, search=st.contact_search,
                                            margin=st.contact_margin, heavy=st.contact_weight)
        if st.segment_collision and nc:
            segs = self.contacts.segs if self.contacts is not None else \
                make_segment_set(np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0,
                                 np.zeros(0, np.int64), npt)
            self.cluster_contacts = ClusterContacts(m, segs, margin=st.contact_margin,
                                                    heavy=st.contact_weight,
                                                    friction=st.contact_friction)
        self.n_contacts = 0

    # ------------------------------------------------------------------ protocol
    def state(self) -> CSMState:
        """A new state at the scene's initial configuration; the rupture stress of every
        segment drawn from ``settings.seed`` (uniform within ``rupture_variation``)."""
        m = self.model
        nv, ne = m.n_vertices, m.n_edges
        rng = np.random.default_rng(self.settings.seed)
        spread = rng.uniform(-1.0, 1.0, ne)
        quat = np.zeros((nv, 4))
        quat[:, 0] = 1.0
        chain_start = np.zeros(nv + 1, np.int64)
        chain_strand = np.zeros(nv, np.int64)
        torn = np.zeros(ne, dtype=np.bool_)
        n = K.renumber_chains(m.strand_vertex_start, m.arrays.vertex_edge, torn, chain_start,
                              chain_strand)
        cq = np.zeros((m.n_clusters, 4))
        cq[:, 0] = 1.0
        arr = StateArrays(
            x=np.array(m.x0), v=np.array(m.v0), theta=np.array(m.theta0), u=np.array(m.u0),
            quat=quat, plastic_strain=np.zeros(ne), tension=np.zeros(ne), torn=torn,
            rupture=m.rupture_stress * (1.0 + m.rupture_variation * spread),
            chain_start=chain_start, chain_strand=chain_strand, cluster_quat=cq)
        if m.n_clusters:
            CL.cluster_centres(m.arrays, arr, self.scratch)
        return CSMState(arr, n)

    def output(self, state: CSMState) -> Output:
        """Vertex positions [V, 3], the material direction d1 of every segment [E, 3], the
        frames' points, and ``edge_broken``: the torn segments [E] (the strings' pieces are
        the runs of vertices between them, :meth:`pieces`)."""
        st = state.arrays
        m = self.model
        ne = m.n_edges
        a = np.nonzero(m.arrays.vertex_edge >= 0)[0]
        t = st.x[a + 1] - st.x[a]
        t /= np.maximum(np.linalg.norm(t, axis=1), 1e-300)[:, None]
        e = m.arrays.vertex_edge[a]
        u = st.u[e]
        th = st.theta[e][:, None]
        d1 = np.zeros((ne, 3))
        d = np.cos(th) * u + np.sin(th) * np.cross(t, u)
        d -= np.einsum("ij,ij->i", d, t)[:, None] * t
        n = np.linalg.norm(d, axis=1)
        bad = n < 1e-9
        if np.any(bad):  # a torn segment's stale frame: any direction across it
            alt = np.where(np.abs(t[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
            d[bad] = np.cross(t[bad], alt[bad])
            n[bad] = np.linalg.norm(d[bad], axis=1)
        d1[e] = d / n[:, None]
        extra = self._frame_points(state.time)
        if m.n_clusters:
            extra = np.vstack([extra, st.x[m.n_vertices:]])
        return Output(positions=st.x[:m.n_vertices], d1=d1, extra=extra, edge_broken=st.torn)

    def pieces(self, state: CSMState) -> np.ndarray:
        """First vertex of every piece of string (chain) and the vertex count, int [C + 1]."""
        return np.array(state.arrays.chain_start[:state.n_chains + 1])

    def save_state(self, state: CSMState) -> dict:
        """The complete state as arrays (see :meth:`load_state`)."""
        out = {k: np.array(v) for k, v in state.arrays._asdict().items()
               if k not in ("chain_start", "chain_strand")}
        out["time"] = np.float64(state.time)
        out["step"] = np.int64(state.step)
        return out

    def load_state(self, arrays: dict) -> CSMState:
        """A state from :meth:`save_state`'s arrays; ValueError naming a missing, misshapen or
        non-finite entry.  The chains follow from the torn segments."""
        m = self.model
        nv, ne, npt = m.n_vertices, m.n_edges, m.n_particles
        shapes = {"x": (npt, 3), "v": (npt, 3), "theta": (ne,), "u": (ne, 3), "quat": (nv, 4),
                  "plastic_strain": (ne,), "tension": (ne,), "torn": (ne,),
                  "cluster_quat": (m.n_clusters, 4), "time": (), "step": ()}
        out = check_state_arrays(arrays, shapes)
        if "rupture" not in arrays:
            raise ValueError("state lacks 'rupture'")
        rupture = np.asarray(arrays["rupture"], dtype=np.float64)
        if rupture.shape != (ne,) or np.any(np.isnan(rupture)):
            raise ValueError(f"state entry 'rupture' must be [{ne}] numbers (inf: never tears)")
        state = self.state()
        for k in shapes:
            if k not in ("time", "step"):
                getattr(state.arrays, k)[...] = out[k]
        state.arrays.rupture[...] = rupture
        state.n_chains = K.renumber_chains(m.strand_vertex_start, m.arrays.vertex_edge,
                                           state.arrays.torn, state.arrays.chain_start,
                                           state.arrays.chain_strand)
        state.time, state.step = float(out["time"]), int(out["step"])
        return state

    # ------------------------------------------------------------------ stepping
    def step(self, state_in: CSMState, state_out: CSMState, dt: float) -> None:
        """Advance ``state_in`` by ``dt`` [s] into ``state_out`` (which may be the same object).

        Raises ``ValueError`` for a bad ``dt`` or when ``damping * dt / substeps >= 1``, and
        :class:`SimulationDiverged` naming the step and strand when a position or velocity is
        not finite, a strain exceeds ``max_strain`` or a speed ``max_speed``.
        """
        if isinstance(dt, bool) or not (isinstance(dt, (float, int, np.floating))
                                        and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive finite number, got {dt!r}")
        st = self.settings
        h = float(dt) / st.substeps
        if st.damping * h >= 1.0:
            raise ValueError(f"damping = {st.damping} 1/s is too large for dt = {dt} s with "
                             f"{st.substeps} substep(s): the velocity factor would be "
                             f"{1.0 - st.damping * h:.3g}")
        if state_out is not state_in:
            state_out.assign(state_in)
        # parallel loops over chains hand out chunks of about n / (PARALLEL_CHUNKS threads)
        # chains to whichever thread is free: on cores shared with other work a thread that
        # gets less of its core takes fewer chains instead of holding up the step
        chunk = max(1, self.model.n_strands // (PARALLEL_CHUNKS * numba.get_num_threads()))
        old = numba.set_parallel_chunksize(chunk)
        try:
            for _ in range(st.substeps):
                self._substep(state_out, h)
        finally:
            numba.set_parallel_chunksize(old)
        state_out.step = state_in.step + 1
        if st.check_finite:
            self._check(state_out)

    def params(self, state: CSMState, h: float) -> StepParams:
        """The kernel scalars of a substep of ``h`` [s] from ``state``."""
        st = self.settings
        return StepParams(float(h), float(st.alpha), float(1.0 - st.damping * h),
                          int(st.shape_iterations), int(st.iterations),
                          _LENGTH[st.length_solver],
                          int(st.twist_iterations), _TENSION[st.tension],
                          float(st.tension_scale), float(min(1.0, h / st.tension_time)),
                          float(1.0 / st.tension_scale),
                          bool(st.flicking), float(st.flick_scale),
                          bool(st.plasticity), bool(st.tearing), int(state.n_chains))

    def kernel(self):
        """The chain driver for this model: parallel over chains when there are several
        threads, several chains and enough work (:data:`PARALLEL_MIN_WORK`)."""
        work = self.model.n_vertices * (self.settings.iterations + 10)
        if numba.get_num_threads() > 1 and self.model.n_strands > 1 and \
                work >= PARALLEL_MIN_WORK:
            return K.step_chains
        return K.step_chains_serial

    def _substep(self, s: CSMState, h: float) -> None:
        t_next = s.time + h
        self._set_targets(t_next)
        if self._loads:
            self._apply_loads(s.time)
        run = self.kernel()
        m, sc = self.model.arrays, self.scratch
        p = self.params(s, h)
        if self.model.n_clusters:
            torn = self._cluster_substep(s, run, p)
        elif self.contacts is not None:
            torn = self._contact_substep(s, run, p)
        elif self.contact_hook is not None:
            run(K.PH_TWIST_FORCE | K.PH_INTEGRATE, m, s.arrays, sc, p)
            sc.sm_weight[...] = 1.0
            self.contact_hook(self, s.arrays.x, sc.sm_weight)
            torn = run(K.PH_MOTION & ~(K.PH_TWIST_FORCE | K.PH_INTEGRATE), m, s.arrays, sc, p)
        else:
            torn = run(K.PH_MOTION, m, s.arrays, sc, p)
        self.last_torn = int(torn)
        if torn:
            s.n_chains = K.renumber_chains(self.model.strand_vertex_start, m.vertex_edge,
                                           s.arrays.torn, s.arrays.chain_start,
                                           s.arrays.chain_strand)
            p = self.params(s, h)
        run(K.PH_TWIST, m, s.arrays, sc, p)
        if self.model.n_ties:
            CL.tie_torques(m, s.arrays, sc)
        s.time = t_next

    def _contact_substep(self, s: CSMState, run, p: StepParams) -> int:
        """Phases 1-6 with segment contacts: integration; the pairs found and swept
        (colliding particles heavier); the contact hook; shape matching and strain limiting;
        one more sweep; colliders and velocities.  Returns the segments torn."""
        m, sc, a = self.model.arrays, self.scratch, s.arrays
        run(K.PH_TWIST_FORCE | K.PH_INTEGRATE, m, a, sc, p)
        sc.sm_weight[...] = 1.0
        c = self.contacts
        self._find(c, s)
        c.project(a.x, m.inv_mass, sc.sm_weight, a.torn, self.settings.contact_iterations)
        if self.contact_hook is not None:
            self.contact_hook(self, a.x, sc.sm_weight)
        torn = run(K.PH_SHAPE | K.PH_TENSION, m, a, sc, p)
        self.n_contacts = c.project(a.x, m.inv_mass, sc.sm_weight, a.torn, 1)
        run(K.PH_COLLIDE | K.PH_VELOCITY, m, a, sc, p)
        return torn

    def _cluster_substep(self, s: CSMState, run, p: StepParams) -> int:
        """Phases 1-6 with clusters (:mod:`.clusters`): integration of strings and clusters,
        tied ends onto their clusters, contacts of segments and cluster particles, shape
        matching of both, the strain limiting of all chains with their ties, the tensions,
        one more contact sweep, colliders and velocities.  Returns the segments torn."""
        m, sc, a = self.model.arrays, self.scratch, s.arrays
        run(K.PH_TWIST_FORCE | K.PH_INTEGRATE, m, a, sc, p)
        CL.cluster_integrate(m, a, sc, p)
        CL.cluster_centres(m, a, sc)
        CL.snap_ties(m, a, sc)
        sc.sm_weight[...] = 1.0
        sets = [c for c in (self.contacts, self.cluster_contacts) if c is not None]
        for c in sets:
            self._find(c, s)
            c.project(a.x, m.inv_mass, sc.sm_weight, a.torn, self.settings.contact_iterations)
        if self.contact_hook is not None:
            self.contact_hook(self, a.x, sc.sm_weight)
        run(K.PH_SHAPE, m, a, sc, p)
        CL.cluster_match(m, a, sc, p)
        CL.snap_ties(m, a, sc)
        CL.length_all(m, a, sc, p)
        run(K.PH_TENSION | K.PH_NO_LIMIT | K.PH_DEFER_TEAR, m, a, sc, p)
        torn = CL.tear_groups(m, a, sc, p)
        self.n_contacts = sum(c.project(a.x, m.inv_mass, sc.sm_weight, a.torn, 1) for c in sets)
        run(K.PH_COLLIDE | K.PH_VELOCITY, m, a, sc, p)
        CL.cluster_finish(m, a, sc, p)
        if self.cluster_contacts is not None:
            self.cluster_contacts.velocities(a.x, a.v, m.inv_mass, p.h)
        return torn

    def _find(self, contacts, s: CSMState) -> None:
        """Pairs of ``contacts`` at the positions after time integration; SimulationDiverged
        naming the particle whose position is not finite."""
        n = contacts.find(s.arrays.x, self.scratch.x_old, s.arrays.torn)
        if n < 0:
            strand, point, where = self._where(-1 - n)
            raise SimulationDiverged(s.step, s.time, strand, point, where=where)

    def _where(self, idx: int) -> tuple:
        """``(strand, point, where)`` of particle ``idx``: a strand vertex or a mesh vertex."""
        m = self.model
        if idx < m.n_vertices:
            strand = int(np.searchsorted(m.strand_vertex_start, idx, side="right") - 1)
            return strand, int(idx - m.strand_vertex_start[strand]), None
        c = int(m.arrays.vertex_cluster[idx])
        name = self.scene.meshes[c].name if self.scene is not None else f"mesh {c}"
        return -1, int(idx - m.arrays.cluster_start[c]), f"mesh {name!r}"

    def _set_targets(self, t: float, force: bool = False) -> None:
        """Targets of the held particles and clamped twist angles at time ``t``."""
        if not (self._moving or force) or self.scene is None:
            return
        m, sc = self.model, self.scratch
        frames = self.scene.frames
        rot = np.zeros((len(frames), 3, 3))
        origin = np.zeros((len(frames), 3))
        for f in (range(len(frames)) if force else self._moving):
            rot[f], origin[f] = frames[f].pose(t)
        rows = self._drive_rows
        if force:
            sc.drive_pos[...] = m.drive_local
        fr = m.drive_frame[rows]
        keep = np.isin(fr, self._moving) | force
        rows, fr = rows[keep], fr[keep]
        sc.drive_pos[rows] = origin[fr] + np.einsum("nij,nj->ni", rot[fr], m.drive_local[rows])
        tf = m.twist_frame
        keep = np.nonzero(np.isin(tf, self._moving) | force)[0]
        sc.twist_target[keep] = np.einsum("nij,nj->ni", rot[tf[keep]], m.twist_local[keep])

    def _apply_loads(self, t: float) -> None:
        f = self.scratch.f_load
        f[...] = 0.0
        for k, ld in enumerate(self._loads):
            f[self.model.load_vertex[k]] += ld.at(t)

    def _frame_points(self, t: float) -> np.ndarray:
        """Origin and two axis tips of every frame at ``t`` [m], [3 F, 3]."""
        if self.scene is None or not self.scene.frames:
            return np.zeros((0, 3))
        pts = []
        for f, fr in enumerate(self.scene.frames):
            rot, origin = fr.pose(t)
            size = self.scene.frame_size(f)
            pts += [origin, origin + size * rot[:, 0], origin + size * rot[:, 1]]
        return np.asarray(pts)

    def _check(self, s: CSMState) -> None:
        st = self.settings
        code, idx, value = K.check_state(
            self.model.arrays, s.arrays,
            math.inf if st.max_strain is None else float(st.max_strain),
            math.inf if st.max_speed is None else float(st.max_speed))
        if code == K.CHECK_OK:
            return
        strand, point, where = self._where(int(idx))
        if code == K.CHECK_NONFINITE:
            raise SimulationDiverged(s.step, s.time, strand, point, where=where)
        if code == K.CHECK_STRAIN:
            what = (f"strain {value:.3g} past the maximum length exceeds max_strain = "
                    f"{st.max_strain:g} at segment {int(self.model.arrays.vertex_edge[idx])}")
        else:
            what = f"speed {value:.3g} m/s exceeds max_speed = {st.max_speed:g} m/s"
        raise SimulationDiverged(s.step, s.time, strand, point, what=what, where=where)
