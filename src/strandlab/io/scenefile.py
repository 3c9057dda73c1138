"""Scene files: describe a scene in TOML or JSON; build a runnable
:class:`~strandlab.sim.runner.Simulation`.

The format is documented in ``docs/scene-format.md`` and described by the pydantic models of
:mod:`strandlab.io.schema` (``strandlab schema`` prints their JSON Schema); ``examples/*.toml``
are complete files.  Every value is checked before anything is built, and every error is one
``ValueError`` naming the file, the path of the offending item, what was expected and what was
found, e.g. ``rope.toml: strands[1].line.segments: must be an integer >= 1 (got 0)``.

Example
-------
>>> from strandlab.io.scenefile import scene_from_dict
>>> scene = scene_from_dict({
...     "materials": {"rope": {"young_modulus": 5e7, "density": 1100.0, "radius": 0.004}},
...     "strands": [{"material": "rope", "line": {"start": [0, 0, 1], "end": [1, 0, 1],
...                                               "segments": 10}}],
... })
>>> scene.scene.n_edges
10
"""
from __future__ import annotations

import copy
import json
import sys
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path
from typing import get_type_hints

import numpy as np
from pydantic import ConfigDict, ValidationError, create_model

from ..sim.builder import SceneBuilder
from ..sim.material import Material
from ..sim.runner import Simulation
from ..sim.shapes import box_mesh, circle, helix, line
from ..sim.simplicial import (
    Connection,
    MeshHold,
    ShellMaterial,
    SolidMaterial,
    part_vertices,
)
from ..sim.solver import get_solver, solver_names
from . import schema as sf
from .schema import SECTIONS, SceneFile

__all__ = ["load_scene_file", "scene_from_dict", "validate_scene", "scene_json_schema",
           "SECTIONS"]

_BUILDER_ERRORS = (ValueError, IndexError, TypeError)

# messages for pydantic's own error types (the models' types give their own messages)
_MESSAGES = {"missing": "is required", "int_type": "must be an integer",
             "int_from_float": "must be an integer", "float_type": "must be a number",
             "finite_number": "must be finite", "bool_type": "must be true or false",
             "string_type": "must be a string", "list_type": "must be a list",
             "dict_type": "must be a table", "model_type": "must be a table",
             "dataclass_type": "must be a table", "extra_forbidden": "is not a known key"}
_NO_INPUT = ("missing", "unknown_key", "scene_rule", "extra_forbidden")


# ---------------------------------------------------------------------------------- reading
def load_scene_file(path) -> Simulation:
    """Read a scene file (``.toml`` or ``.json``) and build its
    :class:`~strandlab.sim.runner.Simulation`.

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
    try:
        data = _parse_toml(text, p) if suffix == ".toml" else _parse_json(text, p)
        return _build_scene(data, source=p.name, default_name=p.stem, folder=p.parent)
    except RecursionError:
        raise ValueError(f"{p}: tables or arrays nested too deeply to be a scene file") from None


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


def scene_from_dict(data: dict, *, source: str = "<dict>") -> Simulation:
    """Build a :class:`~strandlab.sim.runner.Simulation` from the parsed contents of a scene file.

    ``source`` prefixes every error message (a file name, or ``"<dict>"``).  Numpy arrays and
    tuples are accepted where the format has lists.  The scene's ``params`` holds a plain copy
    of ``data``, so ``scene_from_dict(scene.params)`` rebuilds it.
    """
    return _build_scene(data, source=source, default_name="scene")


def scene_json_schema() -> dict:
    """The JSON Schema of a scene file (printed by ``strandlab schema``)."""
    return SceneFile.model_json_schema()


def validate_scene(data, *, source: str = "<dict>") -> SceneFile:
    """Check ``data`` against the format (all sections, cross-references included) and return
    the validated :class:`~strandlab.io.schema.SceneFile`; raises one located ``ValueError``."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: the scene description must be a table, got "
                         f"{type(data).__name__}")
    try:
        return SceneFile.model_validate(_plain(data))
    except ValidationError as exc:
        raise _located(exc, source) from None


