"""Discrete elastic rods: per-stencil energies with their exact derivatives, the reference-frame
kernels (time-parallel transport, reference twist, material frames) and the energy terms for the
implicit integrator.

Shared by every implicit model that has rods: the DER solver (:mod:`strandlab.der`) and the
mixed rod/shell/solid model (:mod:`strandlab.mixed`).  This package knows no scene and no solver.
"""
from .terms import BendTerm, BendTwistTerm, StretchTerm, TwistTerm

__all__ = ["StretchTerm", "BendTerm", "TwistTerm", "BendTwistTerm"]
