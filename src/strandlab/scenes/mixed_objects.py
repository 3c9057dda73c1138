"""Objects of Chang et al. 2019 as built-in scenes, built procedurally: the toy tunnel
(Fig. 14), the sandwich composite (Fig. 16) and the umbrella (Fig. 15).  Each test in
tests/scenes/test_mixed_scenes.py measures what its figure shows.
"""
from __future__ import annotations

import numpy as np

from ..mixed.solver import MixedSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial
from .meshing import (
    box_tets,
    cylinder_triangles,
    disk_triangles,
)

__all__ = ["mixed_tunnel", "mixed_sandwich", "mixed_umbrella", "ring_start"]


def ring_start(r: int) -> int:
    """Index of the first vertex of ring ``r`` of :func:`~.meshing.disk_triangles`."""
    return 0 if r == 0 else 1 + 3 * r * (r - 1)


def _sim(name, scene, settings, dt, frames, description, params, view=(30.0, -60.0)):
    return Simulation(name, scene, settings, dt, frames, description=description,
                      params=params, view=view, solver="mixed")


# ------------------------------------------------------------------------------ tunnel
def mixed_tunnel(*, rods: bool = True, radius: float = 0.1, length: float = 0.3,
                 n_around: int = 16, n_along: int = 8, spirals: int = 4,
                 frames: int = 80, dt: float = 0.01) -> Simulation:
    """Fig. 14: a cloth cylinder lying on the floor along x, with (``rods``) or without spiral
    rods on its own edges: ``spirals`` spirals following the triangles' diagonals.  It settles
    under gravity; with the rods it keeps its round section."""
    x, tri = cylinder_triangles(radius, length, n_around, n_along)
    cloth = ShellMaterial(young_modulus=5e6, poisson_ratio=0.3, thickness=5e-4, density=600.0)
    wire = Material(young_modulus=2e9, density=1500.0, radius=0.0015)
    mb = SimplicialBuilder(x, name="tunnel")
    mb.add_shells(tri, material=cloth, name="cloth")
    if rods:
        edges = []
        for s in range(spirals):
            i0 = s * n_around // spirals
            p = [j * n_around + (i0 + j) % n_around for j in range(n_along + 1)]
            edges += list(zip(p[:-1], p[1:]))
        mb.add_rods(edges, material=wire, name="spiral")
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(mb.build())
    b.add_plane((0.0, 0.0, -radius - 0.002), (0.0, 0.0, 1.0), friction=0.0)
    return _sim(f"mixed_tunnel_{'rods' if rods else 'cloth'}", b.build(),
                MixedSettings(damping=5.0), dt, frames,
                "Fig. 14: toy tunnel, cloth cylinder " + ("with spiral rods" if rods else
                                                          "without rods") + " on the floor",
                dict(rods=rods, radius=radius, length=length, n_around=n_around,
                     n_along=n_along, spirals=spirals))


# ------------------------------------------------------------------------------ sandwich
def _faces_at(x: np.ndarray, tets: np.ndarray, axis: int, value: float, tol: float):
    """The distinct tetrahedron faces lying in the plane ``x[axis] = value``."""
    faces = np.concatenate([tets[:, [0, 1, 2]], tets[:, [0, 1, 3]], tets[:, [0, 2, 3]],
                            tets[:, [1, 2, 3]]])
    on = np.all(np.abs(x[faces][:, :, axis] - value) < tol, axis=1)
    f = faces[on]
    return f[np.unique(np.sort(f, axis=1), axis=0, return_index=True)[1]]


