"""Mesh contact in the implicit solve (strandlab.collision.mesh_contact): the penalty's energy,
gradient and Hessian against finite differences, its C1 onset at dhat, the zero net force and
torque of every contact, the broad phase against a brute-force search of every pair on random
configurations, bad input named; and, stepped by strandlab.implicit.ImplicitEuler, a patch
dropped on a pinned patch never passes through it and comes to rest on it, and two free patches
colliding keep their total momentum; moves limited by additive CCD stop a point or an edge short
of a surface, and a patch falling three contact thicknesses per step does not tunnel."""
import numpy as np
import pytest

from strandlab.collision.mesh_contact import (
    CLOSE_FRACTION,
    EDGE_EDGE_PAIR,
    MAX_STIFFENING,
    POINT_TRIANGLE,
    STIFFEN_FACTOR,
    MeshContactTerm,
    surface_edges,
)
from strandlab.collision.triangle_distance import edge_edge_distance, point_triangle_distance
from strandlab.implicit import ImplicitEuler, NewtonSettings
from strandlab.rods.terms import StretchTerm


def _patch(n, spacing, origin=(0.0, 0.0, 0.0), rotation=None, noise=0.0, rng=None):
    """An n x n grid of vertices, two triangles per cell: points [n^2, 3], triangles [F, 3]."""
    xs = spacing * np.arange(n)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    P = np.stack([X.ravel(), Y.ravel(), np.zeros(X.size)], axis=1)
    if noise:
        P += noise * spacing * rng.normal(size=P.shape)
    if rotation is not None:
        P = P @ rotation.T
    P += origin
    tris = []
    for i in range(n - 1):
        for j in range(n - 1):
            a = i * n + j
            tris += [[a, a + n, a + 1], [a + 1, a + n, a + n + 1]]
    return P, np.array(tris)


def _join(*patches):
    pts, tris, off = [], [], 0
    for P, T in patches:
        pts.append(P)
        tris.append(T + off)
        off += len(P)
    return np.vstack(pts), np.vstack(tris)


def _rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.diag(r))


def _evaluate(term, q):
    n = term.n_stencils
    e, g, h = np.zeros(n), np.zeros((n, 12)), np.zeros((n, 12, 12))
    term.evaluate(q, e, g, h)
    G = np.zeros(q.size)
    H = np.zeros((q.size, q.size))
    np.add.at(G, term.dofs, g)
    for s in range(n):
        H[np.ix_(term.dofs[s], term.dofs[s])] += h[s]
    return e.sum(), G, H, e


def _close_patches(dhat=0.05):
    """A tilted, slightly crumpled patch hovering within dhat of a flat one."""
    rng = np.random.default_rng(7)
    rot = np.array([[0.96, 0.0, 0.28], [0.0, 1.0, 0.0], [-0.28, 0.0, 0.96]])
    P, T = _join(_patch(3, 0.1), _patch(3, 0.1, origin=(0.03, 0.04, 0.018), rotation=rot,
                                          noise=0.05, rng=rng))
    term = MeshContactTerm(triangles=T, vertex_dofs=3 * np.arange(len(P)),
                           stiffness=np.linspace(100.0, 200.0, len(P)), dhat=dhat,
                           project=False)
    q = P.reshape(-1).copy()
    term.update(q)
    return term, q


def _check_finite_differences(term, q, step=1e-7):
    E, G, H, e = _evaluate(term, q)
    G_fd, H_fd = np.zeros(q.size), np.zeros((q.size, q.size))
    for i in range(q.size):
        qp, qm = q.copy(), q.copy()
        qp[i] += step
        qm[i] -= step
        Ep, Gp, _, _ = _evaluate(term, qp)
        Em, Gm, _, _ = _evaluate(term, qm)
        G_fd[i] = (Ep - Em) / (2 * step)
        H_fd[:, i] = (Gp - Gm) / (2 * step)
    scale = np.abs(G).max()
    np.testing.assert_allclose(G, G_fd, rtol=1e-6, atol=1e-7 * scale)
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-5 * np.abs(H).max())
    # net force and torque of the contacts are zero (momentum conserved)
    f = G.reshape(-1, 3)
    np.testing.assert_allclose(f.sum(0), 0.0, atol=1e-12 * scale)
    np.testing.assert_allclose(np.cross(q.reshape(-1, 3), f).sum(0), 0.0, atol=1e-12 * scale)


def _series_stiffness(term):
    """Each pair's stiffness by hand: the point (or first edge) side's stiffest vertex and the
    triangle (or second edge) side's, in series, times the pair's largest stiffening."""
    out = []
    for verts, kind in zip(term.pair_vertices, term.pair_kind):
        k = term.stiffness[verts]
        split = 1 if kind == POINT_TRIANGLE else 2
        ka, kb = max(k[:split]), max(k[split:])
        out.append(1.0 / (1.0 / ka + 1.0 / kb) * max(term.stiffening[verts]))
    return np.array(out)


