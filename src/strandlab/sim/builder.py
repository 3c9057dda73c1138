"""SceneBuilder: describe strands, attachments, bodies and colliders, then build a Model.

Example
-------
>>> import numpy as np
>>> from strandlab import SceneBuilder, Material
>>> b = SceneBuilder(gravity=(0, 0, -9.81))
>>> mat = Material(young_modulus=1e7, density=1000.0, radius=0.005)
>>> s = b.add_strand(np.c_[np.linspace(0, 1, 21), np.zeros(21), np.zeros(21)], material=mat)
>>> f = b.add_frame(origin=(0, 0, 0))
>>> b.attach_to_frame(s, f, end=0)
>>> model = b.build()
>>> model.n_edges
20
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .material import Material
from .model import Model
from .validate import as_points, as_vector, check_alpha, check_positive

__all__ = ["SceneBuilder"]


@dataclass
class _Strand:
    points: np.ndarray
    rest_points: np.ndarray
    velocities: np.ndarray | None
    material: Material
    closed: bool
    ghost_direction: np.ndarray | None
    ghost_distance: float | None
    alpha: tuple | None
    ghost_mass_ratio: float | None
    initial_twist: float
    name: str


class SceneBuilder:
    """Collects a scene description and builds a frozen :class:`~strandlab.sim.model.Model`.

    Every ``add_*`` method validates its input at once and returns an integer handle.
    """

    def __init__(self, *, gravity=(0.0, 0.0, -9.81)):
        self.gravity = as_vector("gravity", gravity)
        self._strands: list[_Strand] = []
        self._frames: list[dict] = []
        self._frame_att: list[dict] = []
        self._meshes: list[dict] = []
        self._tri_att: list[dict] = []
        self._bodies: list[dict] = []
        self._body_att: list[dict] = []
        self._colliders: list[dict] = []
        self._fixed: list[tuple[int, int]] = []

    # ------------------------------------------------------------------ strands
    def add_strand(self, points, *, material: Material, closed: bool = False, rest_points=None,
                   velocities=None, ghost_direction=None, ghost_distance=None, alpha=None,
                   ghost_mass_ratio=None, initial_twist: float = 0.0,
                   name: str | None = None) -> int:
        """Add a strand (rod) through ``points`` [m], shape [n, 3].

        ``rest_points`` (default ``points``): the stress-free shape.  ``ghost_direction``: the
        material direction d1 (towards the ghost point), either one vector (for the first edge;
        the others follow by parallel transport, giving twist-free frames) or one per edge
        [n_edges, 3] (e.g. a ribbon's width direction).  ``ghost_distance`` [m]: ghost point
        distance from the edge (default: mean rest edge length).  ``alpha``: stiffness alphas
        (bend about d1, bend about d2, twist), each in [0, 1]; default: derived from the material
        by the solver.  ``ghost_mass_ratio``: ghost mass as a fraction of its edge's mass
        (default: the physical value ``rho (I1 + I2) L / l_g^2``).  ``initial_twist`` [rad]:
        total twist of the initial material frames relative to the rest frames, spread
        uniformly over the arclength (e.g. a pre-twisted ring; whole turns for closed strands).
        """
        sid = len(self._strands)
        label = name or f"strand {sid}"
        if not isinstance(material, Material):
            raise TypeError(f"{label}: material must be a strandlab Material")
        pts = as_points(f"{label} points", points, min_points=3 if closed else 2)
        rest = pts if rest_points is None else as_points(f"{label} rest_points", rest_points,
                                                         min_points=len(pts))
        if rest.shape != pts.shape:
            raise ValueError(f"{label}: rest_points has shape {rest.shape}, points {pts.shape}")
        vel = None
        if velocities is not None:
            vel = np.array(velocities, dtype=np.float64)
            if vel.shape != pts.shape or not np.all(np.isfinite(vel)):
                raise ValueError(f"{label}: velocities must be finite with shape {pts.shape}")
        for arr, what in ((pts, "points"), (rest, "rest_points")):
            e = (np.roll(arr, -1, axis=0) - arr) if closed else np.diff(arr, axis=0)
            ln = np.linalg.norm(e, axis=1)
            scale = max(float(np.max(np.abs(arr))), 1.0)
            bad = np.nonzero(ln <= 1e-12 * scale)[0]
            if len(bad):
                k = int(bad[0])
                raise ValueError(f"{label}: {what} {k} and {(k + 1) % len(arr)} coincide "
                                 f"(zero-length edge {k})")
        n_edges = len(pts) if closed else len(pts) - 1
        gd = None
        if ghost_direction is not None:
            gd = np.array(ghost_direction, dtype=np.float64)
            if gd.shape not in ((3,), (n_edges, 3)) or not np.all(np.isfinite(gd)):
                raise ValueError(f"{label}: ghost_direction must be finite with shape (3,) or "
                                 f"({n_edges}, 3), got {gd.shape}")
        if ghost_distance is not None:
            ghost_distance = check_positive(f"{label} ghost_distance", ghost_distance)
        if alpha is not None:
            alpha = check_alpha(f"{label} alpha", alpha)
        if ghost_mass_ratio is not None:
            ghost_mass_ratio = check_positive(f"{label} ghost_mass_ratio", ghost_mass_ratio)
        twist = float(initial_twist)
        if not math.isfinite(twist):
            raise ValueError(f"{label}: initial_twist must be finite, got {initial_twist!r}")
        turns = twist / (2 * math.pi)
        if closed and abs(turns - round(turns)) > 1e-9:
            raise ValueError(f"{label}: a closed strand's initial_twist must be a whole number of "
                             f"turns (a multiple of 2 pi), got {twist!r}")
        self._strands.append(_Strand(pts, rest, vel, material, bool(closed), gd, ghost_distance,
                                     alpha, ghost_mass_ratio, twist, label))
        return sid

    def fix_vertex(self, strand: int, vertex: int) -> None:
        """Make one vertex kinematic (infinite mass) at its initial position."""
        self._check_strand(strand)
        n = len(self._strands[strand].points)
        if not -n <= vertex < n:
            raise IndexError(f"strand {strand} has no vertex {vertex}")
        self._fixed.append((strand, vertex % n))

    # ------------------------------------------------------------------ frames
    def add_frame(self, origin, rotation=None, *, linear_velocity=(0, 0, 0),
                  angular_velocity=(0, 0, 0), start: float = 0.0, stop: float = math.inf) -> int:
        """A kinematic frame: fixed, or moving with constant linear and angular velocity.

        ``rotation``: [3, 3] with the frame axes as columns (default identity).
        ``angular_velocity`` [rad/s] is a world-frame vector through the frame origin; the motion
        runs between ``start`` and ``stop`` [s] and holds still outside.
        """
        o = as_vector("frame origin", origin)
        r = np.eye(3) if rotation is None else np.array(rotation, dtype=np.float64)
        if r.shape != (3, 3) or not np.all(np.isfinite(r)):
            raise ValueError("frame rotation must be a finite 3x3 matrix")
        if not np.allclose(r.T @ r, np.eye(3), atol=1e-6) or np.linalg.det(r) <= 0:
            raise ValueError("frame rotation must be a proper rotation (orthonormal, det +1)")
        lv = as_vector("frame linear_velocity", linear_velocity)
        av = as_vector("frame angular_velocity", angular_velocity)
        start = float(start)
        stop = float(stop)
        if not math.isfinite(start) or math.isnan(stop) or stop < start:
            raise ValueError(f"frame motion window [{start}, {stop}] is invalid")
        self._frames.append({"origin": o, "rotation": r, "linear_velocity": lv,
                             "angular_velocity": av, "window": (start, stop)})
        return len(self._frames) - 1

    def attach_to_frame(self, strand: int, frame: int, *, end: int = 0,
                        orientation: bool = True) -> None:
        """Clamp a strand end to a kinematic frame (section 5.1, eqs. 22-24).

        The end vertex follows the frame; with ``orientation`` the end edge's material frame is
        held at its rest orientation relative to the frame, so turning the frame twists the rod.
        """
        self._check_strand(strand)
        if not 0 <= frame < len(self._frames):
            raise IndexError(f"frame {frame} does not exist")
        self._frame_att.append({"strand": strand, "frame": frame, "end": self._end(strand, end),
                                "orientation": bool(orientation)})

    # ------------------------------------------------------------------ meshes and bodies
    def add_mesh(self, vertices, triangles, *, mass: float, compliance: float = 0.0,
                 collide_radius: float = 0.0, velocities=None, fixed=()) -> int:
        """A deformable triangle mesh: points of equal mass, a distance constraint per mesh edge.

        ``mass`` [kg] total; ``compliance`` [m/N] of the edge constraints (0: hard, which keeps a
        closed convex triangulated surface rigid); ``collide_radius`` [m] for its vertices.
        """
        v = as_points("mesh vertices", vertices, min_points=3)
        t = np.array(triangles, dtype=np.int64)
        if t.ndim != 2 or t.shape[1] != 3 or len(t) == 0:
            raise ValueError(f"mesh triangles must have shape [n, 3], got {t.shape}")
        if t.min() < 0 or t.max() >= len(v):
            raise ValueError("mesh triangles reference vertices that do not exist")
        mass = check_positive("mesh mass", mass)
        if compliance < 0 or not math.isfinite(compliance):
            raise ValueError(f"mesh compliance must be >= 0, got {compliance}")
        vel = np.zeros_like(v) if velocities is None else np.array(velocities, dtype=np.float64)
        if vel.shape != v.shape or not np.all(np.isfinite(vel)):
            raise ValueError("mesh velocities must be finite with the vertices' shape")
        self._meshes.append({"vertices": v, "triangles": t, "mass": mass,
                             "compliance": float(compliance), "radius": float(collide_radius),
                             "velocities": vel, "fixed": [int(i) for i in fixed]})
        return len(self._meshes) - 1

    def attach_to_triangle(self, strand: int, mesh: int, triangle: int, *, end: int = 0) -> None:
        """Two-way coupling of a strand end to a mesh triangle (section 5.1, eq. 25).

        The end vertex is pinned to its barycentric position on the triangle (it must lie on the
        triangle's plane, inside the triangle) and its edge frame to the triangle's frame.
        """
        self._check_strand(strand)
        if not 0 <= mesh < len(self._meshes):
            raise IndexError(f"mesh {mesh} does not exist")
        if not 0 <= triangle < len(self._meshes[mesh]["triangles"]):
            raise IndexError(f"mesh {mesh} has no triangle {triangle}")
        self._tri_att.append({"strand": strand, "mesh": mesh, "triangle": triangle,
                              "end": self._end(strand, end)})

    def add_rigid_body(self, position, rotation=None, *, mass: float, size: float) -> int:
        """A small rigid body (a joint of a rod network), represented by its centre and two
        ghost points at distance ``size`` [m] along its first two axes (section 5.1, eq. 26)."""
        p = as_vector("rigid body position", position)
        r = np.eye(3) if rotation is None else np.array(rotation, dtype=np.float64)
        if r.shape != (3, 3) or not np.allclose(r.T @ r, np.eye(3), atol=1e-6):
            raise ValueError("rigid body rotation must be an orthonormal 3x3 matrix")
        self._bodies.append({"position": p, "rotation": r,
                             "mass": check_positive("rigid body mass", mass),
                             "size": check_positive("rigid body size", size)})
        return len(self._bodies) - 1

    def attach_to_body(self, strand: int, body: int, *, end: int = 0,
                       orientation: bool = True) -> None:
        """Join a strand end to a rigid body: position pin and (with ``orientation``) the
        orientation constraint that transmits torque between the rods of a network."""
        self._check_strand(strand)
        if not 0 <= body < len(self._bodies):
            raise IndexError(f"rigid body {body} does not exist")
        self._body_att.append({"strand": strand, "body": body, "end": self._end(strand, end),
                               "orientation": bool(orientation)})

    # ------------------------------------------------------------------ colliders
    def add_plane(self, point, normal, *, friction: float = 0.0) -> None:
        """Half-space collider: points stay on the side ``normal`` points to."""
        n = as_vector("plane normal", normal)
        ln = np.linalg.norm(n)
        if ln == 0:
            raise ValueError("plane normal must be non-zero")
        self._colliders.append({"type": "plane", "point": as_vector("plane point", point),
                                "normal": n / ln, "friction": self._friction(friction)})

    def add_sphere(self, center, radius: float, *, friction: float = 0.0) -> None:
        """Solid sphere collider."""
        self._colliders.append({"type": "sphere", "center": as_vector("sphere center", center),
                                "radius": check_positive("sphere radius", radius),
                                "friction": self._friction(friction)})

    def add_capsule(self, a, b, radius: float, *, friction: float = 0.0) -> None:
        """Capsule collider: all points within ``radius`` of segment ``a``-``b``."""
        self._colliders.append({"type": "capsule", "a": as_vector("capsule a", a),
                                "b": as_vector("capsule b", b),
                                "radius": check_positive("capsule radius", radius),
                                "friction": self._friction(friction)})

    # ------------------------------------------------------------------ helpers
    def _check_strand(self, s):
        if not 0 <= s < len(self._strands):
            raise IndexError(f"strand {s} does not exist")

    def _end(self, strand, end):
        if end not in (0, -1):
            raise ValueError(f"end must be 0 (first vertex) or -1 (last vertex), got {end}")
        if self._strands[strand].closed:
            raise ValueError(f"{self._strands[strand].name} is closed and has no ends")
        return end

    @staticmethod
    def _friction(f):
        f = float(f)
        if not math.isfinite(f) or f < 0:
            raise ValueError(f"friction must be >= 0, got {f}")
        return f

    def build(self) -> Model:
        """Lay out all points and constraints and return the frozen Model."""
        from .assemble import assemble
        return assemble(self)
