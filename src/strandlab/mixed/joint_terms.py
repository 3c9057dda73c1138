"""Point and curve connection energies as :class:`~strandlab.implicit.terms.StencilTerm`.

- :class:`PointJointTerm`: twist (eq. 2) and bend (eq. 5) of two simplices sharing a vertex,
  ``E = 1/2 k_t (delta - deltabar)^2 + 1/2 k_b omega^2``, k_t, k_b [N m / rad^2];
- :class:`PointHardTerm`: the hard point form (eq. 1) as a penalty,
  ``E = 1/2 k |M^T [n1 n2] - Mbar^T [n1bar n2bar]|^2``, k [N m];
- :class:`CurveJointTerm`: rotation about a shared edge (eqs. 8, 9),
  ``E = 1/2 k |ebar| (delta - deltabar)^2``, k [N m / rad^2 per m], ``|ebar|`` [m];
- :class:`CurveHardTerm`: the hard curve form (eq. 6) as a penalty,
  ``E = 1/2 k |ebar| |M^T n1 - Mbar^T n1bar|^2``, k [N m / m].

Formulas, angle branches and derivatives: :mod:`strandlab.mixed.joints`; frames:
:mod:`strandlab.mixed.frames`.

Stencil layouts (``dofs[s, :]``, each vertex 3 consecutive slots, angle slots last):

- point, ``kinds = (A, B)`` with A, B in ``"rod"``, ``"triangle"``, ``"tet"``: the shared vertex
  ``v``, then A's other vertices, then B's, then ``theta`` of A if A is a rod, then of B if B is
  a rod.  A rod has one other vertex (``rod_forward[s, i]`` True when its edge runs from ``v``
  to it), a triangle two (``p1, p2``; its normal is ``(p1 - v) x (p2 - v)``), a tetrahedron
  three.  Example, rod-triangle: ``(v, x_rod, p1, p2, theta)``, 13 slots;
- curve, ``("rod", "triangle")``: ``(a, b, c, theta)``, the rod edge ``a -> b`` lying on the edge
  ``(a, b)`` of triangle ``(a, b, c)``, 10 slots; ``("triangle", "triangle")``:
  ``(a, b, c, d)``, triangles ``(a, b, c)`` (side A) and ``(a, b, d)`` (side B) sharing the edge
  ``(a, b)``, 12 slots (shell-shell, shell-solid and solid-solid curves, through the solids'
  surface triangles).

Orientation at a point: side A's twisting axis is turned to point into the shared vertex and
side B's out of it (a rod's edge tangent or its opposite; a triangle's bisector and a
tetrahedron's centroid direction point out of the vertex, so A's frame is turned by pi about
``m1``).  A straight continuation (a rod going on where a shell ends, two consecutive rod
edges) thus has aligned axes, and the transport ``m3 -> n3`` fails only when B folds back onto
A.  For two consecutive rod edges ``(j0, j1)`` the twist is the discrete-elastic-rod twist
``theta_j1 - theta_j0 + m_ref``.

Rods.  Rod sides read the model's step start arrays ``t_start`` and ``a1_start`` [R, 3] (shared,
not copied; rows named by ``rod_edge``): the reference director at an iterate is
``a1 = P(t_start -> t) a1_start``, the same function of ``q`` as the time-parallel transport of
:func:`strandlab.rods.kernels.transport_frames` from the step start, so the derivatives are those
of the energy the step minimises.  The model sets both arrays at the start of each step, then
calls :meth:`_JointTerm.begin_step`, and re-bases them on each accepted Newton iterate (the
rods' :meth:`~strandlab.rods.frames.RodFrames.rebase`): such a term ``reads_base``, and the
integrator evaluates it again after a re-base.

State.  Soft terms store one angle per stencil (``angles`` [S] [rad], the angle at the start of
the step), used by the incremental modes and updated by :meth:`_JointTerm.begin_step`; a
checkpoint saves it and restores it with :meth:`_JointTerm.load_angles`.
"""
from __future__ import annotations

import numpy as np

from ..implicit.assembly import use_parallel
from ..implicit.terms import check_dofs
from ..rods.terms import _DERTerm, _per_stencil, _shared
from . import joints as _j
from .elements import ELEMENT_PARALLEL_MIN_WORK
from .frames import ROD_EDGE, TET_VERTEX, TRIANGLE_EDGE, TRIANGLE_VERTEX

