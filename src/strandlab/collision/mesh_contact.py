"""Contact of triangle meshes with themselves and each other: a penalty in the implicit solve.

Model.  For every candidate pair, a point against a triangle or an edge against an edge (four
vertices, 12 DOFs), with unsigned distance ``d`` (:mod:`.triangle_distance`),

    E = k/2 (dhat - d)^2  for d < dhat, else 0,

C1 in ``d``: the force ``k (dhat - d)`` along the closest-point direction rises from zero at
``d = dhat``.  ``dhat`` [m] is the contact thickness (for shells at least their half
thicknesses, so that surfaces stop ``dhat`` apart).  This is a penalty, not the collision
processing of Bridson et al. 2002 (the reference of the mixed rod/shell/solid model): it acts
inside the Newton solve of each backward Euler step and needs no post-step velocity fix.

Stiffness.  Each vertex has a stiffness ``k_v`` [N/m] (the mixed model's: a multiple of its
stiffest axial spring) and a stiffening factor ``s_v`` >= 1 (1 at the start).  A pair's two
sides (the point and the triangle, or the two edges) act as springs in series, each as stiff as
its stiffest vertex: ``k = s k_a k_b / (k_a + k_b)``, ``s`` the largest factor of the pair's
four vertices.  So a soft cloth on a stiff solid pushes with about the cloth's stiffness: with
the stiffer side's (the rule before), a cloth of ``E t`` = 4 N/m landing on a rubber block at
steps of a frame met a penalty 550 times its own stiffness and Newton stalled (docs/mixed.md,
"Contact").  A heavy or fast body then sinks deeper into a soft side's penalty, so the penalty
adapts, as the barrier stiffness of IPC (Li et al. 2020) does: :meth:`MeshContactTerm.stiffen`,
called at the end of each step, multiplies the factor of every vertex of a pair closer than
:data:`CLOSE_FRACTION` ``dhat`` by :data:`STIFFEN_FACTOR` (at most :data:`MAX_STIFFENING`).
Factors never decrease; a checkpoint keeps them (:meth:`MeshContactTerm.list_state`).

Derivatives.  With ``f = d^2``: ``grad E = -k (dhat - d) / (2 d) grad f`` and
``hess E = k dhat / (4 d^3) grad f grad f^T - k (dhat - d) / (2 d) hess f``.  The second part
can make the 12 x 12 block indefinite (point-point and point-edge contacts curve away);
``project=True`` (the default) keeps the Gauss-Newton part ``k grad d grad d^T =
k / (4 d^2) grad f grad f^T`` only, positive semi-definite whatever the configuration; the
gradient is exact either way.  At ``d <= 1e-12 dhat`` the direction is undefined: the stencil
keeps its energy and gives no force (a surface crossed exactly is not pushed either way).

Parallel edges.  The edge-edge distance has a kink where the edges are parallel (the closest
points jump along them), so, as in IPC (Li et al. 2020), an edge-edge penalty ``P`` is
multiplied by the mollifier ``m(s) = (2 - s / kappa) s / kappa`` of ``s = sin^2`` of the edges'
angle below ``kappa =`` :data:`PARALLEL_MOLLIFIER` (1e-3, 1.8 degrees; ``m = 1`` above, C1,
zero for parallel edges), product rule included (``project`` keeps ``m`` times the
Gauss-Newton part).  Parallel edges in contact are held by the point-triangle pairs of their
vertices.

Candidates.  :meth:`MeshContactTerm.update` rebuilds the pair list: every point-triangle pair
and edge-edge pair closer than its reach ``dhat + m_A + m_B`` (:mod:`.mesh_pairs`, "Reach"),
with ``m_v`` [m] (the vertices' ``margins``) a bound on how far vertex ``v`` moves from where it
was at the update while the list is used, so that every pair that comes within ``dhat`` is in
the list.  :meth:`MeshContactTerm.excess` measures how far a vertex went beyond its margin, so a
caller can keep a list over several steps (a Verlet list) and check after each solve that no
vertex left its margin: a step that did may have missed a pair, and a surface moving more than
its reach across another in one step tunnels through it (an unsigned penalty pushes a crossed
vertex on through).  The mixed solver (:mod:`strandlab.mixed.solver`) gives each vertex a
margin from its own predicted displacement (a surface mostly at rest with a fast rim lists
few pairs), rebuilds when a vertex's predicted displacement would leave its margin, and steps
again from the step's start with a wider margin when a solve left it.  Never pairs: a vertex
and a triangle that contains it; two edges that share a vertex.

Moves.  An unsigned penalty does not know on which side a surface was: a vertex that jumps
across a triangle within one Newton move (a cloth falling faster than ``dhat`` per step; the
inertial first iterate ``q_n + h v_n``) is pushed on through.  The term therefore limits the
integrator's moves (``limits_step``, :meth:`MeshContactTerm.max_step`): along a move ``q + t
dq``, ``t`` in [0, 1], each listed pair is advanced by additive continuous collision detection
(ACCD, Li, Kaufman and Jiang 2021): with ``l`` the bound on how fast the pair's distance can
shrink (the largest displacement of the point side plus that of the triangle side, or of the
two edges, after removing the four vertices' mean displacement, which the distance ignores), it
steps ``t`` by ``0.9 d / l`` (``(1 - s) d_0 / l`` first) from the distance ``d`` reached, each
step provably keeping ``d > 0``, and stops at the last ``t`` where ``d >= s d_0``,
``s`` = :data:`MOVE_KEEP` (0.1), or at 1 (``d_0 / l >= 1 / (1 - s)``: one distance per pair).
The move is cut to the smallest ``t`` of the pairs.  No listed pair's surfaces ever pass through
each other, whatever the speed, stiffness or step; the list's margin (above) covers the pairs
not listed.

Broad phase: :mod:`.mesh_pairs` (a hashed uniform grid over the surface vertices).

Integration.  The stencils change at each :meth:`~MeshContactTerm.update` that finds a new
pair set (``update`` returns True, ``version`` counts the changes, ``dofs`` is then a new array).
The term is ``dynamic`` (:class:`~strandlab.implicit.StencilTerm`): the integrator's assembly
re-sizes its buffers at the next step (:meth:`~strandlab.implicit.Assembly.refresh`) and the
sparse solver keeps its Hessians out of the fixed matrix pattern, adding only the pairs in
contact to a factorisation.  :meth:`~MeshContactTerm.evaluate` refuses buffers of another
stencil count.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..implicit.assembly import use_parallel
from ..implicit.terms import StencilTerm
from .grid import make_point_grid
from .mesh_pairs import (
    EDGE_EDGE_PAIR,
    POINT_TRIANGLE,
    box_gap2,
    find_mesh_pairs,
    margin_excess,
    max_moved,
    surface_edges,
    vertex_incidence,
)
from .triangle_distance import (
    edge_edge_coefficients,
    edge_sine2,
    edge_sine2_gradient,
    edge_sine2_hessian,
    mollifier,
    point_triangle_coefficients,
    squared_distance,
    squared_distance_derivatives,
)

__all__ = ["MeshContactTerm", "ContactStiffnessWarning", "surface_edges", "find_mesh_pairs",
           "pair_stiffness", "stiffen_close_pairs", "POINT_TRIANGLE", "EDGE_EDGE_PAIR",
           "CLOSE_FRACTION", "STIFFEN_FACTOR", "MAX_STIFFENING"]

MESH_CONTACT_WORK = 500
"""Serial cost of one stencil in the work units of
:data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK`."""
_D_FLOOR = 1e-12
PARALLEL_MOLLIFIER = 1e-3
"""``kappa``: edge-edge pairs whose ``sin^2`` of angle is below it are mollified (module
docstring)."""
MOVE_KEEP = 0.1
"""``s``: a move is cut where a pair could come closer than this fraction of its distance at
the move's start (module docstring, "Moves")."""
ACCD_MAX_STEPS = 64
"""Conservative advancement steps per pair and move; at the cap the move is cut where the
advancement got to (safe, but shorter than need be)."""
CLOSE_FRACTION = 0.5
"""A pair closer than this fraction of ``dhat`` at the end of a step stiffens its vertices
(module docstring, "Stiffness")."""
STIFFEN_FACTOR = 2.0
"""What :meth:`MeshContactTerm.stiffen` multiplies a close pair's vertices' factors by."""
MAX_STIFFENING = 1024.0
"""The largest stiffening factor of a vertex."""


class ContactStiffnessWarning(RuntimeWarning):
    """Surface pairs stay closer than :data:`CLOSE_FRACTION` ``dhat`` although their vertices'
    stiffening is at :data:`MAX_STIFFENING`: surfaces pinched between held vertices, or a load
    the penalty cannot carry at that thickness."""


MOVE_LIMIT_WORK = 100
"""Serial cost of one pair's move limit in the work units of
:data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK`."""


# ------------------------------------------------------------------------------ narrow phase

@njit(cache=True, _nrt=False)
def _classify(q, i0, i1, i2, i3, pair_kind, w, s):
    """Closest-point type of pair ``s`` (coefficients into ``w[s]``); returns ``m``."""
    if pair_kind == POINT_TRIANGLE:
        return point_triangle_coefficients(q, i0, i1, i2, i3, w, s)[1]
    return edge_edge_coefficients(q, i0, i1, i2, i3, w, s)[1]


@njit(cache=True, _nrt=False)
def _zero_stencil(s, g_out, H_out, want_hess):
    """Zero the gradient and the Hessian of stencil ``s``."""
    for i in range(12):
        g_out[s, i] = 0.0
    if want_hess:
        for i in range(12):
            for j in range(12):
                H_out[s, i, j] = 0.0


@njit(cache=True, _nrt=False)
def _clear_hessian(s, H_out, written):
    """Zero stencil ``s``'s Hessian as its flag says: written (1) all of it, unknown (2) the
    entries that are not zero (a buffer fresh from ``np.zeros`` is only read: its pages stay
    unallocated), known zero (0) nothing."""
    if written == 1:
        for i in range(12):
            for j in range(12):
                H_out[s, i, j] = 0.0
    elif written == 2:
        for i in range(12):
            for j in range(12):
                if H_out[s, i, j] != 0.0:
                    H_out[s, i, j] = 0.0


@njit(cache=True, _nrt=False)
def _type_within(q_in, i0, i1, i2, i3, kind, reach, w_scratch, s):
    """Closest-point type of pair ``s`` (coefficients into ``w_scratch[s]``) when its distance
    is below ``reach`` [m], else -1 (the box bound first: a far pair costs no distance)."""
    if box_gap2(q_in, i0, i1, i2, i3, kind) >= reach * reach:
        return -1
    m = _classify(q_in, i0, i1, i2, i3, kind, w_scratch, s)
    if m < 0 or not squared_distance(q_in, i0, i1, i2, i3, w_scratch, s) < reach * reach:
        return -1
    return m


@njit(cache=True, _nrt=False)
def _penalty_stencil(s, q_in, pairs_in, dhat, project, w_scratch, written_io, out, want_hess):
    """Energy, gradient and (``want_hess``) Hessian of pair ``s`` (module docstring); returns 1
    when it is in contact (``d < dhat``).  A pair out of contact costs its distance only: its
    Hessian is zeroed only when ``written_io[s]`` says it was written since (then cleared)."""
    dofs_in, kind_in, k_in = pairs_in
    e_out, g_out, H_out = out
    e_out[s] = 0.0
    i0, i1, i2, i3 = dofs_in[s, 0], dofs_in[s, 3], dofs_in[s, 6], dofs_in[s, 9]
    m = _type_within(q_in, i0, i1, i2, i3, kind_in[s], dhat, w_scratch, s)
    if m < 0:
        _zero_stencil(s, g_out, H_out, False)
        if want_hess:
            _clear_hessian(s, H_out, written_io[s])
            written_io[s] = 0
        return 0
    f = squared_distance_derivatives(q_in, i0, i1, i2, i3, w_scratch, s, m, g_out, H_out,
                                     want_hess)
    if want_hess:
        written_io[s] = 1
    if not f < dhat * dhat:
        _zero_stencil(s, g_out, H_out, want_hess)
        return 0
    d = math.sqrt(f)
    gap = dhat - d
    k = k_in[s]
    e_out[s] = 0.5 * k * gap * gap
    if d <= _D_FLOOR * dhat:
        _zero_stencil(s, g_out, H_out, want_hess)
    else:
        a = -k * gap / (2.0 * d)
        if want_hess:
            c = k / (4.0 * f) if project else k * dhat / (4.0 * d * f)
            for i in range(12):
                for j in range(12):
                    curv = 0.0 if project else a * H_out[s, i, j]
                    H_out[s, i, j] = c * g_out[s, i] * g_out[s, j] + curv
        for i in range(12):
            g_out[s, i] *= a
    if kind_in[s] == EDGE_EDGE_PAIR:
        _mollify(s, q_in, i0, i1, i2, i3, project, e_out, g_out, H_out, want_hess)
    return 1


@njit(cache=True, _nrt=False)
def _mollify(s, q_in, i0, i1, i2, i3, project, e_out, g_out, H_out, want_hess):
    """Multiply edge-edge stencil ``s``'s penalty ``P`` by the mollifier ``m(sin^2)`` of its
    edges' angle (product rule; ``project`` keeps ``m`` times the Gauss-Newton part)."""
    sn, u, v = edge_sine2(q_in, i0, i1, i2, i3)
    if sn >= PARALLEL_MOLLIFIER:
        return
    m, dm, ddm = mollifier(sn, PARALLEL_MOLLIFIER)
    pen = e_out[s]
    if want_hess:
        for i in range(12):
            gi = edge_sine2_gradient(u, v, i)
            for j in range(12):
                h = m * H_out[s, i, j]
                if not project:
                    gj = edge_sine2_gradient(u, v, j)
                    h += (dm * (g_out[s, i] * gj + gi * g_out[s, j]) + pen * ddm * gi * gj
                          + pen * dm * edge_sine2_hessian(u, v, i, j))
                H_out[s, i, j] = h
    for i in range(12):
        g_out[s, i] = m * g_out[s, i] + pen * dm * edge_sine2_gradient(u, v, i)
    e_out[s] = m * pen


