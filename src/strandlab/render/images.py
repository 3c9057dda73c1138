"""Headless rendering of strands, meshes and colliders to PNG images with matplotlib (Agg).

Only :class:`matplotlib.figure.Figure` with a :class:`FigureCanvasAgg` canvas is used, never
``pyplot``: rendering works without a display and leaves matplotlib's global state alone.

Each strand is a 3-D polyline (one colour per strand from a colormap; the line width follows
the strand radius), the extra mesh a translucent surface, colliders light wireframes and,
on request, the extra points that belong to no triangle (kinematic frames, rigid-body points)
small grey dots.  The axes are a cube with equal
scales; :func:`render_trajectory` computes it once over all frames so the camera stays still.
"""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection
from mpl_toolkits.mplot3d.axes3d import Axes3D

from ..io.trajectory import TrajectoryBase, check_offsets
from .scalars import strand_colors

__all__ = ["render_frame", "render_trajectory", "scene_bounds", "DEFAULT_VIEW"]

DEFAULT_VIEW = (20.0, -60.0)    #: default camera (elevation, azimuth) [deg]

_WIRE = {"color": "0.55", "linewidth": 0.4, "alpha": 0.6}
if "axlim_clip" in inspect.signature(Axes3D.plot_wireframe).parameters:   # matplotlib >= 3.10
    _WIRE["axlim_clip"] = True      # colliders are cut at the fixed bounds
_MESH = {"facecolor": (0.55, 0.6, 0.7, 0.35), "edgecolor": (0.3, 0.3, 0.35, 0.5),
         "linewidth": 0.3}
_LINE_WIDTH_RANGE = (0.6, 14.0)     # points
_DEFAULT_LINE_WIDTH = 1.5           # points, without radii


