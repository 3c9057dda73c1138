"""Scene description: materials, builder, Model (frozen) and State."""
from .builder import SceneBuilder
from .material import Material
from .model import Model, State
from .validate import SimulationDiverged

__all__ = ["SceneBuilder", "Material", "Model", "State", "SimulationDiverged"]
