"""The energy terms of a mixed model beyond the rods' own: shells, solids and connections.

:func:`build_terms` returns an :class:`ElasticTerms`: the terms the system adds, and the angle
histories of the connections (state: :attr:`MixedState.joint_angle`), loaded before each step
and stored after it.
"""
from __future__ import annotations

import numpy as np

from .connect import connection_terms
from .model import MixedModel
from .shell import ShellBendingTerm, ShellMembraneTerm
from .solid import SolidTerm

__all__ = ["ElasticTerms", "build_terms"]


class ElasticTerms:
    """The shell, solid and connection terms of a model, and their angle histories."""

    def __init__(self, terms: list, model: MixedModel):
        self.terms = terms
        self.model = model
        self.joints: list = []
        self._angle_terms: list = []
        self._angle_start = np.zeros(1, dtype=np.int64)

    @property
    def n_angles(self) -> int:
        """Number of stored connection angles [A]."""
        return int(self._angle_start[-1])

    def bind(self, frames) -> list:
        """Build the connection terms on the rods' reference frames (their step-start arrays
        are shared with the terms); returns them (the system adds them to its terms)."""
        self.joints = connection_terms(self.model, frames)
        self._angle_terms = [t for t in self.joints if t.soft]
        self._angle_start = np.cumsum([0] + [len(t.dofs) for t in self._angle_terms])
        return self.joints

    def _slices(self):
        for k, t in enumerate(self._angle_terms):
            yield t, slice(int(self._angle_start[k]), int(self._angle_start[k + 1]))

    def initial_angles(self, out: np.ndarray) -> None:
        """The connection angles at the initial configuration into ``out`` [A] [rad]."""
        for t, sl in self._slices():
            out[sl] = t.angles

    def load_angles(self, angles: np.ndarray) -> None:
        """Start a step whose stored connection angles are ``angles`` [A] [rad]."""
        for t, sl in self._slices():
            t.load_angles(angles[sl])

    def store_angles(self, q: np.ndarray, angles: np.ndarray) -> None:
        """Follow the connection angles to ``q`` (the end of a step, whose rod frames the
        model has loaded as the next step's start) and write them into ``angles`` [A]."""
        for t, sl in self._slices():
            t.begin_step(q)
            angles[sl] = t.angles


def build_terms(model: MixedModel, *, project: bool = True) -> ElasticTerms:
    """The shell, solid and connection terms of ``model``."""
    m = model
    x = m.rest_positions
    terms = []
    if len(m.triangles):
        t = m.triangle_material
        terms.append(ShellMembraneTerm(rest_positions=x, triangles=m.triangles, young=t[:, 0],
                                       poisson=t[:, 1], thickness=t[:, 2]))
    if len(m.hinges):
        h = m.hinge_material
        terms.append(ShellBendingTerm(rest_positions=x, hinges=m.hinges, young=h[:, 0],
                                      poisson=h[:, 1], thickness=h[:, 2]))
    if len(m.tets):
        k = m.tet_material
        terms.append(SolidTerm(rest_positions=x, tetrahedra=m.tets, young=k[:, 0],
                               poisson=k[:, 1]))
    del project
    return ElasticTerms(terms, m)
