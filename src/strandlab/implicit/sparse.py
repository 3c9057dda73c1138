"""Sparse direct solver: coupled blocks, closed rings, any stencil pattern.

Pattern.  The CSR pattern (``indptr`` int64 [n + 1], ``indices`` int32/int64 [nnz], sorted
columns) is the union of every term's stencil entries and the diagonal, computed once.  For each
term, ``csr_map[t]`` [n, k, k] gives the position in ``data`` of each stencil Hessian entry, so
assembly is one pass ``data[map[s, a, c]] += scale * hess[s, a, c]``: parallel over blocks for
the stencils inside one block (they write only their block's rows), then serial over the
crossing stencils (deterministic; :mod:`.assembly`).  Memory: 4 bytes per stencil Hessian entry
for the maps (8 when nnz >= 2^31), i.e. half of the Hessian buffers themselves, plus
12-16 bytes per non-zero for the matrix.

Dynamic terms.  A term whose stencil set changes between steps (``StencilTerm.dynamic``: the
contact pairs) is kept out of the fixed pattern: its Hessians stay in the assembly's
per-stencil buffers, are multiplied by them in the iterative solves, and are added as a
coordinate list of their non-zero stencils to the reduced matrix of a factorisation (SciPy's
sparse sum).  A new stencil set (:meth:`~.assembly.Assembly.refresh`) therefore costs nothing
here, and pairs out of contact add no fill.

Factorisation.  The matrix with the fixed DOFs removed (a reduced CSR pattern, rebuilt only
when ``fixed`` changes; its values gathered from ``data`` each time) is factored by one of
:data:`BACKENDS` (``backend=``; the default, ``"auto"``, takes the first available of
``"cholmod"``, ``"pardiso"``, then by the free DOFs (:func:`auto_backend`) ``"qdldl"`` below
:data:`~.ldl.QDLDL_MAX_DOFS`, ``"cvxopt"`` from there on, and ``"superlu"``; a method that
factors at every iteration takes ``"cvxopt"`` at every size):

- ``"cholmod"``: ``scikit-sparse``'s CHOLMOD when ``sksparse.cholmod`` is importable
  (optional, not a dependency; ``cholmod.analyze`` once per reduced pattern, then
  ``cholesky_inplace``);
- ``"pardiso"``: Intel MKL's PARDISO through ``pypardiso`` (the optional extra ``pardiso``,
  x86-64; :func:`pardiso_available`), a supernodal Cholesky (``mtype = 2``) through
  pypardiso's public API (``PyPardisoSolver.factorize``: ordering, symbolic analysis and
  numeric factorisation, phase 12, at every factor; ``solve``: phase 33 on the matrix it
  factored), no iterative refinement, with as many MKL threads as Numba has (MKL's GNU
  OpenMP layer, the runtime of Numba's ``omp`` layer, unless ``MKL_THREADING_LAYER`` is
  set); tested with pypardiso 0.4.7 and MKL 2026.2 (docs/implicit.md: the timings, and why
  not phases 11 and 22 apart);
- ``"cvxopt"``: CHOLMOD's supernodal Cholesky as cvxopt's wheels bundle it (:mod:`.supernodal`,
  the extra ``cvxopt``), ordered (by AMD, or by nested dissection: :data:`ORDERINGS`) and
  analysed once per reduced pattern, refactored numerically; its pivots (``L``'s diagonal
  squared) are checked against ``pivot_tol``;
- ``"qdldl"``: QDLDL's ``L D L^T`` (:mod:`.ldl`, the extra ``qdldl``), ordered and analysed
  once per reduced pattern, refactored numerically; ``D`` is the inertia;
- ``"superlu"``: SciPy's SuperLU (``splu``) with a symmetric fill-reducing ordering and
  diagonal pivots, from whose pivots the matrix's inertia is read (Sylvester: with diagonal
  pivoting ``A = L D L^T`` and the pivots are ``D``).

A matrix that is not positive definite (CHOLMOD's error (either binding), PARDISO's error -4 (a
non-positive pivot), a pivot of QDLDL, SuperLU or CHOLMOD through cvxopt ``<= pivot_tol`` times its
diagonal scale, an off-diagonal pivot, or an exactly singular factor) is factored again with the
diagonal shift of :mod:`.linear`, applied to every block at once. After a factorisation that needed
a shift ``mu``, the next one starts at ``mu / shift_growth`` (while that is at least
``shift_initial``; else unshifted, then ``shift_initial``), and a shift that succeeds is the next
start's ``mu``: stiff objects under compression stay indefinite from one Newton iteration to the
next, each try is a whole factorisation, and the start decays by ``shift_growth`` per factorisation
once the matrix is positive definite again (a shift of ``mu / shift_growth`` of the diagonal on
such a matrix only damps the Newton step). On the umbrella of 3173 vertices
(``mixed_umbrella(rings=32)``, steps 8-12, where its cloth is under compression) this took 31-63
factorisations a step where trying unshifted first took 46-92, and 49.5 s against 73.2 s of CPU for
its first 12 steps (docs/mixed.md). Factor and solve allocate (SciPy).

Methods (``method=``).  ``"direct"``: a new factorisation at every :meth:`SparseSolver.factor`
(each Newton iteration; the default).  ``"direct_cg"``: the same, but a matrix whose first
factorisation try fails (not positive definite: a cloth under compression) is not factored again
with the shift sequence; :meth:`~SparseSolver.solve` runs the truncated conjugate gradients below
on it, preconditioned by the last good factorisation, and only when they fail
(``pcg_max_iterations``, or non-positive curvature at their first iteration) does the shift
sequence follow.  The backend must keep its last good factorisation through a failed one
(:data:`KEEPS_FACTOR`: CHOLMOD through cvxopt, SuperLU), else it is ``"direct"``; ``fallbacks``
counts the matrices solved so.  On the umbrella (steps 2-23, one thread) 1.20 s a step against
``"direct"``'s 1.57 s (docs/implicit.md).  ``"reuse"``: the last factorisation is kept while the
free DOFs stay the same, and :meth:`~SparseSolver.solve` runs the conjugate gradient method on the
current matrix preconditioned by it (the matrix of a few Newton iterations or steps ago: close to
the current one, so that a few iterations reach ``pcg_rtol``); a solve that takes more than
``pcg_max_iterations``, or meets a direction of non-positive curvature at its first iteration,
factors the current matrix and solves directly, and a solve that took more than half of them makes
the next ``factor`` factor afresh.  A direction of non-positive curvature met later ends the solve
with the iterate so far (truncated Newton-CG, Steihaug 1983: with a positive definite
preconditioner every iterate before it is a descent direction), not with a factorisation: an
indefinite matrix (a cloth under compression) then costs a few iterations where it cost a
factorisation and its shift sequence (docs/implicit.md).  ``"jacobi"``: the conjugate gradient
method with the diagonal as preconditioner, no factorisation unless it fails (for comparison:
hundreds of iterations on the mixed model's matrices).  ``"auto"``: ``"direct_cg"`` with the
backends of :data:`DIRECT_BACKENDS` (a factorisation that costs about ten of its solves), else
``"reuse"``; resolved again when ``backend="auto"`` changes the backend with the free DOFs.  The
iterative solves stop at ``|A x - b| <= pcg_rtol |b|`` (inexact Newton: the Newton iteration still
converges to the integrator's tolerance).  With QDLDL and no contact stencils outside the pattern,
the loop is one compiled call (:mod:`.pcg`).
"""
from __future__ import annotations

