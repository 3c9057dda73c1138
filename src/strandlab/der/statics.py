"""Statics of discrete elastic rods at a fixed configuration, as a function of the rest shape.

The sag-free rest-shape optimizer (Takahashi and Batty; ``docs/sagfree.md``) asks: at the
input configuration ``q`` (with its reference frames and reference twist), what is the
generalized force ``f(p) = f_ext(p) - grad_q E(q; p)`` as a function of the rest parameters
``p`` (rest lengths ``lbar``, rest curvatures ``kappabar``, rest twists ``taubar``), and what is
its Jacobian ``J = df/dp``?  :class:`StaticForces` answers both for every strand of a
:class:`~strandlab.der.model.DERModel` at once.

Dependence on the rest lengths (the choices the forward model makes, ``der/compile.py``):

- the Voronoi length of a bend-twist stencil is ``ltilde = (lbar_j0 + lbar_j1) / 2`` of its two
  edges, recomputed from the rest lengths given (not read from the model);
- the vertex mass follows the rest lengths: ``m_v = c_v sum_{e at v} lbar_e`` with
  ``c_v = rho A_v / 2`` (:func:`vertex_mass_coefficient`), as ``compile_scene`` computes it from
  an explicit ``rest_length``, so a rest shape handed to the solver carries the weight the
  optimizer balanced.  The weight ``m_v g`` therefore depends on ``lbar`` (its derivative is
  the ``weight`` block of :class:`RestJacobianBlocks`).  Point loads do not depend on ``p``;
  they are taken at ``time``.  The rotational inertia of the edges does not enter ``f``.

Each Jacobian block comes from one stencil (``der/static_stencils.py``):

- stretch stencil of edge ``e``: ``d f / d lbar_e`` on its 6 slots (``stretch``);
- bend-twist stencil ``b``: ``d f / d kappabar_b`` [11, 4] (``curvature``),
  ``d f / d taubar_b`` [11] (``twist``) and ``d f / d ltilde_b`` [11] (``voronoi``), the last
  entering ``d f / d lbar_j`` with weight 1/2 for each of its edges ``j``;
- weight: ``d (m_v g) / d lbar_e = c_v g`` on the two vertices of edge ``e`` (``weight``).

Only the strands listed in ``strands`` are computed (all by default), one strand per iteration
of a parallel loop, so that an optimizer that has finished most strands pays only for the rest.

Stability: :meth:`StaticForces.negative_modes` counts the negative eigenvalues of the exact
Hessian of the elastic energy over each strand's free DOFs for a given rest shape: an
equilibrium with none is a local minimum of the potential (stable), one with some a saddle.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads, njit, prange
from numba.extending import register_jitable

from ..rods import kernels as _kernels  # noqa: F401  (registers the energy helpers for compilation)
from . import static_stencils as _st
from .model import DERModel
from .system import DERSystem

__all__ = ["RestShape", "RestJacobianBlocks", "RestJacobian", "StaticForces",
           "vertex_mass_coefficient"]

_OPTS = {"cache": True, "error_model": "numpy", "_nrt": False}
for _f in (_st._set_slots, _st._bend_twist_weights):
    register_jitable(error_model="numpy", _nrt=False)(_f)
_stretch_geometry = njit(**_OPTS)(_st.stretch_geometry)
_bend_twist_geometry = njit(**_OPTS)(_st.bend_twist_geometry)
_add_stretch_force = njit(**_OPTS)(_st.add_stretch_force)
_add_bend_twist_force = njit(**_OPTS)(_st.add_bend_twist_force)
_stretch_rest_jacobian = njit(**_OPTS)(_st.stretch_rest_jacobian)
_bend_twist_rest_jacobian = njit(**_OPTS)(_st.bend_twist_rest_jacobian)


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True, parallel=True, error_model="numpy")
def _geometry(q, stretch_dofs, bend_dofs, bend_edges, a1, a2, m_ref, length, tangent, kappa,
              dkappa, tau, dtau, bad_edge, bad_bend):
    """Edge lengths and tangents, curvatures, twists and their gradients of the whole model;
    ``bad_edge`` [E], ``bad_bend`` [B] receive the stencils' statuses."""
    for e in prange(stretch_dofs.shape[0]):
        bad_edge[e] = _stretch_geometry(e, q, stretch_dofs, length, tangent)
    for b in prange(bend_dofs.shape[0]):
        bad_bend[b] = _bend_twist_geometry(b, q, bend_dofs, bend_edges, a1, a2, m_ref, kappa,
                                           dkappa, tau, dtau)


