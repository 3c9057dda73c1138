"""Scenes (a Model with its solver settings and timing) and running them to a trajectory."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..pbd.solver import PBDSettings, PBDSolver
from .model import Model, State

__all__ = ["Scene", "simulate", "trajectory_arrays"]


@dataclass
class Scene:
    """A ready-to-run scene.

    ``dt`` [s] is the time step; each output frame is ``steps_per_frame`` steps; ``frames`` the
    default number of output frames.  ``params`` records every parameter that built the scene
    (JSON-serialisable).  ``on_step(solver, state)``, when set, runs after every step (for
    scripted events).  ``view`` is the default camera (elevation, azimuth) in degrees.
    """

    name: str
    model: Model
    settings: PBDSettings
    dt: float
    frames: int
    steps_per_frame: int = 1
    description: str = ""
    params: dict = field(default_factory=dict)
    on_step: Callable | None = None
    view: tuple = (20.0, -60.0)

    def with_overrides(self, *, frames=None, dt=None, iterations=None, substeps=None) -> "Scene":
        """A copy with the run-time options of the command line applied and validated."""
        s = self
        if frames is not None:
            if int(frames) < 1:
                raise ValueError(f"frames must be >= 1, got {frames}")
            s = replace(s, frames=int(frames))
        if dt is not None:
            if not (math.isfinite(dt) and dt > 0):
                raise ValueError(f"dt must be positive, got {dt}")
            s = replace(s, dt=float(dt))
        kw = {}
        if iterations is not None:
            kw["iterations"] = int(iterations)
        if substeps is not None:
            kw["substeps"] = int(substeps)
        if kw:
            s = replace(s, settings=replace(s.settings, **kw))
        return s

    def to_dict(self) -> dict:
        """Every parameter used, for ``scene.json``."""
        return {"name": self.name, "description": self.description, "dt": self.dt,
                "frames": self.frames, "steps_per_frame": self.steps_per_frame,
                "solver": self.settings.to_dict(), "params": self.params,
                "gravity": self.model.gravity.tolist(),
                "n_strands": self.model.n_strands, "n_vertices": self.model.n_vertices,
                "n_edges": self.model.n_edges, "n_points": self.model.n_points,
                "materials": [m.to_dict() for m in self.model.materials],
                "colliders": self.model.colliders()}


def trajectory_arrays(model: Model, state: State):
    """(vertices [V, 3], ghosts [E, 3], extra points [P - V - E, 3]) views of a state."""
    nv, ne = model.n_vertices, model.n_edges
    return state.x[:nv], state.x[nv:nv + ne], state.x[nv + ne:]


def simulate(scene: Scene, *, progress: bool = False, callback=None):
    """Run ``scene`` for ``scene.frames`` frames; returns a Trajectory (frame 0 = initial state).

    ``callback(frame, state)`` is called after each frame.  Raises
    :class:`~strandlab.sim.validate.SimulationDiverged` naming the step and strand if the
    simulation produces non-finite values.
    """
    from ..io.trajectory import Trajectory

    m = scene.model
    solver = PBDSolver(m, scene.settings)
    state = m.state()
    n = scene.frames + 1
    nv, ne = m.n_vertices, m.n_edges
    pos = np.zeros((n, nv, 3))
    gho = np.zeros((n, ne, 3))
    ext = np.zeros((n, m.n_points - nv - ne, 3))
    times = np.zeros(n)

    def record(k):
        v, g, e = trajectory_arrays(m, state)
        pos[k], gho[k], ext[k] = v, g, e
        times[k] = state.time

    record(0)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=scene.frames, desc=scene.name, unit="frame")
    try:
        for f in range(1, n):
            for _ in range(scene.steps_per_frame):
                solver.step(state, state, scene.dt)
                if scene.on_step is not None:
                    scene.on_step(solver, state)
            record(f)
            if callback is not None:
                callback(f, state)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return Trajectory(
        times=times, positions=pos, ghosts=gho,
        strand_offsets=np.asarray(m.strand_vertex_start), edge_offsets=np.asarray(m.strand_edge_start),
        closed=np.asarray(m.strand_closed), radii=np.asarray(m.strand_radius), extra_points=ext,
        extra_triangles=np.asarray(m.mesh_triangles) - (nv + ne) if len(m.mesh_triangles)
        else np.zeros((0, 3), dtype=np.int64),
        metadata=scene.to_dict(),
    )
