"""Export a saved run to USD, Alembic, OBJ, PLY or VTU: the library side of ``strandlab
export``.

:func:`open_run` opens a run folder written by ``strandlab run`` (its ``trajectory.h5``, or
the ``trajectory.npz`` of earlier versions) or a trajectory file, lazily;
:func:`export_trajectory` writes the frames selected (``"A:B:S"``) in one format:

======  ==========================================================  =========================
format  writer                                                      default output
======  ==========================================================  =========================
usd     :func:`strandlab.io.usd.write_usd` (one animated stage)     ``DIR/trajectory.usd``
abc     :func:`strandlab.io.alembic.write_abc` (one archive)        ``DIR/trajectory.abc``
obj     :func:`strandlab.io.export.export_frames` (file per frame)  ``DIR/obj/frame_NNNNN.obj``
ply     :func:`strandlab.io.export.export_frames` (file per frame)  ``DIR/ply/frame_NNNNN.ply``
vtu     :func:`strandlab.io.vtu_series.write_vtu_series` (file per  ``DIR/vtu/frame_NNNNN.vtu``
        frame, and a ParaView collection ``trajectory.pvd``)        and ``DIR/vtu/*.pvd``
======  ==========================================================  =========================

Every file is written under a temporary name and renamed once complete, so an export that
fails or is interrupted leaves no partial file under a final name; a per-frame export (obj,
ply, vtu) that fails part way also removes the frames it had written, and its folder if it
created it (:func:`strandlab.io.export.frame_folder`).
"""
from __future__ import annotations

from pathlib import Path

from .trajectory import TrajectoryBase, load_trajectory

__all__ = ["EXPORT_FORMATS", "open_run", "default_output", "export_trajectory", "export_run",
           "format_of"]

EXPORT_FORMATS = ("usd", "abc", "obj", "ply", "vtu")
#: The formats written as a folder of files, one per frame.
FOLDER_FORMATS = ("obj", "ply", "vtu")
_SUFFIX_FORMAT = {".usd": "usd", ".usda": "usd", ".usdc": "usd", ".abc": "abc"}
_RUN_FILES = ("trajectory.h5", "trajectory.npz")


def check_format(fmt) -> str:
    """``fmt`` if it is one of :data:`EXPORT_FORMATS`, else ValueError listing them."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of "
                         f"{', '.join(EXPORT_FORMATS)}")
    return fmt


def format_of(out) -> str | None:
    """The export format an output path's suffix implies (``.usd``/``.usda``/``.usdc``: usd,
    ``.abc``: abc), or None."""
    return _SUFFIX_FORMAT.get(Path(out).suffix.lower()) if out is not None else None


def open_run(path) -> TrajectoryBase:
    """The trajectory of a run folder (``trajectory.h5`` or ``trajectory.npz`` in it) or of a
    trajectory file.  FileNotFoundError naming what is missing; ValueError for a file that is
    not a readable trajectory."""
    p = Path(path)
    if p.is_dir():
        for name in _RUN_FILES:
            if (p / name).is_file():
                return load_trajectory(p / name)
        raise FileNotFoundError(f"run folder {p} has no {' or '.join(_RUN_FILES)}: not a "
                                "folder written by 'strandlab run', or its run never started")
    if p.is_file():
        return load_trajectory(p)
    raise FileNotFoundError(f"run {p} does not exist")


def default_output(run, fmt: str) -> Path:
    """Where :func:`export_run` writes by default (see the module docstring): in the run
    folder, or next to a trajectory file."""
    p = Path(run)
    folder = p if p.is_dir() else p.parent
    if check_format(fmt) in FOLDER_FORMATS:
        return folder / fmt
    return folder / f"trajectory.{fmt}"


def export_trajectory(traj: TrajectoryBase, fmt: str, out, *, frames=None,
                      up_axis: str | None = None, d1: bool = False, progress=None):
    """Write the frames ``frames`` (``"A:B:S"``, default all) of ``traj`` in format ``fmt`` to
    ``out`` (a file for usd and abc, a folder for obj, ply and vtu).  ``up_axis``: ``"Z"`` or
    ``"Y"`` (default: Z for USD, Y for Alembic; OBJ, PLY and VTU keep strandlab's z-up
    coordinates); ``d1``: the material directions as a USD primvar; ``progress(k)`` after each
    frame.  Returns the file written (usd, abc) or the list of files (obj, ply; vtu: the
    ``.pvd`` collection last)."""
    check_format(fmt)
    if fmt in FOLDER_FORMATS:
        if up_axis not in (None, "Z", "z"):
            raise ValueError(f"{fmt} export keeps strandlab's z-up coordinates; up_axis "
                             f"{up_axis!r} applies to usd and abc")
        if d1:
            raise ValueError("d1 is written to USD files only")
        if fmt == "vtu":
            from .vtu_series import write_vtu_series
            return write_vtu_series(traj, out, frames=frames, progress=progress)
        from .export import export_frames
        return export_frames(traj, out, fmt, frames=frames, progress=progress)
    if d1 and fmt != "usd":
        raise ValueError("d1 is written to USD files only")
    if fmt == "usd":
        from .usd import write_usd
        return write_usd(out, traj, frames=frames, up_axis=up_axis or "Z", d1=d1,
                         progress=progress)
    from .alembic import write_abc
    return write_abc(out, traj, frames=frames, up_axis=up_axis or "Y", progress=progress)


def export_run(run, fmt: str, *, out=None, **options):
    """Open the run ``run`` (:func:`open_run`), export it (:func:`export_trajectory`, the
    ``options`` passed on) to ``out`` (default :func:`default_output`) and close it."""
    check_format(fmt)
    traj = open_run(run)
    try:
        return export_trajectory(traj, fmt, default_output(run, fmt) if out is None else out,
                                 **options)
    finally:
        close = getattr(traj, "close", None)
        if close is not None:
            close()