# ---------------------------------------------------------------------------------- messages
def _plain(value):
    """``value`` with numpy arrays, numpy scalars and tuples turned into Python lists and
    numbers (the forms the format describes)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _path(loc) -> str:
    """``("strands", 1, "line", "segments")`` -> ``strands[1].line.segments``."""
    out = ""
    for item in loc:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def _got(value) -> str:
    text = repr(_plain(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _message(err: dict, source: str, prefix: tuple = ()) -> str:
    """One pydantic error as ``<source>: <path>: <what is wrong> (got <value>)``; ``prefix``:
    the path of the validated table (e.g. ``("solver",)``)."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind in ("scene", "scene_rule", "unknown_key"):
        msg = err["msg"]
    elif kind == "value_error":
        msg = str(ctx.get("error", err["msg"]))
    else:
        msg = _MESSAGES.get(kind) or err["msg"][:1].lower() + err["msg"][1:]
    loc = _path((*prefix, *err["loc"]))
    text = f"{source}: {loc}: {msg}" if loc else f"{source}: {msg}"
    if kind not in _NO_INPUT and "input" in err:
        text += f" (got {_got(err['input'])})"
    return text


def _located(exc: ValidationError, source: str, prefix: tuple = ()) -> ValueError:
    """The first error of ``exc`` with its location, and how many more there are."""
    errors = exc.errors()
    more = len(errors) - 1
    tail = f" [and {more} more error{'s' if more > 1 else ''}]" if more else ""
    return ValueError(_message(errors[0], source, prefix) + tail)


class _Located(ValueError):
    """A mistake whose message already names its place in the scene file (not prefixed
    again by :func:`_wrap`)."""


@contextmanager
def _wrap(where: str):
    """Re-raise errors of SceneBuilder, Material and the shapes prefixed with ``where``."""
    try:
        yield
    except _Located:
        raise
    except _BUILDER_ERRORS as exc:
        raise ValueError(f"{where}: {exc}") from None


# ---------------------------------------------------------------------------------- solver
def _solver_settings(type_name: str, table: dict, where: str):
    """The settings object of solver ``type_name`` from the other keys of ``[solver]``.

    ``where`` prefixes messages (``"rope.toml: solver"``).  Unknown solvers, unknown keys,
    wrong types and values refused by the settings class raise a located ``ValueError``.
    """
    try:
        cls = get_solver(type_name).Settings
    except KeyError:
        raise ValueError(f"{where}.type: unknown solver {type_name!r}; known: "
                         f"{', '.join(solver_names())}") from None
    allowed = [f.name for f in fields(cls)]
    for key in table:
        if key not in allowed:
            raise ValueError(f"{where}: unknown key {key!r} for solver {type_name!r}; "
                             f"allowed: type, {', '.join(allowed)}")
    hints = get_type_hints(cls)
    checker = create_model(f"{cls.__name__}Table", __config__=ConfigDict(strict=True),
                           **{f.name: (hints[f.name], f.default) for f in fields(cls)})
    try:
        values = checker.model_validate(table).model_dump(exclude_unset=True)
    except ValidationError as exc:
        source, _, section = where.rpartition(": ")
        raise _located(exc, source, (section,)) from None
    with _wrap(where):
        return cls(**values)


# ---------------------------------------------------------------------------------- sections
def _materials(f: SceneFile, where: str) -> dict[str, Material]:
    """``[materials.NAME]`` -> {name: Material}."""
    out = {}
    for name, m in f.materials.items():
        with _wrap(f"{where}: materials.{name}"):
            out[name] = Material(**m.model_dump(exclude_none=True))
    return out


def _strand_points(s: sf.StrandTable) -> np.ndarray:
    """The initial vertices [n, 3] of a strand table."""
    if s.points is not None:
        return np.array(s.points, dtype=np.float64)
    if s.line is not None:
        return line(s.line.start, s.line.end, s.line.segments)
    if s.helix is not None:
        return helix(**s.helix.model_dump())
    return circle(**s.circle.model_dump())


def _strand_kwargs(s: sf.StrandTable, n: int) -> dict:
    """Optional ``SceneBuilder.add_strand`` arguments of one strand table."""
    kw = {"closed": s.is_closed, "initial_twist": s.initial_twist}
    if s.rest_points is not None:
        kw["rest_points"] = np.array(s.rest_points, dtype=np.float64)
    if s.velocity is not None:
        kw["velocities"] = np.tile(s.velocity, (n, 1))
    if s.d1 is not None:
        kw["d1"] = np.array(s.d1, dtype=np.float64)
    if s.radius is not None:
        kw["radius"] = np.array(s.radius, dtype=np.float64)
    if s.friction is not None:
        kw["friction"] = s.friction
    if s.pbd is not None:
        pbd = {}
        alpha = s.pbd.alpha
        if alpha is not None:
            pbd["alpha"] = tuple(alpha) if isinstance(alpha, list) else (alpha,) * 3
        for key in ("ghost_distance", "ghost_mass_ratio"):
            if getattr(s.pbd, key) is not None:
                pbd[key] = getattr(s.pbd, key)
        if pbd:
            kw.setdefault("options", {})["pbd"] = pbd
    for solver in ("der", "csm"):
        table = getattr(s, solver)
        if table is not None:
            opts = {k: v for k, v in table.model_dump().items() if v is not None}
            if opts:
                kw.setdefault("options", {})[solver] = opts
    return kw


