"""The ``strandlab`` command line: list the built-in scenes, run a scene or a scene file, render.

::

    strandlab scenes
    strandlab run SCENE_OR_FILE [--solver NAME] [--frames N] [--dt S] [--iterations K]
                                [--substeps K] [--out DIR] [--render] [--every K] [--quiet]
                                [--checkpoint-every N] [--resume FILE]
    strandlab run SCENE_OR_FILE --live [--paused] [--host H] [--port P] [--solver NAME] ...
    strandlab view DIR [--speed S] [--loop] [--host H] [--port P]
    strandlab demo [--out DIR] [--frames N]
    strandlab schema [--out FILE]
    strandlab export DIR [--format usd|abc|obj|ply] [--frames A:B:S] [--out PATH] [--up z|y]
                         [--d1] [--quiet]
    strandlab hair generate --out FILE [--style NAME] [--strands N] [--vertices V] [--seed S]
                            [--length M] [--scale S] [--format hair|data] ...
    strandlab hair info FILE [--scale S] [--format hair|data]

Exit status: 0 on success, 2 for a usage error (unknown scene, malformed scene file, invalid
option, a scene the chosen solver cannot model), 3 when the simulation diverges, 1 when the
results cannot be written.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from .cli_output import prepare_out_dir, write_scene_json
from .extras import MissingExtra
from .sim.runner import check_run, simulate
from .sim.validate import SimulationDiverged

__all__ = ["main", "build_parser", "max_edge_strain", "mesh_edge_strains", "EXIT_USAGE",
           "EXIT_DIVERGED", "EXIT_OUTPUT"]

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
                                "(position-based rods, discrete elastic rods, chain shape "
                                "matching) and objects of rods, shells and solids on one "
                                "simplicial mesh.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    sub.add_parser("scenes", help="list the built-in scenes")
    run = sub.add_parser("run", help="run a built-in scene or a scene file (.toml, .json)")
    run.add_argument("scene", metavar="SCENE_OR_FILE",
                     help="a built-in scene name (see 'strandlab scenes') or a scene file")
    run.add_argument("--frames", type=_positive_int, metavar="N",
                     help="number of output frames")
    run.add_argument("--dt", type=_positive_float, metavar="S", help="time step [s]")
    run.add_argument("--solver", metavar="NAME",
                     help="run the scene with another solver (its default settings): "
                          "'pbd', 'der', 'csm' or 'mixed'")
    run.add_argument("--rest", type=Path, metavar="FILE",
                     help="with a hair file: the rest-shape file of 'strandlab sagfree'")
    run.add_argument("--scale", type=_positive_float, metavar="S",
                     help="with a hair file: metres per file unit (default 1)")
    run.add_argument("--iterations", type=_positive_int, metavar="K",
                     help="solver passes per substep")
    run.add_argument("--substeps", type=_positive_int, metavar="K",
                     help="solver substeps per step")
    _add_output_options(run, default_help="runs/<scene name>")
    run.add_argument("--checkpoint-every", type=_positive_int, metavar="N",
                     help="save the complete state after every N-th frame to "
                          "DIR/checkpoints/frame_NNNNNN.npz")
    run.add_argument("--resume", type=Path, metavar="FILE",
                     help="continue from a checkpoint of this scene (same solver, settings and "
                          "time step); the frames match the uninterrupted run bit for bit")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    run.add_argument("--live", action="store_true",
                     help="show the simulation as it runs in a web page (the viewer, "
                          "docs/viewer.md), with its controls; writes nothing")
    run.add_argument("--paused", action="store_true", help="with --live: start paused")
    _add_server_options(run)
    view = sub.add_parser("view", help="play back a saved run in a web page (docs/viewer.md)")
    view.add_argument("dir", type=Path, metavar="DIR",
                      help="the output folder of 'strandlab run' (or its trajectory file)")
    view.add_argument("--speed", type=_positive_float, default=1.0, metavar="S",
                      help="simulated seconds per wall-clock second (default 1)")
    view.add_argument("--loop", action="store_true", help="start again at the end of the run")
    _add_server_options(view)
    demo = sub.add_parser("demo", help="run and render the built-in demo scene")
    demo.add_argument("--out", type=_path, metavar="DIR",
                      help="output folder (default: runs/demo)")
    demo.add_argument("--frames", type=_positive_int, metavar="N",
                      help="number of output frames")
    _add_render_options(demo, every=2)  # 210 images of the 420 frames
    from . import cli_sagfree

    cli_sagfree.add_parser(sub, _positive_float, _positive_int)
    from . import cli_export

    cli_export.add_parser(sub)
    from . import cli_mesh

    cli_mesh.add_parser(sub, _positive_float)
    schema = sub.add_parser("schema", help="print the JSON Schema of scene files")
    schema.add_argument("--out", type=_path, metavar="FILE",
                        help="write it to FILE instead of printing it")
    _add_hair_parser(sub)
    return p


def _port(text: str) -> int:
    v = _positive_int(text)
    if v > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 1..65535, got {text!r}")
    return v


def _add_server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", metavar="H",
                        help="viewer: address to serve on (default 127.0.0.1, this machine "
                             "only; 0.0.0.0 for every interface)")
    parser.add_argument("--port", type=_port, default=8080, metavar="P",
                        help="viewer: port to serve on (default 8080; the next free one if it "
                             "is taken)")


def _add_output_options(parser: argparse.ArgumentParser, *, default_help: str) -> None:
    parser.add_argument("--out", type=_path, metavar="DIR",
                        help=f"output folder (default: {default_help})")
    parser.add_argument("--render", action="store_true",
                        help="render PNG frames and an MP4 video (a GIF, with a warning, when "
                             "ffmpeg is missing)")
    _add_render_options(parser)


def _add_render_options(parser: argparse.ArgumentParser, every: int = 1) -> None:
    parser.add_argument("--every", type=_positive_int, default=every, metavar="K",
                        help=f"with --render: render every K-th frame (default {every})")
    parser.add_argument("--renderer", choices=("auto", "pyvista", "matplotlib"), default="auto",
                        help="with --render: shaded tubes (pyvista) or 3-D lines (matplotlib); "
                             "auto: pyvista when installed")
    parser.add_argument("--camera", metavar="ELEV,AZIM[,DIST]",
                        help="with --render: camera elevation and azimuth [deg] and distance "
                             "[m] (default: the scene's view, distance fitted to all frames)")
    parser.add_argument("--color-by", choices=("strand", "twist", "strain"), default="strand",
                        help="with --render: one colour per strand, or a colour map of the "
                             "twist [rad/m] or the strain against the first frame")


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


def _source(sim, args) -> str:
    """What a message about the run's scene names: the file it was read from (a scene or hair
    file), else the built-in scene's name."""
    arg = getattr(args, "scene", None)
    return arg if isinstance(arg, str) and Path(arg).is_file() else sim.name


