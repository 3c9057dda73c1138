"""The output folder of ``strandlab run``: what a run there removes of the one before, and the
``scene.json`` record it writes (:mod:`strandlab.cli`)."""
from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path

__all__ = ["prepare_out_dir", "write_scene_json"]

#: What a previous run may have left in an output folder; removed before a new run writes there
#: (a resumed run keeps the trajectory it continues and the checkpoints).
_STALE = ("trajectory.h5", "trajectory.npz", "scene.json", "video.mp4", "video.gif",
          "trajectory.usd", "trajectory.abc", "vtu/trajectory.pvd")
#: Folders of frames a run or ``strandlab export`` writes into the output folder.
_STALE_FRAMES = (("frames", "png"), ("obj", "obj"), ("ply", "ply"), ("vtu", "vtu"))
_KEEP_ON_RESUME = ("trajectory.h5",)


def prepare_out_dir(out_dir: Path, resume: bool = False) -> None:
    """Create ``out_dir``, check that it is writable, and remove a previous run's outputs, its
    exports among them (so that old frames never mix with new ones; a resumed run keeps the
    trajectory and the checkpoints).  OSError when it cannot be written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    probe = out_dir / ".strandlab-write-test"
    probe.write_bytes(b"")
    probe.unlink()
    for name in _STALE:
        if not (resume and name in _KEEP_ON_RESUME):
            (out_dir / name).unlink(missing_ok=True)
    stale = [(folder, f"frame_*.{suffix}") for folder, suffix in _STALE_FRAMES]
    for folder, pattern in stale + ([] if resume else [("checkpoints", "frame_*.npz")]):
        if (out_dir / folder).is_dir():
            for f in (out_dir / folder).glob(pattern):
                f.unlink()


def write_scene_json(sim, out_dir: Path, args, argv, stats, status: str) -> None:
    """``out_dir/scene.json``: every parameter of ``sim``, the command line and how the run
    went (``status``, the :class:`~strandlab.sim.runner.RunStats` ``stats``; a time not
    measured, as the steady step of a run of one step, is null: JSON has no NaN)."""
    record = sim.to_dict()
    record["command_line"] = _options(args, argv)
    steady = stats.steady_step_ms if math.isfinite(stats.steady_step_ms) else None
    record["run"] = {"status": status, "frames_done": stats.frames_done,
                     "steps": stats.steps, "first_step_s": stats.first_step_s,
                     "steady_step_ms": steady, "unconverged_steps": stats.unconverged_steps,
                     "adaptive_steps": stats.adaptive_steps}
    from .io.trajectory import json_default

    text = json.dumps(record, indent=2, default=partial(json_default, strict=False))
    (out_dir / "scene.json").write_text(text + "\n", encoding="utf-8")


def _options(args, argv) -> dict:
    """The command line as recorded in ``scene.json``."""
    opts = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"argv": list(argv), **opts}
