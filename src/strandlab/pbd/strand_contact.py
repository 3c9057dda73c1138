"""Capsule contacts between strands for the position-based solver.

The strand edges become the capsules of :mod:`strandlab.collision.segment_contact` (radius: the
mean contact radius of the edge's two vertices), found once per substep by the uniform grid of
:mod:`strandlab.collision.grid` at the predicted positions and projected in every constraint
pass (see docs/pbd.md, "Contacts between strands").
"""
from __future__ import annotations

import numpy as np

from ..collision.grid import make_grid, voxel_needed
from ..collision.segment_contact import SegmentSet, make_segment_set
from .model import PBDModel

__all__ = ["VOXEL_STRETCH", "contact_segments", "contact_voxel", "ContactBuffers"]

#: The voxel is sized for edges stretched up to this factor of their rest length; a substep
#: whose predicted edges are longer searches with a voxel that fits them.
VOXEL_STRETCH = 1.1


def contact_segments(m: PBDModel, *, enabled: bool, self_skip: np.ndarray | None) -> SegmentSet:
    """The edges of ``m`` as capsules (none when not ``enabled``).  ``self_skip`` [S]: contacts
    within each strand too, ignoring neighbours within that many edges; ``None``: between
    strands only."""
    if not enabled:
        return make_segment_set(np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0,
                                np.zeros(0, np.int64), m.n_points)
    strand = np.repeat(np.arange(m.n_strands), np.diff(m.strand_edge_start))
    radius = 0.5 * (m.collide_radius[m.edge_p0] + m.collide_radius[m.edge_p1])
    skip = -1 if self_skip is None else self_skip
    return make_segment_set(m.edge_p0, m.edge_p1, radius, strand, m.n_points,
                            closed=m.strand_closed, skip=skip)


def contact_voxel(m: PBDModel, segs: SegmentSet, margin: float) -> float:
    """Voxel side [m]: the longest rest edge times :data:`VOXEL_STRETCH`, plus twice the largest
    radius and the margin (so that the 27-voxel search is exact, see collision/grid.py)."""
    if not len(segs.a):
        return 1.0
    rest = VOXEL_STRETCH * float(np.max(m.edge_rest_length))
    return max(rest + 2.0 * segs.max_radius + margin, voxel_needed(m.x0, segs, margin)[0])


class ContactBuffers:
    """The grid, pair buffer, status and mass scale of the contacts between strands."""

    def __init__(self, segs: SegmentSet, n_points: int):
        self.grid = make_grid(segs)
        self.pairs = np.zeros((max(4 * len(segs.a), 1), 2), dtype=np.int64)
        self.status = np.zeros(4, dtype=np.int64)
        self.mass_scale = np.ones(n_points)

    def grow(self, needed: int) -> None:
        """A pair buffer for at least ``needed`` pairs (twice as many)."""
        self.pairs = np.zeros((2 * needed, 2), dtype=np.int64)
