"""Compile a solver-neutral :class:`~strandlab.sim.scene.Scene` into a :class:`DERModel`.

Material mapping (``../shared/notes/sag_free_formulation.md``, "Energies"), with the section
radius ``r`` per vertex (tapered hair; an edge takes the mean of its two vertices):

- stretching per edge: ``k_s = E A`` [N] (``A = pi r^2``);
- bending per inner vertex: ``(k1, k2) = (E I2, E I1)`` [N m^2] (``I = pi r^4 / 4``), ``k1``
  weighting the curvature component ``kb . m2`` and ``k2`` the component ``-kb . m1``;
- twisting per inner vertex: ``k_t = G J`` [N m^2] (``J = pi r^4 / 2``);
- mass per vertex ``rho A ltilde`` (end vertices half their one edge) and rotational inertia per
  edge ``rho (I1 + I2) lbar`` [kg m^2].

A rectangular section keeps the material's section (no taper).  Strand options under
``options["der"]`` (see :data:`DER_STRAND_OPTIONS`) override the stiffnesses or give the rest
shape explicitly (the sag-free optimizer hands its result over in this form).
"""
from __future__ import annotations

import numpy as np

from ..geometry.transport import material_directions
from ..rods.rest import stencil_rest_values
from ..sim.scene import Scene, UnsupportedFeature, options_of
from ..sim.validate import check_memory
from .model import DERModel

__all__ = ["compile_scene", "DER_STRAND_OPTIONS", "rest_values"]

#: Strand options of the discrete-elastic-rods solver (``options={"der": {...}}``):
#: ``stretch_stiffness`` [N], ``bend_stiffness`` [N m^2] (one value, or two: k1, k2),
#: ``twist_stiffness`` [N m^2] (each a scalar, or one value per edge / per bend stencil);
#: ``rest_length`` [m] per edge, ``rest_curvature`` [B, 4], ``rest_twist`` [rad] per stencil.
DER_STRAND_OPTIONS = ("stretch_stiffness", "bend_stiffness", "twist_stiffness", "rest_length",
                      "rest_curvature", "rest_twist")


def _edges(n: int, closed: bool):
    ne = n if closed else n - 1
    return ne, np.arange(ne), (np.arange(1, ne + 1) % n)


def _bend_edges(n: int, closed: bool):
    """(j0, j1, centre vertex) of each bend stencil of a strand of ``n`` vertices."""
    if closed:
        v = np.arange(n)
        return (v - 1) % n, v, v
    v = np.arange(1, n - 1)
    return v - 1, v, v


def rest_values(points: np.ndarray, d1: np.ndarray, *, closed: bool, label: str = "strand"):
    """Rest lengths [E], 4-D curvatures [B, 4] and twists [B] of a polyline whose material
    directions are ``d1`` [E, 3] (edge angles zero against them).

    The twist of a stencil is the reference twist between its edges' directions (the signed angle
    from the parallel transport of ``d1_j0`` onto edge ``j1`` to ``d1_j1``).  ValueError naming
    the vertex where the polyline turns back on itself (a 180 degree fold has no curvature
    binormal).
    """
    p = np.asarray(points, dtype=np.float64)
    n = len(p)
    ne, i0, i1 = _edges(n, closed)
    e = p[i1] - p[i0]
    length = np.linalg.norm(e, axis=1)
    j0, j1, vc = _bend_edges(n, closed)
    kappa, twist = stencil_rest_values(e[j0], e[j1], d1[j0], d1[j1], label=label, where=vc)
    return length, kappa, twist


def _per(name, value, n, label, cols=None):
    """An option value as an array of ``n`` rows (scalar broadcast), checked positive."""
    a = np.asarray(value, dtype=np.float64)
    shape = (n,) if cols is None else (n, cols)
    try:
        a = np.broadcast_to(a, shape).copy()
    except ValueError:
        raise ValueError(f"{label}: der option {name!r} has shape {a.shape}; expected a scalar "
                         f"or {shape}") from None
    bad = np.nonzero(~(np.isfinite(a) & (a > 0)).reshape(n, -1).all(axis=1))[0]
    if len(bad):
        raise ValueError(f"{label}: der option {name!r} must be positive and finite (entry "
                         f"{int(bad[0])})")
    return a


def _explicit(name, value, shape, label):
    a = np.asarray(value, dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"{label}: der option {name!r} has shape {a.shape}, expected {shape} "
                         "(inconsistent with the strand)")
    bad = np.nonzero(~np.isfinite(a).reshape(shape[0], -1).all(axis=1))[0]
    if len(bad):
        raise ValueError(f"{label}: der option {name!r} is not finite at entry {int(bad[0])}")
    return a


