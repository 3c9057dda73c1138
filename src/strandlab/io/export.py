"""Export strand centrelines as polylines for Blender, Houdini and other 3-D tools.

* OBJ: ``v x y z`` lines, then one ``l i j k ...`` line (1-based indices) per strand; a closed
  strand repeats its first index at the end of its line.
* PLY (ASCII 1.0): a ``vertex`` element (``x y z`` as double, plus ``radius`` when radii are
  given) and an ``edge`` element (``vertex1 vertex2``); a closed strand has the edge from its
  last vertex back to its first.

Blender imports both as edge-only meshes (the PLY ``radius`` becomes a vertex attribute in
recent versions); Houdini's File SOP reads them as polylines / points with attributes.
:func:`export_frames` writes one file per trajectory frame.  Every file is written under a
temporary name and renamed when complete (:mod:`strandlab.io.atomic`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .atomic import atomic_path, check_writable_folder
from .selection import select_frames
from .trajectory import TrajectoryBase, check_offsets

__all__ = ["write_obj_polylines", "write_ply_polylines", "export_frames"]

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


def _strand_radii(radii, n_strands: int) -> np.ndarray:
    """Radii [m], float64 shape [S], finite and non-negative."""
    try:
        r = np.asarray(radii, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"radii must be numbers ({exc})") from None
    if r.ndim == 0:
        r = np.full(n_strands, float(r))
    if r.shape != (n_strands,):
        raise ValueError(f"radii must have shape [{n_strands}] (one per strand), got {r.shape}")
    if not np.all(np.isfinite(r) & (r >= 0)):
        k = int(np.argmax(~(np.isfinite(r) & (r >= 0))))
        raise ValueError(f"radii[{k}] = {r[k]} is not a finite non-negative radius")
    return r


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


# ---------------------------------------------------------------------------------- writers
def write_obj_polylines(path, points, offsets, closed=None) -> Path:
    """Write strands as OBJ polylines; returns the path.

    ``points``: vertices of all strands concatenated [m], shape [n, 3]; ``offsets``: first
    vertex of each strand and ``n``, int shape [n_strands + 1]; ``closed``: one flag per strand
    (default all open) -- a closed strand's ``l`` line ends with its first index again.
    Strands with fewer than two vertices get vertices but no ``l`` line.
    """
    pts, off, cl = _polylines(points, offsets, closed)
    check_writable_folder(path)
    lines = ["# strandlab polylines", f"# {pts.shape[0]} vertices, {off.shape[0] - 1} strands"]
    lines.extend(f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in pts)
    for s in range(off.shape[0] - 1):
        a, b = int(off[s]), int(off[s + 1])
        if b - a < 2:
            continue
        idx = list(range(a + 1, b + 1))
        if cl[s] and b - a >= 3:
            idx.append(a + 1)
        lines.append("l " + " ".join(map(str, idx)))
    return _write_text(path, lines)


def write_ply_polylines(path, points, offsets, closed=None, radii=None) -> Path:
    """Write strands as an ASCII PLY file with vertex and edge elements; returns the path.

    ``points``, ``offsets``, ``closed`` as in :func:`write_obj_polylines`.  ``radii``: one
    radius [m] per strand, shape [n_strands] (or a single number); when given, each vertex gets
    a ``radius`` property equal to its strand's radius.
    """
    pts, off, cl = _polylines(points, offsets, closed)
    check_writable_folder(path)
    edges = _edges(off, cl)
    header = ["ply", "format ascii 1.0", "comment strandlab polylines",
              f"element vertex {pts.shape[0]}",
              "property double x", "property double y", "property double z"]
    if radii is not None:
        r = _strand_radii(radii, off.shape[0] - 1)
        per_vertex = np.repeat(r, np.diff(off))
        header.append("property double radius")
        rows = [f"{x:.17g} {y:.17g} {z:.17g} {rad:.17g}"
                for (x, y, z), rad in zip(pts, per_vertex)]
    else:
        rows = [f"{x:.17g} {y:.17g} {z:.17g}" for x, y, z in pts]
    header += [f"element edge {edges.shape[0]}", "property int vertex1", "property int vertex2",
               "end_header"]
    rows.extend(f"{i} {j}" for i, j in edges)
    return _write_text(path, header + rows)


def export_frames(traj: TrajectoryBase, out_dir, fmt: str = "obj", every: int = 1, *,
                  frames=None, progress=None) -> list[Path]:
    """Write frames of ``traj`` as ``out_dir/frame_NNNNN.<fmt>``, one file per frame.

    ``fmt``: ``"obj"`` or ``"ply"`` (the PLY files carry the strand radii).  ``frames``: the
    selection of :func:`~strandlab.io.selection.select_frames` (``"A:B:S"``, default all),
    of which every ``every``-th frame is written.  ``NNNNN`` is the trajectory frame index (so
    ``every=2`` writes ``frame_00000``, ``frame_00002``, ...).  ``out_dir`` is created if
    needed.  Each file is written under a temporary name and renamed when complete.
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
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for k in sel:
        p = out / f"frame_{int(k):05d}.{fmt}"
        if fmt == "obj":
            write_obj_polylines(p, traj.positions[k], traj.strand_offsets, traj.closed)
        else:
            write_ply_polylines(p, traj.positions[k], traj.strand_offsets, traj.closed,
                                traj.radii)
        written.append(p)
        if progress is not None:
            progress(int(k))
    return written
