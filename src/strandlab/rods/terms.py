"""Energy terms of discrete elastic rods for the implicit integrator (:class:`StencilTerm`).

- :class:`StretchTerm`: one stencil per edge, ``E_s = 1/2 k_s lbar (|e|/lbar - 1)^2``, k_s [N];
- :class:`BendTerm`: one stencil per inner vertex,
  ``E_b = 1/(4 ltilde) sum_j [k1 (kappa_j,1 - kbar_j,1)^2 + k2 (kappa_j,2 - kbar_j,2)^2]``,
  k1, k2 [N m^2];
- :class:`TwistTerm`: same stencils, ``E_t = k_t / (2 ltilde) (tau - taubar)^2``, k_t [N m^2];
- :class:`BendTwistTerm`: bending plus twisting in one pass (the fast path for large models).

Energies in J; formulas, the material frames and the exactness of the derivatives are described
in :mod:`strandlab.rods.energies`.  The bend and twist terms hold references to the model's
reference frames ``a1``, ``a2`` [E, 3] and reference twist ``m_ref`` [S] (not copies): the model
keeps them transported to the configuration ``q`` before each :meth:`evaluate`
(:func:`strandlab.rods.kernels.transport_frames`, :func:`~strandlab.rods.kernels.reference_twists`).

A degenerate stencil (an edge of zero length, or antiparallel edges) gets energy +inf and a zero
gradient and Hessian, so that a line search backs off; ``n_degenerate`` and
``first_degenerate`` tell which after each evaluation.
"""
from __future__ import annotations

import numpy as np

from ..implicit.assembly import use_parallel
from ..implicit.terms import StencilTerm, check_dofs
from . import kernels as _k

__all__ = ["StretchTerm", "BendTerm", "TwistTerm", "BendTwistTerm"]


#: Serial cost of one stencil, with and without the Hessian, in the work units of
#: :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK` (about 2 ns each on the development
#: machine): the kernels run serially below that much work (a parallel region costs 20-30 us
#: idle, more on a busy machine).
STRETCH_WORK = (40, 10)
BEND_TWIST_WORK = (250, 80)


def _parallel(n: int, per_stencil: tuple, want_hess: bool) -> bool:
    return use_parallel(2, n * per_stencil[0 if want_hess else 1])


def _per_stencil(term: str, what: str, values, n: int, *, cols: int | None = None,
                 positive: bool = False) -> np.ndarray:
    """``values`` as float64 [n] (or [n, cols]), finite (and > 0 if ``positive``); ValueError
    naming the term, the quantity and the first offending stencil otherwise."""
    a = np.ascontiguousarray(values, dtype=np.float64)
    shape = (n,) if cols is None else (n, cols)
    if a.shape != shape:
        raise ValueError(f"term {term!r}: {what} must have shape {shape}, got {a.shape}")
    bad = ~np.isfinite(a) if not positive else ~(np.isfinite(a) & (a > 0.0))
    if bad.any():
        s = int(np.argwhere(bad)[0][0])
        need = "finite and > 0" if positive else "finite"
        raise ValueError(f"term {term!r}: {what} of stencil {s} must be {need}, got "
                         f"{a[s].tolist()}")
    return a


def _shared(term: str, what: str, arr, shape: tuple) -> np.ndarray:
    """A model array kept by reference: float64, C-contiguous, of ``shape`` (a copy would not
    see the model's in-place updates, so none is made)."""
    if not isinstance(arr, np.ndarray) or arr.dtype != np.float64 or not arr.flags.c_contiguous:
        raise TypeError(f"term {term!r}: {what} must be a C-contiguous float64 array (it is "
                        "shared with the model, not copied)")
    if arr.shape != shape:
        raise ValueError(f"term {term!r}: {what} must have shape {shape}, got {arr.shape}")
    return arr


def _edges(term: str, edges, n: int, n_edges: int) -> np.ndarray:
    e = np.ascontiguousarray(edges, dtype=np.int64)
    if e.shape != (n, 2):
        raise ValueError(f"term {term!r}: edges must have shape {(n, 2)}, got {e.shape}")
    bad = (e < 0) | (e >= n_edges)
    if bad.any():
        s = int(np.argwhere(bad)[0][0])
        raise ValueError(f"term {term!r}: stencil {s} names edge {int(e[s][bad[s]][0])}, out of "
                         f"range (the frames hold {n_edges} edges)")
    return e


