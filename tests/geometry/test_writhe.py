"""Writhe of polylines: exact per-segment solid angles against the Gauss double integral."""
import numpy as np
import pytest

from strandlab.geometry.writhe import segment_pair_solid_angle, writhe, writhe_segments


# ---------------------------------------------------------------------------------- curves
def _trefoil(t):
    """(2, 3) torus knot, position [m], shape [len(t), 3]."""
    return np.c_[(2 + np.cos(3 * t)) * np.cos(2 * t), (2 + np.cos(3 * t)) * np.sin(2 * t),
                 np.sin(3 * t)]


def _trefoil_tangent(t):
    """d/dt of :func:`_trefoil`, shape [len(t), 3]."""
    return np.c_[-3 * np.sin(3 * t) * np.cos(2 * t) - 2 * (2 + np.cos(3 * t)) * np.sin(2 * t),
                 -3 * np.sin(3 * t) * np.sin(2 * t) + 2 * (2 + np.cos(3 * t)) * np.cos(2 * t),
                 3 * np.cos(3 * t)]


def _loop(n):
    """Parameters of n vertices of a closed curve (last vertex not repeated)."""
    return 2 * np.pi * np.arange(n) / n


def _wobbly_ring(n, eps):
    """A non-planar closed curve near a circle; ``eps`` scales the out-of-plane part."""
    t = _loop(n)
    r = 1 + 0.3 * np.cos(3 * t)
    return np.c_[r * np.cos(t), r * np.sin(t),
                 eps * (np.sin(2 * t) + 0.5 * np.cos(3 * t) + 0.3 * np.sin(t))]


def _open_helix(n=80, turns=3.0):
    t = np.linspace(0, 2 * np.pi * turns, n)
    return np.c_[np.cos(t), np.sin(t), 0.2 * t]


