"""Scene features through the position-based solver: point loads, sliding and swivel ends,
per-strand friction and per-vertex radius (tapered strands).

References:
- validation.md item 1 (axial stretch): a rod held at one end and pulled by an axial force F at
  the other stretches by dL = F L / (E A).  The XPBD edge constraint with compliance L / (E A) is
  a linear spring in the edge length, so the converged static stretch is exactly this.  The
  damping scales each step's velocity, the load's impulse included, by 1 - damping h, so the
  load felt at rest is (1 - damping h) F (0.5 % here): the reference includes that factor.
- Newton's second law for the whole strand: constraints between strand points conserve linear
  momentum (tests/pbd/test_momentum.py), so with no gravity and no attachment a constant load F
  changes the total momentum sum_a m_a v_a (vertices and ghost points) by F t, to round-off.
- A sliding end (SceneBuilder.attach_to_frame ``slide_axis``) stays on its line; the line pushes
  only across itself, so the momentum of the strand along a fixed line is conserved (a hanging
  rope whose top slides on a horizontal rail keeps its centre of mass over the same x).
- A swivel (``free_twist``): the frame holds the end's bending directions but not its twist, so
  turning the frame about the rod axis leaves the rod untwisted; a clamp twists it by the angle
  the frame turned.
- Coulomb friction on an incline of angle theta: a body holds when mu >= tan(theta) and slides
  with acceleration g sin(theta) when mu = 0.  A strand's friction combines with the collider's as
  the geometric mean (pbd/kernels.py ``_combine_friction``): strand 0 and plane 0.5 give 0.
- Per-vertex radius: an edge's section is that of the mean radius of its two vertices
  (pbd/compile.py ``_edge_sections``), so the strand's mass is sum_e rho pi r_e^2 L_e, the
  midpoint rule for the integral of rho pi r(s)^2 ds (error rho pi L_e (r_a - r_b)^2 / 12 per
  edge for a linear taper); the bending stiffness E pi r_e^4 / 4 follows the local radius, so a
  cantilever tapered from thick (clamp) to thin (tip) deflects less under a tip load than a
  uniform thin one and more than a uniform thick one (validation.md item 2 and the monotone
  trend), by the Euler-Bernoulli tip deflection int_0^L F (L - x)^2 / (E I(x)) dx (XPBD
  compliance, converged with 10 substeps of 10 passes, damped to rest).
"""
import math

import numpy as np
import pytest

import strandlab as sl
from strandlab.sim.shapes import line

RHO = 1000.0


def _momentum(solver, st):
    m = solver.model
    return np.sum(m.mass[:, None] * st.v, axis=0)


def _twist(d1, axis):
    """Signed angle [rad] from the first edge's d1 to the last edge's, about ``axis`` (unit)."""
    a, b = d1[0], d1[-1]
    return math.atan2(float(np.dot(np.cross(a, b), axis)), float(np.dot(a, b)))


# ----------------------------------------------------------------------------- point loads
def test_static_axial_load_stretches_a_hanging_rod_by_FL_over_EA():
    # validation.md item 1: L = 1, r = 0.025, E = 1e4, F = 1 N: dL = 0.0509 m (5 % strain).
    L, r, E, F = 1.0, 0.025, 1e4, 1.0
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    mat = sl.Material(young_modulus=E, density=RHO, radius=r)
    s = b.add_strand(line((0, 0, 0), (0, 0, -L), 10), material=mat, d1=(1, 0, 0))
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    b.add_load(s, -1, (0.0, 0.0, -F))
    damping, dt, substeps = 10.0, 0.01, 20
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(stiffness="xpbd", length_solver="direct",
                                                    iterations=4, substeps=substeps,
                                                    damping=damping))
    st = solver.state()
    for _ in range(300):
        solver.step(st, st, dt)
    x = solver.output(st).positions
    stretch = -x[-1, 2] - L
    ref = (1.0 - damping * dt / substeps) * F * L / (E * mat.area)
    assert ref == pytest.approx(0.0507, abs=1e-4)
    assert stretch == pytest.approx(ref, rel=0.01)
    # it stays (nearly) on its axis: the ghost points of the stretched edges lean a little
    assert np.max(np.abs(x[:, :2])) < 0.01 * ref
    assert np.max(np.abs(st.v)) < 1e-3 * ref                    # at rest


