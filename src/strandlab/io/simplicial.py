"""Labelled simplicial meshes in Gmsh (``.msh``) and VTK (``.vtu``) files, through meshio.

A file holds the vertices and cells of one conforming mesh: ``line`` cells are rod edges,
``triangle`` cells shell triangles, ``tetra`` cells solid tetrahedra.  Each cell carries an
integer *part tag*: in Gmsh files its physical group (``gmsh:physical``, whose name, from the
file's ``$PhysicalNames``, is the part's name), in VTK files the cell array ``part`` (with the
part names in the field data, as :func:`write_simplicial` writes them).  Materials are given
by part name or tag when reading (files know no materials), so a user authors the mesh in Gmsh,
or exports it from Blender, names the parts, and assigns the materials in a scene file or in
Python.

Wavefront ``.obj`` files (as Blender, Houdini and most modelling tools export them) are read too
(:mod:`.obj_parts`): each object (``o``) or group (``g``) is a part, named as in the tool; its
material says what it is: a rod part's lines (``l``, Blender's loose edges), a shell part's
faces (``f``, polygons cut into triangles), or a solid part's closed surface of faces, which
Gmsh fills with tetrahedra keeping the surface's vertices
(:func:`strandlab.geometry.tetmesh.surface_tets`). So are USD stages (:mod:`.usd_parts`: a part
per ``Mesh``, linear ``BasisCurves`` or ``TetMesh`` prim, with the stage's transforms, units and
up axis; a ``TetMesh`` no material names fills the solid part whose surface its pieces bound,
:mod:`.tet_fill`) and Alembic archives (:mod:`.abc_parts`: a part per ``PolyMesh`` or linear
``Curves`` object), whose parts are named by their paths or by one name on them
(:func:`~.mesh_parts.name_parts`); in these a material may also name a mesh's face subset (a USD
``GeomSubset``, an Alembic face set: Blender writes one per material slot, named after the
material), whose faces then make a part of their own. Tools write each object's vertices apart:
vertices within ``weld`` of each other become one, so that parts modelled touching share their
vertices, as the connections need.

``meshio`` and ``gmsh`` are optional dependencies (``pip install strandlab[mesh]``), imported when
a file is read or written, or a solid is filled.
"""
from __future__ import annotations

import contextlib
import io
import tempfile
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..extras import require
from ..geometry.tetmesh import surface_tets, tet_quality, weld_vertices
from ..sim.material import Material
from ..sim.simplicial import (
    KINDS,
    Connection,
    Part,
    ShellMaterial,
    SimplicialSpec,
    SolidMaterial,
)
from .abc_parts import read_abc_parts
from .atomic import atomic_path, check_writable_folder
from .gmsh_checks import DIM_WORD as _DIM_WORD
from .gmsh_checks import check_physical_names, gmsh_problem
from .gmsh_geo import GEO_SUFFIX, mesh_geo
from .mesh_checks import (
    check_cell_points,
    check_finite_points,
    given_names,
    integer_tags,
    unknown_names,
)
from .mesh_info import near_misses
from .mesh_parts import name_parts, unnamed_keys
from .obj_parts import read_obj_parts
from .tet_fill import TetFills, off_surface
from .usd_parts import USD_SUFFIXES, read_usd_parts
from .vtu_series import add_field_data

__all__ = ["read_simplicial", "write_simplicial", "file_cells", "file_subsets",
           "file_contents", "file_groups",
           "SIMPLICIAL_SUFFIXES"]

SIMPLICIAL_SUFFIXES = (".msh", ".vtu")
#: Files of a modelling tool: parts without simplex kinds, which the materials give.
TOOL_SUFFIXES = (".obj", ".abc") + USD_SUFFIXES
_CELL_KIND = {"line": "rod", "triangle": "shell", "tetra": "solid"}
#: Dimensions of meshio's cell types (their names without the order's digits: ``quad9``).
_CELL_DIM = {"vertex": 0, "line": 1, "triangle": 2, "quad": 2, "polygon": 2, "tetra": 3,
             "hexahedron": 3, "wedge": 3, "pyramid": 3}