def _check_strand(s: int, st) -> None:
    label = st.label(s)
    n = st.n_vertices
    if n < 3:
        raise ValueError(f"{label}: a discrete elastic rod needs at least 3 "
                         f"vertices, got {n}")
    for what, pts in (("points", st.points), ("rest_points", st.rest_points)):
        bad = np.nonzero(~np.isfinite(pts).all(axis=1))[0]
        if len(bad):
            raise ValueError(f"{label}: {what} of vertex {int(bad[0])} is not "
                             "finite")
        ne, i0, i1 = _edges(n, st.closed)
        ln = np.linalg.norm(pts[i1] - pts[i0], axis=1)
        scale = max(float(np.max(np.abs(pts))), 1e-300)
        bad = np.nonzero(ln <= 1e-12 * scale)[0]
        if len(bad):
            raise ValueError(f"{label}: {what} of vertices {int(i0[bad[0]])} and "
                             f"{int(i1[bad[0]])} coincide (zero-length edge {int(bad[0])})")
    bad = np.nonzero(~(np.isfinite(st.radius) & (st.radius > 0)))[0]
    if len(bad):
        raise ValueError(f"{label}: radius of vertex {int(bad[0])} must be positive "
                         "and finite")


def compile_scene(scene: Scene) -> DERModel:
    """The discrete-elastic-rods model of ``scene``.

    ValueError naming the strand and vertex for degenerate input (fewer than 3 vertices,
    coincident vertices, non-finite values, bad options, an inconsistent explicit rest shape);
    :class:`~strandlab.sim.scene.UnsupportedFeature` for meshes, bodies and sliding ends.
    """
    if not isinstance(scene, Scene):
        raise TypeError(f"expected a strandlab Scene, got {type(scene).__name__}")
    scene.require_rods_only("der")
    for s, st in enumerate(scene.strands):
        _check_strand(s, st)
    with np.errstate(all="ignore"):
        return _compile(scene)