def _rotation(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


# ---------------------------------------------------------------------------------- references
def _gauss_quadrature(curve, tangent, m):
    """Midpoint-rule Gauss double integral of a smooth closed curve (diagonal left out)."""
    t = 2 * np.pi * (np.arange(m) + 0.5) / m
    r, d = curve(t), tangent(t)
    total = 0.0
    for i in range(0, m, 256):
        dr = r[i:i + 256, None, :] - r[None, :, :]
        cr = np.cross(d[i:i + 256, None, :], d[None, :, :])
        dist = np.linalg.norm(dr, axis=2)
        dist[dist == 0] = np.inf
        total += np.sum(np.einsum("ijk,ijk->ij", cr, dr) / dist ** 3)
    h = 2 * np.pi / m
    return total * h * h / (4 * np.pi)


def _segment_quadrature(p1, p2, p3, p4, m=600):
    """Midpoint-rule Gauss integral over one pair of segments."""
    s = (np.arange(m) + 0.5) / m
    r1 = p1 + s[:, None] * (p2 - p1)
    r2 = p3 + s[:, None] * (p4 - p3)
    d = (r1[:, None, :] - r2[None, :, :]).reshape(-1, 3)
    return np.sum(d @ np.cross(p2 - p1, p4 - p3) / np.linalg.norm(d, axis=1) ** 3) / m ** 2


def _klenin_langowski(p1, p2, p3, p4):
    """Eqs. 13-16 of Klenin & Langowski (2000) in their arcsine form."""
    r12, r34 = p2 - p1, p4 - p3
    r13, r14, r23, r24 = p3 - p1, p4 - p1, p3 - p2, p4 - p2

    def unit(v):
        return v / np.linalg.norm(v)

    n = [unit(np.cross(r13, r14)), unit(np.cross(r14, r24)), unit(np.cross(r24, r23)),
         unit(np.cross(r23, r13))]
    om = sum(np.arcsin(np.clip(n[k] @ n[(k + 1) % 4], -1, 1)) for k in range(4))
    return om * np.sign(np.cross(r34, r12) @ r13)


def _tantrix_area(points):
    """Signed area [sr] enclosed by the tangent indicatrix of a closed polygon (fan from +z)."""
    e = np.roll(points, -1, axis=0) - points
    t = e / np.linalg.norm(e, axis=1)[:, None]
    a, b, c = np.array([0.0, 0.0, 1.0]), t, np.roll(t, -1, axis=0)
    num = np.einsum("k,jk->j", a, np.cross(b, c))
    den = 1 + b @ a + c @ a + np.einsum("jk,jk->j", b, c)
    return float(np.sum(2 * np.arctan2(num, den)))


# ---------------------------------------------------------------------------------- segment pairs
def test_segment_pair_matches_klenin_langowski_and_quadrature():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.normal(size=(4, 3))
        om = segment_pair_solid_angle(*p)
        assert om == pytest.approx(_klenin_langowski(*p), abs=1e-12)
        assert om == pytest.approx(_segment_quadrature(*p), abs=2e-4 * max(1.0, abs(om)))
        # symmetric in the two segments, odd under reversing one of them
        assert segment_pair_solid_angle(p[2], p[3], p[0], p[1]) == pytest.approx(om, abs=1e-12)
        assert segment_pair_solid_angle(p[1], p[0], p[2], p[3]) == pytest.approx(-om, abs=1e-12)


def test_segment_pair_degenerate_configurations_are_finite():
    p1, p2 = np.array([0.0, 0, 0]), np.array([1.0, 0, 0])
    # p3 on the line through p1 p2: the arcsine form has an undefined normal here
    om = segment_pair_solid_angle(p1, p2, np.array([2.0, 0, 0]), np.array([2.0, 1, 1]))
    ref = _segment_quadrature(p1, p2, np.array([2.0, 0, 0]), np.array([2.0, 1, 1]), m=1500)
    assert np.isfinite(om) and om == pytest.approx(ref, abs=1e-4)
    assert segment_pair_solid_angle(p1, p2, np.array([0.0, 1, 0]), np.array([1.0, 2, 0])) == 0.0


# ---------------------------------------------------------------------------------- symmetries
def test_planar_curves_have_zero_writhe():
    t = _loop(200)
    r = 1 + 0.4 * np.cos(5 * t)
    flower = np.c_[r * np.cos(t), r * np.sin(t), np.zeros_like(t)]
    assert abs(writhe(flower, closed=True)) < 1e-12
    assert abs(writhe(flower[:150], closed=False)) < 1e-12
    rng = np.random.default_rng(0)
    zigzag = np.c_[rng.normal(size=(60, 2)), np.zeros(60)]
    assert abs(writhe(zigzag)) < 1e-12
    tilted = flower @ _rotation((1.0, 2.0, 0.5), 0.7).T + np.array([3.0, -1.0, 2.0])
    assert abs(writhe(tilted, closed=True)) < 1e-12


def test_mirror_image_flips_the_sign():
    x = _trefoil(_loop(300))
    w = writhe(x, closed=True)
    assert abs(w) > 3
    for axis in range(3):
        m = x.copy()
        m[:, axis] *= -1
        assert writhe(m, closed=True) == pytest.approx(-w, abs=1e-10)
    h = _open_helix()
    assert writhe(h * np.array([1, 1, -1])) == pytest.approx(-writhe(h), abs=1e-12)


def test_invariant_to_rotation_translation_scaling_and_orientation():
    x = _trefoil(_loop(240))
    w = writhe(x, closed=True)
    rot = _rotation((0.3, -1.0, 0.8), 1.234)
    moved = 0.013 * x @ rot.T + np.array([5.0, -7.0, 11.0])
    assert writhe(moved, closed=True) == pytest.approx(w, abs=1e-10)
    assert writhe(x[::-1], closed=True) == pytest.approx(w, abs=1e-10)
    assert writhe(np.roll(x, 17, axis=0), closed=True) == pytest.approx(w, abs=1e-10)
    h = _open_helix()
    assert writhe(1e3 * h @ rot.T) == pytest.approx(writhe(h), abs=1e-12)


# ---------------------------------------------------------------------------------- values
def test_closed_curve_matches_the_gauss_double_integral():
    reference = _gauss_quadrature(_trefoil, _trefoil_tangent, 4000)
    # the midpoint rule itself has converged at this resolution
    assert _gauss_quadrature(_trefoil, _trefoil_tangent, 2000) == pytest.approx(reference,
                                                                                abs=1e-5)
    assert reference == pytest.approx(-3.51824, abs=1e-4)
    errors = [abs(writhe(_trefoil(_loop(n)), closed=True) - reference)
              for n in (250, 500, 1000, 2000)]
    # the polyline converges to the smooth curve at second order in the edge length
    for coarse, fine in zip(errors, errors[1:]):
        assert 3.0 < coarse / fine < 5.0
    assert errors[-1] < 2e-5


def test_fuller_white_tantrix_area_is_exact_for_polygons():
    # Fuller: Wr = A / (2 pi) - 1 (mod 2), A the area enclosed by the tangent indicatrix
    for eps in (0.05, 0.3, 1.0):
        x = _wobbly_ring(300, eps)
        w = writhe(x, closed=True)
        fuller = _tantrix_area(x) / (2 * np.pi) - 1
        assert (w - fuller + 1) % 2 - 1 == pytest.approx(0.0, abs=1e-12)
    assert abs(writhe(_wobbly_ring(300, 1.0), closed=True)) > 1e-2


def test_short_polylines():
    assert writhe([[0, 0, 0], [1, 0, 0]]) == 0.0
    assert writhe([[0, 0, 0], [1, 0, 0], [1, 1, 1]]) == 0.0
    assert writhe([[0, 0, 0], [1, 0, 0], [1, 1, 1]], closed=True) == 0.0
    quad = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 1], [0.2, 1.3, -0.4]])
    w = writhe(quad, closed=True)
    ref = sum(segment_pair_solid_angle(quad[a], quad[(a + 1) % 4],
                                       quad[b], quad[(b + 1) % 4])
              for a, b in ((0, 2), (1, 3))) / (2 * np.pi)
    assert w == pytest.approx(ref, abs=1e-14) and w != 0.0