def _distances(term, q):
    """Each listed pair's distance from the distance functions."""
    x = q.reshape(-1, 3)
    d2 = [point_triangle_distance(*x[v])[0] if kind == POINT_TRIANGLE
          else edge_edge_distance(*x[v])[0]
          for v, kind in zip(term.pair_vertices, term.pair_kind)]
    return np.sqrt(d2)


def test_pairs_closer_than_half_dhat_stiffen_their_vertices():
    term, q = _close_patches()
    close = _distances(term, q) < CLOSE_FRACTION * term.dhat
    assert 3 <= close.sum() < term.n_stencils - 5
    stiff = np.zeros(term.stiffening.size, dtype=bool)
    stiff[term.pair_vertices[close].ravel()] = True
    for rounds in range(1, 13):
        assert term.stiffen(q) == close.sum()
        # from the eleventh round the close pairs' vertices were at the cap already
        assert (term.saturated >= 0) == (rounds > 10)
        assert term.saturated < 0 or stiff[term.saturated]
        want = min(STIFFEN_FACTOR ** rounds, MAX_STIFFENING)
        np.testing.assert_array_equal(term.stiffening, np.where(stiff, want, 1.0))
        np.testing.assert_allclose(term.pair_stiffness, _series_stiffness(term), rtol=1e-14)
    assert term.stiffening.max() == MAX_STIFFENING
    # a pair list rebuilt keeps the factors; a checkpoint carries them to a new term
    term.update(q, max_displacement=0.01)
    np.testing.assert_allclose(term.pair_stiffness, _series_stiffness(term), rtol=1e-14)
    state = term.list_state()
    fresh, _ = _close_patches()
    fresh.restore_list(state)
    np.testing.assert_array_equal(fresh.stiffening, term.stiffening)
    np.testing.assert_array_equal(fresh.pair_stiffness, term.pair_stiffness)
    for bad in (np.zeros(3), np.full(term.stiffening.size, 0.5),
                np.full(term.stiffening.size, np.inf)):
        with pytest.raises(ValueError, match="stiffening must be"):
            fresh.restore_list({**state, "stiffening": bad})
    # restored onto the same pairs, the pairs take the restored factors (a checkpoint written
    # before the factors existed restores them as 1)
    term.restore_list({"q": state["q"], "margin": float(state["margins"].max())})
    assert np.all(term.stiffening == 1.0)
    np.testing.assert_allclose(term.pair_stiffness, _series_stiffness(term), rtol=1e-14)
    assert term.pair_stiffness.max() < 300.0
    # lifted apart, no pair is close
    q2 = q.copy()
    q2[2::3][9:] += 0.5
    assert term.stiffen(q2) == 0


def test_energy_gradient_and_hessian_match_finite_differences():
    term, q = _close_patches()
    _evaluate(term, q)
    kinds = set(term.pair_kind.tolist())
    assert term.n_active >= 10 and kinds == {POINT_TRIANGLE, EDGE_EDGE_PAIR}
    # the two sides' stiffest vertices as springs in series (no stiffening yet)
    np.testing.assert_allclose(term.pair_stiffness, _series_stiffness(term), rtol=1e-14)
    assert len(set(term.pair_stiffness.tolist())) > 5
    _check_finite_differences(term, q)


@pytest.mark.parametrize("angle", [0.01, 0.03])
def test_nearly_parallel_edges_are_mollified_smoothly(angle):
    """Edges at an angle of 0.6 and 1.7 degrees (sin^2 below 1e-3): the penalty times
    m(sin^2) = (2 - s / 1e-3) s / 1e-3, checked against the plain penalty and differences."""
    dhat, k = 0.01, 500.0
    term = MeshContactTerm(triangles=np.zeros((0, 3), dtype=int), edges=[[0, 1], [2, 3]],
                           vertex_dofs=[0, 3, 6, 9], stiffness=k, dhat=dhat, project=False)
    c, s = np.cos(angle), np.sin(angle)
    q = np.array([0, 0, 0, 1, 0, 0, 0.5 - 0.5 * c, -0.5 * s, 0.004,
                  0.5 + 0.5 * c, 0.5 * s, 0.004])
    term.update(q)
    E, _, _, _ = _evaluate(term, q)
    r = np.sin(angle) ** 2 / 1e-3
    kp = k / 2.0                  # the pair: two sides of stiffness k in series
    assert E == pytest.approx((2 - r) * r * 0.5 * kp * (dhat - 0.004) ** 2, rel=1e-9)
    _check_finite_differences(term, q, step=1e-8)


