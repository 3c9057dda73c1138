"""Stencils of the connections of a mixed model: which simplices meet where, and the terms of
:mod:`strandlab.mixed.joint_terms` over them.

- A **point** connection between parts A and B acts at every vertex they share (or the ones it
  names): one stencil per pair (simplex of A at the vertex, simplex of B at the vertex), rod
  edges, triangles or tetrahedra, each with the connection's stiffness divided by the number
  of pairs at that vertex (the paper's remedy for the bias of one chosen simplex, section
  3.3.1, applied to both sides).
- A **curve** connection acts along every edge the two parts share: a rod edge against each
  triangle of the other part on that edge (for a solid: the faces of its tetrahedra on the
  edge, section 4.2), or a triangle of one part against a triangle of the other (for a solid:
  its surface triangles on the edge, or every tetrahedron face on it for an edge inside the
  solid), with the stiffness per unit length divided by the number of pairs on the edge.
- **Junctions** of three or more rod edges: every pair of edges at the vertex is a rod-rod
  point connection with the rods' own stiffnesses, ``k_b = E I / ltilde`` and ``k_t = G J /
  ltilde`` (``ltilde`` the mean of the two rest lengths, as a discrete-elastic-rod stencil).

``"hard"`` connections use the penalty terms of the constraints (eqs. 1 and 6) with
``hard_stiffness``; ``"free"`` ones add nothing (the shared vertices make a ball joint, the
shared edges a hinge).  Rest angles are those of the initial configuration.
"""
from __future__ import annotations

import numpy as np

from ..sim.simplicial import boundary_faces
from .joint_terms import CurveHardTerm, CurveJointTerm, PointHardTerm, PointJointTerm
from .model import MixedModel

__all__ = ["connection_terms"]

_KIND = {"rod": "rod", "shell": "triangle", "solid": "tet"}


class _Incidence:
    """Which simplices of each part touch each vertex and edge (build time)."""

    def __init__(self, m: MixedModel, parts: dict):
        self.m = m
        self.parts = parts                   # global part id -> (kind, simplex indices)
        self.faces = boundary_faces(m.tets)

    def at_vertex(self, p: int, v: int) -> list:
        kind, idx = self.parts[p]
        cells = {"rod": self.m.rod_edges, "shell": self.m.triangles, "solid": self.m.tets}[kind]
        return [int(i) for i in idx if v in cells[i]]

    def triangles_on_edge(self, p: int, a: int, b: int) -> list:
        """Triangles (a, b, c) of part ``p`` on edge a-b, as third vertices c."""
        kind, idx = self.parts[p]
        out = []
        if kind == "shell":
            for i in idx:
                t = self.m.triangles[i]
                if a in t and b in t:
                    out.append(int(next(c for c in t if c not in (a, b))))
        elif kind == "solid":
            tets = [self.m.tets[i] for i in idx if a in self.m.tets[i] and b in self.m.tets[i]]
            members = {int(v) for t in tets for v in t}
            surface = [f for f in self.faces if a in f and b in f and set(f.tolist()) <= members]
            src = surface if surface else [t for t in tets]
            for f in src:
                out += [int(c) for c in f if c not in (a, b)]
            out = sorted(set(out))
        return out


def _part_table(m: MixedModel, scene) -> tuple[dict, list]:
    """Global part ids: (kind, simplex indices) and the connections with global part ids."""
    parts, conns = {}, []
    counters = {"rod": 0, "shell": 0, "solid": 0}
    for k, spec in enumerate(scene.simplicial):
        base = len(parts)
        for kind, lab in (("rod", spec.rod_part), ("shell", spec.triangle_part),
                          ("solid", spec.tet_part)):
            for p in range(len(spec.parts)):
                if spec.parts[p].kind == kind:
                    parts[base + p] = (kind, counters[kind] + np.nonzero(lab == p)[0])
            counters[kind] += len(lab)
        off = int(m.mesh_vertex_start[k])
        conns += [(c, base, off) for c in spec.connections]
    return parts, conns


