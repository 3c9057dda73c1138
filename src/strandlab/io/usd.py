"""USD export and import of strands (the ``usd-core`` package, imported as ``pxr``).

Writing (:func:`write_usd`): one stage, its default prim ``/strandlab`` an Xform holding

* ``/strandlab/strands/<group>``: a ``BasisCurves`` prim per strand group
  (:func:`~strandlab.io.selection.strand_groups`: strands of one material and closedness),
  ``type = "linear"``, ``wrap = "nonperiodic"`` (or ``"periodic"`` for closed strands),
  ``curveVertexCounts``, per-vertex ``widths`` (interpolation ``vertex``) equal to twice the
  vertex's section radius [m] (tapered strands taper), ``points`` time-sampled at every
  exported frame (and ``extent`` with
  them); the custom attribute ``strandlab:strandIndices`` (int[]) gives the run's index of
  each curve and ``customData["strandlab"]["material"]`` the material; with ``d1=True`` a
  ``primvars:strandlab:d1`` (float3[], interpolation ``vertex``): vertex ``i`` of a strand
  carries the material direction of its edge ``i`` (the last vertex of an open strand repeats
  the last edge's);
* ``/strandlab/meshes/<name>``: a ``Mesh`` prim per mesh of the scene (triangles: a deformable
  mesh's, or the shell triangles and solid boundary faces of a rod/shell/solid mesh; points
  time-sampled); a rod/shell/solid mesh's has a face ``GeomSubset`` per shell part (its
  triangles) and per solid part (its boundary faces), named after the part (family
  ``"part"``, non-overlapping: Houdini's primitive groups; reading the file back, a material
  names the part's faces by that name, :mod:`.usd_parts`);
* ``/strandlab/tetmeshes/<name>_tets``: a ``TetMesh`` prim per rod/shell/solid mesh with solids
  (``tetVertexIndices``, ``surfaceFaceVertexIndices``: the boundary faces, outwards;
  ``orientation = rightHanded``; ``purpose = guide``, as it shares its surface with the Mesh),
  a tetrahedron ``GeomSubset`` per solid part, named as its face subset of the Mesh (reading
  the file back, the part's name names both: its tetrahedra, with the faces as their surface);
* ``/strandlab/rods/<part>``: a linear ``BasisCurves`` prim per rod part of a rod/shell/solid
  mesh, named after the part (``_1``, ``_2`` ... appended to a name the file already has;
  ``<mesh>_rods``, all the mesh's rods, for a run that does not record its parts), its edges
  chained into polylines split where rods meet (:func:`~strandlab.io.selection.rod_chains`),
  per-vertex ``widths`` = twice the rod's radius, ``strandlab:vertexIndices`` (int[]: the mesh
  vertex of each curve point);
* ``/strandlab/points/frames`` and ``/strandlab/points/bodies``: ``Points`` prims of the
  kinematic frames' and rigid bodies' points (3 each: origin and two axis tips).

Stage metadata: ``upAxis`` (``"Z"``, strandlab's convention: gravity along -z, or ``"Y"`` with
the coordinates turned so: ``(x, y, z) -> (x, z, -y)``), ``metersPerUnit = 1`` (coordinates in
metres), ``timeCodesPerSecond = framesPerSecond`` = the run's frame rate, ``startTimeCode`` and
``endTimeCode`` = the first and last exported frame index (time code ``k`` is trajectory frame
``k``).  Positions are stored as 32-bit floats, as USD's ``points`` are.

Reading (:func:`read_usd_strands`): every ``BasisCurves`` prim of a stage, at a time.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..extras import MissingExtra
from ..sim.simplicial import boundary_faces
from .atomic import atomic_path
from .selection import (
    extra_parts,
    frame_rate,
    import_optional,
    select_frames,
    strand_groups,
)

__all__ = ["write_usd", "read_usd_strands", "UP_AXES", "PART_FAMILY", "open_stage",
           "read_curves", "pxr_modules", "world_points", "world_transform"]

UP_AXES = ("Z", "Y")

#: The family name of the face subsets that label a rod/shell/solid mesh's shell parts.
PART_FAMILY = "part"
#: Coordinates of strandlab's z-up world in a y-up file: (x, y, z) -> (x, z, -y).
Z_TO_Y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def pxr_modules() -> SimpleNamespace:
    """The pxr modules used here (ImportError naming the extra when usd-core is missing)."""
    import_optional("pxr", "Reading or writing USD files", "usd-core")
    from pxr import Sdf, Usd, UsdGeom, Vt

    return SimpleNamespace(Sdf=Sdf, Usd=Usd, UsdGeom=UsdGeom, Vt=Vt)


def check_up_axis(up_axis) -> str:
    """``"Z"`` or ``"Y"`` (either case), else ValueError."""
    if not isinstance(up_axis, str) or up_axis.upper() not in UP_AXES:
        raise ValueError(f"up_axis must be 'Z' or 'Y', got {up_axis!r}")
    return up_axis.upper()


def to_file_axes(points: np.ndarray, up_axis: str) -> np.ndarray:
    """``points`` [n, 3] of strandlab's z-up world in the file's axes."""
    return points if up_axis == "Z" else points @ Z_TO_Y.T


def _vertex_d1(d1: np.ndarray, group, traj) -> np.ndarray:
    """Per-vertex d1 of a group: vertex i of a strand takes edge min(i, e - 1)."""
    so = np.asarray(traj.strand_offsets, dtype=np.int64)
    eo = np.asarray(traj.edge_offsets, dtype=np.int64)
    parts = []
    for s in group.strands:
        n, e0, ne = int(so[s + 1] - so[s]), int(eo[s]), int(eo[s + 1] - eo[s])
        parts.append(e0 + np.minimum(np.arange(n), ne - 1))
    return d1[np.concatenate(parts)]


def _extent(points: np.ndarray, pad: float):
    lo, hi = points.min(axis=0) - pad, points.max(axis=0) + pad
    return np.stack([lo, hi]).astype(np.float32)


class _UsdWriter:
    """The prims of one stage and how to set one frame on them."""

    def __init__(self, stage, traj, up_axis: str, with_d1: bool):
        px = pxr_modules()
        self.Usd, self.UsdGeom, self.Sdf, self.Vt = px.Usd, px.UsdGeom, px.Sdf, px.Vt
        self.stage, self.traj, self.up, self.with_d1 = stage, traj, up_axis, with_d1
        self.curves, self.meshes = [], []
        self.width = 2.0 * float(np.max(traj.radii)) if traj.n_strands else 0.01
        G = self.UsdGeom
        root = G.Xform.Define(stage, "/strandlab")
        stage.SetDefaultPrim(root.GetPrim())
        groups = strand_groups(traj)
        parts = extra_parts(traj, taken=[g.name for g in groups])
        scopes = ["strands", "meshes", "points"]
        scopes += ["tetmeshes"] if any(len(p.tets) for p in parts) else []
        scopes += ["rods"] if any(len(p.segments) for p in parts) else []
        for scope in scopes:
            G.Scope.Define(stage, f"/strandlab/{scope}")
        for g in groups:
            self.curves.append((g, self._define_curves(g)))
        for part in parts:
            self.meshes += [(part, prim, idx) for prim, idx in self._define_extra(part)]

    def _define_curves(self, g):
        G, Vt = self.UsdGeom, self.Vt
        c = G.BasisCurves.Define(self.stage, f"/strandlab/strands/{g.name}")
        c.CreateTypeAttr(G.Tokens.linear)
        c.CreateWrapAttr(G.Tokens.periodic if g.closed else G.Tokens.nonperiodic)
        counts = g.counts(self.traj.strand_offsets)
        c.CreateCurveVertexCountsAttr(Vt.IntArray.FromNumpy(counts))
        index = g.vertex_index(self.traj.strand_offsets)
        widths = 2.0 * np.asarray(self.traj.vertex_radii, dtype=np.float64)[index]
        c.CreateWidthsAttr(Vt.FloatArray.FromNumpy(widths.astype(np.float32)))
        c.SetWidthsInterpolation(G.Tokens.vertex)
        prim = c.GetPrim()
        prim.CreateAttribute("strandlab:strandIndices", self.Sdf.ValueTypeNames.IntArray,
                             custom=True).Set(Vt.IntArray.FromNumpy(g.strands.astype(np.int32)))
        if g.material:
            prim.SetCustomDataByKey("strandlab:material",
                                    {k: v for k, v in g.material.items() if v is not None})
        d1 = None
        if self.with_d1:
            d1 = G.PrimvarsAPI(c).CreatePrimvar("strandlab:d1", self.Sdf.ValueTypeNames.Float3Array,
                                                G.Tokens.vertex)
        pad = 0.5 * float(widths.max()) if widths.size else 0.0
        return c, index, d1, pad

    def _define_extra(self, part) -> list:
        """The prims of one extra part, each with the indices of its points in the part
        (None: all of them)."""
        G, Vt = self.UsdGeom, self.Vt
        if part.kind != "mesh":
            p = G.Points.Define(self.stage, f"/strandlab/points/{part.name}")
            p.CreateWidthsAttr(Vt.FloatArray([self.width]))
            p.SetWidthsInterpolation(G.Tokens.constant)
            return [(p, None)]
        out = []
        if len(part.triangles) or not (len(part.segments) or len(part.tets)):
            m = G.Mesh.Define(self.stage, f"/strandlab/meshes/{part.name}")
            m.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(
                np.full(len(part.triangles), 3, dtype=np.int32)))
            m.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(
                part.triangles.reshape(-1).astype(np.int32)))
            m.CreateSubdivisionSchemeAttr(G.Tokens.none)
            for name, rows in part.subsets.items():      # a face subset per shell part
                G.Subset.CreateGeomSubset(m, name, G.Tokens.face,
                                          Vt.IntArray.FromNumpy(rows.astype(np.int32)),
                                          PART_FAMILY, G.Tokens.nonOverlapping)
            out.append((m, None))
        if len(part.tets):
            out.append((self._define_tets(part), None))
        out += [self._define_rods(rc) for rc in part.rod_curves()]
        return out

    def _define_tets(self, part):
        G, Vt = self.UsdGeom, self.Vt
        if not hasattr(G, "TetMesh"):
            raise MissingExtra("writing tetrahedra needs a usd-core with UsdGeom.TetMesh "
                               "(24.3 or later): pip install -U usd-core")
        t = G.TetMesh.Define(self.stage, f"/strandlab/tetmeshes/{part.name}_tets")
        t.CreateTetVertexIndicesAttr(Vt.Vec4iArray.FromNumpy(part.tets.astype(np.int32)))
        t.CreateSurfaceFaceVertexIndicesAttr(Vt.Vec3iArray.FromNumpy(
            boundary_faces(part.tets).astype(np.int32)))
        t.CreateOrientationAttr(G.Tokens.rightHanded)
        t.CreatePurposeAttr(G.Tokens.guide)
        for name, rows in part.tet_subsets.items():     # a tetrahedron subset per solid part
            G.Subset.CreateGeomSubset(t, name, G.Tokens.tetrahedron,
                                      Vt.IntArray.FromNumpy(rows.astype(np.int32)),
                                      PART_FAMILY, G.Tokens.nonOverlapping)
        return t

    def _define_rods(self, rc):
        """The ``BasisCurves`` prim of the rod curves ``rc`` (:class:`~.selection.RodCurves`)."""
        G, Vt = self.UsdGeom, self.Vt
        c = G.BasisCurves.Define(self.stage, f"/strandlab/rods/{rc.name}")
        c.CreateTypeAttr(G.Tokens.linear)
        c.CreateWrapAttr(G.Tokens.nonperiodic)
        c.CreateCurveVertexCountsAttr(Vt.IntArray.FromNumpy(rc.counts))
        c.CreateWidthsAttr(Vt.FloatArray.FromNumpy(rc.widths.astype(np.float32)))
        c.SetWidthsInterpolation(G.Tokens.vertex)
        c.GetPrim().CreateAttribute("strandlab:vertexIndices", self.Sdf.ValueTypeNames.IntArray,
                                    custom=True).Set(Vt.IntArray.FromNumpy(
                                        rc.index.astype(np.int32)))
        return c, rc.index

    def frame(self, k: int, code: float) -> None:
        """Time samples of trajectory frame ``k`` at time code ``code``."""
        Vt, tc = self.Vt, self.Usd.TimeCode(code)
        pos = to_file_axes(np.asarray(self.traj.positions[k]), self.up)
        for g, (c, idx, d1, pad) in self.curves:
            p = pos[idx]
            c.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(p.astype(np.float32)), tc)
            c.GetExtentAttr().Set(Vt.Vec3fArray.FromNumpy(_extent(p, pad)), tc)
            if d1 is not None:
                dv = _vertex_d1(np.asarray(self.traj.d1[k]), g, self.traj)
                d1.Set(Vt.Vec3fArray.FromNumpy(to_file_axes(dv, self.up).astype(np.float32)), tc)
        if self.meshes:
            extra = to_file_axes(np.asarray(self.traj.extra_points[k]), self.up)
            for part, prim, idx in self.meshes:
                p = extra[part.start:part.stop]
                p = p if idx is None else p[idx]
                pad = 0.0 if idx is None else float(part.segment_radii.max())
                prim.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(p.astype(np.float32)), tc)
                prim.GetExtentAttr().Set(Vt.Vec3fArray.FromNumpy(_extent(p, pad)), tc)


def _stage_metadata(stage, UsdGeom, traj, frames: np.ndarray, up_axis: str) -> None:
    fps = frame_rate(traj)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z if up_axis == "Z" else UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetTimeCodesPerSecond(fps)
    stage.SetFramesPerSecond(fps)
    stage.SetStartTimeCode(float(frames[0]))
    stage.SetEndTimeCode(float(frames[-1]))
    meta = traj.metadata or {}
    info = {"format": "strandlab.usd", "status": str(traj.status),
            "frames": f"{int(frames[0])}:{int(frames[-1]) + 1}:"
                      f"{int(frames[1] - frames[0]) if len(frames) > 1 else 1}"}
    for key in ("name", "dt", "steps_per_frame"):
        if isinstance(meta.get(key), (str, int, float)):
            info[key] = meta[key]
    if isinstance(meta.get("solver"), dict):
        info["solver"] = str(meta["solver"].get("type"))
    stage.SetMetadata("customLayerData", {"strandlab": info})


def write_usd(path, traj, *, frames=None, up_axis: str = "Z", d1: bool = False,
              progress=None) -> Path:
    """Write the frames ``frames`` (see :func:`~strandlab.io.selection.select_frames`) of the
    trajectory ``traj`` (in memory or read lazily, one frame at a time) to the USD file
    ``path`` (``.usd`` / ``.usdc``: binary crate, ``.usda``: text); returns the path.

    ``up_axis``: ``"Z"`` (strandlab's coordinates) or ``"Y"`` (turned to y-up); ``d1``: also
    write the material directions as a primvar; ``progress(k)``: called after each frame ``k``.
    The file is written under a temporary name and renamed when complete: a failure or an
    interruption leaves no partial file under ``path``.
    """
    up = check_up_axis(up_axis)
    sel = select_frames(frames, traj.n_frames)
    p = Path(path)
    if p.suffix.lower() not in (".usd", ".usda", ".usdc"):
        raise ValueError(f"{p}: a USD file name ends in .usd, .usda or .usdc")
    px = pxr_modules()
    with atomic_path(p) as tmp:
        tmp.unlink()
        stage = px.Usd.Stage.CreateNew(str(tmp))
        _stage_metadata(stage, px.UsdGeom, traj, sel, up)
        writer = _UsdWriter(stage, traj, up, bool(d1))
        for k in sel:
            writer.frame(int(k), float(k))
            if progress is not None:
                progress(int(k))
        stage.GetRootLayer().Save()
        del writer, stage
    return p


# ---------------------------------------------------------------------------------- reading
def _expand_widths(c, UsdGeom, tc, counts: np.ndarray, n: int):
    """Per-vertex widths of curves ``c`` (None when not authored)."""
    w = c.GetWidthsAttr().Get(tc)
    if w is None or len(w) == 0:
        return None
    w = np.asarray(w, dtype=np.float64)
    interp = c.GetWidthsInterpolation()
    if interp == UsdGeom.Tokens.constant or len(w) == 1:
        return np.full(n, w[0])
    if interp == UsdGeom.Tokens.uniform and len(w) == len(counts):
        return np.repeat(w, counts)
    if len(w) == n:
        return w
    raise ValueError(f"{c.GetPath()}: {len(w)} widths with interpolation {interp!r} for "
                     f"{len(counts)} curves of {n} points")


def world_transform(g, tc) -> np.ndarray:
    """The transform [4, 4] of the geometry prim ``g`` to the stage's world coordinates at
    time code ``tc`` (acting on row vectors, as USD's matrices do)."""
    return np.array(g.ComputeLocalToWorldTransform(tc), dtype=np.float64)


def world_points(g, tc, pts: np.ndarray) -> np.ndarray:
    """The points ``pts`` [n, 3] of the geometry prim ``g`` placed by its transforms (the
    stage's world coordinates) at time code ``tc``."""
    xf = world_transform(g, tc)
    return pts @ xf[:3, :3] + xf[3, :3]      # USD matrices act on row vectors


def open_stage(p: Path):
    """The USD stage of the file ``p``: FileNotFoundError when it is missing, ValueError
    naming it when it does not open."""
    Usd = pxr_modules().Usd
    if not p.is_file():
        raise FileNotFoundError(f"USD file {p} does not exist")
    try:
        stage = Usd.Stage.Open(str(p))
    except Exception as exc:        # pxr raises Tf.ErrorException
        raise ValueError(f"{p} is not a readable USD file ({str(exc).strip()})") from None
    if stage is None:
        raise ValueError(f"{p} is not a readable USD file")
    return stage


def read_curves(c, UsdGeom, tc, label: str):
    """(points [n, 3] world, counts, closed flag, widths [n] or None) of one prim."""
    counts = c.GetCurveVertexCountsAttr().Get(tc)
    pts = c.GetPointsAttr().Get(tc)
    if counts is None or pts is None:
        raise ValueError(f"{label}: {c.GetPath()} has no points or curveVertexCounts")
    counts = np.asarray(counts, dtype=np.int64)
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
    if np.any(counts < 1) or counts.sum() != len(pts):
        raise ValueError(f"{label}: {c.GetPath()}: curveVertexCounts sum to "
                         f"{int(counts.sum())} but there are {len(pts)} points")
    pts = world_points(c, tc, pts)
    closed = c.GetWrapAttr().Get(tc) == UsdGeom.Tokens.periodic
    widths = _expand_widths(c, UsdGeom, tc, counts, len(pts))
    order = c.GetPrim().GetAttribute("strandlab:strandIndices").Get(tc)
    order = None if order is None else np.asarray(order, dtype=np.int64)
    return pts, counts, closed, widths, order


def read_usd_strands(path, *, time: float | None = None, scale: float | None = None):
    """The strands of every ``BasisCurves`` prim of the USD file ``path`` as
    :class:`~strandlab.io.strands.Strands` in strandlab's z-up metres.

    ``time`` [s]: when to read animated points (time code ``time * timeCodesPerSecond``;
    default: the earliest sample); ``scale``: metres per file unit (default: the stage's
    ``metersPerUnit``).  A y-up stage is turned to z-up.  Linear curves give their points;
    cubic curves their control points.  Radii are half the widths.  Curves written by
    :func:`write_usd` come back in the run's strand order.  ValueError naming the file for an
    unreadable stage or one without curves.
    """
    from .strands import Strands

    px = pxr_modules()
    Usd, UsdGeom = px.Usd, px.UsdGeom
    p = Path(path)
    stage = open_stage(p)
    tc = Usd.TimeCode.EarliestTime() if time is None else \
        Usd.TimeCode(float(time) * stage.GetTimeCodesPerSecond())
    unit = UsdGeom.GetStageMetersPerUnit(stage) if scale is None else float(scale)
    parts = [read_curves(UsdGeom.BasisCurves(prim), UsdGeom, tc, str(p))
             for prim in stage.Traverse() if prim.IsA(UsdGeom.BasisCurves)]
    if not parts:
        raise ValueError(f"{p} has no BasisCurves prim (no strands to read)")
    strands = Strands.from_parts(parts, label=str(p))
    if UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y:
        strands = strands.transformed(Z_TO_Y.T)
    return strands.scaled(unit)
