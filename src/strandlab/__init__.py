"""strandlab: simulation of elastic strands (hair, ropes, cables, threads)."""
from .pbd import PBDSettings, PBDSolver
from .sim import Material, Model, SceneBuilder, SimulationDiverged, State

__version__ = "0.1.0"

__all__ = ["Material", "Model", "State", "SceneBuilder", "SimulationDiverged", "PBDSettings",
           "PBDSolver", "__version__"]
