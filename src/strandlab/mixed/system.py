"""The mixed model as a system of the shared implicit integrator (:mod:`strandlab.implicit`).

Its terms: the rods' stretching and bending-twisting (:mod:`strandlab.rods.terms`), the shells'
membrane and hinge bending (:mod:`strandlab.mixed.shell`), the solids' St. Venant-Kirchhoff
energy (:mod:`strandlab.mixed.solid`), the connections (:mod:`strandlab.mixed.connections`) and
the contact penalty against the scene's colliders (:mod:`strandlab.collision.penalty`).  One
block spans every coordinate (the sparse solver).
"""
from __future__ import annotations

import numpy as np

from ..collision.mesh_contact import MeshContactTerm
from ..collision.penalty import ContactTerm
from ..geometry.tetmesh import tet_volumes
from ..rods.frames import RodFrames
from ..rods.terms import BendTwistTerm, StretchTerm
from ..sim.simplicial import boundary_faces
from .model import MixedModel

__all__ = ["MixedSystem", "vertex_contact_stiffness", "contact_surface",
           "default_contact_thickness"]


def vertex_contact_stiffness(m: MixedModel, factor: float) -> np.ndarray:
    """Contact penalty stiffness of each vertex [N/m]: ``factor`` times the stiffest axial
    spring of its simplices (rod edges ``E A / l``, shell triangles ``E t``, tetrahedra ``E l``
    with ``l`` the cube root of the volume)."""
    nv = m.n_vertices
    k = np.zeros(nv)
    if m.n_rod_edges:
        ks = m.stretch_stiffness / m.rest_length
        for c in (0, 1):
            np.maximum.at(k, m.rod_edges[:, c], ks)
    x = m.rest_positions
    if len(m.triangles):
        kt = m.triangle_material[:, 0] * m.triangle_material[:, 2]
        for c in range(3):
            np.maximum.at(k, m.triangles[:, c], kt)
    if len(m.tets):
        t = m.tets
        vol = np.abs(tet_volumes(x, t))
        kk = m.tet_material[:, 0] * np.cbrt(vol)
        for c in range(4):
            np.maximum.at(k, t[:, c], kk)
    return factor * k


def contact_surface(m: MixedModel) -> np.ndarray:
    """The triangles that can touch anything, int [F, 3]: the boundary faces of the solids and
    the shell triangles that are not faces of a tetrahedron (a shell embedded in or laid on a
    solid is inside the solid's surface or on it)."""
    faces = boundary_faces(m.tets)
    if len(m.tets):
        tf = np.concatenate([m.tets[:, [1, 2, 3]], m.tets[:, [0, 2, 3]], m.tets[:, [0, 1, 3]],
                             m.tets[:, [0, 1, 2]]])
        inside = {tuple(t) for t in np.sort(tf, axis=1).tolist()}
    else:
        inside = set()
    free = [t for t in m.triangles.tolist() if tuple(sorted(t)) not in inside]
    shells = np.asarray(free, dtype=np.int64).reshape(-1, 3)
    return np.concatenate([faces, shells]).astype(np.int64)


def default_contact_thickness(m: MixedModel) -> float:
    """The contact thickness [m] when none is given: a tenth of the median edge length of the
    contact surface (larger, neighbouring triangles of one surface would push each other
    apart; smaller, a vertex crosses it within one Newton step and the unsigned penalty pushes
    it on through)."""
    surf = contact_surface(m)
    x = m.rest_positions
    e = np.concatenate([surf[:, [0, 1]], surf[:, [1, 2]], surf[:, [2, 0]]])
    med = float(np.median(np.linalg.norm(x[e[:, 1]] - x[e[:, 0]], axis=1))) if len(e) else 0.0
    return 0.1 * med


class MixedSystem:
    """Implements the integrator's system protocol for a :class:`MixedModel`.

    Attributes read by the integrator: ``n_dofs``, ``mass`` [N], ``terms``, ``block_start``
    (one block).  ``frames``: the rods' reference frames (:class:`~strandlab.rods.frames.
    RodFrames`); ``joints``: the connection terms that keep an angle history.
    """

    def __init__(self, model: MixedModel, *, project: bool = True,
                 contact_stiffness: float = 1.0, extra_terms=(),
                 contact_thickness: float | None = None):
        m = model
        self.model = m
        self.n_dofs = m.n_dofs
        self.mass = m.mass
        self.block_start = np.array([0, m.n_dofs], dtype=np.int64)
        self.frames = RodFrames(edge_dofs=m.stretch_dofs, edge_dof=m.edge_dof,
                                bend_dofs=m.bend_dofs, bend_edges=m.bend_edges, q0=m.q0,
                                a1_0=m.a1_0, ref_twist0=m.rest_twist)
        self.terms = []
        if m.n_rod_edges:
            self.terms.append(StretchTerm(dofs=m.stretch_dofs, rest_length=m.rest_length,
                                          stiffness=m.stretch_stiffness, project=project,
                                          name="rod stretch"))
        if len(m.bend_dofs):
            f = self.frames
            self.terms.append(BendTwistTerm(
                dofs=m.bend_dofs, edges=m.bend_edges, rest_curvature=m.rest_curvature,
                rest_twist=m.rest_twist, voronoi_length=m.voronoi_length,
                bend_stiffness=m.bend_stiffness, twist_stiffness=m.twist_stiffness, a1=f.a1,
                a2=f.a2, ref_twist=f.ref_twist, name="rod bend-twist"))
        self.terms += list(extra_terms)
        self.contact = None
        if contact_stiffness > 0.0 and len(m.collider_friction):
            k = vertex_contact_stiffness(m, contact_stiffness)
            free = ~m.fixed[: 3 * m.n_vertices: 3]
            dofs = 3 * np.nonzero(free)[0][:, None] + np.arange(3)
            self.contact = ContactTerm(dofs=dofs, radius=m.vertex_radius[free],
                                       stiffness=k[free], planes=m.planes, spheres=m.spheres,
                                       capsules=m.capsules, project=project)
            self.terms.append(self.contact)
        self.mesh_contact = None
        surface = contact_surface(m)
        if contact_stiffness > 0.0 and contact_thickness is not None and len(surface):
            k = vertex_contact_stiffness(m, contact_stiffness)
            self.mesh_contact = MeshContactTerm(triangles=surface,
                                                vertex_dofs=3 * np.arange(m.n_vertices),
                                                stiffness=np.maximum(k, 1e-300),
                                                dhat=contact_thickness, project=project)
            self.terms.append(self.mesh_contact)

    def load_frames(self, q: np.ndarray, a1: np.ndarray, ref_twist: np.ndarray) -> None:
        """Start a step from ``q`` with the rods' directors ``a1`` and twists ``ref_twist``."""
        self.frames.load(q, a1, ref_twist)

    def begin_step(self, q: np.ndarray) -> None:
        """Nothing: the solver loads the step's frames and angle histories."""

    def prepare(self, q: np.ndarray) -> None:
        """The rods' reference frames at iterate ``q``."""
        if self.model.n_rod_edges:
            self.frames.prepare(q)

    def accept(self, q: np.ndarray) -> None:
        """Re-base the rods' reference frames (and so the rod sides of the connections, which
        share their base arrays) on the accepted Newton iterate ``q`` (prepared there)."""
        if self.model.n_rod_edges:
            self.frames.rebase(q, prepared=True)
