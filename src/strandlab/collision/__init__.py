"""Collisions shared by every solver: analytic colliders, contacts within a strand, and capsule
contacts between segments of any strands found by a uniform grid (docs/collision.md)."""
from .analytic import collide_point
from .grid import SEARCH_7, SEARCH_27, SegmentGrid, find_pairs, make_grid, voxel_needed
from .segment_contact import (
    HEAVY,
    SegmentSet,
    chain_segments,
    make_segment_set,
    project_pairs,
    reset_mass_scale,
)
from .self_contact import project_self_contacts, segment_closest

__all__ = ["collide_point", "project_self_contacts", "segment_closest", "SEARCH_7", "SEARCH_27",
           "SegmentGrid", "find_pairs", "make_grid", "voxel_needed", "HEAVY", "SegmentSet",
           "chain_segments", "make_segment_set", "project_pairs", "reset_mass_scale"]
