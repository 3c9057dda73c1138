"""Sphere contacts of particle clusters (collision/point_contact.py): the hashed grid finds
exactly the brute-force pairs, the projection and the velocity pass keep momentum, contacts
are inelastic with Coulomb friction."""
import numpy as np

from strandlab.collision.grid import make_point_grid
from strandlab.collision.point_contact import (
    find_point_pairs,
    find_point_segment_pairs,
    make_point_set,
    point_contact_velocities,
    point_pair_normals,
    point_segment_normals,
    point_voxel_needed,
    project_point_pairs,
    project_point_segment_pairs,
)
from strandlab.collision.segment_contact import make_segment_set


def _random_case(rng, n_pts=60, n_seg=12, box=0.1):
    """Spheres (groups of 10) at random in a box of ``box`` [m] and two strands of 6 segments each;
    returns (x, point set, segment set, skip groups)."""
    n_strand_pts = n_seg + 2
    x = np.vstack([rng.uniform(0.0, box, (n_pts, 3)),
                   np.cumsum(rng.normal(0.0, 0.1 * box, (n_strand_pts, 3)), axis=0) + 0.5 * box])
    pts = np.arange(n_pts)
    ps = make_point_set(pts, rng.uniform(0.002, 0.006, n_pts), pts // 10, len(x))
    a = np.r_[np.arange(6), np.arange(7, 13)] + n_pts
    segs = make_segment_set(a, a + 1, 0.003, np.repeat([0, 1], 6), len(x))
    skip = np.full((n_seg, 2), -1, np.int64)
    skip[:2, 0] = 1                        # the first strand's first end tied to group 1
    skip[10:, 1] = 4                       # the second strand's last end tied to group 4
    return x, ps, segs, skip


def test_grid_finds_exactly_the_brute_force_sphere_and_capsule_pairs():
    rng = np.random.default_rng(3)
    for _ in range(30):
        x, ps, segs, skip = _random_case(rng)
        margin = rng.uniform(0.0, 0.004)
        torn = np.zeros(len(segs.a), bool)
        voxel = point_voxel_needed(x, ps, segs, margin, torn)
        grid = make_point_grid(len(ps.points), len(x))
        out = np.zeros((4000, 2), np.int64)
        n, bad = find_point_pairs(x, ps, voxel, margin, grid, out)
        assert bad == -1
        found = {tuple(p) for p in out[:n]}
        want = set()
        for k in range(len(ps.points)):
            for m in range(k + 1, len(ps.points)):
                d = np.linalg.norm(x[ps.points[k]] - x[ps.points[m]])
                if ps.group[k] != ps.group[m] and d < ps.radius[k] + ps.radius[m] + margin:
                    want.add((k, m))
        assert found == want and len(found) == n
        k_ps = find_point_segment_pairs(x, ps, segs, skip, voxel, margin, grid, out)
        found = {tuple(p) for p in out[:k_ps]}
        want = set()
        for k in range(len(ps.points)):
            for m in range(len(segs.a)):
                if ps.group[k] in skip[m]:
                    continue
                p, a, b = x[ps.points[k]], x[segs.a[m]], x[segs.b[m]]
                t = np.clip(np.dot(p - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
                if np.linalg.norm(p - a - t * (b - a)) < ps.radius[k] + segs.radius[m] + margin:
                    want.add((k, m))
        assert found == want and len(found) == k_ps


def test_voxel_leaves_out_torn_segments():
    rng = np.random.default_rng(0)
    x, ps, segs, _ = _random_case(rng)
    torn = np.zeros(len(segs.a), bool)
    base = point_voxel_needed(x, ps, segs, 0.0, torn)
    x[segs.b[3]] += 5.0                     # segment 3 (and 4) torn and pulled 5 m apart
    torn[3:5] = True
    assert point_voxel_needed(x, ps, segs, 0.0, torn) < base + 0.05
    torn[4] = False
    assert point_voxel_needed(x, ps, segs, 0.0, torn) > 2.5


def _projected(rng):
    x, ps, segs, skip = _random_case(rng, box=0.05)
    w = rng.uniform(0.5, 2.0, len(x))
    torn = np.zeros(len(segs.a), bool)
    voxel = point_voxel_needed(x, ps, segs, 0.0, torn)
    grid = make_point_grid(len(ps.points), len(x))
    pp, psg = np.zeros((4000, 2), np.int64), np.zeros((4000, 2), np.int64)
    n_pp = find_point_pairs(x, ps, voxel, 0.0, grid, pp)[0]
    n_ps = find_point_segment_pairs(x, ps, segs, skip, voxel, 0.0, grid, psg)
    pn, sn = np.zeros((n_pp, 3)), np.zeros((n_ps, 3))
    point_pair_normals(x, ps, pp, n_pp, pn)
    point_segment_normals(x, ps, segs, psg, n_ps, sn)
    return x, w, ps, segs, pp, psg, n_pp, n_ps, pn, sn


def test_projection_keeps_momentum_and_separates_the_pairs():
    rng = np.random.default_rng(1)
    x, w, ps, segs, pp, psg, n_pp, n_ps, pn, sn = _projected(rng)
    assert n_pp > 5 and n_ps > 2
    x0 = x.copy()
    scale = np.ones(len(x))
    lp, ls = np.zeros(n_pp), np.zeros(n_ps)
    for _ in range(200):
        project_point_pairs(x, w, ps, pp, n_pp, pn, scale, 3.0, lp)
        project_point_segment_pairs(x, w, ps, segs, psg, n_ps, sn, scale, 3.0, ls)
    mom = ((x - x0) / w[:, None]).sum(axis=0)
    assert np.abs(mom).max() < 1e-12
    assert (lp >= 0).all() and (ls >= 0).all() and lp.max() > 0
    # every sphere pair at least its contact distance apart along its normal
    p, q = ps.points[pp[:n_pp, 0]], ps.points[pp[:n_pp, 1]]
    gap = ((x[p] - x[q]) * pn).sum(axis=1) - ps.radius[pp[:n_pp, 0]] - ps.radius[pp[:n_pp, 1]]
    assert gap.min() > -1e-6
    touched = np.unique(np.r_[p[lp > 0], q[lp > 0]])
    assert np.all(scale[touched] == 3.0)


def test_velocity_pass_is_inelastic_with_coulomb_friction_and_keeps_momentum():
    # two spheres pushed apart along z (the push's impulse lam / h), approaching and sliding
    x = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.019]])
    ps = make_point_set(np.arange(2), 0.01, np.arange(2), 2)
    segs = make_segment_set(np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0,
                            np.zeros(0, np.int64), 2)
    pp = np.array([[1, 0]])
    normal = np.array([[0.0, 0.0, 1.0]])
    w = np.array([1.0, 0.5])
    none = np.zeros((0, 2), np.int64)
    h = 0.01
    for lam, friction, v_rel_t in ((1e-3, 0.5, 0.01), (1e-5, 0.5, 1.0), (1e-3, 0.0, 1.0)):
        v = np.array([[0.0, 0.0, 0.0], [v_rel_t, 0.0, 0.3]])   # separating at 0.3 m/s
        p0 = (v / w[:, None]).sum(axis=0)
        point_contact_velocities(x, v, w, ps, segs, pp, normal, np.array([lam]), 1, none,
                                 np.zeros((0, 3)), np.zeros(0), 0, friction, h)
        u = v[1] - v[0]
        assert abs(u[2]) < 1e-12                               # no separating velocity left
        assert np.abs((v / w[:, None]).sum(axis=0) - p0).max() < 1e-12
        # friction: an impulse of at most friction lam / h; it stops a slow slide
        jt = abs(v_rel_t - u[0]) / w.sum()
        if friction * lam / h >= v_rel_t / w.sum():
            assert abs(u[0]) < 1e-12
        else:
            assert abs(jt - friction * lam / h) < 1e-12
    # an approaching pair is left alone in the normal direction
    v = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -0.3]])
    point_contact_velocities(x, v, w, ps, segs, pp, normal, np.array([1e-3]), 1, none,
                             np.zeros((0, 3)), np.zeros(0), 0, 0.5, h)
    assert v[1, 2] == -0.3


