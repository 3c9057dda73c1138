"""Shaded-tube rendering with PyVista/VTK, offscreen (no display needed).

Strands are tubes (VTK's tube filter) whose radius is the strand's radius, widened to at least
``min_width_px`` pixels so thin hair stays visible; one colour per strand, or a colour map of a
per-vertex quantity (twist, strain, or values given by the caller).  Kinematic frames and rigid
bodies are small red/green/blue axes, meshes are shaded surfaces, colliders are drawn once:
planes as a floor patch with grid lines, spheres and capsules as solids.  The camera
(:class:`~strandlab.render.camera.Camera`) is fitted to the bounds of all frames and stays
still.

On Linux without ``DISPLAY`` the render window is VTK's EGL window (``VTK_DEFAULT_OPENGL_WINDOW=
vtkEGLRenderWindow``, unless that variable is already set, e.g. to ``vtkOSOpenGLRenderWindow``
for OSMesa); with Mesa's ``libegl-mesa0`` and ``libgl1-mesa-dri`` it renders in software
without a GPU.  PyVista is imported only when a renderer is made.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from ..io.selection import extra_parts
from ..io.trajectory import TrajectoryBase
from .camera import Camera, bounds_of
from .images import _positive, _vector
from .scalars import COLOR_BY, edge_to_vertex, strand_colors, vertex_scalars

__all__ = ["TubeRenderer", "render_trajectory_pyvista", "pyvista_available", "BACKGROUND",
           "extra_groups", "extra_rods"]

BACKGROUND = (250, 250, 252)        #: background colour, RGB 0-255
_FLOOR = (0.82, 0.80, 0.76)
_SOLID = (0.72, 0.70, 0.68)
_MESH = (0.55, 0.62, 0.75)
_ROD = (0.80, 0.45, 0.20)
_AXES = np.array([[220, 40, 40], [40, 170, 40], [40, 70, 230]], dtype=np.uint8)
_MAX_AXES = 32      # frames and bodies drawn as axes by default up to this many
_LABELS = {"twist": "twist [rad/m]", "strain": "strain [-]"}
_CMAPS = {"twist": "coolwarm", "strain": "plasma"}


def pyvista_available() -> bool:
    """Whether PyVista (and so VTK) can be imported."""
    return importlib.util.find_spec("pyvista") is not None


def _pyvista():
    """PyVista, imported for offscreen rendering (EGL when there is no display)."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    import pyvista

    pyvista.OFF_SCREEN = True
    return pyvista


# ---------------------------------------------------------------------------------- layout
def extra_groups(traj: TrajectoryBase):
    """``(axes, loose)``: start indices [A] of the 3-point groups (origin and two axis tips) of
    kinematic frames and rigid bodies among the extra points, and the indices [L] of extra points
    that are in no group, no triangle and no rod edge.  The parts come from the scene
    description in the trajectory's metadata (:func:`~strandlab.io.selection.extra_parts`);
    without one (or if it does not match) every extra point in no cell is loose."""
    n = int(traj.n_extra)
    axes = [np.arange(p.start, p.stop, 3) for p in extra_parts(traj) if p.kind == "points"]
    axes = np.concatenate(axes).astype(np.int64) if axes else np.zeros(0, np.int64)
    used = np.zeros(n, dtype=np.bool_)
    used[np.asarray(traj.extra_triangles, dtype=np.int64).ravel()] = True
    used[extra_rods(traj)[0].ravel()] = True
    for k in range(3):
        used[axes + k] = True
    return axes, np.flatnonzero(~used)


def extra_rods(traj: TrajectoryBase):
    """``(segments, radii)``: the rod edges of the rod/shell/solid meshes among the extra points,
    int [G, 2] (indices of extra points), and their section radii [G] (m); empty for runs
    without them."""
    seg = getattr(traj, "extra_segments", None)
    rad = getattr(traj, "extra_segment_radii", None)
    if seg is None or rad is None:
        return np.zeros((0, 2), np.int64), np.zeros(0)
    return (np.asarray(seg, dtype=np.int64).reshape(-1, 2),
            np.asarray(rad, dtype=np.float64).reshape(-1))


