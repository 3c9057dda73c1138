"""Creatures of Chang et al. 2019 as built-in scenes, built procedurally: the jellyfish (Fig. 7)
and the anglerfish (Fig. 17).  A kinematic frame moves the body (the paper prescribes it); the
appendages follow through the connections only.  Each comes with the function that measures
what its figure shows (tests/scenes/test_mixed_creatures.py asserts it; docs/mixed.md quotes
the figures).
"""
from __future__ import annotations

import math

import numpy as np

from ..mixed.solver import MixedSettings, MixedSolver
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial, boundary_faces
from .meshing import (
    ball_tets,
    disk_triangles,
    ellipsoid_tets,
    merge_vertices,
    rotation_between,
    surface_path,
)
from .mixed_objects import ring_start

__all__ = ["mixed_jellyfish", "jellyfish_parts", "jellyfish_measures", "appendage_angles",
           "mixed_anglerfish", "anglerfish_parts", "anglerfish_measures", "rocking_keyframes",
           "track_creature"]


def _rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rocking_keyframes(origin, amplitude: float, period: float, cycles: int, *, axis: str = "x",
                      lift=(0.0, 0.0, 0.0)) -> dict:
    """Keyframes (:meth:`~strandlab.sim.builder.SceneBuilder.add_frame`) of a body rocked about
    its ``axis`` through ``origin`` by +-``amplitude`` [rad], ``cycles`` times with ``period``
    [s], its origin raised by ``lift`` [m] at each swing's end: a pose every quarter
    period."""
    rot = _rot_x if axis == "x" else _rot_z
    n = 4 * cycles + 1
    phase = np.arange(n) * 0.5 * math.pi
    o = np.asarray(origin, dtype=np.float64)
    lift = np.asarray(lift, dtype=np.float64)
    return {"times": np.arange(n) * 0.25 * period,
            "origins": o + np.abs(np.sin(phase))[:, None] * lift,
            "rotations": np.stack([rot(amplitude * math.sin(p)) for p in phase])}


def _ball_at(tip, direction, radius: float):
    """A Gmsh ball of ``radius`` [m] whose pole sits at ``tip`` with the ball beyond it along
    ``direction``: vertices [n, 3], tetrahedra [k, 4]."""
    x, tets = ball_tets((0.0, 0.0, 0.0), radius, 2.0 * radius)
    rot = rotation_between((0.0, 0.0, 1.0), direction)
    d = np.asarray(direction, dtype=np.float64) / np.linalg.norm(direction)
    return (x @ rot.T) + np.asarray(tip) + radius * d, tets


def _chain(start, direction, length: float, edges: int) -> np.ndarray:
    """``edges + 1`` equally spaced points [m] from ``start`` along ``direction``."""
    d = np.asarray(direction, dtype=np.float64) / np.linalg.norm(direction)
    return np.asarray(start) + np.linspace(0.0, length, edges + 1)[:, None] * d


def appendage_angles(rot: np.ndarray, x0: np.ndarray, x: np.ndarray, edges: np.ndarray) -> float:
    """Mean angle [deg] between each edge ``(a, b)`` of ``edges`` [n, 2] at the positions ``x``
    [V, 3], taken back into the body's frame by ``rot`` [3, 3] (the body's rotation), and the
    same edge at rest ``x0``: how far the appendages have turned away from the body."""
    d = (x[edges[:, 1]] - x[edges[:, 0]]) @ rot          # rot^T applied to each row
    d0 = x0[edges[:, 1]] - x0[edges[:, 0]]
    c = np.einsum("ij,ij->i", d, d0) / np.linalg.norm(d, axis=1) / np.linalg.norm(d0, axis=1)
    return float(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))).mean())


