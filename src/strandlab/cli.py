"""The ``strandlab`` command line: list the built-in scenes, run a scene or a scene file, render.

::

    strandlab scenes
    strandlab run SCENE_OR_FILE [--frames N] [--dt S] [--iterations K] [--substeps K]
                                [--out DIR] [--render] [--every K] [--quiet]
    strandlab demo [--out DIR] [--frames N]
    strandlab schema [--out FILE]

Exit status: 0 on success, 2 for a usage error (unknown scene, malformed scene file, invalid
option), 3 when the simulation diverges, 1 when the results cannot be written.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from .sim.runner import simulate
from .sim.validate import SimulationDiverged

__all__ = ["main", "build_parser", "max_edge_strain", "EXIT_USAGE", "EXIT_DIVERGED",
           "EXIT_OUTPUT"]

EXIT_OUTPUT = 1     #: the results could not be written
EXIT_USAGE = 2      #: unknown scene, malformed file or invalid option
EXIT_DIVERGED = 3   #: the simulation produced non-finite values

_PROG = "strandlab"
_FILE_SUFFIXES = (".toml", ".json")


class _UsageError(Exception):
    """An error in what the user asked for; reported as ``strandlab: error: ...``, status 2."""


# ---------------------------------------------------------------------------------- parser
def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (np.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``strandlab`` command."""
    p = argparse.ArgumentParser(prog=_PROG, description="Simulate elastic strands "
                                "(position-based elastic rods).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    sub.add_parser("scenes", help="list the built-in scenes")
    run = sub.add_parser("run", help="run a built-in scene or a scene file (.toml, .json)")
    run.add_argument("scene", metavar="SCENE_OR_FILE",
                     help="a built-in scene name (see 'strandlab scenes') or a scene file")
    run.add_argument("--frames", type=_positive_int, metavar="N",
                     help="number of output frames")
    run.add_argument("--dt", type=_positive_float, metavar="S", help="time step [s]")
    run.add_argument("--iterations", type=_positive_int, metavar="K",
                     help="solver passes per substep")
    run.add_argument("--substeps", type=_positive_int, metavar="K",
                     help="solver substeps per step")
    _add_output_options(run, default_help="runs/<scene name>")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    demo = sub.add_parser("demo", help="run and render the built-in demo scene")
    demo.add_argument("--out", type=Path, metavar="DIR",
                      help="output folder (default: runs/demo)")
    demo.add_argument("--frames", type=_positive_int, metavar="N",
                      help="number of output frames")
    schema = sub.add_parser("schema", help="print the JSON Schema of scene files")
    schema.add_argument("--out", type=Path, metavar="FILE",
                        help="write it to FILE instead of printing it")
    return p


def _add_output_options(parser: argparse.ArgumentParser, *, default_help: str) -> None:
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help=f"output folder (default: {default_help})")
    parser.add_argument("--render", action="store_true",
                        help="render PNG frames and a video (MP4, or GIF without ffmpeg)")
    parser.add_argument("--every", type=_positive_int, default=1, metavar="K",
                        help="with --render: render every K-th frame (default 1)")


# ---------------------------------------------------------------------------------- commands
def _cmd_scenes(args, out) -> int:
    """Print the built-in scenes, one line each: name and description."""
    from .scenes import SCENES

    width = max((len(n) for n in SCENES), default=0)
    for name, entry in SCENES.items():
        print(f"{name:<{width}}  {entry.description}", file=out)
    return 0


def _is_scene_file(arg: str) -> bool:
    """A scene file: an existing file, or any argument ending in .toml or .json."""
    return Path(arg).is_file() or arg.lower().endswith(_FILE_SUFFIXES)


def _load_scene(arg: str):
    """A scene file (by path) or a built-in scene (by name)."""
    if _is_scene_file(arg):
        from .io.scenefile import load_scene_file

        try:
            return load_scene_file(arg)
        except (ValueError, OSError) as exc:
            raise _UsageError(str(exc)) from None
    from .scenes import get_scene

    try:
        return get_scene(arg)
    except KeyError as exc:
        raise _UsageError(exc.args[0] if exc.args else f"unknown scene {arg!r}") from None
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


def _apply_overrides(scene, args):
    try:
        return scene.with_overrides(frames=args.frames, dt=getattr(args, "dt", None),
                                    iterations=getattr(args, "iterations", None),
                                    substeps=getattr(args, "substeps", None))
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


