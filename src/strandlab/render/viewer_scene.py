"""What the interactive viewer draws, in the page of a viser server.

Strands are line segments, one colour per strand (the renders' colours,
:func:`~strandlab.render.scalars.strand_colors`), a fixed number of pixels wide, with the edges a
solver broke hidden; kinematic frames and rigid bodies are red/green/blue axes and the points in
no group grey dots (the groups of :func:`~strandlab.render.tubes.extra_groups`); meshes are shaded
surfaces; colliders are drawn once: a plane as a floor patch with grid lines 1.6 times the
scene's extent centred under it, spheres and capsules as solids.  With ``handles`` every strand
vertex also carries a small octahedron (one mesh of them all, which the browser can hit with
the mouse: a drag on it grabs the nearest vertex).  The camera starts where the
renders put it (:class:`~strandlab.render.camera.Camera`, z up).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..io.trajectory import edge_vertices
from .camera import Camera
from .images import _positive, _vector
from .scalars import strand_colors
from .tubes import (
    _AXES,
    _FLOOR,
    _MESH,
    _ROD,
    _SOLID,
    _axes_segments,
    extra_groups,
    extra_rods,
    plane_patch,
)

__all__ = ["SceneLayout", "SceneView", "handle_mesh", "nearest_vertex", "segments",
           "add_colliders",
           "HANDLES_SHOWN_UP_TO"]

_GRID = 12                  # floor grid cells per side
_LOOSE = (80, 80, 80)
_HANDLE = (120, 120, 130)
#: Vertex handles are shown from the start up to this many strand vertices (a head of hair
#: would be hidden under them; the viewer has a switch for them).
HANDLES_SHOWN_UP_TO = 2000


def _rgb(c) -> tuple:
    return tuple(int(round(255 * v)) for v in c)


@dataclass
class SceneLayout:
    """The static part of what is drawn: strand and edge layout, radii [m], extra triangles,
    the number of extra points, the scene description (``metadata["scene"]``) and the collider
    dicts (``scene.json``'s form)."""

    strand_offsets: np.ndarray
    edge_offsets: np.ndarray
    closed: np.ndarray
    radii: np.ndarray
    extra_triangles: np.ndarray
    n_extra: int
    metadata: dict = field(default_factory=dict)
    colliders: list = field(default_factory=list)
    #: Rod edges of rod/shell/solid meshes into the extra points, int [G, 2], and their radii
    extra_segments: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    extra_segment_radii: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @classmethod
    def of_trajectory(cls, traj) -> SceneLayout:
        """The layout of a (loaded) trajectory; colliders from its scene description."""
        meta = traj.metadata if isinstance(traj.metadata, dict) else {}
        scene = meta.get("scene") if isinstance(meta.get("scene"), dict) else {}
        return cls(np.asarray(traj.strand_offsets), np.asarray(traj.edge_offsets),
                   np.asarray(traj.closed), np.asarray(traj.radii),
                   np.asarray(traj.extra_triangles), int(traj.n_extra), meta,
                   list(scene.get("colliders") or []), *extra_rods(traj))

    @classmethod
    def of_scene(cls, scene) -> SceneLayout:
        """The layout of a :class:`~strandlab.sim.scene.Scene`."""
        return cls(np.asarray(scene.strand_vertex_offsets), np.asarray(scene.strand_edge_offsets),
                   np.asarray(scene.closed), np.asarray(scene.radii),
                   np.asarray(scene.extra_triangles), int(scene.extra_layout()["n"]),
                   {"scene": scene.describe()}, [c.to_dict() for c in scene.colliders],
                   np.asarray(scene.extra_segments), np.asarray(scene.extra_segment_radii))


def segments(positions: np.ndarray, a: np.ndarray, b: np.ndarray, hidden=None) -> np.ndarray:
    """Line segments [E, 2, 3] from vertex ``positions`` [V, 3] and edge ends ``a``, ``b`` [E];
    the edges flagged in ``hidden`` [E] collapse to their first point (not drawn)."""
    seg = np.stack([positions[a], positions[b]], axis=1)
    if hidden is not None:
        h = np.asarray(hidden, dtype=bool)
        seg[h, 1] = seg[h, 0]
    return seg


_OCTA = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0], [0, 0, -1]],
                 dtype=np.float64)
_OCTA_FACES = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1], [5, 2, 1], [5, 3, 2],
                        [5, 4, 3], [5, 1, 4]], dtype=np.uint32)


def handle_mesh(positions: np.ndarray, radius: float):
    """One mesh of small octahedra of ``radius`` [m] around every point of ``positions``
    [V, 3]: vertices [6 V, 3] (float32) and triangles [8 V, 3]."""
    verts = (np.asarray(positions, dtype=np.float64)[:, None, :] + radius * _OCTA[None])
    faces = _OCTA_FACES[None] + (6 * np.arange(len(positions), dtype=np.uint32))[:, None, None]
    return verts.reshape(-1, 3).astype(np.float32), faces.reshape(-1, 3)