def _apply_overrides(scene, args):
    try:
        name = getattr(args, "solver", None)
        if name is not None and name != scene.solver:
            from dataclasses import replace

            from .sim.solver import make_settings

            try:
                scene = replace(scene, solver=name, settings=make_settings(name, None))
            except KeyError as exc:
                raise _UsageError(exc.args[0]) from None
        return scene.with_overrides(frames=args.frames, dt=getattr(args, "dt", None),
                                    iterations=getattr(args, "iterations", None),
                                    substeps=getattr(args, "substeps", None))
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


def max_edge_strain(positions, strand_offsets, closed) -> float:
    """Largest ``|l / l0 - 1|`` over all edges and frames (dimensionless).

    ``positions`` [frames, vertices, 3] (all strands concatenated; an array or a lazy
    trajectory field, read a frame at a time), ``strand_offsets`` [strands + 1] (first vertex of
    each strand and the total), ``closed`` [strands] (a closed strand adds the edge from its last
    vertex to its first).  ``l0``: the lengths at frame 0.
    """
    offsets = np.asarray(strand_offsets, dtype=np.int64)
    closed = np.asarray(closed, dtype=bool)
    i0, i1 = [], []
    for s in range(len(offsets) - 1):
        a, b = int(offsets[s]), int(offsets[s + 1])
        if b - a < 2:
            continue
        i0.append(np.arange(a, b - 1))
        i1.append(np.arange(a + 1, b))
        if closed[s]:
            i0.append(np.array([b - 1]))
            i1.append(np.array([a]))
    if not i0 or int(offsets[-1]) == 0:
        return 0.0
    return _largest_strain(positions, np.c_[np.concatenate(i0), np.concatenate(i1)])


