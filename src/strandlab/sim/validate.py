"""Input checks shared by builders, readers and solvers; every error names the offending item."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["check_state_arrays", "as_points", "as_vector", "check_positive", "check_alpha",
           "check_rotation", "check_memory", "available_memory", "show", "SimulationDiverged"]


class SimulationDiverged(RuntimeError):
    """A step produced non-finite positions or velocities, or exceeded a bound (``what``);
    ``point`` is -1 when the failure concerns a whole strand (e.g. its linear solve).  ``where``
    names the object instead of ``strand`` for models whose objects are not strands (a
    simplicial mesh: ``"mesh 'ball'"``)."""

    def __init__(self, step: int, time: float, strand: int, point: int, what: str | None = None,
                 where: str | None = None):
        self.step = step
        self.time = time
        self.strand = strand
        self.point = point
        self.what = what
        if where is None:
            where = f"strand {strand}" if strand >= 0 else "a non-strand point"
        if what is None:
            msg = f"non-finite position or velocity at point {point} of {where}"
        elif point < 0:
            msg = f"{what} ({where})"
        else:
            msg = f"{what} (point {point} of {where})"
        super().__init__(f"simulation diverged at step {step} (t = {time:.6g} s): {msg}")


def show(value) -> str:
    """``repr`` of a value as the user wrote it: numpy scalars and arrays as plain numbers and
    lists (``-0.1``, not ``np.float64(-0.1)``), long values cut to 60 characters."""
    if isinstance(value, np.generic):
        value = value.item()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_points(name: str, points, *, min_points: int = 1) -> np.ndarray:
    """``points`` as a float array [n, 3]; checks shape, count and finiteness."""
    try:
        p = np.array(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: not a numeric array ({exc})") from None
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"{name}: expected shape [n, 3], got {p.shape}")
    if len(p) < min_points:
        raise ValueError(f"{name}: needs at least {min_points} points, got {len(p)}")
    bad = np.nonzero(~np.all(np.isfinite(p), axis=1))[0]
    if len(bad):
        raise ValueError(f"{name}: point {int(bad[0])} is not finite ({p[bad[0]].tolist()})")
    return p


def as_vector(name: str, v) -> np.ndarray:
    """A finite 3-vector."""
    try:
        a = np.array(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: not a numeric 3-vector: {v!r}") from None
    if a.shape != (3,):
        raise ValueError(f"{name}: expected 3 components, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: not finite: {a.tolist()}")
    return a


def check_positive(name: str, value) -> float:
    """A positive finite float."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {show(value)}") from None
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be positive and finite, got {show(value)}")
    return v


def check_alpha(name: str, alpha) -> tuple:
    """Three stiffness alphas, each in [0, 1]."""
    a = np.array(alpha, dtype=np.float64).reshape(-1)
    if a.shape == (1,):
        a = np.repeat(a, 3)
    if a.shape != (3,):
        raise ValueError(f"{name}: expected 3 values (bend d1, bend d2, twist), got {show(alpha)}")
    for i, v in enumerate(a):
        if not (0.0 <= v <= 1.0):
            raise ValueError(f"{name}[{i}] = {v} is outside [0, 1]")
    return tuple(float(v) for v in a)


def check_rotation(name: str, r) -> np.ndarray:
    """A proper rotation matrix [3, 3] (orthonormal columns, determinant +1)."""
    try:
        a = np.array(r, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: not a numeric 3x3 matrix") from None
    if a.shape != (3, 3) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected a finite 3x3 matrix, got shape {a.shape}")
    if not np.allclose(a.T @ a, np.eye(3), atol=1e-6) or np.linalg.det(a) <= 0:
        raise ValueError(f"{name}: not a proper rotation (orthonormal, det +1)")
    return a


def available_memory() -> int | None:
    """Bytes of physical memory available now (None where the system does not say)."""
    try:
        import os
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(nbytes: float, what: str) -> None:
    """Refuse to allocate ``nbytes`` for ``what`` when it exceeds the available memory."""
    avail = available_memory()
    if avail is not None and nbytes > avail:
        raise MemoryError(f"{what} needs about {nbytes / 2**30:.1f} GiB of memory; "
                          f"{avail / 2**30:.1f} GiB are available")


def check_state_arrays(arrays, shapes: dict, *, nan_ok: tuple = ()) -> dict:
    """The entries ``shapes`` names ({key: shape}) of a saved solver state, checked.

    ValueError naming a missing entry, a wrong shape, a non-finite value (NaN is allowed in the
    entries of ``nan_ok``, infinity nowhere) or a negative ``step`` or ``time`` (when present).
    """
    out = {}
    for k, shape in shapes.items():
        if k not in arrays:
            raise ValueError(f"state lacks {k!r}")
        a = np.asarray(arrays[k])
        if a.shape != shape:
            raise ValueError(f"state entry {k!r} has shape {a.shape}, expected {shape}")
        if k in nan_ok:
            if not np.all(np.isfinite(a) | np.isnan(a)):
                raise ValueError(f"state entry {k!r} holds infinite values")
        elif not np.all(np.isfinite(a)):
            raise ValueError(f"state entry {k!r} is not finite")
        out[k] = a
    if "step" in out and "time" in out:
        step, time = int(out["step"]), float(out["time"])
        if step < 0 or time < 0:
            raise ValueError(f"state has a negative step ({step}) or time ({time})")
    return out


def check_number(name: str, v, *, positive: bool = False, allow_none: bool = False,
                 integer: bool = False, allow_inf: bool = False) -> None:
    """ValueError naming ``name`` unless ``v`` is a finite number >= 0 (> 0 with
    ``positive``; an integer >= 1 with ``integer``; None allowed with ``allow_none``, and
    ``inf`` with ``allow_inf``: a bound that does not bind): the solvers' settings checks."""
    if v is None and allow_none:
        return
    ok = not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))
    if ok and allow_inf and v == math.inf:
        return
    if integer:
        ok = ok and isinstance(v, (int, np.integer)) and v >= 1
    if not ok or not math.isfinite(v) or (positive and v <= 0) or v < 0:
        what = "an integer >= 1" if integer else ("a positive number" if positive else
                                                   "a number >= 0")
        raise ValueError(f"{name} must be {what}{' or inf' if allow_inf else ''}"
                         f"{' or None' if allow_none else ''}, got {v!r}")
