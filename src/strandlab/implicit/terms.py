"""Energy terms summed over stencils: what the implicit integrator assembles.

A term is a sum of one energy over many small stencils (an edge, a vertex with its two edges, a
triangle, a tetrahedron, a joint).  Each stencil reads ``k`` entries of the generalized
coordinates ``q`` (global indices ``dofs[s, :]``) and contributes an energy, a gradient of length
``k`` and a symmetric ``k x k`` Hessian.  The integrator (:mod:`strandlab.implicit.integrator`)
owns the per-stencil buffers, asks each term to fill them, and scatters them into the global
gradient and the linear solver's matrix; it knows nothing else of the model.  Shells, solids and
joint energies are added later as further terms, without touching the integrator.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

__all__ = ["StencilTerm", "check_dofs"]


def check_dofs(name: str, dofs: np.ndarray, n_dofs: int | None = None) -> np.ndarray:
    """``dofs`` as a C-contiguous int64 array [n, k]; ValueError naming the term otherwise."""
    d = np.ascontiguousarray(dofs, dtype=np.int64)
    if d.ndim != 2:
        raise ValueError(f"term {name!r}: dofs must have shape [n_stencils, k], got {d.shape}")
    if d.size and d.min() < 0:
        raise ValueError(f"term {name!r}: negative DOF index {int(d.min())}")
    if n_dofs is not None and d.size and d.max() >= n_dofs:
        raise ValueError(f"term {name!r}: DOF index {int(d.max())} out of range (n_dofs = "
                         f"{n_dofs})")
    return d


class StencilTerm(ABC):
    """One energy summed over stencils of ``k`` generalized coordinates.

    Attributes
    ----------
    name : str
        Shown in messages and statistics.
    dofs : int64 [n_stencils, k]
        Global index in ``q`` of each slot of each stencil.
    """

    name: str = "term"
    dofs: np.ndarray
    dynamic: bool = False
    """True for a term whose stencil set changes between steps (contact pairs): it assigns a new
    ``dofs`` array when it changes, :meth:`~.assembly.Assembly.refresh` re-sizes its buffers,
    and the sparse solver keeps its Hessians out of the fixed matrix pattern."""

    limits_step: bool = False
    """True for a term that bounds how far one move of an iterate may go (:meth:`max_step`):
    the integrator then asks it before every Newton move and the inertial first iterate."""

    reads_base: bool = False
    """True for a term whose values at ``q`` depend on the base the system re-bases in
    ``accept`` (e.g. derivatives of a transport from the base's reference frames), not only on
    ``q``: the integrator evaluates it again after each ``accept``."""

    def max_step(self, q: np.ndarray, dq: np.ndarray) -> float:
        """The largest ``alpha`` in (0, 1] for which the straight move from ``q`` to
        ``q + alpha dq`` [n_dofs] is admissible (e.g. no contact pair's surfaces pass through
        each other on the way); read only when :attr:`limits_step` is True.  The default
        admits the whole move."""
        return 1.0

    def hessian_stencils(self, hess: np.ndarray) -> np.ndarray:
        """Indices (int64, ascending) of the stencils whose Hessian in ``hess`` [n, k, k] (this
        term's buffer as its last evaluation with the Hessian left it) may be non-zero: the
        stencils the sparse solver adds for a :attr:`dynamic` term.  The default scans the
        buffer; a term that knows (contact pairs out of contact) may answer without reading
        it."""
        from .csr import nonzero_stencils

        return nonzero_stencils(hess)

    @property
    def n_stencils(self) -> int:
        return int(self.dofs.shape[0])

    @property
    def stencil_size(self) -> int:
        return int(self.dofs.shape[1])

    @abstractmethod
    def evaluate(self, q: np.ndarray, energy_out: np.ndarray, grad_out: np.ndarray,
                 hess_out: np.ndarray | None) -> None:
        """Fill the per-stencil energy [n] [J], gradient [n, k] and (unless ``hess_out`` is
        None) Hessian [n, k, k] at ``q`` [n_dofs]; overwrite, do not accumulate."""
