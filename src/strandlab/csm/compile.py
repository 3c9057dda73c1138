"""Compile a solver-neutral Scene into a chain-shape-matching model (docs/csm.md).

Material mapping (SI):

- particle masses: ``rho A L0`` of each segment, half to each end (``A = pi r^2`` with the
  segment's radius, the mean of its vertices');
- bending and stretching: shape matching of regions of half-width ``half_width`` (strand
  option, default :data:`DEFAULT_HALF_WIDTH`) with the solver's ``alpha``: not a modulus (see
  docs/csm.md for the measured bending stiffness of each width);
- twisting: ``beta = G J`` at every inner vertex (``J = pi r^4 / 2``, or the material's torsion
  constant for a rectangular section), or the ``twist_stiffness`` option [N m^2]; twist regions
  of half-width ``twist_half_width`` (one number, or one per segment for a non-uniform
  torsional rigidity; default ``half_width``);
- the stress-strain curve: Young's modulus ``E`` (elastic slope), ``plastic_modulus`` [Pa]
  (plastic slope, default ``E / 10``), ``yield_stress`` and ``rupture_stress`` [Pa] (default:
  never; a yield stress defaults to the rupture stress), ``rupture_variation`` (relative
  spread of the rupture stress along the string, default 1e-4, the paper's 0.01 %).
"""
from __future__ import annotations

import math

import numpy as np

from ..geometry.transport import edge_tangents, material_directions, twist_free_directions
from ..sim.scene import Scene, UnsupportedFeature, options_of
from ..sim.validate import check_memory
from .cluster_model import compile_clusters
from .model import CSMModel, ModelArrays

__all__ = ["compile_scene", "CSM_STRAND_OPTIONS", "DEFAULT_HALF_WIDTH"]

#: Strand options of the csm solver (``options={"csm": {...}}``).
CSM_STRAND_OPTIONS = ("half_width", "twist_half_width", "twist_stiffness", "yield_stress",
                      "rupture_stress", "plastic_modulus", "rupture_variation")
#: Shape-matching half-width when a strand sets none.
DEFAULT_HALF_WIDTH = 2


