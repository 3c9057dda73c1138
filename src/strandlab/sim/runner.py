"""Simulations (a scene, a solver and its settings, timing) and running them to a trajectory.

The runner knows solvers only through the protocol and registry of :mod:`strandlab.sim.solver`.
"""
from __future__ import annotations

import math
import threading
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from .scene import Scene
from .solver import DEFAULT_SOLVER, get_solver, make_settings
from .validate import SimulationDiverged, check_memory, show

__all__ = ["Simulation", "simulate", "check_run", "RunStats"]


@dataclass
class Simulation:
    """A ready-to-run simulation.

    ``scene``: the solver-neutral :class:`~strandlab.sim.scene.Scene`; ``solver``: a registered
    solver name; ``settings``: that solver's Settings (default: its defaults).  ``dt`` [s] is the
    time step; each output frame is ``steps_per_frame`` steps; ``frames`` the default number of
    output frames.  ``params`` records every parameter that built it (JSON-serialisable).
    ``on_step(solver, state)``, when set, runs after every step (scripted events).  ``view`` is
    the default camera (elevation, azimuth) in degrees.
    """

    name: str
    scene: Scene
    settings: object = None
    dt: float = 1.0 / 60.0
    frames: int = 60
    steps_per_frame: int = 1
    description: str = ""
    params: dict = field(default_factory=dict)
    on_step: Callable | None = None
    view: tuple = (20.0, -60.0)
    solver: str = DEFAULT_SOLVER

    def __post_init__(self):
        if not isinstance(self.scene, Scene):
            raise TypeError(f"{self.name}: scene must be a Scene (SceneBuilder.build()), got "
                            f"{type(self.scene).__name__}")
        self.settings = make_settings(self.solver, self.settings)
        if not (isinstance(self.dt, (int, float)) and math.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"{self.name}: dt must be a positive number of seconds, got "
                             f"{self.dt!r}")
        for k in ("frames", "steps_per_frame"):
            v = getattr(self, k)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{self.name}: {k} must be an integer >= 1, got {show(v)}")

    def with_overrides(self, *, frames=None, dt=None, **settings) -> Simulation:
        """A copy with run-time options applied and validated; ``settings`` are solver settings
        (e.g. ``iterations``, ``substeps``), ignored when None."""
        s = self
        if frames is not None:
            s = replace(s, frames=int(frames))
        if dt is not None:
            s = replace(s, dt=float(dt))
        kw = {k: v for k, v in settings.items() if v is not None}
        if kw:
            base = s.settings.to_dict()
            base.update(kw)
            s = replace(s, settings=make_settings(s.solver, base))
        return s

    def make_solver(self):
        """The solver of this simulation, compiled from its scene."""
        return get_solver(self.solver)(self.scene, self.settings)

    def to_dict(self) -> dict:
        """Every parameter used, for ``scene.json`` and the trajectory's metadata."""
        return {"name": self.name, "description": self.description, "dt": self.dt,
                "frames": self.frames, "steps_per_frame": self.steps_per_frame,
                "solver": {"type": self.solver, "settings": self.settings.to_dict()},
                "params": self.params, "scene": self.scene.describe(),
                "materials": [m.to_dict() for m in self.scene.materials]}


@dataclass
class RunStats:
    """Timing of a run: ``first_step_s`` (includes compiling kernels on a cold cache),
    ``steady_step_ms`` (mean over the remaining steps), ``steps``, ``frames_done``; and
    ``unconverged_steps``, the steps the solver kept above its Newton tolerance (each warned
    with :class:`~strandlab.implicit.NotConvergedWarning`; None from a solver without a
    tolerance: its ``unconverged_steps`` attribute); ``adaptive_steps``, the steps it took again
    to a tolerance (the DER solver's ``adaptive_steps``; None from a solver that does not)."""

    first_step_s: float = 0.0
    steady_step_ms: float = float("nan")
    steps: int = 0
    frames_done: int = 0
    unconverged_steps: int | None = None
    adaptive_steps: int | None = None