# ------------------------------------------------------------------------------ jellyfish
def jellyfish_parts(*, radius=0.05, rings=4, opening: float = math.radians(75.0), tentacles=12,
                    tentacle_length=0.08, tentacle_edges=8, stalks=3, stalk_length=0.03,
                    stalk_edges=3, eye_radius=0.006):
    """The jellyfish's mesh: a bell (a spherical cap of :func:`~.meshing.disk_triangles`,
    opening half-angle ``opening``, apex up at the origin's height ``radius``), ``tentacles``
    rods hanging from its rim (every other rim vertex, flaring a little outwards),
    ``stalks`` eye stalks rising from the bell's first ring and an eyeball (solid) on each.
    Returns a dict: ``x`` [V, 3], ``bell`` triangles, ``tentacles`` and ``stalks`` rod
    edges (each a list of [n, 2] chains), ``eyes`` tetrahedra."""
    xd, tri = disk_triangles(1.0, rings)
    r = np.linalg.norm(xd[:, :2], axis=1)
    a = np.arctan2(xd[:, 1], xd[:, 0])
    phi = r * opening
    xb = radius * np.c_[np.sin(phi) * np.cos(a), np.sin(phi) * np.sin(a), np.cos(phi)]
    rim = ring_start(rings) + np.arange(6 * rings)
    pieces, kinds, eye_tets = [xb], [], None
    for k in rim[:: max(1, len(rim) // tentacles)][:tentacles]:
        out = np.r_[xb[k, :2] / np.linalg.norm(xb[k, :2]), 0.0]
        pieces.append(_chain(xb[k], 0.25 * out - np.array([0.0, 0.0, 1.0]), tentacle_length,
                             tentacle_edges))
        kinds.append("tentacle")
    for j in range(stalks):
        k = 1 + (6 * j) // stalks                          # first ring: vertices 1..6
        out = np.r_[xb[k, :2] / np.linalg.norm(xb[k, :2]), 0.0]
        c = _chain(xb[k], out + np.array([0.0, 0.0, 1.5]), stalk_length, stalk_edges)
        pieces.append(c)
        kinds.append("stalk")
        xe, eye_tets = _ball_at(c[-1], c[-1] - c[-2], eye_radius)
        pieces.append(xe)
        kinds.append("eye")
    x, idx = merge_vertices(*pieces, tol=1e-9)
    out = {"x": x, "bell": idx[0][tri], "tentacles": [], "stalks": [], "eyes": []}
    for kind, ix in zip(kinds, idx[1:]):
        if kind == "eye":
            out["eyes"].append(ix[eye_tets])
        else:
            out[kind + "s"].append(np.c_[ix[:-1], ix[1:]])
    return out


def mixed_jellyfish(*, connections: bool = True, stiffness: float = 2e-3,
                    amplitude: float = math.radians(25.0), period: float = 0.8,
                    cycles: int = 2, frames: int = 160, dt: float = 0.01) -> Simulation:
    """Fig. 7: an alien jellyfish: a jelly bell (shell) whose motion is prescribed (it is
    rocked about x by +-``amplitude`` [rad] with ``period`` [s] while bobbing up, ``cycles``
    times, then holds still), tentacles (rods) hanging from its rim, eye stalks (rods) on its
    top carrying eyeballs (solids).  With ``connections`` every rod meets the bell and the
    eyeballs at point connections (twisting and bending, ``stiffness`` [N m / rad^2]): the
    stalks stand and the appendages turn with the body; without, the shared vertices are ball
    joints and the stalks flop over."""
    p = jellyfish_parts()
    x = p["x"]
    jelly = ShellMaterial(young_modulus=2e5, poisson_ratio=0.45, thickness=3e-3,
                          density=1030.0)
    tentacle = Material(young_modulus=2e5, density=1030.0, radius=1e-3)
    stalk = Material(young_modulus=2e7, density=1030.0, radius=1.5e-3)
    eye = SolidMaterial(young_modulus=2e5, poisson_ratio=0.45, density=1030.0)
    mb = SimplicialBuilder(x, name="jellyfish")
    bell = mb.add_shells(p["bell"], material=jelly, name="bell")
    tent = mb.add_rods(np.concatenate(p["tentacles"]), material=tentacle, name="tentacles")
    stalks = mb.add_rods(np.concatenate(p["stalks"]), material=stalk, name="stalks")
    eyes = mb.add_solids(np.concatenate(p["eyes"]), material=eye, name="eyes")
    if connections:
        kw = dict(kind="point", twist_stiffness=stiffness, bend_stiffness=stiffness)
        mb.connect(tent, bell, **kw)
        mb.connect(stalks, bell, **kw)
        mb.connect(stalks, eyes, **kw)
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    body = b.add_frame(keyframes=rocking_keyframes((0.0, 0.0, 0.0), amplitude, period, cycles,
                                                   lift=(0.0, 0.0, 0.02)))
    mb.hold(np.unique(p["bell"]), frame=body)
    b.add_simplicial_mesh(mb.build())
    return Simulation(f"mixed_jellyfish{'' if connections else '_free'}", b.build(),
                      MixedSettings(damping=2.0, self_contact=False), dt,
                      frames, description="Fig. 7: jellyfish rocked by its bell, tentacles, eye "
                      "stalks and eyeballs " + ("joined by point connections" if connections
                                                else "on ball joints"),
                      params=dict(connections=connections, stiffness=stiffness,
                                  amplitude=amplitude, period=period, cycles=cycles),
                      view=(15.0, -60.0), solver="mixed")


# ------------------------------------------------------------------------------ anglerfish
def _fin(x: np.ndarray, path: np.ndarray, offsets: np.ndarray):
    """A fin strip on the surface edges ``path`` [n]: new vertices ``x[path] + offsets``
    [n, 3] and the triangles [2 (n - 1), 3] (numbered after ``x``) on each edge."""
    n0 = len(x)
    tip = np.arange(n0, n0 + len(path))
    tri = [t for k in range(len(path) - 1) for t in ((path[k], path[k + 1], tip[k + 1]),
                                                     (path[k], tip[k + 1], tip[k]))]
    return x[path] + offsets, np.asarray(tri, dtype=np.int64)


def _edge_near(x: np.ndarray, faces: np.ndarray, p, direction) -> np.ndarray:
    """The surface edge (a, b) [2] of ``faces`` whose middle is nearest ``p`` [m] among those
    within 30 degrees of ``direction``, oriented along it."""
    e = np.unique(np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]],
                                          faces[:, [2, 0]]]), axis=1), axis=0)
    d = x[e[:, 1]] - x[e[:, 0]]
    u = np.asarray(direction, dtype=np.float64) / np.linalg.norm(direction)
    cos = d @ u / np.linalg.norm(d, axis=1)
    ok = np.abs(cos) > math.cos(math.radians(30.0))
    mid = 0.5 * (x[e[:, 0]] + x[e[:, 1]])
    k = np.nonzero(ok)[0][np.argmin(np.linalg.norm(mid[ok] - p, axis=1))]
    return e[k] if cos[k] > 0 else e[k, ::-1]


