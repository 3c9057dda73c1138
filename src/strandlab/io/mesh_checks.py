"""Checks of what a labelled mesh file holds that meshio leaves unchecked (:mod:`.simplicial`):
every vertex finite (used by a cell or not), cells naming points the file has, part tags that
are whole numbers, one name per group; and the message for materials that name no part of the
file.  Each refusal is a ValueError naming the file and the offending item as the file numbers
it.
"""
from __future__ import annotations

import numpy as np

from .gmsh_checks import gmsh_node_number, gmsh_problem

__all__ = ["check_finite_points", "check_cell_points", "integer_tags", "given_names",
           "unknown_names"]


def check_finite_points(x: np.ndarray, name, data: bytes | None = None) -> None:
    """Refuse the first point of ``x`` [N, 3] (a file's points, in its order, counted from 0
    as holds count them) that is not finite, naming the file ``name``, the vertex and, for a
    Gmsh file (``data``: its bytes), the node's number in the file."""
    bad = np.nonzero(~np.isfinite(x).all(axis=1))[0]
    if not len(bad):
        return
    k = int(bad[0])
    node = gmsh_node_number(data, k) if data is not None else None
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    raise ValueError(f"{name}: vertex {k}{f' (node {node} of the file)' if node else ''} is "
                     f"not finite: {x[k].tolist()}{more}")


def check_cell_points(cells, n: int, name, data: bytes | None = None) -> None:
    """Refuse a cell of the meshio cell blocks ``cells`` that names a point past the file's
    ``n`` points (meshio marks a Gmsh element's node the file lacks as ``-1``): in words from
    the Gmsh file ``data`` where it has them (the element as the file numbers it), else by
    the cell's block and place."""
    for k, block in enumerate(cells):
        d = np.asarray(block.data, dtype=np.int64).reshape(len(block.data), -1)
        bad = np.nonzero(((d < 0) | (d >= n)).any(axis=1))[0]
        if not len(bad):
            continue
        why = gmsh_problem(data) if data is not None else None
        if why:
            raise ValueError(f"{name}: cannot read the mesh ({why})")
        j = int(bad[0])
        v = d[j][(d[j] < 0) | (d[j] >= n)][0]
        point = f"point {v}" if v >= 0 else "a point"
        raise ValueError(f"{name}: cell {j} of cell block {k} ({block.type} cells) names "
                         f"{point}, which the file does not have (it has {n} points)")


def integer_tags(values, name, block: int, cell_type: str) -> np.ndarray:
    """The part tags ``values`` of the cell block ``block`` (of ``cell_type`` cells) as
    integers [n]; a tag that is not a whole number (a VTU ``part`` array of floats, 1.5) is
    refused, naming the file ``name``, the block, the cell and the tag."""
    v = np.asarray(values).ravel()
    if v.dtype.kind in "iub":
        return v.astype(np.int64)
    try:
        f = v.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: cell block {block} ({cell_type} cells): its part tags are "
                         f"not numbers ({v[:3].tolist()}...)") from None
    bad = np.nonzero(~np.isfinite(f) | (f != np.round(f)))[0]
    if len(bad):
        j = int(bad[0])
        raise ValueError(f"{name}: cell block {block} ({cell_type} cells), cell {j}: part tag "
                         f"{f[j]:g} is not a whole number (a part tag is an integer)")
    return f.astype(np.int64)


def given_names(field_data, used, name) -> dict:
    """(tag, dimension or None) -> group name, from a meshio mesh's ``field_data`` (``name: [tag,
    dimension]``, or ``[tag]``); two names of one group that cells use (``used``: its (tag,
    dimension) pairs) are refused, naming the file ``name``, both names and the tag."""
    names: dict = {}
    for text, val in (field_data or {}).items():
        arr = np.asarray(val).ravel()
        if len(arr):
            key = (int(arr[0]), int(arr[1]) if len(arr) > 1 else None)
            names.setdefault(key, []).append(str(text))
    for t, d in used:
        for key in ((t, d), (t, None)):
            if len(names.get(key, ())) > 1:
                a, b = names[key][:2]
                dim = f" (of dimension {d})" if key[1] is not None else ""
                raise ValueError(f"{name}: tag {t}{dim} has two names in the file, {a!r} and "
                                 f"{b!r} (a group has one name)")
    return {key: texts[-1] for key, texts in names.items()}


def unknown_names(p, stray: list, parts, points=(), subsets=()) -> str:
    """The message for materials keyed by ``stray``, names of nothing in the file ``p``: they
    are named, and so are the file's ``parts``, its groups of ``points`` (Gmsh, VTU: held only)
    and its face ``subsets`` (USD, Alembic)."""
    which = ", ".join(map(repr, stray))
    held = [k for k in stray if str(k) in set(map(str, points))]
    if held:
        return (f"{p}: materials name {', '.join(map(repr, held))}, a group of points of the "
                "file, which is no part (a group of points is held by name: give it in groups=, "
                "and no material)")
    out = (f"{p}: materials name {which}, which the file does not have as a part; its parts: "
           f"{', '.join(map(str, parts)) or 'none'}")
    if points:
        out += f"; its groups of points: {', '.join(map(str, points))}"
    if subsets:
        out += f"; its face subsets: {', '.join(map(str, subsets))}"
    return out
