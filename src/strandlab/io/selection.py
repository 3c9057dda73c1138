"""What the exporters share: frame selection, frame rate, strand groups and extra parts.

* :func:`select_frames` turns ``"A:B:S"`` (Python slice syntax over the trajectory's frame
  indices, ``B`` exclusive) into the frame indices to write, refusing a selection outside the
  run instead of clipping it;
* :func:`frame_rate` is the run's output frame rate [1/s];
* :func:`strand_groups` splits the strands into groups written as one prim / object each:
  strands of the same material (``metadata["scene"]["strands"][i]["material"]``, as recorded
  by the runner) and the same closedness (a curve primitive is either periodic or not);
* :func:`extra_parts` splits the extra points (``Scene.extra_layout``: 3 points per kinematic
  frame, the vertices of each mesh, 3 points per rigid body, the vertices of each simplicial
  rod/shell/solid mesh) into named parts, using the run's recorded scene when it agrees with
  the trajectory and one part of all points otherwise; each mesh part carries its triangles,
  rod edges (with their radii) and tetrahedra;
* :func:`rod_chains` turns rod edges into polylines, split where rods meet.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..extras import require

__all__ = ["select_frames", "frame_rate", "strand_groups", "extra_parts", "StrandGroup",
           "ExtraPart", "RodChain", "RodCurves", "rod_chains", "prim_name", "import_optional",
           "INTERCHANGE_EXTRA"]

#: The optional dependency group of the USD and Alembic formats.
INTERCHANGE_EXTRA = "interchange"

_SPEC = re.compile(r"^\s*(-?\d*)\s*(?::\s*(-?\d*)\s*(?::\s*(-?\d*)\s*)?)?$")


def _bound(text: str, spec: str, what: str) -> int | None:
    if text == "":
        return None
    v = int(text)
    if v < 0:
        raise ValueError(f"frames {spec!r}: {what} {v} is negative (frames are numbered from "
                         "0)")
    return v


def select_frames(spec, n_frames: int) -> np.ndarray:
    """Frame indices selected by ``spec`` from a run of ``n_frames`` frames, int64 [K].

    ``spec``: None (every frame), an integer ``k`` (that frame alone), or a string ``"k"`` or
    ``"A:B:S"`` with each part optional (``A`` first frame, default 0; ``B`` stop, exclusive,
    default ``n_frames``; ``S`` step >= 1, default 1).  ValueError naming the selection for a
    malformed one, a negative index or step, a frame outside ``0 .. n_frames - 1``, a stop past
    ``n_frames`` or an empty selection.
    """
    n = int(n_frames)
    if n < 1:
        raise ValueError("the run has no frames to export")
    if spec is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        spec = str(int(spec))
    if not isinstance(spec, str):
        raise ValueError(f"frames must be 'A:B:S' or a frame index, got {spec!r}")
    m = _SPEC.match(spec)
    if m is None:
        raise ValueError(f"frames {spec!r} is not 'A:B:S' (integers, each optional) or a frame "
                         "index")
    a, b, s = (_bound(m.group(i) or "", spec, w)
               for i, w in ((1, "start"), (2, "stop"), (3, "step")))
    last = f"the run has {n} frames (0 .. {n - 1})"
    if ":" not in spec:
        if a is None:
            raise ValueError(f"frames {spec!r} is empty")
        if a >= n:
            raise ValueError(f"frame {a} is out of range: {last}")
        return np.array([a], dtype=np.int64)
    if s == 0:
        raise ValueError(f"frames {spec!r}: the step must be >= 1")
    a, b, s = (0 if a is None else a), (n if b is None else b), (1 if s is None else s)
    if a >= n:
        raise ValueError(f"frames {spec!r}: start {a} is out of range: {last}")
    if b > n:
        raise ValueError(f"frames {spec!r}: stop {b} is past the end: {last} (stop is "
                         f"exclusive, at most {n})")
    if b <= a:
        raise ValueError(f"frames {spec!r} selects no frame (stop {b} <= start {a})")
    return np.arange(a, b, s, dtype=np.int64)


def frame_rate(traj) -> float:
    """Output frames per second of a run [1/s]: ``1 / (dt * steps_per_frame)`` from its
    metadata, else from the spacing of its frame times, else 24."""
    meta = getattr(traj, "metadata", {}) or {}
    dt, spf = meta.get("dt"), meta.get("steps_per_frame", 1)
    if isinstance(dt, (int, float)) and isinstance(spf, int) and dt > 0 and spf >= 1:
        return 1.0 / (float(dt) * spf)
    times = np.asarray(traj.times, dtype=np.float64)
    if times.shape[0] >= 2:
        step = float(np.median(np.diff(times)))
        if np.isfinite(step) and step > 0:
            return 1.0 / step
    return 24.0


def import_optional(module: str, what: str, package: str):
    """Import ``module`` (an optional dependency of the interchange formats), or
    :class:`~strandlab.extras.MissingExtra` naming the package and the extra that installs
    it."""
    return require(module, what, package, INTERCHANGE_EXTRA)


def prim_name(text: str) -> str:
    """``text`` as a valid USD prim / Alembic object name (letters, digits, '_')."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", str(text)) or "_"
    return "_" + name if name[0].isdigit() else name