_KIND_CELL = {v: k for k, v in _CELL_KIND.items()}
_CELL_WORD = {"line": "line", "triangle": "triangle", "tetra": "tetrahedron"}
_DIM = {"rod": 1, "shell": 2, "solid": 3}
_OBJ_KIND = {Material: "rod", ShellMaterial: "shell", SolidMaterial: "solid"}
#: A tool part's element lists (:class:`~.mesh_parts.MeshPart`), one word for each.
_WANT = ("edges", "triangles", "tets")
_WORD = {"edges": "edge", "triangles": "face", "tets": "tetrahedron"}
_TETS = "tetrahedra (a TetMesh prim)"
#: What a rod part and a shell or solid part of an OBJ file, a USD stage or an Alembic archive
#: take.
_ELEMENTS = {".obj": ("lines (l)", "faces (f)"),
             ".usd": ("linear curves (a BasisCurves prim)", "faces (a Mesh prim)"),
             ".abc": ("linear curves (a Curves object)", "faces (a PolyMesh object)")}
#: A tetrahedron of a solid filled from a tool's surface (OBJ, USD, Alembic) whose shape quality
#: (:func:`~strandlab.geometry.tetmesh.tet_quality`, 1 for a regular one) is below this is a
#: sliver, warned.
SLIVER = 0.01


def _meshio():
    return require("meshio", "Reading and writing mesh files", "meshio", "mesh")


def _read_mesh(p: Path, shown: Path | None = None):
    """``meshio.read(p)``, its failures as a ValueError naming the file (``shown``, where
    given, in its place: the script a Gmsh mesh was made of).  meshio prints why each
    format it tried failed and then calls ``sys.exit(1)`` (meshio 5.3: a file that is none of
    the formats its suffix allows); both are caught here, so that a bad file neither ends the
    caller's process nor writes to its terminal; a Gmsh file's failure is said in words where
    :func:`~.gmsh_checks.gmsh_problem` finds why.  What meshio prints on a successful read is
    passed on as a warning.  A Gmsh script (``.geo``) is meshed by Gmsh first
    (:mod:`.gmsh_geo`).  Refused besides (:mod:`.mesh_checks`): a point that is not finite,
    used by a cell or not; a cell naming a point the file lacks; a Gmsh file's name given to
    two groups, or its two names of one."""
    if p.suffix.lower() == GEO_SUFFIX:
        with tempfile.TemporaryDirectory() as folder:
            return _read_mesh(mesh_geo(p, folder), p)
    name = p if shown is None else shown
    data = _gmsh_bytes(p, name) if p.suffix.lower() == ".msh" else None
    meshio = _meshio()
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            mesh = meshio.read(p)
    except (Exception, SystemExit) as exc:
        text = " ".join(said.getvalue().split())
        why = text if isinstance(exc, SystemExit) else f"{type(exc).__name__}: {exc}"
        raise ValueError(f"{name}: cannot read the mesh ({_why_not(data, why)})") from None
    text = " ".join(said.getvalue().split())
    if text:
        warnings.warn(f"{name}: meshio: {text}", stacklevel=3)
    check_cell_points(mesh.cells, len(mesh.points), name, data)
    check_finite_points(_points(mesh), name, data)
    return mesh


def _gmsh_bytes(p: Path, name) -> bytes:
    """The bytes of the Gmsh file ``p`` (``name`` in messages), its ``$PhysicalNames``
    checked (:func:`~.gmsh_checks.check_physical_names`)."""
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"{name}: cannot read the mesh ({exc.strerror or exc})") from None
    check_physical_names(data, name)
    return data


def _why_not(data: bytes | None, why: str) -> str:
    """Why meshio could not read a file: for a Gmsh file (``data``, its bytes) what is wrong
    with it where that is found, else meshio's own reason ``why``."""
    found = gmsh_problem(data) if data is not None else None
    if found:
        return found
    if data is not None and data.lstrip().startswith(b"$MeshFormat"):
        return f"not a Gmsh file meshio reads: {why or 'meshio gave no reason'}"
    return why or "meshio gave no reason"


def _tags(mesh, k: int, path: Path) -> np.ndarray:
    for key in ("gmsh:physical", "part", "CellEntityIds", "medit:ref"):
        if key in mesh.cell_data:
            return integer_tags(mesh.cell_data[key][k], path, k, mesh.cells[k].type)
    raise ValueError(f"{path}: the cells carry no part tags (Gmsh physical groups or a "
                     "'part' cell array)")