import os

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .assembly import Assembly, _first_nonfinite, use_parallel
from .csr import (
    add_stencil_diagonal,
    csr_matvec_par,
    csr_matvec_ser,
    csr_pattern,
    csr_reset,
    csr_scatter_par,
    csr_scatter_ser,
    matvec_listed,
)
from .ldl import QDLDL_MAX_DOFS, QdldlFactor, qdldl_available
from .linear import FactorInfo, LinearSolveError, LinearSolver, check_fixed
from .ordering import METIS_MIN_DOFS, PermutedLU, metis_available, nested_dissection
from .pcg import pcg_ldl, unsigned_view
from .supernodal import SupernodalFactor, cvxopt_available

__all__ = ["SparseSolver", "csr_pattern", "cholmod_available", "pardiso_available", "METHODS",
           "BACKENDS", "ORDERINGS", "PCG_LARGE", "DIRECT_BACKENDS", "auto_backend"]

BACKENDS = ("cholmod", "pardiso", "cvxopt", "qdldl", "superlu")
"""Factorisations of the sparse solver, in the order ``backend="auto"`` tries them (after
CHOLMOD through scikit-sparse and PARDISO, by the free DOFs: :func:`auto_backend`)."""

ORDERINGS = ("auto", "metis", "mmd")
"""Fill-reducing orderings of the SuperLU backend and of CHOLMOD through cvxopt: METIS' nested
dissection (``"metis"``, the extra ``metis``: :mod:`.ordering`; it makes ``backend="auto"``
SuperLU), the backend's minimum degree (``"mmd"``: SuperLU's multiple minimum degree, cvxopt's
AMD) or (``"auto"``) nested dissection from :data:`~.ordering.METIS_MIN_DOFS` free DOFs on when
``pymetis`` imports, else minimum degree.  CHOLMOD through scikit-sparse, PARDISO and QDLDL
order by themselves."""

PARDISO_NOT_POSITIVE = -4
"""PARDISO's error code for a zero or negative pivot (``mtype = 2``: not positive definite)."""

PARDISO_IPARM = ((1, 1), (2, 2), (8, 0), (10, 13), (18, -1), (21, 1), (27, 0), (35, 0))
"""PARDISO's ``iparm`` (1-based) as set: own settings, METIS ordering, no iterative
refinement, pivot perturbation 1e-13, report the factor's size, Bunch-Kaufman pivoting
(unused by ``mtype = 2``), no matrix check, one-based indices (pypardiso's CSR)."""


def cholmod_available() -> bool:
    """Whether ``sksparse.cholmod`` can be imported (optional faster factorisation)."""
    try:
        import sksparse.cholmod  # noqa: F401
    except ImportError:
        return False
    return True