@njit(cache=True, parallel=True)
def mesh_contact_terms(q_in, pairs_in, dhat, project, w_scratch, written_io, out, want_hess):
    """Penalty of every pair stencil (module docstring), parallel over pairs; returns the
    number in contact.

    q_in : float64 [n_dofs] positions [m].
    pairs_in : ``(dofs int64 [n, 12], kind int64 [n], k float64 [n] [N/m])``.
    w_scratch : float64 [>= n, 12], closest-point coefficients.
    written_io : uint8 [n], per pair: 0 its Hessian in ``out`` is zero, 1 written since, 2
        unknown (read and updated when ``want_hess``; all 2 for a buffer the term did not
        fill last).
    out : ``(energy [n] [J], gradient [n, 12] [N], Hessian [n, 12, 12] [N/m])``, overwritten
        (the Hessian only when ``want_hess``).
    """
    n = 0
    for s in prange(pairs_in[0].shape[0]):
        n += _penalty_stencil(s, q_in, pairs_in, dhat, project, w_scratch, written_io, out,
                              want_hess)
    return n


@njit(cache=True, _nrt=False)
def mesh_contact_terms_serial(q_in, pairs_in, dhat, project, w_scratch, written_io, out, want_hess):
    """Serial twin of :func:`mesh_contact_terms`."""
    n = 0
    for s in range(pairs_in[0].shape[0]):
        n += _penalty_stencil(s, q_in, pairs_in, dhat, project, w_scratch, written_io, out,
                              want_hess)
    return n


