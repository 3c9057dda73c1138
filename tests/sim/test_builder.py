"""SceneBuilder validation and the layout of the built Model (sim/builder.py, sim/assemble.py).

References:
- SceneBuilder / Material docstrings: invalid input raises ValueError (IndexError for a handle
  that does not exist) whose message names the offending item;
- Model docstring: arrays are read-only;
- docs/pbd.md "Masses": an edge of rest length L carries rho A L, split between its end points
  and its ghost, whose share is rho (I1 + I2) L / l_g^2 (or ghost_mass_ratio of the edge mass);
- section 3 of Umetani et al. 2014: ghost points on the perpendicular bisector of their edge at
  distance l_g (eqs. 19-20), l_g the mean edge length by default;
- twist-free frames: parallel-transported ghosts (Bergou et al. 2008) give consecutive frames
  related by a pure bend, so the rest twist Omega_3 is zero; on a closed circle the transport
  returns to the start, and every element is equivalent by symmetry, so Omega_3 is uniform.
"""
import numpy as np
import pytest

import strandlab as sl
from strandlab.pbd import compile_scene
from strandlab.pbd.model import POINT_GHOST, POINT_VERTEX
from strandlab.sim.shapes import box_mesh, circle, helix, line

MAT = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)


def _line(n=5, length=0.4):
    return line((0, 0, 0), (length, 0, 0), n)


# ----------------------------------------------------------------------------- strand input
@pytest.mark.parametrize("pts, closed, match", [
    ([[0, 0, 0], [1, 0, 0], [2, np.nan, 0]], False, r"strand 0 points: point 2 is not finite"),
    ([[0, 0, 0], [np.inf, 0, 0], [2, 0, 0]], False, r"point 1 is not finite"),
    ([[0, 0, 0], [1, 0, 0], [1, 0, 0], [2, 0, 0]], False, r"points 1 and 2 coincide \(zero-length edge 1\)"),
    ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 0]], True, r"points 3 and 0 coincide"),
    ([[0, 0, 0]], False, r"needs at least 2 points, got 1"),
    ([[0, 0, 0], [1, 0, 0]], True, r"needs at least 3 points, got 2"),
    ([[0, 0], [1, 0], [2, 0]], False, r"expected shape \[n, 3\]"),
    ([["a", 0, 0], [1, 0, 0]], False, r"not a numeric array"),
])
def test_bad_points_raise_naming_the_item(pts, closed, match):
    # Reference: SceneBuilder.add_strand validation (validate.as_points and the edge check).
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=match):
        b.add_strand(np.array(pts, dtype=object) if isinstance(pts[0][0], str) else np.array(pts, float),
                     material=MAT, closed=closed)


def test_named_strand_appears_in_messages():
    # Reference: add_strand's ``name`` labels its messages.
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=r"^whisker points: point 0 is not finite"):
        b.add_strand([[np.nan, 0, 0], [1, 0, 0]], material=MAT, name="whisker")


@pytest.mark.parametrize("rest, match", [
    (_line(6), r"rest_points has shape \(7, 3\), points \(6, 3\)"),
    (_line(4), r"rest_points: needs at least 6 points, got 5"),
    (np.r_[_line(4), [[0.4, 0, 0]]], r"rest_points 4 and 5 coincide"),
])
def test_bad_rest_points_raise(rest, match):
    # Reference: rest_points must match points' shape and have no zero-length edge.
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=match):
        b.add_strand(_line(5), rest_points=rest, material=MAT)


@pytest.mark.parametrize("vel", [np.zeros((5, 3)), np.zeros((6, 2)), np.full((6, 3), np.nan)])
def test_bad_velocities_raise(vel):
    # Reference: velocities must be finite with the points' shape.
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=r"strand 0: velocities must be finite with shape \(6, 3\)"):
        b.add_strand(_line(5), velocities=vel, material=MAT)


