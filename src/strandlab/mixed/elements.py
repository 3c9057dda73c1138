"""Mesh bookkeeping of the shell and solid elements, done once at build time (vectorised NumPy):
input checks that name the offending element, material constants, the standard vertex layout of
stencil DOFs, lumped vertex masses and the hinges of a triangle set; and the common base of the
element terms (output checks, the degenerate-stencil report).

Materials (SI): Young's modulus ``E`` [Pa], Poisson ratio ``nu`` (-1 < nu < 1/2), thickness
``t`` [m], density ``rho`` [kg/m^3].  Lame parameters ``mu = E / (2 (1 + nu))``,
``lambda = E nu / ((1 + nu)(1 - 2 nu))``; plane stress (membranes)
``lambda_ps = E nu / (1 - nu^2)``; plate bending stiffness ``D = E t^3 / (12 (1 - nu^2))``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..implicit.terms import StencilTerm, check_dofs

__all__ = [
    "ElementTerm",
    "check_positions",
    "check_simplices",
    "per_element",
    "vertex_dofs",
    "stencil_dofs",
    "lame",
    "plane_stress_lambda",
    "bending_stiffness",
    "lumped_masses",
    "triangle_hinges",
    "ELEMENT_PARALLEL_MIN_WORK",
]

#: Work (units of about 2 ns: :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK`) below
#: which the shell, solid and connection kernels run serially.  Their parallel twins took half
#: the serial time plus 50-70 us on the 2-core development machine (membranes, hinges,
#: tetrahedra and connections of the built-in objects, back to back: e.g. 330 tetrahedra
#: 147 us serial, 173 us parallel; 702 hinges 243 / 216 us; 1536 membrane triangles
#: 504 / 297 us), so two threads pay from about 150 us of serial work back to back; in a
#: step, between other work, the frisbee (80 000-135 000 units per kernel) still took 1.09
#: times as long a frame with two threads at that threshold, and 0.99 at 150 000; the sandwich,
#: whose 1368 tetrahedra (214 776 units) then ran in parallel (192 us against 281-329 us
#: serial, back to back), took 1.05 times as long a frame with two threads at 150 000 (its
#: scatter, serial, reads the Hessians the other core wrote), and 1.00 at this one (500 us).
ELEMENT_PARALLEL_MIN_WORK = 250000


# ------------------------------------------------------------------------------ checks
def check_positions(term: str, positions) -> np.ndarray:
    """``positions`` as float64 [V, 3], finite; ValueError naming the term and vertex."""
    x = np.ascontiguousarray(positions, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"{term}: rest positions must have shape [n_vertices, 3], got {x.shape}")
    bad = ~np.isfinite(x).all(axis=1)
    if bad.any():
        v = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{term}: rest position of vertex {v} is not finite: {x[v].tolist()}")
    return x


def check_simplices(term: str, what: str, simplices, n_vertices: int, k: int) -> np.ndarray:
    """``simplices`` as int64 [n, k] of distinct vertex indices in ``[0, n_vertices)``;
    ValueError naming the term and the first bad ``what`` (e.g. "triangle") otherwise."""
    s = np.asarray(simplices)
    if s.ndim != 2 or s.shape[1] != k:
        raise ValueError(f"{term}: {what}s must have shape [n, {k}], got {s.shape}")
    if s.size and not np.issubdtype(s.dtype, np.integer):
        raise ValueError(f"{term}: {what}s must hold integer vertex indices, got {s.dtype}")
    s = np.ascontiguousarray(s, dtype=np.int64)
    bad = ((s < 0) | (s >= n_vertices)).any(axis=1)
    srt = np.sort(s, axis=1)
    bad |= (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{term}: {what} {i} = {s[i].tolist()} must name {k} distinct vertices "
                         f"in [0, {n_vertices})")
    return s


def per_element(term: str, what: str, name: str, value, n: int, *, lo: float = 0.0,
                hi: float = np.inf, open_lo: bool = True, open_hi: bool = True) -> np.ndarray:
    """A scalar or [n] parameter as float64 [n] inside ``(lo, hi)`` (closed ends when
    ``open_lo`` / ``open_hi`` are False); ValueError naming the term, the parameter and the
    first bad element (``what`` e.g. "triangle") otherwise."""
    a = np.asarray(value, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{term}: {name} must be a scalar or have shape ({n},), got {a.shape}")
    ok = np.isfinite(a) & ((a > lo) if open_lo else (a >= lo)) & ((a < hi) if open_hi else
                                                                    (a <= hi))
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        rng = f"{'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
        raise ValueError(f"{term}: {name} of {what} {i} must be finite and in {rng}, got {a[i]!r}")
    return np.ascontiguousarray(a)


def vertex_dofs(simplices) -> np.ndarray:
    """Stencil DOFs of the standard layout ``q[3 v : 3 v + 3]`` = vertex ``v``: int64
    [n, 3 k] for simplices int [n, k] (slot ``3 i + c`` = coordinate ``c`` of vertex ``i``)."""
    s = np.asarray(simplices, dtype=np.int64)
    return np.ascontiguousarray((3 * s[:, :, None] + np.arange(3)).reshape(len(s), 3 * s.shape[1]))


def stencil_dofs(term: str, dofs, simplices: np.ndarray) -> np.ndarray:
    """``dofs`` (or the standard layout when None) as int64 [n, 3 k], checked."""
    d = vertex_dofs(simplices) if dofs is None else check_dofs(term, dofs)
    want = (len(simplices), 3 * simplices.shape[1])
    if d.shape != want:
        raise ValueError(f"{term}: dofs must have shape {want}, got {d.shape}")
    return d


# ------------------------------------------------------------------------------ materials
def lame(young, poisson):
    """``(mu, lambda)`` [Pa] of Young's modulus [Pa] and Poisson ratio (arrays or scalars)."""
    young = np.asarray(young, dtype=np.float64)
    poisson = np.asarray(poisson, dtype=np.float64)
    return (young / (2.0 * (1.0 + poisson)),
            young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson)))