# ---------------------------------------------------------------------------------- checks
def _points(name: str, value, ndim: int = 2) -> np.ndarray:
    """Float64 array of shape [..., 3] with ``ndim`` dimensions, or ValueError naming it."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of 3-D points ({exc})") from None
    if arr.ndim != ndim or arr.shape[-1] != 3:
        want = "[n, 3]" if ndim == 2 else "[n_frames, n, 3]"
        raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    return arr


def _flags(name: str, value, n: int) -> np.ndarray:
    if value is None:
        return np.zeros(n, dtype=np.bool_)
    arr = np.asarray(value).astype(np.bool_)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape [{n}] (one per strand), got {arr.shape}")
    return arr


def _radii(value, n: int):
    if value is None:
        return None
    r = np.asarray(value, dtype=np.float64)
    if r.ndim == 0:
        r = np.full(n, float(r))
    if r.shape != (n,):
        raise ValueError(f"radii must have shape [{n}] (one per strand), got {r.shape}")
    if not np.all(np.isfinite(r) & (r >= 0)):
        k = int(np.argmax(~(np.isfinite(r) & (r >= 0))))
        raise ValueError(f"radii[{k}] = {r[k]} is not a finite non-negative radius")
    return r


def _triangles(value, n_points: int) -> np.ndarray:
    if value is None:
        return np.zeros((0, 3), dtype=np.int64)
    tri = np.asarray(value)
    if tri.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if tri.ndim != 2 or tri.shape[1] != 3 or not np.issubdtype(tri.dtype, np.integer):
        raise ValueError(f"extra_triangles must be integers of shape [n, 3], got "
                         f"{tri.dtype} {tri.shape}")
    if tri.min() < 0 or tri.max() >= n_points:
        k = int(np.argmax(np.any((tri < 0) | (tri >= n_points), axis=1)))
        raise ValueError(f"extra_triangles[{k}] = {tri[k].tolist()} indexes outside the "
                         f"{n_points} extra points")
    return tri.astype(np.int64)


def _bounds(value) -> np.ndarray:
    b = np.asarray(value, dtype=np.float64)
    if b.shape != (2, 3) or not np.all(np.isfinite(b)) or np.any(b[1] <= b[0]):
        raise ValueError(f"bounds must be [[xmin, ymin, zmin], [xmax, ymax, zmax]] with "
                         f"min < max, got {b.tolist()}")
    return b


def _view(value) -> tuple:
    try:
        elev, azim = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"view must be (elevation, azimuth) in degrees, got {value!r}") from None
    return elev, azim


# ---------------------------------------------------------------------------------- bounds
def scene_bounds(*point_sets, margin: float = 0.05) -> np.ndarray:
    """Cube around all finite points of ``point_sets`` [m], shape [2, 3] (min row, max row).

    Each set is an array [..., 3] (a frame [n, 3] or a trajectory [T, n, 3]); empty sets and
    ``None`` are ignored.  The cube's side is the largest extent plus ``margin`` of it on each
    side (at least 1 mm); without any finite point it is the unit cube around the origin.
    """
    chunks = []
    for k, s in enumerate(point_sets):
        if s is None:
            continue
        arr = np.asarray(s, dtype=np.float64)
        if arr.size == 0:
            continue
        if arr.shape[-1] != 3:
            raise ValueError(f"point set {k} must have shape [..., 3], got {arr.shape}")
        arr = arr.reshape(-1, 3)
        chunks.append(arr[np.all(np.isfinite(arr), axis=1)])
    pts = np.concatenate(chunks) if chunks else np.zeros((0, 3))
    if pts.shape[0] == 0:
        return np.array([[-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    center = 0.5 * (lo + hi)
    half = max(0.5 * float(np.max(hi - lo)) * (1.0 + 2.0 * margin), 5e-4)
    return np.stack([center - half, center + half])


def _trajectory_bounds(traj: TrajectoryBase, block: int = 64) -> np.ndarray:
    """:func:`scene_bounds` of all frames of ``traj``, reading ``block`` frames at a time."""
    corners = []
    for k in range(0, traj.n_frames, block):
        for arr in (traj.positions[k:k + block], traj.extra_points[k:k + block]):
            pts = np.asarray(arr, dtype=np.float64).reshape(-1, 3)
            pts = pts[np.all(np.isfinite(pts), axis=1)]
            if pts.shape[0]:
                corners.append(np.stack([pts.min(axis=0), pts.max(axis=0)]))
    return scene_bounds(*corners)


# ---------------------------------------------------------------------------------- figure parts
def _new_axes(size, dpi, bounds: np.ndarray, view):
    """A Figure with an Agg canvas and one 3-D axes with equal scales over ``bounds``."""
    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    ax.set_xlim(bounds[0, 0], bounds[1, 0])
    ax.set_ylim(bounds[0, 1], bounds[1, 1])
    ax.set_zlim(bounds[0, 2], bounds[1, 2])
    ax.set_box_aspect(tuple(bounds[1] - bounds[0]))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    elev, azim = view
    ax.view_init(elev=elev, azim=azim)
    return fig, ax


def _polylines(positions: np.ndarray, offsets: np.ndarray, closed: np.ndarray) -> list:
    """One vertex array [n_i (+1 closed), 3] per strand."""
    out = []
    for s in range(offsets.shape[0] - 1):
        p = positions[offsets[s]:offsets[s + 1]]
        out.append(np.vstack([p, p[:1]]) if closed[s] and p.shape[0] > 2 else p)
    return out


def _line_widths(radii, n: int, bounds: np.ndarray, size) -> np.ndarray:
    """Line widths [points] approximating each strand's diameter on screen."""
    if radii is None:
        return np.full(n, _DEFAULT_LINE_WIDTH)
    span = float(np.max(bounds[1] - bounds[0]))
    points_per_metre = 0.6 * min(size) * 72.0 / span   # the cube fills ~60 % of the figure
    return np.clip(2.0 * radii * points_per_metre, *_LINE_WIDTH_RANGE)


def _mesh_faces(extra: np.ndarray, tri: np.ndarray) -> np.ndarray:
    return extra[tri] if tri.shape[0] else np.zeros((0, 3, 3))


def _loose_points(n_extra: int, tri: np.ndarray) -> np.ndarray:
    """Indices of the extra points that are in no triangle."""
    used = np.zeros(n_extra, dtype=np.bool_)
    used[tri.ravel()] = True
    return np.flatnonzero(~used)


# ---------------------------------------------------------------------------------- colliders
def _vector(c: dict, k: int, key: str) -> np.ndarray:
    if key not in c:
        raise ValueError(f"collider {k} ({c.get('type')}) lacks {key!r}")
    v = np.asarray(c[key], dtype=np.float64)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"collider {k} ({c['type']}): {key!r} must be 3 finite numbers, "
                         f"got {c[key]!r}")
    return v


def _positive(c: dict, k: int, key: str) -> float:
    if key not in c:
        raise ValueError(f"collider {k} ({c.get('type')}) lacks {key!r}")
    v = float(c[key])
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"collider {k} ({c['type']}): {key!r} must be positive, got {v}")
    return v


