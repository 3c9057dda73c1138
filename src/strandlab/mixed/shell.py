"""Shell energies of the mixed model: St. Venant-Kirchhoff membrane triangles and hinge bending
(Grinspun et al. 2003), as :class:`~strandlab.implicit.terms.StencilTerm` s.

Membrane (:class:`ShellMembraneTerm`, one stencil per triangle, 9 slots ``(x0, x1, x2)``): the
constant-strain triangle of :mod:`strandlab.mixed.stvk` with ``d = 2``.  The rest frame of a
triangle ``(X0, X1, X2)``: ``u = (X1 - X0) / |X1 - X0|``, ``v = n x u`` with ``n`` its unit
normal; ``Dm = [[u . (X1 - X0), u . (X2 - X0)], [v . (X1 - X0), v . (X2 - X0)]]``.  Energy

    W = A t (mu tr(E^2) + lambda_ps / 2 tr(E)^2),   E = (F^T F - I) / 2,  F = Ds Dm^-1 [3, 2]

with ``A`` the rest area [m^2], ``t`` the thickness [m], ``mu = E / (2 (1 + nu))`` and the
plane-stress ``lambda_ps = E nu / (1 - nu^2)`` [Pa].

Bending (:class:`ShellBendingTerm`, one stencil per hinge, 12 slots ``(x0, x1, x2, x3)``: the
edge ``x0 -> x1`` and the wings, angle theta of :mod:`strandlab.mixed.dihedral`):

    E_b = k (theta - theta_bar)^2 |e_bar|^2 / A_bar,    k = D / 2,  D = E t^3 / (12 (1 - nu^2))

with ``k`` [N m], ``|e_bar|`` the rest edge length, ``A_bar`` the sum of the two rest
triangles' areas and ``theta - theta_bar`` taken in [-pi, pi) (so a hinge folded by nearly pi
at rest does not see the branch cut of theta).  The constant: on a mesh of equilateral
triangles of side ``l`` bent into a cylinder of curvature ``kappa``, an edge at angle ``phi``
from the direction of curvature has ``theta = kappa l (4 sin^2(phi) - 1) / (2 sqrt(3))`` to
leading order (the wings rise ``kappa sin^2(phi) h^2 / 2`` above the tangent plane, the edge's
end points ``kappa cos^2(phi) l^2 / 8``, ``h`` the triangle height), ``|e|^2 / A_bar =
2 / sqrt(3)`` and there are ``2 / (sqrt(3) l^2)`` edges of each of the three directions per unit
area; ``sum (4 sin^2(phi) - 1)^2 = 9`` over three directions 60 degrees apart, whatever the
orientation, so ``sum (theta^2 |e|^2 / A_bar)`` is ``kappa^2`` per unit area and ``k = D / 2``
stores the plate energy of cylindrical bending, ``D / 2 kappa^2`` per unit area.
tests/mixed/test_mixed_shell.py measures it converging on tubes of both orientations.  Other
meshes store a mesh-dependent multiple of it, as hinge bending does.

A hinge whose current triangles are degenerate (a zero-length edge or a zero-area triangle, no
angle) gets energy +inf and a zero gradient and Hessian, so that a line search backs off;
``n_degenerate`` / ``first_degenerate`` say which after each evaluation.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..implicit.assembly import use_parallel
from .dihedral import dihedral_gradient, wrap_angle, write_hinge_hessian
from .elements import (
    ELEMENT_PARALLEL_MIN_WORK,
    ElementTerm,
    bending_stiffness,
    check_positions,
    check_simplices,
    lame,
    mark_degenerate,
    per_element,
    plane_stress_lambda,
    stencil_dofs,
    triangle_hinges,
)
from .stvk import StVKTerm

__all__ = ["ShellMembraneTerm", "ShellBendingTerm", "hinge_terms", "hinge_terms_serial",
           "rest_dihedral_angles", "ZERO_AREA"]

#: A rest triangle is degenerate when ``2 A <= ZERO_AREA * (longest edge)^2`` (collinear to
#: rounding); thinner slivers are accepted.
ZERO_AREA = 1e-12

#: Serial cost of one hinge with and without the Hessian (work units of
#: :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK`, about 2 ns each): 0.27 and 0.07 us
#: measured on the development machine (docs/mixed.md).
HINGE_WORK = (135, 35)

_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}


# ------------------------------------------------------------------------------ rest geometry
def _triangle_frames(x: np.ndarray, tri: np.ndarray):
    """Rest edge vectors ``X1 - X0``, ``X2 - X0``, normals, doubled areas [m^2] and the
    zero-area mask of triangles ``tri`` [n, 3]."""
    d1 = x[tri[:, 1]] - x[tri[:, 0]]
    d2 = x[tri[:, 2]] - x[tri[:, 0]]
    n = np.cross(d1, d2)
    twice_area = np.linalg.norm(n, axis=1)
    longest = np.max(np.linalg.norm(np.stack([d1, d2, d2 - d1], axis=1), axis=2), axis=1)
    return d1, d2, n, twice_area, ~(twice_area > ZERO_AREA * longest**2)


def _zero_area(term: str, what: str, bad: np.ndarray, vertices: np.ndarray, x: np.ndarray):
    """ValueError naming the first element flagged in ``bad`` [n]."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{term}: {what} {i} has zero rest area (vertices "
                         f"{vertices[i].tolist()} at {x[vertices[i]].tolist()})")


