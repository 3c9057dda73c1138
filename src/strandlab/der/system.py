"""The DER model as a system of the shared implicit integrator (:mod:`strandlab.implicit`).

It holds the energy terms (stretching per edge, bending and twisting per inner vertex) and the
reference frames they read.  Before each step the solver loads the state's frames
(:meth:`DERSystem.load_frames`); before the terms are evaluated at a new iterate ``q`` the
integrator calls :meth:`DERSystem.prepare`, which transports the base's reference directors to
the iterate's tangents (time-parallel transport) and recomputes the reference twist, unwrapped
to the branch nearest its value at the base.  The base is the step's start until the integrator
accepts a Newton move (:meth:`DERSystem.accept`): the frames are then re-based on that iterate,
so that the line search's merit is the energy whose gradient the terms compute
(docs/der.md, "Newton and the frames").
"""
from __future__ import annotations

import numpy as np

from ..collision.penalty import ContactTerm
from ..collision.penalty import contact_stiffness as contact_stiffness_of
from ..rods.frames import RodFrames
from ..rods.terms import BendTwistTerm, StretchTerm
from .model import DERModel

__all__ = ["DERSystem"]


class DERSystem:
    """Implements the integrator's system protocol for a :class:`DERModel`.

    Attributes read by the integrator: ``n_dofs``, ``mass`` [N], ``terms``, ``block_start``
    (one block per strand).  Frames: ``a1``, ``a2`` [E, 3] (reference directors at the last
    prepared iterate), ``ref_twist`` [B] [rad].  ``contact``: the penalty term of contacts
    with the colliders (:mod:`strandlab.der.contact_term`; None without colliders or with
    ``contact_stiffness = 0``), whose ``vertex_stiffness`` [V] [N/m] is 0 at held vertices.
    """

    def __init__(self, model: DERModel, *, project: bool = True,
                 contact_stiffness: float = 0.0):
        m = model
        self.model = m
        self.n_dofs = m.n_dofs
        self.mass = m.mass
        self.block_start = m.strand_dof_start
        nb = m.n_bend
        self.frames = RodFrames(edge_dofs=m.stretch_dofs, edge_dof=m.edge_dof,
                                bend_dofs=m.bend_dofs, bend_edges=m.bend_edges, q0=m.q0,
                                a1_0=m.a1_0, ref_twist0=m.ref_twist0)
        self.a1, self.a2, self.ref_twist = self.frames.a1, self.frames.a2, self.frames.ref_twist
        self.stretch = StretchTerm(dofs=m.stretch_dofs, rest_length=m.rest_length,
                                   stiffness=m.stretch_stiffness, project=project)
        self.bend_twist = BendTwistTerm(
            dofs=m.bend_dofs, edges=m.bend_edges, rest_curvature=m.rest_curvature,
            rest_twist=m.rest_twist, voronoi_length=m.voronoi_length,
            bend_stiffness=m.bend_stiffness, twist_stiffness=m.twist_stiffness, a1=self.a1,
            a2=self.a2, ref_twist=self.ref_twist)
        self.terms = [self.stretch] + ([self.bend_twist] if nb else [])
        self.contact = None
        if contact_stiffness > 0.0 and len(m.collider_friction):
            k = contact_stiffness_of(m.n_vertices, m.edge_v0, m.edge_v1, m.stretch_stiffness,
                                     m.rest_length, contact_stiffness)
            free = ~m.fixed[m.vertex_dof]
            self.contact = ContactTerm(
                dofs=m.vertex_dof[free, None] + np.arange(3), radius=m.vertex_radius[free],
                stiffness=k[free], planes=m.planes, spheres=m.spheres, capsules=m.capsules,
                project=project)
            self.contact.vertex_stiffness = np.where(free, k, 0.0)
            self.terms.append(self.contact)
        self.load_frames(m.q0, m.a1_0, m.ref_twist0)

    def load_frames(self, q: np.ndarray, a1: np.ndarray, ref_twist: np.ndarray) -> None:
        """Start a step from coordinates ``q`` whose reference directors are ``a1`` [E, 3] and
        reference twists ``ref_twist`` [B] (:meth:`strandlab.rods.frames.RodFrames.load`)."""
        self.frames.load(q, a1, ref_twist)

    def begin_step(self, q: np.ndarray) -> None:
        """Nothing to do: the solver loads the step's frames with :meth:`load_frames`."""

    def prepare(self, q: np.ndarray) -> None:
        """Reference frames and twists at iterate ``q`` (transported from the base)."""
        self.frames.prepare(q)

    def accept(self, q: np.ndarray) -> None:
        """Re-base the reference frames on the accepted Newton iterate ``q`` (prepared there):
        later iterates' frames are transported from ``q`` (:meth:`strandlab.rods.frames.
        RodFrames.rebase`)."""
        self.frames.rebase(q, prepared=True)

    def material_d1(self, q: np.ndarray, a1: np.ndarray) -> np.ndarray:
        """The material direction m1 of every edge [E, 3] for coordinates ``q`` whose reference
        directors are ``a1``."""
        return self.frames.material_d1(q, a1)
