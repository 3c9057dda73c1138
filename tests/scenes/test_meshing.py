"""Procedural meshes of the rod/shell/solid scenes (strandlab.scenes.meshing): ellipsoids,
rotations between directions and paths of surface edges."""
import numpy as np
import pytest

from strandlab.scenes.meshing import ellipsoid_tets, rotation_between, surface_path
from strandlab.sim.simplicial import boundary_faces


@pytest.mark.parametrize("a, b", [((0, 0, 1), (1, 1, 0)), ((1, 2, 3), (-3, 0.5, 2)),
                                  ((0, 0, 1), (0, 0, -1)), ((1, 0, 0), (1, 0, 0))])
def test_rotation_between_turns_one_direction_onto_the_other(a, b):
    r = rotation_between(a, b)
    assert np.allclose(r @ r.T, np.eye(3), atol=1e-12) and np.linalg.det(r) == pytest.approx(1)
    assert np.allclose(r @ (np.asarray(a) / np.linalg.norm(a)),
                       np.asarray(b) / np.linalg.norm(b), atol=1e-12)


def test_ellipsoid_has_its_poles_and_positive_volume():
    radii = np.array([0.08, 0.035, 0.045])
    x, tets = ellipsoid_tets((0.1, 0.0, 0.0), radii, 0.04)
    e1, e2, e3 = (x[tets[:, k]] - x[tets[:, 0]] for k in (1, 2, 3))
    vol = np.einsum("ij,ij->i", e1, np.cross(e2, e3)) / 6.0
    assert vol.min() > 0
    # the volume approaches that of the ellipsoid from below (inscribed facets)
    assert 0.85 < vol.sum() / (4 / 3 * np.pi * radii.prod()) < 1.0
    for s in (1, -1):                         # the poles along z are vertices
        pole = np.array([0.1, 0.0, 0.0]) + s * radii[2] * np.eye(3)[2]
        assert np.linalg.norm(x - pole, axis=1).min() < 1e-12


def test_surface_path_follows_surface_edges_between_its_ends():
    x, tets = ellipsoid_tets((0.0, 0.0, 0.0), (0.08, 0.035, 0.045), 0.04)
    faces = boundary_faces(tets)
    surf = np.unique(faces)
    a = int(surf[np.argmin(np.linalg.norm(x[surf] - [-0.04, 0, 0.045], axis=1))])
    b = int(surf[np.argmin(np.linalg.norm(x[surf] - [0.02, 0, 0.045], axis=1))])
    path = surface_path(x, faces, a, b)
    assert path[0] == a and path[-1] == b and len(set(path.tolist())) == len(path)
    edges = {tuple(sorted(e)) for f in faces.tolist() for e in ((f[0], f[1]), (f[1], f[2]),
                                                               (f[2], f[0]))}
    assert all(tuple(sorted(e)) in edges for e in zip(path[:-1], path[1:]))
    # shortest: no longer than the straight chord by more than the surface's curvature allows
    length = np.linalg.norm(np.diff(x[path], axis=0), axis=1).sum()
    assert np.linalg.norm(x[b] - x[a]) <= length < 1.5 * np.linalg.norm(x[b] - x[a])
    with pytest.raises(ValueError, match="no path of surface edges"):
        surface_path(np.concatenate([x, [[1.0, 1.0, 1.0]]]), faces, a, len(x))