def _import_pypardiso():
    """``pypardiso``, with MKL's GNU OpenMP threading (the runtime of Numba's ``omp`` layer)
    unless ``MKL_THREADING_LAYER`` is set; ImportError when it or MKL's ``mkl_rt`` is
    missing."""
    os.environ.setdefault("MKL_THREADING_LAYER", "GNU")
    import pypardiso
    return pypardiso


def pardiso_available() -> bool:
    """Whether ``pypardiso`` imports and finds MKL (the optional extra ``pardiso``)."""
    try:
        _import_pypardiso()
    except ImportError:
        return False
    return True


METHODS = ("direct", "direct_cg", "reuse", "jacobi", "auto")
"""The sparse solver's methods (module docstring)."""

DIRECT_BACKENDS = ("cvxopt",)
"""Backends with which ``method="auto"`` factors at every Newton iteration (``"direct_cg"``):
CHOLMOD's supernodal factorisation costs about ten of its solves, so a new factor beats
conjugate gradients preconditioned by an old one.  With the others it is ``"reuse"``."""

KEEPS_FACTOR = ("cvxopt", "superlu")
"""Backends whose failed factorisation leaves the last good one usable (a new object or a
second symbolic slot), as ``"direct_cg"`` needs; with the others it acts as ``"direct"``."""


#: Free DOFs from which the kept factorisation's conjugate gradients may take 40 iterations
#: (refactoring after 20), not 20 (after 10): there a factorisation costs 40-45 of their
#: iterations, against 15-25 below (SuperLU on the mixed objects' matrices: 813 DOFs 2.7 ms
#: against 0.11 ms a solve and product, 2562 DOFs 18 / 0.43 ms, 9714 DOFs 163 / 3.8 ms).
#: Measured: the 3173-vertex umbrella's first 12 steps took 26.2 s of CPU with 40 against
#: 33.3 s with 20 (68 against 118 factorisations), its 801-vertex version 86 against 96 ms a
#: step; the frisbee, toy ball, sticky hand and tunnel (339-813 DOFs) 12-19 % longer with 40.
PCG_LARGE = 2000


def auto_backend(n_free: int, method: str = "auto") -> str:
    """The factorisation ``backend="auto"`` takes for ``n_free`` free DOFs and the solver's
    ``method`` when neither CHOLMOD through scikit-sparse nor PARDISO loads: QDLDL below
    :data:`~.ldl.QDLDL_MAX_DOFS` (its factors serve the compiled conjugate gradients of
    ``"reuse"``), else CHOLMOD's supernodal Cholesky through cvxopt, else SuperLU.  A method
    that factors at every iteration (``"direct"``, ``"direct_cg"``) takes cvxopt's CHOLMOD at
    every size when it loads: it factors these small matrices 1.5-2.5 times as fast as QDLDL
    (docs/mixed.md, "Performance"), and no compiled conjugate gradients need QDLDL's factors.
    """
    small = n_free < QDLDL_MAX_DOFS and qdldl_available()
    if small and method not in ("direct", "direct_cg"):
        return "qdldl"
    if cvxopt_available():
        return "cvxopt"
    return "qdldl" if small else "superlu"


