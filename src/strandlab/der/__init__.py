"""Discrete elastic rods (Bergou et al. 2008, 2010), the forward model of Takahashi and Batty's
sag-free simulation: energies, the model compiled from a scene, and the solver (docs/der.md)."""
from .compile import DER_STRAND_OPTIONS, compile_scene, rest_values
from .model import DERModel, DERState
from .solver import DERSettings, DERSolver

__all__ = ["DERModel", "DERState", "DERSettings", "DERSolver", "compile_scene", "rest_values",
           "DER_STRAND_OPTIONS"]