__all__ = ["PointJointTerm", "PointHardTerm", "CurveJointTerm", "CurveHardTerm", "MODES",
           "JOINT_WORK"]

#: Angle update modes (section 3.1): no history, unwrap to the nearest branch (I), pre-rotation
#: of m1 by the stored angle (II).
MODES = {"direct": _j.DIRECT, "incremental1": _j.INCREMENTAL_I,
         "incremental2": _j.INCREMENTAL_II}

#: Serial cost of one stencil of ``k`` slots with the Hessian, ``JOINT_WORK[0] * k^2``, and
#: without, ``JOINT_WORK[1]``, in the work units of
#: :data:`strandlab.implicit.assembly.PARALLEL_MIN_WORK` (about 2 ns): 5.1 us for a
#: rod-triangle curve stencil (k = 10), 8.5-11 us for point stencils of 13-16 slots, 0.6-1.4 us
#: without the Hessian, measured on the development machine (docs/mixed.md) when the frames'
#: curvature was a forward difference; the exact curvature (:mod:`.frame_hessians`) takes
#: 0.4-0.5 of that with the Hessian, hence 12 rather than 25 units per slot squared.
JOINT_WORK = (12, 500)

_POINT_KINDS = {"rod": (ROD_EDGE, 1), "triangle": (TRIANGLE_VERTEX, 2), "tet": (TET_VERTEX, 3)}
_CURVE_KINDS = (("rod", "triangle"), ("triangle", "triangle"))


def _point_layout(name, kinds):
    """Frame kinds [2], slots [2, 5], stencil size and rod sides of a point stencil."""
    if len(kinds) != 2 or any(k not in _POINT_KINDS for k in kinds):
        raise ValueError(f"term {name!r}: point kinds must be two of {sorted(_POINT_KINDS)}, "
                         f"got {kinds!r}")
    codes = np.array([_POINT_KINDS[k][0] for k in kinds], dtype=np.int64)
    slots = np.full((2, 5), -1, dtype=np.int64)
    nxt = 3
    for i, k in enumerate(kinds):
        n = _POINT_KINDS[k][1]
        slots[i, 0] = 0
        slots[i, 1:1 + n] = nxt + 3 * np.arange(n)
        nxt += 3 * n
    n_pos = nxt
    for i, k in enumerate(kinds):
        if k == "rod":
            slots[i, 4] = nxt
            nxt += 1
    return codes, slots, n_pos, nxt


def _curve_layout(name, kinds):
    kinds = tuple(kinds)
    if kinds not in _CURVE_KINDS:
        raise ValueError(f"term {name!r}: curve kinds must be one of {_CURVE_KINDS}, got "
                         f"{kinds!r}")
    slots = np.full((2, 5), -1, dtype=np.int64)
    slots[:, :3] = (0, 3, 6)
    if kinds[0] == "rod":
        slots[0, 2] = -1
        slots[0, 4] = 9
        return np.array([ROD_EDGE, TRIANGLE_EDGE]), slots, 9, 10
    slots[1, 2] = 9
    return np.array([TRIANGLE_EDGE, TRIANGLE_EDGE]), slots, 12, 12


