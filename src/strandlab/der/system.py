"""The DER model as a system of the shared implicit integrator (:mod:`strandlab.implicit`).

It holds the energy terms (stretching per edge, bending and twisting per inner vertex) and the
reference frames they read.  Before each step the solver loads the state's frames
(:meth:`DERSystem.load_frames`); before the terms are evaluated at a new iterate ``q`` the
integrator calls :meth:`DERSystem.prepare`, which transports the step's reference directors to
the iterate's tangents (time-parallel transport) and recomputes the reference twist, unwrapped
to the branch nearest its value at the start of the step.
"""
from __future__ import annotations

import numpy as np

from ..implicit.assembly import use_parallel
from ..rods.kernels import (
    material_frames,
    reference_twists,
    reference_twists_serial,
    transport_frames,
    transport_frames_serial,
)
from ..rods.terms import BendTwistTerm, StretchTerm
from .contact_term import ContactTerm
from .contact_term import contact_stiffness as contact_stiffness_of
from .model import DERModel

__all__ = ["DERSystem"]

#: Serial cost per edge of the frame transport and per stencil of the reference twist, in the
#: work units of :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK` (below that, serial kernels).
FRAME_WORK = 10
TWIST_WORK = 10


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
        ne, nb = m.n_edges, m.n_bend
        self._edge_dofs = np.ascontiguousarray(m.stretch_dofs)
        self.a1 = m.a1_0.copy()
        self.a2 = np.zeros((ne, 3))
        self.ref_twist = m.ref_twist0.copy()
        self._q_prev = m.q0.copy()
        self._a1_prev = m.a1_0.copy()
        self._tw_prev = m.ref_twist0.copy()
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
        reference twists ``ref_twist`` [B].  The frames the terms read (``a1``, ``a2``,
        ``ref_twist``) are set by :meth:`prepare`, which the integrator calls at every iterate
        before evaluating the terms (it starts from these directors, so nothing is computed
        here)."""
        self._q_prev[...] = q
        self._a1_prev[...] = a1
        self._tw_prev[...] = ref_twist
        self.a1[...] = a1
        self.ref_twist[...] = ref_twist

    def begin_step(self, q: np.ndarray) -> None:
        """Nothing to do: the solver loads the step's frames with :meth:`load_frames`."""

    def prepare(self, q: np.ndarray) -> None:
        """Reference frames and twists at iterate ``q`` (transported from the step's start)."""
        m = self.model
        self.a1[...] = self._a1_prev
        tf = transport_frames if use_parallel(2, FRAME_WORK * m.n_edges) else \
            transport_frames_serial
        tf(self._q_prev, q, self._edge_dofs, self.a1, self.a2)
        rt = reference_twists if use_parallel(2, TWIST_WORK * m.n_bend) else \
            reference_twists_serial
        rt(q, m.bend_dofs, m.bend_edges, self.a1, self._tw_prev, self.ref_twist)

    def material_d1(self, q: np.ndarray, a1: np.ndarray) -> np.ndarray:
        """The material direction m1 of every edge [E, 3] for coordinates ``q`` whose reference
        directors are ``a1`` (which must be perpendicular to the edges of ``q``)."""
        m = self.model
        u = np.array(a1, dtype=np.float64)
        v = np.zeros_like(u)
        transport_frames(q, q, self._edge_dofs, u, v)      # v = t x a1
        m1, m2 = np.zeros_like(u), np.zeros_like(u)
        material_frames(q, m.edge_dof, u, v, m1, m2)
        return m1