def _compile(scene: Scene) -> DERModel:
    strands = scene.strands
    ns = len(strands)
    nv = scene.n_vertices
    ne = scene.n_edges
    nb_list = [st.n_vertices if st.closed else st.n_vertices - 2 for st in strands]
    nb = int(sum(nb_list))
    ndof = 3 * nv + ne
    # model arrays, state and the integrator's per-stencil Hessians (11 x 11 per bend stencil)
    check_memory(8.0 * (ndof * 16 + nb * 160 + ne * 50), f"the discrete-elastic-rods model of "
                 f"{nv:,} vertices")
    vstart = np.asarray(scene.strand_vertex_offsets, dtype=np.int64)
    estart = np.asarray(scene.strand_edge_offsets, dtype=np.int64)
    bstart = np.zeros(ns + 1, dtype=np.int64)
    bstart[1:] = np.cumsum(nb_list)
    dstart = np.zeros(ns + 1, dtype=np.int64)
    vertex_dof = np.zeros(nv, dtype=np.int64)
    vertex_strand = np.zeros(nv, dtype=np.int64)
    edge_dof = np.zeros(ne, dtype=np.int64)
    edge_v0 = np.zeros(ne, dtype=np.int64)
    edge_v1 = np.zeros(ne, dtype=np.int64)
    rest_length = np.zeros(ne)
    ks = np.zeros(ne)
    bend_edges = np.zeros((nb, 2), dtype=np.int64)
    bend_vertex = np.zeros(nb, dtype=np.int64)
    kb = np.zeros((nb, 2))
    kt = np.zeros(nb)
    kappa_bar = np.zeros((nb, 4))
    tau_bar = np.zeros(nb)
    mass = np.zeros(ndof)
    q0 = np.zeros(ndof)
    v0 = np.zeros(ndof)
    a1 = np.zeros((ne, 3))
    ref_twist0 = np.zeros(nb)
    radius = np.zeros(nv)
    friction = np.full(nv, np.nan)
    for s, st in enumerate(strands):
        label = st.label(s)
        opts = dict(options_of(st, "der", DER_STRAND_OPTIONS))
        n = st.n_vertices
        va, e0, b0 = int(vstart[s]), int(estart[s]), int(bstart[s])
        n_e, i0, i1 = _edges(n, st.closed)
        j0, j1, vc = _bend_edges(n, st.closed)
        n_b = len(vc)
        d0 = int(dstart[s])
        dstart[s + 1] = d0 + 3 * n + n_e
        vd = d0 + 4 * np.arange(n)
        vertex_dof[va:va + n] = vd
        vertex_strand[va:va + n] = s
        edge_dof[e0:e0 + n_e] = vd[:n_e] + 3
        edge_v0[e0:e0 + n_e] = va + i0
        edge_v1[e0:e0 + n_e] = va + i1
        bend_edges[b0:b0 + n_b] = np.stack([e0 + j0, e0 + j1], axis=1)
        bend_vertex[b0:b0 + n_b] = va + vc
        radius[va:va + n] = st.radius
        if st.friction is not None:
            friction[va:va + n] = st.friction
        # rest shape
        d_rest = material_directions(st.rest_points, closed=st.closed, d1=st.d1,
                                     gravity=scene.gravity, label=label)
        lbar, kap, tau = rest_values(st.rest_points, d_rest, closed=st.closed, label=label)
        if "rest_length" in opts:
            lbar = _per("rest_length", opts["rest_length"], n_e, label)
        if "rest_curvature" in opts:
            kap = _explicit("rest_curvature", opts["rest_curvature"], (n_b, 4), label)
        if "rest_twist" in opts:
            tau = _explicit("rest_twist", opts["rest_twist"], (n_b,), label)
        # initial state: twist-free material frames on the initial points; the initial twist
        # goes into the edge angles
        same = np.array_equal(st.points, st.rest_points)
        d_init = d_rest if same else material_directions(
            st.points, closed=st.closed, d1=st.d1, gravity=scene.gravity, label=label)
        _, kap_init, tw_init = rest_values(st.points, d_init, closed=st.closed, label=label)
        del kap_init
        ln0 = np.linalg.norm(st.points[i1] - st.points[i0], axis=1)
        theta = st.initial_twist * (np.cumsum(ln0) - 0.5 * ln0) / np.sum(ln0)
        if st.closed and st.initial_twist != 0.0:
            # a twisted ring: the seam between the last edge and the first carries the jump of
            # the angles, so that every stencil holds the same excess twist
            tau = tau.copy()
            tau[0] -= st.initial_twist
        a1[e0:e0 + n_e] = d_init
        ref_twist0[b0:b0 + n_b] = tw_init
        q0[vd[:, None] + np.arange(3)] = st.points
        q0[vd[:n_e] + 3] = theta
        v0[vd[:, None] + np.arange(3)] = st.velocities
        # sections and stiffness
        mat = st.material
        scale_v = np.ones(n) if mat.is_rectangular else st.radius / float(mat.radius)
        scale_e = 0.5 * (scale_v[i0] + scale_v[i1])
        area_v = mat.area * scale_v ** 2
        area_e = mat.area * scale_e ** 2
        k11, k22, k33 = mat.stiffness
        rest_length[e0:e0 + n_e] = lbar
        ks[e0:e0 + n_e] = mat.young_modulus * area_e
        kb[b0:b0 + n_b, 0] = k22 * scale_v[vc] ** 4
        kb[b0:b0 + n_b, 1] = k11 * scale_v[vc] ** 4
        kt[b0:b0 + n_b] = k33 * scale_v[vc] ** 4
        if "stretch_stiffness" in opts:
            ks[e0:e0 + n_e] = _per("stretch_stiffness", opts["stretch_stiffness"], n_e, label)
        if "bend_stiffness" in opts:
            v = np.asarray(opts["bend_stiffness"], dtype=np.float64)
            if v.ndim == 1 and v.shape == (2,) and n_b != 2:
                v = v[None, :]
            elif v.ndim == 1 and v.shape == (n_b,):
                v = v[:, None]
            kb[b0:b0 + n_b] = _per("bend_stiffness", v, n_b, label, cols=2)
        if "twist_stiffness" in opts:
            kt[b0:b0 + n_b] = _per("twist_stiffness", opts["twist_stiffness"], n_b, label)
        kappa_bar[b0:b0 + n_b] = kap
        tau_bar[b0:b0 + n_b] = tau
        # inertia
        m_v = np.zeros(n)
        np.add.at(m_v, i0, 0.5 * mat.density * area_v[i0] * lbar)
        np.add.at(m_v, i1, 0.5 * mat.density * area_v[i1] * lbar)
        mass[vd[:, None] + np.arange(3)] = m_v[:, None]
        mass[vd[:n_e] + 3] = mat.polar_inertia_per_length * scale_e ** 4 * lbar
    stretch_dofs = np.concatenate([vertex_dof[edge_v0, None] + np.arange(3),
                                   vertex_dof[edge_v1, None] + np.arange(3)], axis=1)
    bv = bend_vertex
    prev_v, next_v = edge_v0[bend_edges[:, 0]], edge_v1[bend_edges[:, 1]]
    bend_dofs = np.concatenate([vertex_dof[prev_v, None] + np.arange(3),
                                edge_dof[bend_edges[:, 0], None],
                                vertex_dof[bv, None] + np.arange(3),
                                edge_dof[bend_edges[:, 1], None],
                                vertex_dof[next_v, None] + np.arange(3)], axis=1)
    voronoi = 0.5 * (rest_length[bend_edges[:, 0]] + rest_length[bend_edges[:, 1]])
    bc = _boundary(scene, vertex_dof, edge_dof, estart, ndof, q0, a1)
    loads = np.array([int(vstart[ld.strand]) + ld.vertex for ld in scene.loads], dtype=np.int64)
    planes, spheres, capsules, cfric = scene.collider_arrays("der")
    model = DERModel(
        scene=scene, gravity=np.asarray(scene.gravity, dtype=np.float64),
        strand_vertex_start=vstart, strand_edge_start=estart, strand_dof_start=dstart,
        strand_bend_start=bstart, strand_closed=np.array([st.closed for st in strands], bool),
        vertex_dof=vertex_dof, vertex_strand=vertex_strand, edge_dof=edge_dof, edge_v0=edge_v0,
        edge_v1=edge_v1, stretch_dofs=stretch_dofs, rest_length=rest_length,
        stretch_stiffness=ks, bend_dofs=bend_dofs, bend_edges=bend_edges, bend_vertex=bv,
        voronoi_length=voronoi, bend_stiffness=kb, twist_stiffness=kt,
        rest_curvature=kappa_bar, rest_twist=tau_bar, mass=mass, q0=q0, v0=v0, a1_0=a1,
        ref_twist0=ref_twist0, load_vertex=loads, vertex_radius=radius,
        vertex_friction=friction, planes=planes, spheres=spheres, capsules=capsules,
        collider_friction=cfric, **bc)
    for v in model.__dict__.values():
        if isinstance(v, np.ndarray):
            v.setflags(write=False)
    return model


