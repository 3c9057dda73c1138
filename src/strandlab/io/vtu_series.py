"""A run as a VTU time series for ParaView (and the other VTK readers): one unstructured grid
per frame, ``frame_NNNNN.vtu``, and ``trajectory.pvd``, the collection that ParaView opens as
one dataset over time (each file at its frame's time, in seconds).

Each frame's grid holds, in metres in strandlab's z-up axes, every point of the frame: the
strands' vertices, then the extra points (meshes, simplicial meshes, the three points of each
kinematic frame and rigid body; :attr:`~strandlab.io.trajectory.TrajectoryBase.extra_points`).
Its cells, the same in every frame:

- the strands' edges and the rod edges of simplicial meshes as ``line`` cells (ParaView's
  *Tube* filter draws them with their radius, the point array ``radius``);
- shell triangles and deformable meshes' triangles as ``triangle`` cells;
- solids as their ``tetra`` cells (not their boundary faces: ParaView's *Extract Surface*
  finds those).

Cell arrays: ``part``, the index of the cell's part among the names the file's field data
gives (``name -> [index]``: ``strands``, each simplicial mesh's parts by the names the run
recorded, each deformable mesh by its name; one ``<mesh>`` part per simplicial mesh of a run
that did not record its parts), and ``kind``, 0 strand, 1 rod, 2 shell or mesh triangle,
3 solid.  Point array ``radius`` [m]: each strand vertex's radius, each rod vertex's (the
largest of its edges'), 0 elsewhere.

Every file is written under a temporary name and renamed when complete; the ``.pvd`` last, so
that it lists only files that exist.  An export that fails or is interrupted part way removes
the files it wrote (and the folder, if it created it).  Needs the ``mesh`` extra (meshio).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from ..extras import require
from ..sim.simplicial import boundary_faces
from .atomic import atomic_path
from .export import _edges, frame_folder, status_note
from .selection import extra_parts, select_frames
from .trajectory import TrajectoryBase

__all__ = ["write_vtu_series", "add_field_data", "PVD_NAME"]

#: The collection file's name, in the output folder.
PVD_NAME = "trajectory.pvd"
_KIND = {"strand": 0, "rod": 1, "shell": 2, "solid": 3}


@dataclass(frozen=True)
class _Grid:
    """The cells every frame has: meshio blocks ``(type, cells)``, per block the ``part`` and
    ``kind`` of its cells, the part names (index -> name) and the points' radius [m]."""

    blocks: list
    part: list
    kind: list
    names: list
    radius: np.ndarray


def write_vtu_series(traj: TrajectoryBase, out_dir, *, frames=None, progress=None) -> list:
    """Write the frames ``frames`` (``"A:B:S"``, default all) of ``traj`` as
    ``out_dir/frame_NNNNN.vtu`` (``NNNNN``: the trajectory's frame index) and
    ``out_dir/trajectory.pvd`` (see the module docstring); ``progress(k)`` after frame ``k``.
    Returns the paths written, the ``.pvd`` last."""
    meshio = require("meshio", "Writing VTU files", "meshio", "mesh")
    sel = select_frames(frames, traj.n_frames)
    out = Path(out_dir)
    grid = _grid(traj)
    field = {name: np.array([k]) for k, name in enumerate(grid.names)}
    with frame_folder(out) as written:
        for k in sel:
            written.append(_write_frame(meshio, traj, int(k), grid, field, out))
            if progress is not None:
                progress(int(k))
        written.append(_write_pvd(out / PVD_NAME, [(float(traj.times[k]), p.name)
                                                   for k, p in zip(sel, written)],
                                  status_note(traj.status)))
    return written


