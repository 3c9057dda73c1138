"""Contacts with planes through the solver: resting height and Coulomb friction.

References:
- A rope at rest on a plane touches it with its contact radius: every centreline vertex lies
  exactly ``r`` above the plane (the collision projection runs last in each pass and puts a
  penetrating point on the offset surface; at rest gravity presses every vertex into it).
- Coulomb friction on an incline of angle ``theta``: a body at rest stays at rest when
  ``tan(theta) <= mu`` and slides with acceleration ``a = g (sin(theta) - mu cos(theta))`` above
  it.  The solver's velocity-level friction removes ``mu`` times the normal velocity change
  (``depth / dt``) from the tangential velocity each step, which is this law exactly for a point
  starting from rest; a straight rope lying across the slope has no internal forces, so the same
  holds for it.  The threshold is found by bisection on ``tan(theta) / mu`` to 1%, and the
  sliding acceleration is checked to 2% (the first step has no ghost-gravity history and the
  rope settles into contact; measured: below 0.7%).
"""
import math

import numpy as np
import pytest

import strandlab as sl
from strandlab.pbd import compile_scene
from strandlab.sim.shapes import line

RADIUS = 0.005
G = 9.81


def _rope_on_plane(gravity, normal=(0, 0, 1), point=(0, 0, 0), friction=0.0, n=8, lift=0.0,
                   length=0.3):
    """A straight rope across the x direction, its axis ``RADIUS + lift`` above the plane."""
    normal = np.asarray(normal, float) / np.linalg.norm(normal)
    side = np.cross(normal, [1.0, 0.0, 0.0])
    if np.linalg.norm(side) < 1e-6:
        side = np.cross(normal, [0.0, 1.0, 0.0])
    side /= np.linalg.norm(side)
    start = np.asarray(point, float) + (RADIUS + lift) * normal
    b = sl.SceneBuilder(gravity=tuple(gravity))
    mat = sl.Material(young_modulus=1e6, density=1000.0, radius=RADIUS)
    b.add_strand(line(start, start + length * side, n), material=mat, d1=normal)
    b.add_plane(point, normal, friction=friction)
    return compile_scene(b.build()), normal


def _run(model, steps, dt, **settings):
    solver = sl.PBDSolver(model, sl.PBDSettings(**settings))
    st = model.state()
    for _ in range(steps):
        solver.step(st, st, dt)
    return st


@pytest.mark.parametrize("normal, point", [((0, 0, 1), (0, 0, 0)),
                                           ((0.2, -0.3, 0.9), (0.1, 0.4, -0.2))])
def test_rope_comes_to_rest_at_its_radius_above_the_plane(normal, point):
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    model, n = _rope_on_plane(-G * n, n, point, friction=0.3, lift=0.02)
    st = _run(model, 300, 1 / 200, damping=5.0)
    vtx = st.x[: model.n_vertices]
    height = (vtx - np.asarray(point)) @ n
    assert height == pytest.approx(np.full(len(vtx), RADIUS), abs=1e-9)
    assert np.abs(st.v[: model.n_vertices]).max() < 1e-6


def _slide(ratio, mu=0.5, steps=100, dt=1 / 500, theta=None):
    """Mean down-slope velocity of the rope's vertices after ``steps`` on an incline with
    ``tan(theta) = ratio * mu`` (or the given ``theta``); returns (velocity, theta)."""
    theta = math.atan(ratio * mu) if theta is None else theta
    gravity = G * np.array([math.sin(theta), 0.0, -math.cos(theta)])  # down-slope is +x
    model, _ = _rope_on_plane(gravity, friction=mu)
    st = _run(model, steps, dt)
    return float(np.mean(st.v[: model.n_vertices, 0])), theta


def test_rope_on_an_incline_holds_below_the_friction_angle():
    for ratio in (0.0, 0.5, 0.9, 0.97):
        v, _ = _slide(ratio)
        assert abs(v) < 1e-9


def test_rope_on_an_incline_slides_with_the_coulomb_acceleration():
    mu, steps, dt = 0.5, 100, 1 / 500
    for ratio in (1.1, 1.5, 3.0):
        v, theta = _slide(ratio, mu, steps, dt)
        a = G * (math.sin(theta) - mu * math.cos(theta))
        assert v == pytest.approx(a * steps * dt, rel=0.02)
    # frictionless: the full down-slope component of gravity
    v, theta = _slide(None, 0.0, steps, dt, theta=0.3)
    assert v == pytest.approx(G * math.sin(theta) * steps * dt, rel=0.02)


def test_friction_threshold_by_bisection_is_tan_theta_equal_mu():
    mu = 0.5
    lo, hi = 0.5, 1.5   # held at lo, sliding at hi (ratio = tan(theta) / mu)
    assert _slide(lo, mu)[0] < 1e-6 and _slide(hi, mu)[0] > 1e-2
    while hi - lo > 0.01:
        mid = 0.5 * (lo + hi)
        v, theta = _slide(mid, mu)
        # sliding: more than 1% of the frictionless speed
        if v > 0.01 * G * math.sin(theta) * 100 / 500:
            hi = mid
        else:
            lo = mid
    assert 0.5 * (lo + hi) == pytest.approx(1.0, abs=0.02)
