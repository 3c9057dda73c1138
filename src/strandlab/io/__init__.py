"""Input and output: trajectories (``.h5``, ``.npz``), export (USD, Alembic, OBJ, PLY), strand
import (:func:`read_strands`), hair files (``.hair``, ``.data``), scene files, checkpoints.
USD and Alembic need the ``interchange`` extra, imported only when used.

Scene files and checkpoints live in :mod:`strandlab.io.scenefile` and
:mod:`strandlab.io.checkpoint` (imported from there; they depend on the simulation package).
"""
from .alembic import read_abc_strands, write_abc
from .export import export_frames, write_obj_polylines, write_ply_polylines
from .hairfile import Hair, HairStyle, read_hair, write_hair
from .interchange import export_run, export_trajectory
from .store import StoredTrajectory, TrajectoryWriter
from .strands import Strands, read_strands
from .trajectory import Trajectory, TrajectoryBase, load_trajectory, save_trajectory
from .usd import read_usd_strands, write_usd

__all__ = ["Trajectory", "TrajectoryBase", "StoredTrajectory", "TrajectoryWriter",
           "save_trajectory", "load_trajectory", "write_obj_polylines", "write_ply_polylines",
           "export_frames", "Hair", "HairStyle", "read_hair", "write_hair", "write_usd",
           "read_usd_strands", "write_abc", "read_abc_strands", "export_run",
           "export_trajectory", "Strands", "read_strands"]
