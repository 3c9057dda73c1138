"""Named parts of a USD stage (Blender's, Houdini's or any tool's USD export) for a labelled
rod/shell/solid mesh.

Each ``Mesh`` prim is a part (its faces: a shell's triangles, or a solid's closed surface;
polygons cut into fans of triangles from their first corner, a polygon whose fan would fold
refused) and each ``BasisCurves`` prim of ``type = "linear"`` a part (its curves: a rod's
edges; a ``periodic`` curve closed), and each ``TetMesh`` prim a part (its tetrahedra: a
solid's, kept as they are), named by the prim's path.  Points are read at the stage's
earliest time sample, placed by the prims' transforms (the stage's world coordinates); the
stage's ``upAxis`` and ``metersPerUnit`` come with them.  The faces of a left-handed mesh
(Houdini's), or of a mesh mirrored by its transform, are turned right-handed.  A mesh's face
``GeomSubset`` prims (Blender writes one per material slot, named after the material; Houdini
one per primitive group it is asked to export) are read as :class:`~.mesh_parts.FaceSubset`:
a material that names one makes its faces a part of their own.  So are a ``TetMesh``'s
``GeomSubset`` prims of tetrahedra (``elementType = "tetrahedron"``; Houdini: primitive groups
of tetrahedra): a material that names one makes its tetrahedra a solid part of their own.

Refused, naming the file and the prim: a mesh without faces (Blender's USD exporter drops a
mesh's loose edges: a rod drawn as edges is exported as a curve, Object > Convert > Curve), a
cubic curve (rods are polylines: Blender's Poly splines, Houdini's polylines), a face of fewer
than three corners, an index past the points, a point that is not finite, a subset's index past
the faces, a tetrahedron past the points, or inverted or flat (its volume not positive in the
prim's ``orientation``).

A material names a part by the part's path or by one name on that path that no other part's
path has (:func:`~.mesh_parts.name_parts`): Blender writes an object as
``/root/<object>/<mesh data>``, so ``"Banner"`` names the part ``/root/Banner/Plane``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .mesh_parts import (
    FileParts,
    check_finite,
    curves_part,
    face_subset,
    faces_part,
    tets_part,
)
from .usd import open_stage, pxr_modules, read_curves, world_transform

__all__ = ["read_usd_parts", "USD_SUFFIXES"]

USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")


def _mesh_part(m, UsdGeom, tc, start: int, p: Path):
    """The world points [n, 3] and the part of the ``Mesh`` prim ``m`` (vertex indices from
    ``start``)."""
    where = str(m.GetPath())
    pts = np.asarray(m.GetPointsAttr().Get(tc) or [], dtype=np.float64).reshape(-1, 3)
    xf = world_transform(m, tc)
    x = check_finite(pts @ xf[:3, :3] + xf[3, :3], p, where)     # row vectors, as USD's
    flip = (m.GetOrientationAttr().Get(tc) == UsdGeom.Tokens.leftHanded) != \
        (np.linalg.det(xf[:3, :3]) < 0.0)
    return x, faces_part(where, m.GetFaceVertexCountsAttr().Get(tc) or [],
                         m.GetFaceVertexIndicesAttr().Get(tc) or [], x, flip, start, p)


def _tet_part(t, UsdGeom, tc, start: int, p: Path):
    """The world points [n, 3] and the part of the ``TetMesh`` prim ``t``."""
    where = str(t.GetPath())
    pts = np.asarray(t.GetPointsAttr().Get(tc) or [], dtype=np.float64).reshape(-1, 3)
    xf = world_transform(t, tc)
    x = check_finite(pts @ xf[:3, :3] + xf[3, :3], p, where)
    mirrored = np.linalg.det(xf[:3, :3]) < 0.0
    flip = (t.GetOrientationAttr().Get(tc) == UsdGeom.Tokens.leftHanded) != mirrored
    return x, tets_part(where, np.asarray(t.GetTetVertexIndicesAttr().Get(tc) or [],
                                          dtype=np.int64), x, flip, start, p)


def _face_subsets(m, UsdGeom, tc, part, p: Path, others: list) -> dict:
    """The face ``GeomSubset`` prims of the ``Mesh`` prim ``m`` (whose part is ``part``), or
    the tetrahedron ones of a ``TetMesh`` ``m``, as :class:`~.mesh_parts.FaceSubset` by path;
    subsets of other elements (points, edges) are no parts: their paths are added to
    ``others``."""
    out = {}
    element = UsdGeom.Tokens.tetrahedron if part.tets else UsdGeom.Tokens.face
    for sub in UsdGeom.Subset.GetAllGeomSubsets(m):
        if sub.GetElementTypeAttr().Get(tc) == element:
            path, faces = face_subset(part, sub.GetPrim().GetName(),
                                      sub.GetIndicesAttr().Get(tc) or [], p)
            out[path] = faces
        else:
            others.append(str(sub.GetPath()))
    return out


def _curve_part(c, UsdGeom, tc, start: int, p: Path):
    """The world points [n, 3] and the part of the ``BasisCurves`` prim ``c``."""
    where = str(c.GetPath())
    kind = c.GetTypeAttr().Get(tc)
    if kind != UsdGeom.Tokens.linear:
        raise ValueError(f"{p}, {where}: {kind} curves: rods are read from linear curves "
                         "(Blender: Poly splines; Houdini: polylines)")
    x, counts, closed, _, _ = read_curves(c, UsdGeom, tc, str(p))
    x = check_finite(x, p, where)
    return x, curves_part(where, counts, closed, start, p)


def read_usd_parts(path) -> FileParts:
    """The parts of the USD file ``path`` (module docstring); ValueError naming the file for
    a stage without a mesh or linear curve, and naming the prim for what the module docstring
    lists as refused.  Needs ``usd-core`` (the ``interchange`` extra)."""
    px = pxr_modules()
    UsdGeom = px.UsdGeom
    p = Path(path)
    stage = open_stage(p)
    tc = px.Usd.TimeCode.EarliestTime()
    xs, parts, subsets, others, start = [], {}, {}, [], 0
    for prim in stage.Traverse():
        if prim.IsA(UsdGeom.Mesh):
            x, part = _mesh_part(UsdGeom.Mesh(prim), UsdGeom, tc, start, p)
            subsets.update(_face_subsets(UsdGeom.Mesh(prim), UsdGeom, tc, part, p, others))
        elif prim.IsA(UsdGeom.BasisCurves):
            x, part = _curve_part(UsdGeom.BasisCurves(prim), UsdGeom, tc, start, p)
        elif hasattr(UsdGeom, "TetMesh") and prim.IsA(UsdGeom.TetMesh):
            x, part = _tet_part(UsdGeom.TetMesh(prim), UsdGeom, tc, start, p)
            subsets.update(_face_subsets(UsdGeom.TetMesh(prim), UsdGeom, tc, part, p,
                                         others))
        else:
            continue
        parts[part.at] = part
        xs.append(x)
        start += len(x)
    if not parts:
        raise ValueError(f"{p}: no Mesh, BasisCurves or TetMesh prim: nothing to read as "
                         "rods, shells or solids")
    up = "y" if UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y else "z"
    return FileParts(np.concatenate(xs), parts, up, float(UsdGeom.GetStageMetersPerUnit(stage)),
                     subsets, tuple(others))
