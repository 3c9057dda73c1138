"""Position-based elastic rods with ghost points (Umetani, Schmidt and Stam 2014)."""
from .compile import compile_scene
from .model import PBDModel, PBDState
from .solver import PBDSettings, PBDSolver

__all__ = ["PBDSettings", "PBDSolver", "PBDModel", "PBDState", "compile_scene"]