@njit(cache=True, _nrt=False)
def stiffen_close_pairs(q_in, pairs_in, reach, growth, cap, w_scratch, mark_scratch,
                        stiffening_io):
    """Multiply by ``growth`` (at most ``cap``) the stiffening factor of every vertex of a pair
    closer than ``reach`` [m], each vertex once; returns (the number of such pairs, a vertex of
    theirs whose factor was at ``cap`` already, or -1).

    q_in : float64 [n_dofs] positions [m].
    pairs_in : ``(dofs int64 [n, 12], kind int64 [n], vertices int64 [n, 4])``.
    w_scratch : float64 [>= n, 12], closest-point coefficients.
    mark_scratch : uint8 [V], all 0 (and left so).
    stiffening_io : float64 [V], the vertices' factors.
    """
    dofs_in, kind_in, verts_in = pairs_in
    count = 0
    saturated = -1
    for s in range(dofs_in.shape[0]):
        if _type_within(q_in, dofs_in[s, 0], dofs_in[s, 3], dofs_in[s, 6], dofs_in[s, 9],
                        kind_in[s], reach, w_scratch, s) < 0:
            continue
        count += 1
        for c in range(4):
            v = verts_in[s, c]
            if mark_scratch[v] == 0:
                mark_scratch[v] = 1
                if stiffening_io[v] >= cap and saturated < 0:
                    saturated = v
                stiffening_io[v] = min(stiffening_io[v] * growth, cap)
    for s in range(verts_in.shape[0]):
        for c in range(4):
            mark_scratch[verts_in[s, c]] = 0
    return count, saturated


