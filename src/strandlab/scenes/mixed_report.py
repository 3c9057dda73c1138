"""The measured figures of the rod/shell/solid objects (the scene table of docs/mixed.md), at
the scenes' defaults and the run lengths of their tests:

    python -m strandlab.scenes.mixed_report [frisbee] [toy_ball] [sticky_hand] [jellyfish]
                                            [anglerfish]

(all of them without arguments).  Each line names the scene and variant, its vertex count,
the measured quantities and the wall time of the run.
"""
from __future__ import annotations

import sys
import time

from .mixed_creatures import (
    anglerfish_measures,
    jellyfish_measures,
    mixed_anglerfish,
    mixed_jellyfish,
    track_creature,
)
from .mixed_toys import (
    FRISBEE_RIMS,
    STICKY_HANDS,
    fingertip_drop,
    frisbee_measures,
    mixed_frisbee,
    mixed_sticky_hand,
    mixed_toy_ball,
    run_mixed,
    toy_ball_measures,
)

__all__ = ["main", "REPORTS"]


def _line(name: str, n: int, values: dict, t0: float) -> None:
    text = "  ".join(f"{k} {v}" for k, v in values.items())
    print(f"{name:32s} {n:4d} vertices  {text}  ({time.perf_counter() - t0:.1f} s)", flush=True)


def _mm(v: float) -> str:
    return f"{1e3 * v:.1f} mm"


def frisbee() -> None:
    for rim in FRISBEE_RIMS:
        t0 = time.perf_counter()
        sim = mixed_frisbee(rim=rim)
        sol, s = run_mixed(sim)
        m = frisbee_measures(sim, sol.model.positions(s.q))
        _line(sim.name, sol.model.n_vertices, {"bulge": _mm(m["bulge"]),
                                              "tilt": f"{m['tilt']:.1f} deg",
                                              "rim low": _mm(m["rim_low"])}, t0)


def toy_ball() -> None:
    for joints in ("elastic", "free"):
        t0 = time.perf_counter()
        sim = mixed_toy_ball(joints=joints)
        m = toy_ball_measures(sim, round(0.3 / sim.dt))
        _line(sim.name, len(sim.scene.simplicial[0].vertices),
              {"lowest / start": f"{m['lowest'] / m['start']:.3f}",
               "farthest": _mm(m["farthest"]), "clearance": _mm(m["clearance"])}, t0)


def sticky_hand() -> None:
    for hand, connection in [(h, True) for h in STICKY_HANDS] + [("blue", False)]:
        t0 = time.perf_counter()
        sim = mixed_sticky_hand(hand=hand, connection=connection)
        sol, s = run_mixed(sim)
        _line(sim.name, sol.model.n_vertices,
              {"E": f"{sim.params['young'] / 1e6:g} MPa",
               "fingertip drop": _mm(fingertip_drop(sim, sol.model.positions(s.q)))}, t0)


def _creature(build, measure) -> None:
    for connections in (True, False):
        t0 = time.perf_counter()
        sim = build(connections=connections)
        m = track_creature(sim, measure(), steps=100)
        _line(sim.name, len(sim.scene.simplicial[0].vertices),
              {k: (_mm(lo) + " .. " + _mm(hi) if k.endswith("height") else
                   f"{lo:.1f} .. {hi:.1f} deg") for k, (lo, hi) in m.items()}, t0)


def jellyfish() -> None:
    _creature(mixed_jellyfish, jellyfish_measures)


def anglerfish() -> None:
    _creature(mixed_anglerfish, anglerfish_measures)


REPORTS = {"frisbee": frisbee, "toy_ball": toy_ball, "sticky_hand": sticky_hand,
           "jellyfish": jellyfish, "anglerfish": anglerfish}


def main(argv=None) -> int:
    names = list(sys.argv[1:] if argv is None else argv) or list(REPORTS)
    unknown = [n for n in names if n not in REPORTS]
    if unknown:
        print(f"unknown object {unknown[0]!r}; choose from {', '.join(REPORTS)}",
              file=sys.stderr)
        return 2
    for n in names:
        REPORTS[n]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
