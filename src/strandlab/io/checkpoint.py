"""Checkpoints: save a simulation State and load it back for the same Model."""
from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

import numpy as np

from ..sim.model import Model, State

__all__ = ["save_state", "load_state"]

_KEYS = ("x", "v", "mid_v", "time", "step", "n_points", "n_edges")


def save_state(path, state: State, model: Model) -> Path:
    """Write ``state`` to a compressed ``.npz`` checkpoint; returns the path.

    The point and edge counts of ``model`` are stored so that loading checks compatibility.
    Non-finite positions or velocities are refused (a diverged state is never written).
    """
    if state.x.shape != (model.n_points, 3) or state.mid_v.shape != (model.n_edges, 3):
        raise ValueError(f"state has {state.x.shape[0]} points and {state.mid_v.shape[0]} edges; "
                         f"the model has {model.n_points} and {model.n_edges}")
    if not (np.all(np.isfinite(state.x)) and np.all(np.isfinite(state.v))):
        raise ValueError("refusing to save a state with non-finite positions or velocities")
    p = Path(path)
    if p.suffix != ".npz":
        p = p.with_suffix(".npz")
    np.savez_compressed(p, x=state.x, v=state.v, mid_v=state.mid_v, time=state.time,
                        step=state.step, n_points=model.n_points, n_edges=model.n_edges)
    return p


def load_state(path, model: Model) -> State:
    """Read a checkpoint written by :func:`save_state` for ``model``."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"checkpoint {p} does not exist")
    try:
        data = np.load(p, allow_pickle=False)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, pickle.UnpicklingError) as exc:
        raise ValueError(f"checkpoint {p} is not a readable .npz file ({exc})") from None
    with data:
        missing = [k for k in _KEYS if k not in data.files]
        if missing:
            raise ValueError(f"checkpoint {p} lacks {', '.join(missing)}")
        arrays = {k: data[k] for k in _KEYS}
    if int(arrays["n_points"]) != model.n_points or int(arrays["n_edges"]) != model.n_edges:
        raise ValueError(f"checkpoint {p} is for a model with {int(arrays['n_points'])} points "
                         f"and {int(arrays['n_edges'])} edges; this model has "
                         f"{model.n_points} and {model.n_edges}")
    for k, shape in (("x", (model.n_points, 3)), ("v", (model.n_points, 3)),
                     ("mid_v", (model.n_edges, 3))):
        if arrays[k].shape != shape:
            raise ValueError(f"checkpoint {p}: {k} has shape {arrays[k].shape}, expected {shape}")
    return State(x=arrays["x"].astype(np.float64), v=arrays["v"].astype(np.float64),
                 mid_v=arrays["mid_v"].astype(np.float64), time=float(arrays["time"]),
                 step=int(arrays["step"]))