def _line_cells(offsets: np.ndarray, closed: np.ndarray) -> np.ndarray:
    """VTK line connectivity ``[n, i0, ..., i(n-1) (, i0 if closed)]`` for every strand."""
    cells = []
    for s in range(offsets.shape[0] - 1):
        idx = np.arange(offsets[s], offsets[s + 1])
        if closed[s] and idx.size > 2:
            idx = np.append(idx, idx[0])
        if idx.size >= 2:
            cells.append(np.concatenate([[idx.size], idx]))
    return np.concatenate(cells).astype(np.int64) if cells else np.zeros(0, np.int64)


def _axes_segments(extra: np.ndarray, starts: np.ndarray, min_length: float):
    """Points [6A, 3] (origin, tip per axis) of the three axes of each 3-point group, each axis
    at least ``min_length`` [m] long (the third is the cross product of the first two)."""
    o = extra[starts]
    a1, a2 = extra[starts + 1] - o, extra[starts + 2] - o
    a3 = np.cross(a1, a2)
    axes = []
    for a in (a1, a2, a3):
        n = np.maximum(np.linalg.norm(a, axis=1), 1e-300)[:, None]
        axes.append(a / n * np.maximum(np.linalg.norm(a1, axis=1)[:, None], min_length))
    return np.stack([o, o + axes[0], o, o + axes[1], o, o + axes[2]], axis=1).reshape(-1, 3)


# ---------------------------------------------------------------------------------- colliders
def plane_patch(c: dict, k: int, bounds: np.ndarray):
    """Unit normal and centre of the patch drawn for plane collider ``k`` (the scene's middle
    projected onto it), and the scene's size [m]."""
    p, n = _vector(c, k, "point"), _vector(c, k, "normal")
    if np.linalg.norm(n) == 0:
        raise ValueError(f"collider {k} (plane): the normal is zero")
    n = n / np.linalg.norm(n)
    mid = 0.5 * (bounds[0] + bounds[1])
    return n, mid - np.dot(mid - p, n) * n, float(np.max(bounds[1] - bounds[0]))


def _plane(pv, c: dict, k: int, bounds: np.ndarray):
    n, center, size = plane_patch(c, k, bounds)
    side = 1.6 * size
    return pv.Plane(center=center, direction=n, i_size=side, j_size=side, i_resolution=12,
                    j_resolution=12)


def _capsule(pv, c: dict, k: int):
    a, b, r = _vector(c, k, "a"), _vector(c, k, "b"), _positive(c, k, "radius")
    length = float(np.linalg.norm(b - a))
    parts = pv.Sphere(radius=r, center=a).merge(pv.Sphere(radius=r, center=b))
    if length > 0:
        parts = parts.merge(pv.Cylinder(center=0.5 * (a + b), direction=b - a, radius=r,
                                        height=length, capping=False, resolution=40))
    return parts


def _add_colliders(plotter, pv, colliders, bounds: np.ndarray) -> None:
    for k, c in enumerate(colliders or ()):
        if not isinstance(c, dict) or "type" not in c:
            raise ValueError(f"collider {k} must be a dict with a 'type', got {c!r}")
        kind = c["type"]
        if kind == "plane":
            plotter.add_mesh(_plane(pv, c, k, bounds), color=_FLOOR, show_edges=True,
                             edge_color=(0.68, 0.66, 0.62), ambient=0.25, specular=0.1)
        elif kind == "sphere":
            plotter.add_mesh(pv.Sphere(radius=_positive(c, k, "radius"),
                                       center=_vector(c, k, "center"), theta_resolution=60,
                                       phi_resolution=30),
                             color=_SOLID, smooth_shading=True, specular=0.2)
        elif kind == "capsule":
            plotter.add_mesh(_capsule(pv, c, k), color=_SOLID, smooth_shading=True,
                             specular=0.2)
        else:
            raise ValueError(f"collider {k} has unknown type {kind!r} (plane, sphere or capsule)")


def _collider_bounds(colliders) -> list:
    """Corner points of the spheres and capsules (planes are unbounded: not included)."""
    pts = []
    for k, c in enumerate(colliders or ()):
        if isinstance(c, dict) and c.get("type") == "sphere":
            r = _positive(c, k, "radius")
            pts.append(_vector(c, k, "center") + np.array([[-r] * 3, [r] * 3]))
        elif isinstance(c, dict) and c.get("type") == "capsule":
            r = _positive(c, k, "radius")
            for end in ("a", "b"):
                pts.append(_vector(c, k, end) + np.array([[-r] * 3, [r] * 3]))
    return pts


