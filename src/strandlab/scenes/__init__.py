"""Built-in scenes, among them the figures of Umetani et al. 2014, the discrete-elastic-rods
scenes (``der_*``, :mod:`.der`), the chain-shape-matching strings (``csm_*``, :mod:`.csm`) and
the rod/shell/solid objects (``mixed_*``, :mod:`.mixed_strips`, :mod:`.mixed_objects`,
:mod:`.mixed_connections`, :mod:`.mixed_toys`,
:mod:`.mixed_creatures`).

``get_scene(name, **params)`` builds a :class:`~strandlab.sim.runner.Scene`; ``SCENES`` maps each
name to its entry (``description``, ``build``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..sim.runner import Simulation
from .bodies import elastic_pendulum, network
from .csm import (
    csm_flicking,
    csm_tearing,
    csm_telephone_cord,
    csm_twist_loop,
    csm_twist_rigidity,
)
from .csm_bridge import csm_bridge, csm_mobile
from .der import (
    der_hanging_hair,
    der_many_strands,
    der_michell_ring,
    der_plectoneme,
    der_rope_on_sphere,
)
from .mixed_connections import mixed_didactic, mixed_fig10
from .mixed_creatures import mixed_anglerfish, mixed_jellyfish
from .mixed_objects import mixed_sandwich, mixed_tunnel, mixed_umbrella
from .mixed_strips import mixed_strips
from .mixed_toys import mixed_frisbee, mixed_sticky_hand, mixed_toy_ball
from .strands import hair, robustness, shape_error
from .twisting import plectoneme, twisting_ring

__all__ = ["SCENES", "SceneEntry", "get_scene", "shape_error"]


@dataclass(frozen=True)
class SceneEntry:
    name: str
    description: str
    build: Callable[..., Simulation]


def _demo(**kw) -> Simulation:
    kw.setdefault("frames", 420)
    s = plectoneme(**kw)
    s.name = "demo"
    s.description = "the default demo: a clamped rod twisted into plectonemes"
    return s


SCENES: dict[str, SceneEntry] = {e.name: e for e in (
    SceneEntry("demo", "the default demo: a clamped rod twisted into plectonemes", _demo),
    SceneEntry("plectoneme", "rod clamped at both ends and twisted until loops form (Fig. 2)",
               plectoneme),
    SceneEntry("twisting_ring", "twisted closed ring buckles into a figure-8 (Fig. 9, top)",
               lambda **kw: twisting_ring(ribbon=False, **kw)),
    SceneEntry("ribbon_ring", "twisted closed ribbon with an anisotropic section (Fig. 9, "
               "bottom)", lambda **kw: twisting_ring(ribbon=True, **kw)),
    SceneEntry("elastic_pendulum", "rod from a fixed frame to a cube that hits an obstacle, "
               "twists and recovers (Fig. 8)", elastic_pendulum),
    SceneEntry("robustness", "rod from random vertex positions returns to its rest helix "
               "(Fig. 11)", robustness),
    SceneEntry("hair", "200 strands of 20 edges rooted on a sphere, colliding with it", hair),
    SceneEntry("network", "a small tree: trunk and branches joined through a rigid-body joint",
               network),
    SceneEntry("der_plectoneme", "discrete elastic rods: rod clamped at both ends, one end "
               "turned and moved in until it coils", der_plectoneme),
    SceneEntry("der_hanging_hair", "discrete elastic rods: a tapered hair strand released from "
               "horizontal swings down and settles", der_hanging_hair),
    SceneEntry("der_rope_on_sphere", "discrete elastic rods: a rope drapes over a sphere, held "
               "by friction", der_rope_on_sphere),
    SceneEntry("der_michell_ring", "discrete elastic rods: a twisted ring of a straight rod "
               "buckles out of plane (Michell)", der_michell_ring),
    SceneEntry("der_many_strands", "discrete elastic rods: 100 hair strands of 100 vertices "
               "stepped together", der_many_strands),
    SceneEntry("mixed_strips", "rods, shells and solids: a cantilevered strip half solid, half "
               "shell, bending under its weight (Fig. 18; kind=solid|shell|solid_shell|"
               "shell_solid)", mixed_strips),
    SceneEntry("mixed_sandwich", "rods, shells and solids: a foam bar with stiff inner sheets "
               "(sandwich composite, Fig. 16; sheets=false for the foam alone)", mixed_sandwich),
    SceneEntry("mixed_tunnel", "rods, shells and solids: a cloth tunnel with spiral rods on the "
               "floor (Fig. 14; rods=false for cloth alone)", mixed_tunnel),
    SceneEntry("mixed_umbrella", "rods, shells and solids: an umbrella held by its handle, ribs "
               "and stretchers meeting in triple junctions (Fig. 15)", mixed_umbrella),
    SceneEntry("mixed_frisbee", "rods, shells and solids: a nylon frisbee held at two arcs of "
               "its rim, whose rod edges are turned about their axes (Fig. 13; rim=none|free|"
               "coupled)", mixed_frisbee),
    SceneEntry("mixed_toy_ball", "rods, shells and solids: a springy ball toy (shell cup, rod "
               "spring, solid ball) pushed sideways (Fig. 12; joints=elastic|free)",
               mixed_toy_ball),
    SceneEntry("mixed_sticky_hand", "rods, shells and solids: a rubber sticky hand on a clamped "
               "cord, drooping (Fig. 11; hand=purple|red|green|blue, softest first)",
               mixed_sticky_hand),
    SceneEntry("mixed_jellyfish", "rods, shells and solids: a jellyfish whose bell is rocked, "
               "tentacles, eye stalks and eyeballs on point connections (Fig. 7; "
               "connections=false for ball joints)", mixed_jellyfish),
    SceneEntry("mixed_anglerfish", "rods, shells and solids: an anglerfish swinging its head, "
               "fins on curve connections, antenna and lure on point connections (Fig. 17; "
               "connections=false for hinges and ball joints)", mixed_anglerfish),
    SceneEntry("mixed_fig10", "rods, shells and solids: a rod turned 1.5 turns inside a held "
               "shell triangle, then released (Fig. 10; update=incremental2|incremental1|"
               "direct)", mixed_fig10),
    SceneEntry("mixed_connection", "rods, shells and solids: a didactic point or curve "
               "connection between two sides (connection=point|curve, a, b=rod|shell|solid, "
               "energy=true|false)", mixed_didactic),
    SceneEntry("csm_twist_loop", "chain shape matching: a string clamped at both ends, "
               "twisted at one end until it forms a loop (Fig. 6a)", csm_twist_loop),
    SceneEntry("csm_telephone_cord", "chain shape matching: a twisted hanging string coils "
               "like a telephone cord (Fig. 6b)", csm_telephone_cord),
    SceneEntry("csm_mobile", "chain shape matching: a hanging mobile, an object turned about "
               "its string twists it and rolls back and forth (Fig. 6c)", csm_mobile),
    SceneEntry("csm_bridge", "chain shape matching: a hanging bridge of boards tied with "
               "ropes, torn by falling crates (Fig. 9)", csm_bridge),
    SceneEntry("csm_twist_rigidity", "chain shape matching: uniform against non-uniform "
               "torsional rigidity (Figs. 6d-e)", csm_twist_rigidity),
    SceneEntry("csm_tearing", "chain shape matching: five threads of increasing strength "
               "pulled together, the weakest tears first (Fig. 7)", csm_tearing),
    SceneEntry("csm_flicking", "chain shape matching: a pulled thread released bounces back "
               "(Fig. 8)", csm_flicking),
    SceneEntry("csm_no_flicking", "chain shape matching: the pulled thread released without "
               "flicking just hangs (Fig. 8)", lambda **kw: csm_flicking(flicking=False, **kw)),
)}


def get_scene(name: str, **params) -> Simulation:
    """Build the built-in scene ``name`` with optional keyword parameters of its builder."""
    try:
        entry = SCENES[name]
    except KeyError:
        raise KeyError(f"unknown scene {name!r}; available: {', '.join(sorted(SCENES))}") from None
    try:
        return entry.build(**params)
    except TypeError as exc:
        raise ValueError(f"scene {name!r}: {exc}") from None