def _others(m: MixedModel, kind: str, i: int, v: int) -> tuple[list, bool]:
    """The other vertices of simplex ``i`` at ``v`` in the order the frames need; for a rod
    edge, whether it runs from ``v``."""
    if kind == "rod":
        a, b = m.rod_edges[i]
        return [int(b if a == v else a)], bool(a == v)
    cell = (m.triangles if kind == "shell" else m.tets)[i].tolist()
    k = cell.index(v)
    return [int(c) for c in cell[k + 1:] + cell[:k]], True


class _Stencils:
    def __init__(self):
        self.rows: dict = {}

    def add(self, key, dofs, k, extra):
        r = self.rows.setdefault(key, {"dofs": [], "k": [], "extra": []})
        r["dofs"].append(dofs)
        r["k"].append(k)
        r["extra"].append(extra)


def _point_stencils(m, inc, c, pa, pb, out: _Stencils, verts) -> None:
    nv = m.n_vertices
    ka, kb = inc.parts[pa][0], inc.parts[pb][0]
    for v in verts:
        sa, sb = inc.at_vertex(pa, v), inc.at_vertex(pb, v)
        pairs = [(i, j) for i in sa for j in sb]
        for i, j in pairs:
            oa, fa = _others(m, ka, i, v)
            ob, fb = _others(m, kb, j, v)
            dofs = [3 * v + r for r in range(3)]
            for o in oa + ob:
                dofs += [3 * o + r for r in range(3)]
            rods, fwd = [], []
            for kind, s, f in ((ka, i, fa), (kb, j, fb)):
                if kind == "rod":
                    dofs.append(3 * nv + s)
                    rods.append(s)
                    fwd.append(f)
            out.add(("point", c.mode, _KIND[ka], _KIND[kb], c.angle_update), dofs,
                    (c.twist_stiffness / len(pairs), c.bend_stiffness / len(pairs),
                     c.hard_stiffness / len(pairs)), (rods, fwd, 0.0))


def _shared_edges(m, inc, pa, pb) -> list:
    def edges(p):
        kind, idx = inc.parts[p]
        cells = {"rod": m.rod_edges, "shell": m.triangles, "solid": m.tets}[kind][idx]
        n = cells.shape[1]
        e = {tuple(sorted((int(t[a]), int(t[b])))) for t in cells for a in range(n)
             for b in range(a + 1, n)}
        return e
    return sorted(edges(pa) & edges(pb))


def _curve_stencils(m, inc, c, pa, pb, out: _Stencils) -> None:
    nv = m.n_vertices
    ka, kb = inc.parts[pa][0], inc.parts[pb][0]
    if kb == "rod":
        pa, pb, ka, kb = pb, pa, kb, ka
    x = m.rest_positions
    for a, b in _shared_edges(m, inc, pa, pb):
        length = float(np.linalg.norm(x[b] - x[a]))
        if ka == "rod":
            r = next(int(i) for i in inc.parts[pa][1] if set(m.rod_edges[i]) == {a, b})
            a, b = (int(v) for v in m.rod_edges[r])
            thirds = inc.triangles_on_edge(pb, a, b)
            for cc in thirds:
                dofs = [3 * w + k for w in (a, b, cc) for k in range(3)] + [3 * nv + r]
                out.add(("curve", c.mode, "rod", "triangle", c.angle_update), dofs,
                        (0.0, c.bend_stiffness / len(thirds), c.hard_stiffness / len(thirds)),
                        ([r], [True], length))
        else:
            ta, tb = inc.triangles_on_edge(pa, a, b), inc.triangles_on_edge(pb, a, b)
            pairs = [(p, q) for p in ta for q in tb if p != q]
            for p, q in pairs:
                dofs = [3 * w + k for w in (a, b, p, q) for k in range(3)]
                out.add(("curve", c.mode, "triangle", "triangle", c.angle_update), dofs,
                        (0.0, c.bend_stiffness / len(pairs), c.hard_stiffness / len(pairs)),
                        ([], [], length))


