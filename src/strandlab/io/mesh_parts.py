"""Named parts of a mesh made in a modelling tool: each part's edges and triangles, with where
in the file each came from, for messages.  :mod:`.obj_parts` fills them from Wavefront OBJ
files, :mod:`.usd_parts` from USD stages; :mod:`.simplicial` makes rods, shells and solids of
them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["MeshPart", "fan_is_flat", "add_polygon"]


@dataclass
class MeshPart:
    """The elements of one part: ``edges`` [E, 2] and ``triangles`` [F, 3] (vertex indices
    from 0), where in the file each came from (``edge_at``, ``triangle_at``: ``"line 12"`` in
    an OBJ file, ``"/root/Flag/Plane, face 3"`` in a USD stage) and where the part starts
    (``at``)."""

    at: str
    edges: list = field(default_factory=list)
    edge_at: list = field(default_factory=list)
    triangles: list = field(default_factory=list)
    triangle_at: list = field(default_factory=list)


def fan_is_flat(p: np.ndarray) -> bool:
    """Whether every triangle of the fan of the polygon of corners ``p`` [n, 3] from its first
    corner faces the polygon's own way (its Newell normal): false for a concave polygon, whose
    fan folds.

    >>> square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    >>> fan_is_flat(square), fan_is_flat(square[[1, 0, 2, 3]])
    (True, False)
    """
    q = np.roll(p, -1, axis=0)
    normal = np.cross(p, q).sum(axis=0)          # twice the polygon's vector area
    fan = np.cross(p[1:-1] - p[0], p[2:] - p[0])
    return bool(np.all(fan @ normal > 0.0))


def add_polygon(part: MeshPart, idx: list, corners: np.ndarray, at: str, file) -> None:
    """Add the polygon of vertex indices ``idx`` and corner positions ``corners`` [n, 3] to
    ``part`` as a fan of triangles from its first vertex, each from ``at`` in ``file``;
    ValueError naming both for a polygon whose fan would fold over itself (concave or
    twisted)."""
    if len(idx) > 3 and not fan_is_flat(corners):
        raise ValueError(f"{file}, {at}: a concave or twisted polygon of {len(idx)} vertices: "
                         "a fan of triangles would fold over itself (triangulate it in the "
                         "tool: Blender's OBJ exporter, Triangulated Mesh; its USD exporter, "
                         "Triangulate Mesh)")
    part.triangles += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    part.triangle_at += [at] * (len(idx) - 2)