def pair_stiffness(stiffness, factor, pairs, kind) -> np.ndarray:
    """Each pair's ``k`` [N/m] (module docstring, "Stiffness"): its two sides' stiffest vertices
    (``stiffness`` [V] [N/m]) as springs in series, times the largest ``factor`` [V] of its four
    vertices.  ``pairs`` int [n, 4], ``kind`` int [n] (:data:`POINT_TRIANGLE`: the point, then
    the triangle; :data:`EDGE_EDGE_PAIR`: two vertices each).

    >>> pair_stiffness(np.array([4.0, 2000.0, 2000.0, 2000.0]), np.ones(4),
    ...                np.array([[0, 1, 2, 3]]), np.array([POINT_TRIANGLE])).round(3)
    array([3.992])
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 4)
    k = stiffness[pairs]
    point = np.asarray(kind) == POINT_TRIANGLE
    ka = np.where(point, k[:, 0], k[:, :2].max(axis=1))
    kb = np.where(point, k[:, 1:].max(axis=1), k[:, 2:].max(axis=1))
    return ka * kb / (ka + kb) * factor[pairs].max(axis=1)


# ------------------------------------------------------------------------------ moves

@njit(cache=True, _nrt=False)
def _local_distance(x, o, kind, w_scratch, s):
    """Distance [m] of a pair whose four vertices sit at ``x[o : o + 12]``."""
    if kind == POINT_TRIANGLE:
        point_triangle_coefficients(x, o, o + 3, o + 6, o + 9, w_scratch, s)
    else:
        edge_edge_coefficients(x, o, o + 3, o + 6, o + 9, w_scratch, s)
    return math.sqrt(squared_distance(x, o, o + 3, o + 6, o + 9, w_scratch, s))


@njit(cache=True, _nrt=False)
def _norm3(x, i):
    return math.sqrt(x[i] * x[i] + x[i + 1] * x[i + 1] + x[i + 2] * x[i + 2])


@njit(cache=True, _nrt=False)
def _speed_bound(x, o, kind):
    """``l``: the point side's displacement plus the triangle side's largest (or the two
    edges' largest), the displacements at ``x[o + 12 : o + 24]`` less their mean."""
    for a in range(3):
        mean = 0.25 * (x[o + 12 + a] + x[o + 15 + a] + x[o + 18 + a] + x[o + 21 + a])
        for j in range(4):
            x[o + 12 + 3 * j + a] -= mean
    n0, n1, n2, n3 = _norm3(x, o + 12), _norm3(x, o + 15), _norm3(x, o + 18), _norm3(x, o + 21)
    if kind == POINT_TRIANGLE:
        return n0 + max(n1, n2, n3)
    return max(n0, n1) + max(n2, n3)


@njit(cache=True, _nrt=False)
def _pair_move_limit(s, q_in, dq_in, pairs_in, w_scratch, x_scratch):
    """The part ``t`` in (0, 1] of the move ``q + t dq`` that pair ``s`` admits (module
    docstring, "Moves"); ``x_scratch[24 s : 24 s + 24]`` holds its positions and moves."""
    dofs_in, kind_in = pairs_in
    kind = kind_in[s]
    o = 24 * s
    for i in range(12):
        x_scratch[o + i] = q_in[dofs_in[s, i]]
        x_scratch[o + 12 + i] = dq_in[dofs_in[s, i]]
    lp = _speed_bound(x_scratch, o, kind)
    if not lp > 0.0:
        return 1.0
    d = math.sqrt(box_gap2(q_in, dofs_in[s, 0], dofs_in[s, 3], dofs_in[s, 6], dofs_in[s, 9],
                           kind))
    if (1.0 - MOVE_KEEP) * d >= lp:
        return 1.0                  # the first advancement from the distance would pass 1
    d = _local_distance(x_scratch, o, kind, w_scratch, s)
    if not d > 0.0:
        return 1.0                  # touching already: no side to keep
    keep = MOVE_KEEP * d
    tl = (1.0 - MOVE_KEEP) * d / lp
    t = 0.0
    for _ in range(ACCD_MAX_STEPS):
        if t + tl >= 1.0:
            return 1.0
        for i in range(12):
            x_scratch[o + i] += tl * x_scratch[o + 12 + i]
        d = _local_distance(x_scratch, o, kind, w_scratch, s)
        if t > 0.0 and d < keep:
            return t
        t += tl
        tl = 0.9 * d / lp
    return t


@njit(cache=True, parallel=True)
def mesh_contact_move_limit(q_in, dq_in, pairs_in, w_scratch, x_scratch, t_out):
    """The smallest part of the move ``q + t dq`` (``t`` in (0, 1]) that every pair admits,
    parallel over pairs (module docstring, "Moves").

    q_in, dq_in : float64 [n_dofs], the move's start [m] and the whole move [m].
    pairs_in : ``(dofs int64 [n, 12], kind int64 [n])``.
    w_scratch [>= n, 12], x_scratch [>= 24 n]: work memory; t_out [>= n]: each pair's part.
    """
    n = pairs_in[0].shape[0]
    for s in prange(n):
        t_out[s] = _pair_move_limit(s, q_in, dq_in, pairs_in, w_scratch, x_scratch)
    t = 1.0
    for s in range(n):
        t = min(t, t_out[s])
    return t


@njit(cache=True, _nrt=False)
def mesh_contact_move_limit_serial(q_in, dq_in, pairs_in, w_scratch, x_scratch, t_out):
    """Serial twin of :func:`mesh_contact_move_limit`."""
    t = 1.0
    for s in range(pairs_in[0].shape[0]):
        t = min(t, _pair_move_limit(s, q_in, dq_in, pairs_in, w_scratch, x_scratch))
    return t


# ------------------------------------------------------------------------------ the term

def _index_array(name, what, a, width, n_vertices) -> np.ndarray:
    arr = np.asarray(a)
    if arr.size == 0:
        return np.zeros((0, width), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != width or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"term {name!r}: {what} must be integers of shape [n, {width}], got "
                         f"{arr.dtype} {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    bad = np.nonzero(((arr < 0) | (arr >= n_vertices)).any(axis=1))[0]
    if bad.size:
        raise ValueError(f"term {name!r}: {what[:-1]} {int(bad[0])} {arr[bad[0]].tolist()} has "
                         f"a vertex out of range [0, {n_vertices})")
    srt = np.sort(arr, axis=1)
    bad = np.nonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))[0]
    if bad.size:
        raise ValueError(f"term {name!r}: {what[:-1]} {int(bad[0])} {arr[bad[0]].tolist()} "
                         f"repeats a vertex")
    return arr


