"""Named parts of a USD stage (Blender's, Houdini's or any tool's USD export) for a labelled
rod/shell/solid mesh.

Each ``Mesh`` prim is a part (its faces: a shell's triangles, or a solid's closed surface;
polygons cut into fans of triangles from their first corner, a polygon whose fan would fold
refused) and each ``BasisCurves`` prim of ``type = "linear"`` a part (its curves: a rod's
edges; a ``periodic`` curve closed), named by the prim's path.  Points are read at the stage's
earliest time sample, placed by the prims' transforms (the stage's world coordinates); the
stage's ``upAxis`` and ``metersPerUnit`` come with them.  The faces of a left-handed mesh
(Houdini's), or of a mesh mirrored by its transform, are turned right-handed.

Refused, naming the file and the prim: a mesh without faces (Blender's USD exporter drops a
mesh's loose edges: a rod drawn as edges is exported as a curve, Object > Convert > Curve), a
cubic curve (rods are polylines: Blender's Poly splines, Houdini's polylines), a face of fewer
than three corners, an index past the points, a point that is not finite.

A material names a part by the part's path or by one name on that path that no other part's
path has (:func:`name_parts`): Blender writes an object as ``/root/<object>/<mesh data>``, so
``"Banner"`` names the part ``/root/Banner/Plane``.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .mesh_parts import MeshPart, add_polygon
from .usd import open_stage, pxr_modules, read_curves, world_points

__all__ = ["UsdParts", "read_usd_parts", "name_parts", "USD_SUFFIXES"]

USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")


@dataclass(frozen=True)
class UsdParts:
    """A stage's points [N, 3] (``vertices``: world coordinates, file units, every part's
    points in turn, in the order of the stage's prims), its ``parts`` by prim path, its up
    axis (``up``: ``"z"`` or ``"y"``) and ``meters_per_unit``."""

    vertices: np.ndarray
    parts: dict
    up: str
    meters_per_unit: float


def _finite(x: np.ndarray, p: Path, where: str) -> np.ndarray:
    bad = np.nonzero(~np.isfinite(x).all(axis=1))[0]
    if len(bad):
        raise ValueError(f"{p}, {where}: point {int(bad[0])} is not finite")
    return x


def _mesh_part(m, UsdGeom, tc, start: int, p: Path):
    """The world points [n, 3] and the part of the ``Mesh`` prim ``m`` (vertex indices from
    ``start``)."""
    where = str(m.GetPath())
    counts = np.asarray(m.GetFaceVertexCountsAttr().Get(tc) or [], dtype=np.int64)
    idx = np.asarray(m.GetFaceVertexIndicesAttr().Get(tc) or [], dtype=np.int64)
    pts = np.asarray(m.GetPointsAttr().Get(tc) or [], dtype=np.float64).reshape(-1, 3)
    if not len(counts):
        raise ValueError(f"{p}, {where}: a mesh without faces (Blender's USD exporter drops "
                         "a mesh's loose edges: export a rod drawn as edges as a curve, "
                         "Object > Convert > Curve)")
    if counts.sum() != len(idx):
        raise ValueError(f"{p}, {where}: faceVertexCounts sum to {int(counts.sum())} but "
                         f"there are {len(idx)} faceVertexIndices")
    if counts.min() < 3:
        k = int(np.argmax(counts < 3))
        raise ValueError(f"{p}, {where}, face {k}: a face needs at least 3 corners, got "
                         f"{int(counts[k])}")
    if idx.min() < 0 or idx.max() >= len(pts):
        j = int(np.argmax((idx < 0) | (idx >= len(pts))))
        k = int(np.searchsorted(np.cumsum(counts), j, side="right"))
        raise ValueError(f"{p}, {where}, face {k}: point {int(idx[j])} does not exist (the "
                         f"mesh has {len(pts)} points)")
    x = _finite(world_points(m, tc, pts), p, where)
    xf = np.array(m.ComputeLocalToWorldTransform(tc), dtype=np.float64)[:3, :3]
    flip = (m.GetOrientationAttr().Get(tc) == UsdGeom.Tokens.leftHanded) != \
        (np.linalg.det(xf) < 0.0)
    part = MeshPart(where)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for k, (a, c) in enumerate(zip(first.tolist(), counts.tolist())):
        poly = idx[a:a + c][::-1] if flip else idx[a:a + c]
        add_polygon(part, (poly + start).tolist(), x[poly], f"{where}, face {k}", p)
    return x, part


def _curve_part(c, UsdGeom, tc, start: int, p: Path):
    """The world points [n, 3] and the part of the ``BasisCurves`` prim ``c``."""
    where = str(c.GetPath())
    kind = c.GetTypeAttr().Get(tc)
    if kind != UsdGeom.Tokens.linear:
        raise ValueError(f"{p}, {where}: {kind} curves: rods are read from linear curves "
                         "(Blender: Poly splines; Houdini: polylines)")
    x, counts, closed, _, _ = read_curves(c, UsdGeom, tc, str(p))
    x = _finite(x, p, where)
    part = MeshPart(where)
    a = start
    for k, n in enumerate(counts.tolist()):
        if n < (3 if closed else 2):
            raise ValueError(f"{p}, {where}, curve {k}: {n} point{'s' * (n != 1)}: too few for "
                             f"{'a closed' if closed else 'an open'} rod")
        ids = list(range(a, a + n)) + ([a] if closed else [])
        part.edges += list(zip(ids[:-1], ids[1:]))
        part.edge_at += [f"{where}, curve {k}"] * (len(ids) - 1)
        a += n
    return x, part


def read_usd_parts(path) -> UsdParts:
    """The parts of the USD file ``path`` (module docstring); ValueError naming the file for
    a stage without a mesh or linear curve, and naming the prim for what the module docstring
    lists as refused.  Needs ``usd-core`` (the ``interchange`` extra)."""
    px = pxr_modules()
    UsdGeom = px.UsdGeom
    p = Path(path)
    stage = open_stage(p)
    tc = px.Usd.TimeCode.EarliestTime()
    xs, parts, start = [], {}, 0
    for prim in stage.Traverse():
        if prim.IsA(UsdGeom.Mesh):
            x, part = _mesh_part(UsdGeom.Mesh(prim), UsdGeom, tc, start, p)
        elif prim.IsA(UsdGeom.BasisCurves):
            x, part = _curve_part(UsdGeom.BasisCurves(prim), UsdGeom, tc, start, p)
        else:
            continue
        parts[part.at] = part
        xs.append(x)
        start += len(x)
    if not parts:
        raise ValueError(f"{p}: no Mesh or BasisCurves prim: nothing to read as rods, shells "
                         "or solids")
    up = "y" if UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y else "z"
    return UsdParts(np.concatenate(xs), parts, up, float(UsdGeom.GetStageMetersPerUnit(stage)))


def name_parts(parts: dict, keys: Iterable, p) -> dict:
    """``parts`` (by prim path) renamed by the names in ``keys`` (a scene's part names, its
    materials' keys): a key that is a part's path, or one name on exactly one part's path,
    names that part; other parts keep their paths.  ValueError naming ``p`` for a key that
    names several parts, or a part named twice.

    >>> name_parts({"/root/Banner/Plane": 1, "/root/Pole/Curve": 2}, ["Banner", "x"], "f")
    {'Banner': 1, '/root/Pole/Curve': 2}
    """
    names: dict = {}
    for key in keys:
        if not isinstance(key, str):
            continue
        hits = [q for q in parts if key == q] or \
            [q for q in parts if key in q.strip("/").split("/")]
        if len(hits) > 1:
            raise ValueError(f"{p}: part name {key!r} is on the paths of several prims: "
                             f"{', '.join(hits)}; name one by its path")
        if hits and hits[0] in names:
            raise ValueError(f"{p}: the prim {hits[0]} is named twice, as "
                             f"{names[hits[0]]!r} and {key!r}")
        if hits:
            names[hits[0]] = key
    return {names.get(q, q): part for q, part in parts.items()}
