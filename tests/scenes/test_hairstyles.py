"""Procedural hairstyles: determinism, counts, equal edges, roots on the scalp, nothing inside
it, and each style's curvature against its analytic reference."""
import math

import numpy as np
import pytest

from strandlab import Material
from strandlab.scenes.hairstyles import HAIRSTYLES, generate_hairstyle, scalp_height

STYLES = list(HAIRSTYLES)
N, V = 120, 100


@pytest.fixture(scope="module")
def styles():
    return {k: generate_hairstyle(k, n_strands=N, vertices_per_strand=V, seed=7) for k in STYLES}


def edges(hair, n=N, v=V):
    p = hair.points.reshape(n, v, 3)
    e = np.diff(p, axis=1)
    return e, np.linalg.norm(e, axis=2)


def turning(hair, n=N, v=V):
    """Angle between consecutive edges [rad], [n, v - 2], and the edge lengths [n, v - 1]."""
    e, ln = edges(hair, n, v)
    u = e / ln[..., None]
    cos = np.clip(np.sum(u[:, 1:] * u[:, :-1], axis=2), -1.0, 1.0)
    return np.arccos(cos), ln


def test_same_seed_same_hair_other_seed_other_hair():
    a = generate_hairstyle("curly", n_strands=30, seed=3)
    b = generate_hairstyle("curly", n_strands=30, seed=3)
    c = generate_hairstyle("curly", n_strands=30, seed=4)
    np.testing.assert_array_equal(a.points, b.points)
    assert np.max(np.abs(a.points - c.points)) > 1e-3
    # the seed fixes the roots and per-strand numbers for every style
    s = generate_hairstyle("straight", n_strands=30, seed=3)
    np.testing.assert_array_equal(s.points[s.offsets[:-1]], a.points[a.offsets[:-1]])


@pytest.mark.parametrize("kind", STYLES)
def test_counts_and_equal_edges(styles, kind):
    h = styles[kind]
    assert h.n_strands == N and h.n_points == N * V
    assert np.all(h.vertex_counts == V)
    _, ln = edges(h)
    # each strand: every edge exactly length_i / (V - 1) (float64 rounding of the chord solve)
    np.testing.assert_allclose(ln, ln[:, :1] * np.ones((1, V - 1)), rtol=1e-12)
    lengths = h.lengths()
    assert np.all(lengths >= 0.25 * (1 - 0.15) * (1 - 1e-12))
    assert np.all(lengths <= 0.25 * (1 + 0.15) * (1 + 1e-12))
    assert np.std(lengths) > 0.01                              # per-strand variation is there
    assert h.default_thickness == 7e-5 and kind in h.info


@pytest.mark.parametrize("kind", STYLES)
@pytest.mark.parametrize("scalp", [dict(), dict(scalp_center=(0.1, -0.2, 1.5),
                                                scalp_radius=(0.08, 0.1, 0.12))])
def test_roots_on_the_scalp_and_no_vertex_inside(kind, scalp):
    h = generate_hairstyle(kind, n_strands=80, seed=2, **scalp)
    depth = scalp_height(h.points, center=scalp.get("scalp_center", (0, 0, 0)),
                         radius=scalp.get("scalp_radius", 0.1)).reshape(80, V)
    assert np.max(np.abs(depth[:, 0])) < 1e-15                 # roots on the ellipsoid
    assert np.min(depth[:, 1:]) > 2e-4                         # the rest strictly outside
    # roots cover the cap: polar angle from +z up to 110 degrees (the default), down to 0
    c = np.array(scalp.get("scalp_center", (0, 0, 0)))
    r = np.array(scalp.get("scalp_radius", (0.1, 0.1, 0.1)), dtype=float) * np.ones(3)
    u = (h.points[h.offsets[:-1]] - c) / r
    polar = np.degrees(np.arccos(np.clip(u[:, 2], -1, 1)))
    assert 100 < polar.max() <= 110 + 1e-9 and polar.min() < 15


def test_strands_leave_along_the_scalp_normal():
    bend = 0.005
    h = generate_hairstyle("straight", n_strands=100, seed=1, bend_radius=bend)
    p = h.points.reshape(100, V, 3)
    first = p[:, 1] - p[:, 0]
    normal = p[:, 0] / np.linalg.norm(p[:, 0], axis=1)[:, None]      # sphere at the origin
    angle = np.arccos(np.sum(first * normal, axis=1) / np.linalg.norm(first, axis=1))
    # a curve of curvature <= 1 / bend leaves its tangent by <= h / (2 bend) over a chord h;
    # twice that covers the discrete integration
    h_edge = np.linalg.norm(first, axis=1)
    assert np.all(angle < h_edge / bend)
    # and the hair ends up hanging: the tips are below the roots
    assert np.all(p[:, -1, 2] < p[:, 0, 2])


