"""Shared implicit integrator: backward Euler (or BDF2) by Newton's method over generic energy
terms.

A model describes itself as an :class:`ImplicitSystem` (``n_dofs``, diagonal ``mass``,
``terms``: :class:`StencilTerm` energies summed over stencils, ``block_start``: independent
DOF blocks, and the hooks ``begin_step(q)`` / ``prepare(q)``); :class:`ImplicitEuler` steps it,
:func:`static_equilibrium` finds its rest state.  The integrator knows nothing of the model
beyond these members.  Modules:

- :mod:`.terms`: the stencil-term interface;
- :mod:`.assembly`: per-term buffers, block grouping, race-free deterministic scatters;
- :mod:`.linear`: the linear solver interface, regularisation, :func:`make_linear_solver`;
- :mod:`.banded`: per-block banded Cholesky (independent blocks);
- :mod:`.sparse`: sparse direct solver (coupled blocks, rings);
- :mod:`.integrator`: the objective, damping, Newton, Dirichlet DOFs.

See ``docs/implicit.md``.
"""
from .assembly import Assembly
from .banded import BandedSolver
from .integrator import (
    BDF2_MAX_RATIO,
    ImplicitEuler,
    ImplicitStepError,
    ImplicitSystem,
    NewtonSettings,
    StepInfo,
    bdf2_coefficients,
    static_equilibrium,
)
from .linear import FactorInfo, LinearSolveError, LinearSolver, make_linear_solver
from .newton import NotConvergedWarning, warn_not_converged
from .sparse import SparseSolver
from .terms import StencilTerm, check_dofs

__all__ = ["ImplicitSystem", "ImplicitEuler", "NewtonSettings", "StepInfo", "ImplicitStepError",
           "static_equilibrium", "StencilTerm", "check_dofs", "Assembly", "LinearSolver",
           "LinearSolveError", "FactorInfo", "make_linear_solver", "BandedSolver",
           "SparseSolver", "bdf2_coefficients", "BDF2_MAX_RATIO", "NotConvergedWarning",
           "warn_not_converged"]
