"""Compile a scene's labelled simplicial meshes (:mod:`strandlab.sim.simplicial`) into a
:class:`~strandlab.mixed.model.MixedModel`.

Material mapping (SI):

- rod edges (:class:`~strandlab.sim.material.Material`): stretching ``E A`` [N]; bending
  ``(E I2, E I1)`` and twisting ``G J`` [N m^2] per stencil (the mean of its two edges), as the
  DER solver (docs/der.md); vertex mass ``rho A l / 2`` per edge end, rotational inertia
  ``rho (I1 + I2) l`` per edge angle;
- shell triangles (:class:`~strandlab.sim.simplicial.ShellMaterial`): membrane and bending
  energies of :mod:`strandlab.mixed.shell`; vertex mass ``rho t A / 3``;
- tetrahedra (:class:`~strandlab.sim.simplicial.SolidMaterial`): St. Venant-Kirchhoff
  (:mod:`strandlab.mixed.solid`); vertex mass ``rho V / 4``.

Several simplicial meshes in one scene are concatenated (their vertices numbered one after the
other); they interact only through contact.
"""
from __future__ import annotations

import numpy as np

from ..geometry.transport import material_directions
from ..rods.rest import stencil_rest_values
from ..sim.scene import Scene, UnsupportedFeature
from ..sim.simplicial import boundary_faces, mesh_edges
from .elements import lumped_masses, triangle_hinges
from .model import MixedModel
from .rod_graph import rod_graph

__all__ = ["compile_scene"]


def _unsupported(scene: Scene) -> None:
    if scene.strands:
        raise UnsupportedFeature(f"solver 'mixed' takes rods as rod edges of a simplicial mesh, "
                                 f"not as strands (strand {scene.strands[0].name!r}); build it "
                                 "with SimplicialBuilder.add_rods")
    if scene.meshes:
        raise UnsupportedFeature(f"solver 'mixed' has no point-and-spring meshes (mesh "
                                 f"{scene.meshes[0].name!r}); give shells as shell triangles "
                                 "of a simplicial mesh")
    if scene.bodies:
        raise UnsupportedFeature("solver 'mixed' has no rigid bodies (body 0); model it as a "
                                 "stiff solid")
    if scene.loads:
        raise UnsupportedFeature("solver 'mixed' has no point loads on strands (load 0)")
    if not scene.simplicial:
        raise ValueError("solver 'mixed' needs at least one simplicial mesh "
                         "(SceneBuilder.add_simplicial_mesh)")


class _Concat:
    """The scene's simplicial meshes as one vertex set, with cells and per-cell materials."""

    def __init__(self, scene: Scene):
        self.start = np.zeros(len(scene.simplicial) + 1, dtype=np.int64)
        xs, vs, re, rmat, rmi, rd1, tr, tmat, te, kmat = ([] for _ in range(10))
        self.holds, self.connections = [], []
        for k, m in enumerate(scene.simplicial):
            o = int(self.start[k])
            self.start[k + 1] = o + m.n_vertices
            xs.append(m.vertices)
            vs.append(m.velocities)
            re.append(m.rod_edges + o)
            rmat += [m.parts[p].material for p in m.rod_part]
            rmi.append(np.arange(len(m.rod_edges)))
            rd1.append(m.rod_d1 if m.rod_d1 is not None else np.full((len(m.rod_edges), 3),
                                                                    np.nan))
            tr.append(m.triangles + o)
            tmat += [m.parts[p].material for p in m.triangle_part]
            te.append(m.tets + o)
            kmat += [m.parts[p].material for p in m.tet_part]
            self.holds += [(h, o) for h in m.holds]
            self.connections += [(c, m, o) for c in m.connections]
        self.x = np.concatenate(xs)
        self.v = np.concatenate(vs)
        self.rod_edges = np.concatenate(re).astype(np.int64)
        self.rod_mat = rmat
        self.rod_index = np.concatenate(rmi).astype(np.int64)
        self.rod_d1 = np.concatenate(rd1)
        self.tris = np.concatenate(tr).astype(np.int64)
        self.tri_mat = tmat
        self.tets = np.concatenate(te).astype(np.int64)
        self.tet_mat = kmat
        self.tri_part, self.tet_part = [], []
        for k, m in enumerate(scene.simplicial):
            self.tri_part.append(np.asarray(m.triangle_part) + 1000 * k)
            self.tet_part.append(np.asarray(m.tet_part) + 1000 * k)
        self.tri_part = np.concatenate(self.tri_part).astype(np.int64)


