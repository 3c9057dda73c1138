"""Input and output: trajectories (``.npz``), polyline export (OBJ, PLY), scene files, checkpoints.

Scene files and checkpoints live in :mod:`strandlab.io.scenefile` and
:mod:`strandlab.io.checkpoint` (imported from there; they depend on the simulation package).
"""
from .export import export_frames, write_obj_polylines, write_ply_polylines
from .trajectory import Trajectory, load_trajectory, save_trajectory

__all__ = ["Trajectory", "save_trajectory", "load_trajectory", "write_obj_polylines",
           "write_ply_polylines", "export_frames"]
