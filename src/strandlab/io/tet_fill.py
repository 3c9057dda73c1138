"""Tetrahedra a file already has, for the solids it describes by their surfaces.

A USD stage may hold a ``TetMesh`` prim whose tetrahedra fill a solid that one of its ``Mesh``
prims (or a face subset of one) bounds: strandlab's own export writes each rod/shell/solid
mesh's solid boundary faces into its ``Mesh`` and the tetrahedra into a ``TetMesh`` at the
same points.  :class:`TetFills` holds the pieces of such tetrahedra (tetrahedra joined through
their faces) and gives a solid part whose closed surface is exactly the boundary of some of
them those tetrahedra, instead of a new filling by Gmsh: the solid reads back as it was
simulated, its interior vertices included.
"""
from __future__ import annotations

import numpy as np

from ..geometry.tetmesh import shared_pieces
from ..sim.simplicial import TET_FACES, boundary_faces

__all__ = ["TetFills", "tet_pieces", "off_surface"]



def tet_pieces(tets) -> np.ndarray:
    """The piece of each tetrahedron of ``tets`` [K, 4] (tetrahedra sharing a face are in one
    piece; sharing only an edge or a vertex is not enough), numbered from 0 in order of first
    appearance, int [K].

    >>> tet_pieces([[0, 1, 2, 3], [1, 2, 3, 4], [4, 5, 6, 7], [3, 4, 8, 9]]).tolist()
    [0, 0, 1, 2]
    """
    t = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
    faces = np.sort(t[:, TET_FACES].reshape(-1, 3), axis=1)
    _, face = np.unique(faces, axis=0, return_inverse=True)
    return shared_pieces(face.reshape(-1, 4))


def _face_set(triangles) -> frozenset:
    return frozenset(map(tuple, np.sort(np.asarray(triangles, dtype=np.int64).reshape(-1, 3),
                                        axis=1).tolist()))


def off_surface(triangles, tets) -> np.ndarray:
    """The rows of ``triangles`` [F, 3] that are not faces of the boundary of ``tets``
    [K, 4] (whichever way round), int [n].

    >>> off_surface([[0, 2, 1], [1, 2, 4]], [[0, 1, 2, 3]]).tolist()
    [1]
    """
    bound = _face_set(boundary_faces(np.asarray(tets, dtype=np.int64).reshape(-1, 4)))
    tri = np.sort(np.asarray(triangles, dtype=np.int64).reshape(-1, 3), axis=1)
    return np.array([k for k, f in enumerate(map(tuple, tri.tolist())) if f not in bound],
                    dtype=np.int64)


class TetFills:
    """The pieces (:func:`tet_pieces`) of tetrahedral parts no material names, each filling
    at most one solid part.

    >>> fills = TetFills()
    >>> fills.add("tets", [[0, 1, 2, 3]])
    >>> fills.take([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).tolist()
    [[0, 1, 2, 3]]
    >>> fills.take([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]) is None     # used
    True
    """

    def __init__(self):
        self._pieces: list = []     # [boundary face set, tets [k, 4], part key, used]

    def add(self, key, tets) -> None:
        """The pieces of the tetrahedra ``tets`` [K, 4] (welded vertex indices) of the part
        ``key``."""
        t = np.asarray(tets, dtype=np.int64).reshape(-1, 4)
        piece = tet_pieces(t)
        for k in range(int(piece.max()) + 1 if len(t) else 0):
            tp = t[piece == k]
            self._pieces.append([_face_set(boundary_faces(tp)), tp, key, False])

    def _match(self, triangles):
        """The unused pieces whose boundaries together are exactly ``triangles``, or None."""
        want = _face_set(triangles)
        if len(want) != len(triangles):
            return None
        hit = [p for p in self._pieces if not p[3] and p[0] <= want]
        if not hit or frozenset().union(*(p[0] for p in hit)) != want:
            return None
        for p in hit:
            p[3] = True
        return hit

    def take(self, triangles):
        """The tetrahedra [K, 4] of the unused pieces whose boundaries together are exactly the
        closed surface ``triangles`` [F, 3] (each face once), marked used; None when no such
        pieces are held (the surface is then filled anew)."""
        hit = self._match(triangles)
        return None if hit is None else np.concatenate([p[1] for p in hit])

    def take_parts(self, triangles):
        """As :meth:`take`, but the keys of the parts the pieces come from (each once, in
        order) instead of their tetrahedra."""
        hit = self._match(triangles)
        return None if hit is None else list(dict.fromkeys(p[2] for p in hit))

    def unused(self) -> list:
        """The keys of the parts with a piece that filled nothing, in order, each once."""
        return list(dict.fromkeys(p[2] for p in self._pieces if not p[3]))