def max_edge_strain(positions: np.ndarray, strand_offsets, closed) -> float:
    """Largest ``|l / l0 - 1|`` over all edges and frames (dimensionless).

    ``positions`` [frames, vertices, 3] (all strands concatenated), ``strand_offsets``
    [strands + 1] (first vertex of each strand and the total), ``closed`` [strands] (a closed
    strand adds the edge from its last vertex to its first).  ``l0``: the lengths at frame 0.
    """
    pos = np.asarray(positions, dtype=np.float64)
    offsets = np.asarray(strand_offsets, dtype=np.int64)
    worst = 0.0
    for s in range(len(offsets) - 1):
        seg = pos[:, offsets[s]:offsets[s + 1]]
        if seg.shape[1] < 2:
            continue
        if bool(closed[s]):
            edges = np.roll(seg, -1, axis=1) - seg
        else:
            edges = np.diff(seg, axis=1)
        length = np.linalg.norm(edges, axis=2)
        rest = length[0]
        ok = rest > 0
        if np.any(ok):
            worst = max(worst, float(np.max(np.abs(length[:, ok] / rest[ok] - 1.0))))
    return worst


def _json_default(obj):
    """JSON fallback for numpy values and paths in ``scene.json``."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    return repr(obj)


def _options(args, argv) -> dict:
    """The command line as recorded in ``scene.json``."""
    opts = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"argv": list(argv), **opts}


def _write_outputs(scene, traj, out_dir: Path, args, argv) -> None:
    """``trajectory.npz`` and ``scene.json`` in ``out_dir``."""
    from .io.trajectory import save_trajectory

    out_dir.mkdir(parents=True, exist_ok=True)
    save_trajectory(out_dir / "trajectory.npz", traj)
    record = scene.to_dict()
    record["command_line"] = _options(args, argv)
    (out_dir / "scene.json").write_text(json.dumps(record, indent=2, default=_json_default)
                                        + "\n", encoding="utf-8")


def _render(scene, traj, out_dir: Path, every: int, out) -> Path:
    """PNG frames in ``out_dir/frames`` and a video; returns the video's path."""
    from .render import make_video, render_trajectory

    paths = list(render_trajectory(traj, out_dir / "frames", every=every,
                                   colliders=[c.to_dict() for c in scene.scene.colliders],
                                   view=scene.view))
    video = make_video(paths, out_dir / "video.mp4")
    print(f"frames: {out_dir / 'frames'} ({len(paths)} images)", file=out)
    print(f"video:  {video}", file=out)
    return Path(video)


def _summary(scene, traj, wall: float, out_dir: Path, out) -> None:
    steps = scene.frames * scene.steps_per_frame
    strain = max_edge_strain(traj.positions, traj.strand_offsets, traj.closed)
    print(f"{scene.name}: {scene.frames} frames ({steps} steps of {scene.dt:.4g} s) in "
          f"{wall:.2f} s wall time, {1000.0 * wall / max(steps, 1):.3f} ms per step", file=out)
    print(f"max edge strain: {strain:.3e}", file=out)
    print(f"output: {out_dir}", file=out)


def _run_scene(scene, args, argv, out) -> int:
    """Simulate ``scene`` (overrides applied), write the outputs, optionally render."""
    scene = _apply_overrides(scene, args)
    out_dir = args.out if args.out is not None else Path("runs") / scene.name
    quiet = bool(getattr(args, "quiet", False))
    sink = _Null() if quiet else out
    t0 = time.perf_counter()
    traj = simulate(scene, progress=not quiet)
    wall = time.perf_counter() - t0
    try:
        _write_outputs(scene, traj, out_dir, args, argv)
        _summary(scene, traj, wall, out_dir, sink)
        if args.render:
            _render(scene, traj, out_dir, args.every, sink)
    except OSError as exc:
        print(f"{_PROG}: error: cannot write the results to {out_dir}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    return 0


def _cmd_run(args, argv, out) -> int:
    return _run_scene(_load_scene(args.scene), args, argv, out)


def _cmd_demo(args, argv, out) -> int:
    from .scenes import get_scene

    args.render = True
    args.every = 2  # 210 images of the 420 frames: the whole demo renders in about 20 s
    args.quiet = False
    try:
        scene = get_scene("demo")
    except (KeyError, ValueError) as exc:
        raise _UsageError(exc.args[0] if exc.args else "the demo scene is missing") from None
    if args.out is None:
        args.out = Path("runs") / "demo"
    return _run_scene(scene, args, argv, out)


def _cmd_schema(args, out) -> int:
    """Print (or write to ``--out``) the JSON Schema of scene files."""
    from .io.scenefile import scene_json_schema

    text = json.dumps(scene_json_schema(), indent=2) + "\n"
    if args.out is None:
        out.write(text)
        return 0
    try:
        args.out.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"{_PROG}: error: cannot write the schema to {args.out}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    return 0


class _Null:
    """A text sink for ``--quiet``."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None


# ---------------------------------------------------------------------------------- entry
def main(argv=None) -> int:
    """Run the ``strandlab`` command with ``argv`` (default: ``sys.argv[1:]``); returns the
    exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its message (usage errors: status 2)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    out = sys.stdout
    try:
        if args.command == "scenes":
            return _cmd_scenes(args, out)
        if args.command == "demo":
            return _cmd_demo(args, argv, out)
        if args.command == "schema":
            return _cmd_schema(args, out)
        return _cmd_run(args, argv, out)
    except _UsageError as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SimulationDiverged as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return EXIT_DIVERGED
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