def _strands(f: SceneFile, b: SceneBuilder, materials: dict[str, Material],
             where: str) -> None:
    """Add every ``[[strands]]`` entry (builder handle = index) and fix its vertices."""
    for k, (s, name) in enumerate(zip(f.strands, f.strand_names())):
        path = f"{where}: strands[{k}]"
        with _wrap(path):
            pts = _strand_points(s)
            sid = b.add_strand(pts, material=materials[s.material], name=name,
                               **_strand_kwargs(s, len(pts)))
        with _wrap(f"{path}.fixed"):
            for v in s.fixed:
                b.fix_vertex(sid, v)


def _rotation(t) -> np.ndarray | None:
    """``rotation`` (rows of a matrix) or ``rotvec`` [rad] of a frame or body table."""
    if t.rotvec is not None:
        from scipy.spatial.transform import Rotation
        return Rotation.from_rotvec(t.rotvec).as_matrix()
    return None if t.rotation is None else np.array(t.rotation, dtype=np.float64)


def _keyframes(t: sf.KeyframesTable) -> dict:
    """``SceneBuilder.add_frame`` keyframes of a ``keyframes`` table."""
    kf = {"times": np.array(t.times, dtype=np.float64),
          "origins": np.array(t.origins, dtype=np.float64)}
    if t.rotvecs is not None:
        from scipy.spatial.transform import Rotation
        kf["rotations"] = Rotation.from_rotvec(t.rotvecs).as_matrix()
    elif t.rotations is not None:
        kf["rotations"] = np.array(t.rotations, dtype=np.float64)
    return kf


def _frames(f: SceneFile, b: SceneBuilder, where: str) -> None:
    """Kinematic frames and the strand ends clamped to them."""
    names = f.strand_names()
    for k, t in enumerate(f.frames):
        path = f"{where}: frames[{k}]"
        if t.keyframes is not None:
            with _wrap(f"{path}.keyframes"):
                fid = b.add_frame(keyframes=_keyframes(t.keyframes))
        else:
            kw = {"linear_velocity": t.linear_velocity, "angular_velocity": t.angular_velocity,
                  "start": t.start}
            if t.stop is not None:
                kw["stop"] = t.stop
            with _wrap(path):
                fid = b.add_frame(t.origin, _rotation(t), **kw)
        for i, a in enumerate(t.attach):
            with _wrap(f"{path}.attach[{i}]"):
                b.attach_to_frame(sf.resolve(a.strand, names), fid, end=a.end,
                                  orientation=a.orientation, free_twist=a.free_twist,
                                  slide_axis=a.slide_axis)


def _meshes(f: SceneFile, b: SceneBuilder, where: str) -> None:
    """Deformable meshes (builder handle = index)."""
    for k, m in enumerate(f.meshes):
        with _wrap(f"{where}: meshes[{k}]"):
            if m.box is not None:
                verts, tris = box_mesh(m.box.center, m.box.size)
            else:
                verts = np.array(m.vertices, dtype=np.float64)
                tris = np.array(m.triangles, dtype=np.int64) % len(verts)
            kw = {"mass": m.mass, "compliance": m.compliance,
                  "collide_radius": m.collide_radius,
                  "fixed": [v % len(verts) for v in m.fixed]}
            if m.velocity is not None:
                kw["velocities"] = np.tile(m.velocity, (len(verts), 1))
            b.add_mesh(verts, tris, **kw)


def _triangle_attachments(f: SceneFile, b: SceneBuilder, where: str) -> None:
    """Strand ends coupled to mesh triangles."""
    strands, meshes = f.strand_names(), f.mesh_names()
    for k, t in enumerate(f.triangle_attachments):
        with _wrap(f"{where}: triangle_attachments[{k}]"):
            b.attach_to_triangle(sf.resolve(t.strand, strands), sf.resolve(t.mesh, meshes),
                                 t.triangle, end=t.end)


