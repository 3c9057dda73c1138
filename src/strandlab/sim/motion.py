"""How kinematic frames move: fixed, constant velocity, keyframes, or a function of time.

Every motion answers ``pose(t) -> (rotation [3, 3], origin [3])``: the frame's axes (as columns)
and origin [m] at time ``t`` [s].  Solvers evaluate it once per (sub)step for the few frames of a
scene; what the frame holds follows it.

Example
-------
>>> import numpy as np
>>> from strandlab.sim.motion import Keyframes
>>> m = Keyframes(times=[0.0, 1.0], origins=[[0, 0, 0], [1, 0, 0]])
>>> r, o = m.pose(0.5)
>>> bool(np.allclose(o, [0.5, 0, 0]))
True
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.spatial.transform import Rotation

from .validate import as_vector, check_rotation

__all__ = ["Motion", "Fixed", "ConstantVelocity", "Keyframes", "FunctionMotion"]


class Motion(ABC):
    """Base class: a frame's pose as a function of time."""

    @abstractmethod
    def pose(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(rotation [3, 3], origin [3] [m]) at time ``t`` [s]."""

    @property
    def moves(self) -> bool:
        """False when the pose never changes (solvers then skip it)."""
        return True

    @abstractmethod
    def to_dict(self) -> dict:
        """A JSON-serialisable description."""


@dataclass(frozen=True, eq=False)
class Fixed(Motion):
    """A frame that holds still at ``origin`` [m] with axes ``rotation`` [3, 3]."""

    origin: np.ndarray
    rotation: np.ndarray

    def pose(self, t):
        return self.rotation, self.origin

    @property
    def moves(self) -> bool:
        return False

    def to_dict(self) -> dict:
        return {"type": "fixed"}


@dataclass(frozen=True, eq=False)
class ConstantVelocity(Motion):
    """Linear velocity [m/s] and world-frame angular velocity [rad/s] about the moving origin,
    between ``start`` and ``stop`` [s]; the frame holds still outside that window."""

    origin: np.ndarray
    rotation: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    start: float = 0.0
    stop: float = math.inf

    def pose(self, t):
        tau = min(max(t - self.start, 0.0), self.stop - self.start)
        r = Rotation.from_rotvec(self.angular_velocity * tau).as_matrix() @ self.rotation
        return r, self.origin + self.linear_velocity * tau

    @property
    def moves(self) -> bool:
        return bool(np.any(self.linear_velocity != 0) or np.any(self.angular_velocity != 0))

    def to_dict(self) -> dict:
        return {"type": "constant_velocity", "linear_velocity": self.linear_velocity.tolist(),
                "angular_velocity": self.angular_velocity.tolist(), "start": self.start,
                "stop": self.stop}


@dataclass(frozen=True, eq=False)
class Keyframes(Motion):
    """Poses at increasing ``times`` [s] (``K >= 2``), interpolated smoothly.

    ``origins`` [K, 3] [m] are joined by a cubic spline with zero velocity at both ends;
    ``rotations`` [K, 3, 3] (default: identity throughout) as ``R(t) = R_0 exp(phi(t))``, where
    the rotation vector ``phi`` [rad] is a cubic spline with zero rate at both ends through the
    rotation vectors of ``R_0^T R_k`` (each taken within half a turn of the previous one, so
    consecutive keys must differ by less than half a turn): the angular velocity is continuous
    and zero at both ends.  Before the first and after the last key the frame holds its first
    and last pose, and at a key time the pose is that key's exactly.
    """

    times: np.ndarray
    origins: np.ndarray
    rotations: np.ndarray | None = None
    _pos: CubicSpline = field(init=False, repr=False)
    _rot: CubicSpline | None = field(init=False, repr=False)

    def __post_init__(self):
        t = np.asarray(self.times, dtype=np.float64)
        if t.ndim != 1 or len(t) < 2:
            raise ValueError(f"keyframes need at least 2 times, got shape {t.shape}")
        if not np.all(np.isfinite(t)):
            raise ValueError("keyframe times must be finite")
        if np.any(np.diff(t) <= 0):
            k = int(np.argmax(np.diff(t) <= 0))
            raise ValueError(f"keyframe times must increase: time {k + 1} ({t[k + 1]:g} s) is "
                             f"not after time {k} ({t[k]:g} s)")
        o = np.asarray(self.origins, dtype=np.float64)
        if o.shape != (len(t), 3) or not np.all(np.isfinite(o)):
            raise ValueError(f"keyframe origins must be finite with shape ({len(t)}, 3), got "
                             f"{o.shape}")
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "origins", o)
        object.__setattr__(self, "_pos", CubicSpline(t, o, bc_type="clamped"))
        if self.rotations is None:
            object.__setattr__(self, "_rot", None)
            return
        r = np.asarray(self.rotations, dtype=np.float64)
        if r.shape != (len(t), 3, 3):
            raise ValueError(f"keyframe rotations must have shape ({len(t)}, 3, 3), got {r.shape}")
        for k in range(len(t)):
            check_rotation(f"keyframe rotation {k}", r[k])
        object.__setattr__(self, "rotations", r)
        object.__setattr__(self, "_rot", CubicSpline(t, _unwrapped_rotvecs(r), bc_type="clamped"))

    def pose(self, t):
        tc = min(max(float(t), self.times[0]), self.times[-1])
        k = int(np.searchsorted(self.times, tc))
        if k < len(self.times) and self.times[k] == tc:  # a key: its pose exactly
            r = np.eye(3) if self.rotations is None else self.rotations[k].copy()
            return r, self.origins[k].copy()
        o = self._pos(tc)
        if self._rot is None:
            return np.eye(3), o
        return self.rotations[0] @ Rotation.from_rotvec(self._rot(tc)).as_matrix(), o

    def to_dict(self) -> dict:
        d = {"type": "keyframes", "times": self.times.tolist(), "origins": self.origins.tolist()}
        if self.rotations is not None:
            d["rotations"] = self.rotations.tolist()
        return d


def _unwrapped_rotvecs(r: np.ndarray) -> np.ndarray:
    """Rotation vectors [K, 3] [rad] of ``r[0]^T r[k]``, each the one of its rotation (the
    principal vector plus whole turns about its axis) nearest to the previous key's."""
    rel = Rotation.from_matrix(np.einsum("ji,kjl->kil", r[0], r)).as_rotvec()
    out = np.zeros_like(rel)
    for k in range(1, len(rel)):
        v, prev = rel[k], out[k - 1]
        ang = float(np.linalg.norm(v))
        if ang > 1e-12:
            axis = v / ang
        elif np.linalg.norm(prev) > 1e-12:
            axis = prev / np.linalg.norm(prev)
        else:
            continue  # identity after identity
        n0 = round(float(np.dot(prev, axis)) / (2 * math.pi))
        cands = [v + 2 * math.pi * n * axis for n in (n0 - 1, n0, n0 + 1)]
        out[k] = min(cands, key=lambda c: float(np.linalg.norm(c - prev)))
    return out


@dataclass(frozen=True, eq=False)
class FunctionMotion(Motion):
    """A Python function of time: ``fn(t)`` returns the origin [3] [m], or a pair
    ``(rotation [3, 3], origin [3])``.  Its result is checked at every call."""

    fn: Callable
    name: str = "function"

    def pose(self, t):
        out = self.fn(float(t))
        if isinstance(out, tuple) and len(out) == 2:
            r = check_rotation(f"{self.name}({t:g}) rotation", out[0])
            o = as_vector(f"{self.name}({t:g}) origin", out[1])
            return r, o
        return np.eye(3), as_vector(f"{self.name}({t:g}) origin", out)

    def to_dict(self) -> dict:
        return {"type": "function", "name": self.name}