def rest_dihedral_angles(rest_positions, hinges) -> np.ndarray:
    """Signed dihedral angles [rad] of hinges int [H, 4] at positions [V, 3] (the convention of
    :mod:`strandlab.mixed.dihedral`), vectorised."""
    x = np.asarray(rest_positions, dtype=np.float64)
    h = np.asarray(hinges, dtype=np.int64)
    e = x[h[:, 1]] - x[h[:, 0]]
    a = x[h[:, 2]] - x[h[:, 0]]
    b = x[h[:, 3]] - x[h[:, 0]]
    na = np.cross(e, a)
    nb = np.cross(b, e)
    return np.arctan2(-np.linalg.norm(e, axis=1) * np.einsum("ij,ij->i", a, nb),
                      np.einsum("ij,ij->i", na, nb))


# ------------------------------------------------------------------------------ membrane
class ShellMembraneTerm(StVKTerm):
    """StVK membrane triangles (module docstring).

    rest_positions : [V, 3] [m], the rest shape (need not be planar as a whole).
    triangles : int [T, 3].
    young [Pa] > 0, poisson in (-1, 1/2), thickness [m] > 0 : scalars or [T].
    dofs : int [T, 9] (``q`` slots of ``(x0, x1, x2)``); default the standard layout
        ``q[3 v : 3 v + 3]`` = vertex ``v`` (:func:`~strandlab.mixed.elements.vertex_dofs`).

    ValueError names the triangle for a zero-area rest triangle, repeated or out-of-range
    vertices and a bad parameter; the vertex for a non-finite position.
    """

    def __init__(self, *, rest_positions, triangles, young, poisson, thickness, dofs=None,
                 name: str = "shell_membrane"):
        self.name = name
        x = check_positions(f"term {name!r}", rest_positions)
        tri = check_simplices(f"term {name!r}", "triangle", triangles, len(x), 3)
        n = len(tri)
        young, poisson, thickness = _materials(name, "triangle", n, young, poisson, thickness)
        d1, d2, nrm, twice_area, bad = _triangle_frames(x, tri)
        _zero_area(f"term {name!r}", "triangle", bad, tri, x)
        u = d1 / np.linalg.norm(d1, axis=1)[:, None]
        v = np.cross(nrm / twice_area[:, None], u)
        dm = np.stack([np.stack([np.einsum("ij,ij->i", u, d1), np.einsum("ij,ij->i", u, d2)],
                                axis=1),
                       np.stack([np.einsum("ij,ij->i", v, d1), np.einsum("ij,ij->i", v, d2)],
                                axis=1)], axis=1)
        inv = np.linalg.inv(dm)                          # rows beta_1, beta_2
        beta = np.concatenate([-(inv[:, :1, :] + inv[:, 1:, :]), inv], axis=1)
        mu, _ = lame(young, poisson)
        self._setup(stencil_dofs(f"term {name!r}", dofs, tri), beta,
                    0.5 * twice_area * thickness, mu, plane_stress_lambda(young, poisson))
        self.triangles = tri
        self.rest_area = 0.5 * twice_area


