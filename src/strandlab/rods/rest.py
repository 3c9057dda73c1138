"""Rest curvatures and twists of bend-twist stencils, from rest geometry (NumPy, build time).

A bend-twist stencil joins an edge ``e0`` that ends at its centre vertex to an edge ``e1`` that
starts there (``(x_{i-1}, x_i, x_{i+1})``), with material directions ``d1_0``, ``d1_1`` (unit,
perpendicular to their edges; the edge angles are zero against them).  Notation of
:mod:`strandlab.rods.energies`.
"""
from __future__ import annotations

import numpy as np

__all__ = ["stencil_rest_values"]


def _dot(a, b):
    return np.einsum("ij,ij->i", a, b)


def stencil_rest_values(e0, e1, d1_0, d1_1, *, label: str = "rod", where=None):
    """Rest 4-D material curvatures [B, 4] and rest twists [B] [rad] of ``B`` stencils.

    e0, e1 : float [B, 3], the stencils' edge vectors [m] (``x_i - x_{i-1}``, ``x_{i+1} - x_i``).
    d1_0, d1_1 : float [B, 3], their material directions.
    where : int [B], the centre vertex of each stencil, for the error message (default: the
        stencil index).

    The curvature is ``kappa = (kb . m2_0, -kb . m1_0, kb . m2_1, -kb . m1_1)`` with the curvature
    binormal ``kb = 2 e0 x e1 / (|e0| |e1| + e0 . e1)``; the twist is the signed angle about
    ``t1`` from the parallel transport of ``d1_0`` onto ``t1`` to ``d1_1``.  ValueError naming
    the vertex where the polyline turns back on itself (a 180 degree fold has no curvature
    binormal).
    """
    a, b = np.asarray(e0, dtype=np.float64), np.asarray(e1, dtype=np.float64)
    la, lb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    den = la * lb + _dot(a, b)
    bad = np.nonzero(den <= 1e-12 * la * lb)[0]
    if len(bad):
        v = int(bad[0]) if where is None else int(np.asarray(where)[bad[0]])
        raise ValueError(f"{label}: the polyline turns back on itself at vertex {v} (a 180 "
                         "degree fold has no curvature)")
    kb = 2.0 * np.cross(a, b) / den[:, None]
    t0, t1 = a / la[:, None], b / lb[:, None]
    m1_0, m1_1 = np.asarray(d1_0, dtype=np.float64), np.asarray(d1_1, dtype=np.float64)
    m2_0, m2_1 = np.cross(t0, m1_0), np.cross(t1, m1_1)
    kappa = np.stack([_dot(kb, m2_0), -_dot(kb, m1_0), _dot(kb, m2_1), -_dot(kb, m1_1)], axis=1)
    pu = m1_0 - (_dot(m1_0, t1) / (1.0 + _dot(t0, t1)))[:, None] * (t0 + t1)
    twist = np.arctan2(_dot(np.cross(pu, m1_1), t1), _dot(pu, m1_1))
    return kappa, twist
