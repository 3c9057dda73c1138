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
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.spatial.transform import Rotation, RotationSpline

from .validate import as_vector, check_rotation

__all__ = ["Motion", "Fixed", "ConstantVelocity", "Keyframes", "FunctionMotion"]


class Motion:
    """Base class: a frame's pose as a function of time."""

    def pose(self, t: float) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def moves(self) -> bool:
        """False when the pose never changes (solvers then skip it)."""
        return True

    def to_dict(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


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
    ``rotations`` [K, 3, 3] (default: identity throughout) by a rotation spline with continuous
    angular velocity and acceleration (scipy's ``RotationSpline``).  Before the first and after
    the last key the frame holds its first and last pose.
    """

    times: np.ndarray
    origins: np.ndarray
    rotations: np.ndarray | None = None
    _pos: CubicSpline = field(init=False, repr=False)
    _rot: RotationSpline | None = field(init=False, repr=False)

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
        object.__setattr__(self, "_rot", RotationSpline(t, Rotation.from_matrix(r)))

    def pose(self, t):
        tc = min(max(float(t), self.times[0]), self.times[-1])
        o = self._pos(tc)
        r = np.eye(3) if self._rot is None else self._rot(tc).as_matrix()
        return r, o

    def to_dict(self) -> dict:
        d = {"type": "keyframes", "times": self.times.tolist(), "origins": self.origins.tolist()}
        if self.rotations is not None:
            d["rotations"] = self.rotations.tolist()
        return d


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