class _DERTerm(StencilTerm):
    """Common bookkeeping: output checks and the degenerate-stencil report."""

    n_degenerate: int = 0
    first_degenerate: int = -1

    def _check_out(self, energy_out, grad_out, hess_out):
        n, k = self.dofs.shape
        if energy_out.shape != (n,) or grad_out.shape != (n, k):
            raise ValueError(f"term {self.name!r}: outputs must have shapes {(n,)} and {(n, k)}, "
                             f"got {energy_out.shape} and {grad_out.shape}")
        if hess_out is None:
            return np.empty((0, k, k)), False
        if hess_out.shape != (n, k, k):
            raise ValueError(f"term {self.name!r}: hess_out must have shape {(n, k, k)}, got "
                             f"{hess_out.shape}")
        return hess_out, True

    def _report(self, bad: int, energy_out: np.ndarray) -> None:
        self.n_degenerate = int(bad)
        self.first_degenerate = int(np.flatnonzero(~np.isfinite(energy_out))[0]) if bad else -1


class StretchTerm(_DERTerm):
    """Stretching of edges.

    dofs : int [S, 6], ``(x_a, x_b)`` slots in ``q``.
    rest_length : lbar [m], [S], > 0.
    stiffness : k_s = E pi r^2 [N], [S], > 0.
    project : clamp the transverse Hessian coefficient ``1 - lbar/|e|`` at 0 (PSD Hessian;
        the default, for dynamics); False gives the exact Hessian.
    """

    def __init__(self, *, dofs, rest_length, stiffness, project: bool = True,
                 name: str = "stretch"):
        self.name = name
        self.dofs = check_dofs(name, dofs)
        if self.dofs.shape[1] != 6:
            raise ValueError(f"term {name!r}: stretch stencils have 6 slots, got "
                             f"{self.dofs.shape[1]}")
        n = self.dofs.shape[0]
        self.rest_length = _per_stencil(name, "rest_length", rest_length, n, positive=True)
        self.stiffness = _per_stencil(name, "stiffness", stiffness, n, positive=True)
        self.project = bool(project)

    def evaluate(self, q, energy_out, grad_out, hess_out):
        h, want = self._check_out(energy_out, grad_out, hess_out)
        kern = _k.stretch_terms if _parallel(len(self.dofs), STRETCH_WORK, want) else \
            _k.stretch_terms_serial
        bad = kern(q, self.dofs, self.rest_length, self.stiffness, self.project,
                               energy_out, grad_out, h, want)
        self._report(bad, energy_out)


def _bend_common(name, dofs):
    d = check_dofs(name, dofs)
    if d.shape[1] != 11:
        raise ValueError(f"term {name!r}: bend-twist stencils have 11 slots, got {d.shape[1]}")
    return d


class BendTerm(_DERTerm):
    """Bending at inner vertices.

    dofs : int [S, 11], ``(x_{i-1}, theta_j0, x_i, theta_j1, x_{i+1})`` slots in ``q``.
    edges : int [S, 2], ``(j0, j1)``: rows of ``a1``, ``a2``.
    rest_curvature : kappabar [1], [S, 4].
    voronoi_length : ltilde = (lbar_j0 + lbar_j1) / 2 [m], [S], > 0.
    stiffness : (k1, k2) = (E I2, E I1) [N m^2], [S, 2], > 0.
    a1, a2 : the model's reference frames at ``q`` [E, 3] (shared, not copied).
    """

    def __init__(self, *, dofs, edges, rest_curvature, voronoi_length, stiffness, a1, a2,
                 name: str = "bend"):
        self.name = name
        self.dofs = _bend_common(name, dofs)
        n = self.dofs.shape[0]
        self.a1 = _shared(name, "a1", a1, (np.shape(a1)[0], 3))
        self.a2 = _shared(name, "a2", a2, self.a1.shape)
        self.edges = _edges(name, edges, n, self.a1.shape[0])
        self.rest_curvature = _per_stencil(name, "rest_curvature", rest_curvature, n, cols=4)
        self.voronoi_length = _per_stencil(name, "voronoi_length", voronoi_length, n,
                                           positive=True)
        self.stiffness = _per_stencil(name, "stiffness", stiffness, n, cols=2, positive=True)

    def evaluate(self, q, energy_out, grad_out, hess_out):
        h, want = self._check_out(energy_out, grad_out, hess_out)
        bad = _k.bend_terms(q, self.dofs, self.edges, self.a1, self.a2, self.rest_curvature,
                            self.voronoi_length, self.stiffness, energy_out, grad_out, h, want)
        self._report(bad, energy_out)