@pytest.mark.parametrize("alpha, match", [
    ([1, 1.5, 0], r"strand 0 alpha\[1\] = 1.5 is outside \[0, 1\]"),
    ([-0.1, 0.5, 0.5], r"alpha\[0\] = -0.1 is outside"),
    ([0.5, 0.5, np.nan], r"alpha\[2\] = nan is outside"),
    ([0.5, 0.5], r"alpha: expected 3 values"),
    (2.0, r"alpha\[0\] = 2.0 is outside"),
])
def test_alpha_outside_unit_interval_raises(alpha, match):
    # Reference: eq. (21): alpha_i in [0, 1].
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=match):
        b.add_strand(_line(5), options={"pbd": {"alpha": alpha}}, material=MAT)
        compile_scene(b.build())


@pytest.mark.parametrize("kwargs, match", [
    ({"options": {"pbd": {"ghost_distance": 0.0}}}, r"strand 0 ghost_distance must be positive"),
    ({"options": {"pbd": {"ghost_distance": -0.01}}}, r"ghost_distance must be positive"),
    ({"options": {"pbd": {"ghost_mass_ratio": 0.0}}}, r"ghost_mass_ratio must be positive"),
    ({"options": {"pbd": {"ghost_mass_ratio": float("nan")}}}, r"ghost_mass_ratio must be positive"),
    ({"options": {"pbd": {"ghost_length": 0.1}}}, r"unknown pbd option 'ghost_length'"),
    ({"d1": [1, 0]}, r"d1 must be finite with shape \(3,\) or \(5, 3\)"),
    ({"d1": [np.nan, 1, 0]}, r"d1 must be finite"),
    ({"d1": [0, 0, 0]}, r"d1 is the zero vector"),
    ({"radius": [0.01, 0.01, -0.01, 0.01, 0.01, 0.01]}, r"radius of vertex 2 must be positive"),
    ({"radius": [0.01, 0.01]}, r"radius must be one value or one per vertex \(6\)"),
    ({"friction": -1.0}, r"strand 0: friction must be >= 0"),
    ({"initial_twist": float("inf")}, r"initial_twist must be finite"),
])
def test_bad_strand_options_raise(kwargs, match):
    # Reference: add_strand docstring (positive ghost distance and mass ratio, direction shape).
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=match):
        b.add_strand(_line(5), material=MAT, **kwargs)
        compile_scene(b.build())


def test_closed_strand_twist_must_be_whole_turns():
    # Reference: add_strand docstring: a closed strand's initial twist is a multiple of 2 pi.
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=r"whole number of\s+turns"):
        b.add_strand(circle(radius=0.1, segments=12), closed=True, material=MAT, initial_twist=1.0)


def test_material_must_be_a_material():
    # Reference: add_strand: material must be a strandlab Material.
    with pytest.raises(TypeError, match="material"):
        sl.SceneBuilder().add_strand(_line(5), material={"young_modulus": 1e7})


@pytest.mark.parametrize("gd, match", [
    ([2.0, 0.0, 0.0], r"strand 0: d1 is parallel to the first edge"),
    ([[0, 1, 0], [0, 1, 0], [0.1, 0, 0], [0, 1, 0], [0, 1, 0]], r"strand 0: d1 is parallel to edge 2"),
])
def test_ghost_direction_parallel_to_edge_raises(gd, match):
    # Reference: eq. (3) needs the ghost off the edge line; the check runs when the model is laid
    # out (build), and names the edge.
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=match):
        b.add_strand(_line(5), d1=gd, material=MAT)
        compile_scene(b.build())


def test_rest_shape_with_a_hairpin_is_rejected():
    # Reference: eq. (10) is undefined for frames turned by 180 degrees (1 + tr Q = 0); the
    # builder rejects such rest frames ("degenerate or turn by 180 degrees", assemble.py).  An
    # exact hairpin in the x-y plane is caught; the same hairpin along a generic direction must be
    # caught too (Q is then a half turn about a generic axis, whose computed 1 + tr Q is roundoff
    # of either sign).
    for pts in ([[0, 0, 0], [1, 0, 0], [0.3, 0, 0]], [[0, 0, 0], [1, 1, 0.3], [0.5, 0.5, 0.15]]):
        b = sl.SceneBuilder()
        b.add_strand(np.array(pts, float), material=MAT)
        with pytest.raises(ValueError, match="turn by 180 degrees"):
            compile_scene(b.build())


