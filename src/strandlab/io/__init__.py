"""Input and output: trajectories (``.h5``, ``.npz``), polyline export (OBJ, PLY), hair files
(``.hair``, ``.data``), scene files, checkpoints.

Scene files and checkpoints live in :mod:`strandlab.io.scenefile` and
:mod:`strandlab.io.checkpoint` (imported from there; they depend on the simulation package).
"""
from .export import export_frames, write_obj_polylines, write_ply_polylines
from .hairfile import Hair, HairStyle, read_hair, write_hair
from .store import StoredTrajectory, TrajectoryWriter
from .trajectory import Trajectory, TrajectoryBase, load_trajectory, save_trajectory

__all__ = ["Trajectory", "TrajectoryBase", "StoredTrajectory", "TrajectoryWriter",
           "save_trajectory", "load_trajectory", "write_obj_polylines", "write_ply_polylines",
           "export_frames", "Hair", "HairStyle", "read_hair", "write_hair"]
