"""Built-in scenes, among them the figures of Umetani et al. 2014.

``get_scene(name, **params)`` builds a :class:`~strandlab.sim.runner.Scene`; ``SCENES`` maps each
name to its entry (``description``, ``build``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..sim.runner import Simulation
from .bodies import elastic_pendulum, network
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
