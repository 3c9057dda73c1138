"""Chain-shape-matching scenes with shape-matched particle clusters (Rungjiratananon et al.
2011): the hanging bridge of Fig. 9 (boards tied with ropes, torn by falling crates) and the
mobile of Fig. 6c (an object turned about its string twists it back and forth).

Boards, crates and the mobile's object are triangle meshes of compliance 0, which the csm
solver matches as rigid clusters of their vertices (docs/csm.md, "Clusters"); their surfaces
are subdivided so that the vertices, spheres of the mesh's contact radius, cover them.  Ropes
are tied to the boards' top faces (triangle attachments).  Tests:
tests/scenes/test_csm_bridge.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..csm.solver import CSMSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.shapes import line

__all__ = ["box_mesh", "top_triangle", "csm_bridge", "csm_mobile", "ROPE", "RUBBER"]

#: A fibre rope (SI): E = 1 GPa, 4 mm radius.
ROPE = Material(young_modulus=1e9, density=1150.0, radius=0.004)
#: A rubber cord: E = 5 MPa, 3 mm radius.
RUBBER = Material(young_modulus=5e6, density=1100.0, radius=0.003)


def box_mesh(center, size, spacing: float):
    """A closed triangle mesh of the box of ``size`` (x, y, z) [m] centred at ``center``, each
    face a grid of vertices at most ``spacing`` [m] apart.  Returns (vertices [n, 3],
    triangles [t, 3]), triangles wound outwards."""
    c = np.asarray(center, dtype=float)
    half = 0.5 * np.asarray(size, dtype=float)
    n = [max(1, int(math.ceil(2.0 * half[k] / spacing))) for k in range(3)]
    grids = [np.linspace(-half[k], half[k], n[k] + 1) for k in range(3)]
    verts: dict = {}
    tris = []

    def vid(p):
        key = tuple(np.round(p, 12))
        if key not in verts:
            verts[key] = len(verts)
        return verts[key]

    for axis in range(3):
        u, w = (axis + 1) % 3, (axis + 2) % 3
        for sign in (-1.0, 1.0):
            gu, gw = grids[u], grids[w]
            ids = np.zeros((len(gu), len(gw)), dtype=np.int64)
            for i, a in enumerate(gu):
                for j, b in enumerate(gw):
                    p = np.zeros(3)
                    p[axis], p[u], p[w] = sign * half[axis], a, b
                    ids[i, j] = vid(p)
            for i in range(len(gu) - 1):
                for j in range(len(gw) - 1):
                    q = (ids[i, j], ids[i + 1, j], ids[i + 1, j + 1], ids[i, j + 1])
                    if sign > 0:
                        tris += [(q[0], q[1], q[2]), (q[0], q[2], q[3])]
                    else:
                        tris += [(q[0], q[2], q[1]), (q[0], q[3], q[2])]
    v = np.zeros((len(verts), 3))
    for key, k in verts.items():
        v[k] = key
    return v + c, np.asarray(tris, dtype=np.int64)


def top_triangle(vertices, triangles, point, tol: float = 1e-9) -> int:
    """Index of a triangle of the mesh whose plane passes through ``point`` and which contains
    it (for a strand end tied there)."""
    p = np.asarray(point, dtype=float)
    for k, t in enumerate(triangles):
        a, b, c = vertices[t]
        n = np.cross(b - a, c - a)
        area2 = np.linalg.norm(n)
        if area2 <= 0 or abs(np.dot(p - a, n)) > tol * area2:
            continue
        # barycentric coordinates
        s1 = np.dot(np.cross(b - p, c - p), n) / area2 ** 2
        s2 = np.dot(np.cross(c - p, a - p), n) / area2 ** 2
        if min(s1, s2, 1.0 - s1 - s2) >= -1e-9:
            return k
    raise ValueError(f"no triangle of the mesh contains {p.tolist()}")


def _sim(name, scene, settings, dt, frames, description, params, view=(25.0, -60.0)):
    return Simulation(name, scene, settings, dt, frames, steps_per_frame=1,
                      description=description, params=params, view=view, solver="csm")


def csm_bridge(*, boards: int = 7, pitch: float = 0.22, board_size=(0.16, 0.40, 0.03),
               board_mass: float = 1.0, sag: float = 0.12, height: float = 1.0,
               crates: int = 2, crate_size: float = 0.14, crate_mass: float = 4.0,
               drop: float = 0.35, crate_pitch: float = 2.0, rupture: float = 4e6,
               rope_segments: int = 4, iterations: int = 8,
               spacing: float = 0.02, frames: int = 200, dt: float = 0.01,
               substeps: int = 8, seed: int = 0) -> Simulation:
    """Fig. 9: a hanging bridge of ``boards`` wooden boards (rigid clusters of ``board_mass``
    [kg], ``board_size`` [m]) along a shallow arc of ``sag`` [m] between four posts, each
    board tied to the next by a short rope on either side (and the end boards to the posts);
    ``crates`` crates (``crate_mass`` [kg], cubes of ``crate_size`` [m]) fall from ``drop``
    [m] above the middle of the bridge, ``crate_pitch`` board pitches apart (2: onto the
    middles of the boards either side of the centre one; across a gap, two boards fold down
    about their ropes and let a crate through).  The ropes (fibre, E = 1 GPa, r = 4 mm,
    ``rope_segments`` segments between boards) tear at ``rupture`` [Pa] (varied by 1e-4 along
    each, seeded): enough for the bridge alone, not for the crates' impact.  ``substeps``
    and ``iterations`` (strain-limiting passes) are the solver's: the coupling of ropes and
    boards needs small substeps (docs/csm.md, "Limits")."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    bx, by, bz = board_size
    half_span = 0.5 * (boards - 1) * pitch + 0.5 * bx + 0.08
    ys = (-0.5 * by + 0.02, 0.5 * by - 0.02)
    radius = 0.5 * spacing

    def arc(x):
        return height - sag * (1.0 - (x / half_span) ** 2)

    meshes, corners = [], []
    for k in range(boards):
        xc = (k - 0.5 * (boards - 1)) * pitch
        v, t = box_mesh((xc, 0.0, arc(xc)), (bx, by, bz), spacing)
        meshes.append((b.add_mesh(v, t, mass=board_mass, collide_radius=radius,
                                  name=f"board {k}"), v, t))
        corners.append((xc - 0.5 * bx + 0.01, xc + 0.5 * bx - 0.01, arc(xc) + 0.5 * bz))
    rope_opts = {"csm": {"half_width": 1, "rupture_stress": rupture, "yield_stress": rupture,
                         "rupture_variation": 1e-4}}

    def tie(s, k, end, xa, za, y):
        mesh, v, t = meshes[k]
        b.attach_to_triangle(s, mesh, top_triangle(v, t, (xa, y, za)), end=end)

    n_rope = 0
    for y in ys:
        # post to the first board, boards to boards, the last board to the post
        xa, _, za = corners[0]
        s = b.add_strand(line((-half_span, y, height), (xa, y, za), rope_segments + 1),
                         material=ROPE, name=f"rope {n_rope}", options=rope_opts)
        b.attach_to_frame(s, b.add_frame((-half_span, y, height)), end=0)
        tie(s, 0, -1, xa, za, y)
        n_rope += 1
        for k in range(boards - 1):
            _, xa, za = corners[k]
            xb, _, zb = corners[k + 1]
            s = b.add_strand(line((xa, y, za), (xb, y, zb), rope_segments), material=ROPE,
                             name=f"rope {n_rope}", options=rope_opts)
            tie(s, k, 0, xa, za, y)
            tie(s, k + 1, -1, xb, zb, y)
            n_rope += 1
        _, xb, zb = corners[-1]
        s = b.add_strand(line((xb, y, zb), (half_span, y, height), rope_segments + 1),
                         material=ROPE, name=f"rope {n_rope}", options=rope_opts)
        tie(s, boards - 1, 0, xb, zb, y)
        b.attach_to_frame(s, b.add_frame((half_span, y, height)), end=-1)
        n_rope += 1
    for c in range(crates):
        xc = (c - 0.5 * (crates - 1)) * crate_pitch * pitch
        z0 = arc(xc) + 0.5 * bz + drop + 0.5 * crate_size + radius * 2 + c * 0.05
        v, t = box_mesh((xc, 0.0, z0), (crate_size,) * 3, spacing)
        b.add_mesh(v, t, mass=crate_mass, collide_radius=radius, name=f"crate {c}")
    params = dict(boards=boards, pitch=pitch, board_size=tuple(board_size),
                  board_mass=board_mass, sag=sag, height=height, crates=crates,
                  crate_size=crate_size, crate_mass=crate_mass, drop=drop,
                  crate_pitch=crate_pitch, rupture=rupture, rope_segments=rope_segments,
                  iterations=iterations, spacing=spacing, substeps=substeps, seed=seed)
    settings = CSMSettings(substeps=substeps, seed=seed, damping=0.2, iterations=iterations)
    return _sim("csm_bridge", b.build(), settings, dt, frames,
                "a hanging bridge of boards tied with ropes, torn by falling crates (chain "
                "shape matching with rigid particle clusters, Fig. 9)", params)


