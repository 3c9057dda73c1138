"""Every built-in scene, run for one frame with its own solver, renders with the strands where
they are: pixels at projected strand vertices are drawn, a corner far from everything is not."""
import numpy as np
import pytest
import pyvista  # noqa: F401  (the render extra, in the test extra)

from strandlab.render.tubes import BACKGROUND, TubeRenderer
from strandlab.scenes import SCENES, get_scene
from strandlab.sim.runner import simulate

SIZE = (160, 120)


def _drawn(img, tol=12):
    """Mask [h, w] of pixels that differ from the background."""
    return np.any(np.abs(img.astype(int) - np.array(BACKGROUND)) > tol, axis=2)


def _sample_points(traj, n_strands=6):
    """Points [k, 3] to find drawn: the middle and end vertices of up to ``n_strands`` strands
    spread over the scene, or, in a scene without strands (a rod/shell/solid mesh), a few of
    its mesh vertices."""
    if traj.n_strands == 0:
        pts = traj.extra_points[0]
        return pts[np.unique(np.linspace(0, len(pts) - 1, 6).astype(int))]
    return traj.positions[0][_sample_vertices(traj, n_strands)]


def _sample_vertices(traj, n_strands=6):
    """Middle and end vertex indices of up to ``n_strands`` strands spread over the scene."""
    off = traj.strand_offsets
    picks = np.unique(np.linspace(0, traj.n_strands - 1, min(n_strands, traj.n_strands))
                      .astype(int))
    return np.array([v for s in picks for v in ((off[s] + off[s + 1]) // 2, off[s + 1] - 1)])


#: Scenes whose first step compiles kernels for minutes from an empty Numba cache (the hanging
#: bridge's chain step with its clusters: about two) and that a test file of their own steps
#: in the default run (tests/scenes/test_csm_bridge.py): rendered with ``-m slow``, so that the
#: default run does not compile them twice at once on its two workers.
HEAVY_FIRST_STEP = {"csm_bridge"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow)
                                  if n in HEAVY_FIRST_STEP else n for n in sorted(SCENES)])
def test_first_frame_of_every_scene_shows_its_strands(name):
    sim = get_scene(name)
    traj = simulate(sim.with_overrides(frames=1))
    colliders = [c.to_dict() for c in sim.scene.colliders]
    with TubeRenderer(traj, colliders=colliders, size=SIZE, frames=[0]) as r:
        img = r.image(0)
        drawn = _drawn(img)
        assert img.shape == (SIZE[1], SIZE[0], 3)
        px = np.rint(r.view.project(_sample_points(traj), SIZE)).astype(int)
    assert np.all((px >= 1) & (px < np.array(SIZE) - 1)), f"{name}: strands outside the image"
    for c, row in px:
        assert drawn[row - 1:row + 2, c - 1:c + 2].any(), f"{name}: nothing drawn at ({c}, {row})"
    # the top corners hold nothing (the camera fits the scene with a margin)
    assert not drawn[:6, :6].any() and not drawn[:6, -6:].any(), name
    # and the scene does not fill the image
    assert 0.002 < drawn.mean() < 0.8, name
