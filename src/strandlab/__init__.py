"""strandlab: simulation of elastic strands (hair, ropes, cables, threads)."""
from .csm import CSMSettings, CSMSolver
from .der import DERSettings, DERSolver
from .pbd import PBDSettings, PBDSolver
from .sim import (
    Material,
    Scene,
    SceneBuilder,
    SimulationDiverged,
    UnsupportedFeature,
    get_solver,
    make_solver,
    solver_names,
)
from .sim.runner import Simulation, simulate

__version__ = "0.2.0"

__all__ = ["Material", "Scene", "SceneBuilder", "SimulationDiverged", "UnsupportedFeature",
           "PBDSettings", "PBDSolver", "DERSettings", "DERSolver", "CSMSettings", "CSMSolver",
           "Simulation", "simulate",
           "get_solver", "make_solver", "solver_names", "__version__"]
