"""Chain shape matching for strings (Rungjiratananon et al. 2010, 2011): twisting, tension,
tearing, flicking and plasticity; the model compiled from a scene and the solver
(docs/csm.md)."""
from .compile import CSM_STRAND_OPTIONS, compile_scene
from .model import CSMModel, CSMState
from .solver import CSMSettings, CSMSolver

__all__ = ["CSMModel", "CSMState", "CSMSettings", "CSMSolver", "compile_scene",
           "CSM_STRAND_OPTIONS"]