class _JointTerm(_DERTerm):
    """Common part: layout, rod arrays, scratch, kernels, rest state and stored angles."""

    ttype = _j.POINT
    soft = True

    def _setup(self, name, kinds, dofs, layout, rod_edge, rod_forward, a1_start, t_start,
               mode, point):
        self.name = name
        self.kinds = tuple(kinds)
        codes, slots, n_pos, k = layout
        self.dofs = check_dofs(name, dofs)
        if self.dofs.shape[1] != k:
            raise ValueError(f"term {name!r}: stencils of kinds {self.kinds} have {k} slots, "
                             f"got {self.dofs.shape[1]}")
        n = self.dofs.shape[0]
        self.mode = mode
        ints, sign = self._rods(name, n, point, rod_edge, rod_forward, a1_start, t_start)
        self._lay = (codes, slots, ints, sign, self.t_start, self.a1_start)
        self._n_pos = n_pos
        m = _j.N_FEATURES[self.ttype]
        self._work = (np.zeros((n, k)), np.zeros((n, 3, 9)), np.zeros((n, 3, 9, k)),
                      np.zeros((n, 6)), np.zeros((n, 6, k)), np.zeros((n, 6)),
                      np.zeros((n, 6, 6)), np.zeros((n, 2, k)), np.zeros((n, 3, 9)))
        self.params = np.zeros((n, 1 + m if not self.soft else 6))
        self.angles = np.zeros(n)
        self._status = (np.zeros(n), np.zeros((n, k)), np.zeros((0, k, k)))
        self._rest_set = False

    def _rods(self, name, n, point, rod_edge, rod_forward, a1_start, t_start):
        """Per stencil ``(swap_a, swap_b, row_a, row_b)`` and frame signs."""
        rod_sides = [i for i, k in enumerate(self.kinds) if k == "rod"]
        ints = np.zeros((n, 4), dtype=np.int64)
        sign = np.ones((n, 2))
        if point:
            sign[:, 0] = -1.0
        if not rod_sides:
            self.a1_start = np.zeros((1, 3))
            self.t_start = np.zeros((1, 3))
            return ints, sign
        self.reads_base = True          # the rods' frames are transported from the base
        if a1_start is None or t_start is None or rod_edge is None:
            raise ValueError(f"term {name!r}: kinds {self.kinds} need rod_edge, a1_start and "
                             "t_start")
        self.a1_start = _shared(name, "a1_start", a1_start, (np.shape(a1_start)[0], 3))
        self.t_start = _shared(name, "t_start", t_start, self.a1_start.shape)
        nr = len(rod_sides)
        rows = np.ascontiguousarray(rod_edge, dtype=np.int64).reshape(n, -1) if n else \
            np.zeros((0, nr), dtype=np.int64)
        if rows.shape != (n, nr):
            raise ValueError(f"term {name!r}: rod_edge must have shape {(n, nr)}, got "
                             f"{np.shape(rod_edge)}")
        bad = (rows < 0) | (rows >= self.a1_start.shape[0])
        if bad.any():
            s = int(np.argwhere(bad)[0][0])
            raise ValueError(f"term {name!r}: stencil {s} names rod edge {rows[s].tolist()}, "
                             f"out of range (the frames hold {self.a1_start.shape[0]} edges)")
        fwd = np.ones((n, nr), dtype=bool)
        if point:
            if rod_forward is None:
                raise ValueError(f"term {name!r}: point stencils with rods need rod_forward")
            fwd = np.asarray(rod_forward, dtype=bool).reshape(n, -1) if n else fwd
            if fwd.shape != (n, nr):
                raise ValueError(f"term {name!r}: rod_forward must have shape {(n, nr)}, got "
                                 f"{np.shape(rod_forward)}")
        for j, side in enumerate(rod_sides):
            ints[:, 2 + side] = rows[:, j]
            ints[:, side] = ~fwd[:, j]
            if point:   # A's axis points into v, B's out of it
                out = fwd[:, j]
                sign[:, side] = np.where(out == (side == 1), 1.0, -1.0)
        return ints, sign

    @property
    def mode(self) -> str:
        """Angle update mode: ``"incremental2"``, ``"incremental1"`` or ``"direct"``."""
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"term {self.name!r}: mode must be one of {sorted(MODES)}, got "
                             f"{mode!r}")
        self._mode = mode

    # ------------------------------------------------------------------ kernels
    def _par(self):
        return (self.ttype, self._n_pos, self.params, self.angles, MODES[self._mode])

    def _run(self, op, q, energy_out, grad_out, hess, want):
        k = self.dofs.shape[1]
        work = len(self.dofs) * (JOINT_WORK[0] * k * k if want else JOINT_WORK[1])
        kern = _j.joint_terms if use_parallel(2, work, min_work=ELEMENT_PARALLEL_MIN_WORK) \
            else _j.joint_terms_serial
        return kern(op, q, self.dofs, self._lay, self._par(), self._work, energy_out, grad_out,
                    hess, want)

    def evaluate(self, q, energy_out, grad_out, hess_out):
        if not self._rest_set:
            raise RuntimeError(f"term {self.name!r}: no rest state (give it, or call set_rest)")
        h, want = self._check_out(energy_out, grad_out, hess_out)
        self._report(self._run(_j.EVALUATE, q, energy_out, grad_out, h, want), energy_out)

    def _measure(self, q, op):
        status, grad, hess = self._status
        self._run(op, np.ascontiguousarray(q, dtype=np.float64), status, grad, hess, False)
        return status

    def measure(self, q):
        """Features [S, m] (see :mod:`strandlab.mixed.joints`) and director products
        ``D[s, 3 i + j] = m_i . n_j`` [S, 9] at ``q``; ValueError naming the first degenerate
        stencil."""
        status = self._measure(q, _j.MEASURE)
        if not np.isfinite(status).all():
            raise ValueError(f"term {self.name!r}: stencil {int(np.argmax(status))} is "
                             "degenerate (a frame or the transport between them is undefined)")
        m = _j.N_FEATURES[self.ttype]
        return self._work[3][:, :m].copy(), self._work[1][:, 2].copy()

    def begin_step(self, q):
        """Store every stencil's angle at the step start ``q`` (after the model has set the
        rods' ``a1_start``, ``t_start`` for ``q``); a degenerate stencil keeps its angle.
        Returns the number of those."""
        if not self.soft:
            return 0
        status = self._measure(q, _j.UPDATE)
        return int(np.count_nonzero(~np.isfinite(status)))

    def load_angles(self, angles):
        """Restore the stored angles [S] [rad] (from a checkpoint)."""
        self.angles[...] = _per_stencil(self.name, "angles", angles, len(self.dofs))

    def _rest_values(self, rest, cols):
        n = len(self.dofs)
        self.params[:, 1:1 + cols] = _per_stencil(self.name, "rest", rest, n,
                                                  cols=cols).reshape(n, cols)
        self._rest_set = True