def test_empty_scene_raises():
    # Reference: assemble: a scene needs at least one strand, mesh or body.
    with pytest.raises(ValueError, match="scene is empty"):
        sl.SceneBuilder().build()


# ----------------------------------------------------------------------------- handles and ends
def test_bad_handles_raise_index_error():
    # Reference: SceneBuilder: handles that do not exist raise IndexError naming them.
    b = sl.SceneBuilder()
    s = b.add_strand(_line(5), material=MAT)
    f = b.add_frame((0, 0, 0))
    v, t = box_mesh((0, 0, 0), 0.1)
    mesh = b.add_mesh(v, t, mass=1.0)
    body = b.add_rigid_body((0, 0, 0), mass=1.0, size=0.01)
    with pytest.raises(IndexError, match="strand 3 does not exist"):
        b.attach_to_frame(3, f)
    with pytest.raises(IndexError, match="frame 2 does not exist"):
        b.attach_to_frame(s, 2)
    with pytest.raises(IndexError, match="strand -1 does not exist"):
        b.fix_vertex(-1, 0)
    with pytest.raises(IndexError, match="strand 0 has no vertex 6"):
        b.fix_vertex(s, 6)
    with pytest.raises(IndexError, match="mesh 1 does not exist"):
        b.attach_to_triangle(s, 1, 0)
    with pytest.raises(IndexError, match=f"mesh {mesh} has no triangle 12"):
        b.attach_to_triangle(s, mesh, 12)
    with pytest.raises(IndexError, match="rigid body 4 does not exist"):
        b.attach_to_body(s, 4)
    assert body == 0


@pytest.mark.parametrize("end", [1, 2, -2, 5])
def test_bad_end_index_raises(end):
    # Reference: attach_* docstrings: end is 0 (first vertex) or -1 (last vertex).
    b = sl.SceneBuilder()
    s = b.add_strand(_line(5), material=MAT)
    f = b.add_frame((0, 0, 0))
    with pytest.raises(ValueError, match=rf"end must be 0 \(first vertex\) or -1 \(last vertex\), got {end}"):
        b.attach_to_frame(s, f, end=end)


def test_closed_strand_has_no_ends():
    # Reference: _end: a closed strand cannot be attached by an end.
    b = sl.SceneBuilder()
    s = b.add_strand(circle(radius=0.1, segments=8), closed=True, material=MAT, name="ring")
    with pytest.raises(ValueError, match="ring is closed and has no ends"):
        b.attach_to_frame(s, b.add_frame((0, 0, 0)))


@pytest.mark.parametrize("offset, match", [
    ((0.0, 0.0, 0.05), r"end vertex is 0.05 m off the attachment triangle's plane"),
    ((0.2, 0.2, 0.0), r"end vertex lies outside the attachment triangle"),
])
def test_triangle_attachment_with_end_vertex_off_the_triangle_raises(offset, match):
    # Reference: attach_to_triangle docstring: the end vertex must lie on the triangle's plane,
    # inside the triangle (eq. 25 pins it at barycentric coordinates).
    b = sl.SceneBuilder()
    tri_v = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0.1, 0.1, 0.0]])
    mesh = b.add_mesh(tri_v, [[0, 1, 2], [1, 3, 2]], mass=0.1)
    start = np.array([0.02, 0.02, 0.0]) + np.asarray(offset)
    s = b.add_strand(line(start, start + [0, 0, -0.3], 6), material=MAT)
    with pytest.raises(ValueError, match=match):
        b.attach_to_triangle(s, mesh, 0, end=0)
        b.build()


def test_triangle_attachment_on_the_triangle_builds_with_barycentric_pin():
    # Reference: eq. (25): pin at barycentric coordinates that reproduce the end vertex.
    b = sl.SceneBuilder()
    mesh = b.add_mesh([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0]], [[0, 1, 2]], mass=0.1)
    s = b.add_strand(line((0.02, 0.03, 0), (0.02, 0.03, -0.3), 6), material=MAT)
    b.attach_to_triangle(s, mesh, 0, end=0)
    m = compile_scene(b.build())
    bary = m.pin_weights[0]
    assert np.allclose(bary @ m.x0[m.pin_targets[0]], m.x0[m.pin_point[0]], atol=1e-15)
    assert np.allclose(bary, [0.5, 0.2, 0.3])