def _names(mesh, p: Path) -> dict:
    """(tag, dimension) -> group name, for every tag of the cell blocks of a meshio mesh: the
    file's name for it (Gmsh's ``$PhysicalNames``, numbered per dimension: a physical surface 1
    and a physical volume 1 are two groups; a name given without dimension names the tag in
    every dimension), or for a group without one its tag (``"7"``), and where groups of two
    dimensions share a tag without names, Gmsh's word for the dimension with it (``"surface
    7"``, ``"volume 7"``)."""
    used = set()
    for k, block in enumerate(mesh.cells):
        used |= {(int(t), _cell_dim(block.type)) for t in np.unique(_tags(mesh, k, p))}
    given = given_names(mesh.field_data, used, p)
    unnamed = [t for t, d in used if (t, d) not in given and (t, None) not in given]
    out = {}
    for t, d in used:
        name = given.get((t, d), given.get((t, None)))
        if name is None:
            name = f"{_DIM_WORD.get(d, 'group')} {t}" if unnamed.count(t) > 1 else str(t)
        out[t, d] = name
    return out


def _cell_dim(cell_type: str):
    """The dimension of meshio's ``cell_type`` (``quad9`` as ``quad``), or None."""
    return _CELL_DIM.get(cell_type.rstrip("0123456789"))


def _group_name(names: dict, tag: int, cell_type: str) -> str:
    """The name of the group ``tag`` of cells of ``cell_type`` (:func:`_names`)."""
    return names[tag, _cell_dim(cell_type)]


def read_simplicial(path, *, materials: Mapping, connections=(), holds=(),
                    name: str | None = None, scale: float | None = None,
                    up: str | None = None, weld: float = 1e-6,
                    groups=()) -> SimplicialSpec:
    """Read a labelled mesh (see the module docstring).

    materials : part name (or integer tag) -> material (:class:`~strandlab.sim.material.Material`
        for rod parts, :class:`~strandlab.sim.simplicial.ShellMaterial`,
        :class:`~strandlab.sim.simplicial.SolidMaterial`); every tag used by a cell needs one.
        In an OBJ, USD or Alembic file the material also says what a part is: a rod's lines,
        a shell's faces, or a solid's closed surface of faces, filled with tetrahedra (or a
        USD ``TetMesh``'s tetrahedra, as they are); a USD
        or Alembic part is named by its path or one name on it
        (:func:`~.mesh_parts.name_parts`).
    connections, holds : as :class:`~strandlab.sim.simplicial.SimplicialSpec`; a connection's
        parts may be given by name (parts are numbered rods, then shells, then solids, each by
        increasing tag, an OBJ, USD or Alembic file's by order of appearance;
        :meth:`SimplicialSpec.part_index` finds one by name); a hold's vertices are indices in
        the file's order of vertices (a USD or Alembic file's: each part's points in turn).
    scale : metres per file unit (0.01 for a file in centimetres); default: a USD stage's
        ``metersPerUnit``, else 1.
    up : ``"z"`` (the file's coordinates are strandlab's) or ``"y"`` (a y-up file, as Blender's
        OBJ exporter writes by default: ``(x, y, z)`` is read as ``(x, -z, y)``); default: a
        USD stage's ``upAxis``, ``"y"`` for Alembic (its convention), else ``"z"``.
    weld : OBJ, USD and Alembic files only: vertices within this distance [file units] become one
        (modelling tools write each object's vertices apart, so a rod drawn along a cloth's
        edge has vertices of its own there; OBJ writers print 6 decimals).
    groups : Gmsh and VTU files only: names (or tags) of the file's groups that are no parts,
        only sets of vertices (a Gmsh physical surface on a solid's face, to hold it): their
        cells are left out of the mesh (:func:`file_groups` gives their vertices).

    Errors name the file and the offending cell: an unreadable file, a tag without material,
    a cell whose material does not fit its simplex (a triangle labelled with a rod material).
    """
    if not isinstance(materials, Mapping):
        raise TypeError(f"materials must map part names to materials, got "
                        f"{type(materials).__name__}")
    p = _mesh_file(path, up, scale)
    if p.suffix.lower() in TOOL_SUFFIXES:
        src = _welded_parts(p, weld, materials)
        x, cells, file_index = _part_cells(p, src, materials, weld)
    else:
        src = None
        x, cells = _meshio_cells(p, _read_mesh(p), materials, groups)
        file_index = np.arange(len(x))
    return _spec(p, _placed(x, up, scale, src), cells, file_index, connections, holds, name)


