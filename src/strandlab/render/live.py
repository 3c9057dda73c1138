"""A simulation that runs while it is watched: parameters changed, paused, stepped, dragged.

:class:`LiveSimulation` steps a :class:`~strandlab.sim.runner.Simulation` through the solver
protocol only, so it serves every registered solver.  Requests (gravity, stiffness, any field of
the solver's Settings, pause, step, reset, grabbing a vertex) may come from any thread; they are
queued and applied between two steps, by the thread that steps.  A change of gravity, stiffness
or settings rebuilds the solver from the changed scene and carries the state over with
``save_state`` / ``load_state`` (the layout of a state does not depend on these), so no solver
needs a way to change them in place.

Dragging: the grabbed vertex carries a point load (every solver takes point loads) that pulls it
to the target position within about two steps: ``F = m (d / dt^2 - v / dt) / 2 - m g`` with
``m`` the vertex's mass (density x area x half its rest edges), ``d`` the offset to the target
(at most twice the strand's mean rest edge per step), ``v`` its velocity over the last step and
``g`` gravity, which it cancels.  For a free point the offset and the velocity (times ``dt``)
shrink together by ``1/sqrt(2)`` every step (a damped turn of 45 degrees).  It is a spring of
stiffness ``m / (2 dt^2)`` with about critical damping, as stiff as stays stable for every
solver when the force is computed from the state before the step: where the strand resists
(the weight of the strand below a lifted vertex, its bending), the vertex stays that force
divided by this stiffness away from the target.  A vertex held by the solver (clamped) does
not move.
"""
from __future__ import annotations

import dataclasses
import math
import threading
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..io.trajectory import edge_vertices
from ..sim.runner import Simulation
from ..sim.scene import PointLoad, Scene
from ..sim.solver import get_solver, make_settings
from ..sim.validate import SimulationDiverged
from .playback import positive_number

__all__ = ["LiveSimulation", "Snapshot", "SettingField", "settings_fields", "parse_setting",
           "vertex_masses", "drag_force", "MAIN_SETTINGS"]

#: Settings shown first when a solver has them (the paper's main interactive parameters).
MAIN_SETTINGS = ("iterations", "substeps", "damping")
_DRAG_GAIN = 0.5


# ---------------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class SettingField:
    """One field of a solver's Settings: ``kind`` is ``"int"``, ``"float"``, ``"bool"`` or
    ``"str"``; ``optional`` when ``None`` is allowed (e.g. automatic substeps)."""

    name: str
    kind: str
    optional: bool
    value: object


def _kind(value, optional_kind) -> str | None:
    t = optional_kind if value is None else type(value)
    if t is bool or isinstance(value, (bool, np.bool_)):
        return "bool"
    for k, types in (("int", (int, np.integer)), ("float", (float, np.floating)), ("str", str)):
        if isinstance(t, type) and issubclass(t, types):
            return k
    return None


def settings_fields(settings) -> list[SettingField]:
    """The editable fields of a solver's Settings dataclass (booleans, numbers, strings), the
    main ones (:data:`MAIN_SETTINGS`) first.  Optional fields are those whose default is None
    (the kind of their values from the class's ``OPTIONAL_KINDS``, else float)."""
    cls = type(settings)
    kinds = getattr(cls, "OPTIONAL_KINDS", {})
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        value = getattr(settings, f.name)
        optional = f.default is None or value is None
        kind = _kind(value, kinds.get(f.name, float))
        if kind is not None:
            out.append(SettingField(f.name, kind, optional, value))
    rank = {n: i for i, n in enumerate(MAIN_SETTINGS)}
    return sorted(out, key=lambda s: rank.get(s.name, len(rank)))


def parse_setting(field: SettingField, text):
    """The value of ``field`` from ``text`` (a GUI entry): ``"auto"``, ``"none"`` or empty gives
    None for an optional field; ValueError naming the field otherwise."""
    if not isinstance(text, str):
        return text
    s = text.strip()
    if field.optional and s.lower() in ("", "auto", "none"):
        return None
    try:
        if field.kind == "int":
            return int(s)
        if field.kind == "float":
            return float(s)
    except ValueError:
        what = "an integer" if field.kind == "int" else "a number"
        auto = " or auto" if field.optional else ""
        raise ValueError(f"{field.name} must be {what}{auto}, got {text!r}") from None
    if field.kind == "bool":
        if s.lower() not in ("true", "false"):
            raise ValueError(f"{field.name} must be true or false, got {text!r}")
        return s.lower() == "true"
    return s