@dataclass(frozen=True)
class StrandGroup:
    """Strands written together: ``name``, strand indices int64 [k], ``closed``, and the
    material (a dict of :meth:`Material.to_dict`, or None when the run does not say)."""

    name: str
    strands: np.ndarray
    closed: bool
    material: dict | None

    def vertex_index(self, strand_offsets) -> np.ndarray:
        """Indices of the group's vertices in the concatenated layout, int64 [n]."""
        so = np.asarray(strand_offsets, dtype=np.int64)
        parts = [np.arange(so[s], so[s + 1]) for s in self.strands]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def counts(self, strand_offsets) -> np.ndarray:
        """Vertices per strand of the group, int32 [k]."""
        so = np.asarray(strand_offsets, dtype=np.int64)
        return (so[self.strands + 1] - so[self.strands]).astype(np.int32)


def _strand_materials(traj) -> tuple[list, list] | None:
    """(material index per strand, distinct material dicts) from the run's metadata."""
    meta = getattr(traj, "metadata", {}) or {}
    strands = (meta.get("scene") or {}).get("strands")
    if not isinstance(strands, list) or len(strands) != traj.n_strands:
        return None
    known = list(meta.get("materials") or [])
    index = []
    for s in strands:
        mat = s.get("material") if isinstance(s, dict) else None
        if mat not in known:
            known.append(mat)
        index.append(known.index(mat))
    return index, known


def strand_groups(traj) -> list[StrandGroup]:
    """The strand groups of ``traj`` (see the module docstring), in order of first strand.

    Names: ``material_<k>`` (``k``: the material's index in the run's ``materials``) or
    ``strands`` when the run records no materials, with ``_closed`` appended for closed
    strands.  Strands of fewer than 2 vertices are left out (no curve to draw).
    """
    closed = np.asarray(traj.closed, dtype=bool)
    counts = np.diff(np.asarray(traj.strand_offsets, dtype=np.int64))
    mats = _strand_materials(traj)
    keys: dict[tuple, list] = {}
    for s in range(traj.n_strands):
        if counts[s] < 2:
            continue
        k = -1 if mats is None else mats[0][s]
        keys.setdefault((k, bool(closed[s])), []).append(s)
    out = []
    for (k, cl), members in keys.items():
        base = "strands" if k < 0 else f"material_{k}"
        out.append(StrandGroup(base + ("_closed" if cl else ""),
                               np.asarray(members, dtype=np.int64), cl,
                               None if k < 0 else mats[1][k]))
    return out


@dataclass(frozen=True)
class ExtraPart:
    """A part of the extra points, its points ``start .. stop - 1``: ``kind`` ``"mesh"`` (a
    deformable mesh or a simplicial rod/shell/solid mesh) or ``"points"`` (the 3 points of
    each kinematic frame or rigid body); ``name``.  A mesh has ``triangles`` int [M, 3] (shell
    triangles and solid boundary faces), ``segments`` int [G, 2] (rod edges) with
    ``segment_radii`` [G] (m) and ``tets`` int [K, 4], all indexing the part's points; a
    simplicial mesh's ``subsets``: per shell or solid part (by :func:`prim_name` of its name)
    the rows of its triangles or boundary faces among ``triangles``, ``tet_subsets``: per
    solid part (by the same name) the rows of its tetrahedra among ``tets``, and ``rods``: per
    rod part (by a prim name unique in the file) the rows of its edges among ``segments`` (all
    from the run's recorded scene; empty without it)."""

    kind: str
    name: str
    start: int
    stop: int
    triangles: np.ndarray
    segments: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    segment_radii: np.ndarray = field(default_factory=lambda: np.zeros(0))
    tets: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
    subsets: dict = field(default_factory=dict)
    rods: dict = field(default_factory=dict)
    tet_subsets: dict = field(default_factory=dict)

    @property
    def n_points(self) -> int:
        return self.stop - self.start

    def rod_curves(self) -> list[RodCurves]:
        """The curves the exporters write for the rod edges: one :class:`RodCurves` per rod
        part (:attr:`rods`), or ``<name>_rods`` for them all when the run does not record
        its parts."""
        if not len(self.segments):
            return []
        groups = self.rods or {f"{self.name}_rods": np.arange(len(self.segments))}
        out = []
        for name, rows in groups.items():
            chains = rod_chains(self.segments[rows], self.segment_radii[rows])
            out.append(RodCurves(
                name, np.concatenate([c.points for c in chains]),
                np.array([len(c.points) for c in chains], dtype=np.int32),
                np.concatenate([np.full(len(c.points), 2.0 * c.radius) for c in chains])))
        return out