@njit(cache=True, parallel=True, error_model="numpy")
def _forces(strands, dof_start, edge_start, bend_start, stretch_dofs, bend_dofs, bend_edges,
            edge_v0, edge_v1, vertex_dof, length, tangent, kappa, dkappa, tau, dtau, lbar, kbar,
            taubar, ks, kbend, ktwist, scale, mass_coef, gravity, loads, fixed, elastic,
            external, zero_fixed, f_out):
    """``f_out`` over the DOFs of each listed strand: ``scale[s]`` times the elastic force (when
    ``elastic``) plus the weight under the rest lengths ``lbar`` and the loads (when
    ``external``); fixed DOFs zeroed when ``zero_fixed``."""
    for k in prange(strands.shape[0]):
        s = strands[k]
        for d in range(dof_start[s], dof_start[s + 1]):
            f_out[d] = loads[d] if external else 0.0
        if elastic:
            sc = scale[s]
            for e in range(edge_start[s], edge_start[s + 1]):
                _add_stretch_force(e, stretch_dofs, length, tangent, lbar[e], ks[e], sc, f_out)
            for b in range(bend_start[s], bend_start[s + 1]):
                lt = 0.5 * (lbar[bend_edges[b, 0]] + lbar[bend_edges[b, 1]])
                _add_bend_twist_force(b, bend_dofs, kappa, dkappa, tau, dtau, kbar, taubar, lt,
                                      kbend, ktwist, sc, f_out)
        if external:
            for e in range(edge_start[s], edge_start[s + 1]):
                for v in (edge_v0[e], edge_v1[e]):
                    w = mass_coef[v] * lbar[e]
                    d = vertex_dof[v]
                    f_out[d] += w * gravity[0]
                    f_out[d + 1] += w * gravity[1]
                    f_out[d + 2] += w * gravity[2]
        if zero_fixed:
            for d in range(dof_start[s], dof_start[s + 1]):
                if fixed[d]:
                    f_out[d] = 0.0


@njit(cache=True, parallel=True, error_model="numpy")
def _jacobian_blocks(strands, edge_start, bend_start, edge_v0, edge_v1, bend_edges, length,
                     tangent, kappa, dkappa, tau, dtau, lbar, kbar, taubar, ks, kbend, ktwist,
                     scale, mass_coef, gravity, js, jw, jk, jt, jl):
    """The per-stencil Jacobian blocks (see :class:`RestJacobianBlocks`) of the listed
    strands."""
    for k in prange(strands.shape[0]):
        s = strands[k]
        sc = scale[s]
        for e in range(edge_start[s], edge_start[s + 1]):
            _stretch_rest_jacobian(e, length, tangent, lbar[e], ks[e], sc, js)
            ca = mass_coef[edge_v0[e]]
            cb = mass_coef[edge_v1[e]]
            for i in range(3):
                jw[e, i] = ca * gravity[i]
                jw[e, 3 + i] = cb * gravity[i]
        for b in range(bend_start[s], bend_start[s + 1]):
            lt = 0.5 * (lbar[bend_edges[b, 0]] + lbar[bend_edges[b, 1]])
            _bend_twist_rest_jacobian(b, kappa, dkappa, tau, dtau, kbar, taubar, lt, kbend,
                                      ktwist, sc, jk, jt, jl)


