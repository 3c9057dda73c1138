"""Per-segment quantities of the chain-shape-matching strings (scalar Numba functions over
array slots): length, stress, maximum length and the compliance of the length constraint."""
from __future__ import annotations

import math

from numba import njit

__all__ = ["segment_length", "stress", "natural_scale", "compliance"]

#: Inlined where they are used (a call that is not inlined passes, and reference-counts, every
#: array of the argument groups).
_OPTS = {"cache": True, "error_model": "numpy", "inline": "always"}


@njit(**_OPTS)
def segment_length(x, i):
    """Length of the segment from ``x[i]`` to ``x[i + 1]`` [m]."""
    dx = x[i + 1, 0] - x[i, 0]
    dy = x[i + 1, 1] - x[i, 1]
    dz = x[i + 1, 2] - x[i, 2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(**_OPTS)
def stress(e, tension, m, st):
    """Stress [Pa] of segment ``e`` under ``tension`` [N] on its current (thinned) section."""
    return tension * (1.0 + st.plastic_strain[e]) / m.area0[e]


@njit(**_OPTS)
def natural_scale(e, m, st):
    """Maximum length of segment ``e`` over its rest length: ``1 + eps_p + sigma / E`` (the
    permanent strain plus the elastic strain of its last stress)."""
    s = stress(e, st.tension[e], m, st)
    return 1.0 + st.plastic_strain[e] + max(s, 0.0) / m.young[e]


@njit(**_OPTS)
def compliance(e, m, st, h):
    """Compliance of segment ``e``'s length constraint over a substep ``h`` [s], in inverse
    mass [1/kg]: ``L / (E A h^2)`` with its current length and section.  It is negligible next
    to the particles' inverse masses wherever the constraint can be met, and bounds the tension
    of a segment stretched between held particles to its elastic force ``E A dl / L``."""
    return m.rest_length[e] * natural_scale(e, m, st) * (1.0 + st.plastic_strain[e]) / (
        m.young[e] * m.area0[e] * h * h)
