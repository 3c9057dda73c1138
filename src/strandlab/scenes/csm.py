"""Chain-shape-matching scenes (Rungjiratananon et al. 2011, Figs. 6-8): twisting, tearing and
flicking of strings.  Each has a test asserting what it measures (tests/scenes/test_csm_scenes.py).
The scenes with rigid clusters (the mobile of Fig. 6c, the bridge of Fig. 9) are in
:mod:`.csm_bridge`.
"""
from __future__ import annotations

import math

import numpy as np

from ..csm.solver import CSMSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.shapes import line

__all__ = ["csm_twist_loop", "csm_telephone_cord", "csm_twist_rigidity", "csm_tearing",
           "csm_flicking", "NYLON", "RUBBER"]

#: A nylon thread (SI): E = 3 GPa, 1 mm radius.
NYLON = Material(young_modulus=3e9, density=1150.0, radius=0.001)
#: A rubber cord: E = 5 MPa, 3 mm radius.
RUBBER = Material(young_modulus=5e6, density=1100.0, radius=0.003)


def _bumped(rest, height):
    """``rest`` with a small sideways bump (half a sine wave of ``height`` [m] along y), to
    break the symmetry of a straight string."""
    u = np.linspace(0.0, 1.0, len(rest))
    out = rest.copy()
    out[:, 1] += height * np.sin(np.pi * u)
    return out


def _sim(name, scene, settings, dt, frames, steps, description, params, view=(20.0, -60.0)):
    return Simulation(name, scene, settings, dt, frames, steps_per_frame=steps,
                      description=description, params=params, view=view, solver="csm")


def csm_twist_loop(*, segments: int = 100, length: float = 1.0, turns: float = 4.0,
                   twist_time: float = 4.0, end_travel: float = 0.3, frames: int = 300,
                   dt: float = 0.01, half_width: int = 2, twist_half_width: int = 4,
                   twist_iterations: int = 10, twist_stiffness: float = 2e-4) -> Simulation:
    """Fig. 6a: a string clamped at both ends, one end turned ``turns`` times about the string
    while moving ``end_travel`` [m] in, over ``twist_time`` [s]; no gravity.  The twist
    propagates along the string and it buckles into a loop (writhe, measured)."""
    b = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    rest = line((0.0, 0.0, 0.0), (length, 0.0, 0.0), segments)
    pts = _bumped(rest, 0.01 * length)
    s = b.add_strand(pts, rest_points=rest, material=RUBBER, d1=(0.0, 0.0, 1.0), name="string",
                     options={"csm": {"half_width": half_width,
                                      "twist_half_width": twist_half_width,
                                      "twist_stiffness": twist_stiffness}})
    omega = 2.0 * math.pi * turns / twist_time
    b.attach_to_frame(s, b.add_frame((0.0, 0.0, 0.0)), end=0)
    b.attach_to_frame(s, b.add_frame((length, 0.0, 0.0), angular_velocity=(omega, 0.0, 0.0),
                                     linear_velocity=(-end_travel / twist_time, 0.0, 0.0),
                                     stop=twist_time), end=-1)
    params = dict(segments=segments, length=length, turns=turns, twist_time=twist_time,
                  end_travel=end_travel, half_width=half_width, twist_half_width=twist_half_width,
                  twist_iterations=twist_iterations, twist_stiffness=twist_stiffness)
    settings = CSMSettings(damping=2.0, twist_iterations=twist_iterations)
    return _sim("csm_twist_loop", b.build(), settings, dt, frames, 1,
                "string clamped at both ends, twisted at one end until it forms a loop "
                "(chain shape matching, Fig. 6a)", params)


def csm_telephone_cord(*, segments: int = 100, length: float = 0.8, turns: float = 10.0,
                       twist_time: float = 5.0, end_travel: float = 0.5, frames: int = 400,
                       dt: float = 0.01, twist_stiffness: float = 4e-4,
                       gravity: float = 0.0) -> Simulation:
    """Fig. 6b: a cord clamped at both ends (the top one fixed); its lower end turns
    ``turns`` times while rising ``end_travel`` [m]: the stored twist coils the cord into a
    spiral, like a telephone cord (writhe, measured).  ``gravity`` [m/s^2] pulls along the
    cord (none by default: with gravity and no contacts between its segments the coils slip
    through each other as they form)."""
    b = SceneBuilder(gravity=(0.0, 0.0, -gravity))
    rest = line((0.0, 0.0, length), (0.0, 0.0, 0.0), segments)
    s = b.add_strand(_bumped(rest, 0.01 * length), rest_points=rest, material=RUBBER,
                     d1=(1.0, 0.0, 0.0), name="cord",
                     options={"csm": {"half_width": 2, "twist_stiffness": twist_stiffness,
                                      "twist_half_width": 4}})
    omega = 2.0 * math.pi * turns / twist_time
    b.attach_to_frame(s, b.add_frame((0.0, 0.0, length)), end=0)
    b.attach_to_frame(s, b.add_frame((0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, omega),
                                     linear_velocity=(0.0, 0.0, end_travel / twist_time),
                                     stop=twist_time), end=-1)
    params = dict(segments=segments, length=length, turns=turns, twist_time=twist_time,
                  end_travel=end_travel, twist_stiffness=twist_stiffness)
    return _sim("csm_telephone_cord", b.build(), CSMSettings(damping=2.0, twist_iterations=10),
                dt, frames, 1,
                "twisted hanging string coils into a telephone-cord spiral (chain shape "
                "matching, Fig. 6b)", params)


