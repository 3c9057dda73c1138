"""Per-vertex quantities to colour strands by, and the per-strand palette.

* :func:`twist_density`: discrete twist per unit length [rad/m], from the material direction
  ``d1`` of consecutive edges (parallel transport, :func:`strandlab.geometry.transport.
  twist_angles`), divided by the Voronoi length of the shared vertex;
* :func:`edge_strain`: ``|e| / |e_ref| - 1`` per edge against reference positions (the first
  frame of a trajectory);
* :func:`edge_to_vertex`: the mean of the values of the edges that touch each vertex.

Everything here is vectorised over all strands of a frame (flat arrays with offsets).
"""
from __future__ import annotations

import numpy as np
from matplotlib import colormaps

from ..geometry.transport import twist_angles
from ..io.trajectory import edge_vertices

__all__ = ["strand_colors", "edge_pairs", "twist_density", "edge_strain", "edge_to_vertex",
           "vertex_scalars", "COLOR_BY"]

#: What strands can be coloured by: one colour per strand, twist [rad/m] or strain [-].
COLOR_BY = ("strand", "twist", "strain")


def strand_colors(n: int) -> list:
    """``n`` RGBA colours (floats in [0, 1]): tab10 up to 10 strands, else the turbo map."""
    if n <= 10:
        cmap = colormaps["tab10"]
        return [cmap(k) for k in range(n)]
    cmap = colormaps["turbo"]
    return [cmap(0.05 + 0.9 * k / max(n - 1, 1)) for k in range(n)]


def edge_pairs(strand_offsets, edge_offsets, closed):
    """Consecutive edges ``(e, f)`` of each strand (``f`` follows ``e``; a closed strand's last
    edge is followed by its first), two int64 arrays [P]."""
    eo = np.asarray(edge_offsets, dtype=np.int64)
    cl = np.asarray(closed, dtype=np.bool_)
    ne = np.diff(eo)
    strand = np.repeat(np.arange(ne.shape[0]), ne)
    e = np.arange(int(eo[-1]), dtype=np.int64)
    last = e == eo[strand + 1] - 1
    f = np.where(last, eo[strand], e + 1)
    keep = ~last | (cl[strand] & (ne[strand] > 1))
    return e[keep], f[keep]


def _edges(positions, strand_offsets, edge_offsets, closed):
    a, b = edge_vertices(strand_offsets, edge_offsets, closed)
    vec = positions[b] - positions[a]
    return a, b, vec, np.linalg.norm(vec, axis=1)


def twist_density(positions, d1, strand_offsets, edge_offsets, closed) -> np.ndarray:
    """Discrete twist per unit length of each edge [rad/m], shape [E].

    At each pair of consecutive edges the twist angle (:func:`twist_angles`) is divided by the
    Voronoi length ``(|e| + |f|) / 2``; an edge gets the mean over the pairs it belongs to (0 for
    a strand of one edge).  ``positions`` [V, 3] [m], ``d1`` [E, 3] unit.
    """
    pos = np.asarray(positions, dtype=np.float64)
    d = np.asarray(d1, dtype=np.float64)
    _, _, vec, length = _edges(pos, strand_offsets, edge_offsets, closed)
    t = vec / np.where(length > 0, length, 1.0)[:, None]
    e, f = edge_pairs(strand_offsets, edge_offsets, closed)
    rate = twist_angles(t[e], t[f], d[e], d[f]) / np.maximum(0.5 * (length[e] + length[f]),
                                                             1e-300)
    total = np.zeros(length.shape[0])
    count = np.zeros(length.shape[0])
    for idx in (e, f):
        np.add.at(total, idx, rate)
        np.add.at(count, idx, 1.0)
    return total / np.maximum(count, 1.0)


def edge_strain(positions, reference, strand_offsets, edge_offsets, closed) -> np.ndarray:
    """Axial strain ``|e| / |e_ref| - 1`` of each edge [-], shape [E]; ``positions`` and
    ``reference`` [V, 3] [m] (reference edges of zero length give strain 0)."""
    _, _, _, length = _edges(np.asarray(positions, dtype=np.float64), strand_offsets,
                             edge_offsets, closed)
    _, _, _, ref = _edges(np.asarray(reference, dtype=np.float64), strand_offsets,
                          edge_offsets, closed)
    return np.where(ref > 0, length / np.where(ref > 0, ref, 1.0) - 1.0, 0.0)


def edge_to_vertex(values, n_vertices: int, strand_offsets, edge_offsets, closed) -> np.ndarray:
    """Per-vertex mean [V] of per-edge ``values`` [E] over the edges touching each vertex
    (0 for a vertex on no edge)."""
    a, b = edge_vertices(strand_offsets, edge_offsets, closed)
    v = np.asarray(values, dtype=np.float64)
    total = np.zeros(n_vertices)
    count = np.zeros(n_vertices)
    for idx in (a, b):
        np.add.at(total, idx, v)
        np.add.at(count, idx, 1.0)
    return total / np.maximum(count, 1.0)


def vertex_scalars(color_by: str, traj, k: int, reference=None) -> np.ndarray:
    """Per-vertex values [V] of frame ``k`` of trajectory ``traj`` to colour by: ``"twist"``
    [rad/m] or ``"strain"`` [-] (against ``reference`` [V, 3], default frame 0)."""
    lay = (traj.strand_offsets, traj.edge_offsets, traj.closed)
    pos = np.asarray(traj.positions[k], dtype=np.float64)
    if color_by == "twist":
        per_edge = twist_density(pos, traj.d1[k], *lay)
    elif color_by == "strain":
        ref = traj.positions[0] if reference is None else reference
        per_edge = edge_strain(pos, ref, *lay)
    else:
        raise ValueError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    return edge_to_vertex(per_edge, pos.shape[0], *lay)