def _materials(name, what, n, young, poisson, thickness):
    term = f"term {name!r}"
    return (per_element(term, what, "young", young, n),
            per_element(term, what, "poisson", poisson, n, lo=-1.0, hi=0.5),
            per_element(term, what, "thickness", thickness, n))


# ------------------------------------------------------------------------------ bending
@njit(**_OPTS)
def _vertex(q_in, dofs, s, i):
    return (q_in[dofs[s, 3 * i]], q_in[dofs[s, 3 * i + 1]], q_in[dofs[s, 3 * i + 2]])


@njit(**_OPTS)
def hinge_stencil(s, q_in, dofs, rest_angle, weight, e_out, g_out, H_out, want_hess):
    """Hinge stencil ``s``: ``w (theta - theta_bar)^2`` with its gradient and Hessian overwrite
    its output slots; returns 1 for a degenerate hinge (energy +inf), else 0."""
    x0 = _vertex(q_in, dofs, s, 0)
    x1 = _vertex(q_in, dofs, s, 1)
    x2 = _vertex(q_in, dofs, s, 2)
    x3 = _vertex(q_in, dofs, s, 3)
    theta, g0, g1, g2, g3, ok = dihedral_gradient(x0, x1, x2, x3)
    if not ok:
        return mark_degenerate(s, e_out, g_out, H_out, want_hess)
    d = wrap_angle(theta - rest_angle[s])
    w = weight[s]
    e_out[s] = w * d * d
    k = 2.0 * w * d
    for i in range(3):
        g_out[s, i] = k * g0[i]
        g_out[s, 3 + i] = k * g1[i]
        g_out[s, 6 + i] = k * g2[i]
        g_out[s, 9 + i] = k * g3[i]
    if want_hess:
        write_hinge_hessian(x0, x1, x2, x3, 2.0 * w, 2.0 * w * d, g0, g1, g2, g3, H_out, s)
    return 0


@njit(cache=True, parallel=True, error_model="numpy")
def hinge_terms(q_in, dofs, rest_angle, weight, e_out, g_out, H_out, want_hess):
    """Hinge bending of every stencil (parallel over stencils).

    q_in [N]; dofs int [S, 12]; rest_angle [S] [rad]; weight ``k |e_bar|^2 / A_bar`` [S] [J];
    e_out [S] [J], g_out [S, 12] [N], H_out [S, 12, 12] [N/m] (empty [0, 12, 12] when not
    ``want_hess``).  Returns the number of degenerate stencils."""
    bad = 0
    for s in prange(dofs.shape[0]):
        bad += hinge_stencil(s, q_in, dofs, rest_angle, weight, e_out, g_out, H_out, want_hess)
    return bad


@njit(cache=True, error_model="numpy")
def hinge_terms_serial(q_in, dofs, rest_angle, weight, e_out, g_out, H_out, want_hess):
    """Serial twin of :func:`hinge_terms`."""
    bad = 0
    for s in range(dofs.shape[0]):
        bad += hinge_stencil(s, q_in, dofs, rest_angle, weight, e_out, g_out, H_out, want_hess)
    return bad


