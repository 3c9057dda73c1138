"""SceneBuilder: describe strands, attachments, bodies, loads and colliders, then build a Scene.

The builder records what the user means in physical terms; :meth:`SceneBuilder.build` returns a
frozen, solver-neutral :class:`~strandlab.sim.scene.Scene` that any solver compiles.

Example
-------
>>> import numpy as np
>>> from strandlab import SceneBuilder, Material
>>> b = SceneBuilder(gravity=(0, 0, -9.81))
>>> mat = Material(young_modulus=1e7, density=1000.0, radius=0.005)
>>> s = b.add_strand(np.c_[np.linspace(0, 1, 21), np.zeros(21), np.zeros(21)], material=mat)
>>> f = b.add_frame(origin=(0, 0, 0))
>>> b.attach_to_frame(s, f, end=0)
>>> scene = b.build()
>>> scene.n_edges
20
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from .material import Material
from .motion import ConstantVelocity, Fixed, FunctionMotion, Keyframes, Motion
from .scene import (
    BodyAttachment,
    BodySpec,
    Collider,
    FrameAttachment,
    FrameSpec,
    MeshSpec,
    PointLoad,
    Scene,
    StrandSpec,
    TriangleAttachment,
)
from .simplicial import SimplicialSpec
from .validate import as_points, as_vector, check_positive, check_rotation, show

__all__ = ["SceneBuilder", "MAX_POINTS"]

#: Largest number of points (vertices of strands and meshes) a scene may hold; a scene file or
#: script asking for more is refused before anything is allocated.
MAX_POINTS = 20_000_000


class SceneBuilder:
    """Collects a scene description and builds a frozen :class:`~strandlab.sim.scene.Scene`.

    Every ``add_*`` method validates its input at once (errors name the item) and returns an
    integer handle.
    """

    def __init__(self, *, gravity=(0.0, 0.0, -9.81)):
        self.gravity = as_vector("gravity", gravity)
        self._strands: list[StrandSpec] = []
        self._frames: list[FrameSpec] = []
        self._frame_att: list[FrameAttachment] = []
        self._meshes: list[MeshSpec] = []
        self._tri_att: list[TriangleAttachment] = []
        self._bodies: list[BodySpec] = []
        self._body_att: list[BodyAttachment] = []
        self._loads: list[PointLoad] = []
        self._colliders: list[Collider] = []
        self._simplicial: list[SimplicialSpec] = []
        self._n_points = 0
        self._held_ends: dict = {}        # (strand, end) -> what holds it, for messages

    # ------------------------------------------------------------------ strands
    def add_strand(self, points, *, material: Material, closed: bool = False, rest_points=None,
                   velocities=None, radius=None, d1=None, initial_twist: float = 0.0,
                   friction: float | None = None, options: Mapping | None = None,
                   name: str | None = None) -> int:
        """Add a strand (rod) through ``points`` [m], shape [n, 3].

        ``rest_points`` (default ``points``): the stress-free shape.  ``radius`` [m]: section
        radius, one value or one per vertex [n] (tapered hair; default ``material.radius``).
        ``d1``: the material direction, either one vector (for the first edge; the others follow
        by parallel transport, giving twist-free frames) or one per edge [n_edges, 3] (e.g. a
        ribbon's width direction).  ``initial_twist`` [rad]: total twist of the initial material
        frames relative to the rest frames, spread uniformly over the arclength (whole turns for
        closed strands).  ``friction``: the strand's Coulomb coefficient, combined with each
        collider's (see :mod:`strandlab.collision`).  ``options``: solver-specific settings,
        ``{solver name: {key: value}}``, e.g. ``{"pbd": {"ghost_distance": 0.01}}``; each solver
        checks its own and ignores the others.
        """
        with np.errstate(all="ignore"):  # every check below raises its own clear error
            return self._add_strand(points, material, closed, rest_points, velocities, radius,
                                    d1, initial_twist, friction, options, name)

    def _add_strand(self, points, material, closed, rest_points, velocities, radius, d1,
                    initial_twist, friction, options, name) -> int:
        sid = len(self._strands)
        label = name or f"strand {sid}"
        if not isinstance(material, Material):
            raise TypeError(f"{label}: material must be a strandlab Material, got "
                            f"{type(material).__name__}")
        pts = as_points(f"{label} points", points, min_points=3 if closed else 2)
        self._reserve(len(pts), label)
        rest = pts if rest_points is None else as_points(f"{label} rest_points", rest_points,
                                                         min_points=len(pts))
        if rest.shape != pts.shape:
            raise ValueError(f"{label}: rest_points has shape {rest.shape}, points {pts.shape}")
        vel = np.zeros_like(pts)
        if velocities is not None:
            vel = np.array(velocities, dtype=np.float64)
            if vel.shape == (3,):
                vel = np.tile(vel, (len(pts), 1))
            if vel.shape != pts.shape or not np.all(np.isfinite(vel)):
                raise ValueError(f"{label}: velocities must be finite with shape {pts.shape} or "
                                 f"(3,), got {vel.shape}")
        for arr, what in ((pts, "points"), (rest, "rest_points")):
            e = (np.roll(arr, -1, axis=0) - arr) if closed else np.diff(arr, axis=0)
            ln = np.linalg.norm(e, axis=1)
            scale = max(float(np.max(np.abs(arr))), 1.0)
            inf = np.nonzero(~np.isfinite(ln))[0]
            if len(inf):
                raise ValueError(f"{label}: {what}: edge {int(inf[0])} has no finite length "
                                 "(coordinates too large)")
            bad = np.nonzero(ln <= 1e-12 * scale)[0]
            if len(bad):
                k = int(bad[0])
                raise ValueError(f"{label}: {what} {k} and {(k + 1) % len(arr)} coincide "
                                 f"(zero-length edge {k})")
        n_edges = len(pts) if closed else len(pts) - 1
        rad = self._radius(label, radius, material, len(pts))
        gd = None
        if d1 is not None:
            gd = np.array(d1, dtype=np.float64)
            if gd.shape not in ((3,), (n_edges, 3)) or not np.all(np.isfinite(gd)):
                raise ValueError(f"{label}: d1 must be finite with shape (3,) or "
                                 f"({n_edges}, 3), got {gd.shape}")
            norms = np.linalg.norm(gd.reshape(-1, 3), axis=1)
            if np.any(norms == 0):
                k = int(np.argmax(norms == 0))
                raise ValueError(f"{label}: d1 is the zero vector" + ("" if gd.ndim == 1
                                                                      else f" at edge {k}"))
            _check_d1_off_edges(label, pts, closed, gd)
        twist = float(initial_twist)
        if not math.isfinite(twist):
            raise ValueError(f"{label}: initial_twist must be finite, got {show(initial_twist)}")
        turns = twist / (2 * math.pi)
        if closed and abs(turns - round(turns)) > 1e-9:
            raise ValueError(f"{label}: a closed strand's initial_twist must be a whole number of "
                             f"turns (a multiple of 2 pi), got {twist:g}")
        fr = None if friction is None else self._friction(friction, label)
        opts = self._options(options, label)
        self._strands.append(StrandSpec(
            name=label, points=pts, rest_points=rest, closed=bool(closed), material=material,
            radius=rad, velocities=vel, d1=gd, initial_twist=twist, fixed=(), friction=fr,
            options=opts))
        return sid

    def fix_vertex(self, strand: int, vertex: int) -> None:
        """Hold one vertex at its initial position."""
        self._check_strand(strand)
        st = self._strands[strand]
        n = st.n_vertices
        if not -n <= vertex < n:
            raise IndexError(f"{st.name} has no vertex {vertex} (it has {n})")
        fixed = tuple(sorted(set(st.fixed) | {vertex % n}))
        self._strands[strand] = replace(st, fixed=fixed)

    def add_load(self, strand: int, vertex: int, force) -> None:
        """A force on a strand vertex: a constant vector [N] or a function ``f(t) -> [3]`` [N]."""
        self._check_strand(strand)
        st = self._strands[strand]
        n = st.n_vertices
        if not -n <= vertex < n:
            raise IndexError(f"{st.name} has no vertex {vertex} (it has {n})")
        if callable(force):
            load = PointLoad(strand, vertex % n, fn=force)
            load.at(0.0)  # checked once now
            self._loads.append(load)
        else:
            f = as_vector(f"{st.name} load on vertex {vertex}", force)
            self._loads.append(PointLoad(strand, vertex % n, force=f))

    # ------------------------------------------------------------------ frames
    def add_frame(self, origin=None, rotation=None, *, linear_velocity=(0, 0, 0),
                  angular_velocity=(0, 0, 0), start: float = 0.0, stop: float = math.inf,
                  keyframes: Mapping | None = None, motion=None) -> int:
        """A kinematic frame: fixed, moving with constant velocity, following keyframes, or a
        function of time.

        ``rotation``: [3, 3] with the frame axes as columns (default identity).
        ``linear_velocity`` [m/s] and ``angular_velocity`` [rad/s] (a world-frame vector through
        the moving origin) act between ``start`` and ``stop`` [s].  ``keyframes``: a mapping
        with ``times`` [K] [s], ``origins`` [K, 3] [m] and optionally ``rotations`` [K, 3, 3],
        interpolated smoothly (:class:`~strandlab.sim.motion.Keyframes`).  ``motion``: a
        :class:`~strandlab.sim.motion.Motion` or a function ``fn(t)`` returning the origin or
        ``(rotation, origin)``.  What a frame holds keeps its pose relative to the frame's pose
        at ``t = 0``.
        """
        label = f"frame {len(self._frames)}"
        given = [keyframes is not None, motion is not None,
                 any(np.any(np.asarray(v) != 0) for v in (linear_velocity, angular_velocity))]
        if sum(given) > 1:
            raise ValueError(f"{label}: give one of velocities, keyframes or motion")
        if (given[0] or given[1]) and (origin is not None or rotation is not None):
            raise ValueError(f"{label}: keyframes or a motion set the pose; leave origin and "
                             "rotation out")
        o = as_vector(f"{label} origin", (0.0, 0.0, 0.0) if origin is None else origin)
        r = np.eye(3) if rotation is None else check_rotation(f"{label} rotation", rotation)
        if keyframes is not None:
            if not isinstance(keyframes, Mapping) or "times" not in keyframes \
                    or "origins" not in keyframes:
                raise ValueError(f"{label}: keyframes need 'times' and 'origins'")
            extra = set(keyframes) - {"times", "origins", "rotations"}
            if extra:
                raise ValueError(f"{label}: unknown keyframe key(s) {sorted(extra)}")
            try:
                mo = Keyframes(keyframes["times"], keyframes["origins"],
                               keyframes.get("rotations"))
            except ValueError as exc:
                raise ValueError(f"{label}: {exc}") from None
        elif motion is not None:
            if isinstance(motion, Motion):
                mo = motion
            elif callable(motion):
                mo = FunctionMotion(motion, name=getattr(motion, "__name__", "function"))
            else:
                raise TypeError(f"{label}: motion must be a Motion or a function of time")
            mo.pose(0.0)  # checked once now
        else:
            lv = as_vector(f"{label} linear_velocity", linear_velocity)
            av = as_vector(f"{label} angular_velocity", angular_velocity)
            start, stop = float(start), float(stop)
            if not math.isfinite(start) or math.isnan(stop) or stop < start:
                raise ValueError(f"{label}: motion window [{start:g}, {stop:g}] is invalid")
            mo = ConstantVelocity(o, r, lv, av, start, stop) if given[2] else Fixed(o, r)
        self._frames.append(FrameSpec(mo))
        return len(self._frames) - 1

    def attach_to_frame(self, strand: int, frame: int, *, end: int = 0, orientation: bool = True,
                        free_twist: bool = False, slide_axis=None) -> None:
        """Hold a strand end by a kinematic frame (section 5.1 of Umetani et al., eqs. 22-24).

        The end vertex follows the frame; with ``orientation`` the end edge's material frame is
        held at its initial orientation relative to the frame (a clamp: turning the frame twists
        the rod), else the end turns freely (a ball joint).  ``free_twist``: the clamped end may
        still turn about the rod's axis (a swivel).  ``slide_axis`` (a vector in the frame's
        axes): the end vertex slides freely along that line instead of being held in place.
        """
        self._check_strand(strand)
        if not 0 <= frame < len(self._frames):
            raise IndexError(f"frame {frame} does not exist ({len(self._frames)} frames)")
        ax = None
        if slide_axis is not None:
            a = as_vector(f"{self._strands[strand].name} slide_axis", slide_axis)
            n = np.linalg.norm(a)
            if n == 0:
                raise ValueError(f"{self._strands[strand].name}: slide_axis is the zero vector")
            ax = tuple(float(c) for c in a / n)
        if free_twist and not orientation:
            raise ValueError(f"{self._strands[strand].name}: free_twist needs orientation=True "
                             "(without orientation the end already turns freely)")
        end = self._end(strand, end)
        self._hold_end(strand, end, f"frame {frame}")
        self._frame_att.append(FrameAttachment(strand, frame, end, bool(orientation),
                                               bool(free_twist), ax))

    # ------------------------------------------------------------------ meshes and bodies
    def add_mesh(self, vertices, triangles, *, mass: float, compliance: float = 0.0,
                 collide_radius: float = 0.0, velocities=None, fixed=(),
                 name: str | None = None) -> int:
        """A deformable triangle mesh: points of equal mass, an elastic edge network.

        ``mass`` [kg] total; ``compliance`` [m/N] of each edge (0: inextensible, which keeps a
        closed convex triangulated surface rigid); ``collide_radius`` [m] for its vertices.
        """
        label = name or f"mesh {len(self._meshes)}"
        v = as_points(f"{label} vertices", vertices, min_points=3)
        self._reserve(len(v), label)
        t = np.array(triangles, dtype=np.int64)
        if t.ndim != 2 or t.shape[1] != 3 or len(t) == 0:
            raise ValueError(f"{label}: triangles must have shape [n, 3], got {t.shape}")
        bad = np.nonzero(np.any((t < 0) | (t >= len(v)), axis=1))[0]
        if len(bad):
            raise ValueError(f"{label}: triangle {int(bad[0])} {t[bad[0]].tolist()} references "
                             f"a vertex that does not exist ({len(v)} vertices)")
        ab, ac = v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]]
        area = 0.5 * np.linalg.norm(np.cross(ab, ac), axis=1)
        flat = np.nonzero(area <= 1e-12 * float(np.ptp(v, axis=0).max()) ** 2)[0]
        if len(flat):
            raise ValueError(f"{label}: triangle {int(flat[0])} {t[flat[0]].tolist()} has zero "
                             "area (its vertices on a line)")
        mass = check_positive(f"{label} mass", mass)
        compliance = float(compliance)
        if compliance < 0 or not math.isfinite(compliance):
            raise ValueError(f"{label}: compliance must be >= 0, got {compliance:g}")
        if not (math.isfinite(float(collide_radius)) and float(collide_radius) >= 0):
            raise ValueError(f"{label}: collide_radius must be >= 0, got {show(collide_radius)}")
        vel = np.zeros_like(v) if velocities is None else np.array(velocities, dtype=np.float64)
        if vel.shape != v.shape or not np.all(np.isfinite(vel)):
            raise ValueError(f"{label}: velocities must be finite with shape {v.shape}")
        fx = tuple(int(i) for i in fixed)
        for i in fx:
            if not 0 <= i < len(v):
                raise IndexError(f"{label}: fixed vertex {i} does not exist")
        self._meshes.append(MeshSpec(label, v, t, mass, compliance, float(collide_radius), vel,
                                     fx))
        return len(self._meshes) - 1

    def attach_to_triangle(self, strand: int, mesh: int, triangle: int, *, end: int = 0) -> None:
        """Two-way coupling of a strand end to a mesh triangle (section 5.1, eq. 25).

        The end vertex is pinned to its barycentric position on the triangle (it must lie on the
        triangle's plane, inside the triangle) and its edge frame to the triangle's frame.
        """
        self._check_strand(strand)
        if not 0 <= mesh < len(self._meshes):
            raise IndexError(f"mesh {mesh} does not exist")
        if not 0 <= triangle < len(self._meshes[mesh].triangles):
            raise IndexError(f"mesh {mesh} has no triangle {triangle}")
        end = self._end(strand, end)
        st, me = self._strands[strand], self._meshes[mesh]
        p = st.points[st.end_vertex(end)]
        e = st.points[1] - st.points[0] if end == 0 else st.points[-1] - st.points[-2]
        bary = _barycentric(p, me.vertices[me.triangles[triangle]], float(np.linalg.norm(e)),
                            st.name)
        self._hold_end(strand, end, f"triangle {triangle} of mesh {mesh}")
        self._tri_att.append(TriangleAttachment(strand, mesh, triangle, end, tuple(bary)))

    def add_rigid_body(self, position, rotation=None, *, mass: float, size: float) -> int:
        """A small rigid body (a joint of a rod network) of ``mass`` [kg] and extent ``size``
        [m] (section 5.1, eq. 26)."""
        label = f"rigid body {len(self._bodies)}"
        p = as_vector(f"{label} position", position)
        r = np.eye(3) if rotation is None else check_rotation(f"{label} rotation", rotation)
        self._bodies.append(BodySpec(p, r, check_positive(f"{label} mass", mass),
                                     check_positive(f"{label} size", size)))
        return len(self._bodies) - 1

    def attach_to_body(self, strand: int, body: int, *, end: int = 0,
                       orientation: bool = True) -> None:
        """Join a strand end to a rigid body: a position pin and (with ``orientation``) the
        orientation constraint that transmits torque between the rods of a network."""
        self._check_strand(strand)
        if not 0 <= body < len(self._bodies):
            raise IndexError(f"rigid body {body} does not exist")
        end = self._end(strand, end)
        st = self._strands[strand]
        p = st.points[st.end_vertex(end)]
        e = st.points[1] - st.points[0] if end == 0 else st.points[-1] - st.points[-2]
        gap = float(np.linalg.norm(p - self._bodies[body].position))
        if gap > 0.01 * float(np.linalg.norm(e)):
            raise ValueError(f"{st.name}: end vertex is {gap:.3g} m from rigid body {body}; "
                             "place the body at the strand end")
        self._hold_end(strand, end, f"rigid body {body}")
        self._body_att.append(BodyAttachment(strand, body, end, bool(orientation)))

    # ------------------------------------------------------------------ colliders
    def add_plane(self, point, normal, *, friction: float = 0.0) -> None:
        """Half-space collider: points stay on the side ``normal`` points to."""
        n = as_vector("plane normal", normal)
        ln = np.linalg.norm(n)
        if ln == 0:
            raise ValueError("plane normal must be non-zero")
        self._colliders.append(Collider("plane", MappingProxyType(
            {"point": as_vector("plane point", point), "normal": n / ln}),
            self._friction(friction, "plane")))

    def add_sphere(self, center, radius: float, *, friction: float = 0.0) -> None:
        """Solid sphere collider."""
        self._colliders.append(Collider("sphere", MappingProxyType(
            {"center": as_vector("sphere center", center),
             "radius": check_positive("sphere radius", radius)}),
            self._friction(friction, "sphere")))

    def add_capsule(self, a, b, radius: float, *, friction: float = 0.0) -> None:
        """Capsule collider: all points within ``radius`` of segment ``a``-``b``."""
        self._colliders.append(Collider("capsule", MappingProxyType(
            {"a": as_vector("capsule a", a), "b": as_vector("capsule b", b),
             "radius": check_positive("capsule radius", radius)}),
            self._friction(friction, "capsule")))

    # ------------------------------------------------------------------ helpers
    def _reserve(self, n: int, label: str) -> None:
        self._n_points += n
        if self._n_points > MAX_POINTS:
            raise ValueError(f"{label}: the scene would hold {self._n_points:,} points, more than "
                             f"the limit of {MAX_POINTS:,}")

    def _check_strand(self, s):
        if not isinstance(s, (int, np.integer)) or not 0 <= s < len(self._strands):
            raise IndexError(f"strand {s} does not exist ({len(self._strands)} strands)")

    def _hold_end(self, strand: int, end: int, by: str) -> None:
        """Record that ``by`` holds the ``end`` of ``strand``; ValueError where something
        holds it already (two holds of one end fight: the last one would win)."""
        key = (int(strand), self._strands[strand].end_vertex(end))
        if key in self._held_ends:
            raise ValueError(f"{self._strands[strand].name}: its {'first' if end == 0 else 'last'}"
                             f" vertex is held by {self._held_ends[key]} already; attach it to "
                             f"{by} too and one of them would be ignored")
        self._held_ends[key] = by

    def _end(self, strand, end):
        if end not in (0, -1):
            raise ValueError(f"end must be 0 (first vertex) or -1 (last vertex), got {show(end)}")
        if self._strands[strand].closed:
            raise ValueError(f"{self._strands[strand].name} is closed and has no ends")
        return end

    @staticmethod
    def _radius(label, radius, material, n):
        if radius is None:
            return np.full(n, float(material.contact_radius))
        r = np.array(radius, dtype=np.float64)
        if r.ndim == 0:
            r = np.full(n, float(r))
        if r.shape != (n,):
            raise ValueError(f"{label}: radius must be one value or one per vertex ({n}), got "
                             f"shape {r.shape}")
        bad = np.nonzero(~(np.isfinite(r) & (r > 0)))[0]
        if len(bad):
            raise ValueError(f"{label}: radius of vertex {int(bad[0])} must be positive and "
                             f"finite, got {float(r[bad[0]]):g}")
        return r

    @staticmethod
    def _friction(f, label):
        try:
            f = float(f)
        except (TypeError, ValueError):
            raise ValueError(f"{label}: friction must be a number, got {show(f)}") from None
        if not math.isfinite(f) or f < 0:
            raise ValueError(f"{label}: friction must be >= 0, got {f:g}")
        return f

    @staticmethod
    def _options(options, label):
        if options is None:
            return MappingProxyType({})
        if not isinstance(options, Mapping):
            raise TypeError(f"{label}: options must be a mapping {{solver name: {{key: value}}}}")
        out = {}
        for k, v in options.items():
            if not isinstance(k, str) or not isinstance(v, Mapping):
                raise TypeError(f"{label}: options[{k!r}] must be a mapping of a solver's "
                                "options")
            out[k] = MappingProxyType(dict(v))
        return MappingProxyType(out)

    def add_simplicial_mesh(self, mesh: SimplicialSpec) -> int:
        """Add a labelled rod/shell/solid mesh (:mod:`strandlab.sim.simplicial`; build one with
        :class:`~strandlab.sim.simplicial.SimplicialBuilder` or read one with
        :func:`strandlab.io.simplicial.read_simplicial`).  Its holds may name frames added
        before or after."""
        if not isinstance(mesh, SimplicialSpec):
            raise TypeError(f"add_simplicial_mesh needs a SimplicialSpec, got "
                            f"{type(mesh).__name__}")
        if any(m.name == mesh.name for m in self._simplicial):
            raise ValueError(f"simplicial mesh name {mesh.name!r} is used twice (messages and "
                             "exported parts name meshes by it)")
        self._reserve(mesh.n_vertices, f"simplicial mesh {mesh.name!r}")
        self._simplicial.append(mesh)
        return len(self._simplicial) - 1

    def build(self) -> Scene:
        """The frozen, solver-neutral scene description."""
        if not (self._strands or self._meshes or self._bodies or self._simplicial):
            raise ValueError("scene is empty: add at least one strand, mesh, rigid body or "
                             "simplicial mesh")
        for m in self._simplicial:
            for h in m.holds:
                if h.frame is not None and not 0 <= h.frame < len(self._frames):
                    raise ValueError(f"mesh {m.name!r}: vertices held by frame {h.frame}, "
                                     f"which does not exist ({len(self._frames)} frames)")
        return Scene(gravity=self.gravity.copy(), strands=tuple(self._strands),
                     frames=tuple(self._frames), meshes=tuple(self._meshes),
                     bodies=tuple(self._bodies), frame_attachments=tuple(self._frame_att),
                     triangle_attachments=tuple(self._tri_att),
                     body_attachments=tuple(self._body_att), loads=tuple(self._loads),
                     colliders=tuple(self._colliders), simplicial=tuple(self._simplicial))


def _barycentric(p, tri, scale, label):
    """Barycentric coordinates of ``p`` on triangle ``tri`` [3, 3]; checks that it lies on it."""
    a, b_, c = tri
    n = np.cross(b_ - a, c - a)
    area2 = np.dot(n, n)
    if area2 <= 0:
        raise ValueError(f"{label}: attachment triangle is degenerate")
    dist = abs(np.dot(p - a, n)) / np.sqrt(area2)
    if dist > 0.01 * scale:
        raise ValueError(f"{label}: end vertex is {dist:.3g} m off the attachment triangle's plane")
    w1 = np.dot(np.cross(p - a, c - a), n) / area2
    w2 = np.dot(np.cross(b_ - a, p - a), n) / area2
    bary = np.array([1.0 - w1 - w2, w1, w2])
    if np.any(bary < -1e-6):
        raise ValueError(f"{label}: end vertex lies outside the attachment triangle "
                         f"(barycentric {bary.round(4).tolist()})")
    return bary


def _check_d1_off_edges(label, pts, closed, d1):
    """d1 must have a component across its edge (the first edge for a single vector)."""
    e = (np.roll(pts, -1, axis=0) - pts) if closed else np.diff(pts, axis=0)
    if d1.ndim == 1:
        e, d = e[:1], d1[None, :]
    else:
        d = d1
    t = e / np.linalg.norm(e, axis=1)[:, None]
    across = d - np.einsum("ij,ij->i", d, t)[:, None] * t
    bad = np.nonzero(np.linalg.norm(across, axis=1) <= 1e-9 * np.linalg.norm(d, axis=1))[0]
    if len(bad):
        where = "the first edge" if d1.ndim == 1 else f"edge {int(bad[0])}"
        raise ValueError(f"{label}: d1 is parallel to {where}")
