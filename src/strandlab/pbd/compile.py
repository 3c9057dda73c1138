"""Compile a solver-neutral :class:`~strandlab.sim.scene.Scene` into flat arrays (PBDModel).

Strand options understood under ``options["pbd"]``: ``ghost_distance`` [m] (ghost point distance
from its edge; default the mean rest edge length), ``alpha`` (three stiffness alphas in [0, 1]:
bend about d1, bend about d2, twist; default derived from the material), ``ghost_mass_ratio``
(ghost mass as a fraction of its edge's mass; default the physical ``rho (I1 + I2) L / l_g^2``).
"""
from __future__ import annotations

import numpy as np

from ..geometry.darboux import darboux_all
from ..geometry.frames import frame_of
from ..geometry.transport import material_directions, rotate_about
from ..sim.scene import Scene, options_of
from ..sim.validate import check_alpha, check_memory, check_positive
from .model import POINT_BODY, POINT_FRAME, POINT_GHOST, POINT_MESH, POINT_VERTEX, PBDModel

__all__ = ["compile_scene", "PBD_STRAND_OPTIONS"]

#: Strand options of the position-based solver (``options={"pbd": {...}}``).
PBD_STRAND_OPTIONS = ("ghost_distance", "alpha", "ghost_mass_ratio")


def _pbd_options(st) -> dict:
    """The strand's ``pbd`` options, checked (errors name the strand and the option)."""
    opts = dict(options_of(st, "pbd", PBD_STRAND_OPTIONS))
    out = {"ghost_distance": None, "alpha": None, "ghost_mass_ratio": None}
    if opts.get("ghost_distance") is not None:
        out["ghost_distance"] = check_positive(f"{st.name} ghost_distance", opts["ghost_distance"])
    if opts.get("alpha") is not None:
        out["alpha"] = check_alpha(f"{st.name} alpha", opts["alpha"])
    if opts.get("ghost_mass_ratio") is not None:
        out["ghost_mass_ratio"] = check_positive(f"{st.name} ghost_mass_ratio",
                                                 opts["ghost_mass_ratio"])
    return out


def _edge_sections(st, lr):
    """Per-edge area [m^2], stiffness (E I1, E I2, G J) [N m^2] and rho (I1 + I2) [kg m] of a
    strand whose section radius may vary along it (a round section scales with the mean radius
    of the edge's two vertices; a rectangular section is the material's)."""
    mat = st.material
    ne = len(lr)
    if mat.is_rectangular:
        scale = np.ones(ne)
    else:
        r = st.radius
        re = 0.5 * (r[:ne] + r[(np.arange(ne) + 1) % len(r)])
        scale = re / float(mat.radius)
    area = mat.area * scale ** 2
    stiff = np.asarray(mat.stiffness)[None, :] * (scale ** 4)[:, None]
    inertia = mat.polar_inertia_per_length * scale ** 4
    return area, stiff, inertia


def _edge_layout(st, v0):
    n = len(st.points)
    ne = n if st.closed else n - 1
    p0 = v0 + np.arange(ne)
    p1 = v0 + (np.arange(1, ne + 1) % n if st.closed else np.arange(1, ne + 1))
    return ne, p0, p1


def compile_scene(scene: Scene) -> PBDModel:
    """The position-based model of ``scene`` (see :class:`~strandlab.pbd.model.PBDModel`).

    Every degenerate input is reported by a ValueError naming the strand and item; numpy's
    floating-point warnings are silenced while compiling so that they do not precede it.
    """
    if not isinstance(scene, Scene):
        raise TypeError(f"expected a strandlab Scene, got {type(scene).__name__}")
    scene.require_no_simplicial("pbd")
    with np.errstate(all="ignore"):
        return _compile(scene)


