"""Headless rendering of trajectories to PNG frames and MP4 video.

Two renderers behind :func:`render_trajectory`: shaded tubes with PyVista/VTK offscreen
(:mod:`.tubes`, the ``render`` extra) and, when PyVista is not installed, matplotlib 3-D lines
(:mod:`.images`).  :mod:`.camera` frames the scene, :mod:`.scalars` computes twist and strain to
colour by, :mod:`.video` writes the MP4.
"""
from .backends import BACKENDS, choose_backend, render_trajectory
from .camera import Camera, View
from .images import DEFAULT_VIEW, render_frame, scene_bounds
from .scalars import COLOR_BY
from .video import VideoUnavailable, ffmpeg_available, ffmpeg_missing_reason, make_video

__all__ = ["render_trajectory", "choose_backend", "BACKENDS", "Camera", "View", "COLOR_BY",
           "render_frame", "scene_bounds", "make_video", "ffmpeg_available",
           "ffmpeg_missing_reason", "VideoUnavailable", "DEFAULT_VIEW"]
