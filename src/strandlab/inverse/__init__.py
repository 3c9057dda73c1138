"""Inverse problems on strand models.  :mod:`.sagfree`: the sag-free rest-shape optimizer of
discrete elastic rods (Takahashi and Batty), in penalty (the paper's) and exact-equilibrium
modes (``docs/sagfree.md``).  It uses the public statics of :mod:`strandlab.der`
(:mod:`strandlab.der.statics`); no solver imports this package."""
from .sagfree import (
    STATUSES,
    SagFreeResult,
    StrandReport,
    apply_rest_shape,
    optimize_rest_shape,
)
from .settings import SagFreeSettings

__all__ = ["SagFreeSettings", "SagFreeResult", "StrandReport", "optimize_rest_shape",
           "apply_rest_shape", "STATUSES"]