def csm_mobile(*, segments: int = 40, length: float = 0.5, size=(0.2, 0.04, 0.02),
               mass: float = 0.1, spin: float = 1.0, twist_stiffness: float = 2e-4,
               frames: int = 1200, dt: float = 0.01) -> Simulation:
    """Fig. 6c: a string (``length`` [m]) hangs from a clamp and holds a rigid object (a bar
    of ``size`` [m] and ``mass`` [kg], a cluster tied to the string's end) that a gust has set
    turning about the string at ``spin`` [rad/s].  Turning it twists the string, whose twist
    turns it back: it rolls back and forth, a torsion pendulum of period
    ``2 pi sqrt(I L / beta)`` (``beta`` the twisting stiffness [N m^2])."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    s = b.add_strand(line((0.0, 0.0, length), (0.0, 0.0, 0.0), segments), material=RUBBER,
                     d1=(1.0, 0.0, 0.0), name="string",
                     options={"csm": {"half_width": 2, "twist_stiffness": twist_stiffness}})
    b.attach_to_frame(s, b.add_frame((0.0, 0.0, length)), end=0)
    sx, sy, sz = size
    v, t = box_mesh((0.0, 0.0, -0.5 * sz), size, max(sx, sy, sz))
    vel = np.cross([0.0, 0.0, spin], v - v.mean(axis=0))
    mesh = b.add_mesh(v, t, mass=mass, collide_radius=0.005, velocities=vel, name="object")
    b.attach_to_triangle(s, mesh, top_triangle(v, t, (0.0, 0.0, 0.0)), end=-1)
    params = dict(segments=segments, length=length, size=tuple(size), mass=mass, spin=spin,
                  twist_stiffness=twist_stiffness)
    settings = CSMSettings(twist_iterations=20)
    return _sim("csm_mobile", b.build(), settings, dt, frames,
                "a hanging mobile: an object turned about its string twists it and rolls back "
                "and forth (chain shape matching, Fig. 6c)", params, view=(20.0, -60.0))