def _compile(scene: Scene) -> PBDModel:
    strands = scene.strands
    opts = [_pbd_options(st) for st in strands]
    n_pts = scene.n_vertices + scene.n_edges + scene.extra_layout()["n"]
    # model arrays and the solver's scratch: about 600 bytes per point (vertex or ghost)
    check_memory(600.0 * n_pts, f"the position-based model of {n_pts:,} points")
    nv = sum(len(s.points) for s in strands)
    ne_list = [len(s.points) if s.closed else len(s.points) - 1 for s in strands]
    ne = sum(ne_list)

    # ---- strand vertices
    vstart = np.zeros(len(strands) + 1, dtype=np.int64)
    estart = np.zeros(len(strands) + 1, dtype=np.int64)
    ostart = np.zeros(len(strands) + 1, dtype=np.int64)
    for s, st in enumerate(strands):
        vstart[s + 1] = vstart[s] + len(st.points)
        estart[s + 1] = estart[s] + ne_list[s]
        no = ne_list[s] if st.closed else ne_list[s] - 1
        ostart[s + 1] = ostart[s] + no
    x0 = np.zeros((nv + ne, 3))
    xr = np.zeros((nv + ne, 3))
    v0 = np.zeros((nv + ne, 3))
    m = np.zeros(nv + ne)
    k = np.zeros(nv + ne, dtype=np.int64)
    own = np.full(nv + ne, -1, dtype=np.int64)
    cr = np.zeros(nv + ne)
    edge_p0 = np.zeros(ne, dtype=np.int64)
    edge_p1 = np.zeros(ne, dtype=np.int64)
    edge_rest = np.zeros(ne)
    ghost_rest = np.zeros(ne)
    edge_stretch = np.zeros(ne)
    edge_stiff = np.zeros((ne, 3))
    no_total = int(ostart[-1])
    oe_idx = np.zeros((no_total, 6), dtype=np.int64)
    oe_len = np.zeros(no_total)
    oe_stiff = np.zeros((no_total, 3))
    oe_alpha = np.full((no_total, 3), np.nan)
    materials = []
    strand_mat = np.zeros(len(strands), dtype=np.int64)
    pfric = np.full(nv + ne, np.nan)
    for s, st in enumerate(strands):
        opt = opts[s]
        if st.material not in materials:
            materials.append(st.material)
        strand_mat[s] = materials.index(st.material)
        a, bnd = int(vstart[s]), int(vstart[s + 1])
        e0, e1 = int(estart[s]), int(estart[s + 1])
        x0[a:bnd] = st.points
        xr[a:bnd] = st.rest_points
        v0[a:bnd] = st.velocities
        k[a:bnd] = POINT_VERTEX
        own[a:bnd] = s
        cr[a:bnd] = st.radius
        if st.friction is not None:
            pfric[a:bnd] = st.friction
        n_e, p0, p1 = _edge_layout(st, a)
        edge_p0[e0:e1] = p0
        edge_p1[e0:e1] = p1
        lr = np.linalg.norm(xr[p1] - xr[p0], axis=1)
        edge_rest[e0:e1] = lr
        lg = float(np.mean(lr)) if opt["ghost_distance"] is None else opt["ghost_distance"]
        ghost_rest[e0:e1] = lg
        area, stiff, inertia = _edge_sections(st, lr)
        edge_stretch[e0:e1] = st.material.young_modulus * area
        edge_stiff[e0:e1] = stiff
        gidx = nv + np.arange(e0, e1)
        d_init = material_directions(st.points, closed=st.closed, d1=st.d1, gravity=scene.gravity,
                                     label=st.name)
        same_rest = np.array_equal(st.points, st.rest_points)
        d_rest = d_init if same_rest else material_directions(
            st.rest_points, closed=st.closed, d1=st.d1, gravity=scene.gravity, label=st.name)
        if st.initial_twist != 0.0:
            ln0 = np.linalg.norm(x0[p1] - x0[p0], axis=1)
            s_mid = np.cumsum(ln0) - 0.5 * ln0
            t0 = (x0[p1] - x0[p0]) / ln0[:, None]
            d_init = rotate_about(d_init, t0, st.initial_twist * s_mid / np.sum(ln0))
        x0[gidx] = 0.5 * (x0[p0] + x0[p1]) + lg * d_init
        xr[gidx] = 0.5 * (xr[p0] + xr[p1]) + lg * d_rest
        v0[gidx] = 0.5 * (v0[p0] + v0[p1])
        k[gidx] = POINT_GHOST
        own[gidx] = s
        if st.friction is not None:
            pfric[gidx] = st.friction
        # masses: edge mass rho A L split between the end points and the ghost point
        me = st.material.density * area * lr
        if opt["ghost_mass_ratio"] is not None:
            mg = opt["ghost_mass_ratio"] * me
        else:
            mg = inertia * lr / lg ** 2
        mg = np.minimum(mg, 0.5 * me)
        m[gidx] = mg
        np.add.at(m, p0, 0.5 * (me - mg))
        np.add.at(m, p1, 0.5 * (me - mg))
        # orientation elements between consecutive edges
        o0, o1 = int(ostart[s]), int(ostart[s + 1])
        ea = np.arange(e0, e0 + (o1 - o0))
        eb = e0 + (np.arange(1, o1 - o0 + 1) % n_e)
        oe_idx[o0:o1] = np.stack([edge_p0[ea], edge_p1[ea], nv + ea,
                                  edge_p0[eb], edge_p1[eb], nv + eb], axis=1)
        oe_len[o0:o1] = 0.5 * (lr[ea - e0] + lr[eb - e0])
        # the element between two edges takes the harmonic mean of their stiffnesses
        sa, sb = stiff[ea - e0], stiff[eb - e0]
        oe_stiff[o0:o1] = 2.0 * sa * sb / (sa + sb)
        if opt["alpha"] is not None:
            oe_alpha[o0:o1] = opt["alpha"]
        for vtx in st.fixed:
            m[a + vtx] = 0.0

    # ---- extra points: frames, meshes, bodies
    extra_x, extra_v, extra_m, extra_k = [], [], [], []
    base = nv + ne

    def add_points(p, vel, mass_each, kd):
        start = base + sum(len(e) for e in extra_x)
        extra_x.append(np.asarray(p, dtype=np.float64).reshape(-1, 3))
        extra_v.append(np.asarray(vel, dtype=np.float64).reshape(-1, 3))
        extra_m.append(np.broadcast_to(np.asarray(mass_each, dtype=np.float64),
                                       (len(extra_x[-1]),)).copy())
        extra_k.append(np.full(len(extra_x[-1]), kd, dtype=np.int64))
        return start

    frame_pts = []
    frame_pose0 = [f.pose(0.0) for f in scene.frames]
    for fi, (r, o) in enumerate(frame_pose0):
        # the frame's two axis points sit at the scale of the first attached strand's edges
        # (the points are kinematic: their distance only sets the numerical scale)
        size = scene.frame_size(fi)
        p = np.array([o, o + size * r[:, 0], o + size * r[:, 1]])
        frame_pts.append(add_points(p, np.zeros((3, 3)), 0.0, POINT_FRAME))
    mesh_start = []
    dist_i, dist_j, dist_rest, dist_comp = [], [], [], []
    tris = []
    for mesh in scene.meshes:
        nvm = len(mesh.vertices)
        mm = np.full(nvm, mesh.mass / nvm)
        mm[list(mesh.fixed)] = 0.0
        st0 = add_points(mesh.vertices, mesh.velocities, mm, POINT_MESH)
        mesh_start.append(st0)
        t = mesh.triangles
        tris.append(t + st0)
        ed = np.sort(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]), axis=1)
        ed = np.unique(ed, axis=0)
        dist_i.extend((st0 + ed[:, 0]).tolist())
        dist_j.extend((st0 + ed[:, 1]).tolist())
        dist_rest.extend(np.linalg.norm(mesh.vertices[ed[:, 0]] - mesh.vertices[ed[:, 1]],
                                        axis=1).tolist())
        dist_comp.extend([mesh.compliance] * len(ed))
    body_start = []
    for body in scene.bodies:
        c, r, sz = body.position, body.rotation, body.size
        p = np.array([c, c + sz * r[:, 0], c + sz * r[:, 1]])
        st0 = add_points(p, np.zeros((3, 3)), body.mass / 3.0, POINT_BODY)
        body_start.append(st0)
        for i, j in ((0, 1), (0, 2), (1, 2)):
            dist_i.append(st0 + i)
            dist_j.append(st0 + j)
            dist_rest.append(float(np.linalg.norm(p[i] - p[j])))
            dist_comp.append(0.0)
    if extra_x:
        ex = np.concatenate(extra_x)
        x0 = np.concatenate([x0, ex])
        xr = np.concatenate([xr, ex])
        v0 = np.concatenate([v0, np.concatenate(extra_v)])
        m = np.concatenate([m, np.concatenate(extra_m)])
        k = np.concatenate([k, np.concatenate(extra_k)])
        own = np.concatenate([own, np.full(len(ex), -1, dtype=np.int64)])
        pfric = np.concatenate([pfric, np.full(len(ex), np.nan)])
        crad = np.zeros(len(ex))
        for st0, mesh in zip(mesh_start, scene.meshes):
            crad[st0 - base: st0 - base + len(mesh.vertices)] = mesh.collide_radius
        cr = np.concatenate([cr, crad])

    # ---- rest Darboux vectors of interior elements
    oe_omega = np.zeros((no_total, 3))
    darboux_all(xr, oe_idx, oe_len, oe_omega)
    bad = np.nonzero(~np.all(np.isfinite(oe_omega), axis=1))[0]
    if len(bad):
        s = int(np.searchsorted(ostart, bad[0], side="right") - 1)
        raise ValueError(f"{strands[s].name}: rest frames of orientation element "
                         f"{int(bad[0] - ostart[s])} are degenerate or turn by 180 degrees")

    # ---- attachments
    co_idx, co_rot, co_len, co_stiff, co_alpha, co_strand, co_free = [], [], [], [], [], [], []
    pin_point, pin_t, pin_w = [], [], []
    drv_p, drv_f, drv_l = [], [], []
    sl_p, sl_f, sl_l, sl_a = [], [], [], []

    def end_edge(s, end):
        e = int(estart[s]) if end == 0 else int(estart[s + 1]) - 1
        vtx = int(vstart[s]) if end == 0 else int(vstart[s + 1]) - 1
        return e, vtx

    def add_coupling(a3, s, e, free_twist=False):
        bidx = [int(edge_p0[e]), int(edge_p1[e]), nv + e]
        fa = frame_of(*x0[a3])
        fb = frame_of(*x0[bidx])
        co_idx.append(list(a3) + bidx)
        co_rot.append(fa.T @ fb)
        co_len.append(0.5 * edge_rest[e])
        co_stiff.append(edge_stiff[e])
        alpha = opts[s]["alpha"]
        co_alpha.append(alpha if alpha is not None else (np.nan,) * 3)
        co_strand.append(s)
        co_free.append((False, False, bool(free_twist)))

    for fi, (r, o) in enumerate(frame_pose0):
        st0 = frame_pts[fi]
        for q in range(3):
            drv_p.append(st0 + q)
            drv_f.append(fi)
            drv_l.append(r.T @ (x0[st0 + q] - o))
    for a in scene.frame_attachments:
        s = a.strand
        r, o = frame_pose0[a.frame]
        e, vtx = end_edge(s, a.end)
        if a.slide_axis is None:
            m[vtx] = 0.0
            drv_p.append(vtx)
            drv_f.append(a.frame)
            drv_l.append(r.T @ (x0[vtx] - o))
        else:
            sl_p.append(vtx)
            sl_f.append(a.frame)
            sl_l.append(r.T @ (x0[vtx] - o))
            sl_a.append(np.asarray(a.slide_axis, dtype=np.float64))
        if a.orientation:
            st0 = frame_pts[a.frame]
            add_coupling([st0, st0 + 1, st0 + 2], s, e, a.free_twist)
    for a in scene.triangle_attachments:
        s = a.strand
        e, vtx = end_edge(s, a.end)
        tri = scene.meshes[a.mesh].triangles[a.triangle] + mesh_start[a.mesh]
        bary = np.asarray(a.barycentric)
        pin_point.append(vtx)
        pin_t.append(tri)
        pin_w.append(bary)
        add_coupling([int(t) for t in tri], s, e)
    for a in scene.body_attachments:
        s = a.strand
        e, vtx = end_edge(s, a.end)
        st0 = body_start[a.body]
        pin_point.append(vtx)
        pin_t.append([st0, st0, st0])
        pin_w.append([1.0, 0.0, 0.0])
        if a.orientation:
            add_coupling([st0, st0 + 1, st0 + 2], s, e)
    load_point = [int(vstart[ld.strand]) + ld.vertex for ld in scene.loads]

    inv = np.where(m > 0.0, 1.0 / np.where(m > 0.0, m, 1.0), 0.0)
    cols = scene.colliders
    planes = [np.r_[c.params["point"], c.params["normal"]] for c in cols if c.kind == "plane"]
    spheres = [np.r_[c.params["center"], c.params["radius"]] for c in cols if c.kind == "sphere"]
    caps = [np.r_[c.params["a"], c.params["b"], c.params["radius"]] for c in cols
            if c.kind == "capsule"]
    fric = [c.friction for kind in ("plane", "sphere", "capsule") for c in cols if c.kind == kind]

    def arr(lst, shape, dtype=np.float64):
        return np.array(lst, dtype=dtype).reshape(shape) if lst else np.zeros(
            tuple(0 if d == -1 else d for d in shape), dtype=dtype)

    return PBDModel(
        gravity=scene.gravity.copy(), x0=x0, v0=v0, mass=m, inv_mass=inv, point_kind=k,
        point_strand=own, collide_radius=cr,
        strand_vertex_start=vstart, strand_edge_start=estart, strand_oe_start=ostart,
        strand_closed=np.array([s.closed for s in strands], dtype=bool),
        strand_radius=np.array([float(np.max(s.radius)) for s in strands]),
        strand_material=strand_mat,
        edge_p0=edge_p0, edge_p1=edge_p1, edge_ghost=nv + np.arange(ne, dtype=np.int64),
        edge_rest_length=edge_rest, ghost_rest_distance=ghost_rest, edge_stretch=edge_stretch,
        oe_idx=oe_idx, oe_rest_omega=oe_omega, oe_rest_length=oe_len, oe_stiffness=oe_stiff,
        oe_alpha=oe_alpha,
        co_idx=arr(co_idx, (-1, 6), np.int64), co_rot=arr(co_rot, (-1, 3, 3)),
        co_rest_length=arr(co_len, (-1,)), co_stiffness=arr(co_stiff, (-1, 3)),
        co_alpha=arr(co_alpha, (-1, 3)), co_strand=arr(co_strand, (-1,), np.int64),
        co_free=arr(co_free, (-1, 3), np.bool_),
        pin_point=arr(pin_point, (-1,), np.int64), pin_targets=arr(pin_t, (-1, 3), np.int64),
        pin_weights=arr(pin_w, (-1, 3)),
        dist_i=arr(dist_i, (-1,), np.int64), dist_j=arr(dist_j, (-1,), np.int64),
        dist_rest=arr(dist_rest, (-1,)), dist_compliance=arr(dist_comp, (-1,)),
        frame_origin=arr([o for _, o in frame_pose0], (-1, 3)),
        frame_rotation=arr([r for r, _ in frame_pose0], (-1, 3, 3)),
        frame_moving=np.array([f.motion.moves for f in scene.frames], dtype=np.bool_),
        driven_point=arr(drv_p, (-1,), np.int64), driven_frame=arr(drv_f, (-1,), np.int64),
        driven_local=arr(drv_l, (-1, 3)),
        slide_point=arr(sl_p, (-1,), np.int64), slide_frame=arr(sl_f, (-1,), np.int64),
        slide_local=arr(sl_l, (-1, 3)), slide_axis=arr(sl_a, (-1, 3)),
        load_point=arr(load_point, (-1,), np.int64),
        planes=arr(planes, (-1, 6)), spheres=arr(spheres, (-1, 4)), capsules=arr(caps, (-1, 7)),
        collider_friction=arr(fric, (-1,)), point_friction=pfric,
        mesh_triangles=np.concatenate(tris) if tris else np.zeros((0, 3), dtype=np.int64),
        materials=tuple(materials), scene=scene,
    )