def test_projected_hessian_is_the_positive_semi_definite_gauss_newton_part():
    term, q = _close_patches()
    _, G, H, _ = _evaluate(term, q)
    assert np.linalg.eigvalsh(H).min() < -1e-3 * np.abs(H).max()   # the exact one is not PSD
    term.project = True
    n = term.n_stencils
    e, g, h = np.zeros(n), np.zeros((n, 12)), np.zeros((n, 12, 12))
    term.evaluate(q, e, g, h)
    for s in range(n):
        assert np.linalg.eigvalsh(h[s]).min() >= -1e-12 * max(np.abs(h[s]).max(), 1e-300)
        if e[s] > 0:   # k grad d grad d^T: rank one, grad E = -k (dhat - d) grad d
            gap = np.sqrt(2 * e[s] / term.pair_stiffness[s])
            gd = -g[s] / (term.pair_stiffness[s] * gap)
            np.testing.assert_allclose(h[s], term.pair_stiffness[s] * np.outer(gd, gd),
                                       atol=1e-10 * np.abs(h[s]).max())
    _, G2, _, _ = _evaluate(term, q)
    np.testing.assert_array_equal(G, G2)


def test_penalty_starts_continuously_at_dhat():
    tri = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    k, dhat = 300.0, 0.01
    term = MeshContactTerm(triangles=[[1, 2, 3]], vertex_dofs=[0, 3, 6, 9], stiffness=k,
                           dhat=dhat, edges=np.zeros((0, 2), dtype=int))
    for z, active in ((dhat * (1 + 1e-9), 0), (dhat * (1 - 1e-9), 1), (0.25 * dhat, 1)):
        q = np.concatenate([[0.2, 0.3, z], tri.reshape(-1)])
        term.update(q, max_displacement=dhat)
        e, g, h = np.zeros(1), np.zeros((1, 12)), np.zeros((1, 12, 12))
        term.evaluate(q, e, g, h)
        assert term.n_active == active
        gap = max(dhat - z, 0.0)
        kp = k / 2.0              # the point and the triangle, each of stiffness k, in series
        assert e[0] == pytest.approx(0.5 * kp * gap ** 2, rel=1e-9, abs=1e-30)
        # the point is pushed up by kp (dhat - d), the triangle down
        assert g[0, 2] == pytest.approx(-kp * gap, rel=1e-9, abs=1e-30)
        assert g[0, 5::3].sum() == pytest.approx(kp * gap, rel=1e-9, abs=1e-30)


def _brute_force(P, T, edges, dhat, margins):
    """Every point-triangle and edge-edge pair closer than its reach, ``dhat`` plus the largest
    margin of each side's vertices, from the definitions."""
    found = set()
    for v in range(len(P)):
        for t in T:
            reach = dhat + margins[v] + margins[t].max()
            if v not in t and point_triangle_distance(P[v], *P[t])[0] < reach ** 2:
                found.add((POINT_TRIANGLE, v, *t))
    for i, e in enumerate(edges):
        for f in edges[i + 1:]:
            if set(e) & set(f):
                continue
            reach = dhat + margins[e].max() + margins[f].max()
            if edge_edge_distance(*P[e], *P[f])[0] < reach ** 2:
                found.add((EDGE_EDGE_PAIR, *e, *f))
    return found


def _listed(term):
    return {(int(k), *map(int, p)) for k, p in zip(term.pair_kind, term.pair_vertices)}


def test_broad_phase_finds_exactly_the_brute_force_pairs():
    rng = np.random.default_rng(11)
    total = 0
    for trial in range(4):
        # edges of 10 cm, then of 2 cm: shorter than the reach
        n, spacing = (4, 0.1) if trial < 2 else (6, 0.02)
        patches = [_patch(n, spacing, origin=rng.uniform(0, 1.5 * spacing, 3),
                          rotation=_rotation(rng), noise=0.2, rng=rng) for _ in range(2)]
        P, T = _join(*patches)
        # a shuffled vertex numbering with gaps between the DOFs of vertices
        dofs = 3 + 4 * rng.permutation(len(P))
        q = np.zeros(dofs.max() + 4)
        for a in range(3):
            q[dofs + a] = P[:, a]
        dhat, delta = 0.01, rng.uniform(0.005, 0.03) if trial < 2 else rng.uniform(0.02, 0.04)
        term = MeshContactTerm(triangles=T, vertex_dofs=dofs, stiffness=1.0, dhat=dhat,
                               capacity=1 if trial == 0 else None)
        assert term.update(q, max_displacement=delta)
        got = _listed(term)
        assert len(got) == term.n_stencils   # each pair once
        want = _brute_force(P, T, term.edges, dhat, np.full(len(P), delta))
        assert got == want
        np.testing.assert_array_equal(term.dofs[:, ::3], dofs[term.pair_vertices])
        total += len(want)
    assert total > 100   # the configurations do come close


