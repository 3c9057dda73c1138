"""``strandlab mesh FILE [--up y] [--weld W] [--scale S]``: describe a labelled mesh file (OBJ
USD or Alembic from a modelling tool, Gmsh ``.msh`` or ``.geo``, VTU) before writing its scene
file: its parts, what each can be, and which parts touch (docs/mixed.md, "From a modelling
tool").

Exit status: 0; 2 when the file cannot be read; 1 when a package that reads it is not
installed (the message names it).
"""
from __future__ import annotations

import sys
from pathlib import Path

from .io.mesh_parts import short_names

__all__ = ["add_parser", "run", "format_mesh_info"]

_PROG = "strandlab"


def add_parser(sub, positive_float) -> None:
    p = sub.add_parser("mesh", help="describe a labelled mesh file (.obj, .usd, .abc, .msh, "
                                    ".vtu, .geo): its parts, what each can be, which parts "
                                    "touch")
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--up", choices=("z", "y"), default=None, metavar="AXIS",
                   help="the file's up axis: z or y (Blender's default OBJ axes); default: a "
                        "USD file's upAxis, y for Alembic, else z")
    p.add_argument("--weld", type=float, default=1e-6, metavar="W",
                   help="OBJ, USD, Alembic: vertices closer than this [file units] become "
                        "one (default 1e-6)")
    p.add_argument("--scale", type=positive_float, default=None, metavar="S",
                   help="metres per file unit; default: a USD file's metersPerUnit, else 1")


def _can_be(part) -> str:
    if not part.kinds:
        return "nothing: lines and faces in one part (make them two objects)"
    words = []
    for k in part.kinds:
        if k == "solid" and part.closed and not part.tetrahedra:
            words.append(f"a solid (closed, {part.volume:.4g} m^3{_filled(part)})")
        elif k == "solid":
            words.append(f"a solid ({part.volume:.4g} m^3)"
                         + (f"; without a material, it fills {part.fill}" if part.fill else ""))
        else:
            words.append(f"a {k}")
    return ", or ".join(words)


def _solid_named(subsets, last, name):
    """The path of the one tetrahedron subset among the ``subsets`` whose own name (``last``)
    is ``name`` when the others of that name are face subsets (:func:`~strandlab.io.mesh_parts
    .name_parts` takes the name for that solid, its faces for its surface); else None."""
    group = [s for s, n in zip(subsets, last) if n == name]
    tets = [s.name for s in group if s.tetrahedra]
    return tets[0] if len(group) > 1 and len(tets) == 1 else None


def _filled(surface) -> str:
    """``"; filled with the tetrahedra of X"`` for a closed surface a tetrahedral part fills."""
    return f"; filled with the tetrahedra of {surface.fill}" if surface.fill else ""


def format_mesh_info(info) -> list[str]:
    """The lines ``strandlab mesh`` prints for a :class:`~strandlab.io.mesh_info.MeshInfo`."""
    welded = info.file_vertices - info.vertices
    lo = ", ".join(f"{v:.4g}" for v in info.lower)
    hi = ", ".join(f"{v:.4g}" for v in info.upper)
    out = [f"{info.path}: {info.vertices} vertices"
           + (f" ({info.file_vertices} in the file, {welded} welded)" if welded else "")
           + f"; extent [{lo}] to [{hi}] m"]
    width = max([4] + [len(p.name) for p in info.parts] + [len(n) for n, _ in info.points])
    # a USD or Alembic file's parts go by their paths, and by a name on them (column "name")
    short = short_names([p.name for p in info.parts if p.name.startswith("/")])
    col = max([0] + [len(n) + 2 for n in short.values()])
    out.append(f"{'part':<{width}}  " + (f"{'name':<{col}}" if col else "")
               + "lines  triangles  tetrahedra  vertices  can be")
    for p in info.parts:
        out.append(f"{p.name:<{width}}  " + (f"{short.get(p.name, ''):<{col}}" if col else "")
                   + f"{p.lines:5d}  {p.triangles:9d}  {p.tetrahedra:10d}  {p.vertices:8d}  "
                   f"{_can_be(p)}")
    for name, n in info.points:
        out.append(f"{name:<{width}}  " + " " * col + f"{0:5d}  {0:9d}  {0:10d}  {n:8d}  "
                   "held only (points)")
    if info.touching:
        out.append("touching parts:")
        for a, b, nv, ne in info.touching:
            what = (f"{nv} shared vert{'ex' if nv == 1 else 'ices'}"
                    + (f", {ne} shared edge{'s' if ne != 1 else ''}" if ne else ""))
            how = "a point or curve connection" if ne else "a point connection"
            out.append(f"  {a} - {b}: {what} ({how})")
    else:
        out.append("no parts touch (parts are joined only where they share vertices)")
    if info.groups:
        out.append("(a hold in a scene file may name a part no material is given: its cells "
                   "are then left out,\n its vertices held)")
    for a, b, dist in info.near:
        out.append(f"near miss: {a} - {b} come within {dist:.3g} m without sharing a vertex "
                   "there: not joined (a larger --weld joins them)")
    if info.subsets:
        tets = any(s.tetrahedra for s in info.subsets)
        out.append(("face and tetrahedron subsets" if tets else "face subsets")
                   + " (a material that names one, by its path or its name, makes its "
                   + ("elements" if tets else "faces") + " a part of their own):")
        wide = max(len(s.name) for s in info.subsets)
        last = [s.name.rsplit("/", 1)[-1] for s in info.subsets]
        for s, name in zip(info.subsets, last):
            solid = _solid_named(info.subsets, last, name)
            can = "can be " + (
                f"a shell, or a solid (closed, {s.volume:.4g} m^3{_filled(s)})" if s.closed
                else f"a solid ({s.volume:.4g} m^3)" if s.tetrahedra else "a shell")
            if solid is not None and not s.tetrahedra:
                can = f"named so, the surface of the solid {solid}"
            what = f"{s.tetrahedra} tetrahedra" if s.tetrahedra else f"{s.triangles} triangles"
            # its own name names it when no other subset has it (or names a solid and its
            # surface: one tetrahedron subset and face subsets)
            short = name if last.count(name) == 1 or solid is not None else s.name
            out.append(f"  {s.name:<{wide}}  {short}: {what} of {s.mesh}, {can}")
    return out


def run(args, out=sys.stdout) -> int:
    """The ``mesh`` command (module docstring)."""
    from .io.mesh_info import describe_mesh_file

    try:
        info = describe_mesh_file(args.file, up=args.up, weld=args.weld, scale=args.scale)
    except (OSError, ValueError) as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(format_mesh_info(info)), file=out)
    return 0
