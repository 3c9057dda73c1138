"""``strandlab sagfree INPUT --out REST.npz``: optimize the rest shape of every strand of a hair
file (``.hair``, ``.data``) so that it holds its shape under gravity, and write the rest-shape
file that ``strandlab run INPUT --rest REST.npz`` simulates with (docs/sagfree.md)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["add_parser", "run", "load_hair", "HAIR_SUFFIXES"]

HAIR_SUFFIXES = (".hair", ".data")


class UsageError(Exception):
    """A usage error of the command (the command line prints it and exits with status 2)."""


def add_parser(sub, positive_float, positive_int) -> None:
    p = sub.add_parser("sagfree", help="optimize the rest shape of a hair file's strands so "
                                       "that they hold their shape under gravity")
    p.add_argument("input", metavar="INPUT", help="a hair file (.hair or .data)")
    p.add_argument("--out", type=Path, required=True, metavar="FILE",
                   help="the rest-shape file to write (.npz)")
    p.add_argument("--scale", type=positive_float, default=1.0, metavar="S",
                   help="metres per file unit (0.01 for centimetres; default 1)")
    p.add_argument("--objective", choices=("kinetic", "force"), default="kinetic",
                   help="kinetic energy (default, the paper's) or force norm")
    p.add_argument("--mode", choices=("penalty", "exact"), default=None,
                   help="box constraints by a penalty (the paper; the default) or exact "
                        "equilibrium (the default with --stiffen or --stabilize)")
    p.add_argument("--no-twist", action="store_true", help="leave the rest twist out")
    p.add_argument("--stiffen", action="store_true",
                   help="exact mode: scale up the stiffness of strands the box cannot hold")
    p.add_argument("--stabilize", action="store_true",
                   help="also stiffen strands whose equilibrium is unstable until it is stable "
                        "(implies --mode exact --stiffen)")
    p.add_argument("--chunk", type=positive_int, default=64, metavar="N",
                   help="strands per progress-bar step (default 64)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")


def load_hair(path: str, scale: float):
    """The hair of a ``.hair`` or ``.data`` file to simulate or optimize: UsageError naming the
    file for an unreadable file, one that holds no strands, or a strand of a single point (the
    reader keeps those; a rod needs at least 2)."""
    from .io.hairfile import read_hair

    try:
        hair = read_hair(path, scale=scale)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if hair.n_strands == 0:
        raise UsageError(f"{path}: holds no strands")
    short = np.nonzero(hair.vertex_counts < 2)[0]
    if len(short):
        raise UsageError(f"{path}: strand {int(short[0])} has 1 point (a strand needs at "
                         "least 2)")
    return hair


def check_out(out: Path) -> Path:
    """``out`` if it can name a rest-shape file: not a folder, ending in ``.npz`` (UsageError
    otherwise, before any work)."""
    if out.is_dir():
        raise UsageError(f"--out {out}: is a folder; give the rest-shape file to write "
                         "(a .npz file)")
    if out.suffix != ".npz":
        raise UsageError(f"--out {out}: the rest shape is written as a .npz file; give a name "
                         "ending in .npz")
    return out


def run(args, out=sys.stdout) -> int:
    """The ``sagfree`` command (see the module docstring)."""
    from tqdm import tqdm

    from .der.compile import compile_scene
    from .inverse import SagFreeSettings, optimize_rest_shape
    from .io.atomic import check_writable_folder
    from .io.restshape import RestShapeFile, points_digest, write_rest_shape
    from .scenes.hair_head import hair_scene

    if not args.input.lower().endswith(HAIR_SUFFIXES):
        raise UsageError(f"{args.input}: sagfree reads hair files (.hair, .data)")
    check_out(args.out)
    try:        # before the optimisation: a missing folder is found now, not after it
        check_writable_folder(args.out)
    except OSError as exc:
        print(f"strandlab: error: {exc}", file=sys.stderr)
        return 1
    hair = load_hair(args.input, args.scale)
    try:
        scene, _, _ = hair_scene(hair, nod=0.0, where=args.input)
        model = compile_scene(scene)
        exact = args.stabilize or args.stiffen
        if exact and args.mode == "penalty":
            raise ValueError("--stiffen and --stabilize need --mode exact")
        settings = SagFreeSettings(objective=args.objective,
                                   mode="exact" if exact else (args.mode or "penalty"),
                                   rest_twist=not args.no_twist, stiffen=exact,
                                   stabilize=args.stabilize)
    except ValueError as exc:
        raise UsageError(f"{args.input}: {exc}") from None
    n = model.n_strands
    rest_length = np.array(model.rest_length)
    rest_curv = np.array(model.rest_curvature)
    rest_twist = np.array(model.rest_twist)
    scale = np.ones(n)
    status = np.full(n, "not optimized", dtype=object)
    worst, seconds, unstable = 0.0, 0.0, 0
    bar = tqdm(total=n, unit="strand", disable=args.quiet, file=sys.stderr,
               desc="sagfree")
    for a in range(0, n, args.chunk):
        res = optimize_rest_shape(model, settings, strands=np.arange(a, min(n, a + args.chunk)))
        seconds += res.seconds
        for r in res.reports:
            s = r.strand
            status[s] = r.status
            worst = max(worst, r.residual_force)
            unstable += r.negative_modes > 0
            scale[s] = res.stiffness_scale[s]
            es = slice(int(model.strand_edge_start[s]), int(model.strand_edge_start[s + 1]))
            bs = slice(int(model.strand_bend_start[s]), int(model.strand_bend_start[s + 1]))
            rest_length[es] = res.rest.rest_length[es]
            rest_curv[bs] = res.rest.rest_curvature[bs]
            rest_twist[bs] = res.rest.rest_twist[bs]
        bar.update(len(res.reports))
    bar.close()
    rest = RestShapeFile(vertex_counts=hair.vertex_counts, points_sha256=points_digest(
        hair.points), rest_length=rest_length, rest_curvature=rest_curv, rest_twist=rest_twist,
        stiffness_scale=scale, status=status.astype(str))
    try:
        path = write_rest_shape(args.out, rest)
    except OSError as exc:
        print(f"strandlab: error: cannot write {args.out}: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        kinds, counts = np.unique(status.astype(str), return_counts=True)
        summary = ", ".join(f"{c} {k}" for k, c in zip(kinds, counts))
        print(f"{n} strands optimized in {seconds:.2f} s: {summary}; largest residual force "
              f"{worst:.3g} N; {unstable} unstable (negative modes); rest shape written to "
              f"{path}", file=out)
    return 0