def _write_frame(meshio, traj: TrajectoryBase, k: int, grid: _Grid, field: dict,
                 out: Path) -> Path:
    """Write frame ``k`` of ``traj`` as ``out/frame_NNNNN.vtu``; returns its path."""
    points = np.concatenate([np.asarray(traj.positions[k], dtype=np.float64).reshape(-1, 3),
                             np.asarray(traj.extra_points[k], dtype=np.float64)
                             .reshape(-1, 3)])
    mesh = meshio.Mesh(points, grid.blocks, point_data={"radius": grid.radius},
                       cell_data={"part": grid.part, "kind": grid.kind})
    path = out / f"frame_{k:05d}.vtu"
    with atomic_path(path) as tmp:
        meshio.write(tmp, mesh, file_format="vtu")
        add_field_data(tmp, field)
    return path


def _grid(traj: TrajectoryBase) -> _Grid:
    """The cells, their parts and kinds, and the points' radius, of every frame of ``traj``."""
    off = np.asarray(traj.strand_offsets, dtype=np.int64)
    n_strand = int(off[-1])
    radius = np.zeros(n_strand + traj.n_extra)
    radius[:n_strand] = np.asarray(traj.vertex_radii, dtype=np.float64)
    blocks, part, kind, names = [], [], [], []

    def add(cell_type, cells, name, what):
        if len(cells):
            if name not in names:
                names.append(name)
            blocks.append((cell_type, np.asarray(cells, dtype=np.int64)))
            part.append(np.full(len(cells), names.index(name), dtype=np.int64))
            kind.append(np.full(len(cells), _KIND[what], dtype=np.int64))

    add("line", _edges(off, np.asarray(traj.closed, dtype=bool)), "strands", "strand")
    for p in extra_parts(traj):
        if p.kind != "mesh":
            continue
        base = n_strand + p.start
        np.maximum.at(radius, base + p.segments.ravel(), np.repeat(p.segment_radii, 2))
        rods = p.rods or {p.name: np.arange(len(p.segments))}
        for name, rows in rods.items():
            add("line", base + p.segments[rows], name, "rod")
        solids = p.tet_subsets or ({p.name: np.arange(len(p.tets))} if len(p.tets) else {})
        # a simplicial mesh's triangles are its shell triangles, then its solids' boundary
        # faces (Scene.extra_triangles), which are not written: the tetrahedra are
        shell = len(p.triangles) - len(boundary_faces(p.tets))
        shells = {n: r for n, r in p.subsets.items() if n not in solids} or \
            {p.name: np.arange(shell)}
        for name, rows in shells.items():
            add("triangle", base + p.triangles[rows], name, "shell")
        for name, rows in solids.items():
            add("tetra", base + p.tets[rows], name, "solid")
    return _Grid(blocks, part, kind, names, radius)


def add_field_data(path: Path, field: dict) -> None:
    """Add the integer arrays ``field`` (name -> values) to the VTU file ``path`` as its field
    data (meshio's VTU writer drops field data; its reader reads it back)."""
    arrays = "".join(f'<DataArray type="Int64" Name={quoteattr(n)} NumberOfTuples="{len(v)}" '
                     f'format="ascii">{" ".join(str(int(x)) for x in v)}</DataArray>\n'
                     for n, v in field.items())
    text = path.read_text()
    text = text.replace("<UnstructuredGrid>", f"<UnstructuredGrid>\n<FieldData>\n{arrays}"
                        "</FieldData>", 1)
    path.write_text(text)


def _write_pvd(path: Path, steps: list, note: str | None = None) -> Path:
    """The ParaView collection of ``steps`` (time [s], file name) at ``path``; ``note``: a
    comment after the declaration (a run that did not complete: :func:`status_note`)."""
    rows = "".join(f'    <DataSet timestep="{t!r}" part="0" file={quoteattr(name)}/>\n'
                   for t, name in steps)
    comment = "" if note is None else f"<!-- {note.replace('--', '- -')} -->\n"
    with atomic_path(path) as tmp:
        tmp.write_text('<?xml version="1.0"?>\n' + comment + '<VTKFile type="Collection" '
                       'version="0.1" byte_order="LittleEndian">\n  <Collection>\n' + rows
                       + "  </Collection>\n</VTKFile>\n")
    return path
