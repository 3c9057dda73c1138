"""Checkpoints: save a solver's complete state and load it back for the same scene.

A checkpoint is an ``.npz`` archive holding the arrays of ``solver.save_state(state)`` (the
solver protocol of :mod:`strandlab.sim.solver`: positions, velocities, the solver's other
state, ``time`` and ``step``) and a JSON ``header``:

==================  =================================================================
key                 meaning
==================  =================================================================
``format``          ``"strandlab.checkpoint"``
``format_version``  :data:`FORMAT_VERSION` (files without it are version 1, still read)
``solver``          the solver's registry name; ``settings``: its settings
``n_strands`` ...   ``n_vertices``, ``n_edges``, ``n_extra`` of the scene
``scene``           SHA-256 of each part of the scene (strands, frames, meshes, bodies,
                    attachments, loads, colliders, gravity; :func:`scene_digest`)
``sha256``          checksum of the state arrays
``run``             what the runner records: ``name``, ``dt``, ``steps_per_frame``, ``frame``
==================  =================================================================

Random generators: a solver's state must include any generator it draws from.  The
position-based solver's random constraint order is a function of ``settings.seed`` and the
state's ``step``, so the state carries it; discrete elastic rods draw no random numbers.

:func:`save_state` writes atomically (a temporary file renamed when complete) and refuses a
non-finite state.  :func:`load_state` reports, naming the file: a missing file, a truncated or
damaged one, an unknown format version, a checkpoint of another solver, scene (naming the part
that differs) or, with ``check_settings``, other settings.

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
import zipfile
from pathlib import Path

import numpy as np

from .atomic import atomic_path

__all__ = ["save_state", "load_state", "load_checkpoint", "read_header", "scene_digest",
           "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "strandlab.checkpoint"
FORMAT_VERSION = 2      #: version written; version 1 (no version field) is still read
_READABLE = (1, 2)
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


def _hash(*items) -> str:
    """SHA-256 of arrays (dtype, shape, bytes) and JSON-able values, in order."""
    h = hashlib.sha256()
    for it in items:
        if isinstance(it, np.ndarray):
            a = np.ascontiguousarray(it)
            h.update(f"{a.dtype}{a.shape}".encode())
            h.update(a.tobytes())
        else:
            h.update(json.dumps(it, sort_keys=True, default=repr).encode())
        h.update(b"\0")
    return h.hexdigest()


def _strand_items(s) -> list:
    d1 = np.zeros(0) if s.d1 is None else np.asarray(s.d1, dtype=np.float64)
    return [s.points, s.rest_points, s.radius, s.velocities, d1, s.to_dict()]


def scene_digest(scene) -> dict:
    """SHA-256 per part of ``scene`` (strands, frames, meshes, bodies, attachments, loads,
    colliders, gravity): two scenes with equal digests compile to the same model.  A frame
    moved by a Python function is known by its name and pose at t = 0; a load given by a
    function by its presence."""
    frames = []
    for f in scene.frames:
        rot, origin = f.pose(0.0)
        frames += [np.asarray(rot, dtype=np.float64), np.asarray(origin, dtype=np.float64),
                   f.motion.to_dict()]
    meshes = []
    for m in scene.meshes:
        meshes += [m.vertices, m.triangles, m.velocities,
                   [m.name, m.mass, m.compliance, m.collide_radius, list(m.fixed)]]
    bodies = []
    for b in scene.bodies:
        bodies += [b.position, b.rotation, [b.mass, b.size]]
    attach = [repr(a) for a in (*scene.frame_attachments, *scene.triangle_attachments,
                                *scene.body_attachments)]
    loads = [[ld.strand, ld.vertex, None if ld.force is None else ld.force.tolist(),
              ld.fn is not None] for ld in scene.loads]
    return {"strands": _hash(*[x for s in scene.strands for x in _strand_items(s)]),
            "frames": _hash(*frames), "meshes": _hash(*meshes), "bodies": _hash(*bodies),
            "attachments": _hash(attach), "loads": _hash(loads),
            "colliders": _hash([c.to_dict() for c in scene.colliders]),
            "gravity": _hash(np.asarray(scene.gravity, dtype=np.float64))}


def _settings_dict(solver) -> dict:
    """The solver's settings as plain JSON values (tuples as lists)."""
    to_dict = getattr(solver.settings, "to_dict", None)
    return json.loads(json.dumps(to_dict() if to_dict else {}, default=repr))


def _header(solver) -> dict:
    sc = solver.scene
    head = {"solver": solver.name}
    if sc is not None:
        head.update(n_vertices=sc.n_vertices, n_edges=sc.n_edges, n_strands=sc.n_strands,
                    n_extra=int(sc.extra_layout()["n"]))
    return head


