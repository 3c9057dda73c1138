"""Kinematic frame motions (sim/motion.py): keyframes and functions of time, alone and driving a
clamped strand end through the position-based solver.

References:
- Keyframes docstring: the pose at a key time is that key's exactly; origins follow a cubic
  spline and rotations ``R_0 exp(phi(t))`` with a cubic spline ``phi``, both with zero rate at
  the ends, so the velocity and the angular velocity are continuous across the keys and zero at
  the first and last key; before the first and after the last key the frame holds still.
  Finite differences with step ``h`` of a C2 curve differ across a key by O(h |acceleration|),
  and a one-sided difference at a rest end is O(h |acceleration|): with h = 1e-6 s and
  accelerations of order 10 (m or rad)/s^2 both are below 1e-4, against speeds of order 1, while
  a curve with a kink (piecewise linear, or a rotation spline with free ends) gives a jump of
  order 1.
- SceneBuilder.attach_to_frame: the held end vertex keeps its position in the frame's axes,
  x(t) = o(t) + R(t) R(0)^T (x(0) - o(0)); the solver places driven points there exactly (they
  are kinematic), so the match is to round-off (1e-12 of the coordinates).
- FunctionMotion docstring: the result of ``fn(t)`` is checked at every call, and an error names
  the function and the time.
"""
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import strandlab as sl
from strandlab.sim.motion import FunctionMotion, Keyframes
from strandlab.sim.shapes import line

TIMES = [0.2, 0.7, 1.1, 1.8]
ORIGINS = [[0.0, 0.0, 0.0], [0.3, -0.1, 0.2], [0.5, 0.2, 0.1], [0.4, 0.4, -0.2]]
ROTVECS = [[0.0, 0.0, 0.0], [0.4, 0.1, 1.2], [-0.3, 0.6, 2.4], [0.2, -0.2, 3.5]]
H = 1e-6


def _keys(rotations=True):
    r = Rotation.from_rotvec(ROTVECS).as_matrix() if rotations else None
    return Keyframes(TIMES, ORIGINS, r)


def _velocity(m, t0, t1):
    """Linear [m/s] and angular [rad/s] velocity from the poses at t0 and t1 > t0."""
    r0, o0 = m.pose(t0)
    r1, o1 = m.pose(t1)
    w = Rotation.from_matrix(r1 @ r0.T).as_rotvec()
    return (o1 - o0) / (t1 - t0), w / (t1 - t0)


# ----------------------------------------------------------------------------- keyframes
def test_pose_at_the_keys_is_the_keys_exactly():
    m = _keys()
    rots = Rotation.from_rotvec(ROTVECS).as_matrix()
    for k, t in enumerate(TIMES):
        r, o = m.pose(t)
        assert np.array_equal(o, ORIGINS[k])
        assert np.array_equal(r, rots[k])


def test_pose_between_keys_is_a_proper_rotation_and_moves():
    m = _keys()
    r, o = m.pose(0.5 * (TIMES[1] + TIMES[2]))
    assert np.allclose(r.T @ r, np.eye(3), atol=1e-12) and np.linalg.det(r) == pytest.approx(1.0)
    assert not np.allclose(o, ORIGINS[1]) and not np.allclose(o, ORIGINS[2])


@pytest.mark.parametrize("k", [1, 2])
def test_velocity_is_continuous_across_keys(k):
    m = _keys()
    t = TIMES[k]
    v_left, w_left = _velocity(m, t - H, t)
    v_right, w_right = _velocity(m, t, t + H)
    assert np.linalg.norm(v_left) > 0.1 and np.linalg.norm(w_left) > 0.5    # it does move
    assert np.linalg.norm(v_left - v_right) < 1e-4
    assert np.linalg.norm(w_left - w_right) < 1e-4


def test_velocity_is_zero_at_the_ends_and_the_frame_holds_outside():
    m = _keys()
    t0, t1 = TIMES[0], TIMES[-1]
    for v, w in (_velocity(m, t0, t0 + H), _velocity(m, t1 - H, t1)):
        assert np.linalg.norm(v) < 1e-4 and np.linalg.norm(w) < 1e-4
    # somewhere inside the speed is of order 1, so the small end values are not trivial
    v_mid, w_mid = _velocity(m, 0.9, 0.9 + H)
    assert np.linalg.norm(v_mid) > 0.1 and np.linalg.norm(w_mid) > 0.5
    first, last = m.pose(t0), m.pose(t1)
    for t in (-1.0, 0.0, t0 - 1e-9):
        r, o = m.pose(t)
        assert np.array_equal(r, first[0]) and np.array_equal(o, first[1])
    for t in (t1 + 1e-9, 3.0, 100.0):
        r, o = m.pose(t)
        assert np.array_equal(r, last[0]) and np.array_equal(o, last[1])


