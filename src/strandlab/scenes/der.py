"""Scenes of the discrete-elastic-rods solver (``der_*``): twisted rods and rings, a hair strand,
a rope on a sphere, and many strands stepped together.

Each builder returns a :class:`~strandlab.sim.runner.Simulation` with ``solver="der"``.  The
measured quantities of these scenes (writhe, link, settling, strain, contact) are defined here
(:func:`twist_turns`, :func:`clamped_writhe`, :func:`out_of_plane`, :func:`edge_strain`) and
checked in ``tests/scenes/test_der_scenes.py``.

Self-contact: the DER solver has none yet, so a twisted rod whose loops press on each other
passes through itself, and its linking number then jumps by 2 per crossing.  The twisted scenes
are set up (twist, end travel, duration) so that they stay clear of that.
"""
from __future__ import annotations

import math

import numpy as np

from ..der import DERSettings
from ..geometry.writhe import writhe
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.shapes import circle, line

__all__ = ["der_plectoneme", "der_hanging_hair", "der_rope_on_sphere", "der_michell_ring",
           "der_many_strands", "twist_turns", "clamped_writhe", "out_of_plane", "edge_strain",
           "hair_strands"]


# ------------------------------------------------------------------------------ measures

def twist_turns(model, state) -> np.ndarray:
    """Excess twist of every strand of a DER state, in turns, [S]: the sum over its bend-twist
    stencils of ``tau - taubar`` (``tau = theta_j1 - theta_j0 + reference twist`` [rad]) over
    2 pi.  For a rod or ring with a twist-free rest shape this is the total twist ``Tw`` of the
    Calugareanu-White relation ``Lk = Tw + Wr``."""
    d = model.bend_dofs
    tau = state.q[d[:, 7]] - state.q[d[:, 3]] + state.ref_twist - model.rest_twist
    out = np.zeros(model.n_strands)
    np.add.at(out, model.vertex_strand[model.bend_vertex], tau)
    return out / (2.0 * math.pi)


def clamped_writhe(points: np.ndarray, *, axis=(1.0, 0.0, 0.0), far: float = 100.0) -> float:
    """Writhe of an open rod whose two end edges lie on one straight line along ``axis``
    (ends clamped facing each other), closed by that line's continuations beyond the ends and a
    planar rectangle ``far`` rod lengths away.  The closure is planar and carries no twist, so
    ``Tw + Wr`` of the rod equals the turns imposed on its ends (as long as the rod does not
    pass through itself or the closure).  ``points`` [n, 3] [m]."""
    p = np.asarray(points, dtype=np.float64)
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    size = far * max(float(np.sum(np.linalg.norm(np.diff(p, axis=0), axis=1))), 1e-300)
    side = np.cross(a, [0.0, 0.0, 1.0] if abs(a[2]) < 0.9 else [0.0, 1.0, 0.0])
    side /= np.linalg.norm(side)
    e0, e1 = p[0] - size * a, p[-1] + size * a
    closure = np.array([e1, e1 + size * side, e0 + size * side, e0])
    return writhe(np.vstack([p, closure]), closed=True)


def out_of_plane(points: np.ndarray, *, modes: int = 0):
    """Largest distance [m] of ``points`` [n, 3] from their best-fitting plane; with ``modes``
    > 0 also the amplitudes [m] of the waves ``cos k phi + sin k phi`` (``k = 0 .. modes``) of
    that distance around a ring, ``phi`` the angle about the centroid in the plane."""
    p = np.asarray(points, dtype=np.float64)
    c = p - p.mean(axis=0)
    axes = np.linalg.svd(c, full_matrices=False)[2]
    d = c @ axes[-1]
    if not modes:
        return float(np.max(np.abs(d)))
    phi = np.arctan2(c @ axes[1], c @ axes[0])
    amp = np.array([math.hypot(np.mean(d * np.cos(k * phi)), np.mean(d * np.sin(k * phi)))
                    for k in range(modes + 1)]) * 2.0
    amp[0] *= 0.5
    return float(np.max(np.abs(d))), amp


def edge_strain(model, q: np.ndarray) -> np.ndarray:
    """Strain ``| |e| / lbar - 1 |`` of every edge [E] at coordinates ``q``."""
    x = model.positions(q)
    ln = np.linalg.norm(x[model.edge_v1] - x[model.edge_v0], axis=1)
    return np.abs(ln / model.rest_length - 1.0)


# ------------------------------------------------------------------------------ scenes

