"""The rod edges of a simplicial mesh as a graph: chains between junctions, oriented edges.

Rod edges may form open chains, closed loops and junctions where three or more rod edges meet
(an umbrella's ribs).  Along a chain every inner vertex joins an edge that ends there to an edge
that starts there, which is the stencil of the discrete-elastic-rod bending and twisting
energies; at a junction every pair of its edges is joined by a rod-rod point connection instead
(twisting and bending through parallel transport, :mod:`strandlab.mixed.connections`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RodGraph", "rod_graph"]


@dataclass(frozen=True)
class RodGraph:
    """Oriented rod edges and how they join.

    edges : int [R, 2], the rod edges in the input order, each oriented along its chain
        (``flipped[r]`` tells whether it was reversed).
    chains : list of int arrays, the vertices of each chain in order (a closed loop repeats its
        first vertex at the end).
    chain_edges : list of int arrays, the rod edges of each chain in order.
    stencil_edges : int [B, 2], ``(j0, j1)``: edge ``j0`` ends at the stencil's centre vertex,
        ``j1`` starts there (consecutive edges of one chain).
    stencil_vertex : int [B], the centre vertex.
    junction_pairs : int [J, 2], pairs of rod edges that meet at a junction vertex (degree 3 or
        more), with ``junction_vertex`` [J].
    """

    edges: np.ndarray
    flipped: np.ndarray
    chains: list
    chain_edges: list
    stencil_edges: np.ndarray
    stencil_vertex: np.ndarray
    junction_pairs: np.ndarray
    junction_vertex: np.ndarray


def rod_graph(rod_edges: np.ndarray, n_vertices: int) -> RodGraph:
    """Orient ``rod_edges`` [R, 2] into chains (see :class:`RodGraph`)."""
    e = np.asarray(rod_edges, dtype=np.int64).reshape(-1, 2)
    r_count = len(e)
    inc: list[list[int]] = [[] for _ in range(n_vertices)]
    for r, (a, b) in enumerate(e.tolist()):
        inc[a].append(r)
        inc[b].append(r)
    deg = np.array([len(x) for x in inc], dtype=np.int64)
    oriented = e.copy()
    done = np.zeros(r_count, dtype=bool)
    chains, chain_edges = [], []

    def walk(v0: int, r0: int) -> None:
        verts, redges = [v0], []
        v, r = v0, r0
        while True:
            a, b = e[r]
            w = b if a == v else a
            oriented[r] = (v, w)
            done[r] = True
            redges.append(r)
            verts.append(w)
            if deg[w] != 2 or w == v0:
                break
            nxt = [k for k in inc[w] if not done[k]]
            if not nxt:
                break
            v, r = w, nxt[0]
        chains.append(np.asarray(verts, dtype=np.int64))
        chain_edges.append(np.asarray(redges, dtype=np.int64))

    # chains start at ends and junctions (degree != 2), then the closed loops that remain
    for v in np.nonzero((deg > 0) & (deg != 2))[0].tolist():
        for r in inc[v]:
            if not done[r]:
                walk(v, r)
    for r in range(r_count):
        if not done[r]:
            walk(int(e[r, 0]), r)
    sj0, sj1, sv = [], [], []
    for verts, redges in zip(chains, chain_edges):
        for k in range(len(redges) - 1):
            sj0.append(redges[k])
            sj1.append(redges[k + 1])
            sv.append(verts[k + 1])
        if len(redges) > 1 and verts[0] == verts[-1] and deg[verts[0]] == 2:
            sj0.append(redges[-1])                 # a closed loop joins its last and first edge
            sj1.append(redges[0])
            sv.append(verts[0])
    jp, jv = [], []
    for v in np.nonzero(deg >= 3)[0].tolist():
        rs = inc[v]
        for i in range(len(rs)):
            for k in range(i + 1, len(rs)):
                jp.append((rs[i], rs[k]))
                jv.append(v)
    flipped = np.any(oriented != e, axis=1)
    return RodGraph(edges=oriented, flipped=flipped, chains=chains, chain_edges=chain_edges,
                    stencil_edges=np.asarray(list(zip(sj0, sj1)), dtype=np.int64).reshape(-1, 2),
                    stencil_vertex=np.asarray(sv, dtype=np.int64),
                    junction_pairs=np.asarray(jp, dtype=np.int64).reshape(-1, 2),
                    junction_vertex=np.asarray(jv, dtype=np.int64))
