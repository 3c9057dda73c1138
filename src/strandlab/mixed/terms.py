"""The energy terms of a mixed model beyond the rods' own: shells, solids and connections.

:func:`build_terms` returns an :class:`ElasticTerms`: the terms the system adds, and the angle
histories of the connections (state: :attr:`MixedState.joint_angle`), loaded before each step
and stored after it.
"""
from __future__ import annotations

import numpy as np

from .model import MixedModel
from .shell import ShellBendingTerm, ShellMembraneTerm
from .solid import SolidTerm

__all__ = ["ElasticTerms", "build_terms"]


class ElasticTerms:
    """The shell, solid and connection terms of a model, and their angle histories."""

    def __init__(self, terms: list, angle_terms: list):
        self.terms = terms
        self._angle_terms = angle_terms
        self._angle_start = np.cumsum([0] + [t.n_angles for t in angle_terms])

    @property
    def n_angles(self) -> int:
        """Number of stored connection angles [A]."""
        return int(self._angle_start[-1])

    def bind(self, frames) -> None:
        """Give the connection terms the rods' reference frames (shared arrays)."""
        for t in self._angle_terms:
            t.bind(frames)

    def _slices(self):
        for k, t in enumerate(self._angle_terms):
            yield t, slice(int(self._angle_start[k]), int(self._angle_start[k + 1]))

    def initial_angles(self, out: np.ndarray) -> None:
        """The connection angles at the initial configuration into ``out`` [A] [rad]."""
        for t, sl in self._slices():
            out[sl] = t.rest_angle

    def load_angles(self, q: np.ndarray, angles: np.ndarray) -> None:
        """Start a step at ``q`` whose stored connection angles are ``angles`` [A]."""
        for t, sl in self._slices():
            t.begin_step(q, angles[sl])

    def store_angles(self, q: np.ndarray, angles: np.ndarray) -> None:
        """The connection angles at the end of a step (``q``) into ``angles`` [A]."""
        for t, sl in self._slices():
            t.end_step(q, angles[sl])


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
    return ElasticTerms(terms, [])
