"""Geometry shared by every model: frames, parallel transport, Darboux vectors, writhe."""
from .darboux import darboux_of
from .frames import frame_jacobians_of, frame_of
from .transport import parallel_transport, twist_free_directions
from .writhe import writhe, writhe_segments

__all__ = ["darboux_of", "frame_of", "frame_jacobians_of", "parallel_transport",
           "twist_free_directions", "writhe", "writhe_segments"]