class SparseSolver(LinearSolver):
    """A sparse factorisation of the whole matrix (:data:`BACKENDS`: CHOLMOD, PARDISO, QDLDL or
    SuperLU; CHOLMOD through scikit-sparse or cvxopt), reused as the preconditioner of
    conjugate gradients (module docstring).

    Extra options: ``backend`` (:data:`BACKENDS` or ``"auto"``, the default: the first
    available; a named one that is missing raises ValueError); ``use_cholmod`` (the older
    spelling: True is ``backend="cholmod"``, False keeps ``"auto"`` off scikit-sparse's
    CHOLMOD, not off cvxopt's); ``method`` (:data:`METHODS`, default ``"direct"``; ``"auto"``
    by the backend, module docstring); ``pcg_rtol`` (relative residual of the iterative
    solves, in (0, 1), default 1e-4); ``pcg_max_iterations`` (default for ``"reuse"``: 20, or
    40 from :data:`PCG_LARGE` free DOFs on, where a factorisation costs more iterations; 5000
    for ``"jacobi"``); ``ordering`` (:data:`ORDERINGS`, default ``"auto"``; SuperLU and cvxopt).
    """

    kind = "sparse"

    def __init__(self, assembly: Assembly, *, backend: str = "auto",
                 use_cholmod: bool | None = None, method: str = "direct", pcg_rtol: float = 1e-4,
                 pcg_max_iterations: int | None = None, ordering: str = "auto", **options):
        super().__init__(assembly, **options)
        if ordering not in ORDERINGS:
            raise ValueError(f"sparse solver ordering must be one of {ORDERINGS}, got "
                             f"{ordering!r}")
        if ordering == "metis" and not metis_available():
            raise ValueError("ordering 'metis' requested but pymetis cannot be imported "
                             "(pip install 'strandlab[metis]')")
        if ordering == "metis":
            if backend not in ("auto", "superlu", "cvxopt") or use_cholmod:
                raise ValueError(f"ordering 'metis' is SuperLU's and cvxopt's; backend "
                                 f"{backend!r} orders by itself")
            if backend == "auto":
                backend = "superlu"
        self.ordering = ordering
        self._perm = None
        a = assembly
        if method not in METHODS:
            raise ValueError(f"sparse solver method must be one of {METHODS}, got {method!r}")
        self._method_given = method
        self.method = method          # "auto": resolved with the backend, below
        if not (isinstance(pcg_rtol, (int, float)) and 0.0 < pcg_rtol < 1.0):
            raise ValueError(f"pcg_rtol must be a number in (0, 1), got {pcg_rtol!r}")
        self.pcg_rtol = float(pcg_rtol)
        if pcg_max_iterations is not None and (
                isinstance(pcg_max_iterations, bool) or not isinstance(pcg_max_iterations, int)
                or pcg_max_iterations < 1):
            raise ValueError(f"pcg_max_iterations must be an integer >= 1, got "
                             f"{pcg_max_iterations!r}")
        self._pcg_max_given = pcg_max_iterations
        self.pcg_max_iterations = (5000 if method == "jacobi" else 20) \
            if pcg_max_iterations is None else pcg_max_iterations
        self.static = [t for t, term in enumerate(a.terms) if not term.dynamic]
        self.dynamic = [t for t, term in enumerate(a.terms) if term.dynamic]
        self.indptr, self.indices, self.diag_pos, maps = csr_pattern(
            a.n_dofs, [a.dofs[t] for t in self.static])
        self.csr_map = [None] * len(a.terms)
        for t, m in zip(self.static, maps):
            self.csr_map[t] = m
        self._uindptr, self._uindices = unsigned_view(self.indptr), unsigned_view(self.indices)
        self.data = np.zeros(self.indices.size)
        self.backend = self._choose_backend(backend, use_cholmod)
        self._by_size = backend == "auto" and self.backend in ("cvxopt", "qdldl")
        if self._by_size:                # re-chosen for the free DOFs at each reduction
            self.backend = auto_backend(a.n_dofs, method)
        if method == "auto":
            self.method = self._auto_method()
        self.use_cholmod = self.backend == "cholmod"
        self._qdldl = None
        self._supernodal = None
        self._nested = False      # cvxopt's CHOLMOD in nested dissection order (_reduce)
        self._pardiso = None
        self._pardiso_pattern = None
        self._hess_scale = 1.0
        self._recent_shift = 0.0
        self._ready = False
        self._fixed_seen = None
        self._factor = None       # factorisation of the current matrix (or "empty")
        self._precond = None      # the last factorisation made (reused by method "reuse")
        self._precond_matrix = None   # the reduced matrix it factors (CSC)
        self._refactor = True     # the next factor() factors afresh
        self.fallbacks = 0
        """Matrices that ``"direct_cg"`` solved by conjugate gradients on the last good factor
        because their factorisation failed."""
        self._chol = None
        self._chol_pattern = None
        self._free = None
        n = a.n_dofs
        self._r, self._z, self._p, self._ap, self._x = (np.zeros(n) for _ in range(5))
        self._jacobi = np.zeros(n)
        self._active = []

    def _auto_method(self) -> str:
        return "direct_cg" if self.backend in DIRECT_BACKENDS else "reuse"

    @staticmethod
    def _choose_backend(backend: str, use_cholmod: bool | None) -> str:
        if use_cholmod not in (None, True, False):
            raise ValueError(f"use_cholmod must be None, True or False, got {use_cholmod!r}")
        if backend not in BACKENDS + ("auto",):
            raise ValueError(f"sparse solver backend must be 'auto' or one of {BACKENDS}, got "
                             f"{backend!r}")
        if use_cholmod:
            if backend not in ("auto", "cholmod"):
                raise ValueError(f"use_cholmod=True contradicts backend={backend!r}")
            backend = "cholmod"
        have = {"cholmod": cholmod_available, "pardiso": pardiso_available,
                "cvxopt": cvxopt_available, "qdldl": qdldl_available, "superlu": lambda: True}
        if backend != "auto":
            if not have[backend]():
                what = {"cholmod": "sksparse.cholmod cannot be imported",
                        "qdldl": "qdldl cannot be imported (pip install 'strandlab[qdldl]')",
                        "cvxopt": "cvxopt.cholmod cannot be imported (pip install "
                                  "'strandlab[cvxopt]')"}.get(
                    backend, "pypardiso or MKL cannot be loaded (pip install "
                             "'strandlab[pardiso]', x86-64 only)")
                hint = " (use_cholmod=True)" if use_cholmod else ""
                raise ValueError(f"backend {backend!r}{hint} requested but {what}")
            return backend
        for name in BACKENDS:
            if (name != "cholmod" or use_cholmod is not False) and have[name]():
                return name
        return "superlu"

    # ------------------------------------------------------------------ assembly
    def assemble(self, *, hess_scale: float, diagonal: np.ndarray) -> None:
        a = self.assembly
        csr_reset(self.data, self.diag_pos, diagonal)
        for t in self.static:
            m, h = self.csr_map[t], a.hess[t]
            if m.shape[0]:
                par = use_parallel(a.n_blocks, h.size, self.parallel)
                (csr_scatter_par if par else csr_scatter_ser)(
                    m, h, a.order[t], a.block_ptr[t], a.cross[t], float(hess_scale), self.data)
        self._hess_scale = float(hess_scale)
        self._factor = None
        self._ready = False

    def _dynamic_coo(self, reduced: bool):
        """(rows, cols, values) of the dynamic terms' non-zero stencil Hessians times the
        Hessian scale; in the reduced numbering (fixed rows and columns dropped) when
        ``reduced``.  None when there are none."""
        a = self.assembly
        parts = []
        for t in self.dynamic:
            d, h = a.dofs[t], a.hess[t]
            if not d.shape[0]:
                continue
            act = a.terms[t].hessian_stencils(h)
            if not act.size:
                continue
            k = d.shape[1]
            da = d[act]
            rows = np.repeat(da, k, axis=1).reshape(-1)
            cols = np.tile(da, (1, k)).reshape(-1)
            parts.append((rows, cols, self._hess_scale * h[act].reshape(-1)))
        if not parts:
            return None
        rows, cols, vals = (np.concatenate(x) for x in zip(*parts))
        if reduced:
            keep = self._is_free[rows] & self._is_free[cols]
            rows, cols, vals = self._newidx[rows[keep]], self._newidx[cols[keep]], vals[keep]
        return rows, cols, vals

    def matrix(self) -> sp.csr_matrix:
        """The assembled matrix (before the Dirichlet removal) as SciPy CSR (shares data when
        no dynamic term has a non-zero stencil)."""
        n = self.n_dofs
        A = sp.csr_matrix((self.data, self.indices, self.indptr), shape=(n, n))
        dyn = self._dynamic_coo(reduced=False)
        if dyn is not None:
            A = (A + sp.csr_matrix((dyn[2], (dyn[0], dyn[1])), shape=(n, n))).tocsr()
        return A

    def dense(self) -> np.ndarray:
        return self.matrix().toarray()

    # ------------------------------------------------------------------ Dirichlet reduction
    def _reduce(self, fixed: np.ndarray) -> None:
        """Reduced pattern for the free DOFs (only when ``fixed`` changed)."""
        if self._fixed_seen is not None and np.array_equal(self._fixed_seen, fixed):
            return
        n = self.n_dofs
        free = ~fixed
        self._is_free = free
        self._free = np.nonzero(free)[0]
        self._newidx = np.cumsum(free) - 1
        rows = np.repeat(np.arange(n), np.diff(self.indptr))
        keep = np.nonzero(free[rows] & free[self.indices])[0]
        nf = self._free.size
        self._keep = keep
        self._red_indices = self._newidx[self.indices[keep]].astype(self.indices.dtype)
        self._red_indptr = np.zeros(nf + 1, dtype=np.int64)
        np.cumsum(np.bincount(self._newidx[rows[keep]], minlength=nf),
                  out=self._red_indptr[1:])
        self._red_diag = np.searchsorted(keep, self.diag_pos[self._free])
        self._red_data = np.zeros(keep.size)
        self._red_matrix = None      # SciPy's view of the reduced arrays, made once
        self._red_rhs = np.zeros(nf)
        self._ldl_work = np.zeros(nf)
        self._fixed_seen = fixed.copy()
        if self._by_size:
            self.backend = auto_backend(nf, self._method_given)
        self._perm = None
        nested = nf > 1 and (self.ordering == "metis" or (
            self.ordering == "auto" and nf >= METIS_MIN_DOFS and metis_available()))
        if self.backend == "superlu" and nested:
            self._perm = nested_dissection(self._red_indptr, self._red_indices)
        self._nested = nested
        if self._method_given == "auto":
            self.method = self._auto_method()
        if self._pcg_max_given is None and self.method == "reuse":
            self.pcg_max_iterations = 40 if nf >= PCG_LARGE else 20
        self._chol = None
        self._precond = None
        self._refactor = True

    def _block_of_position(self, pos: int) -> tuple[int, int]:
        row = int(np.searchsorted(self.indptr, pos, side="right") - 1)
        return self.assembly.block_of(row), row

    # ------------------------------------------------------------------ factor / solve
    def factor(self, fixed: np.ndarray, *, min_shift: float = 0.0) -> FactorInfo:
        fixed = check_fixed(fixed, self.n_dofs)
        bad = _first_nonfinite(self.data)
        if bad >= 0:
            b, row = self._block_of_position(bad)
            raise LinearSolveError(b, f"non-finite matrix entry in the row of DOF {row}")
        self._reduce(fixed)
        self.solve_info = None
        self._ready = False
        if self._free.size == 0:
            self._factor = "empty"
            info = FactorInfo()
        elif min_shift == 0.0 and (self.method == "jacobi" or (
                self.method == "reuse" and not self._refactor and self._precond is not None)):
            self._factor = None          # solve() iterates on the current matrix
            info = FactorInfo()
        else:
            fallback = (self.method == "direct_cg" and self.backend in KEEPS_FACTOR
                        and min_shift == 0.0 and self._precond is not None)
            info = self._factor_now(float(min_shift), give_up=fallback)
            if info is None:             # not positive definite: solve() iterates on it
                self._factor = None
                self.fallbacks += 1
                info = FactorInfo()
        self._ready = True
        return info

    def _reduced_matrix(self):
        """The current matrix with the fixed DOFs removed (SciPy CSC, sorted indices, every
        diagonal entry stored), its diagonal, and the diagonal's positions in its data."""
        nf = self._free.size
        np.take(self.data, self._keep, out=self._red_data)
        dyn = self._dynamic_coo(reduced=True)
        if dyn is None:
            if self._red_matrix is None:    # SciPy's checks cost 0.1 ms a factorisation
                # its data is a view of _red_data: the values taken above are the matrix's
                self._red_matrix = sp.csc_matrix(
                    (self._red_data, self._red_indices, self._red_indptr), shape=(nf, nf))
            return self._red_matrix, self._red_data[self._red_diag].copy(), self._red_diag
        rows = np.repeat(np.arange(nf), np.diff(self._red_indptr))
        A = sp.coo_matrix((np.concatenate([self._red_data, dyn[2]]),
                           (np.concatenate([rows, dyn[0]]),
                            np.concatenate([self._red_indices, dyn[1]]))),
                          shape=(nf, nf)).tocsc()     # sums duplicates, keeps explicit zeros
        A.sort_indices()
        cols = np.repeat(np.arange(nf), np.diff(A.indptr))
        pos = np.nonzero(A.indices == cols)[0]
        return A, A.data[pos].copy(), pos

    def _factor_now(self, min_shift: float, give_up: bool = False) -> FactorInfo | None:
        """Factor the current reduced matrix (with the shift sequence from ``min_shift``; with
        ``give_up``, None when its first try fails and the last good factorisation is still
        usable: CHOLMOD through cvxopt has none after a new pattern's analysis)."""
        nf = self._free.size
        A, diag, pos = self._reduced_matrix()
        scale = np.abs(diag)
        zero = scale == 0.0
        if zero.any():
            mean = scale.sum() / nf
            scale[zero] = mean if mean > 0.0 else 1.0
        mu = min_shift
        if mu == 0.0 and self._recent_shift / self.shift_growth >= self.shift_initial:
            mu = self._recent_shift / self.shift_growth     # let the last shift decay
        last = ""
        while True:
            A.data[pos] = diag + mu * scale
            ok, last = self._try_backend(A, scale)
            if ok:
                break
            if give_up and getattr(self._precond, "ready", True):
                return None
            if mu == 0.0 and self._recent_shift > 0.0:     # start near the last shift needed
                nxt = max(self.shift_initial, self._recent_shift / self.shift_growth)
            else:
                nxt = self.next_shift(mu)
            if not np.isfinite(nxt):
                if self.shift_max == 0.0:
                    raise LinearSolveError(-1, f"matrix not positive definite ({last}) and the "
                                               f"diagonal shift is disabled (shift_max = 0)")
                raise LinearSolveError(-1, f"matrix not positive definite ({last}) even with "
                                           f"the diagonal shift mu = {mu:g} (shift_max)")
            mu = nxt
        self.shift = mu
        self._recent_shift = mu
        self._precond = self._factor
        self._precond_matrix = A     # its buffers are rewritten only by the next factor
        self._refactor = False
        return FactorInfo(self.assembly.n_blocks if mu > 0.0 else 0, mu)

    def _try_backend(self, A, scale) -> tuple[bool, str]:
        """One factorisation of the reduced matrix ``A`` by the backend (``scale``: the
        diagonal magnitudes the LU pivots are measured against)."""
        self.factorizations += 1
        if self.backend == "cholmod":
            return self._try_cholmod(A)
        if self.backend == "pardiso":
            return self._try_pardiso(A)
        if self.backend == "qdldl":
            return self._try_qdldl(A, scale)
        if self.backend == "cvxopt":
            return self._try_supernodal(A, scale)
        return self._try_lu(A, scale)

    def _factor_exactly(self, A) -> None:
        """Factor the reduced matrix ``A`` as given (no shift sequence); it is known to
        factor (it did when it was made)."""
        ok, last = self._try_backend(A, np.zeros(A.shape[0]))   # pivots > 0
        if not ok:
            raise LinearSolveError(-1, f"the checkpointed preconditioner does not factor: "
                                       f"{last}")

    def cache(self) -> dict:
        """The reduction's fixed DOFs, the last shift and, with ``method="reuse"``, the
        reduced matrix whose factorisation is the preconditioner (CSC arrays), whether the
        next factor() factors afresh."""
        out = {"recent_shift": np.float64(self._recent_shift)}
        if self._fixed_seen is not None:
            out["fixed"] = self._fixed_seen.copy()
        A = self._precond_matrix if self._precond is not None else None
        if A is not None:
            out.update(precond_data=A.data.copy(), precond_indices=A.indices.copy(),
                       precond_indptr=A.indptr.copy(), refactor=np.bool_(self._refactor))
        return out

    def restore_cache(self, arrays: dict) -> None:
        self._recent_shift = float(arrays.get("recent_shift", 0.0))
        self._precond = self._precond_matrix = None
        self._refactor = True
        self._factor, self._ready = None, False
        if "fixed" not in arrays:
            self._fixed_seen = None
            return
        self._reduce(check_fixed(np.asarray(arrays["fixed"], dtype=np.bool_), self.n_dofs))
        if "precond_data" not in arrays:
            return
        nf = self._free.size
        indptr = np.asarray(arrays["precond_indptr"])
        if indptr.shape != (nf + 1,):
            raise ValueError(f"precond_indptr: shape {indptr.shape}, expected ({nf + 1},)")
        A = sp.csc_matrix((np.asarray(arrays["precond_data"], dtype=np.float64),
                           np.asarray(arrays["precond_indices"]), indptr), shape=(nf, nf))
        self._factor_exactly(A)
        self._precond, self._precond_matrix = self._factor, A
        self._factor = None
        self._refactor = bool(arrays["refactor"])

    def _try_lu(self, A, scale) -> tuple[bool, str]:
        p = self._perm
        if p is not None:                  # nested dissection: factor A[p][:, p] in order
            A = A[p][:, p].tocsc()
            scale = scale[p]
        try:
            lu = splu(A, permc_spec="MMD_AT_PLUS_A" if p is None else "NATURAL",
                      diag_pivot_thresh=0.0, options={"SymmetricMode": True})
        except RuntimeError as exc:  # exactly singular
            return False, str(exc)
        if not np.array_equal(lu.perm_r, lu.perm_c):
            return False, "off-diagonal pivot"
        piv = lu.U.diagonal()
        s_perm = np.empty_like(scale)
        s_perm[lu.perm_c] = scale
        bad = ~(piv > self.pivot_tol * s_perm)
        if bad.any():
            k = int(np.argmax(bad))
            row = int(np.nonzero(lu.perm_c == k)[0][0])
            dof = int(self._free[row if p is None else p[row]])
            return False, f"pivot {piv[k]:.3g} at DOF {dof}"
        self._factor = lu if p is None else PermutedLU(lu, p)
        return True, ""

    def _try_qdldl(self, A, scale) -> tuple[bool, str]:
        if self._qdldl is None:
            self._qdldl = QdldlFactor()
        ok, why, row = self._qdldl.factor(A, scale, self.pivot_tol)
        if not ok:
            return False, why if row < 0 else f"{why} at DOF {int(self._free[row])}"
        self._factor = self._qdldl
        self._ldl_full = self._free[self._qdldl.factors[4]].astype(np.uint64)
        return True, ""

    def _try_supernodal(self, A, scale) -> tuple[bool, str]:
        if self._supernodal is None:
            self._supernodal = SupernodalFactor()
        self._supernodal.nested = self._nested
        ok, why, row = self._supernodal.factor(A, scale, self.pivot_tol)
        if not ok:
            return False, why if row < 0 else f"{why} at DOF {int(self._free[row])}"
        self._factor = self._supernodal
        return True, ""

    def _try_cholmod(self, A) -> tuple[bool, str]:
        from sksparse import cholmod

        pattern = (A.indptr, A.indices)
        if self._chol is None or not (
                np.array_equal(pattern[0], self._chol_pattern[0])
                and np.array_equal(pattern[1], self._chol_pattern[1])):
            self._chol = cholmod.analyze(A)    # symbolic analysis once per pattern
            self._chol_pattern = (pattern[0].copy(), pattern[1].copy())
        try:
            self._chol.cholesky_inplace(A, beta=0.0)
        except cholmod.CholmodNotPositiveDefiniteError as exc:
            return False, str(exc)
        self._factor = self._chol
        return True, ""

    def _try_pardiso(self, A) -> tuple[bool, str]:
        """PARDISO's Cholesky (``mtype = 2``) of ``A`` (CSC, sorted, symmetric) through
        pypardiso's public API: it takes the upper triangle in CSR, i.e. the lower triangle of
        the CSC arrays (the index map kept per pattern); ``factorize`` runs the ordering, the
        symbolic analysis and the numeric factorisation (phase 12)."""
        pypardiso = _import_pypardiso()
        ps = self._pardiso
        if ps is None:
            ps = self._pardiso = pypardiso.PyPardisoSolver(mtype=2)
            for i, v in PARDISO_IPARM:
                ps.set_iparm(i, v)
        pat = self._pardiso_pattern
        if pat is None or not (np.array_equal(A.indptr, pat[0])
                               and np.array_equal(A.indices, pat[1])):
            col = np.repeat(np.arange(A.shape[1]), np.diff(A.indptr))
            lower = np.nonzero(A.indices >= col)[0]
            indptr = np.zeros(A.shape[1] + 1, dtype=np.int64)
            np.cumsum(np.bincount(col[lower], minlength=A.shape[1]), out=indptr[1:])
            upper = sp.csr_matrix((A.data[lower], A.indices[lower], indptr), shape=A.shape)
            pat = self._pardiso_pattern = (A.indptr.copy(), A.indices.copy(), lower, upper,
                                           upper.copy())
        np.take(A.data, pat[2], out=pat[3].data)
        ps.libmkl.MKL_Set_Num_Threads(int(numba.get_num_threads()))
        try:
            ps.factorize(pat[3])
        except pypardiso.pardiso_wrapper.PyPardisoError as exc:
            if exc.value == PARDISO_NOT_POSITIVE:
                return False, f"PARDISO: {exc}"
            raise LinearSolveError(-1, f"PARDISO failed: {exc}") from None
        np.copyto(pat[4].data, pat[3].data)      # the matrix of this factor, for solve()
        self._factor = ps
        return True, ""

    def _pardiso_solve(self, ps, rhs: np.ndarray) -> np.ndarray:
        """The factor's solve (phase 33: ``solve`` finds the matrix it factored)."""
        return ps.solve(self._pardiso_pattern[4], rhs)

    def _apply(self, factor, rhs: np.ndarray, out: np.ndarray) -> None:
        """``out`` = the factorisation's solve of ``rhs`` on the free DOFs, 0 on the fixed."""
        np.take(rhs, self._free, out=self._red_rhs)
        if self.backend == "cholmod":
            x = factor(self._red_rhs)
        elif self.backend == "pardiso":
            x = self._pardiso_solve(factor, self._red_rhs)
        else:
            x = factor.solve(self._red_rhs)
        out.fill(0.0)
        out[self._free] = np.reshape(x, -1)

    def solve(self, rhs: np.ndarray, out: np.ndarray) -> None:
        if not self._ready:
            raise RuntimeError("sparse solver: solve() before a successful factor()")
        bad = _first_nonfinite(rhs)
        if bad >= 0:
            raise LinearSolveError(self.assembly.block_of(bad),
                                   f"non-finite right-hand side at DOF {bad}")
        if isinstance(self._factor, str):
            out.fill(0.0)
            return
        if self._factor is None:                      # iterate on the current matrix
            its, ok = self._pcg(rhs, self._x)
            self.linear_iterations += its
            if ok:
                if its > self.pcg_max_iterations // 2:
                    self._refactor = True
                np.copyto(out, self._x)
                self._check_solution(out)
                return
            self.solve_info = self._factor_now(0.0)
        self._apply(self._factor, rhs, out)
        self._check_solution(out)

    def _check_solution(self, out: np.ndarray) -> None:
        bad = _first_nonfinite(out)
        if bad >= 0:
            raise LinearSolveError(self.assembly.block_of(bad),
                                   f"non-finite solution at DOF {bad}")

    # ------------------------------------------------------------------ conjugate gradients
    def _matvec(self, x: np.ndarray, out: np.ndarray) -> None:
        """``out = A x`` on the free DOFs (``x`` is 0 on the fixed ones), 0 on the fixed."""
        a = self.assembly
        par = use_parallel(a.n_blocks, self.indices.size, self.parallel)
        (csr_matvec_par if par else csr_matvec_ser)(self.indptr, self.indices, self.data, x,
                                                    self._fixed_seen, out)
        if self._active:
            for t, idx in self._active:
                matvec_listed(a.dofs[t], a.hess[t], idx, x, self._hess_scale, out)
            out[self._fixed_seen] = 0.0

    def _precondition(self, r: np.ndarray, out: np.ndarray) -> None:
        if self.method == "jacobi":
            np.divide(r, self._jacobi, out=out)
        else:
            self._apply(self._precond, r, out)

    def _pcg(self, b: np.ndarray, x: np.ndarray) -> tuple[int, bool]:
        """Preconditioned conjugate gradients for ``A x = b`` on the free DOFs from ``x = 0``;
        returns (iterations, usable).  At a direction of non-positive curvature it stops with
        the iterate so far, usable after at least one step (truncated Newton-CG); after
        ``pcg_max_iterations`` it stops, not usable."""
        r, z, p, ap = self._r, self._z, self._p, self._ap
        fixed = self._fixed_seen
        if self.method == "jacobi":
            d = self._jacobi
            np.copyto(d, self.data[self.diag_pos])
            for t in self.dynamic:
                add_stencil_diagonal(self.assembly.dofs[t], self.assembly.hess[t],
                                      self._hess_scale, d)
            d[fixed] = 1.0
            if not np.all(d > 0.0):
                return 0, False
        self._active = [(t, self.assembly.terms[t].hessian_stencils(self.assembly.hess[t]))
                        for t in self.dynamic]
        self._active = [(t, idx) for t, idx in self._active if idx.size]
        if (self.method == "reuse" and self._precond is self._qdldl and self._qdldl is not None
                and not self._active
                and not use_parallel(self.assembly.n_blocks, self.indices.size,
                                     self.parallel)):
            Lp, Li, Lx, d, _ = self._qdldl.factors
            its, status = pcg_ldl(self._uindptr, self._uindices, self.data, fixed, Lp, Li, Lx, d,
                                  self._ldl_full, b, self.pcg_rtol, self.pcg_max_iterations,
                                  x, r, z, p, ap, self._ldl_work)
            return its, status > 0
        x.fill(0.0)
        np.copyto(r, b)
        r[fixed] = 0.0
        target = self.pcg_rtol * float(np.sqrt(r @ r))
        if target == 0.0:
            return 0, True
        self._precondition(r, z)
        np.copyto(p, z)
        rz = float(r @ z)
        for it in range(1, self.pcg_max_iterations + 1):
            self._matvec(p, ap)
            pap = float(p @ ap)
            if not (pap > 0.0 and rz > 0.0):
                return it, it > 1       # truncated at negative curvature (Newton-CG)
            alpha = rz / pap
            x += alpha * p
            r -= alpha * ap
            if float(np.sqrt(r @ r)) <= target:
                return it, True
            self._precondition(r, z)
            rz_new = float(r @ z)
            p *= rz_new / rz
            p += z
            rz = rz_new
        return self.pcg_max_iterations, False
