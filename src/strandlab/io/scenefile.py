"""Scene files: describe a scene in TOML or JSON and build a runnable :class:`Scene`.

The format is documented in ``docs/scene-format.md``; ``examples/*.toml`` are complete files.
Every value is checked before anything is built, and every error names the file and the path of
the offending item, e.g. ``rope.toml: strands[1].line.segments must be an integer >= 1``.

Example
-------
>>> from strandlab.io.scenefile import scene_from_dict
>>> scene = scene_from_dict({
...     "materials": {"rope": {"young_modulus": 5e7, "density": 1100.0, "radius": 0.004}},
...     "strands": [{"material": "rope", "line": {"start": [0, 0, 1], "end": [1, 0, 1],
...                                               "segments": 10}}],
... })
>>> scene.model.n_edges
10
"""
from __future__ import annotations

import copy
import json
import math
import sys
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import numpy as np

from ..pbd.solver import PBDSettings
from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Scene
from ..sim.shapes import box_mesh, circle, helix, line

__all__ = ["load_scene_file", "scene_from_dict", "SECTIONS"]

#: Top-level sections of a scene file, in the order they are processed.
SECTIONS = ("scene", "solver", "materials", "strands", "frames", "meshes",
            "triangle_attachments", "bodies", "colliders")

_SCENE_KEYS = ("name", "description", "dt", "frames", "steps_per_frame", "gravity", "view")
_MATERIAL_KEYS = ("young_modulus", "density", "radius", "shear_modulus", "poisson_ratio",
                  "width", "thickness")
_SHAPES = ("points", "line", "helix", "circle")
_STRAND_KEYS = ("name", "material", *_SHAPES, "closed", "rest_points", "ghost_direction",
                "ghost_distance", "alpha", "ghost_mass_ratio", "velocity", "initial_twist",
                "fixed")
_FRAME_KEYS = ("origin", "rotation", "rotvec", "linear_velocity", "angular_velocity", "start",
               "stop", "attach")
_MESH_KEYS = ("name", "box", "vertices", "triangles", "mass", "compliance", "collide_radius",
              "velocity", "fixed")
_BODY_KEYS = ("position", "rotation", "rotvec", "mass", "size", "attach")
_COLLIDER_KEYS = {"plane": ("type", "point", "normal", "friction"),
                  "sphere": ("type", "center", "radius", "friction"),
                  "capsule": ("type", "a", "b", "radius", "friction")}
_BUILDER_ERRORS = (ValueError, IndexError, TypeError)


# ---------------------------------------------------------------------------------- reading
def load_scene_file(path) -> Scene:
    """Read a scene file (``.toml`` or ``.json``) and build its :class:`Scene`.

    The scene name defaults to the file's stem.  Raises :class:`FileNotFoundError` for a
    missing file and :class:`ValueError` (naming the file) for an unsupported suffix, an
    unreadable file, a syntax error or any invalid item.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise ValueError(f"{p}: unsupported scene file type {p.suffix!r}; use .toml or .json")
    if not p.exists():
        raise FileNotFoundError(f"scene file {p} does not exist")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{p}: cannot read scene file ({exc})") from None
    data = _parse_toml(text, p) if suffix == ".toml" else _parse_json(text, p)
    return _build_scene(data, source=p.name, default_name=p.stem)


def _parse_toml(text: str, p: Path) -> dict:
    """Parse TOML text (``tomllib`` on Python 3.11+, ``tomli`` before)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p}: invalid TOML: {exc}") from None


