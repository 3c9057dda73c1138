"""Reference formulas and finite differences shared by the tests (imported as ``helpers``).

Written from the paper's definitions, independently of the package: the material frame of eq. (3)
and the modified Darboux vector of eq. (10) (middle expression) of Umetani, Schmidt and Stam
2014, with the sign of ``docs/pbd.md``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["paper_frame", "omega_ref", "fd_jacobian", "rel_err", "saved_run"]


def paper_frame(p0, p1, pg):
    """Eq. (3): columns (d1, d2, d3); d3 along the edge, d2 = unit(d3 x (pg - p0)), d1 = d2 x d3."""
    d3 = (p1 - p0) / np.linalg.norm(p1 - p0)
    u = np.cross(d3, pg - p0)
    d2 = u / np.linalg.norm(u)
    return np.column_stack([np.cross(d2, d3), d2, d3])


def omega_ref(p6, rest_len, rot=None):
    """Eq. (10), middle expression, for frames A = (p0, p1, p2) [times rot] and B = (p3, p4, p5).

    ``Omega = (4 / l) vect(Q) / (1 + tr Q)``, ``Q = D_A^T D_B`` [1/m].
    """
    da = paper_frame(*p6[0:3])
    if rot is not None:
        da = da @ rot
    q = da.T @ paper_frame(*p6[3:6])
    vect = 0.5 * np.array([q[2, 1] - q[1, 2], q[0, 2] - q[2, 0], q[1, 0] - q[0, 1]])
    return (4.0 / rest_len) * vect / (1.0 + np.trace(q))


def fd_jacobian(f, x, pts, h):
    """Central differences ``d f / d x[p]`` for ``p`` in ``pts``: shape [len(pts), M, 3].

    ``f`` maps positions ``x`` [n, 3] to an array of ``M`` values (flattened, C order).
    """
    m = np.atleast_1d(f(x)).size
    jac = np.zeros((len(pts), m, 3))
    for k, p in enumerate(pts):
        for s in range(3):
            xp = x.copy()
            xm = x.copy()
            xp[p, s] += h
            xm[p, s] -= h
            jac[k, :, s] = (np.ravel(f(xp)) - np.ravel(f(xm))) / (2 * h)
    return jac


def rel_err(a, b):
    """Largest absolute difference relative to the largest entry of the reference ``b``."""
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def step_mesh(spec, steps: int, dt: float = 0.01):
    """The vertex positions [V, 3] of the simplicial mesh ``spec`` after ``steps`` steps of
    ``dt`` of the mixed solver's defaults under gravity."""
    import strandlab as sl
    from strandlab.mixed import MixedSolver

    b = sl.SceneBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_simplicial_mesh(spec)
    sol = MixedSolver(b.build())
    s = sol.state()
    for _ in range(steps):
        sol.step(s, s, dt)
    return s.q[: 3 * len(spec.vertices)].reshape(-1, 3).copy()


def saved_run(folder):
    """``folder`` holding ``trajectory.h5`` of a run of one straight strand of 3 points over two
    frames (for commands that read a run: ``strandlab view``, ``export``); returns ``folder``."""
    from strandlab.io.trajectory import Trajectory, save_trajectory

    pos = np.zeros((2, 3, 3))
    pos[:, :, 0] = [0.0, 0.1, 0.2]
    traj = Trajectory(times=[0.0, 0.1], positions=pos, d1=np.tile([0.0, 1.0, 0.0], (2, 2, 1)),
                      strand_offsets=[0, 3], edge_offsets=[0, 2], closed=[False], radii=[0.01],
                      extra_points=np.zeros((2, 0, 3)), extra_triangles=np.zeros((0, 3)))
    save_trajectory(folder / "trajectory.h5", traj)
    return folder
