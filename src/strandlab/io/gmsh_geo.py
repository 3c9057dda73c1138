"""Gmsh geometry scripts (``.geo``) as labelled meshes: Gmsh meshes the script as ``gmsh
model.geo -3`` would (to the model's highest dimension, with the script's own mesh options)
and the mesh is read as a ``.msh`` file, its physical groups the parts
(:mod:`strandlab.io.simplicial`).  So the file a user authors in Gmsh is the scene file's
mesh, and a change to it is meshed again at the next run.

Gmsh runs in a process of its own for each script (its parser keeps state within a
process: after a script with a syntax error, the next one failed to parse too).  A script that
Gmsh refuses (a syntax error, a geometry it cannot mesh) raises a ValueError naming the file
and Gmsh's own error.  Gmsh numbers the mesh's vertices itself; a scene file
names groups, parts or boxes to hold, not vertex numbers.  A script is meshed again when its
text changes or when a file it names with a literal string (``Include``, ``Merge``,
``ShapeFromFile``: other scripts, STEP or BREP shapes, meshes) changes.  Needs the ``mesh``
extra (gmsh, meshio)."""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from ..extras import require
from .gmsh_checks import section_text

__all__ = ["GEO_SUFFIX", "mesh_geo"]

GEO_SUFFIX = ".geo"
#: The last script meshed: its key (:func:`_key`) -> the ``.msh`` text Gmsh wrote (a scene
#: file's mesh is read more than once: its groups, its parts).
_LAST: dict = {}
#: A file a script reads, named by a literal string: ``Include "a.geo";``, ``Merge "b.step";``,
#: ``ShapeFromFile("c.brep")``.  A name built by an expression (``StrCat``) is not seen.
_READS = re.compile(r'\b(?:Include|Merge)\s*"([^"]+)"|\bShapeFromFile\s*\(\s*"([^"]+)"')


def mesh_geo(path, folder) -> Path:
    """Mesh the Gmsh script ``path`` and write the mesh, as Gmsh's ``.msh``, into ``folder``;
    returns the written file's path."""
    p = Path(path)
    key = _key(p)
    if key not in _LAST:
        _LAST.clear()
        _LAST[key] = _meshed(p)
    out = Path(folder) / (p.stem + ".msh")
    out.write_text(_LAST[key])
    return out


def _key(p: Path) -> tuple:
    """What Gmsh's mesh of the script ``p`` depends on: the script's path and text, and the
    path and bytes (None where missing) of each file it or a script it includes reads, named
    relative to the file that names it, as Gmsh resolves them."""
    script = p.resolve()
    key, todo, seen = [], [script], set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        data = f.read_bytes() if f.is_file() else None
        key.append((str(f), data))
        if data is not None and (f == script or f.suffix.lower() == GEO_SUFFIX):
            for m in _READS.finditer(data.decode("utf-8", "replace")):
                todo.append((f.parent / (m.group(1) or m.group(2))).resolve())
    return tuple(key)


#: What the Gmsh process runs: open the script (argv 1), mesh it to its highest dimension,
#: write the mesh (argv 2); Gmsh's errors on stderr, exit status 1.
_MESH = """
import sys
import gmsh
gmsh.initialize(["-noenv"], interruptible=False)
gmsh.option.setNumber("General.Terminal", 0)
gmsh.logger.start()
try:
    gmsh.open(sys.argv[1])
    gmsh.model.mesh.generate(gmsh.model.getDimension())
    gmsh.write(sys.argv[2])
except Exception as exc:
    said = [m for m in gmsh.logger.get() if m.startswith("Error")]
    sys.stderr.write("; ".join(said) if said else str(exc))
    sys.exit(1)
"""


def _meshed(p: Path) -> str:
    """The ``.msh`` text of Gmsh's mesh of the script ``p``.  Gmsh runs in a process of its
    own: its script parser keeps state across scripts in one process (after a script with a
    syntax error, the next one fails to parse too), and the caller's own Gmsh session, if it
    has one, is left as it is."""
    require("gmsh", "Meshing a Gmsh .geo script", "gmsh", "mesh")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "mesh.msh"
        done = subprocess.run([sys.executable, "-c", _MESH, str(p.resolve()), str(out)],
                              capture_output=True, text=True)
        if done.returncode != 0 or not out.is_file():
            said = done.stderr.strip().splitlines()
            raise ValueError(f"{p}: Gmsh cannot mesh the script ("
                             f"{said[-1] if said else f'exit status {done.returncode}'})")
        text = out.read_text()
    if _elements(text) == 0:
        raise ValueError(f"{p}: Gmsh made no mesh of the script (no elements: it defines no "
                         "geometry, or none that Gmsh meshes)")
    return text


def _elements(text: str):
    """How many elements the ``$Elements`` section of the ``.msh`` text announces (its first
    line: the count alone in format 2, the second of four numbers in format 4); 0 where it has
    no such section, None where the count cannot be read (a binary file)."""
    got = section_text(text.encode("latin-1", "replace"), "Elements")
    if got is None:
        return 0
    words = got[0].split("\n", 1)[0].split()
    try:                              # format 4: blocks, elements, smallest and largest tag
        return int(words[1] if len(words) == 4 else words[0])
    except (ValueError, IndexError):
        return None