def _bodies(f: SceneFile, b: SceneBuilder, where: str) -> None:
    """Small rigid bodies (rod network joints) and the strand ends joined to them."""
    names = f.strand_names()
    for k, t in enumerate(f.bodies):
        path = f"{where}: bodies[{k}]"
        with _wrap(path):
            bid = b.add_rigid_body(t.position, _rotation(t), mass=t.mass, size=t.size)
        for i, a in enumerate(t.attach):
            with _wrap(f"{path}.attach[{i}]"):
                b.attach_to_body(sf.resolve(a.strand, names), bid, end=a.end,
                                 orientation=a.orientation)


class WindowedLoad:
    """A constant force [N] acting from ``start`` (inclusive) to ``stop`` (exclusive) [s]; zero
    outside (a scene file's ``[[loads]]`` entry as a function of time)."""

    def __init__(self, force, start=None, stop=None):
        self.force = np.array(force, dtype=np.float64)
        self.start = -np.inf if start is None else float(start)
        self.stop = np.inf if stop is None else float(stop)
        self._zero = np.zeros(3)

    def __call__(self, t: float) -> np.ndarray:
        return self.force if self.start <= t < self.stop else self._zero


def _loads(f: SceneFile, b: SceneBuilder, where: str) -> None:
    """Forces on strand vertices, constant or inside a time window."""
    names = f.strand_names()
    for k, ld in enumerate(f.loads):
        with _wrap(f"{where}: loads[{k}]"):
            sid = sf.resolve(ld.strand, names)
            if ld.start is None and ld.stop is None:
                b.add_load(sid, ld.vertex, ld.force)
            else:
                b.add_load(sid, ld.vertex, WindowedLoad(ld.force, ld.start, ld.stop))


def _colliders(f: SceneFile, b: SceneBuilder, where: str) -> None:
    """Planes, spheres and capsules."""
    for k, c in enumerate(f.colliders):
        with _wrap(f"{where}: colliders[{k}]"):
            if c.type == "plane":
                b.add_plane(c.point, c.normal, friction=c.friction)
            elif c.type == "sphere":
                b.add_sphere(c.center, c.radius, friction=c.friction)
            else:
                b.add_capsule(c.a, c.b, c.radius, friction=c.friction)


# ---------------------------------------------------------------------------------- assembly
def _part_material(part, materials: dict):
    """The material of a ``[simplicial.parts.NAME]`` table: a rod's named material, a shell's
    or a solid's own."""
    if part.kind == "rod":
        return materials[part.material]
    if part.kind == "shell":
        return ShellMaterial(part.young_modulus, part.poisson_ratio, part.thickness,
                             part.density)
    return SolidMaterial(part.young_modulus, part.poisson_ratio, part.density)


def _simplicial(f: SceneFile, b: SceneBuilder, materials: dict, where: str,
                folder: Path) -> None:
    """Labelled meshes read from their files, with the parts' materials and connections."""
    from .simplicial import read_simplicial
    for k, t in enumerate(f.simplicial):
        with _wrap(f"{where}: simplicial[{k}]"):
            mats = {}
            for name, part in t.parts.items():
                try:
                    mats[name] = _part_material(part, materials)
                except ValueError as exc:
                    raise _Located(f"{where}: simplicial[{k}].parts.{name}: {exc}") from None
            conns = [Connection(kind=c.kind, parts=tuple(c.parts), mode=c.mode,
                                twist_stiffness=c.twist_stiffness,
                                bend_stiffness=c.bend_stiffness,
                                hard_stiffness=c.hard_stiffness, angle_update=c.angle_update,
                                vertices=None if c.vertices is None else tuple(c.vertices))
                     for c in t.connections]
            holds = [_hold(h, h.vertices) for h in t.holds if h.vertices is not None]
            path = Path(t.file) if Path(t.file).is_absolute() else folder / t.file
            if path.is_dir():
                raise _Located(f"{where}: simplicial[{k}].file: {path} is a directory, not a "
                               "mesh file")
            if not path.is_file():
                raise FileNotFoundError(f"{where}: simplicial[{k}].file: no mesh file {path} "
                                        "(a relative path is read from the scene file's "
                                        "folder)")
            groups, grouped = _group_holds(t, path, f"{where}: simplicial[{k}]")
            spec = read_simplicial(path, materials=mats, connections=conns,
                                   holds=holds + grouped, name=t.name, scale=t.scale, up=t.up,
                                   weld=t.weld, groups=groups)
            b.add_simplicial_mesh(_selected_holds(spec, t.holds, f"{where}: simplicial[{k}]"))