def _boundary(scene, vertex_dof, edge_dof, estart, ndof, q0, a1) -> dict:
    """Dirichlet coordinates and the frames that drive them.

    A clamped end (``orientation=True``) holds its end vertex, the next vertex and the end
    edge's angle (the paper's root clamp); ``free_twist`` frees the angle (a swivel); a ball
    joint (``orientation=False``) holds the end vertex only.  Fixed vertices hold their
    position.  The frame's motion moves the held vertices and turns the held edge's d1.
    """
    fixed = np.zeros(ndof, dtype=bool)
    dv, dvf, dvl, de, def_, del_ = [], [], [], [], [], []
    vstart = scene.strand_vertex_offsets
    for s, st in enumerate(scene.strands):
        for v in st.fixed:
            fixed[vertex_dof[int(vstart[s]) + int(v)] + np.arange(3)] = True
    for a in scene.frame_attachments:
        st = scene.strands[a.strand]
        if st.closed:
            raise UnsupportedFeature(f"solver 'der' cannot clamp closed strand {a.strand} "
                                     f"({st.name}) to a frame")
        rot, origin = scene.frames[a.frame].pose(0.0)
        n = st.n_vertices
        v0 = int(vstart[a.strand])
        if a.end == 0:
            verts = [v0, v0 + 1] if a.orientation else [v0]
            edge = int(estart[a.strand])
        else:
            verts = [v0 + n - 1, v0 + n - 2] if a.orientation else [v0 + n - 1]
            edge = int(estart[a.strand + 1]) - 1
        for v in verts:
            fixed[vertex_dof[v] + np.arange(3)] = True
            dv.append(v)
            dvf.append(a.frame)
            dvl.append(rot.T @ (q0[vertex_dof[v] + np.arange(3)] - origin))
        if a.orientation and not a.free_twist:
            fixed[edge_dof[edge]] = True
            th = q0[edge_dof[edge]]
            t = q0[vertex_dof[v0 + 1 if a.end == 0 else v0 + n - 1] + np.arange(3)] - \
                q0[vertex_dof[v0 if a.end == 0 else v0 + n - 2] + np.arange(3)]
            t = t / np.linalg.norm(t)
            m1 = np.cos(th) * a1[edge] + np.sin(th) * np.cross(t, a1[edge])
            de.append(edge)
            def_.append(a.frame)
            del_.append(rot.T @ m1)

    def arr(x, shape, dtype=np.float64):
        return np.asarray(x, dtype=dtype).reshape(shape)

    return {"fixed": fixed, "drive_vertex": arr(dv, (-1,), np.int64),
            "drive_vertex_frame": arr(dvf, (-1,), np.int64),
            "drive_vertex_local": arr(dvl, (-1, 3)), "drive_edge": arr(de, (-1,), np.int64),
            "drive_edge_frame": arr(def_, (-1,), np.int64), "drive_edge_local": arr(del_, (-1, 3))}


