"""The position-based elastic rod solver (Umetani, Schmidt and Stam 2014)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import ClassVar

import numba
import numpy as np

from ..collision.grid import SEARCH_7, SEARCH_27
from ..collision.segment_contact import SegmentSet
from ..sim.scene import Scene
from ..sim.solver import Output, solver_inputs
from ..sim.validate import SimulationDiverged, check_state_arrays
from . import kernels as K
from .compile import compile_scene
from .constraints import FREE_COMPLIANCE
from .kernel_args import ContactArrays, PBDModelArrays, Scratch, StateArrays, StepParams
from .model import PBDModel, PBDState
from .stiffness import alphas_from_stiffness, effective_inverse_mass, orientation_compliance
from .strand_contact import ContactBuffers, contact_segments, contact_voxel

__all__ = ["PBDSettings", "PBDSolver"]

_ORDERS = {"interleaved": K.ORDER_INTERLEAVED, "sequential": K.ORDER_SEQUENTIAL,
           "random": K.ORDER_RANDOM}
AUTO_REFERENCE_ITERATIONS = 10  # passes per substep the automatic substep rule is set for
_GRAVITY = {"corrected": K.GRAVITY_CORRECTED, "full": K.GRAVITY_FULL, "none": K.GRAVITY_NONE}

#: Below this much work per kernel call (edges x passes x substeps) a step runs on the calling
#: thread: waking other threads costs more than they save, and on cores shared with other
#: work a parallel region waits for its slowest thread.
PARALLEL_MIN_WORK = 4000

#: Parallel loops over strands are cut into about this many chunks per thread, handed out to
#: the threads as they become free.
PARALLEL_CHUNKS = 8


@dataclass(frozen=True)
class PBDSettings:
    """Solver options.  The defaults give physical answers for physical materials (XPBD
    compliance from the material, direct edge-length solve, substeps chosen from the bending
    stiffness); :meth:`interactive` is the paper's fixed-budget behaviour.

    iterations : constraint passes per substep (>= 1).
    substeps : substeps per ``step`` call (>= 1), or ``None`` (default): chosen per ``dt`` by
        :meth:`PBDSolver.substeps_for` (see docs/pbd.md, "Substeps"), at most ``max_substeps``.
    max_substeps : cap on the automatic substep count (>= 1).
    order : ``"interleaved"`` (bidirectional interleaving of section 6, default),
        ``"sequential"`` or ``"random"`` (a new permutation per pass).
    gravity_mode : ``"corrected"`` (Algorithm 1), ``"full"`` or ``"none"`` on ghost points.
    stiffness : ``"xpbd"`` (compliance from the material; iteration-independent; default) or
        ``"alpha"`` (relaxed projections, eq. 21; alphas from the material unless the strand
        sets them).
    length_solver : ``"direct"`` (all edge lengths of an open strand in one tridiagonal solve
        per pass; default) or ``"gauss-seidel"`` (one projection per edge, as in the paper).
    damping : velocity damping rate [1/s]; velocities scale by ``1 - damping h`` per substep
        ``h``; a substep with ``damping h >= 1`` (which would stop every point dead) is refused.
    seed : seed of the random order.
    self_collision : contacts between the segments of each strand (capsules of the strand's
        contact radius); keeps twisted loops from passing through themselves.  Cost grows with
        the square of the edges per strand (with ``strand_collision`` on, the grid finds these
        pairs too, and the cost grows with the contacts only).
    strand_collision : capsule contacts between the edges of different strands (the contact
        radius of each edge: the mean of its vertices'), found once per substep by a uniform
        grid and projected in every pass; off by default (docs/pbd.md).  Strands are then
        stepped together (no longer independent).
    contact_search : neighbourhood of the grid search, 27 voxels (exact; default) or 7 (the
        paper's faster search, which misses a few near pairs; docs/collision.md).
    contact_margin : pairs are found once per substep among edges closer than their contact
        distance plus this margin [m] (>= 0), then tested in every pass; ``None`` (default):
        twice the largest strand radius.
    check_finite : stop with :class:`SimulationDiverged` when a step produces NaN or inf, or
        exceeds ``max_strain`` or ``max_speed`` (checked once per step).
    max_strain : largest allowed edge strain ``| |e| / L - 1 |`` (> 0), or ``None`` (no bound).
    max_speed : largest allowed point speed [m/s] (> 0), or ``None`` (no bound).
    """

    iterations: int = 10
    substeps: int | None = None
    order: str = "interleaved"
    gravity_mode: str = "corrected"
    stiffness: str = "xpbd"
    length_solver: str = "direct"
    damping: float = 0.0
    seed: int = 0
    self_collision: bool = False
    strand_collision: bool = False
    contact_search: int = 27
    contact_margin: float | None = None
    check_finite: bool = True
    max_substeps: int = 500
    max_strain: float | None = 0.5
    max_speed: float | None = 1e3

    #: Value kinds of the fields whose default is ``None`` (for readers of settings files).
    OPTIONAL_KINDS: ClassVar[dict] = {"substeps": int, "max_strain": float, "max_speed": float,
                                      "contact_margin": float}

    def __post_init__(self):
        for name in ("iterations", "substeps", "max_substeps"):
            v = getattr(self, name)
            if name == "substeps" and v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.order not in _ORDERS:
            raise ValueError(f"unknown order {self.order!r}; choose one of {sorted(_ORDERS)}")
        if self.gravity_mode not in _GRAVITY:
            raise ValueError(f"unknown gravity_mode {self.gravity_mode!r}; choose one of "
                             f"{sorted(_GRAVITY)}")
        if self.stiffness not in ("alpha", "xpbd"):
            raise ValueError(f"unknown stiffness {self.stiffness!r}; choose 'alpha' or 'xpbd'")
        if self.length_solver not in ("gauss-seidel", "direct"):
            raise ValueError(f"unknown length_solver {self.length_solver!r}; choose "
                             "'gauss-seidel' or 'direct'")
        if not math.isfinite(self.damping) or self.damping < 0:
            raise ValueError(f"damping must be >= 0, got {self.damping!r}")
        for name in ("self_collision", "strand_collision", "check_finite"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if isinstance(self.contact_search, bool) or self.contact_search not in (SEARCH_7,
                                                                                 SEARCH_27):
            raise ValueError(f"contact_search must be 7 or 27 (voxels), got "
                             f"{self.contact_search!r}")
        v = self.contact_margin
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))
                              or not math.isfinite(v) or v < 0):
            raise ValueError(f"contact_margin must be a finite length >= 0 [m] or None, got "
                             f"{v!r}")
        for name in ("max_strain", "max_speed"):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not v > 0 or math.isnan(v):
                raise ValueError(f"{name} must be a positive number or None, got {v!r}")

    @classmethod
    def interactive(cls, **overrides) -> PBDSettings:
        """The paper's fixed-budget behaviour: relaxed alpha stiffness, Gauss-Seidel edge
        lengths, one substep of 10 passes per step, whatever the material.  Cheap and stable,
        but a physical material comes out too soft and long strands stretch (docs/pbd.md)."""
        kw = dict(iterations=10, substeps=1, stiffness="alpha", length_solver="gauss-seidel")
        kw.update(overrides)
        return cls(**kw)

    def to_dict(self) -> dict:
        return asdict(self)


def _readonly(a):
    """A read-only view of an array (other values unchanged)."""
    if isinstance(a, np.ndarray):
        a = a.view()
        a.flags.writeable = False
    return a


class PBDSolver:
    """Position-based elastic rods: compiles a :class:`~strandlab.sim.scene.Scene` into a
    :class:`~strandlab.pbd.model.PBDModel` and steps it (the solver protocol of
    :mod:`strandlab.sim.solver`).

    ``solver.step(state_in, state_out, dt)`` advances by ``dt`` [s]; ``state_out`` may be
    ``state_in``.  All scratch memory is allocated here, once.  ``scene`` may also be an
    already compiled PBDModel.
    """

    name = "pbd"
    Settings = PBDSettings

    def __init__(self, scene: Scene | PBDModel, settings: PBDSettings | None = None):
        model, self.settings = solver_inputs(type(self), scene, settings, compile_scene,
                                             PBDModel)
        self.model = model
        self.scene = model.scene
        st = self.settings
        m = model
        ns, ne, no, nc, npnt = m.n_strands, m.n_edges, len(m.oe_idx), len(m.co_idx), m.n_points
        self._order = _ORDERS[st.order]
        self._gravity_mode = _GRAVITY[st.gravity_mode]
        self._xpbd = st.stiffness == "xpbd"
        direct = st.length_solver == "direct"
        self._direct = np.array([direct and not c for c in m.strand_closed], dtype=np.bool_)
        # stiffness
        self._oe_compliance = orientation_compliance(m.oe_stiffness, m.oe_rest_length)
        self._co_compliance = None  # set below, after sorting the couplings
        if self._xpbd:
            self._edge_compliance = m.edge_rest_length / m.edge_stretch
        else:
            self._edge_compliance = np.zeros(ne)
        self._w_oe = effective_inverse_mass(m.x0, m.inv_mass, m.oe_idx, m.oe_rest_length)
        # couplings sorted by strand; a strand whose couplings only reach kinematic points is
        # independent of the others, and independent scenes run each strand start to finish
        order = np.argsort(m.co_strand, kind="stable")
        self._co_idx = np.ascontiguousarray(m.co_idx[order])
        self._co_rot = np.ascontiguousarray(m.co_rot[order])
        self._co_len = np.ascontiguousarray(m.co_rest_length[order])
        self._co_stiff = np.ascontiguousarray(m.co_stiffness[order])
        self._co_user_alpha = np.ascontiguousarray(m.co_alpha[order])
        self._strand_co_start = np.searchsorted(m.co_strand[order],
                                                np.arange(ns + 1)).astype(np.int64)
        local = np.all(m.inv_mass[self._co_idx[:, :3]] == 0.0, axis=1) if nc else np.ones(0, bool)
        self.independent_strands = bool(np.all(local) and len(m.pin_point) == 0
                                        and len(m.dist_i) == 0 and len(m.slide_point) == 0
                                        and not st.strand_collision)
        self._w_co = effective_inverse_mass(m.x0, m.inv_mass, self._co_idx, self._co_len,
                                            self._co_rot)
        self._co_free = np.ascontiguousarray(m.co_free[order])
        self._co_compliance = np.where(self._co_free, FREE_COMPLIANCE,
                                       orientation_compliance(self._co_stiff, self._co_len))
        self._alpha_dt = None
        self._oe_alpha = np.zeros((no, 3))
        self._co_alpha = np.zeros((nc, 3))
        if st.self_collision and ns:
            self._self_thickness = 2.0 * np.asarray(m.strand_radius, dtype=np.float64)
            min_len = np.array([m.edge_rest_length[a:b].min() for a, b in
                                zip(m.strand_edge_start[:-1], m.strand_edge_start[1:])])
            self._self_skip = (np.ceil(self._self_thickness / min_len) + 1).astype(np.int64)
        else:
            self._self_thickness = np.zeros(ns)
            self._self_skip = np.zeros(ns, dtype=np.int64)
        self._contact = bool(st.strand_collision and ne)
        segs = contact_segments(m, enabled=self._contact,
                                self_skip=self._self_skip if st.self_collision else None)
        if self._contact and st.self_collision:
            self._self_thickness = np.zeros(ns)  # the grid finds the pairs within strands too
        self._contact_margin = (2.0 * segs.max_radius if st.contact_margin is None
                                else float(st.contact_margin))
        self._contact_voxel = contact_voxel(m, segs, self._contact_margin)
        self._contact_buf = ContactBuffers(segs, npnt)
        self._backup = PBDState(m.x0.copy(), m.v0.copy(), np.zeros((ne, 3)))
        self._moving = np.nonzero(m.frame_moving)[0]
        self._drv_mask = np.isin(m.driven_frame, self._moving)
        self._drv_points = m.driven_point[self._drv_mask]
        self._drv_frames = m.driven_frame[self._drv_mask]
        self._drv_local = m.driven_local[self._drv_mask]
        point_drive = np.full(npnt, -1, dtype=np.int64)
        point_drive[self._drv_points] = np.arange(len(self._drv_points))
        self._slide_origin = np.zeros((len(m.slide_point), 3))
        self._slide_dir = np.zeros((len(m.slide_point), 3))
        self._set_slides(0.0)
        self._loads = self.scene.loads if self.scene is not None else ()
        self._load_force = np.zeros((len(self._loads), 3))
        self._n_strand_points = m.n_vertices + ne
        self._buffers: dict[int, tuple] = {}
        self._args = PBDModelArrays(
            inv_mass=m.inv_mass, collide_radius=m.collide_radius,
            point_friction=m.point_friction, point_drive=point_drive,
            n_strand_points=self._n_strand_points,
            strand_vertex_start=m.strand_vertex_start, strand_edge_start=m.strand_edge_start,
            strand_oe_start=m.strand_oe_start, strand_co_start=self._strand_co_start,
            strand_direct=self._direct, self_thickness=self._self_thickness,
            self_skip=self._self_skip, edge_p0=m.edge_p0, edge_p1=m.edge_p1,
            edge_ghost=m.edge_ghost, edge_rest_length=m.edge_rest_length,
            ghost_rest_distance=m.ghost_rest_distance, edge_compliance=self._edge_compliance,
            oe_idx=m.oe_idx, oe_rest_omega=m.oe_rest_omega, oe_rest_length=m.oe_rest_length,
            oe_compliance=self._oe_compliance, co_idx=self._co_idx, co_rot=self._co_rot,
            co_rest_length=self._co_len, co_compliance=self._co_compliance,
            pin_point=m.pin_point, pin_targets=m.pin_targets, pin_weights=m.pin_weights,
            slide_point=m.slide_point, dist_i=m.dist_i, dist_j=m.dist_j,
            dist_rest=m.dist_rest, dist_compliance=m.dist_compliance, planes=m.planes,
            spheres=m.spheres, capsules=m.capsules, collider_friction=m.collider_friction,
            gravity=m.gravity, eye=np.eye(3)[None].copy(), co_rest_omega=np.zeros((nc, 3)))
        # all read-only: one array type per role, so each function compiles once
        self._args = PBDModelArrays(*(_readonly(a) for a in self._args))
        self._contact_args = ContactArrays(
            segs=SegmentSet(*(_readonly(a) for a in segs)), grid=self._contact_buf.grid,
            pairs=self._contact_buf.pairs, status=self._contact_buf.status,
            mass_scale=self._contact_buf.mass_scale)
        ne1 = max(ne, 1)
        self._scratch = Scratch(
            x_pred=np.zeros((npnt, 3)), share=np.zeros(ne), lam_len=np.zeros(ne),
            lam_oe=np.zeros((no, 3)), lam_co=np.zeros((nc, 3)),
            lam_dist=np.zeros(len(m.dist_i)), perm=np.zeros(ne1, dtype=np.int64),
            tri_b=np.zeros(ne1), tri_c=np.zeros(ne1),
            tri_d=np.zeros(ne1), nrm=np.zeros((ne1, 3)), contact_depth=np.zeros(npnt),
            contact_normal=np.zeros((npnt, 3)), contact_mu=np.zeros(npnt))
        self._h_max = None
        self._auto_substeps: dict[float, int] = {}

    # ------------------------------------------------------------------ parameters
    def alphas(self, h: float) -> tuple[np.ndarray, np.ndarray]:
        """Alphas used for substep ``h`` [s]: (interior [O, 3], couplings [C, 3]).

        Couplings are in the solver's order (sorted by strand), see ``coupling_order``.
        """
        if self._alpha_dt != h:
            m, n = self.model, self.settings.iterations
            oe = alphas_from_stiffness(m.oe_stiffness, m.oe_rest_length, self._w_oe, h, n)
            co = alphas_from_stiffness(self._co_stiff, self._co_len, self._w_co, h, n)
            self._oe_alpha[...] = np.where(np.isnan(m.oe_alpha), oe, m.oe_alpha)
            self._co_alpha[...] = np.where(np.isnan(self._co_user_alpha), co, self._co_user_alpha)
            self._co_alpha[self._co_free] = 0.0
            self._alpha_dt = h
        return self._oe_alpha, self._co_alpha

    def frame_transforms(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Rotations [F, 3, 3] and origins [F, 3] of the kinematic frames at time ``t``."""
        m = self.model
        rot = np.array(m.frame_rotation)
        origin = np.array(m.frame_origin)
        if self.scene is not None:
            for f in self._moving:
                rot[f], origin[f] = self.scene.frames[f].pose(t)
        return rot, origin

    def _set_slides(self, t: float) -> None:
        """World lines of the sliding ends at time ``t``."""
        m = self.model
        if not len(m.slide_point):
            return
        rot, origin = self.frame_transforms(t)
        r = rot[m.slide_frame]
        self._slide_origin[...] = origin[m.slide_frame] + np.einsum("nij,nj->ni", r,
                                                                    m.slide_local)
        self._slide_dir[...] = np.einsum("nij,nj->ni", r, m.slide_axis)

    # ------------------------------------------------------------------ protocol
    def state(self) -> PBDState:
        """A new state at the scene's initial configuration."""
        return self.model.state()

    def output(self, state: PBDState) -> Output:
        """Strand vertices [V, 3], unit material direction d1 per edge [E, 3] and the extra
        points [X, 3] (frames, meshes, bodies) of ``state``.  d1 is the direction from the
        edge midpoint to its ghost point, made perpendicular to the edge."""
        m = self.model
        nv, ne = m.n_vertices, m.n_edges
        x = state.x
        if ne:
            a, b = x[m.edge_p0], x[m.edge_p1]
            t = b - a
            t /= np.linalg.norm(t, axis=1)[:, None]
            d = x[nv:nv + ne] - 0.5 * (a + b)
            d -= np.einsum("ij,ij->i", d, t)[:, None] * t
            d /= np.linalg.norm(d, axis=1)[:, None]
        else:
            d = np.zeros((0, 3))
        return Output(positions=x[:nv], d1=d, extra=x[nv + ne:])

    def save_state(self, state: PBDState) -> dict:
        """The complete state as arrays (see :meth:`load_state`)."""
        return {"x": state.x.copy(), "v": state.v.copy(), "mid_v": state.mid_v.copy(),
                "time": np.float64(state.time), "step": np.int64(state.step)}

    def load_state(self, arrays: dict) -> PBDState:
        """A state from :meth:`save_state`'s arrays; ValueError naming a missing, misshapen or
        non-finite entry."""
        m = self.model
        out = check_state_arrays(arrays, {"x": (m.n_points, 3), "v": (m.n_points, 3),
                                          "mid_v": (m.n_edges, 3), "time": (), "step": ()},
                                 nan_ok=("mid_v",))
        step = int(out["step"])
        return PBDState(x=out["x"].astype(np.float64), v=out["v"].astype(np.float64),
                        mid_v=out["mid_v"].astype(np.float64), time=float(out["time"]),
                        step=step)

    # ------------------------------------------------------------------ substeps
    def max_stable_substep(self) -> float:
        """Longest substep [s] the automatic rule allows (before the iteration factor).

        ``h_max = min over strands of l_min^2 / (2 kappa)`` with ``kappa = sqrt(B / (rho A))``
        [m^2/s] (``B`` the larger bending stiffness, ``l_min`` the strand's shortest rest edge):
        the highest bending mode of a discrete rod has ``omega_max = 4 kappa / l_min^2``, and
        ``h omega_max <= 2`` is the stability limit of the explicit (symplectic Euler) step that
        position-based dynamics starts from.  ``inf`` when no strand bends.
        """
        if self._h_max is None:
            m = self.model
            h = math.inf
            for s in range(m.n_strands):
                mat = m.materials[int(m.strand_material[s])]
                e0, e1 = int(m.strand_edge_start[s]), int(m.strand_edge_start[s + 1])
                if e1 <= e0:
                    continue
                bend = max(mat.stiffness[0], mat.stiffness[1])
                kappa = math.sqrt(bend / (mat.density * mat.area))
                lmin = float(np.min(m.edge_rest_length[e0:e1]))
                if kappa > 0.0:
                    h = min(h, lmin * lmin / (2.0 * kappa))
            self._h_max = h
        return self._h_max

    def substeps_for(self, dt: float) -> int:
        """Substeps used for a step of ``dt`` [s].

        ``settings.substeps`` when given.  Otherwise (``None``):
        ``n = ceil(dt / h_max * max(1, 10 / iterations))``, at least ``ceil(2 damping dt)`` (so
        that the damping factor ``1 - damping h`` stays >= 1/2), clipped to
        ``[1, max_substeps]``; ``h_max`` from :meth:`max_stable_substep`.  With the default 10
        passes this keeps a self-weight cantilever within 1 % of ``q L^4 / (8 E I)``; fewer
        passes per substep need proportionally more substeps.
        """
        st = self.settings
        if st.substeps is not None:
            return int(st.substeps)
        n = self._auto_substeps.get(dt)
        if n is None:
            h = self.max_stable_substep()
            n = 1.0
            if math.isfinite(h):
                n = dt / h * max(1.0, AUTO_REFERENCE_ITERATIONS / st.iterations)
            n = max(n, 2.0 * st.damping * dt)
            n = int(min(st.max_substeps, max(1, math.ceil(n - 1e-9))))
            self._auto_substeps[dt] = n
        return n

    # ------------------------------------------------------------------ stepping
    def check_step(self, dt: float) -> tuple:
        """The substeps ``n`` and substep ``h`` [s] of a step of ``dt`` [s]; ValueError where
        the damping would stop every point in a substep (:func:`strandlab.sim.runner.check_run`
        calls this before a run writes anything)."""
        n = self.substeps_for(dt)
        h = dt / n
        damping = self.settings.damping
        if damping * h >= 1.0:
            raise ValueError(f"damping = {damping} 1/s is too large for dt = {dt} s with "
                             f"{n} substep(s): the velocity factor 1 - damping * dt / substeps "
                             f"= {1.0 - damping * h:.3g} would stop every point; use a "
                             f"smaller dt, more substeps or less damping")
        return n, h

    def step(self, state_in: PBDState, state_out: PBDState, dt: float) -> None:
        """Advance ``state_in`` by ``dt`` [s] into ``state_out`` (which may be the same object).

        Runs :meth:`substeps_for` ``(dt)`` substeps, all in one kernel call unless point loads,
        or moving frames in a scene of independent strands, need work between substeps.
        Raises ``ValueError`` for a bad ``dt`` or when ``damping * dt / substeps >= 1``, and
        :class:`SimulationDiverged` (after the step) when a position or velocity is not
        finite, an edge strain exceeds ``max_strain`` or a point's speed exceeds ``max_speed``.
        """
        if isinstance(dt, bool) or not (isinstance(dt, (float, int, np.floating))
                                        and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive finite number, got {dt!r}")
        st = self.settings
        dt = float(dt)
        n, h = self.check_step(dt)
        if not self._contact:
            self._advance(state_in, state_out, n, h)
        else:
            self._advance_with_contacts(state_in, state_out, n, h)
        state_out.step += 1
        if st.check_finite:
            self._check(state_out)

    def _advance_with_contacts(self, state_in: PBDState, state_out: PBDState, n: int,
                               h: float) -> None:
        """:meth:`_advance` with contacts between strands.  When the step found more candidate
        pairs than the buffer holds, the buffer grows (outside the kernels) and the step is taken
        again from ``state_in``."""
        buf = self._contact_buf
        same = state_out is state_in
        if same:
            self._backup.assign(state_in)
        for _ in range(8):
            buf.status[:] = 0
            self._advance(state_in, state_out, n, h)
            needed = int(buf.status[0])
            if needed <= len(buf.pairs):
                return  # a non-finite position (status[1]) is reported by _check
            buf.grow(needed)
            self._contact_args = self._contact_args._replace(pairs=buf.pairs)
            if same:
                state_in.assign(self._backup)
        raise RuntimeError("the contact pair buffer did not settle after 8 tries")

    def _advance(self, state_in: PBDState, state_out: PBDState, n: int, h: float) -> None:
        """``n`` substeps of ``h`` [s] from ``state_in`` into ``state_out`` (step count
        unchanged)."""
        st = self.settings
        oe_alpha, co_alpha = self.alphas(h)
        drive_pos, slide_origin, slide_dir = self._buffer(n)
        t = state_in.time
        for k in range(n):
            if len(self._drv_points):
                rot, origin = self.frame_transforms(t + h)
                drive_pos[k] = origin[self._drv_frames] + np.einsum(
                    "nij,nj->ni", rot[self._drv_frames], self._drv_local)
            if len(self.model.slide_point):
                if len(self._moving):
                    self._set_slides(t + h)
                slide_origin[k] = self._slide_origin
                slide_dir[k] = self._slide_dir
            t += h
        base_seed = (st.seed * 1000003 + state_in.step * n * 7919 + 17) % (2 ** 31)
        sin = StateArrays(state_in.x, state_in.v, state_in.mid_v)
        sout = StateArrays(state_out.x, state_out.v, state_out.mid_v)
        split = bool(self._loads) or (self.independent_strands and (
            len(self._drv_points) > 0 or np.any(state_in.v[self._n_strand_points:])))
        if split:
            if state_out is not state_in:
                state_out.assign(state_in)
            for k in range(n):
                if self._loads:
                    self._apply_loads(state_out, state_out.time, h)
                params = StepParams(h, 1, st.iterations, self._order,
                                    (base_seed + 7919 * k) % (2 ** 31), self._xpbd,
                                    self._gravity_mode, float(st.damping), oe_alpha, co_alpha,
                                    drive_pos[k:k + 1], slide_origin[k:k + 1],
                                    slide_dir[k:k + 1], *self._contact_params())
                self._run_kernel(1, sout, sout, params)
                state_out.time += h
        else:
            params = StepParams(h, n, st.iterations, self._order, base_seed, self._xpbd,
                                self._gravity_mode, float(st.damping), oe_alpha, co_alpha,
                                drive_pos, slide_origin, slide_dir, *self._contact_params())
            self._run_kernel(n, sin, sout, params)
            time = state_in.time
            for _ in range(n):
                time += h
            state_out.time = time
            state_out.step = state_in.step

    def _contact_params(self) -> tuple[bool, float, int, float]:
        """The contact fields of :class:`StepParams`."""
        return (self._contact, float(self._contact_voxel), int(self.settings.contact_search),
                float(self._contact_margin))

    def _check(self, s: PBDState) -> None:
        """Non-finite values, edge strain and point speed, once per step (one kernel pass)."""
        st, m = self.settings, self.model
        code, idx, strand, value = K.check_state(
            s.x, s.v, m.inv_mass, m.point_strand, m.edge_p0, m.edge_p1, m.edge_rest_length,
            math.inf if st.max_strain is None else float(st.max_strain),
            math.inf if st.max_speed is None else float(st.max_speed))
        if code == K.CHECK_OK:
            return
        if code == K.CHECK_NONFINITE:
            raise SimulationDiverged(s.step, s.time, int(strand), int(idx))
        if code == K.CHECK_STRAIN:
            what = (f"edge strain {value:.3g} exceeds max_strain = {st.max_strain:g} at edge "
                    f"{int(idx)}")
            point = int(m.edge_p1[idx])
        else:
            what = f"speed {value:.3g} m/s exceeds max_speed = {st.max_speed:g} m/s"
            point = int(idx)
        raise SimulationDiverged(s.step, s.time, int(strand), point, what=what)

    def _run_kernel(self, n_sub: int, sin: StateArrays, sout: StateArrays,
                    params: StepParams) -> None:
        """One kernel call; the contact arrays go only to the kernels that use them (every
        argument adds to the compile time of a kernel's Python entry point)."""
        kernel = self._kernel(n_sub)
        # parallel loops hand out strands in chunks to whichever thread is free (dynamic
        # scheduling): on cores shared with other work a thread that gets less of its core
        # then takes fewer strands instead of holding up the step
        chunk = 0
        if kernel is K.step_independent or kernel is K.step_coupled:
            chunk = max(1, self.model.n_strands // (PARALLEL_CHUNKS * numba.get_num_threads()))
        old = numba.set_parallel_chunksize(chunk)
        try:
            if self.independent_strands:
                kernel(self._args, sin, sout, self._scratch, params)
            else:
                kernel(self._args, sin, sout, self._scratch, params, self._contact_args)
        finally:
            numba.set_parallel_chunksize(old)

    def _kernel(self, n_sub: int):
        """The kernel for a call of ``n_sub`` substeps: parallel over strands when there are
        several threads, several strands and at least ``PARALLEL_MIN_WORK`` of work."""
        work = self.model.n_edges * self.settings.iterations * n_sub
        parallel = (self.model.n_strands > 1 and work >= PARALLEL_MIN_WORK
                    and numba.get_num_threads() > 1)
        if self.independent_strands:
            return K.step_independent if parallel else K.step_independent_serial
        return K.step_coupled if parallel else K.step_coupled_serial

    def _buffer(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-substep targets of moving driven points and sliding ends for ``n`` substeps."""
        buf = self._buffers.get(n)
        if buf is None:
            ns = len(self.model.slide_point)
            buf = (np.zeros((n, len(self._drv_points), 3)), np.zeros((n, ns, 3)),
                   np.zeros((n, ns, 3)))
            self._buffers[n] = buf
        return buf

    def _apply_loads(self, s: PBDState, t: float, h: float) -> None:
        """Point loads: the velocity of each loaded point gains ``h F / m`` before prediction."""
        m = self.model
        for k, ld in enumerate(self._loads):
            self._load_force[k] = ld.at(t)
        np.add.at(s.v, m.load_point, h * m.inv_mass[m.load_point, None] * self._load_force)