def plane_stress_lambda(young, poisson):
    """``lambda_ps = E nu / (1 - nu^2)`` [Pa]: the membrane's first Lame parameter."""
    return np.asarray(young, dtype=np.float64) * poisson / (1.0 - np.square(poisson))


def bending_stiffness(young, poisson, thickness):
    """Plate bending stiffness ``D = E t^3 / (12 (1 - nu^2))`` [N m]."""
    return (np.asarray(young, dtype=np.float64) * np.power(thickness, 3)
            / (12.0 * (1.0 - np.square(poisson))))


# ------------------------------------------------------------------------------ masses
def _simplex_measure(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Area [m^2] of triangles or unsigned volume [m^3] of tetrahedra ``s`` of points ``x``."""
    d = x[s[:, 1:]] - x[s[:, :1]]
    if s.shape[1] == 3:
        return 0.5 * np.linalg.norm(np.cross(d[:, 0], d[:, 1]), axis=1)
    return np.abs(np.linalg.det(d)) / 6.0


def lumped_masses(rest_positions, *, triangles=None, thickness=None, shell_density=None,
                  tetrahedra=None, solid_density=None) -> np.ndarray:
    """Lumped vertex masses [kg], float64 [V]: each triangle gives ``rho t A / 3`` to each of
    its vertices, each tetrahedron ``rho V / 4`` (``A``, ``V`` the rest area and volume).

    rest_positions : [V, 3] [m].  triangles : int [T, 3] with ``thickness`` [m] and
    ``shell_density`` [kg/m^3] (scalars or [T]); tetrahedra : int [N, 4] with
    ``solid_density`` [kg/m^3] (scalar or [N]).  Rods and other parts add their own masses.
    """
    term = "lumped_masses"
    x = check_positions(term, rest_positions)
    mass = np.zeros(len(x))
    parts = (("triangle", triangles, 3, (("thickness", thickness), ("shell_density",
                                                                    shell_density))),
             ("tetrahedron", tetrahedra, 4, (("solid_density", solid_density),)))
    for what, simplices, k, params in parts:
        if simplices is None:
            continue
        s = check_simplices(term, what, simplices, len(x), k)
        per = _simplex_measure(x, s) / k
        for name, value in params:
            if value is None:
                raise ValueError(f"{term}: {what}s need {name}")
            per = per * per_element(term, what, name, value, len(s))
        mass += np.bincount(s.ravel(), weights=np.repeat(per, k), minlength=len(x))
    return mass


# ------------------------------------------------------------------------------ hinges
def triangle_hinges(triangles) -> tuple[np.ndarray, np.ndarray]:
    """The hinges of a triangle set: ``(hinges int [H, 4], pairs int [H, 2])``.

    Every edge shared by two or more triangles gives one hinge per pair of incident triangles
    (an edge of a non-manifold fan of ``c`` triangles gives ``c (c - 1) / 2`` hinges, each with
    the full stiffness: every pair's relative rotation is penalised).  Hinge ``(x0, x1, x2,
    x3)``: the edge ``x0 -> x1`` as the first triangle of the pair traverses it (so that
    triangle is ``(x0, x1, x2)`` up to a cyclic shift), ``x2`` and ``x3`` the two triangles'
    third vertices; ``pairs`` the two triangles' indices (first, second) in ``triangles``.
    For consistently oriented triangles the second one is ``(x1, x0, x3)`` and the hinge's
    angle (:mod:`strandlab.mixed.dihedral`) is 0 when they are coplanar.  Order: by edge (the
    sorted vertex pair), then by triangle index.
    """
    t = np.asarray(triangles, dtype=np.int64)
    if t.ndim != 2 or t.shape[1] != 3:
        raise ValueError(f"triangle_hinges: triangles must have shape [T, 3], got {t.shape}")
    n = len(t)
    # the three oriented edges of every triangle: (x_i, x_{i+1}) with opposite vertex x_{i+2}
    a = t.ravel()
    b = t[:, [1, 2, 0]].ravel()
    opp = t[:, [2, 0, 1]].ravel()
    tri = np.repeat(np.arange(n), 3)
    key = np.minimum(a, b) * (int(t.max(initial=0)) + 1) + np.maximum(a, b)
    order = np.lexsort((tri, key))
    key, a, b, opp, tri = key[order], a[order], b[order], opp[order], tri[order]
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    count = np.diff(np.r_[start, len(key)])
    rank = np.arange(len(key)) - np.repeat(start, count)   # position within its edge group
    grp_start = np.repeat(start, count)
    grp_count = np.repeat(count, count)
    hinges, pairs = [], []
    for i in range(int(count.max(initial=0))):
        first = np.flatnonzero(rank == i)
        for j in range(i + 1, int(count.max(initial=0))):
            f = first[grp_count[first] > j]
            o = grp_start[f] + j
            hinges.append(np.c_[a[f], b[f], opp[f], opp[o]])
            pairs.append(np.c_[tri[f], tri[o]])
    if not hinges:
        return np.zeros((0, 4), np.int64), np.zeros((0, 2), np.int64)
    h = np.concatenate(hinges)
    p = np.concatenate(pairs)
    srt = np.lexsort((p[:, 1], p[:, 0], np.minimum(h[:, 0], h[:, 1]) * (int(t.max()) + 1)
                      + np.maximum(h[:, 0], h[:, 1])))
    return np.ascontiguousarray(h[srt]), np.ascontiguousarray(p[srt])


# ------------------------------------------------------------------------------ term base
@njit(cache=True, error_model="numpy", _nrt=False)
def clear_stencil(s, e_out, g_out, H_out, want_hess):
    """Zero stencil ``s``'s energy, gradient and (when ``want_hess``) Hessian slots."""
    e_out[s] = 0.0
    g_out[s, :] = 0.0
    if want_hess:
        H_out[s, :, :] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False)
