"""One entry point for both renderers: shaded tubes (PyVista/VTK) or matplotlib lines.

``backend="auto"`` takes PyVista when it is installed (the ``render`` extra) and matplotlib's
3-D lines otherwise; :func:`choose_backend` returns the choice with a sentence saying which one
and why, which the command line prints.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

from ..io.trajectory import TrajectoryBase
from .camera import Camera
from .scalars import COLOR_BY
from .tubes import pyvista_available

__all__ = ["BACKENDS", "choose_backend", "render_trajectory"]

BACKENDS = ("auto", "pyvista", "matplotlib")    #: accepted values of ``backend``

_INSTALL = "pip install 'strandlab[render]'"


def choose_backend(backend: str = "auto") -> tuple[str, str]:
    """``(name, message)``: the renderer that ``backend`` selects and a sentence saying which
    one is used and why.  ValueError for an unknown name, or for ``"pyvista"`` when PyVista is
    not installed."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown renderer {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "matplotlib":
        return "matplotlib", "renderer: matplotlib (3-D lines), as asked"
    if pyvista_available():
        return "pyvista", "renderer: pyvista (shaded tubes, offscreen VTK)"
    if backend == "pyvista":
        raise ValueError(f"renderer 'pyvista' asked for, but PyVista is not installed; {_INSTALL}")
    return "matplotlib", (f"renderer: matplotlib (3-D lines), because PyVista is not "
                          f"installed; for shaded tubes: {_INSTALL}")


def _progress_bar(enabled, n: int, name: str):
    if callable(enabled):
        return enabled, None
    if not enabled:
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=n, desc=f"rendering ({name})", unit="image", file=sys.stderr)
    return (lambda k: bar.update(1)), bar


def render_trajectory(traj: TrajectoryBase, out_dir, *, backend: str = "auto", every: int = 1,
                      colliders=None, camera: Camera | None = None, size=(960, 720),
                      color_by: str = "strand", title: str | None = None, progress=False,
                      **options) -> list[Path]:
    """Render every ``every``-th frame of ``traj`` to ``out_dir/frame_NNNNN.png``.

    ``backend``: ``"auto"``, ``"pyvista"`` or ``"matplotlib"`` (:func:`choose_backend`);
    ``colliders``: collider dicts; ``camera``: a :class:`~strandlab.render.camera.Camera`
    (default: automatic; matplotlib uses only its elevation and azimuth); ``size``: (width,
    height) [px]; ``color_by``: ``"strand"``, ``"twist"`` or ``"strain"`` (PyVista only;
    matplotlib warns and colours by strand); ``progress``: True for a tqdm bar on stderr, or a
    callable ``progress(k)``.  Other ``options`` go to the backend
    (:class:`~strandlab.render.tubes.TubeRenderer` or
    :func:`strandlab.render.images.render_trajectory`).  Returns the paths written.
    """
    name, _ = choose_backend(backend)
    if color_by not in COLOR_BY and "scalars" not in options:
        raise ValueError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    cam = camera or Camera()
    frames = range(0, traj.n_frames, every) if isinstance(every, int) and every >= 1 else []
    callback, bar = _progress_bar(progress, len(frames), name)
    try:
        if name == "pyvista":
            from .tubes import render_trajectory_pyvista

            return render_trajectory_pyvista(traj, out_dir, every=every, colliders=colliders,
                                             camera=cam, size=size, color_by=color_by,
                                             title=title, progress=callback, **options)
        from .images import render_trajectory as render_lines

        if color_by != "strand":
            warnings.warn(f"color_by={color_by!r} needs the pyvista renderer; the matplotlib "
                          f"renderer colours by strand ({_INSTALL})")
        w, h = size
        return render_lines(traj, out_dir, every=every, colliders=colliders,
                            view=(cam.elevation, cam.azimuth), dpi=100,
                            size=(w / 100, h / 100), title=title, progress=callback, **options)
    finally:
        if bar is not None:
            bar.close()
