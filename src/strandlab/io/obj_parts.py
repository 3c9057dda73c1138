"""Named parts of a Wavefront OBJ file: its vertices, and the edges (``l``) and faces (``f``)
of each object (``o``) or group (``g``), as Blender, Houdini and most modelling tools write them.

Only what a labelled rod/shell/solid mesh needs is read: ``v`` (positions; a fourth value, a
weight, or colours after it are ignored), ``l`` (a polyline: one edge between each two
consecutive vertices), ``f`` (a polygon, cut into a fan of triangles from its first vertex; a
polygon whose fan would fold, concave or twisted, is refused),
``o`` and ``g`` (the part that the elements after them belong to: the name on the latest of
the two, whole; elements before any is the part ``"default"``).  Vertex references may be
negative (counted back from the latest vertex) and may carry texture and normal indices
(``f 1/1/1 2/2/1 ...``: the first number is the vertex).  Other statements (``vt``, ``vn``,
``s``, ``usemtl``, ``mtllib``, ``p``, ...) are skipped.  Indices in the results count from 0,
in the file's order of vertices.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .mesh_parts import MeshPart, add_polygon

__all__ = ["read_obj_parts"]


def _vertex(token: str, n_vertices: int, where: str) -> int:
    """The 0-based vertex of an OBJ reference (``7``, ``-1``, ``7/3/2``, ``7//2``)."""
    head = token.split("/", 1)[0]
    try:
        k = int(head)
    except ValueError:
        raise ValueError(f"{where}: {token!r} is not a vertex index") from None
    i = k - 1 if k > 0 else n_vertices + k
    if k == 0 or not 0 <= i < n_vertices:
        raise ValueError(f"{where}: vertex {k} does not exist (the file has {n_vertices} "
                         "vertices so far)")
    return i


def read_obj_parts(path) -> tuple[np.ndarray, dict[str, MeshPart]]:
    """The vertices [V, 3] (file units) and the parts, by name in order of appearance, of the
    OBJ file ``path`` (module docstring).  ValueError naming the file and line for a
    malformed statement, a reference to a vertex that does not exist, a face of fewer than
    three vertices or a line of fewer than two.

    >>> import tempfile, os
    >>> text = "o pole\\nv 0 0 0\\nv 0 0 1\\nl 1 2\\no flag\\nv 1 0 1\\nf 1/1 2/1 -1/1\\n"
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "m.obj")
    ...     _ = open(p, "w").write(text)
    ...     x, parts = read_obj_parts(p)
    >>> x.shape, {k: (v.edges, v.triangles) for k, v in parts.items()}
    ((3, 3), {'pole': ([(0, 1)], []), 'flag': ([], [(0, 1, 2)])})
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ValueError(f"{p}: cannot read the OBJ file ({exc})") from None
    vertices: list = []
    parts: dict[str, MeshPart] = {}
    current = "default"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, *tail = line.split(None, 1)       # spaces or tabs
        rest = tail[0] if tail else ""
        where = f"{p}, line {number}"
        words = rest.split()
        if key == "v":
            try:
                xyz = [float(w) for w in words[:3]]
            except ValueError:
                xyz = []
            if len(xyz) != 3 or not np.isfinite(xyz).all():
                raise ValueError(f"{where}: a vertex needs three finite coordinates, got "
                                 f"{rest.strip()!r}")
            vertices.append(xyz)
        elif key in ("o", "g"):
            current = rest.strip() or "default"
        elif key in ("l", "f"):
            need = 2 if key == "l" else 3
            if len(words) < need:
                raise ValueError(f"{where}: {'a line' if key == 'l' else 'a face'} needs at "
                                 f"least {need} vertices, got {len(words)}")
            idx = [_vertex(w, len(vertices), where) for w in words]
            at = f"line {number}"
            part = parts.setdefault(current, MeshPart(at))
            if key == "l":
                part.edges += list(zip(idx[:-1], idx[1:]))
                part.edge_at += [at] * (len(idx) - 1)
            else:
                add_polygon(part, idx, np.asarray([vertices[i] for i in idx]), at, p)
    if not vertices:
        raise ValueError(f"{p}: no vertices: not an OBJ mesh")
    return np.asarray(vertices, dtype=np.float64), parts