def mark_degenerate(s, e_out, g_out, H_out, want_hess):
    """Stencil ``s`` gets energy +inf and a zero gradient and Hessian; returns 1."""
    clear_stencil(s, e_out, g_out, H_out, want_hess)
    e_out[s] = np.inf
    return 1


class ElementTerm(StencilTerm):
    """Shared part of the element terms: output checks and, after each :meth:`evaluate`,
    ``n_degenerate`` (stencils with energy +inf) and ``first_degenerate`` (-1 if none)."""

    n_degenerate: int = 0
    first_degenerate: int = -1

    def _outputs(self, energy_out, grad_out, hess_out):
        """``(hess array, want_hess)`` after checking the output shapes."""
        n, k = self.dofs.shape
        shapes = ((energy_out, (n,)), (grad_out, (n, k))) + (
            () if hess_out is None else ((hess_out, (n, k, k)),))
        for arr, shape in shapes:
            if arr.shape != shape:
                raise ValueError(f"term {self.name!r}: an output has shape {arr.shape}, "
                                 f"expected {shape}")
        if hess_out is None:
            if getattr(self, "_no_hess", None) is None or self._no_hess.shape[1] != k:
                self._no_hess = np.empty((0, k, k))     # allocated once, not every step
            return self._no_hess, False
        return hess_out, True

    def _set_report(self, bad: int, energy_out: np.ndarray) -> None:
        self.n_degenerate = int(bad)
        self.first_degenerate = (int(np.flatnonzero(np.isinf(energy_out))[0]) if bad else -1)
