"""Position-based elastic rods with ghost points (Umetani, Schmidt and Stam 2014)."""
from .solver import PBDSettings, PBDSolver

__all__ = ["PBDSettings", "PBDSolver"]
