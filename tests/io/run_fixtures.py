"""Small runs for the interchange tests (imported as a module): tapered strands stepped by the
position-based solver, and one rod/shell/solid mesh stepped by the mixed solver; and the same
scenes recorded without stepping (:func:`moved`: every point moved by its own velocity), for
the tests of the writers, which need no solver."""
import numpy as np

from strandlab.io.trajectory import Trajectory
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


def moved(sim: Simulation, frames: int) -> Trajectory:
    """The trajectory the runner would record for ``sim``'s scene (layout and metadata), its
    points moving each with a velocity of its own (up to 0.5 m/s) instead of being stepped."""
    scene = sim.scene
    rng = np.random.default_rng(5)
    x0 = np.concatenate([s.points for s in scene.strands] or [np.zeros((0, 3))])
    lay = scene.extra_layout()
    extra0 = np.zeros((lay["n"], 3))
    for k, f in zip(lay["frames"], scene.frames):
        rot, origin = f.pose(0.0)
        extra0[k:k + 3] = origin + np.r_[[np.zeros(3)], 0.01 * rot[:, :2].T]
    for k, m in zip(lay["simplicial"], scene.simplicial):
        extra0[k:k + m.n_vertices] = m.vertices
    t = np.arange(frames + 1) * sim.dt * sim.steps_per_frame
    pos = x0 + t[:, None, None] * rng.uniform(-0.5, 0.5, x0.shape)
    extra = extra0 + t[:, None, None] * rng.uniform(-0.5, 0.5, extra0.shape)
    d1 = np.zeros((len(t), scene.n_edges, 3))
    d1[..., 2] = 1.0
    return Trajectory(times=t, positions=pos, d1=d1, extra_points=extra,
                      strand_offsets=scene.strand_vertex_offsets,
                      edge_offsets=scene.strand_edge_offsets, closed=scene.closed,
                      radii=scene.radii, extra_triangles=scene.extra_triangles,
                      vertex_radii=scene.vertex_radii, extra_segments=scene.extra_segments,
                      extra_segment_radii=scene.extra_segment_radii,
                      extra_tetrahedra=scene.extra_tetrahedra, metadata=sim.to_dict())


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


def mixed_simulation(frames: int = 3) -> Simulation:
    """:func:`mixed_mesh` under gravity with a kinematic frame (its 3 points come first among
    the extra points), for the mixed solver at 120 frames per second."""
    b = SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_frame((0.0, 0.0, 0.5))
    b.add_simplicial_mesh(mixed_mesh())
    return Simulation("gadget", b.build(), MixedSettings(damping=5.0), 1.0 / FPS, frames,
                      solver="mixed")


def mixed_run(frames: int = 3):
    """:func:`mixed_simulation` run in memory by the mixed solver."""
    return simulate(mixed_simulation(frames))