@dataclass(frozen=True)
class RodCurves:
    """One curves prim / object of rod edges: its ``name``, the part's point of each curve
    point (``index`` int [n]), the points per curve (``counts`` int32 [c]) and each point's
    ``widths`` [n] (twice its rod's radius, m)."""

    name: str
    index: np.ndarray
    counts: np.ndarray
    widths: np.ndarray


def _rows_by_part(runs, total: int, n_parts: int) -> dict | None:
    """``{part: rows}`` (int [n] each) from ``runs`` (``[part, count]`` pairs in order, as
    :meth:`~strandlab.sim.simplicial.SimplicialSpec.describe` records them) over ``total``
    rows; None when they are missing or do not cover the rows."""
    try:
        pairs = [(int(k), int(n)) for k, n in runs]
    except (TypeError, ValueError):
        return None
    if sum(n for _, n in pairs) != total or any(not 0 <= k < n_parts or n <= 0
                                                for k, n in pairs):
        return None
    rows: dict = {}
    a = 0
    for k, n in pairs:
        rows.setdefault(k, []).append(np.arange(a, a + n))
        a += n
    return {k: np.concatenate(r) for k, r in rows.items()}


def _part_cells(m: dict, n_triangles: int, n_segments: int, n_tets: int,
                used: set) -> tuple[dict, dict, dict]:
    """The parts of the recorded simplicial mesh ``m`` among its exported cells: the face
    subsets (each shell part's triangles and each solid part's boundary faces, as rows of the
    mesh's ``n_triangles`` triangles: the shell triangles, then the boundary faces) by
    :func:`prim_name` of the part's name, unique within the mesh; the rod parts' edges (rows
    of its ``n_segments`` rod edges) by prim name unique in ``used`` (the file's other names,
    to which they are added); and the solid parts' tetrahedra (rows of its ``n_tets``) by the
    name of the part's face subset.  Each is empty when the record does not say."""
    try:
        names = [str(p["name"]) for p in m.get("parts") or []]
        n_shell = int(m.get("triangles"))
    except (TypeError, KeyError, ValueError):
        return {}, {}, {}
    faces: dict = {}
    shells = _rows_by_part(m.get("triangle_parts") or [], n_shell, len(names))
    solids = _rows_by_part(m.get("surface_parts") or [], n_triangles - n_shell, len(names))
    for rows, offset in ((shells, 0), (solids, n_shell)):
        for k, r in sorted((rows or {}).items()):
            faces[k] = r + offset
    tets = _rows_by_part(m.get("tet_parts") or [], n_tets, len(names)) or {}
    inside: set = set()
    within = {k: _unique_prim_name(names[k], inside) for k in sorted(set(faces) | set(tets))}
    rods = _rows_by_part(m.get("edge_parts") or [], n_segments, len(names)) or {}
    return ({within[k]: faces[k] for k in sorted(faces)},
            {_unique_prim_name(names[k], used): rods[k] for k in sorted(rods)},
            {within[k]: tets[k] for k in sorted(tets)})


def _unique_prim_name(text: str, used: set) -> str:
    """:func:`prim_name` of ``text``, with ``_1``, ``_2`` ... appended until it is not in
    ``used``, to which it is added."""
    base = prim_name(text)
    unique, k = base, 1
    while unique in used:
        unique, k = f"{base}_{k}", k + 1
    used.add(unique)
    return unique


def _recorded_parts(meta: dict, n_extra: int) -> list[tuple] | None:
    scene = meta.get("scene") if isinstance(meta, dict) else None
    if not isinstance(scene, dict):
        return None
    try:
        nf = len(scene.get("frames") or [])
        meshes = [(str(m.get("name") or f"mesh_{k}"), int(m["n_vertices"]))
                  for k, m in enumerate(scene.get("meshes") or [])]
        nb = len(scene.get("bodies") or [])
        simplicial = [(str(m.get("name") or f"simplicial_{k}"), int(m["vertices"]), m)
                      for k, m in enumerate(scene.get("simplicial") or [])]
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    if 3 * nf + sum(n for _, n in meshes) + sum(n for _, n, _ in simplicial) + 3 * nb \
            != n_extra:
        return None
    parts, k = [], 0
    if nf:
        parts.append(("points", "frames", 0, 3 * nf, {}))
        k = 3 * nf
    for name, n in meshes:
        parts.append(("mesh", name, k, k + n, {}))
        k += n
    if nb:
        parts.append(("points", "bodies", k, k + 3 * nb, {}))
        k += 3 * nb
    for name, n, record in simplicial:
        parts.append(("mesh", name, k, k + n, record))
        k += n
    return parts