def _mesh_file(path, up, scale) -> Path:
    """``path`` as a Path, after checking that it is a file and that ``up`` and ``scale``,
    where given, are valid (before any reading)."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a directory, not a mesh file")
    if not p.is_file():
        raise FileNotFoundError(f"no mesh file {p}")
    if scale is not None and not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    if up not in (None, "z", "y"):
        raise ValueError(f"up must be 'z' or 'y', got {up!r}")
    return p


def _placed(x: np.ndarray, up, scale, src) -> np.ndarray:
    """File coordinates in strandlab's: y-up turned to z-up, ``(x, y, z) -> (x, -z, y)``,
    then scaled to metres; ``up`` and ``scale`` default to the file's (``src``: a USD
    stage's metadata, Alembic's convention) or z and 1."""
    up = (src.up if src else "z") if up is None else up
    scale = (src.scale if src else 1.0) if scale is None else scale
    if up == "y":
        x = np.c_[x[:, 0], -x[:, 2], x[:, 1]]
    return x * scale


def file_cells(path, *, up: str | None = None, weld: float = 1e-6,
               scale: float | None = None):
    """A mesh file's cells by part name, without materials (what :func:`read_simplicial`
    reads, before the materials say what each part is; :mod:`.mesh_info` describes it):
    returns the vertices as written [N, 3], the vertices in metres in strandlab's axes [V, 3]
    (an OBJ, USD or Alembic file's welded) and ``{part name: (lines [E, 2], triangles [F, 3],
    tetrahedra [K, 4])}`` over them, in the file's order of parts (a USD or Alembic part named
    by its path; such a file's solid surface is not filled here: its tetrahedra are a USD
    ``TetMesh``'s)."""
    return file_contents(path, up=up, weld=weld, scale=scale)[:3]


def file_subsets(path, *, weld: float = 1e-6) -> dict:
    """The face subsets of a USD or Alembic file (:class:`~.mesh_parts.FaceSubset`, parts of
    their own when a material names them) as ``{subset path: (its mesh's path, triangles
    [F, 3])}`` (a USD ``TetMesh``'s subsets: tetrahedra [K, 4]), over the vertices
    :func:`file_cells` returns (welded within ``weld``); empty for other files."""
    p = Path(path)
    if p.suffix.lower() not in TOOL_SUFFIXES or p.suffix.lower() == ".obj":
        return {}
    return _subsets(_welded_parts(p, weld))


def file_contents(path, *, up: str | None = None, weld: float = 1e-6,
                  scale: float | None = None):
    """What :func:`file_cells` returns, and :func:`file_subsets`' dict, the file read once."""
    p = _mesh_file(path, up, scale)
    cells = {}
    if p.suffix.lower() in TOOL_SUFFIXES:
        src = _welded_parts(p, weld)
        for key, part in src.parts.items():
            cells[key] = tuple(src.index[np.asarray(getattr(part, w), dtype=np.int64)
                                         .reshape(-1, n)] for w, n in zip(_WANT, (2, 3, 4)))
        return src.x_file, _placed(src.x, up, scale, src), cells, _subsets(src)
    mesh = _read_mesh(p)
    for _, key, cell_type, sel, _ in _tagged_cells(p, mesh):
        got = cells.setdefault(str(key), [np.zeros((0, 2), np.int64),
                                          np.zeros((0, 3), np.int64),
                                          np.zeros((0, 4), np.int64)])
        j = KINDS.index(_CELL_KIND[cell_type])
        got[j] = np.concatenate([got[j], sel])
    x_file = _points(mesh)
    return x_file, _placed(x_file, up, scale, None), {k: tuple(v) for k, v in cells.items()}, {}


def file_groups(path, *, up: str | None = None, scale: float | None = None):
    """The groups of a Gmsh or VTU file as sets of vertices: every physical group (Gmsh) or
    ``part`` tag (VTU), of points, lines, triangles or tetrahedra, whether or not a material
    makes it a part.  Returns the file's points in metres in strandlab's axes [N, 3] and ``{group
    name (the tag where it has none): the file indices of its cells' vertices, sorted}``; for
    other files (OBJ, USD, Alembic: no such groups) ``(None, {})``.  A hold's vertices are
    given to :func:`read_simplicial` in the file's numbering, so a group is held as::

        x, groups = file_groups("block.msh")
        spec = read_simplicial("block.msh", materials={"block": SolidMaterial(2e4, 0.3, 1e3)},
                               groups=["clamp"], holds=[MeshHold(tuple(groups["clamp"]))])
    """
    p = _mesh_file(path, up, scale)
    if p.suffix.lower() in TOOL_SUFFIXES:
        return None, {}
    mesh = _read_mesh(p)
    names, out = _names(mesh, p), {}
    for k, block in enumerate(mesh.cells):
        if block.type not in _CELL_KIND and block.type not in ("vertex", "quad"):
            continue
        tags = _tags(mesh, k, p)
        data = np.asarray(block.data, dtype=np.int64).reshape(len(tags), -1)
        for tag in np.unique(tags):
            key = _group_name(names, int(tag), block.type)
            out[key] = np.union1d(out.get(key, np.zeros(0, np.int64)), data[tags == tag])
    return _placed(_points(mesh), up, scale, None), out