# ----------------------------------------------------------------------------- model layout
def test_model_arrays_are_read_only():
    # Reference: Model docstring: arrays are read-only.
    b = sl.SceneBuilder()
    b.add_strand(_line(5), material=MAT)
    m = compile_scene(b.build())
    for name in ("x0", "v0", "mass", "inv_mass", "edge_rest_length", "oe_rest_omega", "oe_idx"):
        arr = getattr(m, name)
        assert not arr.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            arr.flat[0] = 1.0
    # a State owns writable copies
    st = m.state()
    st.x[0, 0] = 1.0
    assert m.x0[0, 0] == 0.0


@pytest.mark.parametrize("kind", ["open_line", "open_helix", "closed_circle", "ratio"])
def test_strand_mass_is_rho_a_l(kind):
    # Reference: docs/pbd.md "Masses": the strand's points (vertices and ghosts) carry
    # rho A L in total; each ghost rho (I1 + I2) L_e / l_g^2 (or ghost_mass_ratio of rho A L_e).
    b = sl.SceneBuilder()
    mat = sl.Material(young_modulus=1e7, density=1300.0, radius=0.004)
    b.add_strand(_line(3, 0.1), material=MAT)   # another strand first, so offsets matter
    if kind == "open_line":
        pts, closed, kw = _line(8, 0.6), False, {}
    elif kind == "open_helix":
        pts, closed, kw = helix(radius=0.05, pitch=0.03, turns=1.5, segments=20), False, {}
    elif kind == "closed_circle":
        pts, closed, kw = circle(radius=0.1, segments=16), True, {}
    else:
        pts, closed, kw = _line(8, 0.6), False, {"options": {"pbd": {"ghost_mass_ratio": 0.2}}}
    s = b.add_strand(pts, material=mat, closed=closed, **kw)
    m = compile_scene(b.build())
    e = np.roll(pts, -1, axis=0) - pts if closed else np.diff(pts, axis=0)
    le = np.linalg.norm(e, axis=1)
    total = np.sum(m.mass[m.strand_vertices(s)]) + np.sum(m.mass[m.strand_ghosts(s)])
    assert total == pytest.approx(mat.density * mat.area * le.sum(), rel=1e-12)
    assert np.all(m.point_kind[m.strand_vertices(s)] == POINT_VERTEX)
    assert np.all(m.point_kind[m.strand_ghosts(s)] == POINT_GHOST)
    lg = le.mean()
    expected_ghost = (0.2 * mat.density * mat.area * le if kind == "ratio"
                      else mat.polar_inertia_per_length * le / lg ** 2)
    assert np.allclose(m.mass[m.strand_ghosts(s)], expected_ghost, rtol=1e-12)
    assert np.allclose(m.inv_mass * m.mass, np.where(m.mass > 0, 1.0, 0.0), rtol=1e-14)


def test_clamped_vertex_has_zero_mass():
    # Reference: docs/pbd.md: kinematic points (clamped vertices) have zero inverse mass.
    b = sl.SceneBuilder()
    s = b.add_strand(_line(5), material=MAT)
    b.attach_to_frame(s, b.add_frame((0, 0, 0)), end=0)
    b.fix_vertex(s, -1)
    m = compile_scene(b.build())
    v = m.strand_vertices(s)
    assert m.inv_mass[v.start] == 0.0 and m.inv_mass[v.stop - 1] == 0.0
    assert np.all(m.inv_mass[v.start + 1: v.stop - 1] > 0.0)