def mesh_edge_strains(points, segments, triangles, tetrahedra) -> dict:
    """Largest ``|l / l0 - 1|`` over all frames of the edges of each kind of mesh cell
    (dimensionless; ``l0``: the lengths at frame 0), for a trajectory's mesh parts: ``points``
    [frames, X, 3] (its ``extra_points``, an array or a lazy field), ``segments`` [n, 2] (rod
    edges of a simplicial mesh), ``triangles`` [n, 3], ``tetrahedra`` [n, 4] (vertex indices
    into ``points``).  Returns ``{"segments": ..., "triangles": ..., "tetrahedra": ...}`` for
    the kinds present (an edge shared by two cells counted once per kind).

    >>> p0 = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    >>> p1 = p0 * [1.02, 1.0, 1.0]
    >>> s = mesh_edge_strains(np.stack([p0, p1]), [[0, 1]], [[0, 1, 2]], np.zeros((0, 4)))
    >>> {k: round(v, 4) for k, v in s.items()}
    {'segments': 0.02, 'triangles': 0.02}
    """
    out = {}
    for name, cells in (("segments", segments), ("triangles", triangles),
                        ("tetrahedra", tetrahedra)):
        cells = np.asarray(cells, dtype=np.int64)
        if cells.size == 0:
            continue
        k = cells.shape[1]
        pairs = np.concatenate([cells[:, [a, b]] for a in range(k) for b in range(a + 1, k)])
        out[name] = _largest_strain(points, np.unique(np.sort(pairs, axis=1), axis=0))
    return out


def _largest_strain(positions, edges: np.ndarray) -> float:
    """Largest ``|l / l0 - 1|`` over the ``edges`` [E, 2] and frames of ``positions``, ``l0``
    the lengths at frame 0 (edges of zero length there are skipped)."""
    i0, i1 = edges[:, 0], edges[:, 1]
    rest = None
    worst = 0.0
    for k in range(len(positions)):
        x = np.asarray(positions[k], dtype=np.float64)
        ln = np.linalg.norm(x[i1] - x[i0], axis=1)
        if rest is None:
            rest = ln
            ok = rest > 0
            continue
        if np.any(ok):
            worst = max(worst, float(np.max(np.abs(ln[ok] / rest[ok] - 1.0))))
    return worst


_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

def _path(text: str) -> Path:
    """A path option's value; an empty one is refused (it would name the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path (give a file or folder name)")
    return Path(text)


def _out_dir(sim, args) -> Path:
    """``--out``, or ``runs/<scene name>`` for a name that is a plain file name."""
    if args.out is not None:
        return Path(args.out)
    if not _NAME_OK.match(sim.name) or ".." in sim.name:
        raise _UsageError(f"scene name {sim.name!r} is not a plain folder name (letters, digits, "
                          "'_', '-', '.'); give --out DIR")
    return Path("runs") / sim.name


def _camera(sim, args):
    from .render import Camera

    text = getattr(args, "camera", None)
    if text is None:
        return Camera(elevation=float(sim.view[0]), azimuth=float(sim.view[1]))
    try:
        return Camera.parse(text)
    except ValueError as exc:
        raise _UsageError(f"--camera: {exc}") from None


def _render(sim, traj, out_dir: Path, args, camera, out, quiet: bool) -> Path:
    """PNG frames in ``out_dir/frames`` and a video; returns the video's path."""
    import warnings

    from .render import choose_backend, make_video, render_trajectory

    try:
        backend, message = choose_backend(getattr(args, "renderer", "auto"))
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    print(message, file=out)
    paths = render_trajectory(traj, out_dir / "frames", backend=backend, every=args.every,
                              colliders=[c.to_dict() for c in sim.scene.colliders],
                              camera=camera, size=(800, 600),
                              color_by=getattr(args, "color_by", "strand"), title=sim.name,
                              progress=not quiet)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        video = make_video(paths, out_dir / "video.mp4", gif_fallback=True)
    for w in caught:    # loud even with --quiet: the MP4 asked for was not written
        print(f"{_PROG}: warning: {w.message}", file=sys.stderr)
    print(f"frames: {out_dir / 'frames'} ({len(paths)} images)", file=out)
    print(f"video:  {video}", file=out)
    return Path(video)