def _rod_d1(c: _Concat, graph) -> np.ndarray:
    """Material directions of the oriented rod edges: given ones projected off their edges,
    missing ones carried along each chain by twist-free transport."""
    x = c.x
    d1 = np.zeros((len(graph.edges), 3))
    for verts, redges in zip(graph.chains, graph.chain_edges):
        given = c.rod_d1[redges]
        if np.isfinite(given).all():
            d1[redges] = material_directions(x[verts], d1=given, label="rod chain")
        else:
            d1[redges] = material_directions(x[verts], label="rod chain")
    return d1


def _rods(c: _Concat, nv: int, mass: np.ndarray) -> dict:
    graph = rod_graph(c.rod_edges, nv)
    e = graph.edges
    R = len(e)
    x = c.x
    vec = x[e[:, 1]] - x[e[:, 0]]
    length = np.linalg.norm(vec, axis=1)
    mats = c.rod_mat
    area = np.array([m.area for m in mats])
    rho = np.array([float(m.density) for m in mats])
    stiff = np.array([m.stiffness for m in mats]).reshape(R, 3)      # (E I1, E I2, G J)
    young = np.array([float(m.young_modulus) for m in mats])
    inertia = np.array([m.polar_inertia_per_length for m in mats])
    d1 = _rod_d1(c, graph) if R else np.zeros((0, 3))
    if R:
        np.add.at(mass, 3 * e[:, 0][:, None] + np.arange(3), (rho * area * length / 2)[:, None])
        np.add.at(mass, 3 * e[:, 1][:, None] + np.arange(3), (rho * area * length / 2)[:, None])
        mass[3 * nv + np.arange(R)] = inertia * length
    j0, j1 = graph.stencil_edges[:, 0], graph.stencil_edges[:, 1]
    vc = graph.stencil_vertex
    kappa, twist = stencil_rest_values(vec[j0], vec[j1], d1[j0], d1[j1], label="rods",
                                       where=vc) if len(j0) else (np.zeros((0, 4)), np.zeros(0))
    xd = 3 * np.stack([e[j0, 0], vc, e[j1, 1]], axis=1)
    bend_dofs = np.concatenate([xd[:, :1] + np.arange(3), (3 * nv + j0)[:, None],
                                xd[:, 1:2] + np.arange(3), (3 * nv + j1)[:, None],
                                xd[:, 2:] + np.arange(3)], axis=1).astype(np.int64)
    half = 0.5 * (stiff[j0] + stiff[j1])
    return dict(graph=graph, rod_edges=e, rod_flipped=graph.flipped,
                stretch_dofs=np.concatenate([3 * e[:, :1] + np.arange(3),
                                             3 * e[:, 1:] + np.arange(3)], axis=1),
                rest_length=length, stretch_stiffness=young * area, bend_dofs=bend_dofs,
                bend_edges=graph.stencil_edges, rest_curvature=kappa, rest_twist=twist,
                voronoi_length=0.5 * (length[j0] + length[j1]),
                bend_stiffness=np.ascontiguousarray(half[:, [1, 0]]).reshape(-1, 2),
                twist_stiffness=half[:, 2].copy(), a1_0=d1,
                rod_radius=np.array([m.contact_radius for m in mats]),
                rod_section_stiffness=stiff, junction_pairs=graph.junction_pairs,
                junction_vertex=graph.junction_vertex)


def _hinges(tris: np.ndarray, part: np.ndarray, tmat: np.ndarray):
    """Hinges (x0, x1, x2, x3) between triangles of one shell part
    (:func:`~strandlab.mixed.elements.triangle_hinges`; triangles of two parts meeting along an
    edge are joined only by a curve connection) and their (E, nu, t): a part's material."""
    hs, ms = [np.zeros((0, 4), np.int64)], [np.zeros((0, 3))]
    for p in np.unique(part):
        sel = np.nonzero(part == p)[0]
        h, pairs = triangle_hinges(tris[sel])
        hs.append(h)
        ms.append(tmat[sel[pairs[:, 0]], :3] if len(h) else np.zeros((0, 3)))
    return np.concatenate(hs), np.concatenate(ms)