def _basis(axis: np.ndarray):
    """Unit vectors u, v with (u, v, axis) orthonormal; ``axis`` must be a unit vector."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    return u, np.cross(axis, u)


def _plane_grid(c: dict, k: int, bounds: np.ndarray):
    p, n = _vector(c, k, "point"), _vector(c, k, "normal")
    norm = np.linalg.norm(n)
    if norm == 0:
        raise ValueError(f"collider {k} (plane): the normal is zero")
    n = n / norm
    mid = 0.5 * (bounds[0] + bounds[1])
    center = mid - np.dot(mid - p, n) * n
    half = 0.5 * float(np.max(bounds[1] - bounds[0]))
    u, v = _basis(n)
    s, t = np.meshgrid(np.linspace(-half, half, 11), np.linspace(-half, half, 11))
    return center + s[..., None] * u + t[..., None] * v


def _sphere_grid(center, radius, n_lon=18, n_lat=10):
    lon, lat = np.meshgrid(np.linspace(0, 2 * np.pi, n_lon), np.linspace(0, np.pi, n_lat))
    d = np.stack([np.cos(lon) * np.sin(lat), np.sin(lon) * np.sin(lat), np.cos(lat)], axis=-1)
    return center + radius * d


def _capsule_grid(c: dict, k: int):
    a, b, r = _vector(c, k, "a"), _vector(c, k, "b"), _positive(c, k, "radius")
    length = float(np.linalg.norm(b - a))
    if length == 0:
        return _sphere_grid(a, r)
    w = (b - a) / length
    u, v = _basis(w)
    th = np.linspace(0, 0.5 * np.pi, 5)
    along = np.linspace(0.0, length, 12)[1:-1]   # cylinder samples (for clipping at the bounds)
    # profile (distance from the axis, position along it) from pole a to pole b
    rho = np.concatenate([r * np.sin(th), np.full(along.shape, r), r * np.cos(th)])
    z = np.concatenate([-r * np.cos(th), along, length + r * np.sin(th)])
    phi = np.linspace(0, 2 * np.pi, 18)
    ring = np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * v
    return a + z[None, :, None] * w + rho[None, :, None] * ring[:, None, :]


def _collider_grid(c, k: int, bounds: np.ndarray) -> np.ndarray:
    """Wireframe grid [m], shape [rows, cols, 3], of collider ``k``."""
    if not isinstance(c, dict) or "type" not in c:
        raise ValueError(f"collider {k} must be a dict with a 'type', got {c!r}")
    kind = c["type"]
    if kind == "plane":
        return _plane_grid(c, k, bounds)
    if kind == "sphere":
        return _sphere_grid(_vector(c, k, "center"), _positive(c, k, "radius"))
    if kind == "capsule":
        return _capsule_grid(c, k)
    raise ValueError(f"collider {k} has unknown type {kind!r} (plane, sphere or capsule)")


def _draw_colliders(ax, colliders, bounds: np.ndarray) -> None:
    for k, c in enumerate(colliders or ()):
        g = _collider_grid(c, k, bounds)
        ax.plot_wireframe(g[..., 0], g[..., 1], g[..., 2], **_WIRE)


# ---------------------------------------------------------------------------------- scene
class _FrameArtists:
    """The artists of one rendered scene; :meth:`update` moves them to another frame."""

    def __init__(self, ax, offsets, closed, radii, tri, bounds, size, positions, extra,
                 show_points):
        """Artists for strands ``offsets``/``closed``/``radii`` and mesh ``tri``, drawn at the
        frame ``positions`` [V, 3], ``extra`` [X, 3]; dots for loose extra points if asked."""
        self.ax, self.offsets, self.closed, self.tri = ax, offsets, closed, tri
        n = offsets.shape[0] - 1
        self.lines = None
        if n:
            self.lines = Line3DCollection(_polylines(positions, offsets, closed),
                                          colors=strand_colors(n),
                                          linewidths=_line_widths(radii, n, bounds, size),
                                          capstyle="round", joinstyle="round")
            ax.add_collection3d(self.lines)
        self.mesh = None
        if tri.shape[0]:
            self.mesh = Poly3DCollection(_mesh_faces(extra, tri), **_MESH)
            ax.add_collection3d(self.mesh)
        self.loose = _loose_points(extra.shape[0], tri) if show_points else np.zeros(0, int)
        self.dots = None
        if self.loose.size:
            self.dots, = ax.plot([], [], [], linestyle="none", marker="o", markersize=2.0,
                                 color="0.35")

    def update(self, positions, extra, title) -> None:
        if self.lines is not None:
            self.lines.set_segments(_polylines(positions, self.offsets, self.closed))
        if self.mesh is not None:
            self.mesh.set_verts(_mesh_faces(extra, self.tri))
        if self.dots is not None:
            p = extra[self.loose]
            self.dots.set_data_3d(p[:, 0], p[:, 1], p[:, 2])
        self.ax.set_title(title or "")


def _check_frame(positions, offsets, closed, radii, extra_points, extra_triangles):
    pos = _points("positions", positions)
    off = check_offsets(offsets, pos.shape[0], "offsets")
    n = off.shape[0] - 1
    extra = np.zeros((0, 3)) if extra_points is None else _points("extra_points", extra_points)
    tri = _triangles(extra_triangles, extra.shape[0])
    return pos, off, _flags("closed", closed, n), _radii(radii, n), extra, tri


def render_frame(positions, offsets, *, closed=None, radii=None, extra_points=None,
                 extra_triangles=None, colliders=None, bounds=None, view=DEFAULT_VIEW,
                 title=None, path=None, dpi=100, size=(6, 6), show_points=False):
    """Render one frame; returns the Figure, or writes a PNG to ``path`` and returns its Path.

    * ``positions``: strand vertices of all strands [m], shape [n, 3]; ``offsets``: first
      vertex of each strand and n, shape [n_strands + 1]; ``closed``: loop flag per strand,
      [n_strands]; ``radii``: strand radii [m], [n_strands] (line widths follow them; default
      thin lines).
    * ``extra_points`` [m], [n_extra, 3] and ``extra_triangles`` (indices into them,
      [n_tri, 3]): a translucent mesh; with ``show_points`` the points in no triangle are dots.
    * ``colliders``: list of dicts ``{"type": "plane", "point", "normal"}``,
      ``{"type": "sphere", "center", "radius"}``, ``{"type": "capsule", "a", "b", "radius"}``.
    * ``bounds``: [[xmin, ymin, zmin], [xmax, ymax, zmax]] [m] (default: :func:`scene_bounds`
      of this frame); ``view``: (elevation, azimuth) [deg]; ``title``: text above the axes.
    * ``size``: figure size [in]; the image is ``size * dpi`` pixels.
    """
    pos, off, cl, rad, extra, tri = _check_frame(positions, offsets, closed, radii,
                                                 extra_points, extra_triangles)
    b = scene_bounds(pos, extra) if bounds is None else _bounds(bounds)
    fig, ax = _new_axes(size, dpi, b, _view(view))
    _draw_colliders(ax, colliders, b)
    artists = _FrameArtists(ax, off, cl, rad, tri, b, size, pos, extra, show_points)
    artists.update(pos, extra, title)
    if path is None:
        return fig
    p = Path(path)
    fig.savefig(p, dpi=dpi, format="png")
    return p


def render_trajectory(traj: TrajectoryBase, out_dir, *, every: int = 1, colliders=None,
                      view=DEFAULT_VIEW, dpi: int = 100, size=(6, 6), bounds=None,
                      title: str | None = None, show_points: bool = False,
                      progress=None) -> list[Path]:
    """Render every ``every``-th frame of ``traj`` to ``out_dir/frame_NNNNN.png``.

    ``NNNNN`` is the trajectory frame index.  The bounds (default: :func:`scene_bounds` over
    all frames of the strands and extra points) and camera are the same for every image; each
    image is titled with ``title`` (if given) and the frame time.  ``out_dir`` is created if
    needed.  Returns the paths written, in frame order.  ``progress(k)``, when given, is called
    after each image (``k`` the frame index).  Other arguments as in
    :func:`render_frame`.  ``traj`` may be in memory or read lazily from an ``.h5`` file: the
    bounds are gathered a block of frames at a time and each image reads one frame.
    """
    if not isinstance(traj, TrajectoryBase):
        raise TypeError(f"expected a Trajectory, got {type(traj).__name__}")
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"every must be an integer >= 1, got {every!r}")
    b = _trajectory_bounds(traj) if bounds is None else _bounds(bounds)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = _new_axes(size, dpi, b, _view(view))
    _draw_colliders(ax, colliders, b)
    artists = _FrameArtists(ax, traj.strand_offsets, traj.closed, traj.radii,
                            traj.extra_triangles, b, size, traj.positions[0],
                            traj.extra_points[0], show_points)
    written = []
    for k in range(0, traj.n_frames, int(every)):
        label = f"t = {traj.times[k]:.3f} s"
        artists.update(traj.positions[k], traj.extra_points[k],
                       f"{title}   {label}" if title else label)
        p = out / f"frame_{k:05d}.png"
        fig.savefig(p, dpi=dpi, format="png")
        written.append(p)
        if progress is not None:
            progress(k)
    return written
