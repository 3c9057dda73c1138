"""Collisions: analytic colliders and contacts within a strand."""
from .analytic import collide_point
from .self_contact import project_self_contacts, segment_closest

__all__ = ["collide_point", "project_self_contacts", "segment_closest"]