def test_each_pair_reaches_as_far_as_its_vertices_margins():
    # per-vertex margins: a pair is listed when closer than dhat plus the largest margin of
    # each side (the point, the triangle, each edge); the same set as the brute force, a
    # subset of the uniform list at the largest margin, and that list again at a uniform array
    rng = np.random.default_rng(5)
    total = fewer = 0
    for _ in range(3):
        patches = [_patch(5, 0.02, origin=rng.uniform(0, 0.03, 3), rotation=_rotation(rng),
                          noise=0.2, rng=rng) for _ in range(2)]
        P, T = _join(*patches)
        dofs = 3 * np.arange(len(P))
        q = P.ravel().copy()
        dhat = 0.004
        margins = rng.uniform(0.0, 0.03, len(P)) * (rng.uniform(size=len(P)) < 0.7)
        term = MeshContactTerm(triangles=T, vertex_dofs=dofs, stiffness=1.0, dhat=dhat)
        term.update(q, max_displacement=margins)
        got = _listed(term)
        assert len(got) == term.n_stencils
        assert got == _brute_force(P, T, term.edges, dhat, margins)
        assert term.margin == margins.max() and term.reach == dhat + 2 * margins.max()
        np.testing.assert_array_equal(term.margins, margins)
        term.update(q, max_displacement=np.repeat(margins, 2)[::2])     # a strided view
        assert _listed(term) == got
        uniform = MeshContactTerm(triangles=T, vertex_dofs=dofs, stiffness=1.0, dhat=dhat)
        uniform.update(q, max_displacement=margins.max())
        assert got <= _listed(uniform)
        term.update(q, max_displacement=np.full(len(P), margins.max()))
        assert _listed(term) == _listed(uniform)
        total += len(got)
        fewer += len(_listed(uniform)) - len(got)
    assert total > 100 and fewer > 100   # the margins do decide


def test_excess_is_the_largest_drift_beyond_a_margin():
    term, q = _close_patches()
    nv = term.vertex_dofs.size
    margins = np.linspace(0.001, 0.02, nv)
    term.update(q, max_displacement=margins)
    assert term.excess(q) == pytest.approx(-margins.min(), abs=1e-15)
    rng = np.random.default_rng(2)
    q2 = q + rng.normal(scale=0.01, size=q.size)
    ahead = rng.uniform(0.0, 0.01, nv)
    drift = np.linalg.norm((q2 - q)[term.vertex_dofs[:, None] + np.arange(3)], axis=1)
    assert term.excess(q2, ahead) == pytest.approx(np.max(drift + ahead - margins), rel=1e-12)
    assert term.excess(q2) == pytest.approx(np.max(drift - margins), rel=1e-12)
    assert term.moved(q2) == pytest.approx(drift.max(), rel=1e-12)
    q2[term.vertex_dofs[3] + 1] = np.nan
    assert term.excess(q2) == np.inf


def test_update_reports_changes_of_the_pair_set():
    term, q = _close_patches()
    v0, dofs0 = term.version, term.dofs
    assert not term.update(q) and term.version == v0 and term.dofs is dofs0
    q2 = q.copy()
    q2[2::3][9:] += 0.5   # lift the upper patch away: no pairs
    assert term.update(q2) and term.version == v0 + 1 and term.n_stencils == 0
    n = 3
    for hess in (np.zeros((n, 12, 12)), None):
        with pytest.raises(ValueError, match="refresh the assembly"):
            term.evaluate(q2, np.zeros(n), np.zeros((n, 12)), hess)


def test_bad_input_is_named():
    T = np.array([[0, 1, 2]])
    ok = dict(triangles=T, vertex_dofs=[0, 3, 6], stiffness=1.0, dhat=0.01)
    for change, match in (({"triangles": [[0, 1, 5]]}, r"triangle 0 \[0, 1, 5\].*out of range"),
                          ({"triangles": [[0, 1, 1]]}, "triangle 0 .*repeats"),
                          ({"edges": [[0, 1], [2, 2]]}, "edge 1 .*repeats"),
                          ({"vertex_dofs": [0, 2, 6]}, "vertices 0 and 1 share"),
                          ({"stiffness": [1.0, -1.0, 1.0]}, "stiffness of vertex 1"),
                          ({"dhat": 0.0}, "dhat"),
                          ({"triangles": [[0.0, 1.0, 2.0]]}, "integers")):
        with pytest.raises(ValueError, match=match):
            MeshContactTerm(**{**ok, **change})
    term = MeshContactTerm(**ok)
    term.update(np.zeros(9), max_displacement=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="vertex 1 has a non-finite"):
        term.update(np.array([0, 0, 0, np.nan, 0, 0, 0, 1, 0.0]), max_displacement=0.5)
    np.testing.assert_array_equal(term.margins, [0.1, 0.2, 0.3])   # nothing half-written
    assert term.margin == 0.3 and term.reach == pytest.approx(0.61, rel=1e-15)
    with pytest.raises(ValueError, match="max_displacement"):
        term.update(np.zeros(9), max_displacement=-1.0)
    with pytest.raises(ValueError, match=r"one per vertex \[3\], got shape \(2,\)"):
        term.update(np.zeros(9), max_displacement=[0.1, 0.1])
    for bad in (-0.1, np.nan, np.inf):
        with pytest.raises(ValueError, match="max_displacement of vertex 2 must be finite"):
            term.update(np.zeros(9), max_displacement=[0.1, 0.0, bad])
    for q in (np.zeros(8), np.zeros((3, 3))):
        with pytest.raises(ValueError, match="q must be a flat array of at least 9 entries"):
            term.update(q)


