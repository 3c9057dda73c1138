"""Write ``flag.msh``, the labelled mesh of ``flag.toml``: a flag on a pole standing in a foot.

One conforming mesh of three parts, tagged as Gmsh physical groups (what a mesh authored in
Gmsh, or exported from Blender with the same groups, carries):

- ``pole``: rod edges along the z axis from the foot's top (z = 0.1 m) to z = 1.2 m, 0.05 m
  each;
- ``flag``: a 0.6 m x 0.4 m cloth of triangles (a grid of 0.05 m cells) in the plane y = 0,
  whose edge at x = 0 is the pole's top 0.4 m (the pole's vertices are the flag's: a rod in a
  shell's boundary, a curve connection);
- ``foot``: a 0.2 m x 0.2 m x 0.1 m block of tetrahedra (Gmsh, structured), whose top
  centre is the pole's first vertex (a point connection).

    python examples/make_flag_mesh.py      # needs the 'mesh' extra (meshio, gmsh)

The materials, the connections and what holds the foot (the vertices of its part ``foot`` at
z = 0, a hold by part and box) are the scene file's (``examples/flag.toml``).
"""
from pathlib import Path

import numpy as np

from strandlab.io.simplicial import write_simplicial
from strandlab.scenes.meshing import box_tets, grid_triangles
from strandlab.sim.material import Material
from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

CELL = 0.05                    # [m] the pole's edges and the flag's grid
FOOT = ((-0.1, -0.1, 0.0), (0.1, 0.1, 0.1))
TOP = 1.2                      # [m] the pole's top
FLAG = (0.6, 0.4)              # [m] the flag's width (along x) and height (along z)


def flag_mesh():
    """The mesh's vertices [V, 3], its parts' cells (pole edges, flag triangles, foot
    tetrahedra) and the foot's bottom vertices (those the scene file holds)."""
    x, tets = box_tets(*FOOT, (2, 2, 1))
    base = int(np.argmin(np.linalg.norm(x - [0.0, 0.0, FOOT[1][2]], axis=1)))
    n_pole = round((TOP - FOOT[1][2]) / CELL)
    pole_z = FOOT[1][2] + CELL * np.arange(1, n_pole + 1)
    pole = [base] + list(range(len(x), len(x) + n_pole))
    x = np.concatenate([x, np.c_[np.zeros(n_pole), np.zeros(n_pole), pole_z]])
    nx, nz = round(FLAG[0] / CELL), round(FLAG[1] / CELL)
    # flag grid vertex (i, j) at x = i CELL, z = TOP - FLAG[1] + j CELL; column 0 is the pole's
    grid = np.empty((nz + 1, nx + 1), dtype=np.int64)
    grid[:, 0] = pole[n_pole - nz:]
    fresh = [(i, j) for j in range(nz + 1) for i in range(1, nx + 1)]
    grid[[j for _, j in fresh], [i for i, _ in fresh]] = len(x) + np.arange(len(fresh))
    x = np.concatenate([x, [[i * CELL, 0.0, TOP - FLAG[1] + j * CELL] for i, j in fresh]])
    tri = grid.ravel()[grid_triangles(nx, nz)]
    bottom = np.nonzero(np.isclose(x[:, 2], 0.0))[0]
    return x, np.c_[pole[:-1], pole[1:]], tri, tets, bottom


def main(path=None):
    """Write the mesh to ``path`` (default: ``flag.msh`` beside this script)."""
    path = Path(__file__).with_name("flag.msh") if path is None else Path(path)
    x, edges, tri, tets, bottom = flag_mesh()
    # materials only to build the mesh (the scene file gives the real ones by part name)
    mb = SimplicialBuilder(x, name="flag")
    mb.add_rods(edges, material=Material(young_modulus=1.0, density=1.0, radius=1.0),
                name="pole")
    mb.add_shells(tri, material=ShellMaterial(1.0, 0.0, 1.0, 1.0), name="flag")
    mb.add_solids(tets, material=SolidMaterial(1.0, 0.0, 1.0), name="foot")
    write_simplicial(path, mb.build())
    print(f"{path}: {len(x)} vertices, {len(edges)} rod edges, {len(tri)} triangles, "
          f"{len(tets)} tetrahedra; the foot's bottom vertices: {bottom.tolist()}")


if __name__ == "__main__":
    main()
