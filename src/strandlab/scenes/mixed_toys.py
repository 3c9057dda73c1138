"""Toys of Chang et al. 2019 as built-in scenes, built procedurally: the nylon frisbee
(Fig. 13), the toy ball (Fig. 12) and the sticky hands (Fig. 11).  Each comes with the
function that measures what its figure shows (tests/scenes/test_mixed_toys.py asserts it;
docs/mixed.md quotes the figures).
"""
from __future__ import annotations

import math

import numpy as np

from ..mixed.solver import MixedSettings, MixedSolver
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial
from .meshing import ball_tets, disk_triangles, merge_vertices
from .mixed_objects import ring_start

__all__ = ["mixed_frisbee", "frisbee_measures", "FRISBEE_RIMS", "run_mixed", "mixed_toy_ball",
           "toy_ball_parts", "toy_ball_measures", "TOY_BALL_JOINTS", "mixed_sticky_hand",
           "hand_mesh", "STICKY_HANDS", "fingertip_drop", "TOY_TOLERANCE"]

FRISBEE_RIMS = ("none", "free", "coupled")
TOY_BALL_JOINTS = ("elastic", "free")
#: Newton tolerance of the frisbee, the wobbling toy ball and the sticky hand: a free residual
#: of 1 % of the load (``MixedSettings.tolerance``).  Their vertices stay within 3 um of a solve
#: to 1e-9 (the frisbee's plain cloth within 40 um over its collapse), where halving their
#: steps moves them 0.3-1 mm; a step takes 20-40 % fewer Newton iterations than at 1e-6
#: (docs/mixed.md, "Newton tolerance of the toys").
TOY_TOLERANCE = 1e-2


def run_mixed(sim: Simulation, steps: int | None = None):
    """Step ``sim`` (its ``frames`` steps by default) with the mixed solver; returns the solver
    and the final state."""
    sol = MixedSolver(sim.scene, sim.settings)
    s = sol.state()
    for _ in range(sim.frames if steps is None else steps):
        sol.step(s, s, sim.dt)
    return sol, s


