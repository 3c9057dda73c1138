"""Didactic scenes of the mixed model's connections (Chang et al. 2019, sections 3-5): one
scene per connection type, with and without its energy, and the incremental angle test of
Fig. 10.  tests/scenes/test_mixed_connection_scenes.py measures each.
"""
from __future__ import annotations

import math

import numpy as np

from ..mixed.solver import MixedSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

__all__ = ["mixed_didactic", "didactic_mesh", "mixed_fig10", "fig10_mesh", "SIDES"]

SIDES = ("rod", "shell", "solid")
ROD = Material(young_modulus=1e8, density=1000.0, radius=0.002)
SHELL = ShellMaterial(young_modulus=1e7, poisson_ratio=0.3, thickness=1e-3, density=1000.0)
SOLID = SolidMaterial(young_modulus=1e6, poisson_ratio=0.3, density=1000.0)


def _side(kind: str, base: list, direction: float, length: float):
    """Vertices and cells of one side: ``base`` the shared vertex (point) or the two shared
    vertices (curve), extending along ``direction * x``."""
    b = np.asarray(base, dtype=np.float64)
    d = np.array([direction * length, 0.0, 0.0])
    if kind == "rod":
        if len(b) == 2:                                   # the shared edge is the rod
            return np.zeros((0, 3)), [(0, 1)]
        return np.stack([b[0] + d / 2, b[0] + d]), [(0, 1), (1, 2)]
    if kind == "shell":
        if len(b) == 2:
            return np.stack([0.5 * (b[0] + b[1]) + d]), [(0, 1, 2)]
        w = np.array([0.0, 0.4 * length, 0.0])
        return np.stack([b[0] + d - w, b[0] + d + w]), [(0, 1, 2)]
    up = np.array([0.0, 0.0, 0.4 * length])
    if len(b) == 2:
        mid = 0.5 * (b[0] + b[1])
        return np.stack([mid + d, mid + 0.5 * d + up]), [(0, 1, 2, 3)]
    w = np.array([0.0, 0.4 * length, 0.0])
    return np.stack([b[0] + d - w, b[0] + d + w, b[0] + 0.6 * d + up]), [(0, 1, 2, 3)]


def didactic_mesh(connection: str, a: str, b: str, *, energy: bool = True,
                  stiffness: float = 2.0, length: float = 0.05):
    """Side ``a`` (held) and side ``b`` (free, along +x) sharing a vertex at the origin
    (``connection = "point"``) or the edge from ``(0, -w, 0)`` to ``(0, w, 0)`` (``"curve"``),
    joined by an elastic connection of stiffness ``stiffness`` [N m / rad^2, per metre for a
    curve] when ``energy``, else by the shared simplex alone (a ball joint, a hinge)."""
    if connection not in ("point", "curve") or a not in SIDES or b not in SIDES:
        raise ValueError(f"unknown didactic scene {connection!r} {a!r}-{b!r}")
    w = 0.3 * length
    base = [[0.0, 0.0, 0.0]] if connection == "point" else [[0.0, -w, 0.0], [0.0, w, 0.0]]
    xa, ca = _side(a, base, -1.0, length)
    xb, cb = _side(b, base, 1.0, length)
    nb = len(base)
    x = np.concatenate([base, xa, xb])
    def renumber(cells, off):
        return [[c if c < nb else c - nb + off for c in cell] for cell in cells]
    cells_a = renumber(ca, nb)
    cells_b = renumber(cb, nb + len(xa))
    if connection == "curve" and a == "solid" and len(xa) == 2:
        cells_a = [[0, 1, nb + 1, nb]]                   # keep the tetrahedron positive
    mb = SimplicialBuilder(x, name=f"{connection}_{a}_{b}")
    add = {"rod": (mb.add_rods, ROD), "shell": (mb.add_shells, SHELL),
           "solid": (mb.add_solids, SOLID)}
    pa = add[a][0](_oriented(x, cells_a), material=add[a][1], name="held")
    pb = add[b][0](_oriented(x, cells_b), material=add[b][1], name="free")
    if energy:
        kw = {"bend_stiffness": stiffness}
        if connection == "point":
            kw["twist_stiffness"] = stiffness
        mb.connect(pa, pb, kind=connection, **kw)
    mb.hold(np.unique(np.concatenate([np.ravel(cells_a)])))
    return mb.build()


def _oriented(x, cells):
    """Tetrahedra turned positive (two vertices swapped where needed)."""
    out = []
    for c in cells:
        if len(c) == 4:
            e1, e2, e3 = (x[c[k]] - x[c[0]] for k in (1, 2, 3))
            if np.dot(e1, np.cross(e2, e3)) < 0:
                c = [c[0], c[1], c[3], c[2]]
        out.append(list(c))
    return np.asarray(out, dtype=np.int64)


def mixed_didactic(*, connection: str = "point", a: str = "rod", b: str = "shell",
                   energy: bool = True, frames: int = 60, dt: float = 0.01) -> Simulation:
    """A didactic connection scene (:func:`didactic_mesh`) under gravity: with the energy the
    free side keeps its angle to the held one, without it swings down about the shared vertex
    or edge."""
    sb = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    sb.add_simplicial_mesh(didactic_mesh(connection, a, b, energy=energy))
    return Simulation(f"mixed_{connection}_{a}_{b}{'' if energy else '_free'}", sb.build(),
                      MixedSettings(damping=5.0), dt, frames,
                      description=f"{connection} connection {a}-{b} "
                      f"{'with' if energy else 'without'} its energy", solver="mixed",
                      params=dict(connection=connection, a=a, b=b, energy=energy))


def fig10_mesh(*, update: str = "incremental2", release: float = 1.0, stiffness: float = 1e-4,
               length: float = 0.05):
    """Fig. 10: a rod edge along x embedded in the edge of one shell triangle (curve
    connection of stiffness ``stiffness`` [N / rad^2] with angle update ``update``).  The rod's
    two vertices are moved by frame 0 (which turns about x); the triangle's third vertex is held
    until ``release`` [s]."""
    x = np.array([[0.0, 0.0, 0.0], [length, 0.0, 0.0], [0.5 * length, 0.0, 0.6 * length]])
    mb = SimplicialBuilder(x, name="fig10")
    rod = mb.add_rods([[0, 1]], material=ROD, name="rod", d1=[[0.0, 0.0, 1.0]])
    shell = mb.add_shells([[0, 1, 2]], material=SHELL, name="shell")
    mb.connect(rod, shell, kind="curve", bend_stiffness=stiffness, angle_update=update)
    mb.hold([0, 1], frame=0)
    mb.hold([2], until=release)
    return mb.build()


def mixed_fig10(*, update: str = "incremental2", turns: float = 1.5, turn_time: float = 1.0,
                frames: int = 400, dt: float = 0.01, damping: float = 3.0) -> Simulation:
    """Fig. 10: the rod turned ``turns`` full turns about its axis over ``turn_time`` [s]
    inside its shell triangle, which is held until then and released; no gravity."""
    sb = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    omega = 2.0 * math.pi * turns / turn_time
    sb.add_frame((0.0, 0.0, 0.0), angular_velocity=(omega, 0.0, 0.0), stop=turn_time)
    sb.add_simplicial_mesh(fig10_mesh(update=update, release=turn_time))
    return Simulation(f"mixed_fig10_{update}", sb.build(), MixedSettings(damping=damping), dt,
                      frames, description="Fig. 10: a rod turned inside a shell triangle, "
                      "which is then released", solver="mixed",
                      params=dict(update=update, turns=turns, turn_time=turn_time))