# ------------------------------------------------------------------------------ moves

TRIANGLE = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def _point_over_triangle(d0, dhat=0.01):
    """A point (vertex 0) ``d0`` above the triangle (1, 2, 3) in the plane z = 0, its pair
    listed."""
    term = MeshContactTerm(triangles=[[1, 2, 3]], vertex_dofs=[0, 3, 6, 9], stiffness=1.0,
                           dhat=dhat, edges=np.zeros((0, 2), dtype=int))
    q = np.concatenate([[0.2, 0.3, d0], TRIANGLE.reshape(-1)])
    term.update(q, max_displacement=0.1)
    assert term.n_stencils == 1
    return term, q


def test_move_limit_stops_a_point_short_of_a_triangle():
    """Additive CCD: a point driven through a triangle is stopped between 0.1 and 0.2 of its
    distance above it (MOVE_KEEP), also when the triangle comes up to meet it (the bound on
    the closing speed counts both sides); moves that do not close the distance pass whole."""
    d0 = 0.004
    term, q = _point_over_triangle(d0)
    dq = np.zeros(12)
    dq[2] = -3.0 * d0
    t = term.max_step(q, dq)
    assert 0.1 * d0 * (1 - 1e-9) <= d0 - 3.0 * d0 * t < 0.2 * d0
    dq[5::3] = 3.0 * d0                        # the triangle's vertices up as fast
    t = term.max_step(q, dq)
    assert 0.1 * d0 * (1 - 1e-9) <= d0 - 6.0 * d0 * t < 0.2 * d0
    away = np.zeros(12)
    away[2] = 10.0 * d0
    assert term.max_step(q, away) == 1.0
    short = np.zeros(12)
    short[2] = -0.95 * d0                      # ends short of the triangle: whole
    assert term.max_step(q, short) == 1.0
    # ends at 0.005 d0, though shorter than the distance: cut where the advancement reached
    # the kept 0.1 d0 (to rounding, the first or the second advancement)
    short[2] = -0.995 * d0
    assert 0.9 / 0.995 * (1 - 1e-9) <= term.max_step(q, short) <= 0.99 / 0.995 * (1 + 1e-9)
    # the four vertices moved alike (the distance does not change), however far
    assert term.max_step(q, np.tile([0.3, -0.2, 0.4], 4)) == 1.0
    # sliding at a constant height, 20 times the distance: advanced step by step to the end
    slide = np.zeros(12)
    slide[0] = 20.0 * d0
    assert term.max_step(q, slide) == 1.0
    # 200 times: cut where ACCD_MAX_STEPS conservative steps got to (safe, if short)
    slide[0] = 200.0 * d0
    assert 0.2 < term.max_step(q, slide) < 0.4
    # a point in the triangle's plane has no side to keep: nothing is cut
    q[2] = 0.0
    assert term.max_step(q, dq) == 1.0


def test_move_limit_stops_two_edges_short_of_each_other():
    d0 = 0.002
    term = MeshContactTerm(triangles=np.zeros((0, 3), dtype=int), vertex_dofs=[0, 3, 6, 9],
                           stiffness=1.0, dhat=0.01, edges=[[0, 1], [2, 3]])
    q = np.array([-1.0, 0.3, d0, 1.0, 0.3, d0, 0.2, -1.0, 0.0, 0.2, 1.0, 0.0])
    term.update(q, max_displacement=0.1)
    assert term.n_stencils == 1 and term.pair_kind[0] == EDGE_EDGE_PAIR
    dq = np.zeros(12)
    dq[[2, 5]] = -3.0 * d0                     # the upper edge down, the lower one up
    dq[[8, 11]] = d0
    t = term.max_step(q, dq)
    assert 0.1 * d0 * (1 - 1e-9) <= d0 - 4.0 * d0 * t < 0.2 * d0


# ------------------------------------------------------------------------------ dynamics

class _Patches:
    """Mass-spring patches with mesh contact: the ImplicitSystem of the dynamic tests."""

    def __init__(self, P, T, *, mass, spring, k, dhat):
        self.n_dofs = P.size
        self.mass = np.full(P.size, mass)
        e = surface_edges(T)
        rest = np.linalg.norm(P[e[:, 1]] - P[e[:, 0]], axis=1)
        self.edges, self.tris = e, T
        stretch = StretchTerm(dofs=np.hstack([3 * e[:, :1] + np.arange(3),
                                              3 * e[:, 1:] + np.arange(3)]),
                              rest_length=rest, stiffness=spring * rest)
        self.contact = MeshContactTerm(triangles=T, vertex_dofs=3 * np.arange(len(P)),
                                       stiffness=k, dhat=dhat)
        self.terms = [stretch, self.contact]
        self.block_start = np.array([0, P.size])

    def begin_step(self, q):
        pass

    def prepare(self, q):
        pass


