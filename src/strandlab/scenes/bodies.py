"""Scenes with bodies: the elastic pendulum of Fig. 8 and rod networks joined by rigid bodies."""
from __future__ import annotations

import numpy as np

from ..pbd.solver import PBDSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.shapes import box_mesh, line

__all__ = ["elastic_pendulum", "network"]


def elastic_pendulum(*, length: float = 0.5, segments: int = 20, radius: float = 0.004,
                     young_modulus: float = 5e6, cube_size: float = 0.1, cube_mass: float = 0.05,
                     speed: float = 2.0, frames: int = 900, dt: float = 1.0 / 60.0,
                     iterations: int = 5, substeps: int = 2, damping: float = 0.3) -> Simulation:
    """A rod hanging from a fixed frame carries a cube (a triangle mesh) on a triangle
    attachment (Fig. 8).  The cube starts with a horizontal velocity, hits a capsule off its
    centre, is spun about the rod axis, twists the rod, and the rod untwists it again.
    """
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    mat = Material(young_modulus=young_modulus, density=1200.0, radius=radius)
    top = np.array([0.0, 0.0, length + cube_size])
    bottom_face_z = cube_size
    pts = line(top, (0.0, 0.0, bottom_face_z), segments)
    s = b.add_strand(pts, material=mat, d1=(1.0, 0.0, 0.0), name="rod")
    f = b.add_frame(top)
    b.attach_to_frame(s, f, end=0)
    verts, tris = box_mesh((0.0, 0.0, 0.5 * cube_size), cube_size)
    vel = np.tile([speed, 0.0, 0.0], (len(verts), 1))
    mesh = b.add_mesh(verts, tris, mass=cube_mass, collide_radius=0.005, velocities=vel)
    # the top face (z = cube_size) holds the rod end at its centre: split it at the centre by
    # choosing the triangle that contains the centre point on its edge (both do); use the first
    top_tris = [k for k, t in enumerate(tris) if np.allclose(verts[t][:, 2], cube_size)]
    b.attach_to_triangle(s, mesh, top_tris[0], end=-1)
    # an obstacle in the cube's path, hitting it off-centre so that it spins about the rod
    b.add_capsule((0.35, 0.06, -0.2), (0.35, 0.06, 0.4), 0.03, friction=0.3)
    model = b.build()
    params = dict(length=length, segments=segments, radius=radius, young_modulus=young_modulus,
                  cube_size=cube_size, cube_mass=cube_mass, speed=speed, damping=damping)
    settings = PBDSettings.interactive(iterations=iterations, substeps=substeps,
                                       damping=damping, length_solver="direct")
    return Simulation("elastic_pendulum", model, settings,
                 dt, frames, description="rod from a fixed frame to a cube that hits an "
                 "obstacle, twists and recovers (Fig. 8)", params=params, view=(20.0, -50.0))


def network(*, orientation: bool = True, segments: int = 12, radius: float = 0.006,
            young_modulus: float = 2e9, branch_angle: float = 40.0, frames: int = 240,
            dt: float = 1.0 / 60.0, iterations: int = 5, substeps: int = 20,
            damping: float = 1.0) -> Simulation:
    """A small tree: a trunk clamped at the ground and two branches joined to it by a small rigid
    body (section 5.1, Fig. 6).  With ``orientation=False`` the joint only pins positions (a ball
    joint), and the branches fold down under gravity; with it, torque passes through the body.
    A standing tree needs a stiff solve: position-based stiffness grows with the number of
    constraint passes per second, so the scene uses 20 substeps of 5 passes.
    """
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    mat = Material(young_modulus=young_modulus, density=1000.0, radius=radius)
    trunk_top = np.array([0.0, 0.0, 0.5])
    trunk = b.add_strand(line((0.0, 0.0, 0.0), trunk_top, segments), material=mat,
                         d1=(1.0, 0.0, 0.0), name="trunk")
    base = b.add_frame((0.0, 0.0, 0.0))
    b.attach_to_frame(trunk, base, end=0)
    joint = b.add_rigid_body(trunk_top, mass=0.01, size=0.02)
    b.attach_to_body(trunk, joint, end=-1, orientation=orientation)
    a = np.radians(branch_angle)
    for k, sign in enumerate((1.0, -1.0)):
        tip = trunk_top + 0.35 * np.array([sign * np.sin(a), 0.0, np.cos(a)])
        br = b.add_strand(line(trunk_top, tip, segments), material=mat,
                          d1=(0.0, 1.0, 0.0), name=f"branch {k}")
        b.attach_to_body(br, joint, end=0, orientation=orientation)
    model = b.build()
    params = dict(orientation=orientation, segments=segments, radius=radius,
                  young_modulus=young_modulus, branch_angle=branch_angle, damping=damping)
    return Simulation("network" if orientation else "network_ball_joint", model,
                 PBDSettings.interactive(iterations=iterations, substeps=substeps,
                                         damping=damping), dt, frames,
                 description="a trunk and two branches joined through a rigid-body joint",
                 params=params, view=(10.0, -90.0))