def _local(cells: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The cells lying in points ``a .. b - 1``, renumbered from ``a``, and their mask."""
    inside = np.all((cells >= a) & (cells < b), axis=1)
    return cells[inside] - a, inside


def extra_parts(traj, *, taken=()) -> list[ExtraPart]:
    """The extra points of ``traj`` split into named parts (see the module docstring).  Without
    a recorded scene that matches, the extra points are one part ``extra_mesh`` (when there are
    triangles, rod edges or tetrahedra) or ``extra_points``.  Names are unique among
    themselves and apart from ``taken`` (the file's other names: its strand groups')."""
    n = traj.n_extra
    if n == 0:
        return []
    tri = np.asarray(traj.extra_triangles, dtype=np.int64).reshape(-1, 3)
    seg = np.asarray(getattr(traj, "extra_segments", np.zeros((0, 2))),
                     dtype=np.int64).reshape(-1, 2)
    seg_r = np.asarray(getattr(traj, "extra_segment_radii", np.zeros(0)), dtype=np.float64)
    tets = np.asarray(getattr(traj, "extra_tetrahedra", np.zeros((0, 4))),
                      dtype=np.int64).reshape(-1, 4)
    parts = _recorded_parts(getattr(traj, "metadata", {}), n)
    if parts is None:
        cells = len(tri) + len(seg) + len(tets)
        parts = [("mesh" if cells else "points", "extra_mesh" if cells else "extra_points",
                  0, n, {})]
    out, used = [], set(taken)
    for kind, name, a, b, record in parts:
        unique = _unique_prim_name(name, used)
        if kind != "mesh":
            out.append(ExtraPart(kind, unique, a, b, np.zeros((0, 3), np.int64)))
            continue
        local_seg, inside = _local(seg, a, b)
        local_tri = _local(tri, a, b)[0]
        local_tets = _local(tets, a, b)[0]
        subsets, rods, tet_subsets = _part_cells(record, len(local_tri), len(local_seg),
                                                 len(local_tets), used)
        out.append(ExtraPart(kind, unique, a, b, local_tri, local_seg, seg_r[inside],
                             local_tets, subsets, rods, tet_subsets))
    return out


@dataclass(frozen=True)
class RodChain:
    """A polyline of rod edges: ``points`` int [n] (indices of the part's points; a closed
    loop repeats its first point at the end) and ``radius`` [m]."""

    points: np.ndarray
    radius: float


def rod_chains(segments, radii) -> list[RodChain]:
    """Rod edges ``segments`` int [G, 2] with section ``radii`` [G] (m) chained into
    polylines: a chain runs through the vertices joining exactly two edges of the same radius
    and ends where rods meet (three or more edges), end (one edge) or change radius.  A closed
    loop of such vertices is one chain that ends on its first vertex.  Every edge is in exactly
    one chain."""
    seg = np.asarray(segments, dtype=np.int64).reshape(-1, 2)
    rad = np.asarray(radii, dtype=np.float64).reshape(-1)
    incident: dict[int, list[int]] = {}
    for e, (a, b) in enumerate(seg.tolist()):
        incident.setdefault(a, []).append(e)
        incident.setdefault(b, []).append(e)

    def passes(v: int) -> bool:
        es = incident[v]
        return len(es) == 2 and rad[es[0]] == rad[es[1]]

    done = np.zeros(len(seg), dtype=bool)

    def walk(v: int, e: int) -> RodChain:
        path, r = [v], float(rad[e])
        while True:
            done[e] = True
            a, b = (int(x) for x in seg[e])
            v = b if a == v else a
            path.append(v)
            if v == path[0] or not passes(v):
                return RodChain(np.asarray(path, dtype=np.int64), r)
            e = next(f for f in incident[v] if not done[f])

    out = []
    for e in range(len(seg)):               # open chains, from an end
        a, b = (int(x) for x in seg[e])
        if not done[e] and not (passes(a) and passes(b)):
            out.append(walk(a if not passes(a) else b, e))
    for e in range(len(seg)):               # what is left are closed loops
        if not done[e]:
            out.append(walk(int(seg[e, 0]), e))
    return out
