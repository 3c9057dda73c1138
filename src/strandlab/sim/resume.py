"""Checkpoints during a run and resuming from one (used by :func:`strandlab.sim.runner.simulate`).

A run with ``checkpoint_every = N`` saves, after every ``N``-th output frame ``f``, the
solver's complete state to ``frame_FFFFFF.npz`` (:mod:`strandlab.io.checkpoint`) with the run's
``name``, ``dt``, ``steps_per_frame`` and ``frame``.  Resuming loads it for the same scene,
solver and settings, checks that the time step and steps per frame agree, and continues from
frame ``f``: every step after it is the step the uninterrupted run takes, so the frames that
follow are equal bit for bit.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["Checkpointer", "resume_state", "continues", "run_record", "checkpoint_name"]


def checkpoint_name(frame: int) -> str:
    """File name of the checkpoint after output frame ``frame``."""
    return f"frame_{int(frame):06d}.npz"


def run_record(sim, frame: int) -> dict:
    """What a checkpoint records of the run: name, dt [s], steps per frame, frame."""
    return {"name": sim.name, "dt": float(sim.dt), "steps_per_frame": int(sim.steps_per_frame),
            "frame": int(frame)}


class Checkpointer:
    """Saves a checkpoint after every ``every``-th frame into ``folder`` (default: the
    ``checkpoints`` folder next to ``out``); does nothing when ``every`` is None."""

    def __init__(self, sim, every, folder, out) -> None:
        self.sim, self.every, self.folder = sim, None, None
        if every is None:
            return
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"checkpoint_every must be an integer >= 1, got {every!r}")
        if folder is None:
            if out is None:
                raise ValueError("checkpoint_every needs checkpoint_dir (or out, next to which "
                                 "the checkpoints folder goes)")
            folder = Path(out).parent / "checkpoints"
        self.every, self.folder = int(every), Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def after_frame(self, frame: int, solver, state) -> Path | None:
        """Save the checkpoint of ``frame`` when it is due; returns its path or None."""
        if self.every is None or frame % self.every:
            return None
        from ..io.checkpoint import save_state

        return save_state(self.folder / checkpoint_name(frame), solver, state,
                          run=run_record(self.sim, frame))


def resume_state(sim, solver, path) -> tuple:
    """``(state, frame)`` from checkpoint ``path`` for ``sim``'s ``solver``.  ValueError naming
    the file for another scene, solver or settings, another time step or steps per frame, a
    checkpoint written outside a run, or one past ``sim.frames``."""
    from ..io.checkpoint import load_checkpoint

    state, head = load_checkpoint(path, solver, check_settings=True)
    run = head.get("run") or {}
    if "frame" not in run:
        raise ValueError(f"checkpoint {path} records no run frame: it was not written by a "
                         "run with checkpoints (simulate(..., checkpoint_every=N))")
    for key, mine in (("dt", float(sim.dt)), ("steps_per_frame", int(sim.steps_per_frame))):
        if run.get(key) != mine:
            raise ValueError(f"checkpoint {path} was written with {key} = {run.get(key)!r}; "
                             f"this run has {mine!r}")
    frame = int(run["frame"])
    if frame > sim.frames:
        raise ValueError(f"checkpoint {path} is at frame {frame}, past this run's "
                         f"{sim.frames} frames (ask for more frames)")
    if state.step != frame * sim.steps_per_frame:
        raise ValueError(f"checkpoint {path}: its state is at step {state.step}, not at the "
                         f"{frame * sim.steps_per_frame} steps of frame {frame}")
    return state, frame


def continues(out, solver, state, frame: int) -> bool:
    """Whether the trajectory file ``out`` is the one of the run that saved ``state`` at output
    frame ``frame``: it has the frame, and the frame equals the state's output bit for bit."""
    from ..io.trajectory import load_trajectory

    p = Path(out)
    if not p.is_file():
        return False
    try:
        traj = load_trajectory(p)
    except ValueError:
        return False
    try:
        if traj.n_frames <= frame or traj.n_extra != len(solver.output(state).extra):
            return False
        t, pos, d1, extra = traj.frame(frame)
        o = solver.output(state)
        return (t == state.time and np.array_equal(pos, o.positions)
                and np.array_equal(d1, o.d1) and np.array_equal(extra, o.extra))
    finally:
        close = getattr(traj, "close", None)
        if close is not None:
            close()