def nearest_vertex(positions: np.ndarray, point) -> int:
    """Index of the row of ``positions`` [V, 3] nearest to ``point`` [3]."""
    d = np.asarray(positions, dtype=np.float64) - np.asarray(point, dtype=np.float64)
    return int(np.argmin(np.einsum("ij,ij->i", d, d)))


def _basis(n: np.ndarray):
    """Two unit vectors perpendicular to unit ``n`` and to each other."""
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    return u, np.cross(n, u)


def _wxyz_z_to(axis: np.ndarray) -> np.ndarray:
    """Quaternion (w, x, y, z) turning +z onto the unit vector ``axis``."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(np.dot(z, axis))
    if c < -1.0 + 1e-12:
        return np.array([0.0, 1.0, 0.0, 0.0])
    q = np.concatenate([[1.0 + c], np.cross(z, axis)])
    return q / np.linalg.norm(q)


def _floor(server, c: dict, k: int, bounds: np.ndarray) -> None:
    n, center, size = plane_patch(c, k, bounds)
    half = 0.8 * size
    u, w = _basis(n)
    corners = center + half * np.array([-u - w, u - w, u + w, -u + w])
    server.scene.add_mesh_simple(f"/colliders/{k}_plane", corners.astype(np.float32),
                                 np.array([[0, 1, 2], [0, 2, 3]], dtype=np.uint32),
                                 color=_rgb(_FLOOR), side="double")
    s = np.linspace(-half, half, _GRID + 1)[:, None]
    lift = 1e-4 * half * n      # just above the patch
    lines = np.concatenate([
        np.stack([center + s * u - half * w, center + s * u + half * w], 1),
        np.stack([center + s * w - half * u, center + s * w + half * u], 1)]) + lift
    server.scene.add_line_segments(f"/colliders/{k}_grid", lines, (173, 168, 158),
                                   thickness=1.0, thickness_units="screen")


def add_colliders(server, colliders, bounds: np.ndarray) -> None:
    """Draw the collider dicts (``plane``, ``sphere``, ``capsule``); ValueError naming a
    malformed one."""
    solid = _rgb(_SOLID)
    for k, c in enumerate(colliders or ()):
        if not isinstance(c, dict) or "type" not in c:
            raise ValueError(f"collider {k} must be a dict with a 'type', got {c!r}")
        kind = c["type"]
        if kind == "plane":
            _floor(server, c, k, bounds)
        elif kind == "sphere":
            server.scene.add_icosphere(f"/colliders/{k}_sphere", _positive(c, k, "radius"),
                                       color=solid, subdivisions=4,
                                       position=_vector(c, k, "center"))
        elif kind == "capsule":
            a, b, r = _vector(c, k, "a"), _vector(c, k, "b"), _positive(c, k, "radius")
            for end, p in (("a", a), ("b", b)):
                server.scene.add_icosphere(f"/colliders/{k}_capsule_{end}", r, color=solid,
                                           subdivisions=3, position=p)
            length = float(np.linalg.norm(b - a))
            if length > 0:
                server.scene.add_cylinder(f"/colliders/{k}_capsule", radius=r, height=length,
                                          color=solid, wxyz=_wxyz_z_to((b - a) / length),
                                          position=0.5 * (a + b))
        else:
            raise ValueError(f"collider {k} has unknown type {kind!r} (plane, sphere or capsule)")


class SceneView:
    """The scene of one viewer page: strands, frames, meshes, loose points, colliders and
    (``handles``) draggable vertex spheres, first drawn at ``positions`` [V, 3] and ``extra``
    [X, 3] [m]; :meth:`update` moves them.  ``bounds`` [[min], [max]] [m] sizes the floor,
    the axes, the handles and the camera; ``view`` is (elevation, azimuth) [deg]."""

    def __init__(self, server, layout: SceneLayout, positions, extra, *, bounds,
                 view=(20.0, -60.0), handles: bool = False, line_px: float = 3.0):
        self.server, self.layout = server, layout
        self.bounds = np.asarray(bounds, dtype=np.float64)
        self.diag = float(np.linalg.norm(self.bounds[1] - self.bounds[0])) or 1.0
        self.a, self.b = edge_vertices(layout.strand_offsets, layout.edge_offsets, layout.closed)
        rgb = np.asarray(strand_colors(len(layout.strand_offsets) - 1)).reshape(-1, 4)[:, :3] * 255
        per_edge = np.repeat(rgb.astype(np.uint8), np.diff(layout.edge_offsets), axis=0)
        self.colors = np.repeat(per_edge[:, None, :], 2, axis=1)
        self.axes, self.loose = extra_groups(layout)
        scene = server.scene
        scene.set_up_direction("+z")
        self._lights(view)
        self.strands = scene.add_line_segments(
            "/strands", segments(np.asarray(positions), self.a, self.b), self.colors,
            thickness=line_px, thickness_units="screen") if self.a.size else None
        self.frames = self.mesh = self.rods = self.points = self.handles = None
        extra = np.asarray(extra, dtype=np.float64)
        if self.axes.size:
            self.axis_colors = np.repeat(np.tile(_AXES, (self.axes.size, 1))[:, None], 2, 1)
            self.frames = scene.add_line_segments("/frames", self._axes(extra),
                                                  self.axis_colors, thickness=4.0,
                                                  thickness_units="screen")
        seg = np.asarray(layout.extra_segments, dtype=np.int64).reshape(-1, 2)
        if len(seg):
            self.rods = scene.add_line_segments(
                "/rods", segments(extra, seg[:, 0], seg[:, 1]),
                np.tile(np.asarray(_rgb(_ROD), dtype=np.uint8), (len(seg), 2, 1)),
                thickness=2.0 * line_px, thickness_units="screen")
        if len(layout.extra_triangles):
            self.mesh = scene.add_mesh_simple(
                "/meshes", extra.astype(np.float32),
                np.asarray(layout.extra_triangles, dtype=np.uint32), color=_rgb(_MESH),
                side="double")
        if self.loose.size:
            self.points = scene.add_point_cloud("/points", extra[self.loose], _LOOSE,
                                                point_size=0.01 * self.diag, point_shape="circle")
        add_colliders(server, layout.colliders, self.bounds)
        if handles and len(positions):
            self._add_handles(np.asarray(positions))
        self.set_camera(view)

    def _lights(self, view) -> None:
        """An ambient light and two directional lights (key from above the camera, fill from
        the other side), instead of image-based lighting (slow in software WebGL)."""
        scene = self.server.scene
        scene.configure_environment_map(None)
        scene.configure_default_lights(False)
        scene.add_light_ambient("/lights/ambient", intensity=0.9)
        center = 0.5 * (self.bounds[0] + self.bounds[1])
        az = math.radians(float(view[1]))
        for name, turn, lift, power in (("key", 0.6, 1.5, 2.2), ("fill", math.pi, 0.3, 0.8)):
            d = np.array([math.cos(az + turn), math.sin(az + turn), lift])
            scene.add_light_directional(f"/lights/{name}", intensity=power,
                                        position=center + self.diag * d / np.linalg.norm(d))

    def _axes(self, extra: np.ndarray) -> np.ndarray:
        return _axes_segments(extra, self.axes, 0.04 * self.diag).reshape(-1, 2, 3)

    def _add_handles(self, positions: np.ndarray) -> None:
        self.handle_radius = max(1.5 * float(np.max(self.layout.radii, initial=0.0)),
                                 0.005 * self.diag)
        verts, faces = handle_mesh(positions, self.handle_radius)
        self.handles = self.server.scene.add_mesh_simple(
            "/handles", verts, faces, color=_HANDLE, flat_shading=True,
            visible=len(positions) <= HANDLES_SHOWN_UP_TO)
        self._last = positions

    def show_handles(self, shown: bool) -> None:
        """Show or hide the vertex handles (hidden ones are not updated)."""
        if self.handles is not None:
            self.handles.visible = bool(shown)
            if shown:
                self.handles.vertices = handle_mesh(self._last, self.handle_radius)[0]

    def set_camera(self, view) -> None:
        """Put the initial camera where the renders put it, fitted to ``bounds``."""
        v = Camera(elevation=float(view[0]), azimuth=float(view[1])).resolve(self.bounds,
                                                                             (1200, 900))
        cam = self.server.initial_camera
        cam.position = tuple(float(c) for c in v.position)
        cam.look_at = tuple(float(c) for c in v.focal_point)
        cam.up = tuple(float(c) for c in v.up)
        cam.fov = math.radians(v.view_angle)

    def update(self, positions, extra, edge_broken=None) -> None:
        """Move everything that moves to ``positions`` [V, 3] and ``extra`` [X, 3] [m]; the
        edges flagged in ``edge_broken`` [E] are hidden."""
        positions = np.asarray(positions, dtype=np.float64)
        extra = np.asarray(extra, dtype=np.float64)
        if self.strands is not None:
            self.strands.points = segments(positions, self.a, self.b,
                                           edge_broken).astype(np.float32)
        if self.frames is not None:
            self.frames.points = self._axes(extra).astype(np.float32)
        if self.rods is not None:
            seg = np.asarray(self.layout.extra_segments, dtype=np.int64).reshape(-1, 2)
            self.rods.points = segments(extra, seg[:, 0], seg[:, 1]).astype(np.float32)
        if self.mesh is not None:
            self.mesh.vertices = extra.astype(np.float32)
        if self.points is not None:
            self.points.points = extra[self.loose].astype(np.float32)
        if self.handles is not None:
            self._last = positions
            if self.handles.visible:
                self.handles.vertices = handle_mesh(positions, self.handle_radius)[0]