def mixed_sandwich(*, sheets: bool = True, length: float = 0.2, width: float = 0.04,
                   height: float = 0.02, nx: int = 12, ny: int = 3, nz: int = 4,
                   frames: int = 30, dt: float = 1.0 / 30.0) -> Simulation:
    """Fig. 16: a soft foam bar clamped at one end; with ``sheets``, its interior faces at a
    quarter and three quarters of its height are labelled as stiff aluminium-like shells (a
    sandwich composite).  It bends under its own weight; the sandwich far less.  One step per
    frame of 1/30 s: it settles within 0.3 s on the static equilibrium's tip deflection at any
    step from 5 ms to 1/30 s (docs/mixed.md).  Surface contact is off: a bar bending under its
    weight does not reach itself (its test runs it with contact on too, to the same state)."""
    x, tets = box_tets((0, 0, 0), (length, width, height), (nx, ny, nz))
    foam = SolidMaterial(young_modulus=2e5, poisson_ratio=0.3, density=100.0)
    sheet = ShellMaterial(young_modulus=7e9, poisson_ratio=0.33, thickness=2e-4,
                          density=2700.0)
    mb = SimplicialBuilder(x, name="sandwich")
    mb.add_solids(tets, material=foam, name="foam")
    if sheets:
        tol = 1e-6 * height
        faces = np.concatenate([_faces_at(x, tets, 2, height * k / 4, tol) for k in (1, 3)])
        mb.add_shells(faces, material=sheet, name="sheets")
    mb.hold(np.nonzero(np.isclose(x[:, 0], 0.0))[0])
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(mb.build())
    return _sim(f"mixed_sandwich_{'sheets' if sheets else 'plain'}", b.build(),
                MixedSettings(damping=30.0, self_contact=False), dt, frames,
                "Fig. 16: foam bar " + ("with stiff inner sheets (sandwich composite)" if sheets
                                        else "alone") + ", clamped, bending under its weight",
                dict(sheets=sheets, length=length, width=width, height=height, nx=nx, ny=ny,
                     nz=nz), view=(10.0, -80.0))


# ------------------------------------------------------------------------------ umbrella
def mixed_umbrella(*, rods: bool = True, radius: float = 0.4, rings: int = 6,
                   dome: float = 0.12, shaft: float = 0.5, frames: int = 80,
                   dt: float = 0.01) -> Simulation:
    """Fig. 15: an open umbrella held by its handle: a cloth dome, six ribs along its radial
    edges, a shaft, and a stretcher from a runner on the shaft to the middle of each rib (a
    triple junction of rod edges where it meets the rib).  Without the rods the cloth
    collapses."""
    x, tri = disk_triangles(radius, rings)
    r = np.linalg.norm(x[:, :2], axis=1)
    x[:, 2] = dome * (1.0 - (r / radius) ** 2)
    nd = len(x)
    mid = rings // 2
    runner_z = dome - 0.25 * shaft
    shaft_pts = np.c_[np.zeros(4), np.zeros(4), dome - shaft * np.array([1, 2, 3, 4]) / 4]
    x = np.concatenate([x, shaft_pts])
    runner = nd + 0                                     # the shaft vertex at runner_z
    assert abs(x[runner, 2] - runner_z) < 1e-12
    cloth = ShellMaterial(young_modulus=2e8, poisson_ratio=0.3, thickness=2e-4, density=1100.0)
    steel = Material(young_modulus=2e11, density=7800.0, radius=0.0015)
    mb = SimplicialBuilder(x, name="umbrella")
    mb.add_shells(tri, material=cloth, name="canopy")
    if rods:
        ribs, stretchers = [], []
        for m in range(6):
            path = [0] + [ring_start(k) + m * k for k in range(1, rings + 1)]
            ribs += list(zip(path[:-1], path[1:]))
            stretchers.append((runner, path[mid]))
        shaft_edges = [(0, nd)] + [(nd + k, nd + k + 1) for k in range(3)]
        mb.add_rods(ribs, material=steel, name="ribs")
        mb.add_rods(stretchers + shaft_edges, material=steel, name="frame")
    # the handle; without rods the canopy's apex (and the unused shaft points)
    mb.hold([nd + 2, nd + 3] if rods else [0, nd, nd + 1, nd + 2, nd + 3])
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(mb.build())
    return _sim(f"mixed_umbrella_{'rods' if rods else 'cloth'}", b.build(),
                MixedSettings(damping=5.0), dt, frames,
                "Fig. 15: umbrella held by its handle, " + ("ribs, stretchers and shaft with "
                                                            "triple junctions" if rods
                                                            else "cloth only"),
                dict(rods=rods, radius=radius, rings=rings, dome=dome, shaft=shaft))