@njit(cache=True)
def _inertia_one(s, dof_start, edge_start, bend_start, fixed, stretch_dofs, hs, bend_dofs, hb,
                 sc, band):
    """Negative pivots of the banded LDL^T factorization of strand ``s``'s Hessian over its free
    DOFs (fixed rows and columns replaced by the identity); ``band`` [rows, 11] scratch."""
    d0 = dof_start[s]
    n = dof_start[s + 1] - d0
    W = band.shape[1] - 1
    for i in range(n):
        for a in range(W + 1):
            band[i, a] = 0.0
        if fixed[d0 + i]:
            band[i, 0] = 1.0
    for e in range(edge_start[s], edge_start[s + 1]):
        for a in range(6):
            ra = stretch_dofs[e, a]
            if fixed[ra]:
                continue
            for b in range(6):
                rb = stretch_dofs[e, b]
                if rb <= ra and not fixed[rb]:
                    band[rb - d0, ra - rb] += sc * hs[e, a, b]
    for k in range(bend_start[s], bend_start[s + 1]):
        for a in range(11):
            ra = bend_dofs[k, a]
            if fixed[ra]:
                continue
            for b in range(11):
                rb = bend_dofs[k, b]
                if rb <= ra and not fixed[rb]:
                    band[rb - d0, ra - rb] += sc * hb[k, a, b]
    neg = 0
    for j in range(n):
        dj = band[j, 0]
        if not dj > 0.0:
            neg += 1
            if dj == 0.0:
                continue
        m = min(W, n - 1 - j)
        for a in range(1, m + 1):
            la = band[j, a]
            if la == 0.0:
                continue
            f = la / dj
            for b in range(a, m + 1):
                band[j + a, b - a] -= f * band[j, b]
    return neg


@njit(cache=True, parallel=True)
def _inertia(strands, dof_start, edge_start, bend_start, fixed, stretch_dofs, hs, bend_dofs, hb,
             scale, band, out):
    """:func:`_inertia_one` of every listed strand (chunk ``c`` of ``band.shape[0]`` takes
    ``strands[c::C]``) into ``out[s]``."""
    nchunk = band.shape[0]
    for c in prange(nchunk):
        for i in range(c, strands.shape[0], nchunk):
            s = strands[i]
            out[s] = _inertia_one(s, dof_start, edge_start, bend_start, fixed, stretch_dofs, hs,
                                  bend_dofs, hb, scale[s], band[c])


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------
@dataclass
class RestShape:
    """Rest parameters of a model (the arrays are owned and may be modified).

    rest_length : lbar [m], [E].
    rest_curvature : kappabar [1], [B, 4].
    rest_twist : taubar [rad], [B].
    """

    rest_length: np.ndarray
    rest_curvature: np.ndarray
    rest_twist: np.ndarray

    @classmethod
    def of_model(cls, model: DERModel) -> RestShape:
        """A copy of the model's own rest shape."""
        return cls(np.array(model.rest_length, dtype=np.float64),
                   np.array(model.rest_curvature, dtype=np.float64),
                   np.array(model.rest_twist, dtype=np.float64))

    def copy(self) -> RestShape:
        return RestShape(self.rest_length.copy(), self.rest_curvature.copy(),
                         self.rest_twist.copy())

    def check(self, model: DERModel) -> None:
        """ValueError naming the array and its first bad entry when the shapes do not match
        ``model`` or a value is not finite (or a rest length not positive)."""
        for name, a, shape in (("rest_length", self.rest_length, (model.n_edges,)),
                               ("rest_curvature", self.rest_curvature, (model.n_bend, 4)),
                               ("rest_twist", self.rest_twist, (model.n_bend,))):
            if not isinstance(a, np.ndarray) or a.shape != shape or a.dtype != np.float64:
                raise ValueError(f"rest shape: {name} must be a float64 array of shape {shape}, "
                                 f"got {getattr(a, 'shape', type(a).__name__)}")
            ok = np.isfinite(a) if name != "rest_length" else np.isfinite(a) & (a > 0)
            if not ok.all():
                i = int(np.argwhere(~ok)[0][0])
                need = "positive and finite" if name == "rest_length" else "finite"
                raise ValueError(f"rest shape: {name} of entry {i} must be {need}, got "
                                 f"{a[i].tolist()}")

    def voronoi_length(self, model: DERModel) -> np.ndarray:
        """``ltilde = (lbar_j0 + lbar_j1) / 2`` of every bend-twist stencil [m], [B]."""
        return 0.5 * (self.rest_length[model.bend_edges[:, 0]]
                      + self.rest_length[model.bend_edges[:, 1]])

    def strand_options(self, model: DERModel, strand: int) -> dict:
        """Strand ``strand``'s rest shape as the explicit DER options ``compile_scene`` accepts:
        ``{"rest_length": [e], "rest_curvature": [b, 4], "rest_twist": [b]}`` (lists)."""
        es = slice(int(model.strand_edge_start[strand]), int(model.strand_edge_start[strand + 1]))
        bs = slice(int(model.strand_bend_start[strand]), int(model.strand_bend_start[strand + 1]))
        return {"rest_length": self.rest_length[es].tolist(),
                "rest_curvature": self.rest_curvature[bs].tolist(),
                "rest_twist": self.rest_twist[bs].tolist()}


