"""Scene meshes as shape-matched particle clusters, and strand ends tied to them (compile time).

The csm solver reads each of the scene's triangle meshes as one *cluster*: its vertices are
particles of equal mass (the mesh's mass over its vertex count), matched every substep to the
rigidly moved rest shape of the whole mesh (one region: the particle-based rigid bodies the
paper uses for the boards and crates of its Fig. 9).  A mesh of edge compliance 0 is rigid; a
compliance ``c`` [m/N] makes it soft: each particle moves the fraction
``1 / (1 + c m_i / h^2)`` of the way to its goal per substep (the share of a constraint of that
compliance against the particle's mass, as in XPBD).  The mesh's ``collide_radius`` is the
radius of its particles as spheres in contacts; fixed vertices are held.

A triangle attachment ties a strand end to the barycentric point of its triangle, which
moves with the cluster, and holds the material frame of the end segment to the cluster's
rotation (the scene's meaning: the end edge's frame follows the triangle's).  The strain
limiting sees the tied end as the cluster itself (its rigid-body mass at that point; the
strands tied to one cluster take turns), and the twist of the end segment turns the cluster
back (its torque about the segment).
"""
from __future__ import annotations

import numpy as np

from ..sim.scene import Scene, UnsupportedFeature

__all__ = ["compile_clusters"]


def _grow(a: np.ndarray, n: int, fill=0) -> np.ndarray:
    """``a`` extended to ``n`` rows with ``fill``."""
    out = np.full((n, *a.shape[1:]), fill, dtype=a.dtype)
    out[:len(a)] = a
    return out


def compile_clusters(scene: Scene, ar, dr: dict) -> dict:
    """Extend the particle arrays of ``ar`` (strand vertices) by the meshes' vertices and
    build the cluster and tie arrays.  Returns the model fields (see
    :class:`~strandlab.csm.model.ModelArrays`) and the extended drives."""
    nv = scene.n_vertices
    meshes = scene.meshes
    counts = [len(me.vertices) for me in meshes]
    n_total = nv + int(sum(counts))
    start = np.r_[nv, nv + np.cumsum(counts)].astype(np.int64) if meshes else \
        np.array([nv], np.int64)
    for name in ("mass", "radius", "beta", "x0", "v0"):
        setattr(ar, name, _grow(getattr(ar, name), n_total))
    ar.friction = _grow(ar.friction, n_total, np.nan)
    ar.vertex_edge = _grow(ar.vertex_edge, n_total, -1)
    ar.sm_w = _grow(ar.sm_w, n_total, 0)
    vertex_drive = _grow(dr["vertex_drive"], n_total, -1)
    dv, df, dl = list(dr["drive_vertex"]), list(dr["drive_frame"]), list(dr["drive_local"])
    rest = np.zeros((n_total, 3))
    vertex_cluster = np.full(n_total, -1, np.int64)
    compliance = np.zeros(len(meshes))
    for c, me in enumerate(meshes):
        s = slice(int(start[c]), int(start[c + 1]))
        ar.x0[s], ar.v0[s] = me.vertices, me.velocities
        ar.mass[s] = me.mass / len(me.vertices)
        ar.radius[s] = me.collide_radius
        rest[s] = me.vertices - me.vertices.mean(axis=0)
        vertex_cluster[s] = c
        compliance[c] = me.compliance
        for v in me.fixed:
            p = int(start[c]) + int(v)
            vertex_drive[p] = len(dv)
            dv.append(p)
            df.append(-1)
            dl.append(ar.x0[p])
    ties = _ties(scene, ar, start, rest, dr)
    drives = {"vertex_drive": vertex_drive,
              "drive_vertex": np.asarray(dv, np.int64).reshape(-1),
              "drive_frame": np.asarray(df, np.int64).reshape(-1),
              "drive_local": np.asarray(dl, np.float64).reshape(-1, 3)}
    return {"cluster_start": start, "cluster_rest": rest, "cluster_compliance": compliance,
            "vertex_cluster": vertex_cluster, **ties, **drives}


def _ties(scene: Scene, ar, start, rest, dr) -> dict:
    """The tie arrays of the triangle attachments; clamps the tied segments' twist (rows of
    ``twist_target`` after the frames')."""
    n_total = len(ar.x0)
    vertex_tie = np.full(n_total, -1, np.int64)
    edge_drive = dr["edge_drive"]
    tv, tc, tl, te, tsg, tw = [], [], [], [], [], []
    n_rows = len(dr["twist_frame"])
    vo, eo = scene.strand_vertex_offsets, scene.strand_edge_offsets
    for a in scene.triangle_attachments:
        st = scene.strands[a.strand]
        v = int(vo[a.strand]) + (0 if a.end == 0 else st.n_vertices - 1)
        e = int(eo[a.strand]) if a.end == 0 else int(eo[a.strand + 1]) - 1
        if vertex_tie[v] >= 0 or edge_drive[e] >= 0:
            raise UnsupportedFeature(f"solver 'csm': end {a.end} of strand {a.strand} is held "
                                     "twice (a frame and a mesh, or two meshes)")
        me = scene.meshes[a.mesh]
        tri = me.triangles[a.triangle]
        point = np.asarray(a.barycentric) @ me.vertices[tri]
        vertex_tie[v] = len(tv)
        edge_drive[e] = n_rows + len(tv)
        tv.append(v)
        tc.append(a.mesh)
        tl.append(point - me.vertices.mean(axis=0))
        te.append(e)
        tsg.append(1.0 if a.end != 0 else -1.0)
        tw.append(ar.d1_init[e])
    return {"vertex_tie": vertex_tie, "edge_drive": edge_drive,
            "tie_vertex": np.asarray(tv, np.int64).reshape(-1),
            "tie_cluster": np.asarray(tc, np.int64).reshape(-1),
            "tie_local": np.asarray(tl, np.float64).reshape(-1, 3),
            "tie_edge": np.asarray(te, np.int64).reshape(-1),
            "tie_sign": np.asarray(tsg, np.float64).reshape(-1),
            "tie_twist_local": np.asarray(tw, np.float64).reshape(-1, 3)}