def test_velocity_pass_on_a_segment_stops_the_separation_at_the_closest_point():
    # a sphere above a segment at 30 % of its length, pushed off it and leaving at 0.3 m/s
    x = np.array([[0.006, 0.0, 0.012], [0.0, 0.0, 0.0], [0.02, 0.0, 0.0]])
    ps = make_point_set(np.array([0]), 0.01, np.array([0]), 3)
    segs = make_segment_set(np.array([1]), np.array([2]), 0.003, np.array([0]), 3)
    w = np.array([1.0, 2.0, 0.5])
    v = np.array([[0.0, 0.0, 0.3], [0.0, 0.0, -0.1], [0.0, 0.0, 0.0]])
    p0 = (v / w[:, None]).sum(axis=0)
    point_contact_velocities(x, v, w, ps, segs, np.zeros((0, 2), np.int64), np.zeros((0, 3)),
                             np.zeros(0), 0, np.array([[0, 0]]), np.array([[0.0, 0.0, 1.0]]),
                             np.array([1e-3]), 1, 0.5, 0.01)
    assert abs(v[0, 2] - (0.7 * v[1, 2] + 0.3 * v[2, 2])) < 1e-12
    assert np.abs((v / w[:, None]).sum(axis=0) - p0).max() < 1e-12
