"""Small real runs for the interchange tests (imported as a module): tapered strands stepped
by the position-based solver, and one rod/shell/solid mesh stepped by the mixed solver."""
import numpy as np

from strandlab.mixed.solver import MixedSettings
from strandlab.sim.builder import SceneBuilder
from strandlab.sim.material import Material
from strandlab.sim.runner import Simulation, simulate
from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

#: Output frame rate of both runs [1/s]: not Blender's default 24, so that the frame mapping
#: is tested.
FPS = 120.0
ROOT, TIP = 2e-3, 0.5e-3            # radii of the tapered strand [m]
PLAIN = 1.5e-3                      # radius of the untapered open strand [m]
THIN, THICK = 1e-3, 3e-3            # radii of the mesh's two rod parts [m]


def tapered_simulation(frames: int = 4) -> Simulation:
    """Strand 0: 7 vertices tapering linearly from ROOT to TIP, clamped at its root, along
    +x; strand 1: 4 vertices of constant radius, a closed triangle... (open, along +y, 2 mm);
    strand 2: a closed ring of 6 vertices.  Gravity -z; 120 frames per second."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    mat = Material(young_modulus=1e7, density=1000.0, radius=ROOT)
    x = np.linspace(0.0, 0.12, 7)
    s0 = b.add_strand(np.c_[x, np.zeros(7), np.full(7, 0.3)], material=mat,
                      radius=np.interp(x, [0.0, x[-1]], [ROOT, TIP]), name="tapered")
    b.fix_vertex(s0, 0)
    s1 = b.add_strand(np.c_[np.full(4, 0.05), np.linspace(0.0, 0.06, 4), np.full(4, 0.2)],
                      material=Material(young_modulus=1e7, density=1000.0, radius=PLAIN),
                      name="plain")
    b.fix_vertex(s1, 0)
    t = np.linspace(0.0, 2.0 * np.pi, 6, endpoint=False)
    b.add_strand(np.c_[0.03 * np.cos(t), 0.03 * np.sin(t), np.full(6, 0.1)], material=mat,
                 closed=True, name="ring")
    return Simulation("tapered", b.build(), None, 1.0 / FPS, frames)


def tapered_run(frames: int = 4):
    """:func:`tapered_simulation` run in memory: a Trajectory of ``frames + 1`` frames."""
    return simulate(tapered_simulation(frames))


def mixed_mesh():
    """One labelled mesh: a solid tetrahedron (vertices 0-3), a shell triangle on its edge
    1-2 (vertex 4) and rods from its apex 3: a thin chain 3-5-6 that forks at 6 (a junction of
    three edges) into 6-7 and 6-8, and a thick rod 8-9-10 continuing 6-8 (the radius changes
    at 8).  Vertices 0, 1, 2 are held.  Rod chains: 3-5-6, 6-7, 6-8 (thin), 8-9-10 (thick)."""
    x = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0.03, 0.03, 0.1],     # the tet
                  [0.1, 0.1, -0.05],                                          # the shell
                  [0.03, 0.03, 0.15], [0.03, 0.03, 0.2], [0.06, 0.03, 0.24],  # thin rods
                  [0.0, 0.03, 0.24], [-0.05, 0.03, 0.24], [-0.1, 0.03, 0.24]],  # thick rod
                 dtype=float)
    mb = SimplicialBuilder(x, name="gadget")
    mb.add_solids([[0, 1, 2, 3]], material=SolidMaterial(1e6, 0.3, 1000.0), name="block")
    mb.add_shells([[1, 4, 2]], material=ShellMaterial(1e7, 0.3, 1e-3, 1000.0), name="flap")
    mb.add_rods([[3, 5], [5, 6], [6, 7], [6, 8]], name="thin",
                material=Material(young_modulus=1e8, density=1000.0, radius=THIN))
    mb.add_rods([[8, 9], [9, 10]], name="thick",
                material=Material(young_modulus=1e8, density=1000.0, radius=THICK))
    mb.hold([0, 1, 2])
    return mb.build()


#: The rod chains of :func:`mixed_mesh` (mesh vertex indices) and their radii.
MIXED_CHAINS = [([3, 5, 6], THIN), ([6, 7], THIN), ([6, 8], THIN), ([8, 9, 10], THICK)]


def mixed_run(frames: int = 3):
    """:func:`mixed_mesh` under gravity with a kinematic frame (its 3 points come first among
    the extra points), run by the mixed solver at 120 frames per second."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_frame((0.0, 0.0, 0.5))
    b.add_simplicial_mesh(mixed_mesh())
    sim = Simulation("gadget", b.build(), MixedSettings(damping=5.0), 1.0 / FPS, frames,
                     solver="mixed")
    return simulate(sim)