def _crossings(x, edges, tris):
    """Number of (edge, triangle) pairs whose segment passes through the triangle."""
    with np.errstate(divide="ignore", invalid="ignore"):   # edges parallel to a triangle
        return _count_crossings(x, edges, tris)


def _count_crossings(x, edges, tris):
    a, b = x[edges[:, 0]][:, None], x[edges[:, 1]][:, None]
    t0, t1, t2 = (x[tris[:, i]][None] for i in range(3))
    e1, e2, d = t1 - t0, t2 - t0, b - a
    p = np.cross(d, e2)
    det = (e1 * p).sum(-1)
    s = a - t0
    u = (s * p).sum(-1) / det
    qv = np.cross(s, e1)
    v = (d * qv).sum(-1) / det
    t = (e2 * qv).sum(-1) / det
    hit = (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0) & (t <= 1)
    shared = (edges[:, None, :, None] == tris[None, :, None, :]).any(axis=(2, 3))
    return int((hit & ~shared).sum())


def _run(system, q, v, steps, h, gravity, fixed, check, damping=0.0):
    """Steps with the contact pairs rebuilt at each start; rebuilds the integrator when they
    change.  ``check(q, v, system)`` after every step.  Returns the largest step displacement
    over its bound, the Newton iterations of every step and the number of rebuilds."""
    settings = NewtonSettings(tolerance=1e-7, max_iterations=40, mass_damping=damping)
    f = np.zeros(q.size)
    f[2::3] = -gravity * system.mass[2::3]
    integ, worst, its, rebuilds = None, 0.0, [], 0
    for _ in range(steps):
        vmax = np.abs(v).max()
        bound = 2.0 * vmax * h + gravity * h * h + 1e-4
        if system.contact.update(q, max_displacement=bound) or integ is None:
            integ = ImplicitEuler(system, settings, linear_solver="sparse")
            rebuilds += 1
        q0 = q.copy()
        info = integ.step(q, v, q, v, h, f_ext=f, fixed=fixed)
        assert info.converged
        its.append(info.iterations)
        worst = max(worst, np.linalg.norm((q - q0).reshape(-1, 3), axis=1).max() / bound)
        check(q, v, system)
    return worst, its, rebuilds


def _heights_above(points, x, tris):
    """Height of each point above the plane of every triangle whose xy-projection holds it."""
    a, b, c = (x[tris[:, i]][None] for i in range(3))
    p = points[:, None]
    e1, e2, r = b - a, c - a, p - a
    det = e1[..., 0] * e2[..., 1] - e1[..., 1] * e2[..., 0]
    l1 = (r[..., 0] * e2[..., 1] - r[..., 1] * e2[..., 0]) / det
    l2 = (e1[..., 0] * r[..., 1] - e1[..., 1] * r[..., 0]) / det
    inside = (l1 >= 0) & (l2 >= 0) & (l1 + l2 <= 1)
    height = p[..., 2] - (a[..., 2] + l1 * e1[..., 2] + l2 * e2[..., 2])
    return height[inside].tolist()


def _min_pair_distance(system, q):
    """Smallest distance [m] of the pairs in contact, from their penalty energies."""
    c = system.contact
    n = c.n_stencils
    e = np.zeros(n)
    c.evaluate(q, e, np.zeros((n, 12)), None)
    if not n or e.max() == 0.0:
        return c.dhat
    return c.dhat - np.sqrt(2 * (e / c.pair_stiffness).max())


def _drop(steps=150, dhat=0.004, k=4000.0):
    """A 4 x 4 patch (5 cm edges, 10 g vertices) falling at 0.5 m/s onto a 5 x 5 patch pinned at
    its corners, under gravity, mass damping 5 /s, steps of 4 ms.  Returns what was measured."""
    nb = 5
    bottom = _patch(nb, 0.05)
    top = _patch(4, 0.05, origin=(0.03, 0.04, 0.04),
                 rotation=np.array([[1, 0, 0], [0, 0.995, -0.0998], [0, 0.0998, 0.995]]))
    P, T = _join(bottom, top)
    system = _Patches(P, T, mass=0.01, spring=2000.0, k=k, dhat=dhat)
    fixed = np.zeros(P.size, dtype=bool)
    for c in (0, nb - 1, nb * (nb - 1), nb * nb - 1):
        fixed[3 * c:3 * c + 3] = True
    q, v = P.reshape(-1).copy(), np.zeros(P.size)
    v[3 * nb * nb + 2::3] = -0.5
    nbv, bt = nb * nb, len(bottom[1])
    top_edges = system.edges[(system.edges >= nbv).all(1)]
    bot_edges = system.edges[(system.edges < nbv).all(1)]
    out = {"heights": [], "distances": [], "crossings": 0}

    def check(q, v, s):
        x = q.reshape(-1, 3)
        out["crossings"] += _crossings(x, top_edges, T[:bt]) + _crossings(x, bot_edges, T[bt:])
        out["heights"].extend(_heights_above(x[nbv:], x, T[:bt]))
        out["distances"].append(_min_pair_distance(s, q))

    out["worst"], out["iterations"], out["rebuilds"] = _run(system, q, v, steps, 0.004, 9.81,
                                                            fixed, check, damping=5.0)
    out["v_top"] = np.abs(v[3 * nbv:]).max()
    return out