class PointJointTerm(_JointTerm):
    """Twist and bend at point connections.

    kinds : ``(A, B)``, each ``"rod"``, ``"triangle"`` or ``"tet"``; dofs int [S, k] (module
    docstring); twist_stiffness, bend_stiffness : k_t, k_b [N m / rad^2], [S], >= 0;
    rest_twist : deltabar [rad] [S] and rest_axis : dbar [S, 3] (unit), or both None and
    :meth:`set_rest` called before the first evaluation; rod_edge int [S, n_rods] and
    rod_forward bool [S, n_rods] for the rod sides (in the order A, B); a1_start, t_start
    [R, 3] the rods' step start frames (shared); mode : ``"incremental2"`` (default),
    ``"incremental1"`` or ``"direct"``.
    """

    def __init__(self, *, kinds, dofs, twist_stiffness, bend_stiffness, rest_twist=None,
                 rest_axis=None, rod_edge=None, rod_forward=None, a1_start=None, t_start=None,
                 mode: str = "incremental2", name: str = "point_joint"):
        self._setup(name, kinds, dofs, _point_layout(name, tuple(kinds)), rod_edge,
                    rod_forward, a1_start, t_start, mode, True)
        n = len(self.dofs)
        self.params[:, 0] = _per_stencil(name, "twist_stiffness", twist_stiffness, n)
        self.params[:, 2] = _per_stencil(name, "bend_stiffness", bend_stiffness, n)
        if (self.params[:, [0, 2]] < 0).any():
            s = int(np.argwhere(self.params[:, [0, 2]] < 0)[0][0])
            raise ValueError(f"term {name!r}: stiffness of stencil {s} must be >= 0")
        if rest_twist is not None or rest_axis is not None:
            self.params[:, 1] = _per_stencil(name, "rest_twist", rest_twist, n)
            axis = _per_stencil(name, "rest_axis", rest_axis, n, cols=3)
            norm = np.linalg.norm(axis, axis=1)
            if n and not np.allclose(norm, 1.0, atol=1e-9):
                s = int(np.argmax(np.abs(norm - 1.0)))
                raise ValueError(f"term {name!r}: rest_axis of stencil {s} must be a unit "
                                 f"vector, got {axis[s].tolist()}")
            self.params[:, 3:6] = axis
            self.angles[:] = self.params[:, 1]
            self._rest_set = True

    def set_rest(self, q):
        """Rest twist and axis from configuration ``q`` (the stored angles start there)."""
        r, _ = self.measure(q)
        self.params[:, 1] = np.arctan2(r[:, 1], r[:, 0])
        self.params[:, 3:6] = r[:, 2:5] / np.linalg.norm(r[:, 2:5], axis=1)[:, None]
        self.angles[:] = self.params[:, 1]
        self._rest_set = True

    @property
    def rest_twist(self):
        return self.params[:, 1]

    @property
    def rest_axis(self):
        return self.params[:, 3:6]