def _angles(u: np.ndarray, d: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Signed angles [rad] from ``u`` to ``d`` about ``t`` (all [n, 3])."""
    return np.arctan2(np.einsum("ij,ij->i", np.cross(u, d), t), np.einsum("ij,ij->i", u, d))


def _half_width(name, value, n_edges, label, per_edge=False):
    """A half-width option: an integer in [1, n_edges] (or one per segment)."""
    a = np.asarray(value)
    if per_edge and a.ndim == 1:
        if a.shape != (n_edges,):
            raise ValueError(f"{label}: csm option {name!r} has {a.shape[0]} values; expected "
                             f"one number or one per segment ({n_edges})")
    elif a.ndim != 0:
        raise ValueError(f"{label}: csm option {name!r} must be one integer, got shape "
                         f"{a.shape}")
    flat = a.reshape(-1)
    for k, w in enumerate(flat):
        where = f" (segment {k})" if a.ndim else ""
        try:
            whole = not isinstance(w, (bool, np.bool_)) and float(w).is_integer()
        except (TypeError, ValueError):
            whole = False
        if not whole:
            shown = w.item() if isinstance(w, np.generic) else w
            raise ValueError(f"{label}: csm option {name!r}{where} must be an integer, got "
                             f"{shown!r}")
        if w < 1:
            raise ValueError(f"{label}: csm option {name!r}{where} = {int(w)} is below 1")
        if w > n_edges:
            raise ValueError(f"{label}: csm option {name!r}{where} = {int(w)} is longer than "
                             f"the string ({n_edges} segments)")
    return np.broadcast_to(flat.astype(np.int64), (n_edges,)).copy() if a.ndim == 0 else \
        flat.astype(np.int64)


def _stress(name, opts, default, label, finite=False):
    """A positive stress or modulus option [Pa] (``default`` when absent); infinite (never)
    unless ``finite``."""
    if name not in opts:
        return default
    v = opts[name]
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{label}: csm option {name!r} must be a number, got {v!r}") from None
    if not (f > 0.0) or math.isnan(f):
        raise ValueError(f"{label}: csm option {name!r} must be positive, got {v!r}")
    if finite and math.isinf(f):
        raise ValueError(f"{label}: csm option {name!r} must be finite, got {v!r}")
    return f


def _material(opts, st, label):
    """Stress-strain parameters of a strand, checked (ValueError naming the strand)."""
    e = float(st.material.young_modulus)
    rs = _stress("rupture_stress", opts, math.inf, label)
    ys = _stress("yield_stress", opts, rs, label)   # default: brittle, no plastic range
    ep = _stress("plastic_modulus", opts, 0.1 * e, label, finite=True)
    if rs < ys:
        raise ValueError(f"{label}: csm option 'rupture_stress' ({rs:g} Pa) is below "
                         f"'yield_stress' ({ys:g} Pa)")
    if ep >= e:
        raise ValueError(f"{label}: csm option 'plastic_modulus' ({ep:g} Pa) must be below "
                         f"Young's modulus ({e:g} Pa)")
    var = opts.get("rupture_variation", 1e-4)
    try:
        var = float(var)
    except (TypeError, ValueError):
        raise ValueError(f"{label}: csm option 'rupture_variation' must be a number") from None
    if not 0.0 <= var < 1.0:
        raise ValueError(f"{label}: csm option 'rupture_variation' must be in [0, 1), got "
                         f"{var!r}")
    return e, ys, rs, ep, var


def _unsupported(scene: Scene) -> None:
    """Meshes (clusters) and triangle attachments (ties) are modelled; rigid bodies, body
    attachments, sliding ends, closed strands and simplicial meshes are not."""
    scene.require_no_simplicial("csm")
    if scene.bodies:
        raise UnsupportedFeature("solver 'csm' has no rigid bodies (body 0); a rigid object is "
                                 "a triangle mesh of compliance 0 (a shape-matched cluster)")
    if scene.body_attachments:
        a = scene.body_attachments[0]
        raise UnsupportedFeature(f"solver 'csm' cannot attach strand {a.strand} to a rigid "
                                 "body")
    for a in scene.frame_attachments:
        if a.slide_axis is not None:
            raise UnsupportedFeature(f"solver 'csm' cannot let the end of strand {a.strand} "
                                     "slide along an axis (slide_axis)")
    for s, st in enumerate(scene.strands):
        if st.closed:
            raise UnsupportedFeature(f"solver 'csm' has no closed strands ({st.name}, strand "
                                     f"{s})")


def _check_points(s, st) -> None:
    for what, pts in (("points", st.points), ("rest_points", st.rest_points),
                      ("velocities", st.velocities)):
        bad = np.nonzero(~np.isfinite(pts).all(axis=1))[0]
        if len(bad):
            raise ValueError(f"{st.label(s)}: {what} of vertex {int(bad[0])} is not "
                             "finite")


class _Arrays:
    """Model arrays being filled, strand by strand."""

    def __init__(self, scene: Scene):
        nv, ne = scene.n_vertices, scene.n_edges
        check_memory(8.0 * (nv * 40 + ne * 30), f"the chain-shape-matching model of {nv:,} "
                                                "vertices")
        z = np.zeros
        self.mass, self.radius, self.friction = z(nv), z(nv), np.full(nv, np.nan)
        self.vertex_edge, self.sm_w = np.full(nv, -1, np.int64), z(nv, np.int64)
        self.beta, self.x0, self.v0 = z(nv), z((nv, 3)), z((nv, 3))
        self.rest_edge, self.rest_length, self.edge_mass, self.area0 = z((ne, 3)), z(ne), \
            z(ne), z(ne)
        self.radius0, self.young, self.plastic, self.yield_ = z(ne), z(ne), z(ne), z(ne)
        self.rupture, self.variation, self.tw_w = z(ne), z(ne), z(ne, np.int64)
        self.rest_theta, self.theta0, self.u0 = z(ne), z(ne), z((ne, 3))
        self.d1_init = z((ne, 3))


def _strand(s, st, scene, ar: _Arrays) -> None:
    """Fill the arrays of strand ``s``."""
    label = st.label(s)
    opts = dict(options_of(st, "csm", CSM_STRAND_OPTIONS))
    n = st.n_vertices
    ne = n - 1
    va, ea = int(scene.strand_vertex_offsets[s]), int(scene.strand_edge_offsets[s])
    vs, es = slice(va, va + n), slice(ea, ea + ne)
    sm_w = _half_width("half_width", opts.get("half_width", min(DEFAULT_HALF_WIDTH, ne)), ne,
                       label)
    tw_w = _half_width("twist_half_width", opts.get("twist_half_width", int(sm_w[0])), ne,
                       label, per_edge=True)
    e_mod, ys, rs, ep, var = _material(opts, st, label)
    mat = st.material
    rad_e = 0.5 * (st.radius[:-1] + st.radius[1:])
    area = np.full(ne, mat.area) if mat.is_rectangular else math.pi * rad_e ** 2
    rest_vec = np.diff(st.rest_points, axis=0)
    lrest = np.linalg.norm(rest_vec, axis=1)
    m_e = mat.density * area * lrest
    ar.mass[vs][:-1] += 0.5 * m_e
    ar.mass[vs][1:] += 0.5 * m_e
    scale = np.ones(n) if mat.is_rectangular else st.radius / float(mat.radius)
    beta = mat.shear * mat.torsion_constant * scale ** 4
    if "twist_stiffness" in opts:
        beta = np.full(n, _stress("twist_stiffness", opts, 0.0, label, finite=True))
    ar.beta[vs] = beta
    ar.radius[vs] = st.radius
    if st.friction is not None:
        ar.friction[vs] = st.friction
    ar.vertex_edge[va:va + ne] = np.arange(ea, ea + ne)
    ar.sm_w[vs] = sm_w[0]
    ar.tw_w[es] = tw_w
    ar.x0[vs], ar.v0[vs] = st.points, st.velocities
    ar.rest_edge[es], ar.rest_length[es], ar.edge_mass[es], ar.area0[es] = rest_vec, lrest, \
        m_e, area
    ar.radius0[es] = rad_e if not mat.is_rectangular else mat.contact_radius
    ar.young[es], ar.plastic[es], ar.yield_[es] = e_mod, ep, ys
    ar.rupture[es], ar.variation[es] = rs, var
    # twist angles: material directions against the twist-free (Bishop) frames
    d_rest = material_directions(st.rest_points, d1=st.d1, gravity=scene.gravity, label=label)
    t_rest = edge_tangents(st.rest_points)
    u_rest = twist_free_directions(st.rest_points, first=d_rest[0])
    ar.rest_theta[es] = np.unwrap(_angles(u_rest, d_rest, t_rest))
    d_init = material_directions(st.points, d1=st.d1, gravity=scene.gravity, label=label)
    t_init = edge_tangents(st.points)
    u_init = twist_free_directions(st.points, first=d_init[0])
    ln0 = np.linalg.norm(np.diff(st.points, axis=0), axis=1)
    spread = st.initial_twist * (np.cumsum(ln0) - 0.5 * ln0) / np.sum(ln0)
    ar.theta0[es] = np.unwrap(_angles(u_init, d_init, t_init)) + spread
    ar.u0[es] = u_init
    th = ar.theta0[es]
    ar.d1_init[es] = np.cos(th)[:, None] * u_init + np.sin(th)[:, None] * np.cross(t_init,
                                                                                     u_init)


def _drives(scene: Scene, ar: _Arrays) -> dict:
    """Held vertices (fixed, or held by frames) and clamped twist angles."""
    nv, ne = scene.n_vertices, scene.n_edges
    vertex_drive = np.full(nv, -1, np.int64)
    edge_drive = np.full(ne, -1, np.int64)
    dv, df, dl, tf, tl = [], [], [], [], []

    def hold(v, frame, local):
        if vertex_drive[v] < 0:
            vertex_drive[v] = len(dv)
            dv.append(v)
            df.append(frame)
            dl.append(local)

    vo, eo = scene.strand_vertex_offsets, scene.strand_edge_offsets
    for s, st in enumerate(scene.strands):
        for v in st.fixed:
            hold(int(vo[s]) + int(v), -1, ar.x0[int(vo[s]) + int(v)])
    for a in scene.frame_attachments:
        rot, origin = scene.frames[a.frame].pose(0.0)
        n = scene.strands[a.strand].n_vertices
        v0 = int(vo[a.strand]) if a.end == 0 else int(vo[a.strand]) + n - 1
        step = 1 if a.end == 0 else -1
        verts = [v0, v0 + step] if a.orientation else [v0]
        for v in verts:
            hold(v, a.frame, rot.T @ (ar.x0[v] - origin))
        if a.orientation and not a.free_twist:
            e = int(eo[a.strand]) if a.end == 0 else int(eo[a.strand + 1]) - 1
            if edge_drive[e] < 0:
                edge_drive[e] = len(tf)
                tf.append(a.frame)
                tl.append(rot.T @ ar.d1_init[e])
    return {"vertex_drive": vertex_drive, "edge_drive": edge_drive,
            "drive_vertex": np.asarray(dv, np.int64).reshape(-1),
            "drive_frame": np.asarray(df, np.int64).reshape(-1),
            "drive_local": np.asarray(dl, np.float64).reshape(-1, 3),
            "twist_frame": np.asarray(tf, np.int64).reshape(-1),
            "twist_local": np.asarray(tl, np.float64).reshape(-1, 3)}


def compile_scene(scene: Scene) -> CSMModel:
    """The chain-shape-matching model of ``scene``.

    ValueError naming the strand and the option or vertex for bad input (half-widths below 1 or
    longer than the string, rupture below yield, non-positive stresses or moduli, non-finite
    positions); :class:`~strandlab.sim.scene.UnsupportedFeature` for closed strands, rigid
    bodies, sliding ends and simplicial meshes.  Triangle meshes are shape-matched clusters and
    triangle attachments ties (:mod:`.cluster_model`).
    """
    if not isinstance(scene, Scene):
        raise TypeError(f"expected a strandlab Scene, got {type(scene).__name__}")
    _unsupported(scene)
    ar = _Arrays(scene)
    for s, st in enumerate(scene.strands):
        _check_points(s, st)
        _strand(s, st, scene, ar)
    dr = _drives(scene, ar)
    cl = compile_clusters(scene, ar, dr)
    dr.update({k: cl.pop(k) for k in ("vertex_drive", "drive_vertex", "drive_frame",
                                      "drive_local", "edge_drive")})
    inv_mass = np.where(dr["vertex_drive"] >= 0, 0.0, 1.0 / ar.mass)
    planes, spheres, capsules, friction = scene.collider_arrays("csm")
    arrays = ModelArrays(
        gravity=np.asarray(scene.gravity, dtype=np.float64), mass=ar.mass, inv_mass=inv_mass,
        vertex_edge=ar.vertex_edge, vertex_drive=dr["vertex_drive"], vertex_radius=ar.radius,
        vertex_friction=ar.friction, sm_half_width=ar.sm_w, twist_stiffness=ar.beta,
        rest_edge=ar.rest_edge, rest_length=ar.rest_length, edge_mass=ar.edge_mass,
        area0=ar.area0, young=ar.young, plastic_modulus=ar.plastic, yield_stress=ar.yield_,
        twist_half_width=ar.tw_w, rest_theta=ar.rest_theta, edge_drive=dr["edge_drive"],
        planes=planes, spheres=spheres, capsules=capsules, collider_friction=friction, **cl)
    loads = np.array([int(scene.strand_vertex_offsets[ld.strand]) + ld.vertex
                      for ld in scene.loads], dtype=np.int64)
    return CSMModel(
        arrays=arrays, strand_vertex_start=np.asarray(scene.strand_vertex_offsets, np.int64),
        strand_edge_start=np.asarray(scene.strand_edge_offsets, np.int64), x0=ar.x0,
        v0=ar.v0, theta0=ar.theta0, u0=ar.u0, rupture_stress=ar.rupture,
        rupture_variation=ar.variation, radius0=ar.radius0, drive_vertex=dr["drive_vertex"],
        drive_frame=dr["drive_frame"], drive_local=dr["drive_local"],
        twist_frame=dr["twist_frame"], twist_local=dr["twist_local"], load_vertex=loads,
        scene=scene)
