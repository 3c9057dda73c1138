"""Cantilevered strips of one material as a solid, a shell, and half of each (Chang et al.
2019, Fig. 18), and the meshes of the verification tests (shell strip, solid bar, rod).

Every strip is clamped at ``x = 0`` and bends under its own weight along ``-z``.  Beam theory
for a strip of length ``L``, thickness ``t`` and width ``W`` under self-weight: tip deflection
``q L^4 / (8 B)`` with ``q = rho g t W`` and ``B = E t^3 W / (12 (1 - nu^2))`` (plate, the
shell's hinge energy, which has no Poisson coupling) or ``E t^3 W / 12`` (beam); the two agree
for ``nu = 0``, the default here, so that the comparison measures the discretisations and not a
choice of theory.
"""
from __future__ import annotations

import numpy as np

from ..mixed.solver import MixedSettings
from ..sim.builder import SceneBuilder
from ..sim.runner import Simulation
from ..sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial
from .meshing import box_tets, merge_vertices, strip_triangles

__all__ = ["strip_mesh", "mixed_strips", "beam_tip_deflection", "STRIP_KINDS"]

STRIP_KINDS = ("solid", "shell", "solid_shell", "shell_solid")


def beam_tip_deflection(*, length, thickness, young, poisson, density, g=9.81) -> float:
    """Tip deflection [m] of a cantilevered plate strip under self-weight (plate stiffness)."""
    d = young * thickness ** 3 / (12.0 * (1.0 - poisson ** 2))
    return density * g * thickness * length ** 4 / (8.0 * d)


def strip_mesh(kind: str, *, length=0.1, rows=4, thickness=0.01, young=1e7, poisson=0.0,
               density=1000.0, nx=20, nz=4, coupling=None, clamp: bool = True):
    """The :class:`SimplicialSpec` of one strip (``kind`` in :data:`STRIP_KINDS`).

    The strip spans ``0 <= x <= length``; a clamp of one more cell, ``-h <= x <= 0``
    (``h = length / nx``), is held (with ``clamp``), so that the root's rotation is held.  Its
    width is ``rows`` rows of the shell's equilateral triangles of side ``h``
    (:func:`~.meshing.strip_triangles`); a solid part is a structured tetrahedral box of
    ``nz`` (even) cells through ``thickness`` whose mid-plane vertices are the shell's at the
    joint.  ``coupling``: stiffness of the curve connection joining a solid half to a shell
    half per unit length [N / rad^2] (default ``100 D / h``, ``D`` the plate stiffness: a
    stiff joint; 0 leaves the joint a free hinge)."""
    if kind not in STRIP_KINDS:
        raise ValueError(f"strip kind must be one of {STRIP_KINDS}, got {kind!r}")
    if nz % 2:
        raise ValueError(f"nz must be even (the shell meets the solid's mid-plane), got {nz}")
    shell = ShellMaterial(young, poisson, thickness, density)
    solid = SolidMaterial(young, poisson, density)
    h = length / nx
    width = rows * h * np.sqrt(3.0) / 2.0
    x0 = -h if clamp else 0.0
    mid = length / 2
    (sa, sb), (ha, hb) = {"solid": ((x0, length), (0, 0)), "shell": ((0, 0), (x0, length)),
                          "solid_shell": ((x0, mid), (mid, length)),
                          "shell_solid": ((mid, length), (x0, mid))}[kind]
    pieces, cells = [], []
    if sb - sa > 1e-9 * length:
        xs, ts = box_tets((sa, 0.0, -thickness / 2), (sb, width, thickness / 2),
                          (int(round((sb - sa) / h)), rows, nz))
        pieces.append(xs)
        cells.append(("solid", ts))
    if hb - ha > 1e-9 * length:
        xh, th = strip_triangles(ha, hb, rows, h)
        pieces.append(xh)
        cells.append(("shell", th))
    x, index = merge_vertices(*pieces, tol=1e-6 * h)
    mb = SimplicialBuilder(x, name=f"strip_{kind}")
    parts = {}
    for (what, c), idx in zip(cells, index):
        add = mb.add_solids if what == "solid" else mb.add_shells
        parts[what] = add(idx[c], material=solid if what == "solid" else shell, name=what)
    if len(parts) == 2:
        k = coupling if coupling is not None else 100.0 * shell.bending_stiffness / h
        if k > 0:
            mb.connect(parts["solid"], parts["shell"], kind="curve", bend_stiffness=k)
    if clamp:
        mb.hold(np.nonzero(x[:, 0] <= 1e-9 * length)[0])
    return mb.build()


def mixed_strips(*, kind: str = "solid_shell", frames: int = 30, dt: float = 1.0 / 30.0,
                 damping: float = 20.0, **mesh) -> Simulation:
    """Fig. 18: a cantilevered strip as a solid, a shell, or half of each, bending under its own
    weight (damped, so it settles: within 0.3 s on the static equilibrium's tip deflection at
    any step from 5 ms to 1/30 s, the default, one step per frame).  Surface contact is off: a
    strip bending under its weight does not reach itself (its test runs it with contact on too,
    to the same state)."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(strip_mesh(kind, **mesh))
    return Simulation(f"mixed_strips_{kind}", b.build(),
                      MixedSettings(damping=damping, self_contact=False), dt,
                      frames, description=f"Fig. 18: cantilevered {kind.replace('_', '-')} strip "
                      "bending under its weight", params=dict(kind=kind, **mesh),
                      view=(10.0, -80.0), solver="mixed")