def simulate(sim: Simulation, *, progress: bool = False, callback=None, out=None,
             stats: RunStats | None = None, on_compile: Callable | None = None,
             checkpoint_every: int | None = None, checkpoint_dir=None, resume=None,
             solver=None):
    """Run ``sim`` for ``sim.frames`` frames (frame 0 = initial state).

    Without ``out`` the frames are kept in memory and a Trajectory is returned.  With ``out``
    (a ``.h5`` path) they are written to disk frame by frame as the run goes (memory does not
    grow with frames) and the loaded (lazy) trajectory is returned; a run stopped part way
    (Ctrl-C, divergence) leaves a readable file of the frames done, marked with its status.
    ``callback(frame, state)`` is called after each frame; ``on_compile()`` once if the first
    step takes longer than a second (the solver compiling its kernels); ``stats`` (a
    :class:`RunStats`) receives the timing as the run goes.  Raises
    :class:`~strandlab.sim.validate.SimulationDiverged` naming the step and strand.

    Checkpoints (:mod:`strandlab.sim.resume`): ``checkpoint_every = N`` saves the complete
    state after every ``N``-th frame as ``checkpoint_dir/frame_NNNNNN.npz`` (default folder:
    ``checkpoints`` next to ``out``); ``resume`` (a checkpoint path) starts from that
    checkpoint's frame instead of frame 0, and the frames that follow are bit for bit those of
    the uninterrupted run.  When ``out`` holds the trajectory of the run that wrote the
    checkpoint, its frames up to the checkpoint are kept and the run continues it; otherwise
    the trajectory starts at the checkpoint's frame.

    ``solver``: the solver ``sim.make_solver()`` made beforehand (so that a scene the solver
    refuses is refused before an output folder is touched), instead of a new one.
    """
    from ..io.trajectory import Trajectory
    from .resume import Checkpointer

    scene = sim.scene
    solver = sim.make_solver() if solver is None else solver
    state, first = check_run(sim, solver, out, resume)
    saver = Checkpointer(sim, checkpoint_every, checkpoint_dir, out)
    stats = stats if stats is not None else RunStats()
    lay = dict(strand_offsets=np.asarray(scene.strand_vertex_offsets),
               edge_offsets=np.asarray(scene.strand_edge_offsets),
               closed=scene.closed, radii=scene.radii,
               extra_triangles=scene.extra_triangles, vertex_radii=scene.vertex_radii,
               extra_segments=scene.extra_segments,
               extra_segment_radii=scene.extra_segment_radii,
               extra_tetrahedra=scene.extra_tetrahedra)
    meta = sim.to_dict()
    if resume is not None:
        meta["resumed_from"] = {"checkpoint": str(resume), "frame": first}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=sim.frames, initial=first, desc=sim.name, unit="frame")

    def run(record, keep_first: bool):
        if not keep_first:
            o = solver.output(state)
            record(state.time, o.positions, o.d1, o.extra, o.edge_broken)
        t_steps = 0.0
        for f in range(first + 1, sim.frames + 1):
            for _ in range(sim.steps_per_frame):
                t0 = _time.perf_counter()
                if stats.steps == 0 and on_compile is not None:
                    notice = threading.Timer(1.0, on_compile)
                    notice.daemon = True
                    notice.start()
                    try:
                        solver.step(state, state, sim.dt)
                    finally:
                        notice.cancel()
                else:
                    solver.step(state, state, sim.dt)
                dt_wall = _time.perf_counter() - t0
                if stats.steps == 0:
                    stats.first_step_s = dt_wall
                else:
                    t_steps += dt_wall
                stats.steps += 1
                if sim.on_step is not None:
                    sim.on_step(solver, state)
            o = solver.output(state)
            record(state.time, o.positions, o.d1, o.extra, o.edge_broken)
            saver.after_frame(f, solver, state)
            stats.frames_done = f
            stats.unconverged_steps = getattr(solver, "unconverged_steps", None)
            stats.adaptive_steps = getattr(solver, "adaptive_steps", None)
            if stats.steps > 1:
                stats.steady_step_ms = 1000.0 * t_steps / (stats.steps - 1)
            if callback is not None:
                callback(f, state)
            if bar is not None:
                bar.update(1)

    n_frames = sim.frames + 1 - first
    try:
        if out is None:
            arrays = {"times": np.zeros(n_frames),
                      "positions": np.zeros((n_frames, scene.n_vertices, 3)),
                      "d1": np.zeros((n_frames, scene.n_edges, 3)),
                      "extra_points": np.zeros((n_frames, scene.extra_layout()["n"], 3))}
            k = [0]

            def keep(t, pos, d1, extra, broken=None):
                i = k[0]
                arrays["times"][i] = t
                arrays["positions"][i] = pos
                arrays["d1"][i] = d1
                arrays["extra_points"][i] = extra
                if broken is not None:
                    if "edge_broken" not in arrays:
                        arrays["edge_broken"] = np.zeros((n_frames, scene.n_edges), dtype=bool)
                    arrays["edge_broken"][i] = broken
                k[0] += 1

            run(keep, False)
            return Trajectory(metadata=meta, **arrays, **lay)
        from ..io.store import TrajectoryWriter
        from ..io.trajectory import load_trajectory
        from .resume import continues

        keep = first + 1 if resume is not None and continues(out, solver, state, first) else 0
        if keep == 0 and resume is not None:
            meta["first_frame"] = first
        with TrajectoryWriter(out, n_extra=scene.extra_layout()["n"], metadata=meta,
                              solver=meta["solver"], keep_frames=keep, **lay) as w:
            try:
                run(w.append, keep > 0)
            except SimulationDiverged as exc:
                w.close(status=f"diverged: {exc}")
                raise
        return load_trajectory(out)
    finally:
        if bar is not None:
            bar.close()


def check_run(sim: Simulation, solver, out=None, resume=None) -> tuple:
    """What :func:`simulate` checks before it writes anything: the solver's step
    (``solver.check_step(dt)``, where the solver has it: settings that cannot take ``sim.dt``),
    the checkpoint ``resume`` (:func:`~.resume.resume_state`) and the room the frames need, in
    memory (``out`` None) or on the disk of ``out``.  Returns the state to start from and its
    frame; ValueError, or OSError for the room, naming what is wrong."""
    from .resume import resume_state

    check_step = getattr(solver, "check_step", None)
    if check_step is not None:
        check_step(float(sim.dt))
    state, first = (solver.state(), 0) if resume is None else resume_state(sim, solver, resume)
    scene = sim.scene
    frame_bytes = 24.0 * (scene.n_vertices + scene.n_edges + scene.extra_layout()["n"]) + 8.0
    n_frames = sim.frames + 1 - first
    if out is None:
        check_memory(frame_bytes * n_frames,
                     f"keeping {n_frames:,} frames in memory (write to a file instead)")
    else:
        check_disk(out, frame_bytes * n_frames, f"{n_frames:,} frames")
    return state, first


def check_disk(path, nbytes: float, what: str) -> None:
    """Refuse to start a run whose output will not fit on the disk holding ``path``."""
    import shutil
    from pathlib import Path

    p = Path(path).resolve().parent
    while not p.exists() and p != p.parent:
        p = p.parent
    free = shutil.disk_usage(p).free
    if nbytes > free:
        raise OSError(f"{what} need about {nbytes / 2**30:.1f} GiB on disk; {p} has "
                      f"{free / 2**30:.1f} GiB free")