def csm_twist_rigidity(*, segments: int = 60, length: float = 0.6, turns: float = 1.0,
                       twist_time: float = 1.0, frames: int = 200, dt: float = 0.01,
                       narrow: int = 1, wide: int = 6,
                       twist_iterations: int = 50) -> Simulation:
    """Figs. 6d-e: two strings clamped at both ends, turned at one end by ``turns``; the first
    has uniform twist regions (half-width ``narrow``), the second regions of half-width
    ``wide`` on its second half (a larger torsional rigidity there).  How the twist spreads
    along each is measured."""
    b = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    omega = 2.0 * math.pi * turns / twist_time
    widths = [np.full(segments, narrow),
              np.where(np.arange(segments) < segments // 2, narrow, wide)]
    for k, w in enumerate(widths):
        y = 0.2 * k
        pts = line((0.0, y, 0.0), (length, y, 0.0), segments)
        s = b.add_strand(pts, material=RUBBER, d1=(0.0, 0.0, 1.0),
                         name="uniform" if k == 0 else "non-uniform",
                         options={"csm": {"half_width": 2,
                                          "twist_half_width": [int(v) for v in w]}})
        b.attach_to_frame(s, b.add_frame((0.0, y, 0.0)), end=0)
        b.attach_to_frame(s, b.add_frame((length, y, 0.0), angular_velocity=(omega, 0, 0),
                                         stop=twist_time), end=-1)
    params = dict(segments=segments, length=length, turns=turns, twist_time=twist_time,
                  narrow=narrow, wide=wide, twist_iterations=twist_iterations)
    return _sim("csm_twist_rigidity", b.build(), CSMSettings(twist_iterations=twist_iterations),
                dt, frames, 1,
                "uniform against non-uniform torsional rigidity: how the twist spreads "
                "(chain shape matching, Figs. 6d-e)", params)


def _bob(n, radius, bob, count=3):
    """Per-vertex radii of a thread of ``n`` vertices ending in a bob (its last ``count``
    vertices of radius ``bob`` [m]: a heavy end that a pull cannot fling)."""
    r = np.full(n, radius)
    r[-count:] = bob
    return r


def csm_tearing(*, segments: int = 60, length: float = 0.6, rupture: float = 1e6,
                step: float = 0.1e6, pull_rate: float = 10.0, bob: float = 0.03,
                frames: int = 150, dt: float = 0.01, variation: float = 1e-4,
                seed: int = 0) -> Simulation:
    """Fig. 7: five threads hang side by side from a clamp, each ending in a bob; all bobs are
    pulled down together by a force growing at ``pull_rate`` [N/s].  Rupture stresses increase
    from the first thread to the last (``rupture + k step`` [Pa], each segment's varied by
    ``variation``, seeded); the weakest thread tears first, at its weakest segment."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_frame((0.0, 0.0, length))
    for k in range(5):
        y = 0.1 * k
        pts = line((0.0, y, length), (0.0, y, 0.0), segments)
        s = b.add_strand(pts, material=NYLON, radius=_bob(len(pts), NYLON.radius, bob),
                         name=f"thread {k}",
                         options={"csm": {"rupture_stress": rupture + k * step,
                                          "yield_stress": rupture + k * step,
                                          "rupture_variation": variation}})
        b.attach_to_frame(s, top, end=0)
        b.add_load(s, segments, lambda t, r=pull_rate: np.array([0.0, 0.0, -r * t]))
    params = dict(segments=segments, length=length, rupture=rupture, step=step,
                  pull_rate=pull_rate, bob=bob, variation=variation, seed=seed)
    settings = CSMSettings(seed=seed, substeps=8, iterations=12)
    return _sim("csm_tearing", b.build(), settings, dt, frames, 1,
                "five threads of increasing strength pulled together: the weakest tears "
                "first (chain shape matching, Fig. 7)", params, view=(10.0, -20.0))


def csm_flicking(*, flicking: bool = True, segments: int = 60, length: float = 0.6,
                 pull: float = 20.0, release: float = 0.5, bob: float = 0.01,
                 frames: int = 100, dt: float = 0.01) -> Simulation:
    """Fig. 8: a nylon thread hangs from a clamp and ends in a bob, pulled down by ``pull``
    [N] until ``release`` [s], then let go.  Its elastic elongation under the pull is tiny
    (0.2 %), so without flicking (``flicking=False``) the thread just hangs when let go; with
    flicking the released tension throws the bob back up (the rebound is measured)."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    pts = line((0.0, 0.0, length), (0.0, 0.0, 0.0), segments)
    s = b.add_strand(pts, material=NYLON, radius=_bob(len(pts), NYLON.radius, bob),
                     d1=(1.0, 0.0, 0.0), name="thread")
    b.attach_to_frame(s, b.add_frame((0.0, 0.0, length)), end=0)

    def hand(t, f=pull, stop=release):
        return np.array([0.0, 0.0, -f if t < stop else 0.0])

    b.add_load(s, segments, hand)
    name = "csm_flicking" if flicking else "csm_no_flicking"
    params = dict(flicking=flicking, segments=segments, length=length, pull=pull,
                  release=release, bob=bob)
    settings = CSMSettings(flicking=flicking, substeps=8, iterations=12)
    return _sim(name, b.build(), settings, dt, frames, 1,
                "a pulled thread released " + ("bounces back (flicking)" if flicking else
                                             "without flicking: it just hangs")
                + " (chain shape matching, Fig. 8)", params)
