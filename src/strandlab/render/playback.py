"""Playback of a recorded run: which frame to show as wall-clock time passes.

:class:`Playback` holds the playing position as a simulation time [s] and turns it into a frame
index of the trajectory; the viewer (:mod:`strandlab.render.viewer`) advances it by the wall
time between two page updates times the speed, and the frame slider scrubs it.  It knows
nothing of the viewer library, so its rules are tested on their own.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Playback", "positive_number"]


def positive_number(name: str, value) -> float:
    """``value`` as a positive finite float, or ValueError naming ``name``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


class Playback:
    """Play, pause, scrub and speed over the frame times of a trajectory.

    ``times``: frame times [s], shape [T] (T >= 1, non-decreasing); ``speed``: simulated seconds
    per wall-clock second (> 0; 1 is real time); ``loop``: start again from the first frame at
    the end of the run instead of stopping there.  The frame shown at playing time ``t`` is the
    last frame whose time is at most ``t``.
    """

    def __init__(self, times, *, speed: float = 1.0, loop: bool = False):
        t = np.asarray(times, dtype=np.float64)
        if t.ndim != 1 or t.size == 0:
            raise ValueError(f"times must be a non-empty 1-D array, got shape {t.shape}")
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
            raise ValueError("times must be finite and non-decreasing")
        self.times = t
        self.speed = positive_number("speed", speed)
        self.loop = bool(loop)
        self.playing = False
        self.time = float(t[0])        #: playing position [s]

    @property
    def n_frames(self) -> int:
        return int(self.times.size)

    @property
    def duration(self) -> float:
        """Simulated time from the first to the last frame [s]."""
        return float(self.times[-1] - self.times[0])

    @property
    def frame(self) -> int:
        """Index of the frame shown at the playing position."""
        k = int(np.searchsorted(self.times, self.time, side="right")) - 1
        return min(max(k, 0), self.n_frames - 1)

    @property
    def at_end(self) -> bool:
        """Whether the playing position is at the last frame."""
        return self.time >= self.times[-1]

    def set_speed(self, speed) -> None:
        """Simulated seconds per wall second (> 0)."""
        self.speed = positive_number("speed", speed)

    def play(self) -> None:
        """Start playing; from the first frame again when at the end of the run."""
        if self.at_end and self.n_frames > 1:
            self.time = float(self.times[0])
        self.playing = True

    def pause(self) -> None:
        self.playing = False

    def scrub(self, k) -> int:
        """Show frame ``k`` (clipped to the run; negative counts from the end); returns the
        frame shown.  Playing goes on from there."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"frame index must be an integer, got {type(k).__name__}")
        k = int(k) + self.n_frames if k < 0 else int(k)
        k = min(max(k, 0), self.n_frames - 1)
        self.time = float(self.times[k])
        return k

    def advance(self, wall_seconds: float) -> int:
        """Move the playing position by ``wall_seconds`` [s] of wall time times the speed (when
        playing) and return the frame to show.  At the end of the run playback stops on the
        last frame, or with ``loop`` wraps around to the first."""
        if not (math.isfinite(wall_seconds) and wall_seconds >= 0):
            raise ValueError(f"wall_seconds must be a finite number >= 0, got {wall_seconds!r}")
        if not self.playing:
            return self.frame
        t = self.time + wall_seconds * self.speed
        end = float(self.times[-1])
        if t >= end:
            if self.loop and self.duration > 0:
                t = float(self.times[0]) + (t - end) % self.duration
            else:
                t = end
                self.playing = False
        self.time = t
        return self.frame