@dataclass
class RestJacobianBlocks:
    """Per-stencil blocks of ``J = df/dp`` (the elastic ones times the strand's ``scale``).

    stretch : d f / d lbar_e on the edge's stencil slots ``stretch_dofs[e]`` [N/m], [E, 6].
    weight : d (m g) / d lbar_e on the same slots [N/m], [E, 6] (not scaled).
    curvature : d f / d kappabar_b on ``bend_dofs[b]`` [N | N m], [B, 11, 4].
    twist : d f / d taubar_b [N/rad | N m/rad], [B, 11].
    voronoi : d f / d ltilde_b [N/m | N], [B, 11]; ``ltilde_b`` moves by half of a change of the
        rest length of either of its edges ``bend_edges[b]``.
    """

    stretch: np.ndarray
    weight: np.ndarray
    curvature: np.ndarray
    twist: np.ndarray
    voronoi: np.ndarray

    @classmethod
    def empty(cls, model: DERModel) -> RestJacobianBlocks:
        ne, nb = model.n_edges, model.n_bend
        return cls(np.zeros((ne, 6)), np.zeros((ne, 6)), np.zeros((nb, 11, 4)),
                   np.zeros((nb, 11)), np.zeros((nb, 11)))


@dataclass
class RestJacobian:
    """One strand's ``J = df/dp`` assembled over its free DOFs.

    matrix : scipy CSR, [len(rows), n_params].
    rows : global DOF index of each row (the strand's free DOFs, increasing), int [R].
    length_edges : global edge of each rest-length column (edges with a free vertex), int [L].
    curvature_stencils : global stencil of each group of 4 rest-curvature columns (stencils with
        a free DOF), int [K].
    twist_stencils : global stencil of each rest-twist column (empty without twist), int [T].

    Columns: ``[lbar (L), kappabar (4 K, stencil by stencil), taubar (T)]``: for a strand
    clamped at its root, ``[lbar_1 .. lbar_{n-2}, kappabar_1 .. kappabar_{n-2},
    taubar_1 .. taubar_{n-2}]``.
    """

    matrix: sp.csr_matrix
    rows: np.ndarray
    length_edges: np.ndarray
    curvature_stencils: np.ndarray
    twist_stencils: np.ndarray

    @property
    def n_params(self) -> int:
        return len(self.length_edges) + 4 * len(self.curvature_stencils) + \
            len(self.twist_stencils)

    def pack(self, rest: RestShape) -> np.ndarray:
        """The parameter vector ``p`` of ``rest`` in this Jacobian's column order."""
        return np.concatenate([rest.rest_length[self.length_edges],
                               rest.rest_curvature[self.curvature_stencils].ravel(),
                               rest.rest_twist[self.twist_stencils]])

    def unpack(self, p: np.ndarray, rest: RestShape) -> RestShape:
        """A copy of ``rest`` with the parameters ``p`` (column order) written in."""
        out = rest.copy()
        nl, nk = len(self.length_edges), 4 * len(self.curvature_stencils)
        out.rest_length[self.length_edges] = p[:nl]
        out.rest_curvature[self.curvature_stencils] = p[nl:nl + nk].reshape(-1, 4)
        out.rest_twist[self.twist_stencils] = p[nl + nk:]
        return out


def vertex_mass_coefficient(model: DERModel) -> np.ndarray:
    """``c_v`` [kg/m], [V], with the model's vertex masses ``m_v = c_v sum_{e at v} lbar_e``
    (``c_v = rho A_v / 2``: the mass law of ``compile_scene``, recovered from the model's masses
    and rest lengths)."""
    m = model
    adj = np.zeros(m.n_vertices)
    np.add.at(adj, m.edge_v0, m.rest_length)
    np.add.at(adj, m.edge_v1, m.rest_length)
    mass = m.mass[m.vertex_dof]
    return np.divide(mass, adj, out=np.zeros_like(mass), where=adj > 0)