def _junction_stencils(m, graph_pairs, graph_vertex, out: _Stencils) -> None:
    if not len(graph_pairs):
        return
    nv = m.n_vertices
    mats = m.rod_section_stiffness
    for (r1, r2), v in zip(graph_pairs.tolist(), graph_vertex.tolist()):
        o1, f1 = _others(m, "rod", r1, v)
        o2, f2 = _others(m, "rod", r2, v)
        dofs = [3 * v + k for k in range(3)] + [3 * o1[0] + k for k in range(3)] + \
            [3 * o2[0] + k for k in range(3)] + [3 * nv + r1, 3 * nv + r2]
        lt = 0.5 * (m.rest_length[r1] + m.rest_length[r2])
        ei = 0.5 * (min(mats[r1][:2]) + min(mats[r2][:2]))
        gj = 0.5 * (mats[r1][2] + mats[r2][2])
        out.add(("point", "elastic", "rod", "rod", "incremental2"), dofs,
                (gj / lt, ei / lt, 0.0), ([r1, r2], [f1, f2], 0.0))


def connection_terms(m: MixedModel, frames) -> list:
    """The terms of the model's connections and rod junctions, rest states set at ``m.q0``;
    ``frames``: the rods' :class:`~strandlab.rods.frames.RodFrames` (its step-start arrays are
    shared with the terms)."""
    parts, conns = _part_table(m, m.scene)
    inc = _Incidence(m, parts)
    out = _Stencils()
    for c, base, off in conns:
        pa, pb = base + c.parts[0], base + c.parts[1]
        if c.mode == "free":
            continue
        if c.kind == "point":
            verts = sorted(set(_cells_vertices(m, parts[pa]).tolist())
                           & set(_cells_vertices(m, parts[pb]).tolist()))
            if c.vertices is not None:
                verts = [off + int(v) for v in c.vertices]
            _point_stencils(m, inc, c, pa, pb, out, verts)
        else:
            _curve_stencils(m, inc, c, pa, pb, out)
    _junction_stencils(m, m.junction_pairs, m.junction_vertex, out)
    terms = []
    a1s, ts = frames.a1_prev, frames.t_prev
    for key, r in out.rows.items():
        kind, mode, sa, sb, update = key
        dofs = np.asarray(r["dofs"], dtype=np.int64)
        k = np.asarray(r["k"], dtype=np.float64)
        rods = [e[0] for e in r["extra"]]
        rod_edge = np.asarray(rods, dtype=np.int64) if rods and rods[0] else None
        rod_kw = {} if rod_edge is None else {"rod_edge": rod_edge, "a1_start": a1s,
                                              "t_start": ts}
        name = f"{kind} {sa}-{sb} {mode}"
        if kind == "point":
            if rod_edge is not None:
                rod_kw["rod_forward"] = np.asarray([e[1] for e in r["extra"]], dtype=bool)
            if mode == "hard":
                t = PointHardTerm(kinds=(sa, sb), dofs=dofs, stiffness=k[:, 2], name=name,
                                  **rod_kw)
            else:
                t = PointJointTerm(kinds=(sa, sb), dofs=dofs, twist_stiffness=k[:, 0],
                                   bend_stiffness=k[:, 1], mode=update, name=name, **rod_kw)
        else:
            length = np.asarray([e[2] for e in r["extra"]], dtype=np.float64)
            if mode == "hard":
                t = CurveHardTerm(kinds=(sa, sb), dofs=dofs, stiffness=k[:, 2],
                                  rest_length=length, name=name, **rod_kw)
            else:
                t = CurveJointTerm(kinds=(sa, sb), dofs=dofs, stiffness=k[:, 1],
                                   rest_length=length, mode=update, name=name, **rod_kw)
        t.set_rest(m.q0)
        terms.append(t)
    return terms


def _cells_vertices(m: MixedModel, part) -> np.ndarray:
    kind, idx = part
    cells = {"rod": m.rod_edges, "shell": m.triangles, "solid": m.tets}[kind]
    return np.unique(cells[idx])