# ---------------------------------------------------------------------------------- dragging
def vertex_masses(scene: Scene) -> np.ndarray:
    """Mass of every strand vertex [kg], [V]: density x section area x half the rest length of
    each edge that touches it."""
    if not scene.n_strands:
        return np.zeros(0)
    rest = np.concatenate([s.rest_points for s in scene.strands])
    rho_a = np.array([s.material.density * s.material.area for s in scene.strands])
    a, b = edge_vertices(scene.strand_vertex_offsets, scene.strand_edge_offsets, scene.closed)
    strand = np.repeat(np.arange(scene.n_strands), np.diff(scene.strand_edge_offsets))
    half = 0.5 * rho_a[strand] * np.linalg.norm(rest[b] - rest[a], axis=1)
    m = np.zeros(scene.n_vertices)
    np.add.at(m, a, half)
    np.add.at(m, b, half)
    return m


def drag_force(mass: float, x, v, target, dt: float, gravity, max_offset: float) -> np.ndarray:
    """Force [N] that pulls a point of ``mass`` [kg] at ``x`` [m] moving at ``v`` [m/s] to
    ``target`` [m] within about two steps of ``dt`` [s], cancelling ``gravity`` [m/s^2]; the
    offset to the target is capped at ``max_offset`` [m] (see the module docstring)."""
    d = np.asarray(target, dtype=np.float64) - np.asarray(x, dtype=np.float64)
    n = float(np.linalg.norm(d))
    if n > max_offset > 0:
        d *= max_offset / n
    v = np.asarray(v, dtype=np.float64)
    return mass * (_DRAG_GAIN * (d / (dt * dt) - v / dt) - np.asarray(gravity, dtype=float))


# ---------------------------------------------------------------------------------- simulation
class Snapshot:
    """What was last published: ``time`` [s], ``steps``, strand ``positions`` [V, 3] and
    ``extra`` points [X, 3] [m], ``edge_broken`` [E] or None (copies)."""

    __slots__ = ("edge_broken", "extra", "positions", "steps", "time")

    def __init__(self, time, steps, positions, extra, edge_broken):
        self.time, self.steps = float(time), int(steps)
        self.positions, self.extra, self.edge_broken = positions, extra, edge_broken