def test_load_function_acts_from_its_start_time():
    t0 = 0.045
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    mat = sl.Material(young_modulus=1e6, density=RHO, radius=0.005)
    s = b.add_strand(line((0, 0, 0), (0.3, 0, 0), 6), material=mat)
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    b.add_load(s, 6, lambda t: (0.0, 0.0, 0.01) if t >= t0 else (0.0, 0.0, 0.0))
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(iterations=4, substeps=1))
    st = solver.state()
    x0 = solver.output(st).positions.copy()
    tip = []
    for k in range(10):
        solver.step(st, st, 0.01)
        tip.append(solver.output(st).positions[-1, 2] - x0[-1, 2])
        if k == 4:
            # a load acts on a step from the step's start time: the steps starting at
            # 0 .. 0.04 s, before t0, move nothing at all; the one starting at 0.05 s does
            assert np.array_equal(solver.output(st).positions, x0)
    # the step from t0 on feels the load: the tip rises, faster and faster at first
    assert 0.0 < tip[5] < tip[6] < tip[7]


def test_load_function_with_bad_values_names_the_load_and_time():
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    mat = sl.Material(young_modulus=1e6, density=RHO, radius=0.005)
    s = b.add_strand(line((0, 0, 0), (0.3, 0, 0), 3), material=mat)
    with pytest.raises(ValueError, match=r"load on vertex 3 of strand 0: the force function "
                                         r"returned \[1\.0, 2\.0\] at t = 0 s"):
        b.add_load(s, 3, lambda t: (1.0, 2.0))
    with pytest.raises(IndexError, match=r"strand 0 has no vertex 4 \(it has 4\)"):
        b.add_load(s, 4, (0, 0, 1))
    with pytest.raises(ValueError, match=r"strand 0 load on vertex -1: not finite"):
        b.add_load(s, -1, (0, 0, math.inf))
    b.add_load(s, -1, lambda t: (0.0, math.nan, 0.0) if t > 0.015 else (0.0, 0.0, 0.0))
    solver = sl.PBDSolver(b.build())
    st = solver.state()
    solver.step(st, st, 0.01)                   # evaluated at t = 0
    solver.step(st, st, 0.01)                   # at t = 0.01
    with pytest.raises(ValueError, match=r"load on vertex 3 of strand 0: .* at t = 0\.02 s"):
        solver.step(st, st, 0.01)


@pytest.mark.parametrize("vertex", [0, 3, -1])
def test_constant_load_on_a_free_rod_gives_momentum_F_t(vertex):
    F = np.array([0.02, -0.01, 0.03])
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    mat = sl.Material(young_modulus=1e6, density=RHO, radius=0.005)
    s = b.add_strand(line((0, 0, 0), (0.3, 0.1, 0), 6), material=mat, d1=(0, 0, 1))
    b.add_load(s, vertex, F)
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(iterations=5, substeps=2))
    st = solver.state()
    for _ in range(30):
        solver.step(st, st, 0.01)
    p = _momentum(solver, st)
    total_mass = float(np.sum(solver.model.mass))
    assert total_mass == pytest.approx(RHO * mat.area * math.hypot(0.3, 0.1), rel=1e-12)
    assert np.allclose(p, F * st.time, rtol=1e-10, atol=1e-14)
    # and the rod did bend: the load is not simply spread over all points
    x = solver.output(st).positions
    assert np.ptp(x[:, 2]) > 1e-3


# ----------------------------------------------------------------------------- sliding ends
def test_end_sliding_on_a_vertical_axis_stays_on_it():
    # A horizontal rod thrown sideways in gravity, its first vertex on a vertical rail through
    # the origin: the end falls along the rail while the rod swings about it.
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mat = sl.Material(young_modulus=1e6, density=RHO, radius=0.005)
    s = b.add_strand(line((0, 0, 0), (0.3, 0, 0), 8), material=mat, velocities=(0.0, 1.0, 0.5))
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0, orientation=False, slide_axis=(0, 0, 2))
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(iterations=5, substeps=2))
    st = solver.state()
    worst = 0.0
    for _ in range(30):
        solver.step(st, st, 0.01)
        x = solver.output(st).positions
        worst = max(worst, float(np.hypot(x[0, 0], x[0, 1])))
    assert worst < 1e-12
    assert x[0, 2] < -0.02                     # it slid down the rail
    assert x[-1, 1] > 0.1                      # the rest swung sideways


