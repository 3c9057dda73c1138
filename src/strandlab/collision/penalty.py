"""Contacts with the scene's static colliders inside the implicit solve: a penalty term.

Each vertex is a ball of its section radius ``r``; against every collider (plane, sphere,
capsule; :func:`strandlab.collision.analytic.collider_gap`) with gap ``g`` from its surface,

    E = 1/2 k (g - r)^2  where g < r, else 0,

with ``k`` [N/m] per vertex.  The gradient is ``k (g - r) n`` and the Hessian
``k [n n^T + (g - r) dn/dx]`` (the second part is the surface's curvature: zero for planes,
``(g - r) / rho (I - n n^T)`` for spheres of centre distance ``rho``; dropped by ``project``,
which keeps the Hessian positive semi-definite).

Why in the solve (shown on discrete elastic rods): after a step, the vertices found inside a
collider are pushed out (:mod:`strandlab.der.contact`); alone, that push fights the stiff
stretching and bending of the strand, which the next implicit step undoes, and a coiled strand
pressed on a head gains strain each step until the run stops.  With the penalty, the solve sees
the contact force and moves the neighbours with it; the push is then a small correction.  The
term is active only where the step starts in contact (one Newton iteration evaluates it at the
step's start), so a vertex reaching a collider during a step is caught by the push, and held by
the penalty from the next step on.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..implicit.assembly import use_parallel
from ..implicit.terms import StencilTerm, check_dofs
from .analytic import collider_gap, n_colliders

__all__ = ["ContactTerm", "contact_stiffness"]

#: Serial cost of one vertex stencil per collider, in the work units of
#: :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK`.
CONTACT_TERM_WORK = 12


@njit(cache=True, error_model="numpy")
def _add_contact(s, q, dofs, rad, k, project, planes, spheres, capsules, e_out, g_out, H_out,
                 want_hess):
    """Add the penalty of vertex stencil ``s`` against every collider; returns 1 if any is
    active."""
    d = dofs[s, 0]
    px, py, pz = q[d], q[d + 1], q[d + 2]
    active = 0
    for c in range(n_colliders(planes, spheres, capsules)):
        g, nx, ny, nz, cv, ux, uy, uz = collider_gap(c, px, py, pz, planes, spheres, capsules)
        pen = g - rad[s]
        if pen >= 0.0 or (nx == 0.0 and ny == 0.0 and nz == 0.0):
            continue
        active = 1
        e_out[s] += 0.5 * k[s] * pen * pen
        g_out[s, 0] += k[s] * pen * nx
        g_out[s, 1] += k[s] * pen * ny
        g_out[s, 2] += k[s] * pen * nz
        if want_hess:
            curv = 0.0 if project else k[s] * pen * cv
            for a in range(3):
                na = nx if a == 0 else (ny if a == 1 else nz)
                ua = ux if a == 0 else (uy if a == 1 else uz)
                for b in range(3):
                    nb = nx if b == 0 else (ny if b == 1 else nz)
                    ub = ux if b == 0 else (uy if b == 1 else uz)
                    eye = 1.0 if a == b else 0.0
                    H_out[s, a, b] += k[s] * na * nb + curv * (eye - na * nb - ua * ub)
    return active


@njit(cache=True, error_model="numpy")
def _clear3(s, e_out, g_out, H_out, want_hess):
    e_out[s] = 0.0
    for a in range(3):
        g_out[s, a] = 0.0
        if want_hess:
            for b in range(3):
                H_out[s, a, b] = 0.0


@njit(cache=True, parallel=True, error_model="numpy")
def contact_terms(q, dofs, rad, k, project, planes, spheres, capsules, e_out, g_out, H_out,
                  want_hess):
    """Penalty of every vertex stencil (module docstring); returns the number in contact."""
    n = 0
    for s in prange(dofs.shape[0]):
        _clear3(s, e_out, g_out, H_out, want_hess)
        n += _add_contact(s, q, dofs, rad, k, project, planes, spheres, capsules, e_out, g_out,
                          H_out, want_hess)
    return n


@njit(cache=True, error_model="numpy")
def contact_terms_serial(q, dofs, rad, k, project, planes, spheres, capsules, e_out, g_out,
                         H_out, want_hess):
    """Serial twin of :func:`contact_terms`."""
    n = 0
    for s in range(dofs.shape[0]):
        _clear3(s, e_out, g_out, H_out, want_hess)
        n += _add_contact(s, q, dofs, rad, k, project, planes, spheres, capsules, e_out, g_out,
                          H_out, want_hess)
    return n


def contact_stiffness(n_vertices: int, edge_v0, edge_v1, stretch_stiffness, rest_length,
                      factor: float) -> np.ndarray:
    """``factor`` times the axial spring constant ``k_s / lbar`` [N/m] of the edges at each
    vertex (summed over its one or two edges), float64 [n_vertices]: a contact as stiff as
    the strand's own stretching, whatever the time step."""
    k = np.zeros(n_vertices)
    spring = np.asarray(stretch_stiffness, dtype=np.float64) / np.asarray(rest_length)
    np.add.at(k, np.asarray(edge_v0), spring)
    np.add.at(k, np.asarray(edge_v1), spring)
    return factor * k


class ContactTerm(StencilTerm):
    """Penalty contacts of vertices with static colliders (module docstring).

    dofs : int [S, 3], the ``x`` slots of each vertex in ``q``.
    radius : ball radius of each vertex [m], [S], >= 0.
    stiffness : k [N/m], [S], > 0.
    planes [P, 6], spheres [Q, 4], capsules [C, 7] : the colliders
        (:mod:`strandlab.collision.analytic`).
    project : drop the curvature part of the Hessian (default True).
    ``n_active`` : vertices in contact at the last evaluation.
    """

    def __init__(self, *, dofs, radius, stiffness, planes, spheres, capsules,
                 project: bool = True, name: str = "contact"):
        self.name = name
        self.dofs = check_dofs(name, dofs)
        if self.dofs.shape[1] != 3:
            raise ValueError(f"term {name!r}: contact stencils have 3 slots, got "
                             f"{self.dofs.shape[1]}")
        n = self.dofs.shape[0]
        self.radius = _values(name, "radius", radius, n, lambda a: a >= 0.0, ">= 0")
        self.stiffness = _values(name, "stiffness", stiffness, n, lambda a: a > 0.0, "> 0")
        self.planes = np.ascontiguousarray(planes, dtype=np.float64).reshape(-1, 6)
        self.spheres = np.ascontiguousarray(spheres, dtype=np.float64).reshape(-1, 4)
        self.capsules = np.ascontiguousarray(capsules, dtype=np.float64).reshape(-1, 7)
        self.project = bool(project)
        self.n_active = 0

    def evaluate(self, q, energy_out, grad_out, hess_out):
        want = hess_out is not None
        h = hess_out if want else np.zeros((0, 3, 3))
        work = len(self.dofs) * CONTACT_TERM_WORK * max(1, n_colliders(
            self.planes, self.spheres, self.capsules))
        kern = contact_terms if use_parallel(2, work) else contact_terms_serial
        self.n_active = int(kern(q, self.dofs, self.radius, self.stiffness, self.project,
                                 self.planes, self.spheres, self.capsules, energy_out, grad_out,
                                 h, want))


def _values(term, what, values, n, ok, rule) -> np.ndarray:
    a = np.ascontiguousarray(values, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError(f"term {term!r}: {what} must have shape {(n,)}, got {a.shape}")
    bad = ~(np.isfinite(a) & ok(a))
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"term {term!r}: {what} of stencil {s} must be finite and {rule}, "
                         f"got {a[s]!r}")
    return a