def anglerfish_parts(*, radii=(0.08, 0.035, 0.045), size=0.04, fin_height=0.03,
                     antenna_length=0.06, antenna_edges=6, lure_radius=0.008):
    """The anglerfish's mesh: an ellipsoidal body (solid, :func:`~.meshing.ellipsoid_tets`,
    head towards +x), a dorsal fin (shell) on a path of body surface edges along its back, a
    tail fin on a path round its tail, two pectoral fins (two triangles each) on one surface
    edge of either flank, an antenna (rod) from the top of the head arching forward, and a
    lure (solid ball) at its end.  Returns a dict: ``x`` [V, 3], ``body`` and ``lure``
    tetrahedra, ``fins`` (dorsal, tail) and ``pectoral`` (left, right) triangles, the first
    pectoral triangle ``(a, b, c)`` on the body edge ``(a, b)``, the second ``(a, c, d)``;
    ``fin_edges`` (the body edges the dorsal and tail fins stand on, [n, 2]), ``antenna`` rod
    edges, ``head`` (the body vertices of the head, x > 0.4 of the length)."""
    a, _, c = radii
    xb, tets = ellipsoid_tets((0.0, 0.0, 0.0), radii, size)
    faces = boundary_faces(tets)
    surf = np.unique(faces)

    def nearest(p):
        return int(surf[np.argmin(np.linalg.norm(xb[surf] - p, axis=1))])

    def along_plane(i, j):              # prefer edges in the plane y = 0
        return np.linalg.norm(xb[j] - xb[i], axis=1) + 4.0 * (np.abs(xb[i, 1]) +
                                                               np.abs(xb[j, 1]))
    dorsal = surface_path(xb, faces, nearest((-0.45 * a, 0.0, c)), nearest((0.25 * a, 0.0, c)),
                          along_plane)
    tail = surface_path(xb, faces, nearest((-0.8 * a, 0.0, 0.55 * c)),
                        nearest((-0.8 * a, 0.0, -0.55 * c)), along_plane)
    s = np.linspace(0.0, math.pi, len(dorsal))
    xf1, tf1 = _fin(xb, dorsal, fin_height * (0.3 + 0.7 * np.sin(s))[:, None] *
                    np.array([-0.3, 0.0, 1.0]))
    xf2, tf2 = _fin(np.concatenate([xb, xf1]), tail,
                    np.tile([-fin_height, 0.0, 0.0], (len(tail), 1)) +
                    0.6 * (xb[tail] - xb[tail].mean(axis=0)) * np.array([0.0, 0.0, 1.0]))
    pectoral = []
    for side in (1.0, -1.0):
        ab = _edge_near(xb, faces, (0.2 * a, side * radii[1], -0.2 * c), (1.0, 0.0, 0.0))
        out = np.array([-0.3, side, -0.3]) * 0.8 * fin_height
        pectoral.append(_fin(np.concatenate([xb, xf1, xf2] + [f[0] for f in pectoral]), ab,
                             np.stack([out, out])))
    root = nearest((0.6 * a, 0.0, c))
    t = np.linspace(0.0, 0.5 * math.pi, antenna_edges + 1)
    r = antenna_length / (0.5 * math.pi)
    arc = xb[root] + r * np.c_[1.0 - np.cos(t), np.zeros_like(t), np.sin(t)]
    xl, tl = _ball_at(arc[-1], arc[-1] - arc[-2], lure_radius)
    (xp1, tp1), (xp2, tp2) = pectoral
    x, (ib, i1, i2, ip1, ip2, ia, il) = merge_vertices(xb, xf1, xf2, xp1, xp2, arc, xl,
                                                       tol=1e-9)
    remap = np.r_[ib, i1, i2, ip1, ip2]             # body and fin vertices, merged
    return {"x": x, "body": ib[tets], "lure": il[tl],
            "fins": [remap[tf1], remap[tf2]], "pectoral": [remap[tp1], remap[tp2]],
            "fin_edges": np.concatenate([np.c_[ib[dorsal[:-1]], ib[dorsal[1:]]],
                                         np.c_[ib[tail[:-1]], ib[tail[1:]]]]),
            "antenna": np.c_[ia[:-1], ia[1:]],
            "head": ib[np.nonzero(xb[:, 0] > 0.4 * a)[0]]}