# ------------------------------------------------------------------------------ frisbee
def _frisbee_arcs(rings: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rim vertices of :func:`~.meshing.disk_triangles` in order, and the two arcs turned
    (``rings // 3`` vertices either side of the angles 0 and pi)."""
    n = 6 * rings
    rim = ring_start(rings) + np.arange(n)
    half = max(1, rings // 3)
    arc_a = rim[np.arange(-half, half + 1) % n]
    arc_b = rim[n // 2 + np.arange(-half, half + 1)]
    return rim, arc_a, arc_b


def mixed_frisbee(*, rim: str = "coupled", radius: float = 0.12, rings: int = 9,
                  angle: float = math.pi / 3, turn_time: float = 0.5,
                  coupling: float = 100.0, frames: int = 24,
                  dt: float = 1.0 / 30.0) -> Simulation:
    """Fig. 13: a nylon disk (``rings`` rings of :func:`~.meshing.disk_triangles`, radius
    ``radius`` [m]) held at two opposite arcs of its boundary, under gravity.

    ``rim``: ``"none"`` (the cloth alone), ``"free"`` (a stiff rubber rod along the boundary,
    its rotation not coupled to the cloth: a tent pole in a sleeve) or ``"coupled"`` (the rod
    joined to the cloth by a curve connection of stiffness ``coupling`` [N / rad^2 per metre]).
    With a rod, the two arcs' rod edges are turned about their own tangents by ``angle`` [rad]
    over ``turn_time`` [s] (each arc by a frame turning about the rim's tangent at its middle,
    in the sense that lifts the cloth's inner side), while their vertices stay in place: the
    axial rotation of the paper's red regions.  Only with the coupling does the turn reach
    the cloth, which bulges up.

    The default step is a frame (1/30 s): the cloth is held under strong damping and its
    shape follows the arcs' turn; steps of 10 ms end within 0.3 mm and 0.03 degrees of it.
    The cloth alone falls limp from flat in its first frames, where a step takes up to 41
    Newton iterations: its cap (``MixedSettings.max_iterations``) is 60, not 30."""
    if rim not in FRISBEE_RIMS:
        raise ValueError(f"rim must be one of {FRISBEE_RIMS}, got {rim!r}")
    x, tri = disk_triangles(radius, rings)
    ring, arc_a, arc_b = _frisbee_arcs(rings)
    nylon = ShellMaterial(young_modulus=1e8, poisson_ratio=0.3, thickness=1e-4, density=1140.0)
    rubber = Material(young_modulus=5e7, density=1100.0, radius=0.003)
    mb = SimplicialBuilder(x, name="frisbee")
    cloth = mb.add_shells(tri, material=nylon, name="cloth")
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    if rim == "none":
        mb.hold(np.concatenate([arc_a, arc_b]))
    else:
        rod = mb.add_rods(np.c_[ring, np.roll(ring, -1)], material=rubber, name="rim")
        if rim == "coupled":
            mb.connect(rod, cloth, kind="curve", bend_stiffness=coupling)
        w = angle / turn_time
        # the rim runs anticlockwise: its tangent is +y at angle 0, -y at angle pi
        fa = b.add_frame((radius, 0.0, 0.0), angular_velocity=(0.0, w, 0.0), stop=turn_time)
        fb = b.add_frame((-radius, 0.0, 0.0), angular_velocity=(0.0, -w, 0.0),
                         stop=turn_time)
        mb.hold(arc_a, frame=fa, turn_only=True)
        mb.hold(arc_b, frame=fb, turn_only=True)
    b.add_simplicial_mesh(mb.build())
    # the disk does not fold onto itself: no surface contact (the most costly part of a step);
    # the exact Hessian: with the projected one Newton converges only linearly once the arcs
    # stop turning (docs/mixed.md, "Newton and the rods"); the cloth alone's cap: the docstring;
    # a CHOLMOD factorisation every Newton iteration ("direct"): 8.2-9.6 against 10.1-12.4 ms a
    # frame with "reuse" (QDLDL and conjugate gradients), docs/mixed.md "Performance"
    return Simulation(f"mixed_frisbee_{rim}", b.build(),
                      MixedSettings(damping=10.0, hessian="exact", self_contact=False,
                                    tolerance=TOY_TOLERANCE, linear_solver="direct",
                                    max_iterations=60 if rim == "none" else 30), dt,
                      frames, description="Fig. 13: nylon frisbee held at two arcs of its rim, "
                      + {"none": "no rod", "free": "rod turned in a sleeve (uncoupled)",
                         "coupled": "rod turned and coupled to the cloth"}[rim],
                      params=dict(rim=rim, radius=radius, rings=rings, angle=angle,
                                  turn_time=turn_time, coupling=coupling),
                      view=(25.0, -60.0), solver="mixed")


def frisbee_measures(sim: Simulation, x: np.ndarray) -> dict:
    """What Fig. 13 shows, from the frisbee's vertex positions ``x`` [V, 3] [m]:

    - ``bulge`` [m]: the mean height of the cloth's middle (vertices within 0.6 of the radius
      of the centre) above the held arcs (which stay at z = 0);
    - ``tilt`` [deg]: the mean angle above the horizontal of the cloth triangles on the held
      arcs' edges, from the edge inwards (the cloth's angle at the rim);
    - ``rim_low`` [m]: the lowest point of the rim (the cloth's boundary without a rod)."""
    p = sim.params
    x0, tri = disk_triangles(p["radius"], p["rings"])
    ring, arc_a, arc_b = _frisbee_arcs(p["rings"])
    middle = np.linalg.norm(x0[:, :2], axis=1) < 0.6 * p["radius"]
    arcs = set(arc_a.tolist()) | set(arc_b.tolist())
    tilts = []
    for t in tri.tolist():
        on = [v for v in t if v in arcs]
        if len(on) != 2:
            continue
        c = next(v for v in t if v not in arcs)
        e = x[on[1]] - x[on[0]]
        e /= np.linalg.norm(e)
        w = x[c] - x[on[0]]
        w -= w.dot(e) * e
        tilts.append(math.degrees(math.asin(w[2] / np.linalg.norm(w))))
    return {"bulge": float(x[middle, 2].mean()), "tilt": float(np.mean(tilts)),
            "rim_low": float(x[ring, 2].min())}


# ------------------------------------------------------------------------------ toy ball
def _helix(z0: float, radius: float, turns: int, per_turn: int, pitch: float) -> np.ndarray:
    """A helix up the z axis from ``(0, 0, z0)`` [m]: its radius grows from 0 to ``radius``
    over the first turn and shrinks back over the last (smoothly), so that both ends lie on
    the axis; ``turns * per_turn + 1`` vertices [n, 3]."""
    s = np.arange(turns * per_turn + 1) / per_turn
    ramp = 0.5 - 0.5 * np.cos(np.pi * np.clip(np.minimum(s, turns - s), 0.0, 1.0))
    a = 2.0 * np.pi * s
    return np.c_[radius * ramp * np.cos(a), radius * ramp * np.sin(a), z0 + pitch * s]


def toy_ball_parts(*, cup_radius=0.02, cup_height=0.007, rings=4, coil_radius=0.01,
                   turns=6, per_turn=12, pitch=0.01, ball_radius=0.02):
    """The toy ball's mesh: vertices [V, 3] and the cells of its three parts, ``(x, cup
    triangles, spring edges, ball tetrahedra)``; the cup is a dome of :func:`~.meshing.
    disk_triangles` (apex up, rim on the floor z = 0), the spring a :func:`_helix` from the
    apex, the ball a Gmsh ball whose lowest pole is the spring's top."""
    xc, tri = disk_triangles(cup_radius, rings)
    r = np.linalg.norm(xc[:, :2], axis=1)
    xc[:, 2] = cup_height * (1.0 - (r / cup_radius) ** 2)
    xs = _helix(cup_height, coil_radius, turns, per_turn, pitch)
    top = float(xs[-1, 2])
    xb, tets = ball_tets((0.0, 0.0, top + ball_radius), ball_radius, 1.2 * ball_radius)
    x, (ic, isp, ib) = merge_vertices(xc, xs, xb, tol=1e-7)
    if len(x) != len(xc) + len(xs) + len(xb) - 2:
        raise RuntimeError("toy ball: the spring's ends did not meet the cup's apex and the "
                           "ball's pole")
    return x, ic[tri], np.c_[isp[:-1], isp[1:]], ib[tets]


def mixed_toy_ball(*, joints: str = "elastic", stiffness: float | None = None,
                   push: float = 0.3, frames: int | None = None, dt: float | None = None,
                   integrator: str | None = None) -> Simulation:
    """Fig. 12: a springy ball toy of three parts on one mesh: a shell suction cup stuck to the
    floor (its rim held), a steel spring (rod) standing on the cup's apex, and a foam ball
    (solid) on the spring, joined by point connections at the apex and at the ball's pole.
    The ball is pushed sideways (``push`` [m/s]) at the start, and the spring with it (its
    speed growing with height from its foot on the cup, at rest, to the ball's): pushed
    alone, the ball would stretch the spring's top edge by ``push * dt`` in the first
    iterate, and that step need not converge within ``max_iterations``.

    ``joints``: ``"elastic"`` (twisting and bending energies of stiffness ``stiffness`` [N m /
    rad^2] at both connections; default ``E I / l`` of the spring's end edge, as stiff as the
    wire) or ``"free"`` (no coupling energies: two ball joints).  With the energies the toy
    wobbles and stays up; without, the spring and ball fall over.  The toy's parts do not reach
    each other in these motions (the test checks it), so surface contact is off; the floor is
    a collider.  With its connections it steps 1/60 s at a time with BDF2 (``integrator``,
    ``MixedSettings.integrator``), whose wobble keeps its swing where backward Euler at 5 ms
    steps damps it; without them (``"free"``) it topples onto the floor, an impact that
    steps of 1/60 s do not resolve (6 of its first 18 steps unconverged without cutbacks),
    and it keeps backward Euler at 5 ms.  Either factors its matrix at every Newton iteration
    (``linear_solver="direct"``: CHOLMOD through cvxopt where it loads; docs/mixed.md, "Toy
    ball").  ``frames`` (steps) default to 0.6 s."""
    if joints not in TOY_BALL_JOINTS:
        raise ValueError(f"joints must be one of {TOY_BALL_JOINTS}, got {joints!r}")
    wobbles = joints == "elastic"
    integrator = integrator or ("bdf2" if wobbles else "euler")
    dt = dt or (1.0 / 60.0 if wobbles else 0.005)
    frames = frames or round(0.6 / dt)
    # the wobble: the stretching Hessian projected (no failed factorisations) and
    # TOY_TOLERANCE; the impact of the toy without connections keeps the tight defaults
    newton = (dict(hessian="projected", tolerance=TOY_TOLERANCE)
              if wobbles and integrator == "bdf2" else dict(hessian="exact"))
    x, tri, edges, tets = toy_ball_parts()
    cup_mat = ShellMaterial(young_modulus=5e7, poisson_ratio=0.4, thickness=2e-3,
                            density=1100.0)
    wire = Material(young_modulus=2e11, density=7800.0, radius=4.5e-4)
    foam = SolidMaterial(young_modulus=1e6, poisson_ratio=0.4, density=500.0)
    mb = SimplicialBuilder(x, name="toy_ball")
    cup = mb.add_shells(tri, material=cup_mat, name="cup")
    spring = mb.add_rods(edges, material=wire, name="spring")
    ball = mb.add_solids(tets, material=foam, name="ball")
    if stiffness is None:
        stiffness = float(wire.stiffness[0]) / float(np.linalg.norm(x[edges[0, 1]] -
                                                                    x[edges[0, 0]]))
    if joints == "elastic":
        for part in (cup, ball):
            mb.connect(spring, part, kind="point", twist_stiffness=stiffness,
                       bend_stiffness=stiffness)
    rim = np.unique(tri)
    mb.hold(rim[np.abs(x[rim, 2]) < 1e-12])              # the suction cup's rim sticks
    v = np.zeros_like(x)
    v[np.unique(tets)] = (push, 0.0, 0.0)
    coil = np.unique(edges)            # the spring's speed grows from its foot to the ball
    z = x[coil, 2]
    v[coil, 0] = push * (z - z.min()) / (z.max() - z.min())
    mb.velocities = v
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(mb.build())
    b.add_plane((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), friction=0.5)
    return Simulation(f"mixed_toy_ball_{joints}", b.build(),
                      MixedSettings(damping=1.0, self_contact=False, integrator=integrator,
                                    linear_solver="direct", **newton), dt,
                      frames, description="Fig. 12: toy ball (shell cup, rod spring, solid "
                      "ball) pushed sideways, " + ("point connections with their energies"
                                                   if joints == "elastic" else
                                                   "no coupling energies (ball joints)"),
                      params=dict(joints=joints, stiffness=stiffness, push=push,
                                  integrator=integrator),
                      view=(15.0, -70.0), solver="mixed")


def toy_ball_measures(sim: Simulation, steps: int | None = None) -> dict:
    """Run the toy ball ``sim`` (its frames by default, else ``steps`` steps) and measure what
    Fig. 12 shows, at the end of every step:
    ``start`` [m], the ball centre's first height; ``lowest`` [m], its lowest height and
    ``farthest`` [m], its greatest distance from the axis over the run; ``clearance`` [m], the
    ball's smallest height above the cup (each ball vertex against the highest cup vertex at
    its distance from the axis or farther, less one ring of the cup: the dome is no higher
    there), positive when the parts cannot touch."""
    sol = MixedSolver(sim.scene, sim.settings)
    s = sol.state()
    spec = sim.scene.simplicial[0]
    ball, cup = np.unique(spec.tets), np.unique(spec.triangles)
    ring = float(np.hypot(*spec.vertices[cup, :2].T).max()) / 4.0     # the cup has 4 rings
    z0 = float(sol.model.positions(s.q)[ball].mean(axis=0)[2])
    low, far, gap = z0, 0.0, np.inf
    for _ in range(sim.frames if steps is None else steps):
        sol.step(s, s, sim.dt)
        x = sol.model.positions(s.q)
        c = x[ball].mean(axis=0)
        low, far = min(low, float(c[2])), max(far, math.hypot(c[0], c[1]))
        rc, zc = np.hypot(x[cup, 0], x[cup, 1]), x[cup, 2]
        for r, z in zip(np.hypot(x[ball, 0], x[ball, 1]), x[ball, 2]):
            near = zc[rc >= r - ring]
            if near.size:
                gap = min(gap, float(z - near.max()))
    return {"start": z0, "lowest": low, "farthest": far, "clearance": gap}


# ------------------------------------------------------------------------------ sticky hand
#: The four sticky hands: Young's modulus [Pa] of their one rubber, softest first (the colours
#: of Fig. 11 and Table 1; the paper does not give the values).
STICKY_HANDS = {"purple": 2e6, "red": 4e6, "green": 8e6, "blue": 16e6}


def hand_mesh(cell: float = 0.01, palm=(5, 7), finger: int = 4, thumb: int = 3):
    """A flat hand in the plane z = 0 on a square lattice of side ``cell`` [m]: a palm of
    ``palm`` = (along x, across y) cells, four fingers of one cell's width and ``finger`` cells'
    length along +x (at y cells 0, 2, 4, 6 of a 7-cell palm), a thumb of ``thumb`` cells
    along -y, and a wrist vertex in the middle of the palm's back edge (x = 0).  Returns
    vertices [V, 3], triangles [T, 3] (normals +z) and the wrist vertex."""
    px, py = palm
    if py != 7:
        raise ValueError(f"the hand's palm is 7 cells across (four fingers and their gaps), "
                         f"got {py}")
    cells = {(i, j) for i in range(px) for j in range(py)}
    cells |= {(px + i, j) for i in range(finger) for j in (0, 2, 4, 6)}
    cells |= {(1 + i % 2, -1 - i // 2) for i in range(2 * thumb)}
    index: dict = {}
    tri = []

    def vid(i, j):
        return index.setdefault((i, j), len(index))

    for i, j in sorted(cells):
        a, b, c, d = vid(i, j), vid(i + 1, j), vid(i, j + 1), vid(i + 1, j + 1)
        if (i, j) == (0, 3):                     # the wrist: a fan about the edge's middle
            w = vid(0, 3.5)
            tri += [(a, b, w), (w, b, d), (w, d, c)]
        else:
            tri += [(a, b, d), (a, d, c)] if (i + j) % 2 == 0 else [(a, b, c), (b, d, c)]
    x = np.zeros((len(index), 3))
    for (i, j), k in index.items():
        x[k, :2] = (i * cell, j * cell)
    return x, np.asarray(tri, dtype=np.int64), index[(0, 3.5)]


def mixed_sticky_hand(*, hand: str = "green", young: float | None = None,
                      connection: bool = True,
                      cord: float = 0.03, cord_radius: float = 0.003, cord_edges: int = 19,
                      thickness: float = 3e-3, frames: int = 21,
                      dt: float = 1.0 / 30.0) -> Simulation:
    """Fig. 11: a rubber sticky hand: a flat shell hand (:func:`hand_mesh`) on a rod cord of
    ``cord_edges`` edges and length ``cord`` [m] along -x from its wrist, joined at the wrist
    by a stiff point connection (``connection``; False: a ball joint); one rubber (``young`` [Pa],
    default that of ``hand`` in :data:`STICKY_HANDS`; density 1100 kg/m^3) for the hand
    (``thickness`` [m]) and the cord (``cord_radius`` [m]), the connection's stiffness
    ``E I / l`` of the cord's end edge (as stiff as the cord).  The cord's far end is clamped,
    horizontal; the hand droops under its weight, the softer rubbers more.

    The default step is a frame (1/30 s; ``frames`` 21: 0.7 s): the hand is damped (10 / s)
    and what Fig. 11 shows is where it hangs; steps of 10 ms leave the four hands' fingertips
    within 1.1 mm of it after 0.7 s (99.2, 83.3, 57.1, 32.9 mm against 98.8, 82.3, 57.1, 32.8)
    for 0.4 times the Newton iterations."""
    if young is None:
        if hand not in STICKY_HANDS:
            raise ValueError(f"hand must be one of {tuple(STICKY_HANDS)}, got {hand!r}")
        young = STICKY_HANDS[hand]
    xh, tri, w = hand_mesh()
    n = int(cord_edges)
    xc = xh[w] - np.c_[np.linspace(0.0, cord, n + 1), np.zeros((n + 1, 2))]
    x = np.concatenate([xh, xc[1:]])
    chain = np.r_[w, len(xh) + np.arange(n)]
    rubber = Material(young_modulus=young, density=1100.0, radius=cord_radius)
    skin = ShellMaterial(young_modulus=young, poisson_ratio=0.45, thickness=thickness,
                         density=1100.0)
    mb = SimplicialBuilder(x, name="sticky_hand")
    palm = mb.add_shells(tri, material=skin, name="hand")
    rod = mb.add_rods(np.c_[chain[:-1], chain[1:]], material=rubber, name="cord")
    k = float(rubber.stiffness[0]) / (cord / n)
    if connection:
        mb.connect(rod, palm, kind="point", twist_stiffness=k, bend_stiffness=k)
    mb.hold(chain[-2:])                                 # the cord's end, clamped
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(mb.build())
    name = (hand if young == STICKY_HANDS.get(hand) else f"E{young:g}") + \
        ("" if connection else "_free")
    return Simulation(f"mixed_sticky_hand_{name}", b.build(),
                      MixedSettings(damping=10.0, self_contact=False, tolerance=TOY_TOLERANCE),
                      dt, frames,
                      description=f"Fig. 11: sticky hand of rubber E = {young:g} Pa on a "
                      "clamped cord, drooping under its weight",
                      params=dict(hand=hand, young=young, connection=connection, cord=cord,
                                  cord_radius=cord_radius, cord_edges=cord_edges,
                                  thickness=thickness),
                      view=(15.0, -60.0), solver="mixed")


def fingertip_drop(sim: Simulation, x: np.ndarray) -> float:
    """The mean drop [m] of the sticky hand's fingertips (the vertices farthest along +x)
    from their rest height, from the vertex positions ``x`` [V, 3]."""
    x0 = sim.scene.simplicial[0].vertices
    tips = x0[:, 0] > x0[:, 0].max() - 1e-9
    return float((x0[tips, 2] - x[tips, 2]).mean())