def _summary(sim, traj, stats, wall: float, out_dir: Path, out) -> None:
    strain = max_edge_strain(traj.positions, traj.strand_offsets, traj.closed)
    steady = ("n/a" if not np.isfinite(stats.steady_step_ms)
              else f"{stats.steady_step_ms:.3f} ms per step")
    print(f"{sim.name}: {sim.frames} frames ({stats.steps} steps of {sim.dt:.4g} s) in "
          f"{wall:.2f} s wall time; steady rate {steady} (first step, with kernel compilation "
          f"on a cold cache: {stats.first_step_s:.2f} s)", file=out)
    mesh = mesh_edge_strains(traj.extra_points, traj.extra_segments, traj.extra_triangles,
                             traj.extra_tetrahedra)
    kinds = {"segments": "rod edges", "triangles": "triangle edges",
             "tetrahedra": "tetrahedron edges"}
    parts = ([f"strands {strain:.3e}"] if traj.n_strands or not mesh else []) + [
        f"{kinds[k]} {v:.3e}" for k, v in mesh.items()]
    print("max edge strain: " + ", ".join(parts), file=out)
    if stats.unconverged_steps:
        print(f"{stats.unconverged_steps} of {stats.steps} steps kept above the Newton "
              "tolerance (warned above; a smaller --dt, or the solver's max_iterations)",
              file=out)
    if stats.adaptive_steps:
        print(f"{stats.adaptive_steps} of {stats.steps} steps taken again to a Newton "
              "tolerance where one iteration strained an edge (adaptive_strain)", file=out)
    print(f"output: {out_dir}", file=out)


def _viewer(make, *args, **kw):
    """A viewer from ``make`` (render.viewer), its errors as usage errors."""
    from .render.viewer import ViewerUnavailable

    try:
        return make(*args, **kw)
    except (ViewerUnavailable, FileNotFoundError, ValueError) as exc:
        raise _UsageError(str(exc)) from None


def _cmd_view(args, out) -> int:
    from .render.viewer import serve, view_run

    return serve(_viewer(view_run, args.dir, host=args.host, port=args.port, speed=args.speed,
                         loop=args.loop), out=out)


def _run_live(sim, args, out) -> int:
    """``run --live``: the simulation in the viewer until Ctrl-C."""
    from .render.viewer import serve, view_live

    given = [o for o, v in (("--frames", args.frames), ("--out", args.out),
                            ("--render", args.render), ("--resume", args.resume),
                            ("--checkpoint-every", args.checkpoint_every)) if v]
    if given:
        raise _UsageError(f"--live shows the run until stopped and writes nothing: "
                          f"{', '.join(given)} do not apply")
    return serve(_viewer(view_live, sim, host=args.host, port=args.port, paused=args.paused),
                 out=out)


