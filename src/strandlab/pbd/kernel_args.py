"""Named argument groups of the position-based kernels (NamedTuples, which Numba accepts).

A kernel call reads ``model`` (:class:`PBDModelArrays`, constant over a run) and ``params``
(:class:`StepParams`, this step's scalars and kinematic targets), reads ``state_in``
(:class:`StateArrays`), writes ``state_out`` (may be the same arrays) and uses ``scratch``
(:class:`Scratch`, solver-owned work memory) and ``contact`` (:class:`ContactArrays`, the
contacts between strands).  Shapes use ``P`` points, ``S`` strands, ``E``
edges, ``O`` interior orientation elements, ``C`` coupling orientation constraints, ``N`` the
substeps of one kernel call.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..collision.grid import GridArrays
from ..collision.segment_contact import SegmentSet

__all__ = ["PBDModelArrays", "StateArrays", "Scratch", "StepParams", "ContactArrays"]


class PBDModelArrays(NamedTuple):
    """Constant model arrays (read only).  Couplings are sorted by strand."""

    inv_mass: np.ndarray             #: Inverse masses [1/kg], [P]
    collide_radius: np.ndarray       #: Contact radius [m] (0: no collisions), [P]
    point_friction: np.ndarray       #: Friction of the point's strand (NaN: none), [P]
    point_drive: np.ndarray          #: Row of ``StepParams.drive_pos`` moving the point or -1, [P]
    n_strand_points: int             #: Vertices plus ghost points; later points are extra
    strand_vertex_start: np.ndarray  #: [S + 1]
    strand_edge_start: np.ndarray    #: [S + 1]
    strand_oe_start: np.ndarray      #: [S + 1]
    strand_co_start: np.ndarray      #: First coupling of each strand, [S + 1]
    strand_direct: np.ndarray        #: Edge lengths by the tridiagonal solve, bool [S]
    self_thickness: np.ndarray       #: Self-contact distance [m] (0: off), [S]
    self_skip: np.ndarray            #: Neighbouring edges ignored by self-contact, [S]
    edge_p0: np.ndarray              #: [E]
    edge_p1: np.ndarray              #: [E]
    edge_ghost: np.ndarray           #: [E]
    edge_rest_length: np.ndarray     #: [m], [E]
    ghost_rest_distance: np.ndarray  #: [m], [E]
    edge_compliance: np.ndarray      #: [m/N] (0: hard), [E]
    oe_idx: np.ndarray               #: [O, 6]
    oe_rest_omega: np.ndarray        #: [1/m], [O, 3]
    oe_rest_length: np.ndarray       #: [m], [O]
    oe_compliance: np.ndarray        #: [1/(N m)], [O, 3]
    co_idx: np.ndarray               #: [C, 6]
    co_rot: np.ndarray               #: [C, 3, 3]
    co_rest_length: np.ndarray       #: [m], [C]
    co_compliance: np.ndarray        #: [C, 3]
    pin_point: np.ndarray            #: [N_pin]
    pin_targets: np.ndarray          #: [N_pin, 3]
    pin_weights: np.ndarray          #: [N_pin, 3]
    slide_point: np.ndarray          #: [N_slide]
    dist_i: np.ndarray               #: [N_dist]
    dist_j: np.ndarray               #: [N_dist]
    dist_rest: np.ndarray            #: [m], [N_dist]
    dist_compliance: np.ndarray      #: [m/N], [N_dist]
    planes: np.ndarray               #: [N_plane, 6]
    spheres: np.ndarray              #: [N_sphere, 4]
    capsules: np.ndarray             #: [N_capsule, 7]
    collider_friction: np.ndarray    #: [N_collider]
    gravity: np.ndarray              #: [m/s^2], [3]
    eye: np.ndarray                  #: Identity rotation, [1, 3, 3]
    co_rest_omega: np.ndarray        #: Rest Darboux vectors of the couplings (zero), [C, 3]


class StateArrays(NamedTuple):
    """Positions [m] and velocities [m/s] of the points, [P, 3]; midpoint velocities of the
    previous substep [m/s], [E, 3] (NaN: none yet)."""

    x: np.ndarray
    v: np.ndarray
    mid_v: np.ndarray


class Scratch(NamedTuple):
    """Work memory (per point, edge or constraint; each strand uses only its own rows)."""

    x_pred: np.ndarray               #: Predicted, then projected positions [m], [P, 3]
    share: np.ndarray                #: Gravity share kept by each ghost point, [E]
    lam_len: np.ndarray              #: XPBD multipliers, [E]
    lam_oe: np.ndarray               #: [O, 3]
    lam_co: np.ndarray               #: [C, 3]
    lam_dist: np.ndarray             #: [N_dist]
    perm: np.ndarray                 #: Random order, [max(E, 1)]
    tri_b: np.ndarray                #: Tridiagonal solve, [max(E, 1)]
    tri_c: np.ndarray                #: [max(E, 1)]
    tri_d: np.ndarray                #: [max(E, 1)]
    nrm: np.ndarray                  #: [max(E, 1), 3]
    contact_depth: np.ndarray        #: Accumulated contact depth [m], [P]
    contact_normal: np.ndarray       #: [P, 3]
    contact_mu: np.ndarray           #: [P]


class ContactArrays(NamedTuple):
    """Contacts between strands (the kernels' last argument).  Only the serial parts of a step
    read it: a parallel loop body cannot take argument groups nested in argument groups."""

    segs: SegmentSet                 #: Edges as capsules (read only; none when
    #:                                  ``strand_collision`` is off)
    grid: GridArrays                 #: Broad phase work memory
    pairs: np.ndarray                #: Candidate segment pairs of the substep, int64 [K, 2]
    status: np.ndarray               #: Largest pair count found, search status and its item,
    #:                                  pairs in use, int64 [4] (see ``kernels.py``)
    mass_scale: np.ndarray           #: Mass scale of colliding points (not used by PBD), [P]


class StepParams(NamedTuple):
    """Settings and per-substep inputs of one kernel call (``N`` substeps of ``dt`` each)."""

    dt: float                        #: Substep [s]
    n_sub: int                       #: Substeps ``N`` run by this call
    iterations: int                  #: Constraint passes per substep
    order: int                       #: ORDER_* code
    seed: int                        #: Seed of the first substep's random order
    use_xpbd: bool                   #: XPBD compliance (else relaxed alphas)
    gravity_mode: int                #: GRAVITY_* code
    damping: float                   #: Velocity damping rate [1/s]
    oe_alpha: np.ndarray             #: Relaxation alphas for ``dt``, [O, 3]
    co_alpha: np.ndarray             #: [C, 3]
    drive_pos: np.ndarray            #: Targets of moving driven points per substep [m], [N, D, 3]
    slide_origin: np.ndarray         #: Sliding-end lines per substep [m], [N, N_slide, 3]
    slide_dir: np.ndarray            #: Unit directions, [N, N_slide, 3]
    strand_contact: bool = False     #: Capsule contacts between strands (grid search)
    contact_voxel: float = 1.0       #: Voxel side of the grid [m]
    contact_search: int = 27         #: 7 or 27 voxels
    contact_margin: float = 0.0      #: Pairs found once per substep within contact + margin [m]
