"""Toy models for the implicit integrator's tests: quadratic terms, springs, a system.

Written from the definitions, independently of the package except for the
:class:`~strandlab.implicit.terms.StencilTerm` base class they implement.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from strandlab.implicit import StencilTerm

__all__ = ["QuadraticTerm", "SpringTerm", "ToySystem", "dense_reference", "chain_springs",
           "objective"]


class QuadraticTerm(StencilTerm):
    """``E_s = 1/2 (x - x0_s)^T H_s (x - x0_s)``, ``x = q[dofs[s]]``: gradient ``H_s (x - x0_s)``,
    Hessian ``H_s`` (any symmetric [n, k, k])."""

    def __init__(self, dofs, hess, x0=None, name="quadratic"):
        self.name = name
        self.dofs = np.ascontiguousarray(dofs, dtype=np.int64)
        self.H = np.ascontiguousarray(hess, dtype=np.float64)
        self.x0 = np.zeros(self.dofs.shape) if x0 is None else np.asarray(x0, dtype=np.float64)

    def evaluate(self, q, energy_out, grad_out, hess_out):
        d = q[self.dofs] - self.x0
        g = np.einsum("sab,sb->sa", self.H, d)
        energy_out[:] = 0.5 * np.einsum("sa,sa->s", d, g)
        grad_out[:] = g
        if hess_out is not None:
            hess_out[:] = self.H


def spring_stencil(q, dofs, s, k, rest, energy, grad, hess, want_hess):
    """One spring ``1/2 k (l - L)^2`` between the 3D points at ``dofs[s, 0:3]`` and
    ``dofs[s, 3:6]``; returns 1 for a zero-length spring, else 0."""
    dx = q[dofs[s, 3]] - q[dofs[s, 0]]
    dy = q[dofs[s, 4]] - q[dofs[s, 1]]
    dz = q[dofs[s, 5]] - q[dofs[s, 2]]
    l = math.sqrt(dx * dx + dy * dy + dz * dz)
    if l == 0.0:
        return 1
    u0 = dx / l
    u1 = dy / l
    u2 = dz / l
    energy[s] = 0.5 * k * (l - rest) * (l - rest)
    f = k * (l - rest)
    grad[s, 0] = -f * u0
    grad[s, 1] = -f * u1
    grad[s, 2] = -f * u2
    grad[s, 3] = f * u0
    grad[s, 4] = f * u1
    grad[s, 5] = f * u2
    if want_hess:
        t = k * (1.0 - rest / l)
        for a in range(3):
            ua = u0 if a == 0 else (u1 if a == 1 else u2)
            for b in range(3):
                ub = u0 if b == 0 else (u1 if b == 1 else u2)
                val = k * ua * ub + t * ((1.0 if a == b else 0.0) - ua * ub)
                hess[s, a, b] = val
                hess[s, a + 3, b + 3] = val
                hess[s, a, b + 3] = -val
                hess[s, a + 3, b] = -val
    return 0


_spring = numba.njit(cache=True)(spring_stencil)


@numba.njit(cache=True)
def _springs(q, dofs, k, rest, energy, grad, hess, want_hess):
    bad = 0
    for s in range(dofs.shape[0]):
        bad += _spring(q, dofs, s, k[s], rest[s], energy, grad, hess, want_hess)
    return bad


class SpringTerm(StencilTerm):
    """Springs between 3D points (point ``i`` has DOFs ``3 i .. 3 i + 2``)."""

    def __init__(self, pairs, stiffness, rest, name="springs", system=None):
        self.name = name
        p = np.asarray(pairs, dtype=np.int64)
        self.dofs = np.concatenate([3 * p[:, :1] + np.arange(3), 3 * p[:, 1:] + np.arange(3)],
                                   axis=1)
        self.k = np.broadcast_to(np.asarray(stiffness, float), (len(p),)).copy()
        self.rest = np.broadcast_to(np.asarray(rest, float), (len(p),)).copy()
        self.system = system  # checks that prepare(q) came first
        self._dummy = np.zeros((1, 6, 6))

    def evaluate(self, q, energy_out, grad_out, hess_out):
        if self.system is not None:
            self.system.check_prepared(q)
        want = hess_out is not None
        _springs(q, self.dofs, self.k, self.rest, energy_out, grad_out,
                 hess_out if want else self._dummy, want)


class ToySystem:
    """An ImplicitSystem: given terms, mass and blocks; records the hook calls."""

    def __init__(self, n_dofs, mass, terms, block_start):
        self.n_dofs = int(n_dofs)
        self.mass = np.asarray(mass, dtype=np.float64)
        self.terms = list(terms)
        self.block_start = np.asarray(block_start, dtype=np.int64)
        self.begin_calls = 0
        self.prepare_calls = 0
        self.unprepared = 0
        self.track = True  # keep a copy of the prepared q (off for allocation checks)
        self._prepared = None

    def begin_step(self, q):
        self.begin_calls += 1

    def prepare(self, q):
        self.prepare_calls += 1
        if self.track:
            self._prepared = q.copy()

    def check_prepared(self, q):
        if self._prepared is None or not np.array_equal(self._prepared, q):
            self.unprepared += 1


def chain_springs(n_chains, n_points, *, k=50.0, rest=0.1):
    """Pairs of ``n_chains`` independent chains of ``n_points`` points each."""
    pairs = [(c * n_points + i, c * n_points + i + 1) for c in range(n_chains)
             for i in range(n_points - 1)]
    return np.array(pairs), k, rest


def dense_reference(n, terms_dofs, terms_hess):
    """Dense scatter of per-stencil Hessians with np.add.at (reference)."""
    K = np.zeros((n, n))
    for d, h in zip(terms_dofs, terms_hess):
        for s in range(d.shape[0]):
            np.add.at(K, (d[s][:, None], d[s][None, :]), h[s])
    return K


def objective(terms, q, qhat, qn, mass, h, c=0.0, f=None, free=None):
    """Phi of the backward Euler step (docs/implicit.md), computed from the definitions."""
    free = np.ones(len(q), bool) if free is None else free
    e = 0.0
    for t in terms:
        n, k = t.dofs.shape
        en, g = np.zeros(n), np.zeros((n, k))
        t.evaluate(q, en, g, None)
        e += en.sum()
    dh, dn = (q - qhat)[free], (q - qn)[free]
    m = mass[free]
    phi = 0.5 / h**2 * np.sum(m * dh * dh) + e + 0.5 * c / h * np.sum(m * dn * dn)
    if f is not None:
        phi -= np.dot(f[free], q[free])
    return phi


def chain_solver(n, diag, **options):
    """A SparseSolver on a chain of ``n`` unit springs (``Hessian [[1, -1], [-1, 1]]`` per
    link), one block, assembled with ``diag`` [n] added; options go to the solver."""
    from strandlab.implicit import Assembly, SparseSolver

    d = np.c_[np.arange(n - 1), np.arange(1, n)]
    H = np.tile(np.array([[1.0, -1.0], [-1.0, 1.0]]), (n - 1, 1, 1))
    asm = Assembly([QuadraticTerm(d, H)], n, np.array([0, n]))
    asm.evaluate(np.zeros(n), hessian=True)
    sol = SparseSolver(asm, **options)
    sol.assemble(hess_scale=1.0, diagonal=np.asarray(diag, dtype=float))
    return sol
