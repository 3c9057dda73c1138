"""Alembic export and import of strands (the ``alembic3d`` package: the PyAlembic bindings,
with the ``imath`` module they need).

Writing (:func:`write_abc`): an Ogawa archive whose top object holds

* one ``Curves`` object per strand group (:func:`~strandlab.io.selection.strand_groups`:
  strands of one material and closedness), type ``linear``, wrap ``non-periodic`` (or
  ``periodic`` for closed strands), ``nVertices`` per curve, positions sampled at every
  exported frame and per-vertex ``width`` (vertex scope) equal to twice the vertex's section
  radius [m]; the user property ``strandIndices`` (int32 array) gives the run's index of each
  curve;
* one ``PolyMesh`` object per mesh of the scene (triangles: a deformable mesh's, or the shell
  triangles and solid boundary faces of a rod/shell/solid mesh; positions sampled), each
  triangle written clockwise, Alembic's winding of a front face (strandlab's are
  counter-clockwise seen from the front; Blender, Maya and Houdini turn them back on reading);
  a rod/shell/solid mesh's has a face set per shell part (its triangles) and per solid part
  (its boundary faces), named after the part;
* ``<part>``: a ``Curves`` object per rod part of a rod/shell/solid mesh, named as the USD
  export's rod prims (:mod:`.usd`), its edges chained into polylines split where rods meet,
  ``width`` = twice the rod's radius, the user property ``vertexIndices`` (the mesh vertex of
  each curve point).  Alembic has no tetrahedra: the solids are their boundary faces in the
  PolyMesh;
* ``frames`` / ``bodies``: ``Curves`` objects of two segments per kinematic frame or rigid
  body, from its origin to the tips of its first two axes, with the user property
  ``strandlabAxes`` (the frame or body of each segment), by which reading the file as a
  labelled mesh skips them (:mod:`.abc_parts`).

Samples use one uniform time sampling: frame ``k`` at ``k / fps`` seconds (``fps`` the run's
frame rate).  Alembic has no up-axis field and Maya, Houdini and Blender read Alembic as
y-up: by default (``up_axis="Y"``) the coordinates are turned from strandlab's z-up to y-up,
``(x, y, z) -> (x, z, -y)``, so that scenes stand upright there; ``up_axis="Z"`` writes them
unchanged.  Units: metres (one file unit = 1 m).  Positions are 32-bit floats.

Reading (:func:`read_abc_strands`): every ``Curves`` object but the frames' and bodies' axes,
with the transforms of the ``Xform`` objects above it, at a time.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .atomic import atomic_path
from .export import status_note
from .selection import (
    extra_parts,
    frame_rate,
    import_optional,
    select_frames,
    strand_groups,
)
from .usd import Z_TO_Y, check_up_axis, to_file_axes

__all__ = ["write_abc", "read_abc_strands", "abc_modules", "open_archive", "walk", "read_curves",
           "is_axes", "AXES_PROPERTY"]

#: The user property of the ``Curves`` objects that draw kinematic frames' and bodies' axes.
AXES_PROPERTY = "strandlabAxes"


def abc_modules() -> SimpleNamespace:
    """The alembic3d and imath modules (ImportError naming the extra when missing)."""
    mod = import_optional("alembic3d", "Reading or writing Alembic files", "alembic3d")
    imath = import_optional("imath", "Reading or writing Alembic files", "alembic3d")
    return SimpleNamespace(Abc=mod.Abc, G=mod.AbcGeom, core=mod.AbcCoreAbstract, imath=imath)


def _v3(m, a: np.ndarray):
    return m.imath.V3fArrayFromBuffer(np.ascontiguousarray(a, dtype=np.float32))


def _ints(m, a) -> object:
    return m.imath.IntArrayFromBuffer(np.ascontiguousarray(a, dtype=np.int32))


def _floats(m, a) -> object:
    return m.imath.FloatArrayFromBuffer(np.ascontiguousarray(a, dtype=np.float32))


class _AbcCurves:
    """One Curves object: its schema and the constant parts of its samples."""

    def __init__(self, m, parent, name: str, ts: int, counts, widths, closed: bool, index):
        self.m, self.index = m, index
        self.obj = m.G.OCurves(parent, name, ts)
        self.schema = self.obj.getSchema()
        self.counts, self.widths = counts, widths
        self.wrap = m.G.CurvePeriodicity.kPeriodic if closed else \
            m.G.CurvePeriodicity.kNonPeriodic

    def set(self, points: np.ndarray) -> None:
        # a sample refers to the imath arrays without owning them: keep them alive until set
        m = self.m
        pos, counts, widths = _v3(m, points[self.index]), _ints(m, self.counts), \
            _floats(m, self.widths)
        width = m.G.OFloatGeomParamSample(widths, m.G.GeometryScope.kVertexScope)
        # the basis must be given: the bindings default it to Bezier, which Blender honours
        # for linear curves too (it then keeps every third point)
        self.schema.set(m.G.OCurvesSchemaSample(pos, counts, m.G.CurveType.kLinear, self.wrap,
                                                width, iBasis=m.G.BasisType.kNoBasis))


class _AbcWriter:
    """The objects of one archive and how to write one frame into them."""

    def __init__(self, m, archive, traj, ts: int, up: str):
        self.m, self.traj, self.up = m, traj, up
        top = archive.getTop()
        self.curves, self.meshes, self.extra_curves = [], [], []
        radii = np.asarray(traj.radii, dtype=np.float64)
        vertex_radii = np.asarray(traj.vertex_radii, dtype=np.float64)
        self.props = []         # user properties, kept alive until the archive is written
        groups = strand_groups(traj)
        for g in groups:
            index = g.vertex_index(traj.strand_offsets)
            c = _AbcCurves(m, top, g.name, ts, g.counts(traj.strand_offsets),
                           2 * vertex_radii[index], g.closed, index)
            self._user_ints(c, "strandIndices", g.strands)
            self.curves.append(c)
        width = 2.0 * float(radii.max()) if len(radii) else 0.01
        for part in extra_parts(traj, taken=[g.name for g in groups]):
            if part.kind == "mesh":
                if len(part.triangles):
                    mesh = m.G.OPolyMesh(top, part.name, ts)
                    self.meshes.append((part, mesh))
                    self._face_sets(mesh, part.subsets)
                for rc in part.rod_curves():
                    c = _AbcCurves(m, top, rc.name, ts, rc.counts, rc.widths, False,
                                   part.start + rc.index)
                    self._user_ints(c, "vertexIndices", rc.index)
                    self.extra_curves.append(c)
                continue
            k = (part.stop - part.start) // 3
            origin = part.start + 3 * np.arange(k)
            index = np.stack([origin, origin + 1, origin, origin + 2], axis=1).reshape(-1)
            c = _AbcCurves(m, top, part.name, ts, np.full(2 * k, 2), np.full(4 * k, width),
                           False, index)
            self._user_ints(c, AXES_PROPERTY, np.repeat(np.arange(k), 2))
            self.extra_curves.append(c)

    def _face_sets(self, mesh, subsets: dict) -> None:
        """A face set of ``mesh`` per shell part (``subsets``: name -> triangle rows)."""
        for name, rows in subsets.items():
            fs = mesh.getSchema().createFaceSet(name)
            sample = self.m.G.OFaceSetSchemaSample()
            sample.setFaces(_ints(self.m, rows))
            fs.getSchema().set(sample)
            self.props.append(fs)

    def _user_ints(self, c: _AbcCurves, name: str, values) -> None:
        prop = self.m.Abc.OInt32ArrayProperty(c.schema.getUserProperties(), name)
        prop.setValue(_ints(self.m, values))
        self.props.append(prop)

    def frame(self, k: int) -> None:
        m = self.m
        pos = to_file_axes(np.asarray(self.traj.positions[k]), self.up)
        for c in self.curves:
            c.set(pos)
        if self.meshes or self.extra_curves:
            extra = to_file_axes(np.asarray(self.traj.extra_points[k]), self.up)
            for part, obj in self.meshes:
                tri = part.triangles[:, ::-1]       # Alembic's front faces wind clockwise
                pos, index = _v3(m, extra[part.start:part.stop]), _ints(m, tri.reshape(-1))
                counts = _ints(m, np.full(len(tri), 3))
                obj.getSchema().set(m.G.OPolyMeshSchemaSample(pos, index, counts))
            for c in self.extra_curves:
                c.set(extra)


def write_abc(path, traj, *, frames=None, up_axis: str = "Y", progress=None) -> Path:
    """Write the frames ``frames`` (see :func:`~strandlab.io.selection.select_frames`) of the
    trajectory ``traj`` (in memory or read lazily) to the Alembic file ``path`` (``.abc``);
    returns the path.  ``up_axis``: ``"Y"`` (default, turned to y-up) or ``"Z"``;
    ``progress(k)``: called after each frame ``k``.  The archive's user description names a
    run that did not complete (:func:`~strandlab.io.export.status_note`; the application
    writer is ``strandlab``).  Written under a temporary name and
    renamed when complete: a failure or an interruption leaves no partial file under
    ``path``."""
    up = check_up_axis(up_axis)
    sel = select_frames(frames, traj.n_frames)
    p = Path(path)
    if p.suffix.lower() != ".abc":
        raise ValueError(f"{p}: an Alembic file name ends in .abc")
    m = abc_modules()
    fps = frame_rate(traj)
    step = int(sel[1] - sel[0]) if len(sel) > 1 else 1
    with atomic_path(p) as tmp:
        archive = m.Abc.CreateArchiveWithInfo(str(tmp), "strandlab", _description(traj))
        ts = archive.addTimeSampling(m.core.TimeSampling(step / fps, float(sel[0]) / fps))
        writer = _AbcWriter(m, archive, traj, ts, up)
        for k in sel:
            writer.frame(int(k))
            if progress is not None:
                progress(int(k))
        del writer, archive     # the archive is completed when its last reference goes
    return p


def _description(traj) -> str:
    """The archive's user description: the run's status note (:func:`status_note`), without
    the ``=`` and ``;`` that Alembic's archive info (a token map) aborts the process on."""
    note = status_note(traj.status) or "strandlab run"
    return " ".join(note.replace("=", " is ").replace(";", ",").split())