def der_plectoneme(*, length: float = 1.0, segments: int = 60, radius: float = 0.005,
                   young_modulus: float = 1e6, poisson_ratio: float = 0.5, turns: float = 4.0,
                   twist_time: float = 8.0, end_travel: float = 0.3, hold_time: float = 2.0,
                   imperfection: float = 1e-3, frames: int | None = None,
                   dt: float = 1.0 / 60.0, damping: float = 2.0) -> Simulation:
    """A rod clamped at both ends, with no gravity; the end at ``x = length`` turns ``turns``
    times about the rod's axis over ``twist_time`` [s] while moving ``end_travel`` [m] towards
    the other end, then holds still.

    A straight twisted rod with clamped ends buckles at Greenhill's moment ``M L / B = 2.86
    pi`` (:func:`strandlab.reference.greenhill_moment`), i.e. after ``1.43 B / C`` turns (2.15
    for ``nu = 0.5``) whatever its length; with the ends held apart (``end_travel = 0``) the
    buckled rod must stretch to leave the axis, so it deflects only a little.  Moving the ends
    together gives it slack: it bows out, and the twist turns the bow into a coil whose writhe
    grows (by 0.6 over the default four turns).  ``Tw + Wr`` equals the imposed turns
    (:func:`twist_turns`, :func:`clamped_writhe`) until the coil's strands touch; having no
    self-contact the rod then passes through itself and its link drops by 2 (shortly after the
    default twisting stops).  ``imperfection`` [m]: amplitude of a sideways bow of the rod's
    initial and rest shape, which picks the buckling direction.  ``damping`` [1/s]:
    mass-proportional damping.
    """
    b = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    mat = Material(young_modulus=young_modulus, density=1000.0, radius=radius,
                   poisson_ratio=poisson_ratio)
    pts = line((0.0, 0.0, 0.0), (length, 0.0, 0.0), segments)
    s = np.linspace(0.0, 1.0, segments + 1)
    bow = imperfection * np.sin(np.pi * s) ** 2
    bow[[0, 1, -2, -1]] = 0.0           # the clamped edges stay on the axis
    pts[:, 1] += bow
    st = b.add_strand(pts, material=mat, d1=(0.0, 0.0, 1.0), name="rod")  # rest shape: bowed
    f0 = b.add_frame((0.0, 0.0, 0.0))
    omega = 2.0 * math.pi * turns / twist_time
    f1 = b.add_frame((length, 0.0, 0.0), angular_velocity=(omega, 0.0, 0.0),
                     linear_velocity=(-end_travel / twist_time, 0.0, 0.0), stop=twist_time)
    b.attach_to_frame(st, f0, end=0)
    b.attach_to_frame(st, f1, end=-1)
    params = dict(length=length, segments=segments, radius=radius, young_modulus=young_modulus,
                  poisson_ratio=poisson_ratio, turns=turns, twist_time=twist_time,
                  end_travel=end_travel, hold_time=hold_time, imperfection=imperfection,
                  damping=damping)
    if frames is None:
        frames = max(1, round((twist_time + hold_time) / dt))
    return Simulation("der_plectoneme", b.build(), DERSettings(damping=damping), dt, frames,
                      description="rod clamped at both ends, one end turned: coils past "
                      "Greenhill's onset (discrete elastic rods)", params=params,
                      view=(25.0, -70.0), solver="der")


def der_hanging_hair(*, length: float = 0.25, segments: int = 50, root_radius: float = 50e-6,
                     tip_radius: float = 40e-6, young_modulus: float = 3.5e9,
                     density: float = 1300.0, frames: int = 600, dt: float = 1.0 / 120.0,
                     damping: float = 2.0) -> Simulation:
    """One hair strand clamped at its root, released from horizontal: it swings down under
    gravity and settles hanging below the root.

    Human hair (Robbins, *Chemical and Physical Behavior of Human Hair*): radius tapering
    linearly from ``root_radius`` to ``tip_radius`` [m] (per vertex), Young's modulus
    ``young_modulus`` [Pa] (3-4 GPa), density 1300 kg/m^3, shear modulus ``E / 3``.  The root
    clamp holds the first edge horizontal along +x (its midpoint, the root, at the origin).
    ``damping`` [1/s]: mass-proportional damping standing in for air drag.
    """
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    mat = Material(young_modulus=young_modulus, density=density, radius=root_radius)
    dl = length / (segments - 0.5)
    x = (np.arange(segments + 1) - 0.5) * dl
    pts = np.stack([x, np.zeros_like(x), np.zeros_like(x)], axis=1)
    r = np.interp(x, [0.0, x[-1]], [root_radius, tip_radius])
    s = b.add_strand(pts, material=mat, radius=r, d1=(0.0, 0.0, 1.0), name="hair")
    b.attach_to_frame(s, b.add_frame(), end=0)
    params = dict(length=length, segments=segments, root_radius=root_radius,
                  tip_radius=tip_radius, young_modulus=young_modulus, density=density,
                  damping=damping)
    return Simulation("der_hanging_hair", b.build(), DERSettings(damping=damping), dt, frames,
                      description="a tapered hair strand clamped at the root swings down and "
                      "settles (discrete elastic rods)", params=params, view=(10.0, -90.0),
                      solver="der")