class CurveJointTerm(_JointTerm):
    """Rotation about shared edges.

    kinds : ``("rod", "triangle")`` or ``("triangle", "triangle")``; dofs int [S, 10 | 12];
    stiffness : k [N m / rad^2 per m], [S], >= 0; rest_length : |ebar| [m], [S], > 0;
    rest_angle : deltabar [rad] [S], or None and :meth:`set_rest` called before the first
    evaluation; rod_edge int [S] for a rod side; a1_start, t_start as for
    :class:`PointJointTerm`; mode as there.
    """

    ttype = _j.CURVE

    def __init__(self, *, kinds, dofs, stiffness, rest_length, rest_angle=None, rod_edge=None,
                 a1_start=None, t_start=None, mode: str = "incremental2",
                 name: str = "curve_joint"):
        self._setup(name, kinds, dofs, _curve_layout(name, kinds), rod_edge, None, a1_start,
                    t_start, mode, False)
        _stiffness_times_length(self, stiffness, rest_length)
        if rest_angle is not None:
            self._rest_values(rest_angle, 1)
            self.angles[:] = self.params[:, 1]

    def set_rest(self, q):
        """Rest angle from configuration ``q`` (the stored angles start there)."""
        r, _ = self.measure(q)
        self.params[:, 1] = np.arctan2(r[:, 1], r[:, 0])
        self.angles[:] = self.params[:, 1]
        self._rest_set = True


def _stiffness_times_length(term, stiffness, rest_length):
    n = len(term.dofs)
    k = _per_stencil(term.name, "stiffness", stiffness, n)
    if (k < 0).any():
        raise ValueError(f"term {term.name!r}: stiffness of stencil "
                         f"{int(np.argmax(k < 0))} must be >= 0")
    length = 1.0 if rest_length is None else _per_stencil(term.name, "rest_length",
                                                          rest_length, n, positive=True)
    term.params[:, 0] = k * length


class _HardTerm(_JointTerm):
    soft = False

    def set_rest(self, q):
        """Rest director products from configuration ``q``."""
        r, _ = self.measure(q)
        self.params[:, 1:] = r
        self._rest_set = True


class PointHardTerm(_HardTerm):
    """Hard point connection (eq. 1) as a penalty: arguments of :class:`PointJointTerm` with
    ``stiffness`` k [N m] [S] (a small relative rotation by ``phi`` about the unit axis ``a``
    costs ``1/2 k (1 + (a . n3)^2) phi^2``: choose k well above the joint's elastic
    stiffnesses, e.g. 1e3 times) and ``rest_products`` ``Dbar[:, (11, 12, 21, 22, 31, 32)]``
    [S, 6] or None (then :meth:`set_rest`)."""

    ttype = _j.POINT_HARD

    def __init__(self, *, kinds, dofs, stiffness, rest_products=None, rod_edge=None,
                 rod_forward=None, a1_start=None, t_start=None, name: str = "point_hard"):
        self._setup(name, kinds, dofs, _point_layout(name, tuple(kinds)), rod_edge,
                    rod_forward, a1_start, t_start, "direct", True)
        _stiffness_times_length(self, stiffness, None)
        if rest_products is not None:
            self._rest_values(rest_products, 6)


class CurveHardTerm(_HardTerm):
    """Hard curve connection (eq. 6) as a penalty: arguments of :class:`CurveJointTerm` with
    ``stiffness`` k [N m / m] [S] (a small rotation by ``phi`` about the edge costs
    ``1/2 k |ebar| phi^2``, as the soft term does) and ``rest_products``
    ``Dbar[:, (11, 21, 31)]`` [S, 3] or None (then :meth:`set_rest`)."""

    ttype = _j.CURVE_HARD

    def __init__(self, *, kinds, dofs, stiffness, rest_length, rest_products=None,
                 rod_edge=None, a1_start=None, t_start=None, name: str = "curve_hard"):
        self._setup(name, kinds, dofs, _curve_layout(name, kinds), rod_edge, None, a1_start,
                    t_start, "direct", False)
        _stiffness_times_length(self, stiffness, rest_length)
        if rest_products is not None:
            self._rest_values(rest_products, 3)