# ---------------------------------------------------------------------------------- reading
def _matrix(m44) -> np.ndarray:
    return np.array([[m44[i][j] for j in range(4)] for i in range(4)], dtype=np.float64)


def read_curves(m, obj, sel, xf: np.ndarray, label: str):
    """(points [n, 3] world, counts, closed, widths [n] or None, order) of a Curves object."""
    schema = m.G.ICurves(obj, m.Abc.WrapExistingFlag.kWrapExisting).getSchema()
    sample = schema.getValue(sel)
    pts = np.array(memoryview(sample.getPositions()), dtype=np.float64).reshape(-1, 3)
    counts = np.array(list(sample.getCurvesNumVertices()), dtype=np.int64)
    if counts.sum() != len(pts):
        raise ValueError(f"{label}: curves {obj.getFullName()}: nVertices sum to "
                         f"{int(counts.sum())} but there are {len(pts)} positions")
    pts = pts @ xf[:3, :3] + xf[3, :3]          # Alembic matrices act on row vectors
    closed = sample.getWrap() == m.G.CurvePeriodicity.kPeriodic
    widths = None
    wp = schema.getWidthsParam()
    if wp.valid():
        w = np.array(list(wp.getExpandedValue(sel).getVals()), dtype=np.float64)
        widths = w if len(w) == len(pts) else (np.full(len(pts), w[0]) if len(w) == 1
                                               else np.repeat(w, counts) if len(w) == len(counts)
                                               else None)
    order = None
    user = schema.getUserProperties()
    if user.valid() and user.getPropertyHeader("strandIndices") is not None:
        order = np.array(list(m.Abc.IInt32ArrayProperty(user, "strandIndices").getValue()),
                         dtype=np.int64)
    return pts, counts, closed, widths, order


