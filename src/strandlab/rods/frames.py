"""The reference frames of a set of rod edges through a step: what an implicit model with rods
keeps beside its coordinates.

Before a step the model loads the step's start (:meth:`RodFrames.load`); at every Newton iterate
``q`` the integrator's ``prepare`` calls :meth:`RodFrames.prepare`, which transports the base's
reference directors to the iterate's tangents (time-parallel transport) and recomputes the
reference twist of every bend-twist stencil, unwrapped to the branch nearest its value at the
base.  The base is the step's start until the integrator accepts a Newton move
(:meth:`RodFrames.rebase`): the frames are then carried on from the accepted iterate, so that the
energy the next line search decreases (frames transported from that iterate) is the one whose
gradient and Hessian the terms compute there (their formulas are exact for frames transported
from the point of evaluation; transported from an older base, the frames would differ from
those by the transport's holonomy once an edge has turned, docs/der.md "Frames").
"""
from __future__ import annotations

import numpy as np

from ..implicit.assembly import use_parallel
from .kernels import (
    material_frames,
    reference_twists,
    reference_twists_serial,
    transport_frames,
    transport_frames_serial,
    unit_tangents,
)

__all__ = ["RodFrames"]

#: Serial cost per edge of the frame transport and per stencil of the reference twist, in the
#: work units of :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK` (below that, serial kernels).
FRAME_WORK = 10
TWIST_WORK = 10


class RodFrames:
    """Reference directors and twists of ``E`` rod edges and ``B`` bend-twist stencils.

    edge_dofs : int [E, 6], the xyz slots of each edge's two vertices in ``q``.
    edge_dof : int [E], the slot of each edge's angle.
    bend_dofs : int [B, 11], bend_edges : int [B, 2], the stencils (:mod:`strandlab.rods.terms`).
    a1_0 [E, 3], ref_twist0 [B]: the directors and twists at ``q0``.

    Attributes the terms read (by reference): ``a1``, ``a2`` [E, 3] (at the last prepared
    iterate) and ``ref_twist`` [B] [rad].  ``q_prev`` [N], ``a1_prev`` and ``t_prev`` (unit
    tangents) [E, 3]: the base, the step's start or the last accepted iterate (arrays kept in
    place, so terms may hold them).
    """

    def __init__(self, *, edge_dofs, edge_dof, bend_dofs, bend_edges, q0, a1_0, ref_twist0):
        self.edge_dofs = np.ascontiguousarray(edge_dofs, dtype=np.int64)
        self.edge_dof = np.ascontiguousarray(edge_dof, dtype=np.int64)
        self.bend_dofs = np.ascontiguousarray(bend_dofs, dtype=np.int64)
        self.bend_edges = np.ascontiguousarray(bend_edges, dtype=np.int64)
        ne = len(self.edge_dofs)
        self.a1 = np.array(a1_0, dtype=np.float64).reshape(ne, 3)
        self.a2 = np.zeros((ne, 3))
        self.ref_twist = np.array(ref_twist0, dtype=np.float64)
        self.q_prev = np.array(q0, dtype=np.float64)
        self.a1_prev = self.a1.copy()
        self.t_prev = np.zeros((ne, 3))
        self._tw_prev = self.ref_twist.copy()
        self._tangents(self.q_prev)

    def load(self, q: np.ndarray, a1: np.ndarray, ref_twist: np.ndarray) -> None:
        """Start a step from coordinates ``q`` whose reference directors are ``a1`` [E, 3] and
        reference twists ``ref_twist`` [B] (the frames at an iterate are set by
        :meth:`prepare`, which starts from these)."""
        self.q_prev[...] = q
        self.a1_prev[...] = a1
        self._tw_prev[...] = ref_twist
        self.a1[...] = a1
        self.ref_twist[...] = ref_twist
        self._tangents(q)

    def _tangents(self, q: np.ndarray) -> None:
        unit_tangents(q, self.edge_dofs, self.t_prev)

    def prepare(self, q: np.ndarray) -> None:
        """Reference frames and twists at iterate ``q`` (transported from the base)."""
        self.a1[...] = self.a1_prev
        ne, nb = len(self.edge_dofs), len(self.bend_dofs)
        tf = transport_frames if use_parallel(2, FRAME_WORK * ne) else transport_frames_serial
        tf(self.q_prev, q, self.edge_dofs, self.a1, self.a2)
        if nb:
            rt = reference_twists if use_parallel(2, TWIST_WORK * nb) else \
                reference_twists_serial
            rt(q, self.bend_dofs, self.bend_edges, self.a1, self._tw_prev, self.ref_twist)

    def rebase(self, q: np.ndarray, *, prepared: bool = False) -> None:
        """Make iterate ``q`` the base: its frames (:meth:`prepare`, skipped when ``prepared``
        says the last call was ``prepare(q)``) become the directors and twists later iterates
        are transported from.  The frames at ``q`` do not change, so neither do the material
        frames (the edge angles stay relative to them) nor any energy at ``q``."""
        if not prepared:
            self.prepare(q)
        self.q_prev[...] = q
        self.a1_prev[...] = self.a1
        self._tw_prev[...] = self.ref_twist
        self._tangents(q)

    def material_d1(self, q: np.ndarray, a1: np.ndarray) -> np.ndarray:
        """The material direction m1 of every edge [E, 3] for coordinates ``q`` whose reference
        directors are ``a1`` (which must be perpendicular to the edges of ``q``)."""
        u = np.array(a1, dtype=np.float64)
        v = np.zeros_like(u)
        transport_frames(q, q, self.edge_dofs, u, v)      # v = t x a1
        m1, m2 = np.zeros_like(u), np.zeros_like(u)
        material_frames(q, self.edge_dof, u, v, m1, m2)
        return m1