def _run_scene(sim, args, argv, out) -> int:
    """Simulate ``sim`` (overrides applied), stream the trajectory to disk, optionally render."""
    from .sim.runner import RunStats

    sim = _apply_overrides(sim, args)
    if getattr(args, "live", False):
        return _run_live(sim, args, out)
    out_dir = _out_dir(sim, args)
    camera = _camera(sim, args) if args.render else None     # bad --camera: before the run
    quiet = bool(getattr(args, "quiet", False))
    sink = _Null() if quiet else out
    resume = getattr(args, "resume", None)
    if resume is not None and not resume.is_file():
        raise _UsageError(f"checkpoint {resume} does not exist")
    try:     # a scene, step, checkpoint or length refused before the folder is touched
        solver = sim.make_solver()
        check_run(sim, solver, out_dir / "trajectory.h5", resume)
    except (ValueError, OSError, MemoryError) as exc:
        raise _UsageError(f"{_source(sim, args)}: {exc}") from None
    try:
        prepare_out_dir(out_dir, resume is not None)
    except OSError as exc:
        print(f"{_PROG}: error: cannot write to {out_dir}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    stats = RunStats()
    path = out_dir / "trajectory.h5"
    t0 = time.perf_counter()
    status = "complete"
    try:
        traj = simulate(sim, progress=not quiet, out=path, stats=stats,
                        on_compile=None if quiet else _compile_notice, resume=resume,
                        checkpoint_every=getattr(args, "checkpoint_every", None),
                        checkpoint_dir=out_dir / "checkpoints", solver=solver)
    except SimulationDiverged as exc:
        status = f"diverged: {exc}"
        write_scene_json(sim, out_dir, args, argv, stats, status)
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        print(f"{_PROG}: {path} holds the {stats.frames_done + 1} frames before it (marked "
              "'diverged')", file=sys.stderr)
        return EXIT_DIVERGED
    except KeyboardInterrupt:
        write_scene_json(sim, out_dir, args, argv, stats, "interrupted")
        print(f"{_PROG}: interrupted; {path} holds the {stats.frames_done + 1} frames done",
              file=sys.stderr)
        return 130
    except MemoryError as exc:
        raise _UsageError(str(exc)) from None
    except ValueError as exc:   # a checkpoint of another run; a scene the solver cannot model
        raise _UsageError(f"{_source(sim, args)}: {exc}") from None
    except OSError as exc:
        print(f"{_PROG}: error: cannot write the results to {out_dir}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    wall = time.perf_counter() - t0
    try:
        write_scene_json(sim, out_dir, args, argv, stats, status)
        _summary(sim, traj, stats, wall, out_dir, sink)
        if args.render:
            _render(sim, traj, out_dir, args, camera, sink, quiet)
    except OSError as exc:
        print(f"{_PROG}: error: cannot write the results to {out_dir}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    finally:
        close = getattr(traj, "close", None)
        if close is not None:
            close()
    return 0


def _compile_notice() -> None:
    print(f"{_PROG}: compiling the solver's kernels (first run only: they are cached for later "
          "runs) ...", file=sys.stderr, flush=True)


def _cmd_run(args, argv, out) -> int:
    from .cli_sagfree import HAIR_SUFFIXES

    if args.scene.lower().endswith(HAIR_SUFFIXES):
        if args.rest is not None and args.solver not in (None, "der"):
            raise _UsageError(f"--rest is a rest shape of discrete elastic rods (solver 'der'); "
                              f"the {args.solver!r} solver would not use it")
        return _run_scene(_hair_simulation(args), args, argv, out)
    for given, option in ((args.rest, "--rest"), (args.scale, "--scale")):
        if given is not None:
            raise _UsageError(f"{option} applies to hair files (.hair, .data)")
    return _run_scene(_load_scene(args.scene), args, argv, out)


def _hair_simulation(args):
    """The hair of a hair file on a head that nods and stops (discrete elastic rods), with the
    rest shape of ``--rest`` when given."""
    from .cli_sagfree import UsageError, load_hair
    from .io.restshape import read_rest_shape
    from .scenes.hair_head import hair_on_head

    try:
        hair = load_hair(args.scene, 1.0 if args.scale is None else args.scale)
        rest = None if args.rest is None else read_rest_shape(args.rest)
        return hair_on_head(hair, rest=rest)
    except (UsageError, ValueError, OSError) as exc:
        raise _UsageError(str(exc)) from None


def _cmd_demo(args, argv, out) -> int:
    from .scenes import get_scene

    args.render = True
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


# ---------------------------------------------------------------------------------- hair
#: The styles of ``strandlab hair generate`` (those of strandlab.scenes.hairstyles.HAIRSTYLES,
#: listed here so that building the parser imports no scene module).
_HAIR_STYLES = ("straight", "wavy", "curly", "coiled")
_HAIR_FORMATS = ("hair", "data")


def _nonnegative_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return v


def _add_hair_parser(sub) -> None:
    hair = sub.add_parser("hair", help="procedural hairstyles and hair files (.hair, .data)")
    hsub = hair.add_subparsers(dest="hair_command", metavar="HAIR_COMMAND")
    hsub.required = True
    gen = hsub.add_parser("generate", help="write a procedural hairstyle to a .hair or .data "
                          "file")
    gen.add_argument("--out", type=_path, metavar="FILE", required=True,
                     help="the file to write (.hair or .data, or give --format)")
    gen.add_argument("--style", choices=_HAIR_STYLES, default="straight",
                     help="the hairstyle (default straight)")
    gen.add_argument("--strands", type=_positive_int, default=1000, metavar="N",
                     help="number of strands (default 1000)")
    gen.add_argument("--vertices", type=_positive_int, default=100, metavar="V",
                     help="vertices per strand (default 100, at least 2)")
    gen.add_argument("--seed", type=_nonnegative_int, default=0, metavar="S",
                     help="random seed (default 0)")
    gen.add_argument("--length", type=_positive_float, default=0.25, metavar="M",
                     help="mean strand length [m] (default 0.25)")
    gen.add_argument("--scalp-radius", type=_positive_float, default=0.1, metavar="M",
                     help="radius of the spherical scalp [m] (default 0.1)")
    gen.add_argument("--variation", type=float, default=0.15, metavar="F",
                     help="relative spread of length, amplitude and period, in [0, 0.9] "
                          "(default 0.15)")
    gen.add_argument("--amplitude", type=_positive_float, metavar="M",
                     help="wave amplitude or curl radius [m] (default: the style's)")
    gen.add_argument("--period", type=_positive_float, metavar="M",
                     help="wavelength or curl pitch [m] (default: the style's)")
    gen.add_argument("--thickness", type=_positive_float, default=7e-5, metavar="M",
                     help="hair diameter [m], the header's default thickness (default 7e-5)")
    _add_hair_file_options(gen)
    info = hsub.add_parser("info", help="describe a hair file: counts, lengths, arrays")
    info.add_argument("file", type=Path, metavar="FILE", help="a .hair or .data file")
    _add_hair_file_options(info)


def _add_hair_file_options(parser) -> None:
    parser.add_argument("--scale", type=_positive_float, default=1.0, metavar="S",
                        help="metres per file unit (0.01: the file is in centimetres; "
                             "default 1)")
    parser.add_argument("--format", choices=_HAIR_FORMATS,
                        help="file format (default: by the suffix, .hair or .data)")


def _cmd_hair(args, out) -> int:
    if args.hair_command == "generate":
        return _cmd_hair_generate(args, out)
    return _cmd_hair_info(args, out)


def _cmd_hair_generate(args, out) -> int:
    """Write a procedural hairstyle to ``--out``."""
    from .io.hairfile import hair_format, write_hair
    from .scenes.hairstyles import generate_hairstyle

    try:
        fmt = hair_format(args.out, args.format)
        hair = generate_hairstyle(
            args.style, n_strands=args.strands, vertices_per_strand=args.vertices,
            length=args.length, scalp_radius=args.scalp_radius, seed=args.seed,
            variation=args.variation, amplitude=args.amplitude, period=args.period,
            thickness=args.thickness)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    try:
        write_hair(args.out, hair, scale=args.scale, format=fmt)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    except OSError as exc:
        print(f"{_PROG}: error: cannot write {args.out}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    lengths = hair.lengths()
    print(f"wrote {args.out} ({fmt}, file unit {args.scale:g} m): {hair.n_strands} "
          f"{args.style} strands of {args.vertices} vertices ({hair.n_points} points), lengths "
          f"{lengths.min():.4g} .. {lengths.max():.4g} m, seed {args.seed}", file=out)
    return 0


def _cmd_hair_info(args, out) -> int:
    """Describe a hair file: format, counts, lengths, arrays, defaults, information text."""
    from .io.hairfile import (
        FLAG_COLORS,
        FLAG_POINTS,
        FLAG_SEGMENTS,
        FLAG_THICKNESS,
        FLAG_TRANSPARENCY,
        hair_format,
        read_hair,
        read_hair_header,
    )

    try:
        fmt = hair_format(args.file, args.format)
        hair = read_hair(args.file, scale=args.scale, format=fmt, allow_coincident=True)
        header = read_hair_header(args.file) if fmt == "hair" else None
    except (ValueError, OSError) as exc:
        raise _UsageError(str(exc)) from None
    counts = hair.vertex_counts
    lengths = hair.lengths()
    rows = [("file", str(args.file)), ("format", f".{fmt} (file unit {args.scale:g} m)")]
    if header is not None:
        names = [n for f, n in ((FLAG_SEGMENTS, "segments"), (FLAG_POINTS, "points"),
                                (FLAG_THICKNESS, "thickness"),
                                (FLAG_TRANSPARENCY, "transparency"), (FLAG_COLORS, "colors"))
                 if header["flags"] & f]
        rows.append(("flags", f"{header['flags']:#04x} ({', '.join(names)})"))
        if not header["flags"] & FLAG_SEGMENTS:
            rows.append(("default segments", str(header["default_segments"])))
    rows += [("strands", str(hair.n_strands)), ("points", str(hair.n_points))]
    if hair.n_strands:
        lo, hi = hair.points.min(axis=0), hair.points.max(axis=0)
        rows += [("vertices per strand", f"{counts.min()} .. {counts.max()} "
                                         f"(mean {counts.mean():.4g})"),
                 ("length", f"{lengths.min():.4g} .. {lengths.max():.4g} m "
                            f"(mean {lengths.mean():.4g} m)"),
                 ("extent", "  ".join(f"{a} {lo[i]:.4g} .. {hi[i]:.4g}"
                                      for i, a in enumerate("xyz")) + " m")]
    if fmt == "hair":
        th = hair.thickness
        rows += [("thickness", f"per point, {th.min():.4g} .. {th.max():.4g} m"
                  if th is not None and len(th) else f"default {hair.default_thickness:.4g} m"),
                 ("transparency", "per point" if hair.transparency is not None
                  else f"default {hair.default_transparency:.4g}"),
                 ("colors", "per point" if hair.colors is not None
                  else "default " + ", ".join(f"{c:.4g}" for c in hair.default_color)),
                 ("info", repr(hair.info))]
    rows += [("strands of < 3 vertices", str(len(hair.short_strands(3)))),
             ("zero-length edges", str(len(hair.zero_length_edges())))]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k + ':':<{width + 1}} {v}", file=out)
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
        if args.command == "hair":
            return _cmd_hair(args, out)
        if args.command == "view":
            return _cmd_view(args, out)
        if args.command == "export":
            from .cli_export import run as export

            return export(args, out)
        if args.command == "mesh":
            from .cli_mesh import run as mesh

            return mesh(args, out)
        if args.command == "sagfree":
            from .cli_sagfree import UsageError, run

            try:
                return run(args, out)
            except UsageError as exc:
                raise _UsageError(str(exc)) from None
        return _cmd_run(args, argv, out)
    except _UsageError as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SimulationDiverged as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return EXIT_DIVERGED
    except MissingExtra as exc:       # an optional dependency the command needs
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:           # what reads the output has stopped (``| head``)
        with contextlib.suppress(OSError, ValueError, AttributeError):   # no flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141                    # the shell's status for a write to a closed pipe


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