def save_state(path, solver, state, *, run: dict | None = None) -> Path:
    """Write ``state`` of ``solver`` to a compressed ``.npz`` checkpoint; returns the path
    (``.npz`` is appended to a name without it).  ``run``: JSON-able facts of the run to keep
    with it (the runner records ``name``, ``dt``, ``steps_per_frame`` and ``frame``).

    Refuses a state whose arrays are not finite (a diverged state is never written), except
    for the arrays a solver names in ``UNBOUNDED_STATE``, which may hold ``+inf`` (a threshold
    that is never reached: the rupture stress of a string that does not tear), never NaN.  The
    file is written under a temporary name and renamed when complete.
    """
    arrays = {k: np.asarray(v) for k, v in solver.save_state(state).items()}
    unbounded = set(getattr(solver, "UNBOUNDED_STATE", ()))
    for k, a in arrays.items():
        if a.dtype.kind != "f" or k == "mid_v":
            continue
        ok = ~np.isnan(a) & (a != -np.inf) if k in unbounded else np.isfinite(a)
        if not np.all(ok):
            raise ValueError(f"refusing to save a state whose {k!r} is not finite")
    p = Path(path)
    if p.suffix != ".npz":
        p = p.with_name(p.name + ".npz")
    head = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **_header(solver),
            "settings": _settings_dict(solver), "sha256": _digest(arrays), "run": run}
    if solver.scene is not None:
        head["scene"] = scene_digest(solver.scene)
    text = json.dumps(head, default=repr)
    with atomic_path(p) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, header=np.array(text),
                            **{_PREFIX + k: v for k, v in arrays.items()})
    return p


def _read(p: Path) -> tuple[dict, dict]:
    """(header, state arrays) of checkpoint ``p``; ValueError naming it when unreadable."""
    if not p.is_file():
        raise FileNotFoundError(f"checkpoint {p} does not exist")
    try:
        with np.load(p, allow_pickle=False) as data:
            files = list(data.files)
            if "header" not in files:
                raise ValueError(f"checkpoint {p} has no header: not a strandlab checkpoint")
            head = json.loads(str(data["header"]))
            arrays = {k[len(_PREFIX):]: data[k] for k in files if k.startswith(_PREFIX)}
    except ValueError as exc:
        if str(p) in str(exc):
            raise
        raise ValueError(f"checkpoint {p} is truncated or corrupt ({exc})") from None
    except Exception as exc:  # zipfile, zlib, OSError, EOFError ... from a damaged file
        kind = "truncated or corrupt" if not isinstance(exc, zipfile.LargeZipFile) else "corrupt"
        raise ValueError(f"checkpoint {p} is {kind} or not an .npz file "
                         f"({type(exc).__name__}: {exc})") from None
    if not isinstance(head, dict) or "sha256" not in head:
        raise ValueError(f"checkpoint {p}: malformed header")
    version = head.get("format_version", 1)
    if version not in _READABLE or head.get("format", FORMAT_NAME) != FORMAT_NAME:
        raise ValueError(f"checkpoint {p} has format {head.get('format')!r} version "
                         f"{version!r}; this strandlab reads {FORMAT_NAME!r} versions "
                         f"{', '.join(map(str, _READABLE))}")
    if _digest(arrays) != head["sha256"]:
        raise ValueError(f"checkpoint {p} is corrupt: its state does not match its checksum")
    return head, arrays


def read_header(path) -> dict:
    """The header of checkpoint ``path`` (checked as by :func:`load_state`, state included)."""
    return _read(Path(path))[0]


def _check_model(p: Path, head: dict, solver, check_settings: bool) -> None:
    for k, v in _header(solver).items():
        if k in head and head[k] != v:
            raise ValueError(f"checkpoint {p} is for {k} = {head[k]!r}; this solver and "
                             f"scene have {v!r}")
    if solver.scene is not None and "scene" in head:
        mine = scene_digest(solver.scene)
        diff = [k for k in mine if head["scene"].get(k) != mine[k]]
        if diff:
            raise ValueError(f"checkpoint {p} was written for another scene: its "
                             f"{', '.join(diff)} differ from this scene's")
    if check_settings and "settings" in head:
        mine = _settings_dict(solver)
        for k in sorted(set(mine) | set(head["settings"])):
            if head["settings"].get(k) != mine.get(k):
                raise ValueError(f"checkpoint {p} was written with the {solver.name} setting "
                                 f"{k} = {head['settings'].get(k)!r}; this run has "
                                 f"{mine.get(k)!r}")


def load_checkpoint(path, solver, *, check_settings: bool = True) -> tuple:
    """``(state, header)`` of the checkpoint ``path`` for ``solver``, checked as by
    :func:`load_state` (settings included unless ``check_settings=False``)."""
    p = Path(path)
    head, arrays = _read(p)
    _check_model(p, head, solver, check_settings)
    try:
        return solver.load_state(arrays), head
    except ValueError as exc:
        raise ValueError(f"checkpoint {p}: {exc}") from None


def load_state(path, solver, *, check_settings: bool = False):
    """Read a checkpoint written by :func:`save_state` for ``solver`` (same solver and scene;
    with ``check_settings`` the same settings too) and return the state.

    FileNotFoundError for a missing file; ValueError naming the file for a truncated or
    corrupt file, an unknown format version, another solver, scene or settings, or a state the
    solver refuses.
    """
    return load_checkpoint(path, solver, check_settings=check_settings)[0]
