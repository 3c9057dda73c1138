"""Named parts of an Alembic archive (Blender's, Houdini's or any tool's Alembic export) for a
labelled rod/shell/solid mesh.

Each ``PolyMesh`` object is a part (its faces: a shell's triangles, or a solid's closed surface;
polygons cut into fans of triangles from their first corner, a polygon whose fan would fold
refused) and each ``Curves`` object of type linear a part (its curves: a rod's edges; a
periodic curve closed), named by the object's full name (its path, ``/Banner/Plane``); the
axes of kinematic frames and bodies that strandlab's exports draw as curves are skipped.  Points
are read at each object's first sample, placed by the transforms of the ``Xform`` objects above
it.  Alembic's front faces wind clockwise: every polygon is reversed (and not, under a
mirroring transform), so that a shell faces the way it was modelled.  Alembic has no up axis
and no unit: the convention, y-up, and metres are the defaults.  A mesh's face sets (Blender
writes one per material slot with *Face Sets* on, named after the material; Houdini one per
primitive group) are read as :class:`~.mesh_parts.FaceSubset`: a material that names one makes
its faces a part of their own.

Refused, naming the file and the object: a mesh without faces (a rod drawn as loose edges is
exported as a curve, Object > Convert > Curve in Blender), a cubic curve (rods are polylines),
a face of fewer than three corners, an index past the points, a point that is not finite, a
face set's index past the faces.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .alembic import is_axes, open_archive, read_curves, walk
from .mesh_parts import FileParts, check_finite, curves_part, face_subset, faces_part

__all__ = ["read_abc_parts"]


def _mesh_part(m, obj, sel, xf: np.ndarray, start: int, p: Path):
    """The world points [n, 3], the part of the ``PolyMesh`` object ``obj`` and its face sets
    (:class:`~.mesh_parts.FaceSubset` by path)."""
    where = obj.getFullName()
    schema = m.G.IPolyMesh(obj, m.Abc.WrapExistingFlag.kWrapExisting).getSchema()
    sample = schema.getValue(sel)
    pts = np.array(memoryview(sample.getPositions()), dtype=np.float64).reshape(-1, 3)
    x = check_finite(pts @ xf[:3, :3] + xf[3, :3], p, where)   # row vectors, as Alembic's
    flip = not np.linalg.det(xf[:3, :3]) < 0.0      # clockwise front faces, unless mirrored
    counts = np.array(memoryview(sample.getFaceCounts()), dtype=np.int64)
    idx = np.array(memoryview(sample.getFaceIndices()), dtype=np.int64)
    part = faces_part(where, counts, idx, x, flip, start, p)
    subsets = {}
    for name in schema.getFaceSetNames():
        faces = schema.getFaceSet(name).getSchema().getValue(sel).getFaces()
        path, subset = face_subset(part, name, np.array(memoryview(faces), dtype=np.int64), p)
        subsets[path] = subset
    return x, part, subsets


def _curve_part(m, obj, sel, xf: np.ndarray, start: int, p: Path):
    """The world points [n, 3] and the part of the ``Curves`` object ``obj``."""
    where = obj.getFullName()
    schema = m.G.ICurves(obj, m.Abc.WrapExistingFlag.kWrapExisting).getSchema()
    kind = schema.getValue(sel).getType()
    if kind != m.G.CurveType.kLinear:
        raise ValueError(f"{p}, {where}: {str(kind).rsplit('.', 1)[-1][1:].lower()} curves: "
                         "rods are read from linear curves (Blender: Poly splines; Houdini: "
                         "polylines)")
    x, counts, closed, _, _ = read_curves(m, obj, sel, xf, str(p))
    x = check_finite(x, p, where)
    return x, curves_part(where, counts, closed, start, p)


def read_abc_parts(path) -> FileParts:
    """The parts of the Alembic file ``path`` (module docstring), with ``up = "y"`` and one
    metre a unit (Alembic's convention); ValueError naming the file for an archive without a
    mesh or linear curve, and naming the object for what the module docstring lists as
    refused.  Needs ``alembic3d`` (the ``interchange`` extra)."""
    p = Path(path)
    m, archive = open_archive(p)
    sel = m.Abc.ISampleSelector()
    xs, parts, subsets = [], {}, {}
    start = 0                 # the first vertex of the next part

    def visit(obj, md, xf):
        nonlocal start
        if m.G.IPolyMesh.matches(md):
            x, part, faces = _mesh_part(m, obj, sel, xf, start, p)
            subsets.update(faces)
        elif m.G.ICurves.matches(md) and not is_axes(m, obj):
            x, part = _curve_part(m, obj, sel, xf, start, p)
        else:
            return
        parts[part.at] = part
        xs.append(x)
        start += len(x)

    walk(m, archive.getTop(), sel, np.eye(4), visit)
    if not parts:
        raise ValueError(f"{p}: no PolyMesh or Curves object: nothing to read as rods, shells "
                         "or solids")
    return FileParts(np.concatenate(xs), parts, "y", 1.0, subsets)
