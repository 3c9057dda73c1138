"""Gmsh geometry scripts (``.geo``) as labelled meshes: Gmsh meshes the script as ``gmsh
model.geo -3`` would (to the model's highest dimension, with the script's own mesh options)
and the mesh is read as a ``.msh`` file, its physical groups the parts
(:mod:`strandlab.io.simplicial`).  So the file a user authors in Gmsh is the scene file's
mesh, and a change to it is meshed again at the next run.

A script that Gmsh refuses (a syntax error, a geometry it cannot mesh) raises a ValueError
naming the file and Gmsh's own error.  Gmsh numbers the mesh's vertices itself; a scene file
names groups, parts or boxes to hold, not vertex numbers.  Needs the ``mesh`` extra (gmsh,
meshio)."""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..extras import require

__all__ = ["GEO_SUFFIX", "mesh_geo"]

GEO_SUFFIX = ".geo"
#: The last script meshed: (path, the script's text) -> the ``.msh`` text Gmsh wrote (a scene
#: file's mesh is read more than once: its groups, its parts).  Files the script merges or
#: includes are not part of the key: edit the script, or run in a new process, after changing
#: one of them.
_LAST: dict = {}


def mesh_geo(path, folder) -> Path:
    """Mesh the Gmsh script ``path`` and write the mesh, as Gmsh's ``.msh``, into ``folder``;
    returns the written file's path."""
    p = Path(path)
    key = (str(p.resolve()), p.read_bytes())
    if key not in _LAST:
        _LAST.clear()
        _LAST[key] = _meshed(p)
    out = Path(folder) / (p.stem + ".msh")
    out.write_text(_LAST[key])
    return out


def _meshed(p: Path) -> str:
    """The ``.msh`` text of Gmsh's mesh of the script ``p``."""
    gmsh = require("gmsh", "Meshing a Gmsh .geo script", "gmsh", "mesh")
    started = gmsh.isInitialized()
    if not started:
        gmsh.initialize(["-noenv"], interruptible=False)
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.logger.start()
    try:
        with tempfile.TemporaryDirectory() as d:
            gmsh.open(str(p))
            gmsh.model.mesh.generate(gmsh.model.getDimension())
            out = Path(d) / "mesh.msh"
            gmsh.write(str(out))
            return out.read_text()
    except Exception as exc:
        said = [m for m in gmsh.logger.get() if m.startswith("Error")]
        raise ValueError(f"{p}: Gmsh cannot mesh the script ("
                         f"{'; '.join(said) if said else exc})") from None
    finally:
        gmsh.logger.stop()
        if started:
            gmsh.clear()
        else:
            gmsh.finalize()