# ---------------------------------------------------------------------------------- batches
def test_writhe_segments_matches_single_strands():
    strands = [(_trefoil(_loop(90)), True), (_open_helix(40), False),
               (_wobbly_ring(50, 0.5), True), (np.array([[0, 0, 0], [1, 0, 0.0]]), False)]
    points = np.concatenate([s for s, _ in strands])
    offsets = np.cumsum([0] + [len(s) for s, _ in strands])
    closed = np.array([c for _, c in strands])
    got = writhe_segments(points, offsets, closed)
    assert got.shape == (4,)
    for k, (s, c) in enumerate(strands):
        assert got[k] == pytest.approx(writhe(s, closed=c), abs=1e-14)
    one = writhe_segments(points[:90], [0, 90], True)
    assert np.allclose(one, [writhe(points[:90], closed=True)])


# ---------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("points, match", [
    (np.zeros((5, 2)), r"shape \[n, 3\]"),
    (np.zeros(3), r"shape \[n, 3\]"),
    (np.zeros((1, 3)), "at least 2 vertices"),
    ([[0, 0, 0], [1, np.nan, 0], [2, 0, 0]], "non-finite coordinates at vertex 1"),
    ([["a", "b", "c"], [1, 2, 3]], "numeric"),
])
def test_bad_points_are_rejected(points, match):
    with pytest.raises(ValueError, match=match):
        writhe(points)


def test_bad_offsets_and_flags_are_rejected():
    pts = _open_helix(10)
    with pytest.raises(ValueError, match="start at 0 and end"):
        writhe_segments(pts, [0, 5, 9], [False, False])
    with pytest.raises(ValueError, match="strand 1 has 1 vertices"):
        writhe_segments(pts, [0, 9, 10], [False, False])
    with pytest.raises(ValueError, match="integers"):
        writhe_segments(pts, [0.0, 10.0], [False])
    with pytest.raises(ValueError, match=r"closed_flags must have shape \[2\]"):
        writhe_segments(pts, [0, 5, 10], [False, False, True])
    with pytest.raises(ValueError, match="offsets must have shape"):
        writhe_segments(pts, [[0, 10]], [False])


# ---------------------------------------------------------------------------------- open curves
def _polyline_gauss_integral(x, m=12):
    """Writhe of an open polyline by brute force: the Gauss double integral
    ``1 / (4 pi) sum_{i != j} int int (t_i x t_j) . (r_i - r_j) / |r_i - r_j|^3 ds_i ds_j`` over
    every pair of non-adjacent segments by ``m``-point Gauss-Legendre quadrature on each.

    The integrand of a pair is smooth (the segments are at least one edge apart), so the error
    falls like the quadrature's ``(h / d)^(2m)``: below 1e-10 here.  Adjacent segments lie in
    one plane and contribute nothing.
    """
    nodes, weights = np.polynomial.legendre.leggauss(m)
    s = 0.5 * (nodes + 1.0)
    wq = 0.5 * weights
    seg = x[1:] - x[:-1]
    pts = x[:-1, None, :] + s[None, :, None] * seg[:, None, :]       # [n_seg, m, 3]
    total = 0.0
    n_seg = len(seg)
    for i in range(n_seg):
        for j in range(i + 2, n_seg):
            d = pts[i][:, None, :] - pts[j][None, :, :]                 # [m, m, 3]
            integrand = d @ np.cross(seg[i], seg[j]) / np.linalg.norm(d, axis=2) ** 3
            total += wq @ integrand @ wq
    return 2.0 * total / (4.0 * np.pi)


@pytest.mark.parametrize("n, turns", [(40, 2.0), (31, 1.3)])
def test_open_helix_matches_the_brute_force_gauss_integral(n, turns):
    h = _open_helix(n, turns)
    reference = _polyline_gauss_integral(h)
    assert writhe(h) == pytest.approx(reference, abs=1e-8)
    # every segment matters: the end segments change the writhe far beyond the tolerance
    assert abs(reference - _polyline_gauss_integral(h[:-1])) > 1e-4
    assert abs(reference - _polyline_gauss_integral(h[1:])) > 1e-4


def test_open_polyline_with_few_segments_matches_the_pair_sum():
    # three segments: only the first and the last are not adjacent
    p = np.array([[0.0, 0, 0], [1.0, 0, 0], [1.0, 1.0, 0.3], [0.2, 0.4, 1.0]])
    ref = segment_pair_solid_angle(p[0], p[1], p[2], p[3]) / (2 * np.pi)
    assert writhe(p) == pytest.approx(ref, abs=1e-15) and ref != 0.0
    assert writhe(p) == pytest.approx(_polyline_gauss_integral(p, m=40), abs=1e-6)
