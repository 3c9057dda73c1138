"""examples/pennant.toml: a rod in a rubber grip with a cloth pennant, modelled in Gmsh
(examples/pennant.geo, a Gmsh script meshed by Gmsh when the scene is loaded): physical groups
as parts, a group of several curves as one rod, a rod curve embedded in a volume, a pennant of
quadrilaterals, and a group without material ("clamp") held by name and turned by a frame."""
from pathlib import Path

import numpy as np
import pytest

from strandlab.cli import mesh_edge_strains
from strandlab.io.scenefile import load_scene_file
from strandlab.io.simplicial import file_cells
from strandlab.sim.runner import simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PENNANT = EXAMPLES / "pennant.toml"
G = 9.81


def test_the_script_meshes_into_its_groups():
    pytest.importorskip("gmsh")
    _, _, cells = file_cells(EXAMPLES / "pennant.geo")
    got = {name: tuple(len(c) for c in three) for name, three in cells.items()}
    assert set(got) == {"rod", "clamp", "pennant", "grip"}
    # Gmsh 4.15: 23 rod edges, 14 triangles on the clamp face, 56 quadrilaterals (112
    # triangles), 184 tetrahedra; another Gmsh may mesh otherwise: the same kinds, to 25 %
    for name, want in {"rod": (23, 0, 0), "clamp": (0, 14, 0), "pennant": (0, 112, 0),
                       "grip": (0, 0, 184)}.items():
        assert np.allclose(got[name], want, rtol=0.25), name


def _beam(e, inertia, length, w=0.0, force=0.0, moment=0.0, at=None):
    """Euler-Bernoulli cantilever of stiffness ``e * inertia`` and ``length``: the end's
    deflection and slope under a load ``w`` per length, an end ``force`` and ``moment``; with
    ``at``, the end's deflection under ``force`` applied at ``at`` from the clamp."""
    ei = e * inertia
    if at is not None:
        return force * at ** 2 * (3 * length - at) / (6 * ei)
    return (w * length ** 4 / (8 * ei) + force * length ** 3 / (3 * ei)
            + moment * length ** 2 / (2 * ei),
            w * length ** 3 / (6 * ei) + force * length ** 2 / (2 * ei) + moment * length / ei)


def test_the_pennant_sags_turns_and_swings_out():
    sim = load_scene_file(PENNANT)
    traj = simulate(sim)
    x, t = np.asarray(traj.extra_points), np.asarray(traj.times)
    (spec,) = sim.scene.simplicial
    assert [p.name for p in spec.parts] == ["rod", "pennant", "grip"]
    rod = np.unique(traj.extra_segments)
    tip = rod[np.argmax(x[0, rod, 0])]
    before = np.argmin(np.abs(t - 0.5))
    # the clamp (held by name) turns as its frame: still, then a quarter turn about z
    held = np.array(spec.holds[0].vertices) + sim.scene.extra_layout()["simplicial"][0]
    assert np.all(x[0, held, 0] == 0.0) and len(held) == 12
    assert np.abs(x[:before + 1, held] - x[0, held]).max() == 0.0
    turned = x[0, held] @ np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(x[-1, held], turned, atol=1e-12)
    # before the turn the tip has sagged (at rest), between two beam-theory bounds: the rod
    # alone in a rigid grip, and the rod in a grip of rubber alone (the rod inside it left out)
    rod_e, rod_r, rod_rho = 3.5e10, 0.003, 1900.0
    grip_e, side, grip_rho = 5.0e6, 0.04, 1100.0
    cloth = 0.2 * 0.12 * 1e-4 * 1140.0 * G                          # the pennant's weight [N]
    free, w = 0.45, rod_rho * G * np.pi * rod_r ** 2                # the rod out of the grip
    inertia = np.pi * rod_r ** 4 / 4
    rod_sag = _beam(rod_e, inertia, free, w=w)[0] + _beam(rod_e, inertia, free, force=cloth,
                                                          at=0.35)
    dg, slope = _beam(grip_e, side ** 4 / 12, 0.15, w=grip_rho * G * side ** 2,
                      force=w * free + cloth, moment=w * free ** 2 / 2 + cloth * 0.35)
    sag = x[0, tip, 2] - x[before, tip, 2]
    assert rod_sag < sag < rod_sag + dg + slope * free              # 1.6 < 6.6 < 13 mm
    assert abs(x[before - 6, tip, 2] - x[before, tip, 2]) < 1e-3 * sag        # at rest
    # after the turn the tip points along y
    assert np.degrees(np.arctan2(x[-1, tip, 1], x[-1, tip, 0])) == pytest.approx(90.0, abs=3.0)
    # the pennant hangs still before the turn and swings out about the rod in it (measured
    # up to 93 degrees from hanging straight down)
    pen = np.setdiff1d(np.unique(traj.extra_triangles),
                       np.union1d(rod, np.unique(traj.extra_tetrahedra)))
    edge = rod[x[0, rod, 0] >= 0.4 - 1e-9]
    swing = []
    for k in range(len(t)):
        a, b = x[k, edge].min(axis=0), x[k, tip]
        axis = (b - a) / np.linalg.norm(b - a)
        r = x[k, pen].mean(axis=0) - (a + b) / 2
        r -= r @ axis * axis
        down = np.array([0.0, 0.0, -1.0]) - (-axis[2]) * axis
        swing.append(np.degrees(np.arccos(r @ down / np.linalg.norm(r) / np.linalg.norm(down))))
    swing = np.array(swing)
    assert swing[:before + 1].max() < 2.0
    assert swing[before:].max() > 60.0
    # nothing stretches: cloth below 2 %, the fibreglass rod 1e-4, the rubber grip 2 %
    s = mesh_edge_strains(x, traj.extra_segments, traj.extra_triangles,
                          traj.extra_tetrahedra)
    assert s["triangles"] < 0.02 and s["segments"] < 1e-4 and s["tetrahedra"] < 0.02
