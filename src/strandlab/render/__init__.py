"""Headless rendering (matplotlib Agg): PNG frames of strands, meshes and colliders, and videos."""
from .images import DEFAULT_VIEW, render_frame, render_trajectory, scene_bounds
from .video import ffmpeg_available, make_video

__all__ = ["render_frame", "render_trajectory", "scene_bounds", "make_video",
           "ffmpeg_available", "DEFAULT_VIEW"]