def test_patch_dropped_on_a_pinned_patch_never_passes_through_and_rests_on_it():
    dhat = 0.004
    m = _drop(dhat=dhat)
    assert m["worst"] <= 1.0                  # the displacement bound held every step
    assert m["crossings"] == 0                # no edge through a triangle of the other patch
    assert min(m["heights"]) > 0.0            # never below the bottom patch
    d = m["distances"]
    assert 0.0 < min(d) < dhat                # in contact, never at zero distance
    assert m["v_top"] < 0.05                  # and at rest on it at the end [m/s]
    assert 0.5 * dhat < d[-1] < dhat


def test_free_patches_colliding_keep_their_total_momentum():
    P, T = _join(_patch(3, 0.05), _patch(3, 0.05, origin=(0.02, 0.03, 0.02)))
    system = _Patches(P, T, mass=0.01, spring=2000.0, k=4000.0, dhat=0.004)
    q, v = P.reshape(-1).copy(), np.zeros(P.size)
    v[27:] = np.tile([0.1, 0.0, -0.5], 9)
    p0 = (system.mass * v).reshape(-1, 3).sum(0)
    edges = system.edges
    lower, upper = edges[(edges < 9).all(1)], edges[(edges >= 9).all(1)]

    def check(q, v, s):
        x = q.reshape(-1, 3)
        assert _crossings(x, lower, T[8:]) == 0 and _crossings(x, upper, T[:8]) == 0

    _run(system, q, v, 60, 0.004, 0.0, None, check)
    p = (system.mass * v).reshape(-1, 3).sum(0)
    np.testing.assert_allclose(p, p0, atol=1e-12 * np.abs(p0).max())
    # the lower patch was hit: it took a share of the downward momentum (43 %)
    p_lower = (system.mass * v)[:27].reshape(-1, 3).sum(0)
    assert p_lower[2] < 0.3 * p0[2]


def _fast_drop(limits: bool):
    """A 3 x 3 patch (5 cm edges) falling at 3 m/s (12 mm per 4 ms step, three times the
    contact thickness) onto a 4 x 4 patch pinned at its corners; returns the edge-triangle
    crossings over 25 steps and the lowest height of a top vertex over the bottom patch."""
    nb = 4
    bottom = _patch(nb, 0.05)
    top = _patch(3, 0.05, origin=(0.03, 0.04, 0.03),
                 rotation=np.array([[1, 0, 0], [0, 0.995, -0.0998], [0, 0.0998, 0.995]]))
    P, T = _join(bottom, top)
    system = _Patches(P, T, mass=0.01, spring=2000.0, k=4000.0, dhat=0.004)
    system.contact.limits_step = limits
    fixed = np.zeros(P.size, dtype=bool)
    for c in (0, nb - 1, nb * (nb - 1), nb * nb - 1):
        fixed[3 * c:3 * c + 3] = True
    nbv, bt = nb * nb, len(bottom[1])
    q, v = P.reshape(-1).copy(), np.zeros(P.size)
    v[3 * nbv + 2::3] = -3.0
    top_edges = system.edges[(system.edges >= nbv).all(1)]
    bot_edges = system.edges[(system.edges < nbv).all(1)]
    out = {"crossings": 0, "heights": []}

    def check(q, v, s):
        x = q.reshape(-1, 3)
        out["crossings"] += _crossings(x, top_edges, T[:bt]) + _crossings(x, bot_edges, T[bt:])
        out["heights"].extend(_heights_above(x[nbv:], x, T[:bt]))

    _run(system, q, v, 25, 0.004, 9.81, fixed, check, damping=5.0)
    return out["crossings"], min(out["heights"])


def test_a_fast_patch_never_tunnels_through_a_pinned_one():
    # the penalty alone lets the inertial first iterate jump the patch across the other, and
    # then pushes it on through; limited moves (additive CCD) stop it above
    crossings, lowest = _fast_drop(limits=True)
    assert crossings == 0 and lowest > 0.0
    crossings, lowest = _fast_drop(limits=False)
    assert crossings > 0 and lowest < 0.0