def mixed_anglerfish(*, connections: bool = True, antenna_stiffness: float = 0.02,
                     fin_stiffness: float = 0.5, amplitude: float = math.radians(20.0),
                     period: float = 0.8, cycles: int = 2, frames: int = 160,
                     dt: float = 0.01) -> Simulation:
    """Fig. 17: a cartoon anglerfish: a soft solid body whose head (x > 0.4 of its length) is
    swung side to side (yaw +-``amplitude`` [rad], ``period`` [s], ``cycles`` times, then
    held); the rest of the body follows elastically.  Two fins (shells) stand on its back and
    round its tail (curve connections, ``fin_stiffness`` [N / rad^2 per metre]); an antenna
    (rod) rises from the head (point connection, ``antenna_stiffness`` [N m / rad^2]) and
    carries a lure (solid ball, point connection).  Without ``connections`` the fins hinge
    freely on the body and the antenna and lure hang on ball joints."""
    p = anglerfish_parts()
    x = p["x"]
    flesh = SolidMaterial(young_modulus=3e4, poisson_ratio=0.45, density=1050.0)
    fin = ShellMaterial(young_modulus=2e6, poisson_ratio=0.4, thickness=1e-3, density=1050.0)
    stalk = Material(young_modulus=1e7, density=1050.0, radius=1.5e-3)
    bulb = SolidMaterial(young_modulus=1e5, poisson_ratio=0.45, density=500.0)
    mb = SimplicialBuilder(x, name="anglerfish")
    body = mb.add_solids(p["body"], material=flesh, name="body")
    fins = mb.add_shells(np.concatenate(p["fins"] + p["pectoral"]), material=fin,
                         name="fins")
    antenna = mb.add_rods(p["antenna"], material=stalk, name="antenna")
    lure = mb.add_solids(p["lure"], material=bulb, name="lure")
    if connections:
        mb.connect(fins, body, kind="curve", bend_stiffness=fin_stiffness)
        for part in (body, lure):
            mb.connect(antenna, part, kind="point", twist_stiffness=antenna_stiffness,
                       bend_stiffness=antenna_stiffness)
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    head = b.add_frame(keyframes=rocking_keyframes((0.04, 0.0, 0.0), amplitude, period, cycles,
                                                   axis="z"))
    mb.hold(p["head"], frame=head)
    b.add_simplicial_mesh(mb.build())
    return Simulation(f"mixed_anglerfish{'' if connections else '_free'}", b.build(),
                      MixedSettings(damping=2.0, self_contact=False), dt,
                      frames, description="Fig. 17: anglerfish swinging its head; fins and "
                      "antenna " + ("joined by curve and point connections" if connections
                                    else "hinged and on ball joints"),
                      params=dict(connections=connections, antenna_stiffness=antenna_stiffness,
                                  fin_stiffness=fin_stiffness, amplitude=amplitude,
                                  period=period, cycles=cycles),
                      view=(20.0, -70.0), solver="mixed")


