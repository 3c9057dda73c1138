"""The solver protocol and the registry that maps solver names to solvers.

Every solver (position-based rods, discrete elastic rods, ...) plugs in the same way:

- ``SolverClass.name``: its registry name; ``SolverClass.Settings``: a frozen dataclass of its
  options, with ``to_dict()`` and validation in ``__post_init__`` (ValueError naming the option);
- ``SolverClass(scene, settings=None)`` compiles a :class:`~strandlab.sim.scene.Scene` into the
  solver's own model (raising :class:`~strandlab.sim.scene.UnsupportedFeature` for a part of the
  scene it cannot express);
- ``solver.state()``: a new state at the scene's initial configuration; states have ``time`` [s]
  and ``step`` (steps taken);
- ``solver.step(state_in, state_out, dt)`` advances by ``dt`` [s]; ``state_out`` may be
  ``state_in``; raises :class:`~strandlab.sim.validate.SimulationDiverged` naming the step and
  strand when the result is not finite or passes the solver's stated bounds;
- ``solver.output(state)`` returns :class:`Output` views in the scene's layout: strand vertex
  positions [V, 3] [m], the material direction d1 of every edge [E, 3] (unit), and the extra points
  of frames, meshes and bodies [X, 3] [m] (:meth:`~strandlab.sim.scene.Scene.extra_layout`),
  and, from solvers that tear strands, the broken edges [E] (``edge_broken``, else None);
- ``solver.save_state(state) -> dict`` of arrays and ``solver.load_state(arrays) -> state``: the
  complete state, restored exactly;
- optionally ``solver.check_step(dt)``: ValueError for a step ``dt`` [s] its settings cannot
  take (the position-based solver's damping), called by
  :func:`~strandlab.sim.runner.check_run` before a run writes anything.

The registry holds import paths (``"module:Class"``), so nothing here imports a solver.  Third
parties register theirs with :func:`register_solver` or the ``strandlab.solvers`` entry-point
group.
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .scene import Scene

__all__ = ["Solver", "Output", "register_solver", "get_solver", "solver_names",
           "make_settings", "make_solver", "solver_inputs", "DEFAULT_SOLVER"]

DEFAULT_SOLVER = "pbd"

_REGISTRY: dict[str, str | type] = {
    "pbd": "strandlab.pbd.solver:PBDSolver",
    "der": "strandlab.der.solver:DERSolver",
    "csm": "strandlab.csm.solver:CSMSolver",
    "mixed": "strandlab.mixed.solver:MixedSolver",
}


@dataclass(frozen=True)
class Output:
    """What every solver reports for a state, in the scene's layout (views, do not modify)."""

    positions: np.ndarray   #: Strand vertices [m], [V, 3]
    d1: np.ndarray          #: Unit material direction d1 per edge, [E, 3]
    extra: np.ndarray       #: Points of frames, meshes and bodies [m], [X, 3]
    #: Edges a solver has broken (torn), bool [E]; None from solvers that never break edges.
    #: The vertex layout stays: a strand's pieces are its runs of vertices between broken edges.
    edge_broken: np.ndarray | None = None


@runtime_checkable
class Solver(Protocol):
    """The interface every solver implements (see the module docstring)."""

    name: str
    Settings: type
    scene: Scene
    settings: Any

    def state(self) -> Any: ...

    def step(self, state_in: Any, state_out: Any, dt: float) -> None: ...

    def output(self, state: Any) -> Output: ...

    def save_state(self, state: Any) -> dict: ...

    def load_state(self, arrays: dict) -> Any: ...


def register_solver(name: str, target: str | type) -> None:
    """Register a solver class, or its import path ``"package.module:Class"``, under ``name``."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"solver name must be an identifier, got {name!r}")
    _REGISTRY[name] = target


def _entry_points() -> None:
    try:
        from importlib.metadata import entry_points
        for ep in entry_points(group="strandlab.solvers"):
            _REGISTRY.setdefault(ep.name, ep.value)
    except Exception:  # pragma: no cover - broken third-party metadata must not stop us
        pass


def solver_names() -> list[str]:
    """The registered solver names."""
    _entry_points()
    return sorted(_REGISTRY)


def get_solver(name: str) -> type:
    """The solver class registered as ``name`` (KeyError listing the known names)."""
    if name not in _REGISTRY:
        _entry_points()
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown solver {name!r}; available: {', '.join(solver_names())}") \
            from None
    if isinstance(target, str):
        module, _, attr = target.partition(":")
        target = getattr(importlib.import_module(module), attr)
        _REGISTRY[name] = target
    return target


def make_settings(name: str, values=None):
    """Settings of solver ``name`` from a mapping (or a Settings instance, returned as is).

    Unknown keys raise ValueError listing the allowed ones; the Settings class checks values.
    """
    cls = get_solver(name).Settings
    if values is None:
        return cls()
    if isinstance(values, cls):
        return values
    if dataclasses.is_dataclass(values):
        raise TypeError(f"settings for solver {name!r} must be {cls.__name__}, got "
                        f"{type(values).__name__}")
    allowed = [f.name for f in dataclasses.fields(cls) if f.init]
    unknown = [k for k in values if k not in allowed]
    if unknown:
        raise ValueError(f"solver {name!r} has no setting {unknown[0]!r}; allowed: "
                         f"{', '.join(allowed)}")
    try:
        return cls(**dict(values))
    except TypeError as exc:
        raise ValueError(f"solver {name!r}: {exc}") from None


def make_solver(scene: Scene, name: str = DEFAULT_SOLVER, settings=None):
    """Compile ``scene`` for solver ``name`` with ``settings`` (mapping or Settings)."""
    cls = get_solver(name)
    return cls(scene, make_settings(name, settings))


def solver_inputs(solver_cls: type, scene, settings, compile_scene, model_type: type | None = None):
    """What a solver's constructor starts from: ``(model, settings)``.

    ``scene`` is a :class:`~strandlab.sim.scene.Scene`, compiled by ``compile_scene(scene)``, or
    (when ``model_type`` is given) an instance of it, taken as already compiled; ``settings`` is
    an instance of ``solver_cls.Settings``, or None for its defaults.  Both are checked before
    anything is compiled: a TypeError names the solver and what it was given.

    >>> import strandlab as sl
    >>> b = sl.SceneBuilder()
    >>> rope = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)
    >>> _ = b.add_strand([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]], material=rope)
    >>> class Toy:
    ...     Settings = dict
    >>> solver_inputs(Toy, b.build(), None, lambda scene: "model")
    ('model', {})
    >>> solver_inputs(Toy, "rope.toml", None, lambda scene: "model")
    Traceback (most recent call last):
    ...
    TypeError: Toy needs a Scene (SceneBuilder.build()), got str
    """
    if not (isinstance(scene, Scene) or (model_type is not None
                                         and isinstance(scene, model_type))):
        raise TypeError(f"{solver_cls.__name__} needs a Scene (SceneBuilder.build()), got "
                        f"{type(scene).__name__}")
    cls = solver_cls.Settings
    if settings is None:
        settings = cls()
    elif not isinstance(settings, cls):
        raise TypeError(f"settings must be {cls.__name__}, got {type(settings).__name__}")
    model = compile_scene(scene) if isinstance(scene, Scene) else scene
    return model, settings
