"""Export strand centrelines (and the scene's meshes) as polylines and faces for Blender,
Houdini and other 3-D tools.

* OBJ: ``v x y z`` lines, then one ``l i j k ...`` line (1-based indices) per strand; a closed
  strand repeats its first index at the end of its line.  With meshes (:class:`FrameMesh`),
  the strands are the object ``o strands`` and each mesh an object ``o <name>`` of its
  ``v`` lines, triangles (``f``) and rod polylines (``l``).
* PLY (ASCII 1.0): a ``vertex`` element (``x y z`` as double, plus ``radius`` when radii are
  given), a ``face`` element (``vertex_indices``, only with mesh triangles) and an ``edge``
  element (``vertex1 vertex2``); a closed strand has the edge from its last vertex back to
  its first.  The meshes' vertices follow the strands'.

Blender imports both as meshes (edges for the strands and rods, faces for the triangles; the
PLY ``radius`` becomes a vertex attribute); Houdini's File SOP reads them as polylines and
polygons with attributes.  :func:`export_frames` writes one file per trajectory frame.  Every
file is written under a temporary name and renamed when complete (:mod:`strandlab.io.atomic`).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .atomic import atomic_path, check_writable_folder
from .selection import extra_parts, rod_chains, select_frames
from .trajectory import TrajectoryBase, check_offsets

__all__ = ["write_obj_polylines", "write_ply_polylines", "export_frames", "FrameMesh",
           "frame_meshes", "mesh_layout", "frame_folder", "status_note"]


@dataclass(frozen=True)
class FrameMesh:
    """A mesh in one frame: ``name``, ``points`` [n, 3] (m), ``triangles`` int [M, 3] and rod
    polylines ``rods`` (:class:`~strandlab.io.selection.RodChain`: point indices and radius),
    both indexing ``points``."""

    name: str
    points: np.ndarray
    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
    rods: tuple = ()

    def rod_edges(self) -> np.ndarray:
        """Consecutive point pairs of the rod polylines, int [G, 2]."""
        pairs = [np.c_[c.points[:-1], c.points[1:]] for c in self.rods]
        return np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)

    def point_radii(self) -> np.ndarray:
        """Radius at each point [m], [n]: the largest of the rods through it, 0 elsewhere."""
        r = np.zeros(len(self.points))
        for c in self.rods:
            np.maximum.at(r, c.points, c.radius)
        return r


def mesh_layout(traj: TrajectoryBase) -> list[tuple]:
    """``(start, stop, name, triangles, rods)`` of each mesh among the extra points of
    ``traj`` (:func:`~strandlab.io.selection.extra_parts` of kind mesh; rods chained by
    :func:`~strandlab.io.selection.rod_chains`)."""
    return [(p.start, p.stop, p.name, p.triangles,
             tuple(rod_chains(p.segments, p.segment_radii)))
            for p in extra_parts(traj) if p.kind == "mesh"]


def frame_meshes(traj: TrajectoryBase, k: int, *, layout=None) -> list[FrameMesh]:
    """The meshes of frame ``k`` of ``traj``: triangles and rod polylines (the points of
    kinematic frames and rigid bodies are left out).  ``layout``: :func:`mesh_layout` of
    ``traj``, computed once for many frames."""
    layout = mesh_layout(traj) if layout is None else layout
    if not layout:
        return []
    extra = np.asarray(traj.extra_points[k], dtype=np.float64)
    return [FrameMesh(name, extra[a:b], tri, rods) for a, b, name, tri, rods in layout]


_FORMATS = ("obj", "ply")


# ---------------------------------------------------------------------------------- checks
def _polylines(points, offsets, closed):
    """Validated (points float64 [n, 3], offsets int64 [S + 1], closed bool [S])."""
    try:
        pts = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"points must be a numeric array of shape [n, 3] ({exc})") from None
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise ValueError(f"points must have shape [n, 3], got {pts.shape}")
    if not np.all(np.isfinite(pts)):
        k = int(np.argmax(~np.all(np.isfinite(pts), axis=1)))
        raise ValueError(f"points has non-finite coordinates at vertex {k}")
    off = check_offsets(offsets, pts.shape[0], "offsets")
    n_strands = off.shape[0] - 1
    if closed is None:
        cl = np.zeros(n_strands, dtype=np.bool_)
    else:
        cl = np.asarray(closed).astype(np.bool_)
        if cl.shape != (n_strands,):
            raise ValueError(f"closed must have shape [{n_strands}] (one flag per strand), "
                             f"got {cl.shape}")
    return pts, off, cl


def _vertex_radii(radii, off: np.ndarray) -> np.ndarray:
    """Radius of every vertex [m], float64 [n], finite and non-negative, from one radius, one
    per strand [S] or one per vertex [n] (the same thing when S = n)."""
    n_strands, n = off.shape[0] - 1, int(off[-1])
    try:
        r = np.asarray(radii, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"radii must be numbers ({exc})") from None
    if r.ndim == 0:
        r = np.full(n_strands, float(r))
    if r.shape not in ((n_strands,), (n,)):
        raise ValueError(f"radii must have shape [{n_strands}] (one per strand) or [{n}] (one "
                         f"per vertex), got {r.shape}")
    if not np.all(np.isfinite(r) & (r >= 0)):
        k = int(np.argmax(~(np.isfinite(r) & (r >= 0))))
        raise ValueError(f"radii[{k}] = {r[k]} is not a finite non-negative radius")
    return np.repeat(r, np.diff(off)) if r.shape == (n_strands,) else r


def _edges(off: np.ndarray, closed: np.ndarray) -> np.ndarray:
    """Vertex index pairs (0-based) of all polyline edges, int64 shape [n_edges, 2]."""
    parts = []
    for s in range(off.shape[0] - 1):
        a, b = int(off[s]), int(off[s + 1])
        if b - a < 2:
            continue
        idx = np.arange(a, b)
        if closed[s] and b - a >= 3:
            parts.append(np.c_[idx, np.roll(idx, -1)])
        else:
            parts.append(np.c_[idx[:-1], idx[1:]])
    if not parts:
        return np.zeros((0, 2), dtype=np.int64)
    return np.concatenate(parts)


def _write_text(path, lines: list[str]) -> Path:
    """Write ``lines`` to ``path`` atomically (a temporary file renamed when complete)."""
    p = Path(path)
    with atomic_path(p) as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="ascii")
    return p


def _meshes(meshes) -> list[FrameMesh]:
    """``meshes`` checked: FrameMesh objects with finite points and triangles and rods inside
    them (ValueError naming the mesh)."""
    out = []
    for m in meshes:
        if not isinstance(m, FrameMesh):
            raise TypeError(f"meshes must be FrameMesh objects, got {type(m).__name__}")
        pts = np.asarray(m.points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 3 or not np.all(np.isfinite(pts)):
            raise ValueError(f"mesh {m.name!r}: points must be finite with shape [n, 3]")
        tri = np.asarray(m.triangles, dtype=np.int64).reshape(-1, 3)
        cells = [tri.ravel()] + [np.asarray(c.points) for c in m.rods]
        used = np.concatenate(cells) if cells else np.zeros(0, np.int64)
        if used.size and (used.min() < 0 or used.max() >= len(pts)):
            raise ValueError(f"mesh {m.name!r}: a triangle or rod indexes outside its "
                             f"{len(pts)} points")
        out.append(FrameMesh(m.name, pts, tri, tuple(m.rods)))
    return out


def status_note(status) -> str | None:
    """The note an exported file carries of a run that did not complete (``status`` as the
    trajectory's: ``"diverged: ..."``, ``"interrupted: ..."``): ``"strandlab run <status>"``,
    one line of ASCII; None for a complete run (or no status)."""
    if status is None or str(status) == "complete":
        return None
    text = " ".join(str(status).split()).encode("ascii", "replace").decode("ascii")
    return f"strandlab run {text}"


def _obj_vertices(pts: np.ndarray) -> list[str]:
    return [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in pts]


def _obj_line(idx, first: int) -> str:
    return "l " + " ".join(str(int(i) + first) for i in idx)


# ---------------------------------------------------------------------------------- writers
def write_obj_polylines(path, points, offsets, closed=None, *, meshes=(),
                        status=None) -> Path:
    """Write strands (and meshes) as OBJ polylines (and faces); returns the path.

    ``points``: vertices of all strands concatenated [m], shape [n, 3]; ``offsets``: first
    vertex of each strand and ``n``, int shape [n_strands + 1]; ``closed``: one flag per strand
    (default all open) -- a closed strand's ``l`` line ends with its first index again.
    Strands with fewer than two vertices get vertices but no ``l`` line.  ``meshes``:
    :class:`FrameMesh` objects, each written as an object (``o``) of its points, its triangles
    as ``f`` lines and its rod polylines as ``l`` lines; the strands are then the object
    ``strands``.  ``status``: the run's (:func:`status_note`), a comment line when it did not
    complete.
    """
    pts, off, cl = _polylines(points, offsets, closed)
    meshes = _meshes(meshes)
    check_writable_folder(path)
    lines = ["# strandlab polylines", f"# {pts.shape[0]} vertices, {off.shape[0] - 1} strands"]
    note = status_note(status)
    if note is not None:
        lines.insert(1, f"# {note}")
    if meshes and pts.shape[0]:
        lines.append("o strands")
    lines.extend(_obj_vertices(pts))
    for s in range(off.shape[0] - 1):
        a, b = int(off[s]), int(off[s + 1])
        if b - a < 2:
            continue
        idx = list(range(a, b))
        if cl[s] and b - a >= 3:
            idx.append(a)
        lines.append(_obj_line(idx, 1))
    first = pts.shape[0] + 1
    for m in meshes:
        lines.append(f"o {m.name}")
        lines.extend(_obj_vertices(m.points))
        lines.extend("f " + " ".join(str(int(i) + first) for i in t) for t in m.triangles)
        lines.extend(_obj_line(c.points, first) for c in m.rods)
        first += len(m.points)
    return _write_text(path, lines)


def write_ply_polylines(path, points, offsets, closed=None, radii=None, *, meshes=(),
                        status=None) -> Path:
    """Write strands (and meshes) as an ASCII PLY file with vertex, face and edge elements;
    returns the path.

    ``points``, ``offsets``, ``closed`` as in :func:`write_obj_polylines`.  ``radii``: one
    radius [m] per strand [n_strands], per vertex [n], or a single number; when given, each
    vertex gets a ``radius`` property.  ``meshes``: :class:`FrameMesh` objects whose points
    follow the strands' in the vertex element (with the radius of the rods through them, 0
    elsewhere), their triangles in a ``face`` element and their rod polylines as edges.
    ``status``: the run's (:func:`status_note`), a ``comment`` line when it did not complete.
    """
    pts, off, cl = _polylines(points, offsets, closed)
    meshes = _meshes(meshes)
    r = None if radii is None else _vertex_radii(radii, off)
    check_writable_folder(path)
    edges, faces, first = [_edges(off, cl)], [], pts.shape[0]
    for m in meshes:
        edges.append(m.rod_edges() + first)
        faces.append(m.triangles + first)
        first += len(m.points)
    edges = np.concatenate(edges)
    faces = np.concatenate(faces) if faces else np.zeros((0, 3), np.int64)
    if meshes:
        pts = np.concatenate([pts] + [m.points for m in meshes])
        if r is not None:
            r = np.concatenate([r] + [m.point_radii() for m in meshes])
    note = status_note(status)
    header = ["ply", "format ascii 1.0", "comment strandlab polylines"] + (
        [] if note is None else [f"comment {note}"]) + [
              f"element vertex {pts.shape[0]}",
              "property double x", "property double y", "property double z"]
    if r is not None:
        header.append("property double radius")
        rows = [f"{x:.17g} {y:.17g} {z:.17g} {rad:.17g}" for (x, y, z), rad in zip(pts, r)]
    else:
        rows = [f"{x:.17g} {y:.17g} {z:.17g}" for x, y, z in pts]
    if len(faces):
        header += [f"element face {len(faces)}", "property list uchar int vertex_indices"]
        rows.extend(f"3 {i} {j} {k}" for i, j, k in faces)
    header += [f"element edge {edges.shape[0]}", "property int vertex1", "property int vertex2",
               "end_header"]
    rows.extend(f"{i} {j}" for i, j in edges)
    return _write_text(path, header + rows)


@contextlib.contextmanager
def frame_folder(out_dir) -> Iterator[list]:
    """Context manager for writing a folder of files, one per frame: creates ``out_dir`` if
    needed and yields the list to which the writer appends each path it has written.  On an
    exception (a bad frame, Ctrl-C) the files listed are removed, and ``out_dir`` too if this
    call created it and it is left empty; the exception propagates.  So a per-frame export
    that fails leaves nothing behind, as a single-file one does (:func:`atomic_path`)."""
    out = Path(out_dir)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    written: list = []
    try:
        yield written
    except BaseException:
        for path in written:
            with contextlib.suppress(OSError):
                Path(path).unlink()
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()
        raise


def export_frames(traj: TrajectoryBase, out_dir, fmt: str = "obj", every: int = 1, *,
                  frames=None, progress=None) -> list[Path]:
    """Write frames of ``traj`` as ``out_dir/frame_NNNNN.<fmt>``, one file per frame.

    ``fmt``: ``"obj"`` or ``"ply"`` (the PLY files carry the radius of every vertex).  The
    scene's meshes (:func:`frame_meshes`: triangles and rod polylines) are written with the
    strands.  ``frames``: the
    selection of :func:`~strandlab.io.selection.select_frames` (``"A:B:S"``, default all),
    of which every ``every``-th frame is written.  ``NNNNN`` is the trajectory frame index (so
    ``every=2`` writes ``frame_00000``, ``frame_00002``, ...).  ``out_dir`` is created if
    needed.  Each file is written under a temporary name and renamed when complete; on a
    failure or an interruption the files already written are removed (and ``out_dir`` if it
    was created here: :func:`frame_folder`).
    The files of a run that did not complete say so in a comment (:func:`status_note`).
    ``progress(k)`` is called after frame ``k``.  Returns the paths written, in frame order.
    ``traj`` may be in memory or read lazily from an ``.h5`` file (one frame at a time).
    """
    if not isinstance(traj, TrajectoryBase):
        raise TypeError(f"expected a Trajectory, got {type(traj).__name__}")
    if fmt not in _FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(_FORMATS)}, got {fmt!r}")
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"every must be an integer >= 1, got {every!r}")
    sel = select_frames(frames, traj.n_frames)[::int(every)]
    out, layout = Path(out_dir), mesh_layout(traj)
    with frame_folder(out) as written:
        for k in sel:
            p = out / f"frame_{int(k):05d}.{fmt}"
            meshes = frame_meshes(traj, int(k), layout=layout)
            if fmt == "obj":
                write_obj_polylines(p, traj.positions[k], traj.strand_offsets, traj.closed,
                                    meshes=meshes, status=traj.status)
            else:
                write_ply_polylines(p, traj.positions[k], traj.strand_offsets, traj.closed,
                                    traj.vertex_radii, meshes=meshes, status=traj.status)
            written.append(p)
            if progress is not None:
                progress(int(k))
    return written