def _trajectory_box(traj: TrajectoryBase, frames, colliders, block: int = 64) -> np.ndarray:
    """Bounds of the strands and extra points of ``frames`` and of the solid colliders."""
    boxes = []
    frames = list(frames)
    for i in range(0, len(frames), block):
        sel = frames[i:i + block]
        lo, hi = sel[0], sel[-1] + 1
        for arr in (traj.positions[lo:hi], traj.extra_points[lo:hi]):
            boxes.append(bounds_of(np.asarray(arr)) if np.asarray(arr).size else None)
    return bounds_of(*boxes, *_collider_bounds(colliders))


# ---------------------------------------------------------------------------------- renderer
def _check_options(color_by, size, min_width_px) -> tuple:
    if color_by not in COLOR_BY and color_by != "scalars":
        raise ValueError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"size must be (width, height) in pixels, got {size!r}") from None
    if w < 16 or h < 16:
        raise ValueError(f"size must be at least 16 x 16 pixels, got {w} x {h}")
    if not (np.isfinite(min_width_px) and min_width_px >= 0):
        raise ValueError(f"min_width_px must be a non-negative number, got {min_width_px!r}")
    return w, h


class TubeRenderer:
    """Offscreen PyVista renderer of the frames of one trajectory.

    ``colliders``: list of collider dicts (``scene.json``'s form); ``camera``: a
    :class:`~strandlab.render.camera.Camera` (default: automatic, fitted to ``frames``, the
    frame indices that will be drawn); ``size``: (width, height) [px]; ``color_by``:
    ``"strand"``, ``"twist"`` [rad/m], ``"strain"`` [-] (against frame 0), or ``"scalars"``
    with ``scalars`` an array [n_frames, V] (per vertex) or [n_frames, E] (per edge) and
    ``scalars_label``; ``clim``: colour range (default: over ``frames``; symmetric for twist);
    ``min_width_px``: smallest tube diameter on screen [px]; ``n_sides``: facets around a
    tube; ``show_frames``: draw kinematic frames and rigid bodies as axes (default: when there
    are at most 32, so that the 200 root frames of a head of hair do not hide it).
    :meth:`image` renders one frame
    to an RGB array [height, width, 3]; :meth:`close` frees the render window.
    """

    def __init__(self, traj: TrajectoryBase, *, colliders=None, camera: Camera | None = None,
                 size=(960, 720), color_by: str = "strand", scalars=None,
                 scalars_label: str = "value", clim=None, min_width_px: float = 2.5,
                 frames=None, n_sides: int = 8, show_frames: bool | None = None):
        if not isinstance(traj, TrajectoryBase):
            raise TypeError(f"expected a Trajectory, got {type(traj).__name__}")
        self.size = _check_options(color_by, size, min_width_px)
        if (color_by == "scalars") != (scalars is not None):
            raise ValueError("scalars are given exactly when color_by='scalars'")
        pv = _pyvista()
        self.traj, self.color_by, self.scalars, self.n_sides = traj, color_by, scalars, n_sides
        self.frames = list(range(traj.n_frames)) if frames is None else list(frames)
        self.bounds = _trajectory_box(traj, self.frames, colliders)
        self.view = (camera or Camera()).resolve(self.bounds, self.size)
        self.offsets = np.asarray(traj.strand_offsets, dtype=np.int64)
        self.cells = _line_cells(self.offsets, np.asarray(traj.closed, dtype=np.bool_))
        self.min_radius = 0.5 * min_width_px * self.view.metres_per_pixel(self.size[1])
        self.axes, self.loose = extra_groups(traj)
        self.rods = extra_rods(traj)
        if not (self.axes.size <= _MAX_AXES if show_frames is None else show_frames):
            self.axes = self.axes[:0]
        self.plotter = pv.Plotter(off_screen=True, window_size=self.size)
        self.plotter.set_background([c / 255 for c in BACKGROUND])
        _add_colliders(self.plotter, pv, colliders, self.bounds)
        self._pv = pv
        self._meshes: dict = {}
        self._rgb = None
        self.clim = self._color_range(clim, scalars_label)
        self._set_camera()

    # -- per-frame geometry -------------------------------------------------------------------
    def _vertex_values(self, k: int) -> np.ndarray:
        if self.color_by == "scalars":
            v = np.asarray(self.scalars[k], dtype=np.float64)
            t = self.traj
            if v.shape == (t.n_edges,) and t.n_edges != t.n_vertices:
                v = edge_to_vertex(v, t.n_vertices, t.strand_offsets, t.edge_offsets, t.closed)
            if v.shape != (t.n_vertices,):
                raise ValueError(f"scalars[{k}] must have shape [{t.n_vertices}] (per vertex) "
                                 f"or [{t.n_edges}] (per edge), got {v.shape}")
            return v
        return vertex_scalars(self.color_by, self.traj, k)

    def _color_range(self, clim, label):
        if self.color_by == "strand":
            self._bar = None
            return None
        self._bar = _LABELS.get(self.color_by, label)
        if clim is not None:
            lo, hi = (float(v) for v in clim)
            if not hi > lo:
                raise ValueError(f"clim must be (low, high) with low < high, got {clim!r}")
            return lo, hi
        vals = np.concatenate([self._vertex_values(k) for k in self.frames])
        vals = vals[np.isfinite(vals)]
        top = float(np.max(np.abs(vals))) if vals.size else 0.0
        top = max(top, 1e-9)
        if self.color_by == "twist":
            return -top, top
        return float(min(vals.min(), 0.0)) if vals.size else 0.0, top

    def _strand_tubes(self, k: int):
        pv, t = self._pv, self.traj
        pos = np.asarray(t.positions[k], dtype=np.float64)
        counts = np.diff(self.offsets)
        vr = getattr(t, "vertex_radii", None)
        vr = np.repeat(np.asarray(t.radii, dtype=np.float64), counts) if vr is None else \
            np.asarray(vr, dtype=np.float64)
        lines = pv.PolyData(pos, lines=self.cells)
        lines.point_data["radius"] = np.maximum(vr, self.min_radius)
        if self.color_by == "strand":
            if self._rgb is None:
                rgb = (np.asarray(strand_colors(t.n_strands))[:, :3] * 255).astype(np.uint8)
                self._rgb = np.repeat(rgb, counts, axis=0)
            lines.point_data["color"] = self._rgb
        else:
            lines.point_data["color"] = self._vertex_values(k)
        lines.set_active_scalars("radius")
        return lines.tube(scalars="radius", absolute=True, n_sides=self.n_sides, capping=True)

    def _axes_tubes(self, extra: np.ndarray):
        diag = float(np.linalg.norm(self.bounds[1] - self.bounds[0]))
        pts = _axes_segments(extra, self.axes, 0.04 * diag)
        n = self.axes.size
        cells = np.column_stack([np.full(3 * n, 2), np.arange(0, 6 * n, 2),
                                 np.arange(1, 6 * n, 2)]).ravel()
        lines = self._pv.PolyData(pts, lines=cells)
        length = np.linalg.norm(pts[1::2] - pts[0::2], axis=1)
        lines.point_data["radius"] = np.maximum(np.repeat(0.05 * length, 2), self.min_radius)
        lines.point_data["color"] = np.tile(np.repeat(_AXES, 2, axis=0), (n, 1))
        lines.set_active_scalars("radius")
        return lines.tube(scalars="radius", absolute=True, n_sides=8, capping=True)

    def _rod_tubes(self, extra: np.ndarray):
        """Tubes of the rod edges of rod/shell/solid meshes, each at its section radius."""
        seg, rad = self.rods
        pts = np.concatenate([extra[seg[:, 0]], extra[seg[:, 1]]])
        cells = np.column_stack([np.full(len(seg), 2), np.arange(len(seg)),
                                 len(seg) + np.arange(len(seg))]).ravel()
        lines = self._pv.PolyData(pts, lines=cells)
        lines.point_data["radius"] = np.maximum(np.tile(rad, 2), self.min_radius)
        lines.set_active_scalars("radius")
        return lines.tube(scalars="radius", absolute=True, n_sides=self.n_sides, capping=True)

    def _frame_parts(self, k: int) -> dict:
        """The meshes of frame ``k`` that move: strands, axes, mesh, rods, loose points."""
        pv, t = self._pv, self.traj
        parts = {}
        if t.n_strands and self.cells.size:
            parts["strands"] = self._strand_tubes(k)
        extra = np.asarray(t.extra_points[k], dtype=np.float64)
        if self.axes.size:
            parts["axes"] = self._axes_tubes(extra)
        if len(self.rods[0]):
            parts["rods"] = self._rod_tubes(extra)
        tri = np.asarray(t.extra_triangles, dtype=np.int64)
        if tri.shape[0]:
            parts["mesh"] = pv.PolyData(extra, faces=np.column_stack(
                [np.full(tri.shape[0], 3), tri]).ravel()).compute_normals(
                split_vertices=False, auto_orient_normals=False)
        if self.loose.size:
            parts["points"] = pv.PolyData(extra[self.loose])
        return parts

    def _add(self, name: str, mesh) -> None:
        style = {"strands": {"specular": 0.35, "specular_power": 20},
                 "axes": {"scalars": "color", "rgb": True},
                 "mesh": {"color": _MESH, "specular": 0.2},
                 "rods": {"color": _ROD, "specular": 0.3, "specular_power": 20},
                 "points": {"color": (0.3, 0.3, 0.3), "render_points_as_spheres": True,
                            "point_size": 7}}[name]
        if name == "strands" and self.color_by == "strand":
            style.update(scalars="color", rgb=True)
        elif name == "strands":
            style.update(scalars="color", cmap=_CMAPS.get(self.color_by, "viridis"),
                         clim=self.clim, scalar_bar_args={
                             "title": self._bar, "color": "black", "vertical": True,
                             "position_x": 0.86, "position_y": 0.25, "width": 0.06,
                             "height": 0.5, "title_font_size": 12, "label_font_size": 10,
                             "fmt": "%.2g"})
        actor = self.plotter.add_mesh(mesh, **style)
        self._meshes[name] = actor.mapper.dataset      # what is drawn (add_mesh may copy)

    def _set_camera(self) -> None:
        cam = self.plotter.camera
        cam.position = tuple(self.view.position)
        cam.focal_point = tuple(self.view.focal_point)
        cam.up = tuple(self.view.up)
        cam.view_angle = self.view.view_angle

    def image(self, k: int, title: str | None = None) -> np.ndarray:
        """Frame ``k`` rendered: RGB uint8 [height, width, 3]."""
        for name, mesh in self._frame_parts(k).items():
            if name in self._meshes:
                self._meshes[name].copy_from(mesh, deep=False)
            else:
                self._add(name, mesh)
        if title is not None:
            self.plotter.add_text(title, name="title", font_size=10, color="black",
                                  position="upper_left")
        self._set_camera()
        self.plotter.renderer.ResetCameraClippingRange()
        self.plotter.render()       # screenshot() alone reuses the last image
        return np.asarray(self.plotter.screenshot(return_img=True))[..., :3]

    def close(self) -> None:
        self.plotter.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def render_trajectory_pyvista(traj: TrajectoryBase, out_dir, *, every: int = 1,
                              title: str | None = None, progress=None, **options) -> list[Path]:
    """Render every ``every``-th frame of ``traj`` to ``out_dir/frame_NNNNN.png`` (``NNNNN``
    the frame index) with a :class:`TubeRenderer` (``options`` are its keyword arguments); each
    image is titled with ``title`` (if given) and the frame time.  ``progress(k)``, when given,
    is called after each image.  Returns the paths written, in frame order."""
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"every must be an integer >= 1, got {every!r}")
    frames = range(0, traj.n_frames, int(every))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with TubeRenderer(traj, frames=frames, **options) as r:
        for k in frames:
            label = f"t = {traj.times[k]:.3f} s"
            img = r.image(k, f"{title}   {label}" if title else label)
            p = out / f"frame_{k:05d}.png"
            Image.fromarray(img).save(p, format="PNG", compress_level=1)
            written.append(p)
            if progress is not None:
                progress(k)
    return written