def test_styles_turn_more_and_more(styles):
    per_length = {}
    for k in STYLES:
        ang, ln = turning(styles[k])
        per_length[k] = float(np.median(ang.sum(axis=1) / ln.sum(axis=1)))
    # measured about 9, 47, 136 and 330 rad/m: each at least 1.8 times the one before
    vals = [per_length[k] for k in STYLES]
    assert all(b > 1.8 * a for a, b in zip(vals, vals[1:])), per_length


@pytest.mark.parametrize("kind", ["curly", "coiled"])
def test_helix_curvature_matches_its_radius_and_pitch(kind):
    """Past the fade-in, a strand turns like a helix of the style's radius r and pitch p:
    curvature r / (r^2 + c^2), c = p / (2 pi); a polygon of chords h turns 2 asin(kappa h / 2)
    per vertex.  3 %: the centreline's own bending along the scalp (~10 rad/m against 130 and
    310 rad/m) and the helix's chords not lying in one plane."""
    r, p = HAIRSTYLES[kind]
    h = generate_hairstyle(kind, n_strands=60, seed=5, variation=0.0)
    ang, ln = turning(h, 60)
    skip = int(math.ceil(0.05 / ln[0, 0]))
    measured = float(np.median(ang[:, skip:].mean(axis=1))) / ln[0, 0]
    c = p / (2 * math.pi)
    kappa = r / (r * r + c * c)
    expected = 2 * math.asin(kappa * ln[0, 0] / 2) / ln[0, 0]
    assert measured == pytest.approx(expected, rel=0.03)


def test_wave_turning_matches_a_sine():
    """A sine of amplitude A and wavelength L turns 4 atan(A k) per wavelength (k = 2 pi / L)
    over its arclength.  5 %: the chords (24 per wavelength) cut the crests, and each strand
    ends part way through a wavelength (the median over random phases averages it)."""
    a, lam = HAIRSTYLES["wavy"]
    h = generate_hairstyle("wavy", n_strands=60, seed=5, variation=0.0)
    ang, ln = turning(h, 60)
    skip = int(math.ceil(0.05 / ln[0, 0]))
    measured = float(np.median(ang[:, skip:].mean(axis=1))) / ln[0, 0]
    k = 2 * math.pi / lam
    x = np.linspace(0.0, lam, 20001)
    arc = np.trapezoid(np.sqrt(1 + (a * k * np.cos(k * x)) ** 2), x)
    assert measured == pytest.approx(4 * math.atan(a * k) / arc, rel=0.05)


def test_amplitude_and_period_override_the_style():
    ang0, ln0 = turning(generate_hairstyle("curly", n_strands=20, seed=1, variation=0.0), 20)
    h = generate_hairstyle("curly", n_strands=20, seed=1, variation=0.0, amplitude=0.004,
                           period=0.02)
    ang, ln = turning(h, 20)
    skip = int(math.ceil(0.05 / ln[0, 0]))
    c = 0.02 / (2 * math.pi)
    kappa = 0.004 / (0.004 ** 2 + c * c)
    measured = float(np.median(ang[:, skip:].mean(axis=1))) / ln[0, 0]
    assert measured == pytest.approx(2 * math.asin(kappa * ln[0, 0] / 2) / ln[0, 0], rel=0.03)


def test_generated_hair_becomes_a_scene():
    h = generate_hairstyle("wavy", n_strands=10, vertices_per_strand=20, seed=0)
    scene = h.to_scene(material=Material(young_modulus=3e9, density=1300.0, radius=4e-5))
    assert len(scene.strands) == 10 and len(scene.frame_attachments) == 10
    np.testing.assert_allclose(scene.strands[0].radius, 3.5e-5, rtol=1e-15)


@pytest.mark.parametrize("kw, pattern", [
    (dict(kind="frizzy"), "unknown hairstyle 'frizzy'; known: straight, wavy, curly, coiled"),
    (dict(n_strands=0), "n_strands must be an integer >= 1"),
    (dict(vertices_per_strand=1), "vertices_per_strand must be an integer >= 2"),
    (dict(length=-0.1), "length must be a positive number"),
    (dict(scalp_radius=(0.1, 0.0, 0.1)), "scalp_radius must be one positive number or three"),
    (dict(scalp_center=(0, 0)), "scalp_center must be 3 finite numbers"),
    (dict(cap_angle=0.0), r"cap_angle must be in \(0, 180\]"),
    (dict(variation=0.95), r"variation must be in \[0, 0.9\]"),
    (dict(kind="curly", amplitude=0.0), "amplitude must be a positive number"),
])
def test_bad_parameters(kw, pattern):
    kind = kw.pop("kind", "straight")
    with pytest.raises(ValueError, match=pattern):
        generate_hairstyle(kind, n_strands=kw.pop("n_strands", 5), **kw)


def test_straight_hair_takes_no_amplitude():
    with pytest.raises(ValueError, match="straight hair has no amplitude or period"):
        generate_hairstyle("straight", n_strands=3, amplitude=0.01)