def test_top_of_a_hanging_rope_slides_on_a_horizontal_rail():
    # A rope hanging 30 degrees off vertical from a ball joint that slides along x: the rail
    # pushes only across x, so the x momentum stays zero and the centre of mass keeps its x,
    # while the top slides (towards the side the rope hangs).
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mat = sl.Material(young_modulus=1e6, density=RHO, radius=0.004)
    a = math.radians(30.0)
    top = np.array([0.0, 0.0, 1.0])
    s = b.add_strand(line(top, top + 0.4 * np.array([math.sin(a), 0, -math.cos(a)]), 10),
                     material=mat)
    f = b.add_frame((0.0, 0.0, 1.0), rotation=[[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    b.attach_to_frame(s, f, end=0, orientation=False, slide_axis=(0, -1, 0))  # frame -y = world x
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(iterations=5, substeps=2))
    st = solver.state()
    m = solver.model
    com_x0 = float(np.sum(m.mass * st.x[:, 0]) / np.sum(m.mass))
    off = 0.0
    for _ in range(25):
        solver.step(st, st, 0.01)
        x = solver.output(st).positions
        off = max(off, float(np.hypot(x[0, 1], x[0, 2] - 1.0)))
    assert off < 1e-9
    assert x[0, 0] > 0.02                                        # the top slid along x
    assert abs(_momentum(solver, st)[0]) < 1e-12
    com_x = float(np.sum(m.mass * st.x[:, 0]) / np.sum(m.mass))
    assert com_x == pytest.approx(com_x0, abs=1e-10)


# ----------------------------------------------------------------------------- swivel
def _twisted(free_twist):
    """A straight rod along x between a fixed clamp (far end) and a frame that turns by 1 rad
    about the rod axis (first end); the twist from the first to the last d1 at rest."""
    n, L = 10, 0.3
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    mat = sl.Material(young_modulus=1e6, density=RHO, radius=0.005)
    s = b.add_strand(line((0, 0, 0), (L, 0, 0), n), material=mat, d1=(0, 0, 1))
    turning = b.add_frame((0, 0, 0), angular_velocity=(2.0, 0, 0), start=0.0, stop=0.5)
    b.attach_to_frame(s, turning, end=0, free_twist=free_twist)
    b.attach_to_frame(s, b.add_frame((L, 0, 0)), end=-1)
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(iterations=10, substeps=4, damping=5.0))
    st = solver.state()
    for _ in range(100):
        solver.step(st, st, 0.01)
    out = solver.output(st)
    return _twist(out.d1, np.array([1.0, 0.0, 0.0])), out


def test_swivel_end_leaves_the_rod_untwisted():
    clamp, out_c = _twisted(False)
    swivel, out_s = _twisted(True)
    # a clamp turned by 1 rad about the axis twists the rod by that angle; the twist spreads
    # uniformly over the 9 interior elements (length l each) and the two clamp couplings
    # (length l / 2 each), so the first and last edges differ by 9/10 of it
    assert clamp == pytest.approx(-0.9, abs=0.02)
    assert abs(swivel) < 1e-3
    for out in (out_c, out_s):                  # both stay straight (to 0.3 % of L)
        assert np.max(np.abs(out.positions[:, 1:])) < 1e-3


# ----------------------------------------------------------------------------- friction
INCLINE = math.atan(0.3)  # slope angle [rad]


def _slide_on_incline(strand_friction, plane_friction=0.5, theta=INCLINE):
    """Displacement [m] along the slope of a short strand lying across an incline, after 0.3 s."""
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])     # plane normal, slope down +x
    down = np.array([math.cos(theta), 0.0, math.sin(theta)])
    down = -down if down[2] > 0 else down
    r = 0.004
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mat = sl.Material(young_modulus=1e6, density=RHO, radius=r)
    pts = line((0, -0.1, 0), (0, 0.1, 0), 6) + r * n
    b.add_strand(pts, material=mat, friction=strand_friction)
    b.add_plane((0, 0, 0), n, friction=plane_friction)
    solver = sl.PBDSolver(b.build(), sl.PBDSettings(iterations=5, substeps=4))
    st = solver.state()
    x0 = solver.output(st).positions.copy()
    for _ in range(30):
        solver.step(st, st, 0.01)
    return float(np.mean((solver.output(st).positions - x0) @ down)), theta


