"""Checkpoints: save a solver's complete state and load it back for the same scene.

A checkpoint is an ``.npz`` file holding the arrays of ``solver.save_state(state)`` (the solver
protocol of :mod:`strandlab.sim.solver`), the solver's name, the scene's vertex and edge counts,
and a SHA-256 checksum of the state arrays.  Loading checks all of them, so a checkpoint of
another solver or scene is refused by name, and a file damaged on disk is reported as corrupt.

Example
-------
>>> import strandlab as sl, tempfile, pathlib
>>> from strandlab.sim.shapes import line
>>> b = sl.SceneBuilder()
>>> _ = b.add_strand(line((0, 0, 0), (1, 0, 0), 4),
...                  material=sl.Material(young_modulus=1e7, density=1e3, radius=0.005))
>>> solver = sl.PBDSolver(b.build())
>>> state = solver.state()
>>> p = save_state(pathlib.Path(tempfile.mkdtemp()) / "ck", solver, state)
>>> load_state(p, solver).step
0
"""
from __future__ import annotations

import hashlib
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["save_state", "load_state"]

_PREFIX = "state__"


def _digest(arrays: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(k.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _header(solver) -> dict:
    sc = solver.scene
    return {"solver": solver.name, "n_vertices": sc.n_vertices, "n_edges": sc.n_edges,
            "n_strands": sc.n_strands}


def save_state(path, solver, state) -> Path:
    """Write ``state`` of ``solver`` to a compressed ``.npz`` checkpoint; returns the path.

    Refuses a state whose positions or velocities are not finite (a diverged state is never
    written).
    """
    arrays = solver.save_state(state)
    for k, a in arrays.items():
        a = np.asarray(a)
        if a.dtype.kind == "f" and k != "mid_v" and not np.all(np.isfinite(a)):
            raise ValueError(f"refusing to save a state whose {k!r} is not finite")
    p = Path(path)
    if p.suffix != ".npz":
        p = p.with_name(p.name + ".npz")
    head = _header(solver)
    head["sha256"] = _digest(arrays)
    np.savez_compressed(p, header=np.array(json.dumps(head)),
                        **{_PREFIX + k: np.asarray(v) for k, v in arrays.items()})
    return p


def load_state(path, solver):
    """Read a checkpoint written by :func:`save_state` for ``solver`` (same solver and scene).

    FileNotFoundError for a missing file; ValueError naming the file for an unreadable or
    corrupt file, another solver or scene, or a state the solver refuses.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"checkpoint {p} does not exist")
    try:
        with np.load(p, allow_pickle=False) as data:
            files = list(data.files)
            if "header" not in files:
                raise ValueError(f"checkpoint {p} has no header: not a strandlab checkpoint")
            head = json.loads(str(data["header"]))
            arrays = {k[len(_PREFIX):]: data[k] for k in files if k.startswith(_PREFIX)}
    except (OSError, zipfile.BadZipFile, EOFError, pickle.UnpicklingError, KeyError,
            json.JSONDecodeError, zipfile.LargeZipFile) as exc:
        raise ValueError(f"checkpoint {p} is corrupt or not a readable .npz file "
                         f"({type(exc).__name__}: {exc})") from None
    except ValueError as exc:
        if "checkpoint" in str(exc):
            raise
        raise ValueError(f"checkpoint {p} is corrupt ({exc})") from None
    except Exception as exc:  # zlib.error and friends from a damaged member
        raise ValueError(f"checkpoint {p} is corrupt ({type(exc).__name__}: {exc})") from None
    if not isinstance(head, dict) or "sha256" not in head:
        raise ValueError(f"checkpoint {p}: malformed header")
    if _digest(arrays) != head["sha256"]:
        raise ValueError(f"checkpoint {p} is corrupt: its state does not match its checksum")
    want = _header(solver)
    for k, v in want.items():
        if head.get(k) != v:
            raise ValueError(f"checkpoint {p} is for {k} = {head.get(k)!r}; this solver and "
                             f"scene have {v!r}")
    try:
        return solver.load_state(arrays)
    except ValueError as exc:
        raise ValueError(f"checkpoint {p}: {exc}") from None