def _as(name, a, shape, dtype=np.float64):
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    if dtype == np.float64 and not np.isfinite(a).all():
        i = int(np.argwhere(~np.isfinite(a))[0][0])
        raise ValueError(f"{name} is not finite at entry {i}")
    return a


class StaticForces:
    """The generalized force of ``model`` at one configuration as a function of the rest shape.

    q : coordinates [m | rad], [N] (default ``model.q0``, the input shape).
    a1 : reference directors at ``q``, unit and perpendicular to the edges, [E, 3] (default
        ``model.a1_0``).
    ref_twist : reference twist at ``q`` [rad], [B] (default ``model.ref_twist0``).
    time : the time [s] at which the scene's point loads are taken.

    The geometry at ``q`` (edge lengths and tangents, curvatures, twists and their gradients) is
    computed once; forces and Jacobians for any rest shape are then explicit (module docstring).
    ValueError names the strand and the stencil when ``q`` has a zero-length edge or two
    antiparallel edges.
    """

    def __init__(self, model: DERModel, q=None, a1=None, ref_twist=None, *, time: float = 0.0):
        if not isinstance(model, DERModel):
            raise TypeError(f"expected a DERModel, got {type(model).__name__}")
        m = model
        self.model = m
        ne, nb, nd = m.n_edges, m.n_bend, m.n_dofs
        self.q = _as("q", m.q0 if q is None else q, (nd,))
        self.a1 = _as("a1", m.a1_0 if a1 is None else a1, (ne, 3))
        self.ref_twist = _as("ref_twist", m.ref_twist0 if ref_twist is None else ref_twist,
                             (nb,))
        self.edge_length = np.zeros(ne)
        self.tangent = np.zeros((ne, 3))
        self.curvature = np.zeros((nb, 4))
        self.curvature_gradient = np.zeros((nb, 11, 4))
        self.twist = np.zeros(nb)
        self.twist_gradient = np.zeros((nb, 11))
        x = m.positions(self.q)
        t = x[m.edge_v1] - x[m.edge_v0]
        with np.errstate(all="ignore"):
            t /= np.linalg.norm(t, axis=1)[:, None]
        self.a2 = np.ascontiguousarray(np.cross(t, self.a1))
        bad_e = np.zeros(ne, dtype=np.int64)
        bad_b = np.zeros(nb, dtype=np.int64)
        _geometry(self.q, m.stretch_dofs, m.bend_dofs, m.bend_edges, self.a1, self.a2,
                  self.ref_twist, self.edge_length, self.tangent, self.curvature,
                  self.curvature_gradient, self.twist, self.twist_gradient, bad_e, bad_b)
        for bad, verts in ((bad_e, m.edge_v0), (bad_b, m.bend_vertex)):
            if bad.any():
                k = int(np.argmax(bad != 0))
                v = int(verts[k])
                s = int(m.vertex_strand[v])
                raise ValueError(f"strand {s}: the configuration is degenerate at vertex "
                                 f"{v - int(m.strand_vertex_start[s])} (a zero-length edge or "
                                 "a 180 degree fold)")
        self.mass_coefficient = vertex_mass_coefficient(m)
        self.loads = np.zeros(nd)
        scene = m.scene
        if scene is not None:
            for k, ld in enumerate(scene.loads):
                d = int(m.vertex_dof[m.load_vertex[k]])
                self.loads[d:d + 3] += ld.at(float(time))
        self.gravity = np.ascontiguousarray(m.gravity, dtype=np.float64)
        self.fixed = np.ascontiguousarray(m.fixed)
        self._ones = np.ones(m.n_strands)
        self._all = np.arange(m.n_strands, dtype=np.int64)

    # ------------------------------------------------------------------ helpers
    def _strands(self, strands) -> np.ndarray:
        if strands is None:
            return self._all
        s = np.ascontiguousarray(strands, dtype=np.int64).reshape(-1)
        n = self.model.n_strands
        bad = (s < 0) | (s >= n)
        if bad.any():
            raise ValueError(f"strand {int(s[bad][0])} out of range (0..{n - 1})")
        return s

    def _scale(self, scale) -> np.ndarray:
        if scale is None:
            return self._ones
        sc = np.ascontiguousarray(np.broadcast_to(np.asarray(scale, dtype=np.float64),
                                                  (self.model.n_strands,)))
        if not (np.isfinite(sc).all() and (sc > 0).all()):
            raise ValueError("the stiffness scale of every strand must be positive and finite")
        return sc

    def _run(self, rest, strands, scale, out, elastic, external, zero_fixed):
        m = self.model
        out = np.zeros(m.n_dofs) if out is None else out
        if out.shape != (m.n_dofs,) or out.dtype != np.float64:
            raise ValueError(f"out must be a float64 array of shape {(m.n_dofs,)}")
        _forces(self._strands(strands), m.strand_dof_start, m.strand_edge_start,
                m.strand_bend_start, m.stretch_dofs, m.bend_dofs, m.bend_edges, m.edge_v0,
                m.edge_v1, m.vertex_dof, self.edge_length, self.tangent, self.curvature,
                self.curvature_gradient, self.twist, self.twist_gradient, rest.rest_length,
                rest.rest_curvature, rest.rest_twist, m.stretch_stiffness, m.bend_stiffness,
                m.twist_stiffness, self._scale(scale), self.mass_coefficient, self.gravity,
                self.loads, self.fixed, elastic, external, zero_fixed, out)
        return out

    # ------------------------------------------------------------------ forces
    def elastic_force(self, rest: RestShape, *, strands=None, scale=None, out=None):
        """``-grad_q E`` [N | N m], [N], over the DOFs of ``strands`` (all by default; other
        entries of ``out`` are left as they are, zero in a new array), the elastic force of
        strand ``s`` multiplied by ``scale[s]`` (a uniform change of all its stiffnesses;
        default 1)."""
        return self._run(rest, strands, scale, out, True, False, False)

    def external_force(self, rest_length=None, *, strands=None, out=None):
        """Weight ``m_v(lbar) g`` plus point loads [N], [N] (rest lengths default to the
        model's)."""
        lbar = self.model.rest_length if rest_length is None else rest_length
        rest = RestShape(np.ascontiguousarray(lbar, dtype=np.float64), self.curvature,
                         self.twist)
        return self._run(rest, strands, None, out, False, True, False)

    def force(self, rest: RestShape, *, strands=None, scale=None, out=None):
        """The net generalized force ``f = scale * (-grad_q E) + f_ext`` [N | N m], [N], with
        the fixed DOFs' entries zero: static equilibrium is ``f = 0``."""
        return self._run(rest, strands, scale, out, True, True, True)

    # ------------------------------------------------------------------ Jacobians
    def jacobian_blocks(self, rest: RestShape, *, strands=None, scale=None,
                        out: RestJacobianBlocks | None = None) -> RestJacobianBlocks:
        """The per-stencil blocks of ``df/dp`` at ``rest`` for the listed strands (other
        entries of ``out`` are left as they are)."""
        m = self.model
        out = RestJacobianBlocks.empty(m) if out is None else out
        _jacobian_blocks(self._strands(strands), m.strand_edge_start, m.strand_bend_start,
                         m.edge_v0, m.edge_v1, m.bend_edges, self.edge_length, self.tangent,
                         self.curvature, self.curvature_gradient, self.twist,
                         self.twist_gradient, rest.rest_length, rest.rest_curvature,
                         rest.rest_twist, m.stretch_stiffness, m.bend_stiffness,
                         m.twist_stiffness, self._scale(scale), self.mass_coefficient,
                         self.gravity, out.stretch, out.weight, out.curvature, out.twist,
                         out.voronoi)
        return out

    # ------------------------------------------------------------------ stability
    def negative_modes(self, rest: RestShape, *, strands=None, scale=None) -> np.ndarray:
        """Number of negative eigenvalues of the Hessian of the elastic energy at ``q`` over
        each listed strand's free DOFs, with rest shape ``rest`` and the strand's stiffnesses
        times ``scale[s]``; -1 for the strands not listed, int [S].

        The Hessian is the exact one of DER's energies with the reference frames transported
        from ``q`` (the external forces do not depend on ``q``), so at an equilibrium 0 means a
        local minimum of the potential (stable) and a positive count a saddle that a
        simulation leaves.  Counted by the signs of the pivots of a banded ``L D L^T``
        factorization without pivoting (Sylvester's law of inertia); a zero pivot counts as
        negative.  Evaluates every stencil of the model (the per-stencil Hessians take
        ``8 (36 E + 121 B)`` bytes).
        """
        m = self.model
        sel = self._strands(strands)
        rest.check(m)
        m2 = replace(m, rest_length=rest.rest_length, rest_curvature=rest.rest_curvature,
                     rest_twist=rest.rest_twist, voronoi_length=rest.voronoi_length(m))
        sysm = DERSystem(m2, project=False)
        sysm.load_frames(self.q, self.a1, self.ref_twist)
        sysm.prepare(self.q)
        st, bt = sysm.stretch, sysm.bend_twist
        hs = np.zeros((m.n_edges, 6, 6))
        st.evaluate(self.q, np.zeros(m.n_edges), np.zeros((m.n_edges, 6)), hs)
        hb = np.zeros((m.n_bend, 11, 11))
        if m.n_bend:
            bt.evaluate(self.q, np.zeros(m.n_bend), np.zeros((m.n_bend, 11)), hb)
        out = np.full(m.n_strands, -1, dtype=np.int64)
        if not len(sel):
            return out
        rows = int(np.max(np.diff(m.strand_dof_start)[sel]))
        width = 10
        for b in (m.bend_dofs, m.stretch_dofs):
            if len(b):
                width = max(width, int(np.max(b.max(axis=1) - b.min(axis=1))))
        band = np.zeros((max(1, min(get_num_threads(), len(sel))), rows, width + 1))
        _inertia(sel, m.strand_dof_start, m.strand_edge_start, m.strand_bend_start, self.fixed,
                 m.stretch_dofs, hs, m.bend_dofs, hb, self._scale(scale), band, out)
        return out

    def jacobian(self, rest: RestShape, strand: int, *, twist: bool = True,
                 scale: float = 1.0) -> RestJacobian:
        """Strand ``strand``'s ``J = df/dp`` assembled as a sparse matrix over its free DOFs
        (:class:`RestJacobian`; ``twist=False`` leaves the rest twists out of ``p``)."""
        m = self.model
        s = int(self._strands([strand])[0])
        sc = np.ones(m.n_strands)
        sc[s] = float(scale)
        blk = self.jacobian_blocks(rest, strands=[s], scale=sc)
        free = ~m.fixed
        d0, d1 = int(m.strand_dof_start[s]), int(m.strand_dof_start[s + 1])
        rows = np.arange(d0, d1)[free[d0:d1]]
        row_of = np.full(m.n_dofs, -1)
        row_of[rows] = np.arange(len(rows))
        edges = np.arange(int(m.strand_edge_start[s]), int(m.strand_edge_start[s + 1]))
        bends = np.arange(int(m.strand_bend_start[s]), int(m.strand_bend_start[s + 1]))
        edges = edges[free[m.stretch_dofs[edges]].any(axis=1)]
        bends = bends[free[m.bend_dofs[bends]].any(axis=1)]
        col_len = np.full(m.n_edges, -1)
        col_len[edges] = np.arange(len(edges))
        nl, nk = len(edges), 4 * len(bends)
        tw = bends if twist else bends[:0]
        r, c, v = [], [], []

        def add(dofs, cols, vals):
            rr = row_of[dofs]
            ok = (rr >= 0) & (cols >= 0)
            r.append(rr[ok])
            c.append(cols[ok])
            v.append(vals[ok])

        for e in edges:
            add(m.stretch_dofs[e], np.full(6, col_len[e]), blk.stretch[e] + blk.weight[e])
        for k, b in enumerate(bends):
            for c4 in range(4):
                add(m.bend_dofs[b], np.full(11, nl + 4 * k + c4), blk.curvature[b, :, c4])
            if twist:
                add(m.bend_dofs[b], np.full(11, nl + nk + k), blk.twist[b])
            for j in m.bend_edges[b]:
                add(m.bend_dofs[b], np.full(11, col_len[j]), 0.5 * blk.voronoi[b])
        mat = sp.coo_matrix((np.concatenate(v), (np.concatenate(r), np.concatenate(c))),
                            shape=(len(rows), nl + nk + len(tw))).tocsr()
        return RestJacobian(mat, rows, edges, bends, tw.copy())
