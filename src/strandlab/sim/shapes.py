"""Point sets for common strand shapes and meshes (used by scenes and scene files)."""
from __future__ import annotations

import numpy as np

from ..geometry.transport import perpendicular_unit
from .validate import as_vector, check_positive, show

__all__ = ["line", "helix", "circle", "box_mesh"]


#: Most segments one shape may have (a strand of 10 million edges needs gigabytes of memory
#: before any solver sees it; more is refused before anything is allocated).
MAX_SEGMENTS = 10_000_000


def _segments(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"segments must be an integer >= 1, got {show(n)}")
    if n > MAX_SEGMENTS:
        raise ValueError(f"segments = {int(n):,} is more than the limit of {MAX_SEGMENTS:,}")
    return int(n)


def line(start, end, segments: int) -> np.ndarray:
    """``segments + 1`` points evenly spaced from ``start`` to ``end`` [m], shape [n, 3]."""
    a = as_vector("line start", start)
    b = as_vector("line end", end)
    if np.allclose(a, b):
        raise ValueError("line start and end coincide")
    t = np.linspace(0.0, 1.0, _segments(segments) + 1)[:, None]
    return a + t * (b - a)


def helix(*, radius: float, pitch: float, turns: float, segments: int, center=(0, 0, 0),
          axis=(0, 0, 1)) -> np.ndarray:
    """Points on a helix of ``radius`` and ``pitch`` (rise per turn) [m] about ``axis``."""
    r = check_positive("helix radius", radius)
    ax = as_vector("helix axis", axis)
    ax = ax / np.linalg.norm(ax)
    u = perpendicular_unit(ax)
    v = np.cross(ax, u)
    t = np.linspace(0.0, 2 * np.pi * float(turns), _segments(segments) + 1)
    c = as_vector("helix center", center)
    return (c + r * np.cos(t)[:, None] * u + r * np.sin(t)[:, None] * v
            + (float(pitch) * t / (2 * np.pi))[:, None] * ax)


def circle(*, radius: float, segments: int, center=(0, 0, 0), normal=(0, 0, 1)) -> np.ndarray:
    """``segments`` points of a closed circle (the closing edge is implicit), shape [n, 3]."""
    r = check_positive("circle radius", radius)
    n = as_vector("circle normal", normal)
    n = n / np.linalg.norm(n)
    if _segments(segments) < 3:
        raise ValueError("a circle needs at least 3 segments")
    u = perpendicular_unit(n)
    v = np.cross(n, u)
    t = np.linspace(0.0, 2 * np.pi, int(segments), endpoint=False)
    c = as_vector("circle center", center)
    return c + r * (np.cos(t)[:, None] * u + np.sin(t)[:, None] * v)


def box_mesh(center, size) -> tuple[np.ndarray, np.ndarray]:
    """Closed triangulated box: vertices [8, 3] and outward-facing triangles [12, 3]."""
    c = as_vector("box center", center)
    s = np.broadcast_to(np.asarray(size, dtype=np.float64), (3,)).copy()
    if np.any(s <= 0) or not np.all(np.isfinite(s)):
        raise ValueError(f"box size must be positive, got {show(size)}")
    corners = np.array([[x, y, z] for z in (-0.5, 0.5) for y in (-0.5, 0.5) for x in (-0.5, 0.5)])
    v = c + corners * s
    t = np.array([[0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4],
                  [2, 6, 3], [3, 6, 7], [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5]])
    return v, t
