"""Gmsh's tetrahedra of a closed surface, and vertex welding (strandlab.geometry.tetmesh)."""
import doctest
import re

import numpy as np
import pytest

import strandlab.geometry.tetmesh as tetmesh
from strandlab.geometry.tetmesh import surface_tets, weld_vertices

CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                 [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
QUADS = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]


def _cube_surface(n=4, size=0.1):
    """A cube's surface with each face cut into n x n squares of two triangles (outward)."""
    x, faces, index = [], [], {}

    def vid(p):
        key = tuple(np.round(p, 12))
        if key not in index:
            index[key] = len(x)
            x.append(p)
        return index[key]

    for q in QUADS:
        a, b, c, d = (CUBE[k] * size for k in q)
        grid = [[vid(a + (b - a) * u / n + (d - a) * v / n) for v in range(n + 1)]
                for u in range(n + 1)]
        for i in range(n):
            for j in range(n):
                v00, v10, v11, v01 = grid[i][j], grid[i + 1][j], grid[i + 1][j + 1], grid[i][j + 1]
                faces += [(v00, v10, v11), (v00, v11, v01)]
    return np.array(x), np.array(faces)


def _volumes(x, tets):
    e = [x[tets[:, k]] - x[tets[:, 0]] for k in (1, 2, 3)]
    return np.einsum("ij,ij->i", e[0], np.cross(e[1], e[2])) / 6


@pytest.mark.parametrize("flip", [False, True])
def test_a_closed_surface_is_filled_keeping_its_vertices(flip):
    x, f = _cube_surface()
    if flip:
        f = f[:, ::-1]
    new, tets = surface_tets(x, f)
    allx = np.concatenate([x, new])
    vol = _volumes(allx, tets)
    assert vol.min() > 0 and vol.sum() == pytest.approx(1e-3, rel=1e-12)
    assert len(new) > 0 and np.all(np.abs(new - 0.05) < 0.05)     # inside
    # the boundary faces of the tetrahedra are the surface's triangles
    assert _boundary(tets) == {tuple(sorted(t)) for t in f.tolist()}


def _boundary(tets):
    faces = np.concatenate([tets[:, [0, 1, 2]], tets[:, [0, 1, 3]], tets[:, [0, 2, 3]],
                            tets[:, [1, 2, 3]]])
    key, count = np.unique(np.sort(faces, axis=1), axis=0, return_counts=True)
    return {tuple(k) for k in key[count == 1]}


@pytest.mark.parametrize("before", [1, 40])
def test_vertices_beside_the_surface_are_left_alone(before):
    # the surface's vertices after those of other parts (Gmsh renumbers its nodes from 1
    # after meshing: the surface must keep its own)
    x, f = _cube_surface(n=2)
    others = np.random.default_rng(1).uniform(5.0, 6.0, (before, 3))
    x = np.concatenate([others, x])
    new, tets = surface_tets(x, f + before)
    allx = np.concatenate([x, new])
    assert tets.min() == before and tets.max() == len(x) + len(new) - 1
    assert _boundary(tets) == {tuple(sorted(t)) for t in (f + before).tolist()}
    assert _volumes(allx, tets).sum() == pytest.approx(1e-3, rel=1e-12)
    assert np.all(np.abs(new - 0.05) < 0.05)


def test_an_open_surface_is_refused():
    x, f = _cube_surface(n=2)
    # two triangles taken out: a hole of 4 edges (the square they made), one named
    e = np.sort(np.concatenate([f[:2, [0, 1]], f[:2, [1, 2]], f[:2, [2, 0]]]), axis=1)
    rim = {tuple(r) for r, c in zip(*np.unique(e, axis=0, return_counts=True)) if c == 1}
    with pytest.raises(ValueError, match=r"not closed: 4 of its edges .* the edge of vertices "
                                         r"(\d+) and (\d+)") as err:
        surface_tets(x, f[2:])
    a, b = (int(v) for v in re.search(r"vertices (\d+) and (\d+)", str(err.value)).groups())
    assert (a, b) in rim
    with pytest.raises(ValueError, match="not closed: 3 of its edges"):
        surface_tets(x, np.concatenate([f, f[:1]]))     # a triangle twice: edges on 3
    with pytest.raises(ValueError, match="out of range"):
        surface_tets(x, f + len(x))
    with pytest.raises(ValueError, match=r"vertices \[V, 3\] and triangles \[F, 3\]"):
        surface_tets(x, f[:, :2])


def test_welding_joins_chains_and_keeps_first_appearance():
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0.6e-6], [1, 0, 0], [0, 0, 1.2e-6], [2, 0, 0]])
    w, index = weld_vertices(x, 1e-6)
    assert index.tolist() == [0, 1, 0, 1, 0, 2]       # 0 - 2 - 4 a chain, 1 = 3
    assert np.array_equal(w, x[[0, 1, 5]])
    w, index = weld_vertices(x, 0.0)                  # exact duplicates only
    assert index.tolist() == [0, 1, 2, 1, 3, 4]
    with pytest.raises(ValueError, match="welding distance"):
        weld_vertices(x, -1.0)


def test_the_docstring_examples_hold():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for t in finder.find(tetmesh):
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 9


@pytest.mark.parametrize("scales, volume", [
    ((1.0,), 1e-3),
    ((1.0, 0.5), 1e-3 - 1.25e-4),                  # a hollow box: the inner piece a cavity
    ((1.0, 0.5, 0.2), 1e-3 - 1.25e-4 + 8e-6),      # ... with a core inside the cavity
])
def test_pieces_inside_pieces_are_cavities(scales, volume):
    x, f = _cube_surface(n=2)
    xs = np.concatenate([(x - 0.05) * s + 0.05 for s in scales])
    # the cavity's faces face into it, as a modeller's hollow object has them
    fs = np.concatenate([(f if k != 1 else f[:, ::-1]) + k * len(x)
                         for k in range(len(scales))])
    # a separate box beside them is filled on its own
    xs, fs = np.concatenate([xs, x + [0.5, 0.0, 0.0]]), np.concatenate([fs, f + len(xs)])
    new, tets = surface_tets(xs, fs)
    vol = _volumes(np.concatenate([xs, new]), tets)
    assert vol.min() > 0 and vol.sum() == pytest.approx(volume + 1e-3, rel=1e-12)
    assert _boundary(tets) == {tuple(sorted(t)) for t in fs.tolist()}


def test_the_enclosed_volume_is_what_is_filled():
    from strandlab.geometry.tetmesh import enclosed_volume

    x, f = _cube_surface(n=2)
    xs = np.concatenate([x, (x - 0.05) * 0.5 + 0.05, x + [0.5, 0.0, 0.0]])
    # orientations mixed: the outer box faces in, the cavity out
    fs = np.concatenate([f[:, ::-1], f + len(x), f + 2 * len(x)])
    new, tets = surface_tets(xs, fs)
    filled = _volumes(np.concatenate([xs, new]), tets).sum()
    assert enclosed_volume(xs, fs) == pytest.approx(filled, rel=1e-12)
    assert filled == pytest.approx(2e-3 - 1.25e-4, rel=1e-12)