def _subsets(src) -> dict:
    """:func:`file_subsets`' dict of the welded parts ``src``."""
    out = {}
    for path_, sub in src.subsets.items():
        part = src.parts[sub.mesh]
        if sub.element == "tetrahedron":
            cells = np.asarray(part.tets, dtype=np.int64).reshape(-1, 4)[sub.faces]
        else:
            take = np.isin(np.asarray(part.triangle_face, dtype=np.int64), sub.faces)
            cells = np.asarray(part.triangles, dtype=np.int64).reshape(-1, 3)[take]
        out[path_] = (sub.mesh, src.index[cells])
    return out


def _tagged_cells(p: Path, mesh):
    """Per part tag and cell type of a meshio mesh: (tag, part name (the tag without one),
    cell type, its cells of that tag [n, k], the first of them as the file counts it, e.g.
    ``"triangle 4"``), in the order of their first cells.  A Gmsh file has a block of cells per
    geometric entity: a physical group of several curves or surfaces is one part.
    Quadrilaterals (Gmsh's recombined surfaces) are cut into two triangles each, along their
    shorter diagonal; cells of other types (points aside) are refused, naming their type and
    group."""
    names, got, seen = _names(mesh, p), {}, {}
    x = _points(mesh)
    for k, block in enumerate(mesh.cells):
        if block.type == "vertex":
            continue
        tags = _tags(mesh, k, p)
        if block.type not in _CELL_KIND and block.type != "quad":
            _refuse_cells(p, block.type, _group_name(names, int(tags[0]), block.type))
        data = np.asarray(block.data, dtype=np.int64)
        base = seen.get(block.type, 0)
        for tag in np.unique(tags):
            mine = tags == tag
            cells = _quads_cut(x, data[mine]) if block.type == "quad" else data[mine]
            kind = "triangle" if block.type == "quad" else block.type
            word = "quadrilateral" if block.type == "quad" else _CELL_WORD[kind]
            entry = got.setdefault((int(tag), kind),
                                   ([], f"{word} {base + int(np.nonzero(mine)[0][0])}"))
            entry[0].append(cells)
        seen[block.type] = base + len(data)
    for (tag, cell_type), (blocks, first) in got.items():
        yield tag, _group_name(names, tag, cell_type), cell_type, np.concatenate(blocks), first


