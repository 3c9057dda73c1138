"""strandlab: simulation of elastic strands (hair, ropes, cables, threads)."""
from .pbd import PBDSettings, PBDSolver
from .sim import Material, Model, SceneBuilder, SimulationDiverged, State
from .sim.runner import Scene, simulate

__version__ = "0.1.0"

__all__ = ["Material", "Model", "State", "SceneBuilder", "SimulationDiverged", "PBDSettings",
           "PBDSolver", "Scene", "simulate", "__version__"]