def der_rope_on_sphere(*, length: float = 1.0, segments: int = 50, radius: float = 0.005,
                       young_modulus: float = 1e7, sphere_radius: float = 0.2,
                       friction: float = 0.5, drop: float = 0.01, frames: int = 960,
                       dt: float = 1.0 / 120.0, substeps: int = 4,
                       damping: float = 4.0) -> Simulation:
    """A rope of ``length`` [m] held horizontally ``drop`` [m] above the top of a sphere (a
    static collider with Coulomb ``friction``), centred on it, falls and drapes over it: the
    middle wraps the sphere and both halves hang down, symmetrically.  Nylon-like rope: density
    1150 kg/m^3, ``young_modulus`` [Pa]; contact radius = section radius.

    Contacts are resolved after each implicit step (:mod:`strandlab.der.contact`), outside the
    elastic solve, so a vertex pushed out of the sphere stretches its edges by about
    ``(v h / l)^2`` (``v`` the approach speed, ``h`` the step, ``l`` the edge length): the
    ``substeps`` (``h = dt / substeps``) keep the edge strain below 0.3 %.
    """
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    mat = Material(young_modulus=young_modulus, density=1150.0, radius=radius)
    z = sphere_radius + radius + drop
    b.add_strand(line((-0.5 * length, 0.0, z), (0.5 * length, 0.0, z), segments), material=mat,
                 d1=(0.0, 0.0, 1.0), name="rope")
    b.add_sphere((0.0, 0.0, 0.0), sphere_radius, friction=friction)
    params = dict(length=length, segments=segments, radius=radius, young_modulus=young_modulus,
                  sphere_radius=sphere_radius, friction=friction, drop=drop, substeps=substeps,
                  damping=damping)
    return Simulation("der_rope_on_sphere", b.build(),
                      DERSettings(damping=damping, substeps=substeps), dt, frames,
                      description="a rope falls onto a sphere and drapes over it, held by "
                      "friction (discrete elastic rods)", params=params, view=(10.0, -90.0),
                      solver="der")


def der_michell_ring(*, turns: float = 3.0, radius: float = 0.2, segments: int = 60,
                     rod_radius: float = 0.005, young_modulus: float = 1e6,
                     poisson_ratio: float = 0.5, imperfection: float = 1e-3,
                     imperfection_modes=(2,), frames: int = 600, dt: float = 1.0 / 60.0,
                     damping: float = 1.0) -> Simulation:
    """A naturally straight rod closed into a ring of ``radius`` [m] that stores ``turns``
    turns of twist, with no gravity.

    Michell's instability (:func:`strandlab.reference.michell_critical_twist`): the planar
    ring is stable below the total twist ``2 pi sqrt(3) B / C`` (2.60 turns for ``nu = 0.5``,
    ``B / C = 1 + nu``) and above it buckles out of plane, trading twist for writhe, towards a
    figure-8.  The rest curvature is zero (``options={"der": {"rest_curvature": 0}}``).  A
    closed strand's material frames turn by whole turns (``initial_twist = 2 pi N``,
    ``N = ceil(turns)``); a fractional ``turns`` is stored by a uniform rest twist
    ``2 pi (N - turns) / n`` per stencil (an isotropic rod's mechanics depend only on the
    twist in excess of its rest twist).
    ``imperfection`` [m]: amplitude of out-of-plane waves ``cos k phi`` of the initial ring for
    ``k`` in ``imperfection_modes`` (mode 2, the figure-8, is the first to go unstable, at
    ``2 pi sqrt(k^2 - 1) B / C``), which pick the buckling direction.
    """
    if not (math.isfinite(turns) and turns >= 0.0):
        raise ValueError(f"der_michell_ring: turns must be a number >= 0, got {turns!r}")
    whole = math.ceil(turns)
    b = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    mat = Material(young_modulus=young_modulus, density=1000.0, radius=rod_radius,
                   poisson_ratio=poisson_ratio)
    pts = circle(radius=radius, segments=segments)
    phi = np.arctan2(pts[:, 1], pts[:, 0])
    for k in imperfection_modes:
        pts[:, 2] += imperfection * np.cos(float(k) * phi)
    b.add_strand(pts, material=mat, closed=True, d1=(0.0, 0.0, 1.0),
                 initial_twist=2.0 * math.pi * whole,
                 options={"der": {"rest_curvature": np.zeros((len(pts), 4)),
                                  "rest_twist": np.full(len(pts), 2.0 * math.pi *
                                                        (whole - turns) / len(pts))}},
                 name="ring")
    params = dict(turns=float(turns), radius=radius, segments=segments, rod_radius=rod_radius,
                  young_modulus=young_modulus, poisson_ratio=poisson_ratio,
                  imperfection=imperfection, imperfection_modes=[int(k) for k in
                                                                 imperfection_modes],
                  damping=damping)
    return Simulation("der_michell_ring", b.build(), DERSettings(damping=damping), dt, frames,
                      description="twisted ring of a naturally straight rod buckles out of "
                      "plane above Michell's twist (discrete elastic rods)", params=params,
                      view=(35.0, -60.0), solver="der")