def _quads_cut(x: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Quadrilaterals [n, 4] as triangles [2n, 3] of the same orientation, each cut along its
    shorter diagonal (vertices ``x`` [N, 3])."""
    a, b, c, d = quads.T
    short = (np.linalg.norm(x[a] - x[c], axis=1) <= np.linalg.norm(x[b] - x[d], axis=1))
    first = np.where(short[:, None], np.c_[a, b, c], np.c_[a, b, d])
    second = np.where(short[:, None], np.c_[a, c, d], np.c_[b, c, d])
    return np.stack([first, second], axis=1).reshape(-1, 3)


def _refuse_cells(p: Path, cell_type: str, group) -> None:
    """Refuse cells of ``cell_type`` (of the group named ``group``): what they are, and how to
    mesh them as strandlab takes them."""
    if cell_type in ("hexahedron", "wedge", "pyramid"):
        how = "mesh solids with tetrahedra (in Gmsh: no recombination of volumes)"
    elif cell_type.rstrip("0123456789") != cell_type:
        how = "second-order elements are not taken: mesh with first-order ones (in Gmsh: " \
              "Mesh.ElementOrder = 1)"
    else:
        how = "cells of this type are not taken"
    raise ValueError(f"{p}: group {str(group)!r} has {cell_type} cells: {how}; strandlab takes "
                     "lines (rods), triangles or quadrilaterals (shells) and tetrahedra "
                     "(solids)")


def _points(mesh) -> np.ndarray:
    """A meshio mesh's points [N, 3] (2D points at z = 0)."""
    x = np.asarray(mesh.points, dtype=np.float64)
    return np.c_[x, np.zeros(len(x))] if x.shape[1] == 2 else x


def _stray(materials: Mapping, known) -> str:
    """``"; 'x' names no part ..."``, the keys of ``materials`` not in ``known`` (the file's
    part names, tags and named face subsets), for a part found without material; or ``""``."""
    stray = [k for k in materials if k not in known]
    if not stray:
        return ""
    return (f"; {', '.join(map(repr, stray))} name{'s' if len(stray) == 1 else ''} no part "
            "or face subset of the file")


def _meshio_cells(p: Path, mesh, materials: Mapping, groups=()):
    """The vertices [V, 3] of a meshio mesh and its cells by kind: (tag, part name, material,
    cells) each; the cells of ``groups`` (names or tags) left out."""
    cells = {"rod": [], "shell": [], "solid": []}
    skip = {str(g) for g in groups}
    tagged = list(_tagged_cells(p, mesh))
    count = Counter(tag for tag, *_ in tagged)
    for tag, key, cell_type, sel, first in tagged:
        if key in skip or (count[tag] == 1 and str(tag) in skip):
            continue
        mat = materials.get(key)
        if mat is None and count[tag] == 1:             # a tag one group has: by number too
            mat = materials.get(tag)
        if mat is None:
            known = {k for t, name, *_ in tagged for k in (t, name)}
            raise ValueError(f"{p}: {first} has part {key!r}, "
                             f"which has no material (give one in materials="
                             f"{_stray(materials, known)})")
        cells[_CELL_KIND[cell_type]].append((tag, str(key), mat, sel))
    known = {k for t, name, *_ in tagged for k in ((t, name) if count[t] == 1 else (name,))}
    stray = [k for k in materials if k not in known and str(k) not in skip
             and materials[k] is not None]
    if stray:
        points = [n for (t, d), n in _names(mesh, p).items() if d == 0 and n not in known]
        raise ValueError(unknown_names(p, stray, dict.fromkeys(n for _, n, *_ in tagged),
                                       points))
    return _points(mesh), cells


@dataclass(frozen=True)
class _ToolParts:
    """An OBJ, USD or Alembic file's vertices as written [N, 3] (``x_file``), its parts
    (:class:`~.mesh_parts.MeshPart` by name), its vertices welded [W, 3] (``x``), the row of
    each written vertex among them [N] (``index``) and the file's own up axis and metres per
    unit (a USD stage's metadata; Alembic's convention, y and 1; an OBJ file's, z and 1), and
    its face subsets (:class:`~.mesh_parts.FaceSubset` by path; none in an OBJ file), and the
    names it was given that name nothing in it (``unknown``)."""

    x_file: np.ndarray
    parts: dict
    x: np.ndarray
    index: np.ndarray
    up: str
    scale: float
    subsets: dict
    unknown: tuple = ()


def _welded_parts(p: Path, weld: float, names=()) -> _ToolParts:
    """The parts of an OBJ, USD or Alembic file, its vertices welded within ``weld``; a part
    named by ``names`` where one names it (:func:`~.mesh_parts.name_parts`); the ``names``
    that name nothing in the file, kept (``unknown``)."""
    if p.suffix.lower() == ".obj":
        x_file, parts = read_obj_parts(p)
        up, unit, subsets = "z", 1.0, {}
        unknown = [k for k in names if k not in parts]
    else:
        got = read_abc_parts(p) if p.suffix.lower() == ".abc" else read_usd_parts(p)
        x_file, up, unit, subsets = got.vertices, got.up, got.meters_per_unit, got.subsets
        parts = name_parts(got.parts, names, p, subsets)
        unknown = unnamed_keys(names, got.parts, subsets, got.others)
    if not (np.isfinite(weld) and weld >= 0):
        raise ValueError(f"weld must be a number >= 0, got {weld!r}")
    x, index = weld_vertices(x_file, weld)
    return _ToolParts(x_file, parts, x, index, up, unit, subsets,
                      tuple(k for k in unknown
                            if not isinstance(names, Mapping) or names[k] is not None))


def _part_cells(p: Path, src: _ToolParts, materials: Mapping, weld: float):
    """The welded vertices of an OBJ, USD or Alembic file (with the interior vertices of its
    solids after them), its cells by kind, and the row of each file vertex among them."""
    parts, x, index = src.parts, src.x, src.index
    welded = x
    elements = _ELEMENTS.get(p.suffix.lower(), _ELEMENTS[".usd"]) + (_TETS,)
    cells = {"rod": [], "shell": [], "solid": []}
    fills = TetFills()
    for key, part in parts.items():
        if part.tets and materials.get(key) is None:
            fills.add(key, index[np.asarray(part.tets, dtype=np.int64)])
    for tag, (key, part) in enumerate(parts.items(), start=1):
        mat = materials.get(key)
        if mat is None and part.tets:
            continue                    # tetrahedra for a solid's surface: fills, below
        if mat is None:
            raise ValueError(f"{p}, {part.at}: part {key!r} has no material (give one in "
                             f"materials={_stray(materials, parts)})")
        kind = next((k for cls, k in _OBJ_KIND.items() if isinstance(mat, cls)), None)
        if kind is None:
            raise ValueError(f"{p}: part {key!r}: {type(mat).__name__} is not a material of a "
                             "rod, shell or solid part")
        want = _WANT[0] if kind == "rod" else _WANT[2] if part.tets and kind == "solid" \
            else _WANT[1]
        has = next((k for k, w in enumerate(_WANT) if w != want and getattr(part, w)), None)
        if has is not None:
            at = getattr(part, _WANT[has][:-1] + "_at")[0]
            raise ValueError(f"{p}, {at}: part {key!r} is a {kind} part (its material "
                             f"a {type(mat).__name__}), which takes "
                             f"{elements[_WANT.index(want)]}, not {elements[has]}")
        if not getattr(part, want):
            raise ValueError(f"{p}: part {key!r} is a {kind} part and has no "
                             f"{elements[_WANT.index(want)]}")
        sel = index[np.asarray(getattr(part, want), dtype=np.int64)]
        same = (sel[:, :, None] == sel[:, None, :]).sum(axis=(1, 2)) > sel.shape[1]
        if same.any():
            k = int(np.nonzero(same)[0][0])
            at = getattr(part, want[:-1] + "_at")[k]
            raise ValueError(f"{p}, {at}: part {key!r}: two vertices of this "
                             f"{_WORD[want]} are within the welding "
                             f"distance {weld:g} of each other")
        off = off_surface(index[np.asarray(part.surface, dtype=np.int64)], sel) \
            if part.surface else ()
        if len(off):
            raise ValueError(f"{p}, {part.surface_at[off[0]]}: part {key!r}: this face, named "
                             "with the part's tetrahedra, is not on their surface (a face "
                             "subset shares a tetrahedron subset's name only as its solid's "
                             "boundary faces)")
        filled = fills.take(sel) if kind == "solid" and want == "triangles" else None
        if filled is not None:
            sel = filled
        elif kind == "solid" and want == "triangles":
            try:
                new, sel = surface_tets(x, sel)
            except ValueError as exc:
                raise ValueError(f"{p}: part {key!r}: {exc}") from None
            x = np.concatenate([x, new])
            q = tet_quality(x, sel)
            if q.min() < SLIVER:
                warnings.warn(f"{p}: part {key!r}: {np.count_nonzero(q < SLIVER)} of its "
                              f"{len(sel)} tetrahedra are slivers (shape quality below "
                              f"{SLIVER:g}, the thinnest {q.min():.2g}; 1 for a regular one), "
                              "from long thin triangles of its surface, as a polygon of many "
                              "vertices cut into a fan makes: give its large polygons a vertex "
                              "inside (Blender: Poke Faces, or a cylinder's caps filled as "
                              "triangle fans); slivers make the solve ill-conditioned",
                              stacklevel=3)
        cells[kind].append((tag, key, mat, sel))
    if src.unknown:
        raise ValueError(unknown_names(p, list(src.unknown), parts, subsets=src.subsets))
    unused = fills.unused()
    if unused:
        key = unused[0]
        raise ValueError(f"{p}, {parts[key].at}: part {key!r} has no material, and its "
                         "tetrahedra fill no solid part's surface of the file (give it one in "
                         f"materials={_stray(materials, parts)})")
    members = {key: index[np.asarray(part.edges + part.triangles + part.tets,
                                     dtype=np.int64).ravel()]
               for key, part in parts.items() if materials.get(key) is not None}
    for a, b, dist in near_misses(welded, members):
        warnings.warn(f"{p}: parts {a!r} and {b!r} come within {dist:.3g} (file units) of each "
                      f"other without sharing a vertex there: not joined (a larger weld, "
                      f"now {weld:g}, joins them)", stacklevel=3)
    return x, cells, index


def _spec(p: Path, x, cells, file_index, connections, holds, name) -> SimplicialSpec:
    """The spec of vertices ``x`` [m] and ``cells`` (by kind), holds given in the file's
    vertex numbering (``file_index``: each file vertex's row of ``x``)."""
    parts, arrays = [], {}
    for kind in KINDS:
        got = sorted(cells[kind], key=lambda c: c[0])
        idx, part = [], []
        for tag, key, mat, sel in got:
            try:
                parts.append(Part(key, kind, mat))
            except TypeError as exc:
                raise ValueError(f"{p}: {_CELL_WORD[_KIND_CELL[kind]]}s of part {key!r} (tag "
                                 f"{tag}): {exc}") from None
            idx.append(sel)
            part.append(np.full(len(sel), len(parts) - 1))
        cols = {"rod": 2, "shell": 3, "solid": 4}[kind]
        arrays[kind] = (np.concatenate(idx) if idx else np.zeros((0, cols), np.int64),
                        np.concatenate(part) if part else np.zeros(0, np.int64))
    used = np.unique(np.concatenate([arrays[k][0].ravel() for k in KINDS]))
    # drop points no simplex uses (geometry points of the file), renumbering the cells
    renum = np.full(len(x), -1, dtype=np.int64)
    renum[used] = np.arange(len(used))
    index = {pt.name: k for k, pt in enumerate(parts)}
    conns = []
    for j, c in enumerate(connections):
        if not isinstance(c, Connection):
            raise TypeError(f"{p}: connections[{j}] must be a Connection, got "
                            f"{type(c).__name__}")
        missing = [n for n in c.parts if isinstance(n, str) and n not in index]
        if missing:
            raise ValueError(f"{p}: connection names part {missing[0]!r}, which the file does "
                             f"not have; parts: {', '.join(index)}")
        conns.append(replace(c, parts=tuple(index[n] if isinstance(n, str) else n
                                            for n in c.parts)))
    return SimplicialSpec(name=name or p.stem, vertices=x[used], parts=tuple(parts),
                          rod_edges=renum[arrays["rod"][0]], rod_part=arrays["rod"][1],
                          triangles=renum[arrays["shell"][0]], triangle_part=arrays["shell"][1],
                          tets=renum[arrays["solid"][0]], tet_part=arrays["solid"][1],
                          connections=tuple(conns),
                          holds=tuple(_renumber(h, renum[file_index], p) for h in holds))


def _renumber(h, renum: np.ndarray, p: Path):
    """A hold of file vertex indices in the numbering of the vertices cells use."""
    v = np.asarray(h.vertices, dtype=np.int64)
    bad = v[(v < 0) | (v >= len(renum))]
    if not len(bad):
        bad = v[renum[v] < 0]
    if len(bad):
        raise ValueError(f"{p}: held vertex {int(bad[0])} is not a vertex of any cell")
    return replace(h, vertices=tuple(int(k) for k in renum[v]))


def write_simplicial(path, spec: SimplicialSpec, *, positions=None) -> Path:
    """Write ``spec`` (with ``positions`` [V, 3] [m] instead of its vertices if given) to a
    ``.msh`` (Gmsh 2.2 ASCII, which Gmsh and Blender importers read) or ``.vtu`` file,
    atomically; part tags are the part index + 1, named
    by the part names.  Returns the path."""
    p = check_writable_folder(path)
    if p.suffix.lower() not in SIMPLICIAL_SUFFIXES:
        raise ValueError(f"cannot write {p}: unknown mesh format {p.suffix!r} (use one of "
                         f"{', '.join(SIMPLICIAL_SUFFIXES)})")
    meshio = _meshio()
    x = spec.vertices if positions is None else np.asarray(positions, dtype=np.float64)
    if x.shape != spec.vertices.shape or not np.isfinite(x).all():
        raise ValueError(f"positions must be finite with shape {spec.vertices.shape}")
    blocks, tags = [], []
    for kind, cells, part in (("rod", spec.rod_edges, spec.rod_part),
                              ("shell", spec.triangles, spec.triangle_part),
                              ("solid", spec.tets, spec.tet_part)):
        if len(cells):
            blocks.append((_KIND_CELL[kind], np.asarray(cells, dtype=np.int64)))
            tags.append(np.asarray(part, dtype=np.int64) + 1)
    field = {pt.name: np.array([k + 1, _DIM[pt.kind]]) for k, pt in enumerate(spec.parts)}
    if p.suffix.lower() == ".msh":
        cell_data = {"gmsh:physical": tags, "gmsh:geometrical": tags}
    else:
        cell_data = {"part": tags}
    mesh = meshio.Mesh(x, blocks, cell_data=cell_data, field_data=field)
    with atomic_path(p) as tmp:
        if p.suffix.lower() == ".msh":
            meshio.write(tmp, mesh, file_format="gmsh22", binary=False)
        else:
            meshio.write(tmp, mesh, file_format="vtu")
            add_field_data(tmp, field)
    return p