class ShellBendingTerm(ElementTerm):
    """Hinge bending (module docstring).

    rest_positions : [V, 3] [m].
    hinges : int [H, 4], ``(x0, x1, x2, x3)``: edge ``x0 -> x1``, wings ``x2``, ``x3``
        (:func:`~strandlab.mixed.elements.triangle_hinges` lists them for a triangle set).
    young [Pa] > 0, poisson in (-1, 1/2), thickness [m] > 0 : scalars or [H]; the stiffness is
        ``k = D / 2 = E t^3 / (24 (1 - nu^2))`` [N m].
    rest_angle : theta_bar [rad], scalar or [H]; default the rest positions' angles.
    dofs : int [H, 12]; default the standard layout ``q[3 v : 3 v + 3]`` = vertex ``v``.

    Attributes ``rest_angle`` [H] [rad], ``weight`` = ``k |e_bar|^2 / A_bar`` [H] [J].
    ValueError names the hinge for a zero-area rest triangle, repeated or out-of-range vertices
    and a bad parameter.
    """

    def __init__(self, *, rest_positions, hinges, young, poisson, thickness, rest_angle=None,
                 dofs=None, name: str = "shell_bending"):
        self.name = name
        term = f"term {name!r}"
        x = check_positions(term, rest_positions)
        h = check_simplices(term, "hinge", hinges, len(x), 4)
        n = len(h)
        young, poisson, thickness = _materials(name, "hinge", n, young, poisson, thickness)
        *_, twice_a, bad_a = _triangle_frames(x, h[:, [0, 1, 2]])
        *_, twice_b, bad_b = _triangle_frames(x, h[:, [1, 0, 3]])
        _zero_area(term, "hinge", bad_a | bad_b, h, x)
        edge2 = np.sum((x[h[:, 1]] - x[h[:, 0]]) ** 2, axis=1)
        self.dofs = stencil_dofs(term, dofs, h)
        self.hinges = h
        k = 0.5 * bending_stiffness(young, poisson, thickness)
        self.weight = np.ascontiguousarray(k * edge2 / (0.5 * (twice_a + twice_b)))
        self.rest_angle = (rest_dihedral_angles(x, h) if rest_angle is None else
                           per_element(term, "hinge", "rest_angle", rest_angle, n,
                                       lo=-np.inf, hi=np.inf, open_lo=False, open_hi=False))

    @classmethod
    def from_triangles(cls, *, rest_positions, triangles, young, poisson, thickness,
                       name: str = "shell_bending"):
        """The hinges of ``triangles`` int [T, 3] (:func:`~strandlab.mixed.elements.
        triangle_hinges`, standard layout, rest angles from ``rest_positions``); ``young``,
        ``poisson``, ``thickness`` scalars or per triangle [T]: each hinge takes the mean of its
        two triangles' ``k``, expressed as per-hinge ``young`` with the first triangle's
        ``poisson`` and ``thickness``."""
        term = f"term {name!r}"
        x = check_positions(term, rest_positions)
        tri = check_simplices(term, "triangle", triangles, len(x), 3)
        young, poisson, thickness = _materials(name, "triangle", len(tri), young, poisson,
                                               thickness)
        hinges, pairs = triangle_hinges(tri)
        d = bending_stiffness(young, poisson, thickness)
        first = pairs[:, 0]
        scale = 0.5 * (d[pairs[:, 0]] + d[pairs[:, 1]]) / d[first]
        return cls(rest_positions=x, hinges=hinges, young=young[first] * scale,
                   poisson=poisson[first], thickness=thickness[first], name=name)

    def evaluate(self, q, energy_out, grad_out, hess_out):
        h, want = self._outputs(energy_out, grad_out, hess_out)
        work = len(self.dofs) * HINGE_WORK[0 if want else 1]
        kern = hinge_terms if use_parallel(2, work, min_work=ELEMENT_PARALLEL_MIN_WORK) \
            else hinge_terms_serial
        bad = kern(q, self.dofs, self.rest_angle, self.weight, energy_out, grad_out, h, want)
        self._set_report(bad, energy_out)
