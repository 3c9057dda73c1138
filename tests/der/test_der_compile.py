"""Compiling a scene into the DER model: layout, material mapping, rest shape, bad input."""
import math

import numpy as np
import pytest

import strandlab as sl
from strandlab.der.compile import compile_scene, rest_values
from strandlab.sim.scene import UnsupportedFeature
from strandlab.sim.shapes import line

MAT = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005, shear_modulus=1e6 / 3)


def _scene(points, **kw):
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_strand(points, material=MAT, **kw)
    return b.build()


def test_interleaved_layout_and_stencils():
    pts = line((0, 0, 0), (1, 0, 0), 4)       # 5 vertices, 4 edges
    b = sl.SceneBuilder()
    b.add_strand(pts, material=MAT)
    b.add_strand(pts + [0, 1, 0], material=MAT)
    m = compile_scene(b.build())
    assert m.n_dofs == 2 * (4 * 5 - 1)
    np.testing.assert_array_equal(m.vertex_dof[:5], [0, 4, 8, 12, 16])
    np.testing.assert_array_equal(m.edge_dof[:4], [3, 7, 11, 15])
    np.testing.assert_array_equal(m.vertex_dof[5:], 19 + np.array([0, 4, 8, 12, 16]))
    # a bend stencil's 11 coordinates are contiguous for an open strand: half-bandwidth 10
    np.testing.assert_array_equal(m.bend_dofs[0], np.arange(11))
    np.testing.assert_array_equal(m.bend_dofs[3], 19 + np.arange(11))
    np.testing.assert_array_equal(m.stretch_dofs[1], [4, 5, 6, 8, 9, 10])
    assert m.n_bend == 6
    np.testing.assert_array_equal(m.strand_dof_start, [0, 19, 38])


def test_material_mapping_and_mass():
    # Reference: sag_free_formulation.md, "One strand" and "Energies": k_s = E pi r^2,
    # k_b = E pi r^4 / 4, k_t = G pi r^4 / 2; m_i = rho pi r^2 ltilde_i; I_e = rho pi r^4/2 lbar
    pts = line((0, 0, 0), (1, 0, 0), 10)
    m = compile_scene(_scene(pts))
    r, E, G, rho = 0.005, 1e6, 1e6 / 3, 1000.0
    np.testing.assert_allclose(m.stretch_stiffness, E * math.pi * r ** 2)
    np.testing.assert_allclose(m.bend_stiffness, E * math.pi * r ** 4 / 4)
    np.testing.assert_allclose(m.twist_stiffness, G * math.pi * r ** 4 / 2)
    mv = m.mass[m.vertex_dof]
    np.testing.assert_allclose(mv.sum(), rho * math.pi * r ** 2 * 1.0, rtol=1e-12)
    np.testing.assert_allclose(mv[0], rho * math.pi * r ** 2 * 0.05, rtol=1e-12)
    np.testing.assert_allclose(m.mass[m.edge_dof], rho * math.pi * r ** 4 / 2 * 0.1, rtol=1e-12)
    np.testing.assert_allclose(m.voronoi_length, 0.1)


def test_tapered_radius_scales_per_vertex_and_edge():
    pts = line((0, 0, 0), (1, 0, 0), 4)
    rad = np.array([0.01, 0.008, 0.006, 0.004, 0.002])
    m = compile_scene(_scene(pts, radius=rad))
    r_e = 0.5 * (rad[:-1] + rad[1:])
    np.testing.assert_allclose(m.stretch_stiffness, 1e6 * math.pi * r_e ** 2)
    np.testing.assert_allclose(m.bend_stiffness[:, 0], 1e6 * math.pi * rad[1:-1] ** 4 / 4)


def test_rest_values_of_a_regular_polygon():
    # a regular polygon of n sides: turning angle 2 pi / n, |kb| = 2 tan(phi / 2); the
    # binormal is the ring's normal, along which d1 = m1 points: kappa = (0, -|kb|, 0, -|kb|)
    n = 12
    ang = 2 * np.pi * np.arange(n) / n
    pts = np.stack([np.cos(ang), np.sin(ang), np.zeros(n)], axis=1)
    d1 = np.tile([0.0, 0.0, 1.0], (n, 1))
    lbar, kap, tw = rest_values(pts, d1, closed=True)
    np.testing.assert_allclose(lbar, 2 * np.sin(np.pi / n))
    np.testing.assert_allclose(kap[:, [1, 3]], -2 * np.tan(np.pi / n), rtol=1e-12)
    np.testing.assert_allclose(kap[:, [0, 2]], 0.0, atol=1e-12)
    np.testing.assert_allclose(tw, 0.0, atol=1e-12)


