"""``strandlab export DIR --format usd|abc|obj|ply|vtu [--frames A:B:S] [--out PATH]``: write a
saved run (``strandlab run``'s folder, or a trajectory file) in a format other tools read
(docs/interchange.md).

A run that did not complete (diverged, interrupted) is exported with a warning on stderr
(``--quiet`` too), and its files say so (a comment in OBJ, PLY and the VTU series' ``.pvd``,
the USD layer's ``customLayerData``, the Alembic archive's description).

Exit status: 0 on success, 2 for a usage error (unknown format, a run folder without its
trajectory, an unreadable trajectory, frames out of range), 1 when the output cannot be
written (missing or read-only folder, missing optional package), 130 when interrupted (no
partial file is left under the output's name).
"""
from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["add_parser", "run"]

_PROG = "strandlab"


def add_parser(sub) -> None:
    from .io.interchange import EXPORT_FORMATS

    p = sub.add_parser("export", help="export a saved run to USD, Alembic, OBJ, PLY or VTU "
                                      "(ParaView)")
    p.add_argument("run", type=Path, metavar="DIR",
                   help="a run folder of 'strandlab run' (or a trajectory file)")
    p.add_argument("--format", choices=EXPORT_FORMATS, dest="fmt", metavar="FORMAT",
                   help=f"one of {', '.join(EXPORT_FORMATS)} (default: by the suffix of "
                        "--out, .usd/.usda/.usdc or .abc)")
    p.add_argument("--frames", metavar="A:B:S",
                   help="frames A (default 0) to B (exclusive, default all) every S "
                        "(default 1), or one frame K")
    p.add_argument("--out", type=Path, metavar="PATH",
                   help="output file (usd, abc) or folder (obj, ply, vtu); default in DIR: "
                        "trajectory.usd, trajectory.abc, obj/, ply/, vtu/")
    p.add_argument("--up", choices=("z", "y"), metavar="AXIS",
                   help="up axis of the file: z (strandlab's; USD default) or y (Alembic "
                        "default); usd and abc only")
    p.add_argument("--d1", action="store_true",
                   help="usd: also write the material direction d1 (primvars:strandlab:d1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")


def _error(msg: str, code: int) -> int:
    print(f"{_PROG}: error: {msg}", file=sys.stderr)
    return code


def run(args, out=sys.stdout) -> int:
    """The ``export`` command (see the module docstring)."""
    from .io.interchange import default_output, export_trajectory, format_of, open_run
    from .io.selection import select_frames

    fmt = args.fmt or format_of(args.out)
    if fmt is None:
        return _error("give --format (usd, abc, obj, ply or vtu), or an --out file ending in "
                      ".usd, .usda, .usdc or .abc", 2)
    try:
        traj = open_run(args.run)
    except (FileNotFoundError, ValueError) as exc:
        return _error(str(exc), 2)
    dest = default_output(args.run, fmt) if args.out is None else args.out
    if traj.status != "complete":
        print(f"{_PROG}: warning: {args.run}: the run is {traj.status!r}; its frames up to "
              "there are exported, and the files say so", file=sys.stderr)
    bar = None
    try:
        n = len(select_frames(args.frames, traj.n_frames))
        if not args.quiet:
            from tqdm import tqdm
            bar = tqdm(total=n, desc=f"export {fmt}", unit="frame", file=sys.stderr)
        result = export_trajectory(
            traj, fmt, dest, frames=args.frames, d1=args.d1,
            up_axis=None if args.up is None else args.up.upper(),
            progress=None if bar is None else (lambda k: bar.update(1)))
    except ValueError as exc:
        return _error(str(exc), 2)
    except ImportError as exc:
        return _error(str(exc), 1)
    except OSError as exc:
        return _error(str(exc) if str(dest) in str(exc) else f"cannot write {dest}: {exc}", 1)
    except KeyboardInterrupt:
        return _error(f"interrupted; nothing was left under {dest}'s name", 130)
    finally:
        if bar is not None:
            bar.close()
        close = getattr(traj, "close", None)
        if close is not None:
            close()
    if not args.quiet:
        where = dest if not isinstance(result, list) else f"{dest} ({len(result)} files)"
        status = "" if traj.status == "complete" else f" (the run is {traj.status!r})"
        print(f"exported {n} frame(s) of {args.run} to {where}{status}", file=out)
    return 0