class LiveSimulation:
    """A :class:`~strandlab.sim.runner.Simulation` stepped on request or in its own thread.

    ``paused``: start paused; ``realtime``: the thread paces steps to the wall clock (one step
    of ``sim.dt`` per ``sim.dt`` seconds, or slower when a step costs more); ``on_frame``: a
    function of a :class:`Snapshot`, called from the stepping thread after a step at most every
    ``publish_interval`` [s] of wall time (and after every requested single step).

    Requests (thread-safe, applied between steps): :meth:`set_gravity`,
    :meth:`set_stiffness_scale`, :meth:`set_setting`, :meth:`pause`, :meth:`resume`,
    :meth:`step`, :meth:`reset`, :meth:`grab`, :meth:`drag`, :meth:`release`.  :meth:`advance`
    takes steps in the calling thread (without :meth:`start`).  A step that diverges restores
    the state before it, pauses and sets :attr:`message`.
    """

    def __init__(self, sim: Simulation, *, paused: bool = False, realtime: bool = True,
                 on_frame: Callable[[Snapshot], None] | None = None,
                 publish_interval: float = 1.0 / 30.0):
        if not isinstance(sim, Simulation):
            raise TypeError(f"expected a Simulation, got {type(sim).__name__}")
        self.sim = sim
        self.dt = float(sim.dt)
        self.base_scene = sim.scene
        self.solver_name = sim.solver
        self.settings = sim.settings
        self.gravity = np.array(sim.scene.gravity, dtype=np.float64)
        self.stiffness_scale = 1.0
        self.realtime, self.on_frame = bool(realtime), on_frame
        self.publish_interval = float(publish_interval)
        self.paused = bool(paused)
        self.message = ""                      #: the last error (divergence, failed rebuild)
        self._masses = vertex_masses(sim.scene)
        self._edge_scale = self._strand_edge_lengths(sim.scene)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pending: dict = {}
        self._requested = 0
        self._load_vertex: int | None = None   # vertex carrying the drag load in the scene
        self._grab: int | None = None
        self._target: np.ndarray | None = None
        self._last_publish = -math.inf
        self.solver = sim.make_solver()
        self.state = self.solver.state()
        self._after_state_change()

    # -- queries -------------------------------------------------------------------------------
    @staticmethod
    def _strand_edge_lengths(scene: Scene) -> np.ndarray:
        """Mean rest edge length of each vertex's strand [m], [V]."""
        out = np.zeros(scene.n_vertices)
        for s, st in enumerate(scene.strands):     # per strand, not per vertex
            e = np.diff(st.rest_points, axis=0)
            out[scene.strand_vertices(s)] = float(np.mean(np.linalg.norm(e, axis=1))) \
                if len(e) else 0.0
        return out

    @property
    def time(self) -> float:
        return float(self.state.time)

    @property
    def steps(self) -> int:
        return int(self.state.step)

    @property
    def grabbed(self) -> int | None:
        """The vertex being dragged, or None."""
        return self._grab

    def snapshot(self) -> Snapshot:
        """The last published frame (copies)."""
        with self._lock:
            return self._snap

    # -- requests ------------------------------------------------------------------------------
    def _request(self, key: str, value) -> None:
        with self._lock:
            self._pending[key] = value
        self._wake.set()

    def set_gravity(self, gravity) -> None:
        """Gravity [m/s^2], a 3-vector (ValueError if not finite)."""
        g = np.asarray(gravity, dtype=np.float64)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity must be 3 finite numbers [m/s^2], got {gravity!r}")
        self._request("gravity", g)

    def set_stiffness_scale(self, scale) -> None:
        """Multiply Young's and shear moduli of every material by ``scale`` (> 0) against the
        scene's own; what this stiffens depends on the model (each model's docs map E and G)."""
        self._request("stiffness", positive_number("stiffness scale", scale))

    def set_setting(self, name: str, value) -> None:
        """Set one field of the solver's Settings; ValueError (from the Settings class, naming
        the field) now if the value is refused."""
        with self._lock:
            base = self._pending.get("settings", self.settings).to_dict()
        self._request("settings", make_settings(self.solver_name, {**base, name: value}))

    def pause(self) -> None:
        with self._lock:
            self.paused = True

    def resume(self) -> None:
        with self._lock:
            self.paused = False
            self.message = ""
        self._wake.set()

    def step(self, n: int = 1) -> None:
        """Take ``n`` steps while paused (the stepping thread takes them)."""
        with self._lock:
            self._requested += int(n)
        self._wake.set()

    def reset(self) -> None:
        """Back to the scene's initial state (parameters kept)."""
        self._request("reset", True)

    def grab(self, vertex: int) -> None:
        """Start dragging strand vertex ``vertex`` (global index); it stays where it is until
        :meth:`drag` gives a target."""
        if isinstance(vertex, bool) or not isinstance(vertex, (int, np.integer)) \
                or not 0 <= vertex < self.base_scene.n_vertices:
            raise ValueError(f"vertex must be an index in 0..{self.base_scene.n_vertices - 1},"
                             f" got {vertex!r}")
        with self._lock:
            self._grab = int(vertex)
            self._target = np.array(self._positions[int(vertex)])
        self._request("load_vertex", int(vertex))

    def drag(self, target) -> None:
        """Move the drag target of the grabbed vertex to ``target`` [m]."""
        t = np.asarray(target, dtype=np.float64)
        if t.shape != (3,) or not np.all(np.isfinite(t)):
            raise ValueError(f"drag target must be 3 finite numbers [m], got {target!r}")
        with self._lock:
            if self._grab is not None:
                self._target = t

    def release(self) -> None:
        """Let go of the dragged vertex."""
        with self._lock:
            self._grab = None
            self._target = None

    # -- stepping ------------------------------------------------------------------------------
    def _scene(self) -> Scene:
        """The base scene with the current gravity, stiffness and drag load."""
        sc = self.base_scene
        strands = sc.strands
        if self.stiffness_scale != 1.0:
            k, scaled = self.stiffness_scale, {}
            for m in sc.materials:
                scaled[id(m)] = replace(m, young_modulus=m.young_modulus * k,
                                        shear_modulus=m.shear * k)
            strands = tuple(replace(s, material=scaled[id(s.material)]) for s in sc.strands)
        loads = sc.loads
        if self._load_vertex is not None:
            s = int(np.searchsorted(sc.strand_vertex_offsets, self._load_vertex, side="right")) - 1
            local = self._load_vertex - int(sc.strand_vertex_offsets[s])
            loads = loads + (PointLoad(s, local, fn=self._drag_load),)
        return replace(sc, gravity=self.gravity.copy(), strands=strands, loads=loads)

    def _drag_load(self, t: float) -> np.ndarray:
        """The force on the load vertex [N] (zero when nothing is grabbed)."""
        with self._lock:
            k, target = self._grab, self._target
        if k is None or k != self._load_vertex or target is None:
            return np.zeros(3)
        x = self._positions[k]
        v = (x - self._previous[k]) / self.dt
        return drag_force(self._masses[k], x, v, target, self.dt, self.gravity,
                          2.0 * self._edge_scale[k])

    def _apply_pending(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return
        if pending.pop("reset", False):
            self.state = self.solver.state()
            self._after_state_change()
        if not pending:
            return
        old = (self.gravity, self.stiffness_scale, self.settings, self._load_vertex)
        new = (pending.get("gravity", self.gravity), pending.get("stiffness", self.stiffness_scale),
               pending.get("settings", self.settings),
               pending.get("load_vertex", self._load_vertex))
        if np.array_equal(new[0], old[0]) and new[1:] == old[1:]:
            return
        (self.gravity, self.stiffness_scale, self.settings, self._load_vertex) = new
        try:
            arrays = self.solver.save_state(self.state)
            solver = get_solver(self.solver_name)(self._scene(), self.settings)
            self.state = solver.load_state(arrays)
            self.solver = solver
        except ValueError as exc:      # a scene or settings the solver refuses
            (self.gravity, self.stiffness_scale, self.settings, self._load_vertex) = old
            with self._lock:
                self.message = f"change refused: {exc}"

    def _after_state_change(self) -> None:
        o = self.solver.output(self.state)
        self._positions = np.array(o.positions)
        self._previous = self._positions.copy()
        self._publish(o, force=True)

    def _publish(self, o, *, force: bool = False) -> None:
        now = _time.perf_counter()
        snap = Snapshot(self.state.time, self.state.step, np.array(o.positions),
                        np.array(o.extra),
                        None if o.edge_broken is None else np.array(o.edge_broken))
        with self._lock:
            self._snap = snap
        if not force and now - self._last_publish < self.publish_interval:
            return
        self._last_publish = now
        if self.on_frame is not None:
            self.on_frame(snap)

    def advance(self, n: int = 1, *, publish: bool = True) -> int:
        """Apply the queued requests, then take ``n`` steps in this thread; returns the steps
        taken (fewer when one diverges: then the state before that step is restored, the
        simulation pauses and :attr:`message` says why)."""
        self._apply_pending()
        for i in range(int(n)):
            self._good = self.solver.save_state(self.state)
            try:
                self.solver.step(self.state, self.state, self.dt)
                if self.sim.on_step is not None:
                    self.sim.on_step(self.solver, self.state)
            except SimulationDiverged as exc:
                self.state = self.solver.load_state(self._good)
                self._after_state_change()
                with self._lock:
                    self.paused = True
                    self.message = f"diverged, restored t = {self.time:.4g} s: {exc}"
                return i
            o = self.solver.output(self.state)
            self._previous, self._positions = self._positions, np.array(o.positions)
            if publish:
                self._publish(o)
        return int(n)

    # -- thread --------------------------------------------------------------------------------
    def start(self) -> None:
        """Step in a background thread until :meth:`stop`."""
        if self._thread is not None:
            raise RuntimeError("the simulation is already running")
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="strandlab-live", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the stepping thread (waits for the step under way)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _next_run(self) -> bool:
        """Whether to take a step now (a requested single step counts)."""
        with self._lock:
            if not self.paused:
                return True
            if self._requested > 0:
                self._requested -= 1
                return True
        return False

    def _loop(self) -> None:
        due = _time.perf_counter()
        while not self._stop.is_set():
            if not self._next_run():
                self._apply_pending()
                self._wake.wait(0.05)
                self._wake.clear()
                due = _time.perf_counter()
                continue
            single = self.paused
            self.advance(1, publish=True)
            if single:
                self._publish(self.solver.output(self.state), force=True)
            if self.realtime:
                due += self.dt
                wait = due - _time.perf_counter()
                if wait > 0:
                    self._stop.wait(wait)
                elif wait < -0.25:     # far behind real time: do not try to catch up
                    due = _time.perf_counter()