# ------------------------------------------------------------------------------ measures
def jellyfish_measures():
    """A function ``(rot, x0, x) -> dict`` of the jellyfish's appendage angles [deg] in the
    bell's frame (its rotation ``rot`` [3, 3]) against rest (positions ``x0``, ``x`` [V, 3]):
    ``stalks`` (each eye stalk's root-to-tip chord) and ``tentacles`` (each tentacle's root
    edge), means over the appendages."""
    p = jellyfish_parts()
    chords = np.array([[c[0, 0], c[-1, 1]] for c in p["stalks"]])
    roots = np.array([c[0] for c in p["tentacles"]])

    def measure(rot, x0, x):
        return {"stalks": appendage_angles(rot, x0, x, chords),
                "tentacles": appendage_angles(rot, x0, x, roots)}
    return measure


def anglerfish_measures():
    """A function ``(rot, x0, x) -> dict`` of the anglerfish's appendages in the head's frame
    (its rotation ``rot`` [3, 3]) against rest (positions ``x0``, ``x`` [V, 3]): ``antenna``
    [deg] (its root-to-tip chord), ``pectoral`` [deg] (the edges from the body edge to the
    pectoral fins' outer corners, mean) and ``lure_height`` [m] (the lure's centre above the
    antenna's root)."""
    p = anglerfish_parts()
    a = p["antenna"]
    chord = np.array([[a[0, 0], a[-1, 1]]])
    pec = np.concatenate([[[t[0, 1], t[0, 2]], [t[1, 0], t[1, 2]]] for t in p["pectoral"]])
    lure = np.unique(p["lure"])

    def measure(rot, x0, x):
        return {"antenna": appendage_angles(rot, x0, x, chord),
                "pectoral": appendage_angles(rot, x0, x, pec),
                "lure_height": float(x[lure, 2].mean() - x[a[0, 0], 2])}
    return measure


def track_creature(sim: Simulation, measure, steps: int | None = None) -> dict:
    """Run ``sim`` (its frames by default) and return, for each quantity of ``measure(rot,
    x0, x)`` (the body frame's rotation, rest and current positions), its least and greatest
    value over the steps: ``{name: (min, max)}``."""
    sol = MixedSolver(sim.scene, sim.settings)
    s = sol.state()
    x0 = sol.model.positions(s.q).copy()
    out: dict = {}
    for _ in range(sim.frames if steps is None else steps):
        sol.step(s, s, sim.dt)
        rot, _ = sim.scene.frames[0].pose(s.time)
        for k, v in measure(rot, x0, sol.model.positions(s.q)).items():
            lo, hi = out.get(k, (v, v))
            out[k] = (min(lo, v), max(hi, v))
    return out