@pytest.mark.parametrize("kind", ["open_helix", "closed_circle", "ghost_distance", "per_edge", "twisted"])
def test_ghosts_on_perpendicular_bisector_at_ghost_distance(kind):
    # Reference: eqs. (19)-(20): ghost on the edge's perpendicular bisector, at distance l_g
    # from the edge midpoint (l_g the mean edge length unless ghost_distance is given); also for
    # the rest shape (the rest Darboux vector is computed from it).
    b = sl.SceneBuilder()
    kw, closed = {}, False
    if kind == "closed_circle":
        pts, closed = circle(radius=0.1, segments=16), True
    else:
        pts = helix(radius=0.05, pitch=0.03, turns=1.5, segments=20)
    if kind == "ghost_distance":
        kw["options"] = {"pbd": {"ghost_distance": 0.0123}}
    elif kind == "per_edge":
        kw["d1"] = np.random.default_rng(0).normal(size=(len(pts) - 1, 3))
    elif kind == "twisted":
        kw["initial_twist"] = 3.0
    b.add_strand(pts, material=MAT, closed=closed, **kw)
    m = compile_scene(b.build())
    p0, p1, g = m.x0[m.edge_p0], m.x0[m.edge_p1], m.x0[m.edge_ghost]
    e = p1 - p0
    le = np.linalg.norm(e, axis=1)
    lg = 0.0123 if kind == "ghost_distance" else le.mean()
    dist = np.linalg.norm(g - 0.5 * (p0 + p1), axis=1)
    assert np.allclose(dist, lg, rtol=1e-13)
    assert np.allclose(m.ghost_rest_distance, lg, rtol=1e-15)
    assert np.max(np.abs(np.einsum("ij,ij->i", g - 0.5 * (p0 + p1), e / le[:, None]))) < 1e-14 * lg
    assert np.allclose(m.edge_rest_length, le, rtol=1e-15)


def test_open_helix_parallel_transported_ghosts_have_no_rest_twist():
    # Reference: twist-free frames (module docstring): Omega_3 = 0 for every element, while the
    # bending components are those of the helix (non-zero).
    b = sl.SceneBuilder()
    b.add_strand(helix(radius=0.05, pitch=0.03, turns=2, segments=40), material=MAT)
    m = compile_scene(b.build())
    om = m.oe_rest_omega
    assert np.max(np.abs(om[:, 2])) < 1e-10 * np.max(np.abs(om))
    assert np.min(np.linalg.norm(om[:, :2], axis=1)) > 1.0       # helix curvature ~1 / 0.05 m


def test_closed_circle_rest_twist_is_uniform():
    # Reference: twist_free_directions relaxation on a closed loop (section 6): the twist is
    # spread uniformly; on a planar circle there is no holonomy, so it is uniformly zero, and the
    # bending is the same on every element (curvature 1 / radius).
    b = sl.SceneBuilder()
    b.add_strand(circle(radius=0.1, segments=24), closed=True, material=MAT)
    m = compile_scene(b.build())
    om = m.oe_rest_omega
    assert len(om) == 24
    assert np.ptp(om[:, 2]) < 1e-10 and np.max(np.abs(om[:, 2])) < 1e-10
    kappa = np.linalg.norm(om, axis=1)
    assert np.ptp(kappa) < 1e-10 * kappa.mean()
    # Rodrigues: |Omega| = 2 tan(theta / 2) / l with theta = 2 pi / 24, l = edge length
    theta = 2 * np.pi / 24
    assert kappa.mean() == pytest.approx(2 * np.tan(theta / 2) / m.oe_rest_length[0], rel=1e-12)


def test_an_end_held_twice_is_refused_naming_both():
    """Two frames on one end fight, and the last one won without a word."""
    b = sl.SceneBuilder()
    pts = _line()
    s = b.add_strand(pts, material=MAT, name="rope")
    f0 = b.add_frame((0.0, 0.0, 0.0))
    f1 = b.add_frame((0.0, 0.0, 0.0), linear_velocity=(0.0, 0.0, 1.0))
    b.attach_to_frame(s, f0)
    b.attach_to_frame(s, f1, end=-1)                           # the other end: fine
    with pytest.raises(ValueError, match="rope: its first vertex is held by frame 0 already; "
                                         "attach it to frame 1 too"):
        b.attach_to_frame(s, f1)
    body = b.add_rigid_body(pts[-1], mass=1.0, size=0.01)
    with pytest.raises(ValueError, match="rope: its last vertex is held by frame 1 already; "
                                         "attach it to rigid body 0 too"):
        b.attach_to_body(s, body, end=-1)


def test_a_mesh_triangle_of_zero_area_is_refused():
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match=r"m: triangle 1 \[1, 2, 3\] has zero area"):
        b.add_mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, -1, 0]], [[0, 1, 2], [1, 2, 3]],
                   mass=1.0, name="m")