def _parse_json(text: str, p: Path) -> dict:
    """Parse JSON text; the top level must be an object."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: the top level must be a JSON object, got {type(data).__name__}")
    return data


def scene_from_dict(data: dict, *, source: str = "<dict>") -> Scene:
    """Build a :class:`Scene` from the parsed contents of a scene file.

    ``source`` prefixes every error message (a file name, or ``"<dict>"``).  The scene's
    ``params`` holds a copy of ``data``, so ``scene_from_dict(scene.params)`` rebuilds it.
    """
    return _build_scene(data, source=source, default_name="scene")


# ---------------------------------------------------------------------------------- checks
class _Reader:
    """Typed access to the parsed data; every failure names ``source`` and the item path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, path: str, msg: str) -> ValueError:
        return ValueError(f"{self.source}: {path} {msg}")

    @contextmanager
    def wrap(self, path: str):
        """Re-raise errors of SceneBuilder, Material and PBDSettings prefixed with ``path``."""
        try:
            yield
        except _BUILDER_ERRORS as exc:
            raise ValueError(f"{self.source}: {path}: {exc}") from None

    def table(self, value, path: str, allowed, required=()) -> dict:
        """A table (dict) whose keys are all in ``allowed`` and include ``required``."""
        if not isinstance(value, dict):
            raise self.fail(path, f"must be a table, got {_kind(value)}")
        for key in value:
            if key not in allowed:
                raise self.fail(_join(path, key), f"is not a known key; expected one of: "
                                                  f"{', '.join(allowed)}")
        for key in required:
            if key not in value:
                raise self.fail(_join(path, key), "is required")
        return value

    def array_of_tables(self, value, path: str) -> list:
        """An array of tables (``[[path]]`` in TOML, a list of objects in JSON)."""
        if not isinstance(value, list):
            raise self.fail(path, f"must be an array of tables ([[{path}]]), got {_kind(value)}")
        for k, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{path}[{k}]", f"must be a table, got {_kind(item)}")
        return value

    def number(self, value, path: str, *, positive: bool = False, nonneg: bool = False) -> float:
        """A finite number (optionally > 0 or >= 0)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"must be a number, got {_kind(value)}")
        v = float(value)
        if not math.isfinite(v):
            raise self.fail(path, f"must be finite, got {value!r}")
        if positive and v <= 0.0:
            raise self.fail(path, f"must be positive, got {value!r}")
        if nonneg and v < 0.0:
            raise self.fail(path, f"must be >= 0, got {value!r}")
        return v

    def integer(self, value, path: str, *, minimum: int | None = None) -> int:
        """An integer (optionally >= ``minimum``)."""
        ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok or (minimum is not None and value < minimum):
            bound = "" if minimum is None else f" >= {minimum}"
            raise self.fail(path, f"must be an integer{bound}, got {value!r}")
        return int(value)

    def string(self, value, path: str) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {_kind(value)}")
        return value

    def boolean(self, value, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"must be true or false, got {value!r}")
        return value

    def numbers(self, value, path: str, n: int) -> np.ndarray:
        """A list of exactly ``n`` finite numbers."""
        if not isinstance(value, list) or len(value) != n:
            raise self.fail(path, f"must be a list of {n} numbers, got {_short(value)}")
        return np.array([self.number(v, f"{path}[{i}]") for i, v in enumerate(value)])

    def vector(self, value, path: str) -> np.ndarray:
        """A 3-vector [x, y, z]."""
        return self.numbers(value, path, 3)

    def points(self, value, path: str, *, min_points: int = 1) -> np.ndarray:
        """A list of 3-vectors, shape [n, 3]."""
        if not isinstance(value, list) or len(value) < min_points:
            raise self.fail(path, f"must be a list of at least {min_points} points [x, y, z], "
                                  f"got {_short(value)}")
        return np.array([self.vector(p, f"{path}[{i}]") for i, p in enumerate(value)])

    def indices(self, value, path: str, count: int, what: str) -> list[int]:
        """A list of integer indices into ``count`` items (negative ones count from the end)."""
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list of {what} indices, got {_kind(value)}")
        out = []
        for i, v in enumerate(value):
            k = self.integer(v, f"{path}[{i}]")
            if not -count <= k < count:
                raise self.fail(f"{path}[{i}]", f"= {k} is out of range: there are {count} "
                                                f"{what}s")
            out.append(k % count)
        return out

    def rotation(self, table: dict, path: str) -> np.ndarray | None:
        """``rotation`` (3 rows of a rotation matrix) or ``rotvec`` [rad]; ``None`` if absent."""
        if "rotation" in table and "rotvec" in table:
            raise self.fail(path, "may give rotation or rotvec, not both")
        if "rotation" in table:
            rows = table["rotation"]
            if not isinstance(rows, list) or len(rows) != 3:
                raise self.fail(_join(path, "rotation"), f"must be 3 rows of 3 numbers, got "
                                                         f"{_short(rows)}")
            return np.array([self.vector(r, f"{path}.rotation[{i}]") for i, r in enumerate(rows)])
        if "rotvec" in table:
            from scipy.spatial.transform import Rotation
            rv = self.vector(table["rotvec"], _join(path, "rotvec"))
            return Rotation.from_rotvec(rv).as_matrix()
        return None

    def end(self, value, path: str) -> int:
        """A strand end: 0 (first vertex) or -1 (last vertex)."""
        if isinstance(value, bool) or value not in (0, -1):
            raise self.fail(path, f"must be 0 (first vertex) or -1 (last vertex), got {value!r}")
        return int(value)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value) -> str:
    """A short description of a value's type for messages."""
    names = {dict: "a table", list: "a list", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _lookup(r: _Reader, value, path: str, names: list[str], what: str) -> int:
    """Resolve a reference by name (string) or index (integer) into ``names``."""
    if isinstance(value, str):
        if value not in names:
            avail = ", ".join(repr(n) for n in names) or "(none)"
            raise r.fail(path, f"names unknown {what} {value!r}; available: {avail}")
        return names.index(value)
    k = r.integer(value, path)
    if not -len(names) <= k < len(names):
        raise r.fail(path, f"= {k} is out of range: there are {len(names)} {what}s")
    return k % len(names)


# ---------------------------------------------------------------------------------- sections
def _scene_section(r: _Reader, data: dict, default_name: str) -> dict:
    """The ``[scene]`` table with defaults filled in."""
    t = r.table(data.get("scene", {}), "scene", _SCENE_KEYS)
    out = {"name": default_name, "description": "", "dt": 1.0 / 60.0, "frames": 120,
           "steps_per_frame": 1, "gravity": np.array([0.0, 0.0, -9.81]), "view": (20.0, -60.0)}
    if "name" in t:
        out["name"] = r.string(t["name"], "scene.name")
        if not out["name"].strip():
            raise r.fail("scene.name", "must not be empty")
    if "description" in t:
        out["description"] = r.string(t["description"], "scene.description")
    if "dt" in t:
        out["dt"] = r.number(t["dt"], "scene.dt", positive=True)
    if "frames" in t:
        out["frames"] = r.integer(t["frames"], "scene.frames", minimum=1)
    if "steps_per_frame" in t:
        out["steps_per_frame"] = r.integer(t["steps_per_frame"], "scene.steps_per_frame",
                                           minimum=1)
    if "gravity" in t:
        out["gravity"] = r.vector(t["gravity"], "scene.gravity")
    if "view" in t:
        out["view"] = tuple(float(v) for v in r.numbers(t["view"], "scene.view", 2))
    return out


def _solver_section(r: _Reader, data: dict) -> PBDSettings:
    """``[solver]``: any field of :class:`PBDSettings`, type-checked against its default."""
    defaults = {f.name: f.default for f in fields(PBDSettings)}
    t = r.table(data.get("solver", {}), "solver", tuple(defaults))
    kw = {}
    for key, value in t.items():
        path = f"solver.{key}"
        d = defaults[key]
        if d is None:  # optional fields: a value of the field's kind
            d = PBDSettings.OPTIONAL_KINDS[key]()
        if isinstance(d, bool):
            kw[key] = r.boolean(value, path)
        elif isinstance(d, int):
            kw[key] = r.integer(value, path)
        elif isinstance(d, float):
            kw[key] = r.number(value, path)
        else:
            kw[key] = r.string(value, path)
    with r.wrap("solver"):
        return PBDSettings(**kw)


def _materials_section(r: _Reader, data: dict) -> dict[str, Material]:
    """``[materials.NAME]`` tables -> {name: Material}."""
    mats = data.get("materials", {})
    if not isinstance(mats, dict):
        raise r.fail("materials", f"must be a table of named materials, got {_kind(mats)}")
    out = {}
    for name, t in mats.items():
        path = f"materials.{name}"
        r.table(t, path, _MATERIAL_KEYS, required=("young_modulus", "density"))
        kw = {k: r.number(v, f"{path}.{k}") for k, v in t.items()}
        with r.wrap(path):
            out[name] = Material(**kw)
    return out


def _strand_shape(r: _Reader, t: dict, path: str) -> tuple[np.ndarray, bool]:
    """The points of a strand from exactly one of points / line / helix / circle."""
    given = [k for k in _SHAPES if k in t]
    if len(given) != 1:
        what = "none" if not given else ", ".join(given)
        raise r.fail(path, f"needs exactly one of {', '.join(_SHAPES)}; got {what}")
    kind = given[0]
    sp = f"{path}.{kind}"
    if kind == "points":
        return r.points(t["points"], sp, min_points=2), False
    if kind == "line":
        s = r.table(t["line"], sp, ("start", "end", "segments"), ("start", "end", "segments"))
        args = (r.vector(s["start"], f"{sp}.start"), r.vector(s["end"], f"{sp}.end"),
                r.integer(s["segments"], f"{sp}.segments", minimum=1))
        with r.wrap(sp):
            return line(*args), False
    if kind == "helix":
        keys = ("radius", "pitch", "turns", "segments", "center", "axis")
        s = r.table(t["helix"], sp, keys, ("radius", "pitch", "turns", "segments"))
        kw = {"radius": r.number(s["radius"], f"{sp}.radius", positive=True),
              "pitch": r.number(s["pitch"], f"{sp}.pitch"),
              "turns": r.number(s["turns"], f"{sp}.turns", positive=True),
              "segments": r.integer(s["segments"], f"{sp}.segments", minimum=1)}
        kw.update({k: r.vector(s[k], f"{sp}.{k}") for k in ("center", "axis") if k in s})
        if "axis" in kw and not np.any(kw["axis"]):
            raise r.fail(f"{sp}.axis", "must be non-zero")
        with r.wrap(sp):
            return helix(**kw), False
    s = r.table(t["circle"], sp, ("radius", "segments", "center", "normal"),
                ("radius", "segments"))
    kw = {"radius": r.number(s["radius"], f"{sp}.radius", positive=True),
          "segments": r.integer(s["segments"], f"{sp}.segments", minimum=3)}
    kw.update({k: r.vector(s[k], f"{sp}.{k}") for k in ("center", "normal") if k in s})
    if "normal" in kw and not np.any(kw["normal"]):
        raise r.fail(f"{sp}.normal", "must be non-zero")
    with r.wrap(sp):
        return circle(**kw), True


def _ghost_direction(r: _Reader, value, path: str) -> np.ndarray:
    """One vector [3] or one per edge [n_edges, 3]."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        return r.points(value, path)
    return r.vector(value, path)


def _alpha(r: _Reader, value, path: str) -> tuple:
    """Three alphas in [0, 1]; a single number applies to all three."""
    if isinstance(value, list):
        vals = r.numbers(value, path, 3)
        paths = [f"{path}[{i}]" for i in range(3)]
    else:
        vals = [r.number(value, path)] * 3
        paths = [path] * 3
    for p, v in zip(paths, vals):
        if not 0.0 <= v <= 1.0:
            raise r.fail(p, f"must be in [0, 1], got {v!r}")
    return tuple(float(v) for v in vals)


def _strand_kwargs(r: _Reader, t: dict, path: str, n: int, closed: bool) -> dict:
    """Optional add_strand arguments of one strand table."""
    kw = {}
    if "rest_points" in t:
        kw["rest_points"] = r.points(t["rest_points"], f"{path}.rest_points")
        if len(kw["rest_points"]) != n:
            raise r.fail(f"{path}.rest_points", f"has {len(kw['rest_points'])} points; the "
                                                f"strand has {n}")
    if "velocity" in t:
        kw["velocities"] = np.tile(r.vector(t["velocity"], f"{path}.velocity"), (n, 1))
    if "ghost_direction" in t:
        kw["ghost_direction"] = _ghost_direction(r, t["ghost_direction"],
                                                 f"{path}.ghost_direction")
    for key in ("ghost_distance", "ghost_mass_ratio"):
        if key in t:
            kw[key] = r.number(t[key], f"{path}.{key}", positive=True)
    if "alpha" in t:
        kw["alpha"] = _alpha(r, t["alpha"], f"{path}.alpha")
    if "initial_twist" in t:
        kw["initial_twist"] = r.number(t["initial_twist"], f"{path}.initial_twist")
    kw["closed"] = closed
    return kw


def _strands_section(r: _Reader, data: dict, b: SceneBuilder,
                     materials: dict[str, Material]) -> list[str]:
    """Add every ``[[strands]]`` entry; returns the strand names (index = builder handle)."""
    names: list[str] = []
    for k, t in enumerate(r.array_of_tables(data.get("strands", []), "strands")):
        path = f"strands[{k}]"
        r.table(t, path, _STRAND_KEYS, required=("material",))
        name = r.string(t["name"], f"{path}.name") if "name" in t else f"strand {k}"
        if name in names:
            raise r.fail(f"{path}.name",
                         f"{name!r} is already used by strands[{names.index(name)}]")
        mname = r.string(t["material"], f"{path}.material")
        if mname not in materials:
            avail = ", ".join(repr(m) for m in materials) or "(none)"
            raise r.fail(f"{path}.material", f"names unknown material {mname!r}; "
                                              f"available: {avail}")
        pts, closed = _strand_shape(r, t, path)
        if "closed" in t:
            flag = r.boolean(t["closed"], f"{path}.closed")
            if closed and not flag:
                raise r.fail(f"{path}.closed", "cannot be false for a circle")
            closed = flag
        kw = _strand_kwargs(r, t, path, len(pts), closed)
        with r.wrap(path):
            sid = b.add_strand(pts, material=materials[mname], name=name, **kw)
        if "fixed" in t:
            for v in r.indices(t["fixed"], f"{path}.fixed", len(pts), "vertex"):
                with r.wrap(f"{path}.fixed"):
                    b.fix_vertex(sid, v)
        names.append(name)
    return names


def _attachments(r: _Reader, value, path: str, strands: list[str]) -> list[dict]:
    """``attach = [{strand, end, orientation}, ...]`` -> resolved dicts."""
    if not isinstance(value, list):
        raise r.fail(path, f"must be a list of tables {{strand, end, orientation}}, got "
                           f"{_kind(value)}")
    out = []
    for i, a in enumerate(value):
        ap = f"{path}[{i}]"
        r.table(a, ap, ("strand", "end", "orientation"), required=("strand",))
        out.append({"strand": _lookup(r, a["strand"], f"{ap}.strand", strands, "strand"),
                    "end": r.end(a.get("end", 0), f"{ap}.end"),
                    "orientation": r.boolean(a.get("orientation", True), f"{ap}.orientation"),
                    "path": ap})
    return out


def _frames_section(r: _Reader, data: dict, b: SceneBuilder, strands: list[str]) -> None:
    """Kinematic frames and the strand ends clamped to them."""
    for k, t in enumerate(r.array_of_tables(data.get("frames", []), "frames")):
        path = f"frames[{k}]"
        r.table(t, path, _FRAME_KEYS, required=("origin",))
        kw = {"origin": r.vector(t["origin"], f"{path}.origin"),
              "rotation": r.rotation(t, path)}
        for key in ("linear_velocity", "angular_velocity"):
            if key in t:
                kw[key] = r.vector(t[key], f"{path}.{key}")
        for key in ("start", "stop"):
            if key in t:
                kw[key] = r.number(t[key], f"{path}.{key}")
        with r.wrap(path):
            fid = b.add_frame(**kw)
        for a in _attachments(r, t.get("attach", []), f"{path}.attach", strands):
            with r.wrap(a["path"]):
                b.attach_to_frame(a["strand"], fid, end=a["end"], orientation=a["orientation"])


def _mesh_geometry(r: _Reader, t: dict, path: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices [n, 3] and triangles [m, 3] from ``box`` or ``vertices`` + ``triangles``."""
    if "box" in t:
        if "vertices" in t or "triangles" in t:
            raise r.fail(path, "may give box or vertices + triangles, not both")
        bp = f"{path}.box"
        s = r.table(t["box"], bp, ("center", "size"), ("center", "size"))
        center = r.vector(s["center"], f"{bp}.center")
        size = s["size"]
        size = (r.vector(size, f"{bp}.size") if isinstance(size, list)
                else r.number(size, f"{bp}.size"))
        with r.wrap(bp):
            return box_mesh(center, size)
    if "vertices" not in t or "triangles" not in t:
        raise r.fail(path, "needs box = {center, size} or both vertices and triangles")
    verts = r.points(t["vertices"], f"{path}.vertices", min_points=3)
    tp = f"{path}.triangles"
    tris = t["triangles"]
    if not isinstance(tris, list) or not tris:
        raise r.fail(tp, f"must be a non-empty list of [i, j, k] vertex indices, got "
                         f"{_short(tris)}")
    out = []
    for i, tri in enumerate(tris):
        if not isinstance(tri, list) or len(tri) != 3:
            raise r.fail(f"{tp}[{i}]", f"must be 3 vertex indices, got {_short(tri)}")
        out.append(r.indices(tri, f"{tp}[{i}]", len(verts), "vertex"))
    return verts, np.array(out, dtype=np.int64)


def _meshes_section(r: _Reader, data: dict, b: SceneBuilder) -> tuple[list[str], list[int]]:
    """Deformable meshes; returns their names and triangle counts."""
    names: list[str] = []
    n_tris: list[int] = []
    for k, t in enumerate(r.array_of_tables(data.get("meshes", []), "meshes")):
        path = f"meshes[{k}]"
        r.table(t, path, _MESH_KEYS, required=("mass",))
        name = r.string(t["name"], f"{path}.name") if "name" in t else f"mesh {k}"
        if name in names:
            raise r.fail(f"{path}.name",
                         f"{name!r} is already used by meshes[{names.index(name)}]")
        verts, tris = _mesh_geometry(r, t, path)
        kw = {"mass": r.number(t["mass"], f"{path}.mass", positive=True)}
        for key in ("compliance", "collide_radius"):
            if key in t:
                kw[key] = r.number(t[key], f"{path}.{key}", nonneg=True)
        if "velocity" in t:
            kw["velocities"] = np.tile(r.vector(t["velocity"], f"{path}.velocity"),
                                       (len(verts), 1))
        if "fixed" in t:
            kw["fixed"] = r.indices(t["fixed"], f"{path}.fixed", len(verts), "vertex")
        with r.wrap(path):
            b.add_mesh(verts, tris, **kw)
        names.append(name)
        n_tris.append(len(tris))
    return names, n_tris


def _triangle_attachments_section(r: _Reader, data: dict, b: SceneBuilder, strands: list[str],
                                  meshes: list[str], n_tris: list[int]) -> None:
    """Strand ends coupled to mesh triangles."""
    items = r.array_of_tables(data.get("triangle_attachments", []), "triangle_attachments")
    for k, t in enumerate(items):
        path = f"triangle_attachments[{k}]"
        r.table(t, path, ("strand", "mesh", "triangle", "end"),
                required=("strand", "mesh", "triangle"))
        s = _lookup(r, t["strand"], f"{path}.strand", strands, "strand")
        m = _lookup(r, t["mesh"], f"{path}.mesh", meshes, "mesh")
        tri = r.integer(t["triangle"], f"{path}.triangle", minimum=0)
        if tri >= n_tris[m]:
            raise r.fail(f"{path}.triangle", f"= {tri} is out of range: mesh {meshes[m]!r} has "
                                             f"{n_tris[m]} triangles")
        end = r.end(t.get("end", 0), f"{path}.end")
        with r.wrap(path):
            b.attach_to_triangle(s, m, tri, end=end)


def _bodies_section(r: _Reader, data: dict, b: SceneBuilder, strands: list[str]) -> None:
    """Small rigid bodies (rod network joints) and the strand ends joined to them."""
    for k, t in enumerate(r.array_of_tables(data.get("bodies", []), "bodies")):
        path = f"bodies[{k}]"
        r.table(t, path, _BODY_KEYS, required=("position", "mass", "size"))
        kw = {"rotation": r.rotation(t, path),
              "mass": r.number(t["mass"], f"{path}.mass", positive=True),
              "size": r.number(t["size"], f"{path}.size", positive=True)}
        pos = r.vector(t["position"], f"{path}.position")
        with r.wrap(path):
            bid = b.add_rigid_body(pos, **kw)
        for a in _attachments(r, t.get("attach", []), f"{path}.attach", strands):
            with r.wrap(a["path"]):
                b.attach_to_body(a["strand"], bid, end=a["end"], orientation=a["orientation"])


def _colliders_section(r: _Reader, data: dict, b: SceneBuilder) -> None:
    """Planes, spheres and capsules."""
    for k, t in enumerate(r.array_of_tables(data.get("colliders", []), "colliders")):
        path = f"colliders[{k}]"
        if "type" not in t:
            raise r.fail(f"{path}.type", f"is required: one of {', '.join(_COLLIDER_KEYS)}")
        kind = r.string(t["type"], f"{path}.type")
        if kind not in _COLLIDER_KEYS:
            raise r.fail(f"{path}.type", f"is unknown: {kind!r}; expected one of "
                                         f"{', '.join(_COLLIDER_KEYS)}")
        keys = _COLLIDER_KEYS[kind]
        r.table(t, path, keys, required=tuple(x for x in keys if x != "friction"))
        friction = r.number(t.get("friction", 0.0), f"{path}.friction", nonneg=True)
        with r.wrap(path):
            if kind == "plane":
                normal = r.vector(t["normal"], f"{path}.normal")
                b.add_plane(r.vector(t["point"], f"{path}.point"), normal, friction=friction)
            elif kind == "sphere":
                b.add_sphere(r.vector(t["center"], f"{path}.center"),
                             r.number(t["radius"], f"{path}.radius", positive=True),
                             friction=friction)
            else:
                b.add_capsule(r.vector(t["a"], f"{path}.a"), r.vector(t["b"], f"{path}.b"),
                              r.number(t["radius"], f"{path}.radius", positive=True),
                              friction=friction)


# ---------------------------------------------------------------------------------- assembly
def _build_scene(data, *, source: str, default_name: str) -> Scene:
    """Check every section of ``data``, build the Model and wrap it in a Scene."""
    r = _Reader(source)
    if not isinstance(data, dict):
        raise ValueError(f"{source}: the scene description must be a table, got {_kind(data)}")
    for key in data:
        if key not in SECTIONS:
            raise ValueError(f"{source}: unknown section {key!r}; expected one of: "
                             f"{', '.join(SECTIONS)}")
    head = _scene_section(r, data, default_name)
    settings = _solver_section(r, data)
    materials = _materials_section(r, data)
    b = SceneBuilder(gravity=head["gravity"])
    strands = _strands_section(r, data, b, materials)
    _frames_section(r, data, b, strands)
    meshes, n_tris = _meshes_section(r, data, b)
    _triangle_attachments_section(r, data, b, strands, meshes, n_tris)
    _bodies_section(r, data, b, strands)
    _colliders_section(r, data, b)
    try:
        model = b.build()
    except _BUILDER_ERRORS as exc:
        raise ValueError(f"{source}: {exc}") from None
    return Scene(head["name"], model, settings, head["dt"], head["frames"],
                 steps_per_frame=head["steps_per_frame"], description=head["description"],
                 params=copy.deepcopy(data), view=head["view"])
