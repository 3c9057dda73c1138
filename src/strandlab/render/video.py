"""Assemble rendered frames into a video: an H.264 MP4 with imageio-ffmpeg.

The MP4 route needs ``imageio`` and ``imageio-ffmpeg`` (the ``video`` extra, also part of the
``test`` extra: ``pip install -e ".[test]"``); they are imported only when :func:`make_video`
runs.  When the MP4 cannot be written, :func:`make_video` raises :class:`VideoUnavailable`
naming the reason, or, with ``gif_fallback=True``, warns with the reason and writes an animated
GIF with Pillow instead (the returned path then has the suffix ``.gif``).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from PIL import Image

__all__ = ["make_video", "ffmpeg_available", "ffmpeg_missing_reason", "VideoUnavailable"]

_INSTALL = "install it with: pip install 'strandlab[video]'"


class VideoUnavailable(RuntimeError):
    """An MP4 cannot be written; the message says why."""


def ffmpeg_missing_reason() -> str | None:
    """Why an MP4 cannot be written (a sentence), or None when it can: ``imageio`` or
    ``imageio-ffmpeg`` not importable, or no ffmpeg executable found by imageio-ffmpeg."""
    try:
        import imageio.v2  # noqa: F401
    except ImportError as exc:
        return f"imageio is not installed ({exc}); {_INSTALL}"
    try:
        import imageio_ffmpeg
    except ImportError as exc:
        return f"imageio-ffmpeg is not installed ({exc}); {_INSTALL}"
    try:
        imageio_ffmpeg.get_ffmpeg_exe()
    except Exception as exc:    # imageio-ffmpeg raises RuntimeError without a binary
        return f"imageio-ffmpeg finds no ffmpeg executable ({exc})"
    return None


def ffmpeg_available() -> bool:
    """Whether an MP4 can be written (:func:`ffmpeg_missing_reason` is None)."""
    return ffmpeg_missing_reason() is None


def _check_inputs(image_paths, fps) -> list[Path]:
    paths = [Path(p) for p in image_paths]
    if not paths:
        raise ValueError("image_paths is empty; at least one frame is needed")
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"frame image {p} does not exist")
    try:
        rate = float(fps)
    except (TypeError, ValueError):
        rate = float("nan")
    if isinstance(fps, bool) or not (np.isfinite(rate) and rate > 0):
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    return paths


def _rgb(p: Path, size=None) -> Image.Image:
    """Frame ``p`` as an RGB image; ValueError if it is unreadable or not ``size`` pixels."""
    try:
        with Image.open(p) as im:
            rgb = im.convert("RGB")
    except OSError as exc:
        raise ValueError(f"frame image {p} cannot be read ({exc})") from None
    if size is not None and rgb.size != size:
        raise ValueError(f"frame image {p} is {rgb.size[0]}x{rgb.size[1]} pixels; the first "
                         f"frame is {size[0]}x{size[1]}")
    return rgb


def _even(frame: np.ndarray) -> np.ndarray:
    """Pad an RGB frame [h, w, 3] with its edge pixels to even height and width (H.264)."""
    h, w = frame.shape[:2]
    return np.pad(frame, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")


def _write_mp4(paths: list[Path], out: Path, fps: float) -> Path:
    import imageio.v2 as imageio

    first = _rgb(paths[0])
    with imageio.get_writer(out, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                            pixelformat="yuv420p", macro_block_size=2) as writer:
        writer.append_data(_even(np.asarray(first)))
        for p in paths[1:]:
            writer.append_data(_even(np.asarray(_rgb(p, first.size))))
    return out


def _write_gif(paths: list[Path], out: Path, fps: float) -> Path:
    first = _rgb(paths[0])
    rest = [_rgb(p, first.size) for p in paths[1:]]
    duration = max(int(round(1000.0 / fps)), 10)    # [ms]; GIF delays are in 10 ms units
    first.save(out, format="GIF", save_all=True, append_images=rest, duration=duration,
               loop=0, optimize=False)
    return out


def make_video(image_paths, path, fps: float = 30, *, gif_fallback: bool = False) -> Path:
    """Assemble the images ``image_paths`` (same pixel size, in order) into a video.

    Writes an H.264 MP4 at ``path`` with the suffix ``.mp4``.  When that is impossible (see
    :func:`ffmpeg_missing_reason`, or ffmpeg fails on the frames) it raises
    :class:`VideoUnavailable` naming the reason; with ``gif_fallback`` it instead warns
    (``UserWarning`` with the reason) and writes an animated GIF (Pillow) at ``path`` with the
    suffix ``.gif``, looping, ``1000 / fps`` ms per frame (rounded to GIF's 10 ms resolution;
    Pillow merges identical consecutive frames into one longer frame).  ``fps``: frames per
    second [1/s].  The parent folder is created if needed.  Returns the path actually written.
    """
    paths = _check_inputs(image_paths, fps)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    reason = ffmpeg_missing_reason()
    if reason is None:
        mp4 = target.with_suffix(".mp4")
        try:
            return _write_mp4(paths, mp4, float(fps))
        except (OSError, RuntimeError) as exc:
            mp4.unlink(missing_ok=True)
            reason = f"ffmpeg failed to write {mp4}: {exc}"
    if not gif_fallback:
        raise VideoUnavailable(f"cannot write an MP4: {reason}")
    gif = target.with_suffix(".gif")
    warnings.warn(f"cannot write an MP4 ({reason}); writing the animated GIF {gif} instead")
    return _write_gif(paths, gif, float(fps))