def test_origins_only_keep_the_identity_rotation():
    m = _keys(rotations=False)
    for t in (0.0, 0.5, 1.3, 2.0):
        assert np.array_equal(m.pose(t)[0], np.eye(3))


def test_several_turns_between_keys_less_than_half_a_turn_apart():
    # keys every 0.4 rad about z, 5 turns in all: the angle is unwrapped, the frame turns on
    # (a principal-angle interpolation would turn back at every half turn)
    n = 80
    angles = np.linspace(0.0, 10 * math.pi, n)
    times = np.linspace(0.0, 8.0, n)
    rots = Rotation.from_rotvec(np.c_[np.zeros(n), np.zeros(n), angles]).as_matrix()
    m = Keyframes(times, np.zeros((n, 3)), rots)
    ts = np.linspace(0.0, 8.0, 2001)
    w = [_velocity(m, a, b)[1][2] for a, b in zip(ts[:-1], ts[1:])]
    assert min(w[1:-1]) > 0.0
    assert sum(w) * (ts[1] - ts[0]) == pytest.approx(10 * math.pi, rel=1e-9)


@pytest.mark.parametrize("times, origins, rotations, match", [
    ([0.0, 1.0, 1.0], np.zeros((3, 3)), None,
     r"keyframe times must increase: time 2 \(1 s\) is not after time 1 \(1 s\)"),
    ([0.0, 2.0, 1.0], np.zeros((3, 3)), None, r"time 2 \(1 s\) is not after time 1 \(2 s\)"),
    ([0.0], np.zeros((1, 3)), None, r"at least 2 times"),
    ([0.0, np.nan], np.zeros((2, 3)), None, r"times must be finite"),
    ([0.0, 1.0], np.zeros((3, 3)), None,
     r"origins must be finite with shape \(2, 3\), got \(3, 3\)"),
    ([0.0, 1.0], np.zeros((2, 2)), None, r"origins .* got \(2, 2\)"),
    ([0.0, 1.0], np.zeros((2, 3)), np.tile(np.eye(3), (3, 1, 1)),
     r"rotations must have shape \(2, 3, 3\), got \(3, 3, 3\)"),
    ([0.0, 1.0], np.zeros((2, 3)), np.array([np.eye(3), np.diag([1.0, 1.0, -1.0])]),
     r"keyframe rotation 1: not a proper rotation"),
    ([0.0, 1.0], np.zeros((2, 3)), np.array([2 * np.eye(3), np.eye(3)]),
     r"keyframe rotation 0: not a proper rotation"),
])
def test_invalid_keyframes_name_the_item(times, origins, rotations, match):
    with pytest.raises(ValueError, match=match):
        Keyframes(times, origins, rotations)
    # through the builder, the message also names the frame
    b = sl.SceneBuilder()
    b.add_frame()
    kf = {"times": times, "origins": origins}
    if rotations is not None:
        kf["rotations"] = rotations
    with pytest.raises(ValueError, match=r"^frame 1: .*" + match):
        b.add_frame(keyframes=kf)


