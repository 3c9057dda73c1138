"""Mesh bookkeeping of the mixed model's elements: the hinges of manifold and non-manifold
triangle sets, lumped vertex masses, the material constants and the standard DOF layout."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from strandlab.mixed import elements as El
from strandlab.mixed.shell import rest_dihedral_angles


def _check_hinge_orientation(tri, hinges, pairs):
    """Each hinge's edge x0 -> x1 is traversed so by its first triangle; x2, x3 are the two
    triangles' third vertices."""
    for (x0, x1, x2, x3), (ta, tb) in zip(hinges, pairs):
        a = list(tri[ta])
        k = a.index(x0)
        assert a[(k + 1) % 3] == x1 and a[(k + 2) % 3] == x2
        assert sorted(tri[tb]) == sorted((x0, x1, x3))


def test_hinges_of_a_closed_surface_and_a_strip():
    # tetrahedron surface, outward oriented: every edge is a hinge, convex: all angles > 0
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    tri = np.array([[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]])
    hinges, pairs = El.triangle_hinges(tri)
    assert len(hinges) == 6
    assert {tuple(sorted(h[:2])) for h in hinges} == set(itertools.combinations(range(4), 2))
    _check_hinge_orientation(tri, hinges, pairs)
    theta = rest_dihedral_angles(x, hinges)
    assert np.all(theta > 0)                 # a convex body folds away from its normals
    # a flat, consistently oriented strip: interior edges only, angles 0
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 0, 0]], float)
    tri = np.array([[0, 1, 2], [1, 3, 2], [1, 4, 3]])
    hinges, pairs = El.triangle_hinges(tri)
    assert sorted(map(tuple, pairs)) == [(0, 1), (1, 2)]
    _check_hinge_orientation(tri, hinges, pairs)
    assert np.abs(rest_dihedral_angles(x, hinges)).max() < 1e-15


def test_non_manifold_fan_gives_one_hinge_per_pair():
    """Four triangles on edge (0, 1) give six hinges; a pair sharing nothing gives none."""
    tri = np.array([[0, 1, 2], [1, 0, 3], [0, 1, 4], [5, 0, 1], [6, 7, 8]])
    hinges, pairs = El.triangle_hinges(tri)
    assert sorted(map(tuple, pairs)) == list(itertools.combinations(range(4), 2))
    _check_hinge_orientation(tri, hinges, pairs)
    assert El.triangle_hinges(np.zeros((0, 3), int))[0].shape == (0, 4)


def test_lumped_masses():
    x = np.array([[0, 0, 0], [2, 0, 0], [0, 1, 0], [0, 0, 3], [5, 5, 5]], float)
    tri = np.array([[0, 1, 2], [0, 1, 3]])
    tet = np.array([[0, 1, 2, 3]])
    rho_s, t, rho_v = 900.0, np.array([1e-3, 2e-3]), 1100.0
    m = El.lumped_masses(x, triangles=tri, thickness=t, shell_density=rho_s, tetrahedra=tet,
                         solid_density=rho_v)
    a = np.array([1.0, 3.0])                   # areas of the two triangles
    vol = 2 * 1 * 3 / 6
    want = np.zeros(5)
    for k, tr in enumerate(tri):
        want[tr] += rho_s * t[k] * a[k] / 3
    want[tet[0]] += rho_v * vol / 4
    assert np.allclose(m, want, rtol=1e-14, atol=0)
    assert m.sum() == pytest.approx(rho_s * (t * a).sum() + rho_v * vol, rel=1e-14)
    assert m[4] == 0.0
    with pytest.raises(ValueError, match="shell_density of triangle 1"):
        El.lumped_masses(x, triangles=tri, thickness=1e-3, shell_density=[1.0, -1.0])
    with pytest.raises(ValueError, match="need solid_density"):
        El.lumped_masses(x, tetrahedra=tet)
    with pytest.raises(ValueError, match="tetrahedron 0"):
        El.lumped_masses(x, tetrahedra=[[0, 1, 2, 9]], solid_density=1.0)


def test_material_constants_and_layout():
    mu, lam = El.lame(1.0e6, 0.25)
    assert mu == pytest.approx(4.0e5) and lam == pytest.approx(4.0e5)
    assert El.plane_stress_lambda(1.0e6, 0.25) == pytest.approx(1.0e6 * 0.25 / 0.9375)
    assert El.bending_stiffness(1.0e6, 0.25, 0.01) == pytest.approx(1e6 * 1e-6 / (12 * 0.9375))
    d = El.vertex_dofs([[2, 0, 5]])
    assert d.tolist() == [[6, 7, 8, 0, 1, 2, 15, 16, 17]]


def test_empty_element_sets_build_and_evaluate():
    from strandlab.mixed.shell import ShellBendingTerm, ShellMembraneTerm
    from strandlab.mixed.solid import SolidTerm

    x = np.zeros((3, 3))
    mat = dict(rest_positions=x, young=1.0, poisson=0.3)
    for term in (ShellMembraneTerm(triangles=np.zeros((0, 3), int), thickness=1.0, **mat),
                 ShellBendingTerm(hinges=np.zeros((0, 4), int), thickness=1.0, **mat),
                 SolidTerm(tetrahedra=np.zeros((0, 4), int), **mat)):
        k = term.dofs.shape[1]
        assert term.dofs.shape == (0, k)
        term.evaluate(np.zeros(9), np.zeros(0), np.zeros((0, k)), np.zeros((0, k, k)))
        assert term.n_degenerate == 0
