"""The camera of the PyVista renderer: automatic framing, explicit settings, projection.

A :class:`Camera` says what the user asked for (angles, distance, or an explicit position);
:meth:`Camera.resolve` turns it, with the bounds of everything drawn over all frames, into a
:class:`View` (position, focal point, up vector, vertical view angle) that stays the same for
every frame.  :meth:`View.project` maps world points to pixel coordinates exactly as the
perspective renderer does, so a caller (or a test) can find where a point lands in an image.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["Camera", "View", "bounds_of"]


def _vec3(name: str, value) -> np.ndarray | None:
    if value is None:
        return None
    v = np.asarray(value, dtype=np.float64)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"camera {name} must be 3 finite numbers [m], got {value!r}")
    return v


@dataclass(frozen=True)
class Camera:
    """What the camera should do; every field is optional.

    * ``elevation``, ``azimuth`` [deg]: direction from the focal point to the camera, azimuth
      measured in the x-y plane from +x towards +y, elevation above that plane (matplotlib's
      ``view_init`` convention; z is up);
    * ``distance`` [m]: from the focal point (default: the smallest distance at which the
      bounding sphere of the scene fits in the image);
    * ``focal_point`` [m] (default: the centre of the bounds);
    * ``position`` [m]: an explicit camera position, which overrides the angles and distance;
    * ``view_angle`` [deg]: vertical field of view.
    """

    elevation: float = 20.0
    azimuth: float = -60.0
    distance: float | None = None
    focal_point: tuple | None = None
    position: tuple | None = None
    view_angle: float = 30.0

    def __post_init__(self):
        for k in ("elevation", "azimuth", "view_angle"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"camera {k} must be a finite number of degrees, got {v!r}")
        if not 1.0 <= self.view_angle <= 170.0:
            raise ValueError(f"camera view_angle must be within 1 .. 170 degrees, got "
                             f"{self.view_angle}")
        if self.distance is not None and not (math.isfinite(self.distance)
                                              and self.distance > 0):
            raise ValueError(f"camera distance must be a positive number of metres, got "
                             f"{self.distance!r}")
        _vec3("focal_point", self.focal_point)
        _vec3("position", self.position)

    @classmethod
    def parse(cls, text: str) -> Camera:
        """``"ELEV,AZIM"`` or ``"ELEV,AZIM,DIST"`` (degrees, degrees, metres)."""
        try:
            vals = [float(v) for v in str(text).split(",")]
        except ValueError:
            vals = []
        if len(vals) not in (2, 3):
            raise ValueError(f"camera must be ELEV,AZIM or ELEV,AZIM,DIST (degrees, metres), "
                             f"got {text!r}")
        return cls(elevation=vals[0], azimuth=vals[1],
                   distance=vals[2] if len(vals) == 3 else None)

    def resolve(self, bounds, size) -> View:
        """The :class:`View` for scene ``bounds`` [[min xyz], [max xyz]] [m] and an image of
        ``size`` = (width, height) pixels."""
        b = np.asarray(bounds, dtype=np.float64)
        center = 0.5 * (b[0] + b[1])
        focal = _vec3("focal_point", self.focal_point)
        focal = center if focal is None else focal
        position = _vec3("position", self.position)
        el, az = math.radians(self.elevation), math.radians(self.azimuth)
        if position is None:
            direction = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az),
                                  math.sin(el)])
            dist = self.distance
            if dist is None:
                dist = _fit_distance(b, focal, self.view_angle, size)
            position = focal + dist * direction
        forward = focal - position
        if np.linalg.norm(forward) == 0:
            raise ValueError("camera position and focal point coincide")
        up = np.array([0.0, 0.0, 1.0])
        if np.linalg.norm(np.cross(forward, up)) < 1e-6 * np.linalg.norm(forward):
            up = np.array([-math.cos(az), -math.sin(az), 0.0])   # looking straight down/up
        return View(position, focal, up, float(self.view_angle))


def _fit_distance(bounds: np.ndarray, focal: np.ndarray, view_angle: float, size) -> float:
    """Distance at which the sphere around ``bounds`` centred at ``focal`` fits the image."""
    radius = float(np.max(np.linalg.norm(
        np.stack(np.meshgrid(*bounds.T, indexing="ij"), -1).reshape(-1, 3) - focal, axis=1)))
    radius = max(radius, 1e-4)
    half_v = math.radians(view_angle) / 2.0
    half_h = math.atan(math.tan(half_v) * size[0] / size[1])
    return 1.05 * radius / math.sin(min(half_v, half_h))


class View(NamedTuple):
    """A resolved camera: ``position``, ``focal_point``, ``up`` [3] and vertical
    ``view_angle`` [deg]."""

    position: np.ndarray
    focal_point: np.ndarray
    up: np.ndarray
    view_angle: float

    def basis(self):
        """Unit vectors (right, true up, backward) of the camera."""
        back = self.position - self.focal_point
        back = back / np.linalg.norm(back)
        right = np.cross(self.up, back)
        right /= np.linalg.norm(right)
        return right, np.cross(back, right), back

    def metres_per_pixel(self, height: int) -> float:
        """Size of one pixel at the focal point [m] for an image ``height`` pixels high."""
        d = float(np.linalg.norm(self.position - self.focal_point))
        return 2.0 * d * math.tan(math.radians(self.view_angle) / 2.0) / height

    def project(self, points, size) -> np.ndarray:
        """Pixel coordinates (column, row from the top left) [n, 2] of ``points`` [n, 3] [m] in
        an image of ``size`` = (width, height) pixels (perspective projection)."""
        p = np.asarray(points, dtype=np.float64).reshape(-1, 3) - self.position
        right, up, back = self.basis()
        depth = -(p @ back)
        scale = 1.0 / (math.tan(math.radians(self.view_angle) / 2.0) * depth)
        w, h = size
        x = (p @ right) * scale * h / w
        y = (p @ up) * scale
        return np.stack([(x + 1.0) * 0.5 * w, (1.0 - y) * 0.5 * h], axis=1)


def bounds_of(*point_sets) -> np.ndarray:
    """Box [[min xyz], [max xyz]] [m] of all finite points of ``point_sets`` (arrays [..., 3];
    ``None`` and empty sets ignored); a unit box around the origin without any point."""
    chunks = []
    for s in point_sets:
        if s is None:
            continue
        arr = np.asarray(s, dtype=np.float64).reshape(-1, 3)
        arr = arr[np.all(np.isfinite(arr), axis=1)]
        if arr.shape[0]:
            chunks.append(np.stack([arr.min(axis=0), arr.max(axis=0)]))
    if not chunks:
        return np.array([[-0.5] * 3, [0.5] * 3])
    pts = np.concatenate(chunks)
    return np.stack([pts.min(axis=0), pts.max(axis=0)])
