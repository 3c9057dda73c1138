"""The solver-neutral layer: materials, the scene and its builder, the solver protocol and
registry, and the runner."""
from .builder import SceneBuilder
from .material import Material
from .scene import Scene, UnsupportedFeature
from .solver import Output, get_solver, make_solver, register_solver, solver_names
from .validate import SimulationDiverged

__all__ = ["SceneBuilder", "Material", "Scene", "UnsupportedFeature", "SimulationDiverged",
           "Output", "get_solver", "make_solver", "register_solver", "solver_names"]
