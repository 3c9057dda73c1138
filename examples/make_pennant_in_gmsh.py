"""Model the pennant of ``examples/pennant.toml`` in Gmsh, through its Python API, as a user
would in Gmsh's own interface or a ``.geo`` file, and write Gmsh's own ``.msh`` file::

    python examples/make_pennant_in_gmsh.py [examples/pennant.msh]   # needs the 'mesh' extra

One OpenCASCADE model, meshed at once so that its parts share their vertices where they meet:

- ``grip``: a 0.15 m x 0.04 m x 0.04 m block (a physical volume: tetrahedra);
- ``rod``: a line along the x axis from inside the grip (x = 0.03 m) through its end face to
  x = 0.6 m, three curves in one physical group: the one inside the grip is embedded in its
  volume, the point where the rod leaves it in its end face (the tetrahedra's edges run along
  the rod: a curve connection);
- ``pennant``: a 0.2 m x 0.12 m rectangle hanging in the plane y = 0 from the rod's last
  curve, which is its top edge (shared: a curve connection), meshed in quadrilaterals
  (Gmsh's recombination; the reader cuts each into two triangles);
- ``clamp``: the grip's face at x = 0, a physical surface that no material makes a part: the
  scene file holds its vertices by name.

Gmsh numbers a file's vertices itself; the scene file names groups, not vertex numbers.
"""
import sys
from pathlib import Path

GRIP = (0.15, 0.04)            # [m] the grip's length (along x) and its square section's side
ROD = (0.03, 0.6)              # [m] where the rod starts (inside the grip) and its tip
PENNANT = (0.4, 0.12)          # [m] where the pennant starts along the rod, and its drop
SIZE = 0.025                   # [m] Gmsh's largest element size


def main(path=None):
    """Write the mesh to ``path`` (default: ``pennant.msh`` beside this script)."""
    import gmsh

    path = Path(__file__).with_name("pennant.msh") if path is None else Path(path)
    (length, side), (start, tip), (flag, drop) = GRIP, ROD, PENNANT
    gmsh.initialize(["-noenv"])
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("pennant")
        occ = gmsh.model.occ
        grip = occ.addBox(0.0, -side / 2, -side / 2, length, side, side)
        a, b, c, d = (occ.addPoint(x, 0.0, 0.0) for x in (start, length, flag, tip))
        e, f = occ.addPoint(tip, 0.0, -drop), occ.addPoint(flag, 0.0, -drop)
        inside, between, top = occ.addLine(a, b), occ.addLine(b, c), occ.addLine(c, d)
        loop = occ.addCurveLoop([top, occ.addLine(d, e), occ.addLine(e, f), occ.addLine(f, c)])
        pennant = occ.addPlaneSurface([loop])
        occ.synchronize()
        faces = [t for _, t in gmsh.model.getBoundary([(3, grip)], oriented=False)]
        end = [t for t in faces if abs(occ.getCenterOfMass(2, t)[0] - length) < 1e-9]
        clamp = [t for t in faces if abs(occ.getCenterOfMass(2, t)[0]) < 1e-9]
        gmsh.model.mesh.embed(1, [inside], 3, grip)
        gmsh.model.mesh.embed(0, [b], 2, end[0])
        gmsh.model.mesh.setRecombine(2, pennant)
        gmsh.option.setNumber("Mesh.MeshSizeMax", SIZE)
        gmsh.model.addPhysicalGroup(3, [grip], name="grip")
        gmsh.model.addPhysicalGroup(1, [inside, between, top], name="rod")
        gmsh.model.addPhysicalGroup(2, [pennant], name="pennant")
        gmsh.model.addPhysicalGroup(2, clamp, name="clamp")
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