def is_axes(m, obj) -> bool:
    """Whether the ``Curves`` object ``obj`` draws kinematic frames' or bodies' axes (the
    :data:`AXES_PROPERTY` of :func:`write_abc`): not strands, nor rods."""
    user = m.G.ICurves(obj, m.Abc.WrapExistingFlag.kWrapExisting).getSchema().getUserProperties()
    return bool(user.valid() and user.getPropertyHeader(AXES_PROPERTY) is not None)


def walk(m, obj, sel, parent: np.ndarray, visit) -> None:
    """Call ``visit(obj, metadata, xf)`` for ``obj`` and every object below it that is not an
    ``Xform``, ``xf`` [4, 4] the transform of the Xforms above it (``parent`` that of
    ``obj``'s; row vectors), at the sample selector ``sel``."""
    md = obj.getMetaData()
    xf = parent
    if m.G.IXform.matches(md):
        schema = m.G.IXform(obj, m.Abc.WrapExistingFlag.kWrapExisting).getSchema()
        local = _matrix(schema.getValue(sel).getMatrix())
        xf = local if not schema.getInheritsXforms() else local @ parent
    else:
        visit(obj, md, parent)
    for i in range(obj.getNumChildren()):
        walk(m, obj.getChild(i), sel, xf, visit)


def open_archive(p: Path):
    """The alembic3d modules and the archive of the file ``p``: FileNotFoundError when it is
    missing, ValueError naming it when it does not open."""
    m = abc_modules()
    if not p.is_file():
        raise FileNotFoundError(f"Alembic file {p} does not exist")
    try:
        return m, m.Abc.IArchive(str(p))
    except Exception as exc:        # the bindings raise RuntimeError and friends
        raise ValueError(f"{p} is not a readable Alembic file ({exc})") from None


def read_abc_strands(path, *, time: float | None = None, up_axis: str = "Y"):
    """The strands of every ``Curves`` object of the Alembic file ``path`` as
    :class:`~strandlab.io.strands.Strands`, in strandlab's z-up axes (``up_axis``: the file's
    up axis, ``"Y"`` by Alembic's convention, or ``"Z"``).

    ``time`` [s]: the sample nearest that time (default: each object's first sample).  Radii
    are half the widths.  Curves written by :func:`write_abc` come back in the run's strand
    order; its frames' and bodies' axes are skipped.  ValueError naming the file for an
    unreadable archive or one without curves."""
    from .strands import Strands

    up = check_up_axis(up_axis)
    p = Path(path)
    m, archive = open_archive(p)
    sel = m.Abc.ISampleSelector() if time is None else m.Abc.ISampleSelector(float(time))
    parts: list = []

    def visit(obj, md, xf):
        if m.G.ICurves.matches(md) and not is_axes(m, obj):
            parts.append(read_curves(m, obj, sel, xf, str(p)))

    walk(m, archive.getTop(), sel, np.eye(4), visit)
    if not parts:
        raise ValueError(f"{p} has no Curves object (no strands to read)")
    strands = Strands.from_parts(parts, label=str(p))
    return strands.transformed(Z_TO_Y.T) if up == "Y" else strands