class TwistTerm(_DERTerm):
    """Twisting at inner vertices.

    dofs : int [S, 11] as for :class:`BendTerm`.
    rest_twist : taubar [rad], [S].
    voronoi_length : ltilde [m], [S], > 0.
    stiffness : k_t = G pi r^4 / 2 [N m^2], [S], > 0.
    ref_twist : the model's reference twist at ``q`` [rad], [S] (shared, not copied).
    """

    def __init__(self, *, dofs, rest_twist, voronoi_length, stiffness, ref_twist,
                 name: str = "twist"):
        self.name = name
        self.dofs = _bend_common(name, dofs)
        n = self.dofs.shape[0]
        self.rest_twist = _per_stencil(name, "rest_twist", rest_twist, n)
        self.voronoi_length = _per_stencil(name, "voronoi_length", voronoi_length, n,
                                           positive=True)
        self.stiffness = _per_stencil(name, "stiffness", stiffness, n, positive=True)
        self.ref_twist = _shared(name, "ref_twist", ref_twist, (n,))

    def evaluate(self, q, energy_out, grad_out, hess_out):
        h, want = self._check_out(energy_out, grad_out, hess_out)
        bad = _k.twist_terms(q, self.dofs, self.ref_twist, self.rest_twist, self.voronoi_length,
                             self.stiffness, energy_out, grad_out, h, want)
        self._report(bad, energy_out)


class BendTwistTerm(_DERTerm):
    """Bending plus twisting at inner vertices, one pass per stencil (arguments of
    :class:`BendTerm` and :class:`TwistTerm`; ``bend_stiffness`` [S, 2], ``twist_stiffness``
    [S])."""

    def __init__(self, *, dofs, edges, rest_curvature, rest_twist, voronoi_length,
                 bend_stiffness, twist_stiffness, a1, a2, ref_twist, name: str = "bend_twist"):
        self.name = name
        self.dofs = _bend_common(name, dofs)
        n = self.dofs.shape[0]
        self.a1 = _shared(name, "a1", a1, (np.shape(a1)[0], 3))
        self.a2 = _shared(name, "a2", a2, self.a1.shape)
        self.edges = _edges(name, edges, n, self.a1.shape[0])
        self.rest_curvature = _per_stencil(name, "rest_curvature", rest_curvature, n, cols=4)
        self.rest_twist = _per_stencil(name, "rest_twist", rest_twist, n)
        self.voronoi_length = _per_stencil(name, "voronoi_length", voronoi_length, n,
                                           positive=True)
        self.bend_stiffness = _per_stencil(name, "bend_stiffness", bend_stiffness, n, cols=2,
                                           positive=True)
        self.twist_stiffness = _per_stencil(name, "twist_stiffness", twist_stiffness, n,
                                            positive=True)
        self.ref_twist = _shared(name, "ref_twist", ref_twist, (n,))

    def evaluate(self, q, energy_out, grad_out, hess_out):
        h, want = self._check_out(energy_out, grad_out, hess_out)
        kern = _k.bend_twist_terms if _parallel(len(self.dofs), BEND_TWIST_WORK, want) else \
            _k.bend_twist_terms_serial
        bad = kern(q, self.dofs, self.edges, self.a1, self.a2, self.ref_twist,
                   self.rest_curvature, self.rest_twist, self.voronoi_length,
                   self.bend_stiffness, self.twist_stiffness, energy_out, grad_out, h, want)
        self._report(bad, energy_out)