def _sheets_timing(n=50, h=0.01, gap=0.0025):
    """Two wavy n x n sheets of edge h [m], gap [m] apart: update and evaluate times."""
    import time

    def sheet(z):
        P, T = _patch(n, h)
        P[:, 2] = z + 0.2 * h * np.sin(P[:, 0] / (3 * h)) * np.cos(P[:, 1] / (4 * h))
        return P, T

    P, T = _join(sheet(0.0), sheet(gap))
    term = MeshContactTerm(triangles=T, vertex_dofs=3 * np.arange(len(P)), stiffness=1e3,
                           dhat=0.003)
    q = P.reshape(-1)
    n_p = term.n_stencils
    best_u = best_e = np.inf
    for r in range(6):
        t0 = time.perf_counter()
        term.update(q + 1e-12 * r, max_displacement=0.001)
        best_u = min(best_u, time.perf_counter() - t0)
        n_p = term.n_stencils
        e, g, hs = np.zeros(n_p), np.zeros((n_p, 12)), np.zeros((n_p, 12, 12))
        t0 = time.perf_counter()
        term.evaluate(q, e, g, hs)
        best_e = min(best_e, time.perf_counter() - t0)
    print(f"two sheets: {len(P)} vertices, {len(T)} triangles, {len(term.edges)} edges; "
          f"{n_p} pairs ({int((term.pair_kind == POINT_TRIANGLE).sum())} point-triangle), "
          f"{term.n_active} in contact")
    print(f"update {best_u * 1e3:.1f} ms; evaluate with Hessians {best_e * 1e3:.1f} ms "
          f"({best_e / n_p * 1e9:.0f} ns per pair)  [best of 6]")


if __name__ == "__main__":   # the figures of docs/collision.md, "Mesh contact"
    m = _drop()
    print(f"drop: {len(m['iterations'])} steps, integrator rebuilt {m['rebuilds']} times, "
          f"Newton iterations mean {np.mean(m['iterations']):.2f} max {max(m['iterations'])}")
    print(f"lowest top vertex over the bottom patch {min(m['heights']) * 1e3:.3f} mm; "
          f"smallest pair distance {min(m['distances']) * 1e3:.3f} mm; at the end "
          f"{m['distances'][-1] * 1e3:.3f} mm, top speed {m['v_top']:.4f} m/s; crossings "
          f"{m['crossings']}; displacement / bound at most {m['worst']:.2f}")
    _sheets_timing()


def test_a_kept_hessian_buffer_matches_a_fresh_one_as_pairs_leave_contact():
    # pairs out of contact leave the kept buffer alone once zeroed: moving the upper patch
    # away and back, the buffer handed back each time equals one filled afresh (by a second
    # term on the same pairs), bit for bit, and hessian_stencils lists every stencil with a
    # non-zero Hessian (no more than were written) without reading it
    term, q0 = _close_patches()
    ref, _ = _close_patches()
    n = term.n_stencils
    e, g, kept = np.zeros(n), np.zeros((n, 12)), np.full((n, 12, 12), np.nan)
    upper = np.zeros(q0.size)
    upper[q0.size // 2:] = np.tile([0.0, 0.0, 1.0], q0.size // 6)
    counts = []
    for lift in (0.0, 0.02, 0.2, 0.0, 0.01, 0.0, 0.2):
        q = q0 + lift * upper
        term.evaluate(q, e, g, kept)
        fresh = np.full((n, 12, 12), np.nan)
        ref.evaluate(q, np.zeros(n), np.zeros((n, 12)), fresh)
        assert np.array_equal(kept, fresh)
        listed = term.hessian_stencils(kept)
        scanned = np.nonzero(np.abs(kept).reshape(n, -1).max(axis=1) > 0)[0]
        assert set(scanned) <= set(listed) and listed.size == term.n_active
        counts.append(term.n_active)
    assert counts[0] > 0 and counts[2] == 0 and counts[3] == counts[0]
    other = np.ones((n, 12, 12))                       # a buffer the term did not fill last
    assert np.array_equal(term.hessian_stencils(other), np.arange(n))
    term.evaluate(q0, e, g, other)                     # unknown contents: every pair zeroed
    assert np.array_equal(other, ref_fill(ref, q0))


def ref_fill(term, q):
    n = term.n_stencils
    h = np.full((n, 12, 12), np.nan)
    term.evaluate(q, np.zeros(n), np.zeros((n, 12)), h)
    return h


def test_each_pair_energy_is_the_penalty_of_its_distance():
    # every listed pair against the distance functions (no bounding-box shortcut): pairs
    # within dhat have the penalty 1/2 k (dhat - d)^2, the others none (edge pairs far from
    # parallel: unmollified)
    term, q = _close_patches()
    n = term.n_stencils
    e = np.zeros(n)
    term.evaluate(q, e, np.zeros((n, 12)), np.zeros((n, 12, 12)))
    x = q.reshape(-1, 3)
    checked = 0
    for s in range(n):
        v = x[term.pair_vertices[s]]
        if term.pair_kind[s] == POINT_TRIANGLE:
            d2 = point_triangle_distance(*v)[0]
        else:
            u, w = v[1] - v[0], v[3] - v[2]
            sin2 = np.sum(np.cross(u, w) ** 2) / (u @ u * (w @ w))
            if sin2 < 1e-3:
                continue
            d2 = edge_edge_distance(*v)[0]
        gap = max(term.dhat - np.sqrt(d2), 0.0)
        assert e[s] == pytest.approx(0.5 * term.pair_stiffness[s] * gap ** 2, rel=1e-9,
                                     abs=1e-15)
        checked += gap > 0
    assert checked >= 10