def test_strand_friction_combines_with_the_collider_as_geometric_mean():
    g_t = 9.81 * 0.3 ** 2 / 2                    # g t^2 / 2 after t = 0.3 s
    slid, theta = _slide_on_incline(0.0)         # sqrt(0 * 0.5) = 0: frictionless
    free = g_t * math.sin(theta)
    assert slid == pytest.approx(free, rel=0.05)
    # sqrt(0.5 * 0.1) = 0.22 < tan(theta) = 0.3: slides, decelerated by mu g cos(theta)
    mu = math.sqrt(0.05)
    slowed, _ = _slide_on_incline(0.5, plane_friction=0.1)
    assert slowed == pytest.approx(g_t * (math.sin(theta) - mu * math.cos(theta)), rel=0.1)
    # these hold: sqrt(0.5 * 0.5) = 0.5, sqrt(2 * 0.1) = 0.45 and the plane's own 0.5 all
    # exceed tan(theta).  The friction acts on the velocities after each substep's positions
    # are committed, so a held strand creeps by one substep's tangential gravity displacement
    # per substep, g sin(theta) h t (2.1 mm here, 1.7 % of the free slide; less with more
    # substeps).
    creep = 9.81 * math.sin(theta) * (0.01 / 4) * 0.3
    for strand, plane in ((0.5, 0.5), (2.0, 0.1), (None, 0.5)):
        held, _ = _slide_on_incline(strand, plane_friction=plane)
        assert abs(held) < 1.1 * creep, (strand, plane)


# ----------------------------------------------------------------------------- radius
def _tapered(radius, n=12, L=0.4, gravity=(0, 0, 0), tip_load=None):
    b = sl.SceneBuilder(gravity=gravity)
    mat = sl.Material(young_modulus=1e7, density=RHO, radius=0.004)
    s = b.add_strand(line((0, 0, 0), (L, 0, 0), n), material=mat, radius=radius, d1=(0, 0, 1))
    if tip_load is not None:
        b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
        b.add_load(s, -1, tip_load)
    return b.build(), mat


def test_tapered_strand_mass_is_the_integral_of_rho_pi_r2():
    n, L, r0, r1 = 12, 0.4, 0.006, 0.002
    radius = np.linspace(r0, r1, n + 1)
    scene, _ = _tapered(radius, n=n, L=L)
    mass = float(np.sum(sl.PBDSolver(scene).model.mass))
    re = 0.5 * (radius[:-1] + radius[1:])
    discrete = float(np.sum(RHO * math.pi * re ** 2 * (L / n)))
    exact = RHO * math.pi * L * (r0 ** 2 + r0 * r1 + r1 ** 2) / 3.0
    midpoint_error = RHO * math.pi * L * (r1 - r0) ** 2 / (12 * n ** 2)
    assert mass == pytest.approx(discrete, rel=1e-12)
    assert exact - mass == pytest.approx(midpoint_error, rel=1e-9)
    # a uniform strand of the thin radius is much lighter
    thin, _ = _tapered(r1, n=n, L=L)
    assert float(np.sum(sl.PBDSolver(thin).model.mass)) < 0.3 * mass


def test_tapered_cantilever_is_stiffer_near_the_thick_end():
    n, L, thick, thin = 12, 0.4, 0.006, 0.003
    F = (0.0, 0.0, -2e-3)

    def deflection(radius):
        scene, _ = _tapered(radius, n=n, L=L, tip_load=F)
        solver = sl.PBDSolver(scene, sl.PBDSettings(stiffness="xpbd", iterations=10,
                                                    substeps=10, damping=5.0))
        st = solver.state()
        for _ in range(120):
            solver.step(st, st, 1 / 60)
        return -float(solver.output(st).positions[-1, 2])

    d_thick = deflection(thick)
    d_thin = deflection(thin)
    d_taper = deflection(np.linspace(thick, thin, n + 1))
    # Euler-Bernoulli tip deflection: delta = int_0^L F (L - x)^2 / (E I(x)) dx, with
    # I = pi r^4 / 4; for a uniform rod F L^3 / (3 E I): 4.2 mm (thick), 67 mm (thin); the
    # linear taper gives 8.4 mm.  Measured: 4.15, 65.5 and 8.45 mm (the thin rod's 16 % tip
    # deflection is past the small-deflection theory, which overestimates it by about 2 %).
    E, F_ = 1e7, 2e-3

    def reference(r_of_x):
        x = np.linspace(0.0, L, 4001)
        f = F_ * (L - x) ** 2 / (E * math.pi * r_of_x(x) ** 4 / 4)
        return float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(x)))

    assert d_thick == pytest.approx(reference(lambda x: thick + 0 * x), rel=0.05)
    assert d_thin == pytest.approx(reference(lambda x: thin + 0 * x), rel=0.05)
    assert d_taper == pytest.approx(reference(lambda x: thick + (thin - thick) * x / L),
                                    rel=0.05)
    assert d_thick * 1.5 < d_taper < 0.2 * d_thin