def _positive(name, what, value, allow_zero=False) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        rule = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"term {name!r}: {what} must be a finite number {rule}, got {value!r}")
    return float(value)


class MeshContactTerm(StencilTerm):
    """Penalty contact of triangle meshes with themselves and each other (module docstring).

    Parameters (keyword only)
    -------------------------
    triangles : int [F, 3]
        Surface triangles (shell triangles, boundary faces of solids), vertices in [0, V).
    vertex_dofs : int [V]
        Index in ``q`` of each vertex's ``x`` (``y``, ``z`` follow).
    stiffness : float or float [V]
        Penalty stiffness ``k_v`` [N/m] of each vertex (> 0); a pair's: module docstring,
        "Stiffness".
    dhat : float
        Contact thickness [m] (> 0).
    edges : int [E, 2] or None
        Surface edges for the edge-edge pairs; None: every edge of ``triangles``
        (:func:`surface_edges`).
    project : bool
        Keep only the Gauss-Newton part of the Hessian (positive semi-definite; default).
    capacity : int or None
        Initial size of the pair buffer (grown by :meth:`update` when it overflows).

    Attributes: ``dofs`` int64 [n, 12] (the pairs' vertices, slots ``3 j + a``), ``pair_vertices``
    int64 [n, 4], ``pair_kind`` int64 [n] (:data:`POINT_TRIANGLE`, :data:`EDGE_EDGE_PAIR`),
    ``pair_stiffness`` [n] [N/m], ``stiffening`` [V] (each vertex's factor, >= 1),
    ``saturated`` (:meth:`stiffen`), ``margins`` [V] [m] of the last update, ``margin`` [m] the
    largest of them and ``reach`` [m] the largest pair reach (``dhat + 2 margin``), ``version``
    (stencil set changes), ``n_active`` (pairs closer than ``dhat`` at the last evaluation).
    """

    dynamic = True
    limits_step = True

    def __init__(self, *, triangles, vertex_dofs, stiffness, dhat: float, edges=None,
                 project: bool = True, capacity: int | None = None,
                 name: str = "mesh_contact"):
        self.name = name
        vd = np.asarray(vertex_dofs)
        if vd.ndim != 1 or not np.issubdtype(vd.dtype, np.integer) or vd.size == 0:
            raise ValueError(f"term {name!r}: vertex_dofs must be a non-empty integer array [V], "
                             f"got {vd.dtype} {vd.shape}")
        self.vertex_dofs = np.ascontiguousarray(vd, dtype=np.int64)
        nv = self.vertex_dofs.size
        if self.vertex_dofs.min() < 0:
            raise ValueError(f"term {name!r}: vertex {int(np.argmin(self.vertex_dofs))} has a "
                             f"negative DOF index")
        srt = np.sort(self.vertex_dofs)
        clash = np.nonzero(np.diff(srt) < 3)[0]
        if clash.size:
            raise ValueError(f"term {name!r}: vertices "
                             f"{np.nonzero(self.vertex_dofs == srt[clash[0]])[0][0]} and "
                             f"{np.nonzero(self.vertex_dofs == srt[clash[0] + 1])[0][-1]} share "
                             f"DOFs (each vertex needs 3)")
        self.triangles = _index_array(name, "triangles", triangles, 3, nv)
        self.edges = (surface_edges(self.triangles) if edges is None
                      else _index_array(name, "edges", edges, 2, nv))
        k = np.broadcast_to(np.asarray(stiffness, dtype=np.float64), (nv,)).copy()
        bad = np.nonzero(~(np.isfinite(k) & (k > 0)))[0]
        if bad.size:
            raise ValueError(f"term {name!r}: stiffness of vertex {int(bad[0])} must be finite "
                             f"and > 0 [N/m], got {k[bad[0]]!r}")
        self.stiffness = k
        self.stiffening = np.ones(nv)
        self.saturated = -1
        self._mark = np.zeros(nv, dtype=np.uint8)
        self.dhat = _positive(name, "dhat", dhat)
        self.project = bool(project)
        vt = vertex_incidence(self.triangles, nv)
        ve = vertex_incidence(self.edges, nv)
        self._topo = (self.triangles, self.edges, vt[0], vt[1], ve[0], ve[1])
        self._pts = np.arange(nv, dtype=np.int64)
        self._grid = make_point_grid(self._pts.size, nv)
        self._x = np.zeros((nv, 3))
        cap = 4 * (len(self.triangles) + len(self.edges)) + 16 if capacity is None else \
            max(1, int(capacity))
        self._pairs = np.zeros((cap, 4), dtype=np.int64)
        self._kind = np.zeros(cap, dtype=np.int64)
        self._w = np.zeros((cap, 12))
        self._xs = np.zeros(24 * cap)
        self._t = np.zeros(cap)
        self._no_hess = np.zeros((0, 12, 12))
        self._written = np.zeros(0, dtype=np.uint8)   # per pair: Hessian 0 zero, 1 written,
        self._hess_seen = None                          # 2 unknown, in this buffer
        self.dofs = np.zeros((0, 12), dtype=np.int64)
        self.pair_vertices = np.zeros((0, 4), dtype=np.int64)
        self.pair_kind = np.zeros(0, dtype=np.int64)
        self.pair_stiffness = np.zeros(0)
        self.margins = np.zeros(nv)
        self._no_ahead = np.zeros(nv)
        self._x_built = np.zeros((nv, 3))
        self._q_built = None
        self.version = 0
        self.n_active = 0

    def update(self, q: np.ndarray, *, max_displacement=0.0) -> bool:
        """Rebuild the pairs at ``q`` [n_dofs] (the step's start): those closer than their
        reach ``dhat + m_A + m_B`` (:mod:`.mesh_pairs`, "Reach"), ``max_displacement`` [m]
        (the margins: a float for every vertex, or float [V], one a vertex) a bound on how far
        each vertex moves from ``q`` while the pairs are used (:meth:`excess` checks it).
        Returns whether the pair set changed (the caller then rebuilds its assembly);
        ValueError naming a vertex whose position or margin is not finite, or whose margin is
        negative."""
        nv = self.vertex_dofs.size
        m = np.asarray(max_displacement, dtype=np.float64)
        if m.ndim == 0:
            _positive(self.name, "max_displacement", float(m), allow_zero=True)
            m = np.full(nv, float(m))
        elif m.shape != (nv,):
            raise ValueError(f"term {self.name!r}: max_displacement must be a float or one per "
                             f"vertex [{nv}], got shape {m.shape}")
        m = np.ascontiguousarray(m)
        bad = np.nonzero(~(np.isfinite(m) & (m >= 0.0)))[0]
        if bad.size:
            raise ValueError(f"term {self.name!r}: max_displacement of vertex {int(bad[0])} "
                             f"must be finite and >= 0 [m], got {m[bad[0]]!r}")
        q = np.ascontiguousarray(q, dtype=np.float64)
        need = int(self.vertex_dofs.max()) + 3
        if q.ndim != 1 or q.size < need:
            raise ValueError(f"term {self.name!r}: q must be a flat array of at least {need} "
                             f"entries, got shape {q.shape}")
        while True:
            n, bad = find_mesh_pairs(q, self.vertex_dofs, self._pts, self._topo, (self.dhat, m),
                                     self._x, self._w, self._grid, self._pairs, self._kind)
            if bad >= 0:
                raise ValueError(f"term {self.name!r}: vertex {bad} has a non-finite or far-out "
                                 f"position {q[self.vertex_dofs[bad]:self.vertex_dofs[bad] + 3]}")
            if n <= len(self._pairs):
                break
            self._pairs = np.zeros((2 * n, 4), dtype=np.int64)
            self._kind = np.zeros(2 * n, dtype=np.int64)
            self._w = np.zeros((2 * n, 12))
            self._xs = np.zeros(48 * n)
            self._t = np.zeros(2 * n)
        np.copyto(self._x_built, self._x)
        if self._q_built is None or self._q_built.shape != q.shape:
            self._q_built = np.empty_like(q)
        np.copyto(self._q_built, q)
        np.copyto(self.margins, m)
        pairs, kind = self._pairs[:n], self._kind[:n]
        if np.array_equal(pairs, self.pair_vertices) and np.array_equal(kind, self.pair_kind):
            return False
        self.pair_vertices = pairs.copy()
        self.pair_kind = kind.copy()
        self.pair_stiffness = pair_stiffness(self.stiffness, self.stiffening, pairs, kind)
        self.dofs = (self.vertex_dofs[pairs][:, :, None] + np.arange(3)).reshape(n, 12)
        self._written = np.full(n, 2, dtype=np.uint8)
        self._hess_seen = None
        self.version += 1
        return True

    @property
    def margin(self) -> float:
        """The largest of the vertices' ``margins`` [m] (0 before the first update)."""
        return float(self.margins.max())

    @property
    def reach(self) -> float:
        """The largest pair reach [m], ``dhat + 2 margin``: no listed pair is farther apart."""
        return self.dhat + 2.0 * self.margin

    def stiffen(self, q: np.ndarray) -> int:
        """At ``q`` [n_dofs] (the end of a step): multiply the stiffening factor of every vertex
        of a listed pair closer than :data:`CLOSE_FRACTION` ``dhat`` by
        :data:`STIFFEN_FACTOR` (at most :data:`MAX_STIFFENING`; module docstring,
        "Stiffness"); returns the number of such pairs.  ``saturated``: a vertex of such a
        pair whose factor was already at the cap (-1: none)."""
        count, saturated = stiffen_close_pairs(
            q, (self.dofs, self.pair_kind, self.pair_vertices), CLOSE_FRACTION * self.dhat,
            STIFFEN_FACTOR, MAX_STIFFENING, self._w, self._mark, self.stiffening)
        self.saturated = int(saturated)
        if count:       # (new arrays only while contacts stiffen)
            self.pair_stiffness = pair_stiffness(self.stiffness, self.stiffening,
                                                 self.pair_vertices, self.pair_kind)
        return int(count)

    def list_state(self) -> dict:
        """The pair list as a checkpoint holds it: the configuration it was built at
        (``q`` [n_dofs] [m]), its vertices' ``margins`` [V] [m] and ``stiffening`` [V]; empty
        before the first :meth:`update`."""
        if self._q_built is None:
            return {}
        return {"q": self._q_built.copy(), "margins": self.margins.copy(),
                "stiffening": self.stiffening.copy()}

    def restore_list(self, arrays: dict) -> None:
        """Rebuild the pair list that :meth:`list_state` described (the same pairs in the
        same order: the search is deterministic) with its stiffening factors (all 1 when
        ``arrays`` has none); one ``margin`` [m] for all vertices instead of ``margins`` is
        read too."""
        if arrays:
            f = np.asarray(arrays.get("stiffening", np.ones_like(self.stiffening)),
                           dtype=np.float64)
            if f.shape != self.stiffening.shape or not np.all((f >= 1.0)
                                                               & (f <= MAX_STIFFENING)):
                raise ValueError(f"term {self.name!r}: stiffening must be {self.stiffening.size} "
                                 f"factors in [1, {MAX_STIFFENING:g}], got shape {f.shape} "
                                 f"with values {f.min() if f.size else None!r} to "
                                 f"{f.max() if f.size else None!r}")
            self.stiffening[:] = f
            margins = arrays["margins"] if "margins" in arrays else arrays["margin"]
            self.update(np.asarray(arrays["q"], dtype=np.float64), max_displacement=margins)
            self.pair_stiffness = pair_stiffness(self.stiffness, self.stiffening,
                                                 self.pair_vertices, self.pair_kind)

    def moved(self, q: np.ndarray) -> float:
        """The largest distance [m] of a surface vertex at ``q`` from its place at the last
        :meth:`update` (inf for a non-finite position)."""
        return float(max_moved(q, self.vertex_dofs, self._pts, self._x_built))

    def excess(self, q: np.ndarray, ahead: np.ndarray | None = None) -> float:
        """How far [m] the vertex that most overshoots its margin is beyond it: the largest
        ``|x_v - x_v(update)| + ahead[v] - margins[v]`` at ``q`` [n_dofs], ``ahead`` [V] [m]
        (default 0) a displacement still to come (inf for a non-finite position).  While it
        is <= 0 the pair list holds every pair closer than ``dhat`` (each side of a pair moved
        at most its largest margin: :mod:`.mesh_pairs`, "Reach")."""
        return float(margin_excess(q, self.vertex_dofs, self._pts, self._x_built, self.margins,
                                   self._no_ahead if ahead is None else ahead))

    def max_step(self, q: np.ndarray, dq: np.ndarray) -> float:
        """The part in (0, 1] of the move from ``q`` to ``q + dq`` [n_dofs] along which no
        listed pair's surfaces pass through each other (module docstring, "Moves")."""
        n = self.dofs.shape[0]
        if n == 0:
            return 1.0
        kern = (mesh_contact_move_limit if use_parallel(2, n * MOVE_LIMIT_WORK)
                else mesh_contact_move_limit_serial)
        return float(kern(q, dq, (self.dofs, self.pair_kind), self._w, self._xs, self._t))

    def evaluate(self, q, energy_out, grad_out, hess_out):
        n = self.dofs.shape[0]
        want = hess_out is not None
        if energy_out.shape != (n,) or grad_out.shape != (n, 12) or (
                want and hess_out.shape != (n, 12, 12)):
            raise ValueError(f"term {self.name!r}: buffers for {energy_out.shape[0]} stencils, "
                             f"the term has {n}: its pairs changed at update(): refresh the "
                             f"assembly (Assembly.refresh)")
        h = hess_out if want else self._no_hess
        if want and hess_out is not self._hess_seen:    # a buffer of unknown contents
            self._written.fill(2)
            self._hess_seen = hess_out
        kern = (mesh_contact_terms if use_parallel(2, n * MESH_CONTACT_WORK)
                else mesh_contact_terms_serial)
        self.n_active = int(kern(q, (self.dofs, self.pair_kind, self.pair_stiffness), self.dhat,
                                 self.project, self._w, self._written,
                                 (energy_out, grad_out, h), want))

    def hessian_stencils(self, hess: np.ndarray) -> np.ndarray:
        """The pairs whose Hessian in ``hess`` may be non-zero: those written by the last
        evaluations into that buffer (pairs out of contact since are zero), without reading
        it; a buffer this term did not fill last is scanned."""
        if hess is self._hess_seen and self._written.size == hess.shape[0]:
            return np.nonzero(self._written)[0]
        return super().hessian_stencils(hess)