def hair_strands(*, n_strands: int = 100, n_vertices: int = 100, layout: str = "line",
                 length: float = 0.25, root_radius: float = 45e-6, tip_radius: float = 35e-6,
                 young_modulus: float = 3.5e9, spacing: float = 2e-3,
                 head_radius: float = 0.1, max_angle: float = 60.0, seed: int = 0,
                 frames: int = 480, dt: float = 1.0 / 120.0, damping: float = 2.0,
                 select=None, name: str = "hair_strands") -> Simulation:
    """``n_strands`` tapered hair strands of ``n_vertices`` vertices, each clamped at its root,
    under gravity, with no collisions (the strands are independent).

    ``layout="line"``: roots ``spacing`` [m] apart along y, strand k leaving its root in the
    x-z plane at ``max_angle * k / (n_strands - 1)`` degrees below the horizontal (so that no
    two strands move alike).  ``layout="sphere"``: roots on the upper part of a sphere of
    ``head_radius`` [m] (Fibonacci points, jittered by ``seed``), strands along the outward
    normal.  Hair material as :func:`der_hanging_hair`.  ``select``: indices of the strands to
    build (default all), each where it is in the full set (e.g. to step one strand alone).
    """
    if layout not in ("line", "sphere"):
        raise ValueError(f"hair_strands: layout must be 'line' or 'sphere', got {layout!r}")
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    mat = Material(young_modulus=young_modulus, density=1300.0, radius=root_radius)
    n = int(n_vertices)
    dl = length / (n - 1.5)
    s = (np.arange(n) - 0.5) * dl                      # root (s = 0) at the first edge's middle
    r = np.interp(s, [0.0, s[-1]], [root_radius, tip_radius])
    if layout == "line":
        ang = np.radians(max_angle) * np.arange(n_strands) / max(n_strands - 1, 1)
        dirs = np.stack([np.cos(ang), np.zeros_like(ang), -np.sin(ang)], axis=1)
        roots = np.stack([np.zeros(n_strands), spacing * np.arange(n_strands),
                          np.zeros(n_strands)], axis=1)
    else:
        rng = np.random.default_rng(seed)
        k = np.arange(n_strands) + 0.5
        z = 1.0 - k / n_strands * (1.0 + np.sin(np.radians(20.0)))
        phi = k * np.pi * (3.0 - np.sqrt(5.0)) + rng.uniform(0.0, 0.1, n_strands)
        rho = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
        dirs = np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1)
        roots = (head_radius + root_radius) * dirs
    chosen = range(n_strands) if select is None else [int(i) for i in select]
    for i in chosen:
        if not 0 <= i < n_strands:
            raise ValueError(f"hair_strands: select names strand {i}, not in 0..{n_strands - 1}")
        pts = roots[i] + s[:, None] * dirs[i]
        st = b.add_strand(pts, material=mat, radius=r, name=f"hair {i}")
        b.attach_to_frame(st, b.add_frame(roots[i]), end=0)
    params = dict(n_strands=n_strands, n_vertices=n_vertices, layout=layout, length=length,
                  root_radius=root_radius, tip_radius=tip_radius, young_modulus=young_modulus,
                  spacing=spacing, head_radius=head_radius, max_angle=max_angle, seed=seed,
                  damping=damping)
    return Simulation(name, b.build(), DERSettings(damping=damping), dt, frames,
                      description=f"{n_strands} hair strands of {n_vertices} vertices rooted on "
                      f"a {layout}, stepped together (discrete elastic rods)", params=params,
                      view=(10.0, -60.0), solver="der")


def der_many_strands(**kw) -> Simulation:
    """100 hair strands of 100 vertices rooted on a line, stepped together
    (:func:`hair_strands` with ``layout="line"``; keyword arguments go to it)."""
    kw.setdefault("name", "der_many_strands")
    return hair_strands(**kw)
