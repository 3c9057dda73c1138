"""Rods, shells and solids on one simplicial mesh, joined by point, curve and surface connections
(Chang et al. 2019), stepped by backward Euler on the shared implicit integrator.  docs/mixed.md.
"""
from .compile import compile_scene
from .model import MixedModel, MixedState
from .solver import MixedSettings, MixedSolver

__all__ = ["MixedModel", "MixedState", "MixedSettings", "MixedSolver", "compile_scene"]