def _group_holds(t, path: Path, where: str):
    """The names of the file's groups that holds name (``part = NAME`` where no
    ``[simplicial.parts.NAME]`` is: a Gmsh physical group or VTU tag of vertices to hold, not a
    part), and those holds, in the file's vertex numbering, narrowed to their boxes."""
    named = [(j, h) for j, h in enumerate(t.holds) if h.part is not None
             and h.part not in t.parts]
    if not named:
        return (), []
    from .simplicial import file_groups
    x, members = file_groups(path, up=t.up, scale=t.scale)
    out = []
    for j, h in named:
        if h.part not in members:
            raise _Located(f"{where}.holds[{j}].part: {h.part!r} is no part of the file "
                           f"([simplicial.parts]: {', '.join(t.parts)})"
                           + (f" nor one of its groups ({', '.join(members)})" if members
                              else ""))
        out.append(_hold(h, _boxed(members[h.part], x, h, f"{where}.holds[{j}]",
                                   f"group {h.part!r}")))
    return tuple(h.part for _, h in named), out


def _selected_holds(spec, tables, where: str):
    """``spec`` with the holds given by a part or a box (``[[simplicial.holds]] part = ...``,
    ``box = ...``) added: every vertex of the part, or of the mesh, inside the box where one is
    given (borders included)."""
    picked = []
    names = [p.name for p in spec.parts]
    for j, h in enumerate(tables):
        if h.vertices is not None or (h.part is not None and h.part not in names):
            continue                                # by index, or a group's (_group_holds)
        if h.part is None:
            chosen, of = np.arange(len(spec.vertices)), "the mesh"
        else:
            chosen, of = part_vertices(spec, spec.part_index(h.part)), f"part {h.part!r}"
        picked.append(_hold(h, _boxed(chosen, spec.vertices, h, f"{where}.holds[{j}]", of)))
    return replace(spec, holds=spec.holds + tuple(picked)) if picked else spec


def _boxed(chosen: np.ndarray, x: np.ndarray, h, where: str, of: str) -> np.ndarray:
    """The vertices ``chosen`` (rows of the positions ``x`` [m]) inside the box of the hold
    ``h``, borders included (all of them where it gives none); ``where`` and ``of`` (what they
    are) locate a box that holds none."""
    if h.box is None:
        return chosen
    lo, hi = np.asarray(h.box, dtype=np.float64)
    inside = np.all((x[chosen] >= lo) & (x[chosen] <= hi), axis=1)
    if not inside.any():
        raise _Located(f"{where}.box: no vertex of {of} lies in the box {h.box} ({of} spans "
                       f"{x[chosen].min(axis=0).tolist()} to {x[chosen].max(axis=0).tolist()})")
    return chosen[inside]


def _hold(h, vertices) -> MeshHold:
    """The hold of table ``h`` on ``vertices``."""
    return MeshHold(tuple(int(v) for v in vertices), h.frame, h.rod_twist, h.until,
                    h.turn_only)


def _build_scene(data, *, source: str, default_name: str, folder=None) -> Simulation:
    """Validate ``data``, build the Scene and wrap it in a Simulation."""
    f = validate_scene(data, source=source)
    head = f.scene
    solver = dict(f.solver.model_extra or {})
    settings = _solver_settings(f.solver.type, solver, f"{source}: solver")
    materials = _materials(f, source)
    b = SceneBuilder(gravity=head.gravity)
    _strands(f, b, materials, source)
    _frames(f, b, source)
    _meshes(f, b, source)
    _triangle_attachments(f, b, source)
    _bodies(f, b, source)
    _loads(f, b, source)
    _colliders(f, b, source)
    _simplicial(f, b, materials, source, Path(folder) if folder is not None else Path.cwd())
    with _wrap(source):
        scene = b.build()
    return Simulation(head.name if head.name is not None else default_name, scene, settings,
                      head.dt, head.frames, steps_per_frame=head.steps_per_frame,
                      description=head.description, params=copy.deepcopy(_plain(data)),
                      view=tuple(head.view), solver=f.solver.type)
