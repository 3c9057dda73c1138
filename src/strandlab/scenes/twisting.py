"""Twisting scenes: the plectoneme of Fig. 2 and the twisting rings of Fig. 9."""
from __future__ import annotations

import numpy as np

from ..pbd.solver import PBDSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.shapes import circle, line

__all__ = ["plectoneme", "twisting_ring"]


def plectoneme(*, length: float = 1.0, segments: int = 60, radius: float = 0.005,
               young_modulus: float = 2e6, turns: float = 6.0, twist_time: float = 6.0,
               end_travel: float = 0.3, frames: int = 480, dt: float = 1.0 / 60.0,
               iterations: int = 10, damping: float = 0.5, alpha=(0.05, 0.05, 0.5),
               stiffness: str = "alpha") -> Simulation:
    """A rod clamped at both ends; one end turns ``turns`` times about the rod axis while moving
    ``end_travel`` [m] towards the other, over ``twist_time`` [s].  No gravity.  The stored
    twist buckles the rod into loops (plectonemes), Fig. 2 of Umetani et al. 2014.  Segment
    self-contact keeps the loops from passing through each other, so the linking number
    (twist + writhe) stays at the imposed number of turns.  The default alphas make bending
    soft next to twist (``alpha = (0.05, 0.05, 0.5)``); with alphas derived from the material at
    10 iterations the rod stores the twist without buckling over the run.
    """
    b = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    mat = Material(young_modulus=young_modulus, density=1000.0, radius=radius)
    pts = line((0.0, 0.0, 0.0), (length, 0.0, 0.0), segments)
    s = b.add_strand(pts, material=mat, d1=(0.0, 0.0, 1.0),
                     options={"pbd": {"alpha": alpha}}, name="rod")
    f0 = b.add_frame((0.0, 0.0, 0.0))
    omega = 2.0 * np.pi * turns / twist_time
    f1 = b.add_frame((length, 0.0, 0.0), angular_velocity=(omega, 0.0, 0.0),
                     linear_velocity=(-end_travel / twist_time, 0.0, 0.0), stop=twist_time)
    b.attach_to_frame(s, f0, end=0)
    b.attach_to_frame(s, f1, end=-1)
    model = b.build()
    params = dict(length=length, segments=segments, radius=radius, young_modulus=young_modulus,
                  turns=turns, twist_time=twist_time, end_travel=end_travel, damping=damping,
                  alpha=alpha)
    # the paper's fixed budget (alphas set the look of the figure)
    settings = PBDSettings.interactive(iterations=iterations, damping=damping,
                                       stiffness=stiffness, self_collision=True)
    return Simulation("plectoneme", model, settings, dt,
                 frames, description="rod clamped at both ends and twisted until loops form "
                 "(Fig. 2)", params=params, view=(25.0, -70.0))


def twisting_ring(*, ribbon: bool = False, radius: float = 0.3, segments: int = 60,
                  rod_radius: float = 0.005, young_modulus: float = 1e6, turns: int = 4,
                  frames: int = 900, dt: float = 1.0 / 60.0, iterations: int = 10,
                  damping: float = 1.0, alpha=(0.05, 0.05, 0.5)) -> Simulation:
    """A closed ring whose material frames carry ``turns`` full turns of twist (Fig. 9).

    The isotropic ring releases the twist by buckling out of plane and folding into a figure-8
    (Michell's instability: stable below ``2 pi sqrt(3) B / C``, about 2.6 turns for nu = 0.5;
    the position-based ring with the default alphas is softer and already deforms at 1 turn).  The
    ribbon (``ribbon=True``) has a 12:1 rectangular section with its width along the ring's
    axis, so it bends easily only about one material axis and settles into a different shape.
    """
    b = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    pts = circle(radius=radius, segments=segments)
    if ribbon:
        t = 2 * rod_radius * np.sqrt(np.pi / 12.0)  # same area as the round rod
        mat = Material(young_modulus=young_modulus, density=1000.0, width=12 * t, thickness=t,
                       radius=rod_radius)
        gd = np.tile([0.0, 0.0, 1.0], (segments, 1))
    else:
        mat = Material(young_modulus=young_modulus, density=1000.0, radius=rod_radius)
        gd = (0.0, 0.0, 1.0)
    if ribbon and alpha is not None:
        # the ribbon resists bending about its width direction d2 far more (I2 / I1 = 144)
        alpha = (alpha[0], min(1.0, 20.0 * alpha[1]), alpha[2])
    b.add_strand(pts, material=mat, closed=True, d1=gd, options={"pbd": {"alpha": alpha}},
                 initial_twist=2 * np.pi * turns, name="ribbon" if ribbon else "ring")
    model = b.build()
    name = "ribbon_ring" if ribbon else "twisting_ring"
    params = dict(ribbon=ribbon, radius=radius, segments=segments, rod_radius=rod_radius,
                  young_modulus=young_modulus, turns=turns, damping=damping, alpha=alpha)
    desc = ("twisted closed ribbon (anisotropic section) buckles unlike the round ring (Fig. 9)"
            if ribbon else "twisted closed ring buckles into a figure-8 (Fig. 9)")
    settings = PBDSettings.interactive(iterations=iterations, damping=damping,
                                       self_collision=True)
    return Simulation(name, model, settings, dt, frames,
                 description=desc, params=params, view=(35.0, -60.0))
