"""A small trajectory for the interchange tests: two materials, an open and a closed strand, a
kinematic frame and a triangle mesh, moving so every frame differs (imported as a module)."""
import numpy as np

from strandlab.io.trajectory import Trajectory

MAT_A = {"young_modulus": 1e7, "density": 1000.0, "radius": 0.004, "poisson_ratio": 0.5}
MAT_B = {"young_modulus": 5e6, "density": 1100.0, "radius": 0.002, "poisson_ratio": 0.5}
FPS = 30.0


def sample_trajectory(n_frames: int = 5) -> Trajectory:
    """Strands: 0 open (material A, 4 vertices), 1 closed (B, 3), 2 open (B, 5), 3 open (A, 2);
    extra points: one frame (3 points) then a mesh of 4 vertices and 2 triangles."""
    counts = np.array([4, 3, 5, 2])
    closed = np.array([False, True, False, False])
    so = np.concatenate([[0], np.cumsum(counts)])
    edges = np.where(closed, counts, counts - 1)
    eo = np.concatenate([[0], np.cumsum(edges)])
    rng = np.random.default_rng(3)
    base = rng.normal(size=(so[-1], 3)) * 0.1
    t = np.arange(n_frames) / FPS
    pos = base[None] + t[:, None, None] * np.array([0.3, -0.2, 0.5])
    d1 = rng.normal(size=(n_frames, eo[-1], 3))
    d1 /= np.linalg.norm(d1, axis=2, keepdims=True)
    extra0 = np.vstack([[0, 0, 1], [0.1, 0, 1], [0, 0.1, 1],
                        [0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]).astype(float)
    extra = extra0[None] + t[:, None, None] * np.array([0.0, 0.0, -1.0])
    mats = [MAT_A, MAT_B]
    which = [0, 1, 1, 0]
    meta = {"name": "sample", "dt": 1 / FPS, "steps_per_frame": 1,
            "solver": {"type": "pbd", "settings": {}}, "materials": mats,
            "scene": {"strands": [{"name": f"s{i}", "material": mats[w]}
                                  for i, w in enumerate(which)],
                      "frames": [{"type": "fixed"}],
                      "meshes": [{"name": "cloth", "n_vertices": 4, "n_triangles": 2}],
                      "bodies": []}}
    return Trajectory(times=t, positions=pos, d1=d1, strand_offsets=so, edge_offsets=eo,
                      closed=closed, radii=np.array([0.004, 0.002, 0.002, 0.004]),
                      extra_points=extra, extra_triangles=np.array([[3, 4, 5], [3, 5, 6]]),
                      metadata=meta)