def _holds(scene: Scene, c: _Concat, nv: int, graph, fixed: np.ndarray) -> dict:
    dv, dvf, dvl, de, def_, del_ = [], [], [], [], [], []
    held_by = np.full(nv, -2, dtype=np.int64)            # -2 free, -1 still, f frame
    turn_by = np.full(nv, -2, dtype=np.int64)            # what turns the rod edges there
    twist_by = np.zeros(nv, dtype=bool)
    until = np.full(nv, np.inf)
    for h, o in c.holds:
        vs = np.asarray(h.vertices, dtype=np.int64) + o
        turn_by[vs] = -1 if h.frame is None else h.frame
        held_by[vs] = -1 if h.frame is None or h.turn_only else h.frame
        twist_by[vs] = h.rod_twist
        until[vs] = np.inf if h.until is None else h.until
    release = np.full(len(fixed), np.inf)
    for v in np.nonzero(held_by > -2)[0]:
        fixed[3 * v: 3 * v + 3] = True
        release[3 * v: 3 * v + 3] = until[v]
        f = int(held_by[v])
        if f >= 0:
            rot, origin = scene.frames[f].pose(0.0)
            dv.append(v)
            dvf.append(f)
            dvl.append(rot.T @ (c.x[v] - origin))
    e = graph.edges
    d1 = None
    for r in range(len(e)):
        a, b = e[r]
        if turn_by[a] > -2 and turn_by[a] == turn_by[b] and twist_by[a] and twist_by[b]:
            fixed[3 * nv + r] = True
            release[3 * nv + r] = min(until[a], until[b])
            f = int(turn_by[a])
            if f >= 0:
                if d1 is None:
                    d1 = _rod_d1(c, graph)
                rot, _ = scene.frames[f].pose(0.0)
                de.append(r)
                def_.append(f)
                del_.append(rot.T @ d1[r])
    i64 = lambda a: np.asarray(a, dtype=np.int64)            # noqa: E731
    return dict(release_time=release, drive_vertex=i64(dv), drive_vertex_frame=i64(dvf),
                drive_vertex_local=np.asarray(dvl, dtype=np.float64).reshape(-1, 3),
                drive_edge=i64(de), drive_edge_frame=i64(def_),
                drive_edge_local=np.asarray(del_, dtype=np.float64).reshape(-1, 3))


def compile_scene(scene: Scene) -> MixedModel:
    """The mixed model of ``scene`` (see :class:`~strandlab.mixed.model.MixedModel`)."""
    if not isinstance(scene, Scene):
        raise TypeError(f"expected a strandlab Scene, got {type(scene).__name__}")
    _unsupported(scene)
    c = _Concat(scene)
    nv = len(c.x)
    mass = np.zeros(3 * nv + len(c.rod_edges))
    rods = _rods(c, nv, mass)
    graph = rods.pop("graph")
    tris, tets = c.tris, c.tets
    tmat = np.array([[m.young_modulus, m.poisson_ratio, m.thickness, m.density]
                     for m in c.tri_mat], dtype=np.float64).reshape(-1, 4)
    kmat = np.array([[m.young_modulus, m.poisson_ratio, m.density] for m in c.tet_mat],
                    dtype=np.float64).reshape(-1, 3)
    x = c.x
    vm = lumped_masses(x, triangles=tris, thickness=tmat[:, 2], shell_density=tmat[:, 3],
                       tetrahedra=tets, solid_density=kmat[:, 2])
    mass[: 3 * nv] += np.repeat(vm, 3)
    hinges, hmat = _hinges(tris, c.tri_part, tmat)
    fixed = np.zeros(len(mass), dtype=bool)
    drives = _holds(scene, c, nv, graph, fixed)
    free_vertex = ~fixed[: 3 * nv: 3]
    massless = np.nonzero(free_vertex & (mass[: 3 * nv: 3] <= 0))[0]
    if len(massless):
        raise ValueError(f"vertex {int(massless[0])} belongs to no rod edge, triangle or "
                         "tetrahedron and is not held: it has no mass")
    planes, spheres, capsules, friction = scene.collider_arrays("mixed")
    check = np.concatenate([np.sort(rods["rod_edges"], axis=1), mesh_edges(tris, tets)])
    check = np.unique(check, axis=0) if len(check) else np.zeros((0, 2), np.int64)
    radius = np.zeros(nv)
    if len(rods["rod_edges"]):
        for k in (0, 1):
            np.maximum.at(radius, rods["rod_edges"][:, k], rods["rod_radius"])
    if len(tris):
        for k in range(3):
            np.maximum.at(radius, tris[:, k], 0.5 * tmat[:, 2])
    v0 = np.zeros(len(mass))
    v0[: 3 * nv] = c.v.ravel()
    q0 = np.zeros(len(mass))
    q0[: 3 * nv] = x.ravel()
    return MixedModel(
        scene=scene, gravity=np.asarray(scene.gravity, dtype=np.float64), n_vertices=nv,
        mesh_vertex_start=c.start, rest_positions=x.copy(), rod_mesh_index=c.rod_index,
        **rods, triangles=tris, triangle_material=tmat, hinges=hinges, hinge_material=hmat,
        tets=tets, tet_material=kmat, mass=mass, q0=q0, v0=v0, fixed=fixed, **drives,
        check_edges=check,
        check_rest_length=np.linalg.norm(x[check[:, 1]] - x[check[:, 0]], axis=1),
        vertex_radius=radius, planes=planes, spheres=spheres, capsules=capsules,
        collider_friction=friction, joints={"surface_faces": boundary_faces(tets)})