def test_rest_shape_from_rest_points_and_explicit_override():
    pts = line((0, 0, 0), (1, 0, 0), 6)
    rest = pts.copy()
    rest[:, 2] = 0.1 * rest[:, 0] ** 2
    m = compile_scene(_scene(pts, rest_points=rest))
    assert np.abs(m.rest_curvature).max() > 0.01
    np.testing.assert_allclose(m.rest_length, np.linalg.norm(np.diff(rest, axis=0), axis=1))
    kap = np.full((5, 4), 0.02)
    m2 = compile_scene(_scene(pts, options={"der": {"rest_curvature": kap,
                                                    "rest_twist": [0.1] * 5,
                                                    "rest_length": 0.3,
                                                    "bend_stiffness": [1e-3, 2e-3]}}))
    np.testing.assert_allclose(m2.rest_curvature, kap)
    np.testing.assert_allclose(m2.rest_twist, 0.1)
    np.testing.assert_allclose(m2.rest_length, 0.3)
    np.testing.assert_allclose(m2.bend_stiffness, [[1e-3, 2e-3]] * 5)


@pytest.mark.parametrize("opts, match", [
    ({"rest_curvature": np.zeros((4, 4))}, r"strand 0.*rest_curvature.*\(5, 4\)"),
    ({"rest_twist": [0.0] * 6}, r"rest_twist.*expected \(5,\)"),
    ({"rest_length": [0.2, -0.1, 0.2, 0.2, 0.2, 0.2]}, r"rest_length.*entry 1"),
    ({"twist_stiffness": 0.0}, r"twist_stiffness.*positive"),
    ({"bend_stifness": 1.0}, r"unknown der option 'bend_stifness'"),
    ({"rest_twist": [0.0, np.nan, 0, 0, 0]}, r"rest_twist.*not finite at entry 1"),
])
def test_bad_options_name_the_strand_and_entry(opts, match):
    with pytest.raises(ValueError, match=match):
        compile_scene(_scene(line((0, 0, 0), (1, 0, 0), 6), options={"der": opts}))


def test_bad_strands_name_the_strand_and_vertex():
    with pytest.raises(ValueError, match=r"strand 0.*at least 3 vertices, got 2"):
        compile_scene(_scene(line((0, 0, 0), (1, 0, 0), 1)))
    pts = line((0, 0, 0), (1, 0, 0), 4)
    pts[3] = pts[2]
    with pytest.raises(ValueError, match=r"strand 0: points 2 and 3 coincide"):
        compile_scene(_scene(pts))
    fold = np.array([[0, 0, 0], [1, 0, 0], [0.5, 0, 0.0]])
    with pytest.raises(ValueError, match=r"turns back on itself at vertex 1"):
        compile_scene(_scene(fold))


def test_unsupported_parts_are_named():
    b = sl.SceneBuilder()
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), 4), material=MAT)
    f = b.add_frame()
    b.attach_to_frame(s, f, end=0, slide_axis=(1, 0, 0))
    with pytest.raises(UnsupportedFeature, match="slide"):
        compile_scene(b.build())


def test_clamped_root_fixes_two_vertices_and_the_first_angle():
    b = sl.SceneBuilder()
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), 4), material=MAT)
    b.attach_to_frame(s, b.add_frame(), end=0)
    m = compile_scene(b.build())
    np.testing.assert_array_equal(np.nonzero(m.fixed)[0], [0, 1, 2, 3, 4, 5, 6])
    b = sl.SceneBuilder()
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), 4), material=MAT)
    b.attach_to_frame(s, b.add_frame(), end=-1, orientation=False)
    m = compile_scene(b.build())
    np.testing.assert_array_equal(np.nonzero(m.fixed)[0], [16, 17, 18])
