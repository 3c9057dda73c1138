"""A hairstyle on a head, simulated with discrete elastic rods (``strandlab run FILE.hair``).

The roots are clamped to one kinematic frame, the head, which nods and stops; the head is a
sphere collider fitted to the roots.  With a rest-shape file from ``strandlab sagfree`` the hair
keeps its shape under gravity; without one it sags.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.spatial.transform import Rotation

from ..der.solver import DERSettings
from ..io.hairfile import Hair
from ..io.restshape import RestShapeFile
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from .hairstyles import generate_hairstyle

__all__ = ["hair_on_head", "fit_sphere", "hair_scene", "HAIR_MATERIAL"]

#: Human hair: E about 3.5 GPa, density 1300 kg/m^3, radius 40 um (Takahashi and Batty use
#: values of this order); the shear modulus follows from a Poisson ratio of 0.35.
HAIR_MATERIAL = dict(young_modulus=3.5e9, density=1300.0, radius=4e-5, poisson_ratio=0.35)


def fit_sphere(points: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares sphere through ``points`` [n, 3] (n >= 4, not coplanar): centre [3] [m]
    and radius [m]."""
    p = np.asarray(points, dtype=np.float64)
    a = np.c_[2.0 * p, np.ones(len(p))]
    sol, *_ = np.linalg.lstsq(a, np.sum(p * p, axis=1), rcond=None)
    c = sol[:3]
    return c, float(np.sqrt(max(sol[3] + c @ c, 0.0)))


def hair_scene(hair: Hair, *, material: Material | None = None, rest: RestShapeFile | None = None,
               nod: float = 0.35, nod_time: float = 0.5, gravity=(0.0, 0.0, -9.81),
               head=None, where: str = "hair"):
    """The solver-neutral scene of ``hair`` on a head: every root clamped to one head frame
    that turns by ``nod`` [rad] about the y axis through the head centre over ``nod_time`` [s],
    back over the same time, and then stays; a sphere collider (``head`` = (centre, radius), or
    fitted to the roots).  ``rest``: explicit rest shapes per strand (``der`` options), checked
    against the hair.  Returns (scene, head centre, head radius)."""
    mat = material or Material(**HAIR_MATERIAL)
    if rest is not None:
        rest.check_matches(hair.vertex_counts, hair.points, where)
    roots = hair.points[hair.offsets[:-1]]
    if head is None:
        centre, radius = fit_sphere(roots) if len(roots) >= 4 else (roots.mean(axis=0), 0.0)
    else:
        centre, radius = np.asarray(head[0], dtype=np.float64), float(head[1])
    b = SceneBuilder(gravity=gravity)
    if nod != 0.0:
        rots = Rotation.from_rotvec([[0, 0, 0], [0, nod, 0], [0, 0, 0]]).as_matrix()
        f = b.add_frame(keyframes={"times": [0.0, nod_time, 2.0 * nod_time],
                                   "origins": np.tile(centre, (3, 1)), "rotations": rots})
    else:
        f = b.add_frame(centre)
    radii = hair._radii()
    for s in range(hair.n_strands):
        a, e = int(hair.offsets[s]), int(hair.offsets[s + 1])
        opts, m_s = None, mat
        if rest is not None:
            opts = {"der": rest.strand_options(s)}
            sc = float(rest.stiffness_scale[s])
            if sc != 1.0:   # the optimizer stiffened this strand: E and G scale together
                m_s = replace(mat, young_modulus=sc * mat.young_modulus,
                              shear_modulus=sc * mat.shear)
        h = b.add_strand(hair.points[a:e], material=m_s, name=f"hair {s}",
                         radius=None if radii is None else radii[a:e], options=opts)
        b.attach_to_frame(h, f, end=0)
    if radius > 0.0:
        b.add_sphere(centre, 0.98 * radius, friction=0.2)
    return b.build(), centre, radius


def hair_on_head(hair: Hair | None = None, *, style: str = "wavy", n_strands: int = 50,
                 vertices: int = 40, length: float = 0.2, seed: int = 0,
                 rest: RestShapeFile | None = None, nod: float = 0.35, frames: int = 180,
                 dt: float = 1.0 / 60.0, damping: float = 2.0,
                 substeps: int = 8) -> Simulation:
    """A hairstyle (``hair``, or a generated ``style`` of ``n_strands`` strands of ``vertices``
    vertices and ``length`` [m]) on a head that nods and stops, simulated with discrete
    elastic rods (``damping`` [1/s], mass-proportional; ``substeps`` implicit steps of one
    Newton iteration per frame: with one, the strands that the head pushes stretch past the
    strain bound; with four, a stiffened curly strand of the README's 1,000 (100 vertices)
    left the one-iteration linearization's reach as the head turned and diverged)."""
    generated = hair is None
    if generated:
        hair = generate_hairstyle(style, n_strands=n_strands, vertices_per_strand=vertices,
                                  length=length, seed=seed)
    scene, _, _ = hair_scene(hair, rest=rest, nod=nod)
    params = dict(style=style if generated else "file", n_strands=hair.n_strands,
                  nod=nod, damping=damping, rest=rest is not None)
    return Simulation("hair_on_head", scene, DERSettings(damping=damping, substeps=substeps),
                      dt, frames,
                      description="a hairstyle on a head that nods and stops (discrete elastic "
                      "rods" + (", sag-free rest shape)" if rest is not None else ")"),
                      params=params, view=(10.0, -60.0), solver="der")
