"""Small chain-shape-matching set-ups shared by the csm tests."""
import numpy as np

import strandlab as sl
from strandlab.csm import CSMSettings, CSMSolver

MAT = sl.Material(young_modulus=1e8, density=1100.0, radius=0.002)


def wiggly(n=12, seed=0, length=0.24):
    """Points of a random, gently bent polyline of ``n`` segments [m]."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n + 1, 3))
    x[:, 0] = np.linspace(0.0, length, n + 1)
    x[1:, 1:] += rng.normal(scale=0.004, size=(n, 2))
    return x


def solver_for(points, *, gravity=(0.0, 0.0, 0.0), options=None, clamp=(), settings=None,
               **strand):
    """A CSM solver of one strand through ``points``; ``clamp``: ends held by fixed frames."""
    b = sl.SceneBuilder(gravity=gravity)
    s = b.add_strand(points, material=strand.pop("material", MAT),
                     options={"csm": options or {}}, **strand)
    for end in clamp:
        b.attach_to_frame(s, b.add_frame(points[0 if end == 0 else -1]), end=end)
    return CSMSolver(b.build(), settings or CSMSettings())