@pytest.mark.parametrize("kw, match", [
    ({"keyframes": {"times": [0, 1]}}, r"frame 0: keyframes need 'times' and 'origins'"),
    ({"keyframes": {"times": [0, 1], "origins": np.zeros((2, 3)), "speed": 1}},
     r"frame 0: unknown keyframe key\(s\) \['speed'\]"),
    ({"keyframes": {"times": [0, 1], "origins": np.zeros((2, 3))}, "linear_velocity": (1, 0, 0)},
     r"frame 0: give one of velocities, keyframes or motion"),
    ({"motion": 3.0}, r"frame 0: motion must be a Motion or a function of time"),
])
def test_builder_refuses_inconsistent_frame_motions(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        sl.SceneBuilder().add_frame(**kw)


# ----------------------------------------------------------------------------- function motion
def wobble(t):
    """Origin [m] and rotation of a frame that translates and turns about z."""
    r = Rotation.from_rotvec([0.0, 0.0, 2.0 * math.sin(3.0 * t)]).as_matrix()
    return r, np.array([0.1 * math.sin(5.0 * t), 0.05 * t, -0.02 * t * t])


def test_function_motion_returns_the_function_value():
    m = FunctionMotion(wobble, name="wobble")
    for t in (0.0, 0.3, 1.7):
        r, o = m.pose(t)
        r_ref, o_ref = wobble(t)
        assert np.array_equal(r, r_ref) and np.array_equal(o, o_ref)
    only_origin = FunctionMotion(lambda t: [t, 0.0, 0.0])
    r, o = only_origin.pose(0.25)
    assert np.array_equal(r, np.eye(3)) and np.array_equal(o, [0.25, 0.0, 0.0])


def _clamped(frame_kw, n=6, steps=40, dt=0.01):
    """A rod clamped at its first vertex to a moving frame (the frame's origin sits 0.01 m off
    the vertex, so that the rotation matters); returns the end vertex and the frame pose at each
    step, and the vertex's position in the frame's axes at t = 0."""
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mat = sl.Material(young_modulus=1e6, density=1000.0, radius=0.004)
    s = b.add_strand(line((0.0, 0.0, 0.0), (0.3, 0.0, 0.0), n), material=mat)
    f = b.add_frame(**frame_kw)
    b.attach_to_frame(s, f, end=0)
    scene = b.build()
    solver = sl.PBDSolver(scene, sl.PBDSettings(iterations=4, substeps=2))
    st = solver.state()
    r0, o0 = scene.frames[f].pose(0.0)
    local = r0.T @ (np.zeros(3) - o0)
    ends, poses = [], []
    for _ in range(steps):
        solver.step(st, st, dt)
        ends.append(solver.output(st).positions[0].copy())
        poses.append(scene.frames[f].pose(st.time))
    return ends, poses, local


def test_clamped_end_follows_keyframes():
    kf = {"times": [0.0, 0.15, 0.4],
          "origins": [[-0.01, 0.0, 0.0], [0.05, 0.1, 0.0], [0.1, 0.0, 0.1]],
          "rotations": Rotation.from_rotvec([[0, 0, 0], [0, 0, 0.8], [0.5, 0, 1.5]]).as_matrix()}
    ends, poses, local = _clamped({"keyframes": kf})
    assert np.linalg.norm(ends[-1] - ends[0]) > 0.05                   # it did move
    for x, (r, o) in zip(ends, poses):
        assert np.allclose(x, o + r @ local, rtol=0, atol=1e-12)


def test_clamped_end_follows_a_function_of_time():
    def shifted(t):
        r, o = wobble(t)
        return r, o + np.array([-0.01, 0.0, 0.0])

    ends, poses, local = _clamped({"motion": shifted})
    assert np.linalg.norm(ends[-1] - ends[0]) > 0.02
    for k, (x, (_, o)) in enumerate(zip(ends, poses)):
        r_ref, o_ref = shifted(0.01 * (k + 1))
        assert np.allclose(o, o_ref, rtol=0, atol=1e-15)
        assert np.allclose(x, o_ref + r_ref @ local, rtol=0, atol=1e-12)


def test_function_returning_bad_values_names_the_function_and_time():
    def push(t):
        return [0.0, 0.0, math.nan] if t > 0.025 else [t, 0.0, 0.0]

    def bent(t):
        return np.diag([1.0, 1.0, -1.0]), np.zeros(3)

    def flat(t):
        return [t, 0.0]

    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=r"bent\(0\) rotation: not a proper rotation"):
        b.add_frame(motion=bent)                  # checked once when the frame is added
    with pytest.raises(ValueError, match=r"flat\(0\) origin: expected 3 components"):
        b.add_frame(motion=flat)
    mat = sl.Material(young_modulus=1e6, density=1000.0, radius=0.004)
    s = b.add_strand(line((0, 0, 0), (0.2, 0, 0), 4), material=mat)
    b.attach_to_frame(s, b.add_frame(motion=push))
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(iterations=2, substeps=1))
    st = solver.state()
    solver.step(st, st, 0.01)
    solver.step(st, st, 0.01)
    with pytest.raises(ValueError, match=r"push\(0\.03\) origin: not finite"):
        solver.step(st, st, 0.01)


def test_keyframes_or_motion_with_an_origin_is_refused():
    b = sl.SceneBuilder()
    kf = {"times": [0.0, 1.0], "origins": [[0, 0, 0], [1, 0, 0]]}
    with pytest.raises(ValueError, match="frame 0: keyframes or a motion set the pose"):
        b.add_frame((0, 0, 1), keyframes=kf)
    with pytest.raises(ValueError, match="frame 0: keyframes or a motion set the pose"):
        b.add_frame(rotation=np.eye(3), motion=lambda t: (0.0, 0.0, t))
