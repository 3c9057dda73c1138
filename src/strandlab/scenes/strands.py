"""Scenes of free and rooted strands: robustness (Fig. 11) and hair on a head."""
from __future__ import annotations

import numpy as np

from ..pbd.solver import PBDSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.shapes import helix

__all__ = ["robustness", "hair", "shape_error"]


def shape_error(points: np.ndarray, rest: np.ndarray) -> float:
    """RMS distance between ``points`` and ``rest`` (both [n, 3]) after the best rigid
    alignment (Kabsch), divided by the rest shape's arclength: a dimensionless shape error."""
    p = points - points.mean(axis=0)
    q = rest - rest.mean(axis=0)
    u, _, vt = np.linalg.svd(p.T @ q)
    d = np.sign(np.linalg.det(u @ vt))
    r = u @ np.diag([1.0, 1.0, d]) @ vt
    rms = np.sqrt(np.mean(np.sum((p @ r - q) ** 2, axis=1)))
    return float(rms / np.sum(np.linalg.norm(np.diff(rest, axis=0), axis=1)))


def robustness(*, segments: int = 30, seed: int = 1, spread: float = 0.3, frames: int = 600,
               dt: float = 1.0 / 60.0, iterations: int = 10, damping: float = 2.0) -> Simulation:
    """A helical rod whose vertices start at random positions (uniform in a cube of side
    ``spread`` [m]) returns to its rest shape (Fig. 11).  No gravity, no attachments."""
    rest = helix(radius=0.05, pitch=0.04, turns=3.0, segments=segments)
    rng = np.random.default_rng(seed)
    start = rng.uniform(-0.5 * spread, 0.5 * spread, size=rest.shape)
    b = SceneBuilder(gravity=(0.0, 0.0, 0.0))
    mat = Material(young_modulus=1e7, density=1000.0, radius=0.003)
    lg = float(np.mean(np.linalg.norm(np.diff(rest, axis=0), axis=1)))
    b.add_strand(start, rest_points=rest, material=mat,
                 options={"pbd": {"alpha": (1.0, 1.0, 1.0), "ghost_distance": lg}},
                 name="helix")
    model = b.build()
    params = dict(segments=segments, seed=seed, spread=spread, damping=damping)
    # the paper's fixed budget; the random start is far beyond any strain bound
    settings = PBDSettings.interactive(iterations=iterations, damping=damping, max_strain=None)
    return Simulation("robustness", model, settings, dt,
                 frames, description="rod from random vertex positions returns to its rest "
                 "helix (Fig. 11)", params=params, view=(20.0, -60.0))


def hair(*, n_strands: int = 200, segments: int = 20, length: float = 0.25,
         head_radius: float = 0.1, strand_radius: float = 5e-4, young_modulus: float = 3e9,
         frames: int = 180, dt: float = 1.0 / 60.0, iterations: int = 10,
         damping: float = 1.0, seed: int = 0, strand_collision: bool = False) -> Simulation:
    """``n_strands`` strands of ``segments`` edges rooted on the upper part of a sphere (a head),
    clamped along the surface normal at the root, falling under gravity and colliding with it;
    with ``strand_collision``, the strands also collide with each other (capsules of
    ``strand_radius``, docs/collision.md).
    """
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    mat = Material(young_modulus=young_modulus, density=1300.0, radius=strand_radius)
    rng = np.random.default_rng(seed)
    # roots: Fibonacci points on the cap above 20 degrees below the equator
    k = np.arange(n_strands) + 0.5
    z = 1.0 - k / n_strands * (1.0 + np.sin(np.radians(20.0)))
    phi = k * np.pi * (3.0 - np.sqrt(5.0)) + rng.uniform(0, 0.1, n_strands)
    rho = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
    normals = np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1)
    root_r = head_radius + strand_radius
    for i, n in enumerate(normals):
        root = root_r * n
        pts = root + np.linspace(0.0, length, segments + 1)[:, None] * n
        s = b.add_strand(pts, material=mat, name=f"hair {i}")
        f = b.add_frame(root)
        b.attach_to_frame(s, f, end=0)
    b.add_sphere((0.0, 0.0, 0.0), head_radius, friction=0.2)
    model = b.build()
    params = dict(n_strands=n_strands, segments=segments, length=length,
                  head_radius=head_radius, strand_radius=strand_radius,
                  young_modulus=young_modulus, damping=damping, seed=seed,
                  strand_collision=strand_collision)
    # The paper's budget (alpha stiffness, one substep) gives the draped look at interactive
    # cost, but Gauss-Seidel edge lengths let every strand stretch by 50 % or more; the direct
    # length solve keeps the edge strain below 1 %.
    settings = PBDSettings.interactive(iterations=iterations, damping=damping,
                                       length_solver="direct", strand_collision=strand_collision)
    return Simulation("hair", model, settings, dt, frames,
                 description=f"{n_strands} strands of {segments} edges rooted on a sphere, "
                 "colliding with it", params=params, view=(10.0, -60.0))
