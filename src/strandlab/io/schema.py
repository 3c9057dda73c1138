"""The scene file format as pydantic models: types, ranges, shapes and cross-references.

:class:`SceneFile` describes a whole file (``docs/scene-format.md`` documents it key by key);
``SceneFile.model_json_schema()`` is its JSON Schema (``strandlab schema`` prints it).  All
quantities are SI.  Validation is strict: integers must be integers, numbers must be finite
numbers (booleans and strings are refused), every table refuses unknown keys.

Every failure is reported as a pydantic error whose ``loc`` is the path of the offending item
(``("strands", 1, "line", "segments")``) and whose message says what was expected, e.g.
``must be an integer >= 1``; :mod:`strandlab.io.scenefile` turns it into one located message.
The ``[solver]`` table is the one open table: its ``type`` names the solver and the other keys
are that solver's settings, checked by the solver's settings class.
"""
from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import (
    ConfigDict,
    Field,
    TypeAdapter,
    WrapValidator,
    model_validator,
)

from .schema_mesh import ConnectionTable, HoldTable, PartTable, SimplicialTable
from .schema_types import (
    Alpha,
    BoxSize,
    Direction,
    End,
    Flag,
    Fraction,
    Indices,
    Integer,
    Name,
    NonNegative,
    NonZeroVector,
    Number,
    PoissonRatio,
    Positive,
    PositiveOrList,
    Radius,
    Ref,
    Rotation,
    Text,
    Triangles,
    Vector,
    _either,
    _expect,
    _expected,
    _integer,
    _is_list,
    _list_of,
    _points,
    _Table,
    _tables,
    located,
)

__all__ = ["SceneFile", "SceneTable", "SolverTable", "MaterialTable", "StrandTable",
           "PBDStrandOptions", "DERStrandOptions", "LineShape", "HelixShape", "CircleShape",
           "FrameTable",
           "Attachment", "FrameAttachment", "KeyframesTable", "LoadTable", "BoxShape",
           "MeshTable", "TriangleAttachment", "BodyTable",
           "PartTable", "ConnectionTable", "HoldTable", "SimplicialTable",
           "PlaneCollider", "SphereCollider", "CapsuleCollider", "COLLIDERS", "SHAPES",
           "SECTIONS", "located", "resolve"]

#: The four ways of giving a strand's points; a strand table has exactly one of them.
SHAPES = ("points", "line", "helix", "circle")




def _one_rotation(table) -> None:
    if table.rotation is not None and table.rotvec is not None:
        raise located((), "may give rotation or rotvec, not both", None, rule=True)


class SceneTable(_Table):
    """``[scene]``: name, timing, gravity and camera."""

    name: Name = Field(None, description="scene name (default: the file stem); the default "
                                         "output folder is runs/<name>")
    description: Text = Field("", description="one line about the scene")
    dt: Positive = Field(1.0 / 60.0, description="time step [s]")
    frames: _integer(1) = Field(120, description="number of output frames")
    steps_per_frame: _integer(1) = Field(1, description="time steps per output frame")
    gravity: Vector = Field([0.0, 0.0, -9.81], description="gravitational acceleration [m/s^2]")
    view: _list_of(Number, "a list of 2 numbers [elevation, azimuth]", n=2) = Field(
        [20.0, -60.0], description="camera elevation and azimuth for rendering [deg]")


class SolverTable(_Table):
    """``[solver]``: ``type`` names the solver; the other keys are that solver's settings
    (for ``pbd``: the fields of ``strandlab.PBDSettings``; for ``der``: of
    ``strandlab.DERSettings``; for ``csm``: of ``strandlab.CSMSettings``), checked by the
    solver."""

    model_config = ConfigDict(extra="allow")
    type: Text = Field("pbd", description="the solver: 'pbd' (position-based elastic rods), "
                                          "'der' (discrete elastic rods) or 'csm' (chain "
                                          "shape matching)")


class MaterialTable(_Table):
    """``[materials.NAME]``: material and cross-section of strands (``strandlab.Material``)."""

    young_modulus: Positive = Field(description="Young's modulus E [Pa]")
    density: Positive = Field(description="mass density [kg/m^3]")
    radius: Positive = Field(None, description="radius of a round section [m]; for a ribbon, "
                                               "the contact radius (default: half the width)")
    shear_modulus: Positive = Field(None, description="shear modulus G [Pa] (default: "
                                                      "E / (2 (1 + poisson_ratio)))")
    poisson_ratio: PoissonRatio = Field(0.5, description="Poisson's ratio, used only without "
                                                         "shear_modulus")
    width: Positive = Field(None, description="rectangular section: side along d1 [m]")
    thickness: Positive = Field(None, description="rectangular section: side along d2 [m]")

    @model_validator(mode="after")
    def _section(self):
        if (self.width is None) != (self.thickness is None):
            raise located((), "a rectangular section needs both width and thickness", None,
                          rule=True)
        if self.width is None and self.radius is None:
            raise located(("radius",), "is required for a round section (or give width and "
                                       "thickness)", None, rule=True)
        return self


class LineShape(_Table):
    """``line = {start, end, segments}``: evenly spaced vertices on a segment."""

    start: Vector = Field(description="first vertex [m]")
    end: Vector = Field(description="last vertex [m]")
    segments: _integer(1) = Field(description="number of edges (vertices: segments + 1)")

    @property
    def n_points(self) -> int:
        return self.segments + 1


class HelixShape(_Table):
    """``helix = {radius, pitch, turns, segments, center, axis}``."""

    radius: Positive = Field(description="helix radius [m]")
    pitch: Number = Field(description="rise per turn along the axis [m]")
    turns: Positive = Field(description="number of turns")
    segments: _integer(1) = Field(description="number of edges (vertices: segments + 1)")
    center: Vector = Field([0.0, 0.0, 0.0], description="a point of the axis [m]")
    axis: NonZeroVector = Field([0.0, 0.0, 1.0], description="axis direction")

    @property
    def n_points(self) -> int:
        return self.segments + 1


class CircleShape(_Table):
    """``circle = {radius, segments, center, normal}``: a closed ring."""

    radius: Positive = Field(description="ring radius [m]")
    segments: _integer(3) = Field(description="number of edges = number of vertices")
    center: Vector = Field([0.0, 0.0, 0.0], description="ring centre [m]")
    normal: NonZeroVector = Field([0.0, 0.0, 1.0], description="normal of the ring's plane")

    @property
    def n_points(self) -> int:
        return self.segments


class PBDStrandOptions(_Table):
    """``pbd = {...}``: options of the position-based solver for one strand; other solvers
    ignore them."""

    alpha: Alpha = Field(None, description="stiffness alphas [bend about d1, bend about d2, "
                                           "twist], each in [0, 1], or one number for all "
                                           "three (default: derived from the material)")
    ghost_distance: Positive = Field(None, description="ghost point distance from its edge [m] "
                                                       "(default: mean rest edge length)")
    ghost_mass_ratio: Positive = Field(None, description="ghost mass as a fraction of its "
                                                         "edge's mass (default: physical value)")


class DERStrandOptions(_Table):
    """``der = {...}``: options of the discrete-elastic-rods solver for one strand; other
    solvers ignore them.  Stiffness overrides replace the values derived from the material;
    an explicit rest shape replaces the one measured on ``rest_points``."""

    stretch_stiffness: PositiveOrList = Field(
        None, description="stretching stiffness k_s [N], one number or one per edge")
    bend_stiffness: PositiveOrList = Field(
        None, description="bending stiffness k_b [N m^2], one number, [k1, k2], or one per "
                          "inner vertex")
    twist_stiffness: PositiveOrList = Field(
        None, description="twisting stiffness k_t [N m^2], one number or one per inner vertex")
    rest_length: _list_of(Positive, "a list of numbers > 0, one per edge", at_least=1) = Field(
        None, description="rest length of each edge [m]")
    rest_curvature: _list_of(_list_of(Number, "a list of 4 numbers", n=4),
                             "a list of 4-D curvatures, one per inner vertex",
                             at_least=1) = Field(
        None, description="rest curvature (kb.m2, -kb.m1 on both edges) per inner vertex")
    rest_twist: _list_of(Number, "a list of numbers, one per inner vertex", at_least=1) = Field(
        None, description="rest twist per inner vertex [rad]")


class CSMStrandOptions(_Table):
    """``csm = {...}``: options of the chain-shape-matching solver for one strand; other
    solvers ignore them (docs/csm.md).  Half-widths are at least 1 here; the solver checks
    them against the strand (at most its number of segments)."""

    half_width: _integer(1) = Field(None, description="shape-matching region half-width "
                                                      "(default 2)")
    twist_half_width: _either(_integer(1), _list_of(_integer(1), "a list of integers >= 1, "
                                                    "one per segment", at_least=1),
                              _is_list) = Field(
        None, description="twist region half-width, one number or one per segment (a "
                          "non-uniform torsional rigidity; default: half_width)")
    twist_stiffness: Positive = Field(None, description="twisting stiffness beta [N m^2] "
                                                        "(default G J)")
    yield_stress: Positive = Field(None, description="yield stress [Pa] (default: the "
                                                     "rupture stress)")
    rupture_stress: Positive = Field(None, description="rupture stress [Pa] (default: never "
                                                       "tears)")
    plastic_modulus: Positive = Field(None, description="plastic slope of the stress-strain "
                                                        "curve [Pa] (default E / 10)")
    rupture_variation: Fraction = Field(None, description="relative random spread of the "
                                                          "rupture stress (default 1e-4)")


class StrandTable(_Table):
    """``[[strands]]``: one rod, open or closed; exactly one of points, line, helix, circle."""

    renamed: ClassVar[dict] = {"ghost_direction": "d1", "alpha": "pbd.alpha",
                               "ghost_distance": "pbd.ghost_distance",
                               "ghost_mass_ratio": "pbd.ghost_mass_ratio"}

    name: Name = Field(None, description="unique name used by attachments (default: "
                                         "'strand K', K = index)")
    material: Text = Field(description="a name from [materials]")
    points: _points(2) = Field(None, description="explicit vertices [m]")
    line: LineShape = Field(None, description="vertices on a segment")
    helix: HelixShape = Field(None, description="vertices on a helix")
    circle: CircleShape = Field(None, description="a closed ring of vertices")
    closed: Flag = Field(None, description="a closed loop: an edge joins the last vertex to the "
                                           "first (default: false; true for a circle)")
    rest_points: _points(2) = Field(None, description="stress-free shape [m], as many points as "
                                                      "the strand (default: the initial points)")
    d1: Direction = Field(None, description="material direction d1 of the first edge (the "
                                            "others by parallel transport), or one per edge")
    velocity: Vector = Field(None, description="uniform initial velocity [m/s]")
    initial_twist: Number = Field(0.0, description="twist of the initial material frames "
                                                   "relative to rest, spread over the length "
                                                   "[rad]")
    fixed: Indices = Field([], description="vertices held at their initial position (negative "
                                           "indices count from the end)")
    radius: Radius = Field(None, description="section radius [m], one number or one per vertex "
                                             "(a tapered strand; default: the material's)")
    friction: NonNegative = Field(None, description="Coulomb friction coefficient of the "
                                                    "strand, combined with each collider's as "
                                                    "the geometric mean (default: the "
                                                    "collider's alone)")
    pbd: PBDStrandOptions = Field(None, description="options of the pbd solver")
    der: DERStrandOptions = Field(None, description="options of the der solver")
    csm: CSMStrandOptions = Field(None, description="options of the csm solver")

    @property
    def shape(self) -> str:
        """The key that gives the points: ``points``, ``line``, ``helix`` or ``circle``."""
        return next(k for k in SHAPES if getattr(self, k) is not None)

    @property
    def n_points(self) -> int:
        s = getattr(self, self.shape)
        return len(s) if self.shape == "points" else s.n_points

    @property
    def is_closed(self) -> bool:
        return self.closed if self.closed is not None else self.shape == "circle"

    @model_validator(mode="after")
    def _consistent(self):
        given = [k for k in SHAPES if getattr(self, k) is not None]
        if len(given) != 1:
            raise located((), f"needs exactly one of {', '.join(SHAPES)}; got "
                              f"{', '.join(given) or 'none'}", None, rule=True)
        if self.shape == "circle" and self.closed is False:
            raise located(("closed",), "cannot be false for a circle", False)
        n = self.n_points
        if self.rest_points is not None and len(self.rest_points) != n:
            raise located(("rest_points",), f"must have {n} points, one per vertex; it has "
                                            f"{len(self.rest_points)}", self.rest_points)
        n_edges = n if self.is_closed else n - 1
        if self.d1 and isinstance(self.d1[0], list) and len(self.d1) != n_edges:
            raise located(("d1",), f"must be one vector or {n_edges} (one per edge); it has "
                                   f"{len(self.d1)}", self.d1)
        if isinstance(self.radius, list) and len(self.radius) != n:
            raise located(("radius",), f"must be one number or {n} (one per vertex); it has "
                                       f"{len(self.radius)}", self.radius)
        _check_indices(self.fixed, n, ("fixed",), "a vertex index")
        return self


def _check_indices(values: list[int], count: int, loc: tuple, what: str) -> None:
    for i, k in enumerate(values):
        if not -count <= k < count:
            raise located((*loc, i), f"must be {what} in [{-count}, {count - 1}]", k)


class Attachment(_Table):
    """``{strand, end, orientation}``: a strand end held by a frame or a body."""

    strand: Ref = Field(description="strand name or index")
    end: End = Field(0, description="0: first vertex, -1: last vertex")
    orientation: Flag = Field(True, description="also hold the end edge's material frame "
                                                "(false: a ball joint)")


_Attachments = _tables(Attachment, "a list of tables {strand, end, orientation}")


class FrameAttachment(Attachment):
    """``{strand, end, orientation, free_twist, slide_axis}``: a strand end held by a frame."""

    free_twist: Flag = Field(False, description="a swivel: the held end turns freely about the "
                                                "rod's axis (needs orientation)")
    slide_axis: NonZeroVector = Field(None, description="the end vertex slides freely along "
                                                        "this direction of the frame's axes, "
                                                        "through its initial position")

    @model_validator(mode="after")
    def _swivel(self):
        if self.free_twist and not self.orientation:
            raise located(("free_twist",), "needs orientation = true (without orientation the "
                                           "end already turns freely)", True)
        return self


_FrameAttachments = _tables(FrameAttachment, "a list of tables {strand, end, orientation, "
                                             "free_twist, slide_axis}")


class KeyframesTable(_Table):
    """``keyframes = {times, origins, rotations | rotvecs}``: poses at increasing times,
    interpolated smoothly (``strandlab.sim.motion.Keyframes``)."""

    times: _list_of(Number, "a list of at least 2 times", at_least=2) = Field(
        description="key times [s], increasing")
    origins: _list_of(Vector, "a list of origins [x, y, z], one per time") = Field(
        description="frame origin at each key [m]")
    rotations: _list_of(Rotation, "a list of rotation matrices, one per time") = Field(
        None, description="rows of the rotation matrix at each key (default: identity)")
    rotvecs: _list_of(Vector, "a list of rotation vectors, one per time") = Field(
        None, description="rotation vector at each key, axis times angle [rad]")

    @model_validator(mode="after")
    def _keys(self):
        n = len(self.times)
        for k in range(1, n):
            if not self.times[k] > self.times[k - 1]:
                raise located(("times", k), f"must be greater than the previous time "
                                            f"({self.times[k - 1]:g})", self.times[k])
        if self.rotations is not None and self.rotvecs is not None:
            raise located((), "may give rotations or rotvecs, not both", None, rule=True)
        for key in ("origins", "rotations", "rotvecs"):
            v = getattr(self, key)
            if v is not None and len(v) != n:
                raise located((key,), f"must have {n} entries, one per time; it has {len(v)}",
                              v)
        for k, r in enumerate(self.rotations or ()):
            a = np.array(r, dtype=np.float64)
            if not np.allclose(a.T @ a, np.eye(3), atol=1e-6) or np.linalg.det(a) <= 0:
                raise located(("rotations", k), "must be a proper rotation (orthonormal, "
                                                "det +1)", r)
        return self


class FrameTable(_Table):
    """``[[frames]]``: a kinematic frame, fixed, moving between ``start`` and ``stop`` or
    following keyframes."""

    origin: Vector = Field(None, description="frame origin [m] (required unless keyframes)")
    rotation: Rotation = Field(None, description="rows of a rotation matrix whose columns are "
                                                 "the frame axes (default: identity)")
    rotvec: Vector = Field(None, description="rotation vector, axis times angle [rad]")
    linear_velocity: Vector = Field([0.0, 0.0, 0.0], description="velocity of the origin "
                                                                 "[m/s]")
    angular_velocity: Vector = Field([0.0, 0.0, 0.0], description="world-frame angular "
                                                                  "velocity [rad/s]")
    start: Number = Field(0.0, description="the motion begins [s]")
    stop: Number = Field(None, description="the motion ends [s] (default: never)")
    keyframes: KeyframesTable = Field(None, description="poses at key times, interpolated "
                                                        "smoothly (instead of origin, rotation "
                                                        "and velocities)")
    attach: _FrameAttachments = Field([], description="strand ends clamped to this frame")

    @model_validator(mode="after")
    def _rotation(self):
        _one_rotation(self)
        if self.keyframes is None:
            if self.origin is None:
                raise located(("origin",), "is required (or give keyframes)", None, rule=True)
            return self
        given = [k for k in ("origin", "rotation", "rotvec", "linear_velocity",
                             "angular_velocity", "start", "stop") if k in self.model_fields_set]
        if given:
            raise located((), f"may give keyframes or {', '.join(given)}, not both", None,
                          rule=True)
        return self


class BoxShape(_Table):
    """``box = {center, size}``: a closed box of 8 vertices and 12 triangles."""

    center: Vector = Field(description="box centre [m]")
    size: BoxSize = Field(description="edge length [m], one number (a cube) or [sx, sy, sz]")


class MeshTable(_Table):
    """``[[meshes]]``: a deformable triangle mesh, from ``box`` or vertices + triangles."""

    name: Name = Field(None, description="unique name used by triangle attachments (default: "
                                         "'mesh K')")
    box: BoxShape = Field(None, description="a closed box")
    vertices: _points(3) = Field(None, description="explicit vertices [m]")
    triangles: Triangles = Field(None, description="vertex indices of each triangle")
    mass: Positive = Field(description="total mass [kg]")
    compliance: NonNegative = Field(0.0, description="compliance of the edge constraints "
                                                     "[m/N]")
    collide_radius: NonNegative = Field(0.0, description="contact radius of the vertices [m]")
    velocity: Vector = Field(None, description="uniform initial velocity [m/s]")
    fixed: Indices = Field([], description="vertices held still")

    @property
    def n_vertices(self) -> int:
        return 8 if self.box is not None else len(self.vertices)

    @property
    def n_triangles(self) -> int:
        return 12 if self.box is not None else len(self.triangles)

    @model_validator(mode="after")
    def _geometry(self):
        explicit = self.vertices is not None or self.triangles is not None
        if self.box is not None and explicit:
            raise located((), "may give box or vertices + triangles, not both", None, rule=True)
        if self.box is None and (self.vertices is None or self.triangles is None):
            raise located((), "needs box = {center, size} or both vertices and triangles", None,
                          rule=True)
        for i, tri in enumerate(self.triangles or ()):
            _check_indices(tri, self.n_vertices, ("triangles", i), "a vertex index")
        _check_indices(self.fixed, self.n_vertices, ("fixed",), "a vertex index")
        return self


class TriangleAttachment(_Table):
    """``[[triangle_attachments]]``: a strand end coupled to a mesh triangle."""

    strand: Ref = Field(description="strand name or index")
    mesh: Ref = Field(description="mesh name or index")
    triangle: _integer(0) = Field(description="triangle index within the mesh")
    end: End = Field(0, description="0: first vertex, -1: last vertex")


class BodyTable(_Table):
    """``[[bodies]]``: a small rigid body joining strand ends."""

    position: Vector = Field(description="centre [m]; attached strand ends must lie here")
    rotation: Rotation = Field(None, description="rows of a rotation matrix (default: "
                                                 "identity)")
    rotvec: Vector = Field(None, description="rotation vector, axis times angle [rad]")
    mass: Positive = Field(description="mass [kg]")
    size: Positive = Field(description="distance of its two ghost points from the centre [m]")
    attach: _Attachments = Field([], description="strand ends joined to the body")

    @model_validator(mode="after")
    def _rotation(self):
        _one_rotation(self)
        return self


class LoadTable(_Table):
    """``[[loads]]``: a force on one strand vertex, constant inside a time window."""

    strand: Ref = Field(description="strand name or index")
    vertex: Integer = Field(description="vertex index (negative indices count from the end)")
    force: Vector = Field(description="force [N]")
    start: NonNegative = Field(None, description="the load begins to act [s] (default: from "
                                                 "the start, time 0)")
    stop: Positive = Field(None, description="the load stops acting [s] (default: never)")

    @model_validator(mode="after")
    def _window(self):
        # a window that holds no time never acts: a mistake, not a load
        if self.start is not None and self.stop is not None and self.stop <= self.start:
            raise located(("stop",), f"must be > start ({self.start:g}): the load would never "
                                     "act", self.stop)
        return self


_FRICTION = "Coulomb friction coefficient"


class PlaneCollider(_Table):
    """A half-space: points stay on the side ``normal`` points to."""

    type: Literal["plane"] = Field(description="collider type")
    point: Vector = Field(description="a point of the plane [m]")
    normal: NonZeroVector = Field(description="outward normal")
    friction: NonNegative = Field(0.0, description=_FRICTION)


class SphereCollider(_Table):
    """A solid sphere."""

    type: Literal["sphere"] = Field(description="collider type")
    center: Vector = Field(description="centre [m]")
    radius: Positive = Field(description="radius [m]")
    friction: NonNegative = Field(0.0, description=_FRICTION)


class CapsuleCollider(_Table):
    """All points within ``radius`` of the segment ``a``-``b``."""

    type: Literal["capsule"] = Field(description="collider type")
    a: Vector = Field(description="first end of the axis [m]")
    b: Vector = Field(description="second end of the axis [m]")
    radius: Positive = Field(description="radius [m]")
    friction: NonNegative = Field(0.0, description=_FRICTION)


#: Collider tables by their ``type``.
COLLIDERS = {"plane": PlaneCollider, "sphere": SphereCollider, "capsule": CapsuleCollider}
_COLLIDER_ADAPTERS = {k: TypeAdapter(v) for k, v in COLLIDERS.items()}


def _collider(value, _handler):
    """Pick the collider table by ``type`` (with messages that list the known types)."""
    if not isinstance(value, dict):
        raise _expected("must be a table")
    kinds = ", ".join(repr(k) for k in COLLIDERS)
    if "type" not in value:
        raise located(("type",), f"is required: one of {kinds}", None, rule=True)
    kind = value["type"]
    if not isinstance(kind, str) or kind not in COLLIDERS:
        raise located(("type",), f"must be one of {kinds}", kind)
    return _COLLIDER_ADAPTERS[kind].validate_python(value)


Collider = Annotated[PlaneCollider | SphereCollider | CapsuleCollider,
                     Field(discriminator="type"), WrapValidator(_collider)]


def resolve(ref: str | int, names: list[str]) -> int | None:
    """Index of a reference by name or index into ``names``; ``None`` if there is none."""
    if isinstance(ref, str):
        return names.index(ref) if ref in names else None
    return ref % len(names) if -len(names) <= ref < len(names) else None


class SceneFile(_Table):
    """A whole scene file; every section is optional (the scene needs at least one strand,
    mesh or rigid body)."""

    model_config = ConfigDict(title="strandlab scene file")
    unknown: ClassVar[str] = "unknown section"

    scene: SceneTable = Field(default_factory=SceneTable, description="name, timing, gravity, "
                                                                      "camera")
    solver: SolverTable = Field(default_factory=SolverTable, description="solver type and "
                                                                         "settings")
    materials: Annotated[dict[str, MaterialTable],
                         _expect("a table of named materials", lambda v: isinstance(v, dict),
                                 inner=True)] = Field({}, description="named materials")
    strands: _tables(StrandTable, "an array of tables [[strands]]") = Field(
        [], description="rods, open or closed")
    frames: _tables(FrameTable, "an array of tables [[frames]]") = Field(
        [], description="kinematic frames and the strand ends clamped to them")
    meshes: _tables(MeshTable, "an array of tables [[meshes]]") = Field(
        [], description="deformable triangle meshes")
    triangle_attachments: _tables(TriangleAttachment, "an array of tables "
                                  "[[triangle_attachments]]") = Field(
        [], description="strand ends coupled to mesh triangles")
    bodies: _tables(BodyTable, "an array of tables [[bodies]]") = Field(
        [], description="small rigid bodies joining strand ends")
    loads: _tables(LoadTable, "an array of tables [[loads]]") = Field(
        [], description="forces on strand vertices")
    colliders: _tables(Collider, "an array of tables [[colliders]]") = Field(
        [], description="planes, spheres and capsules")
    simplicial: _tables(SimplicialTable, "an array of tables [[simplicial]]") = Field(
        [], description="labelled rod/shell/solid meshes (solver 'mixed')")

    def strand_names(self) -> list[str]:
        return [s.name if s.name is not None else f"strand {k}"
                for k, s in enumerate(self.strands)]

    def mesh_names(self) -> list[str]:
        return [m.name if m.name is not None else f"mesh {k}" for k, m in enumerate(self.meshes)]

    @model_validator(mode="after")
    def _references(self):
        strands, meshes = self.strand_names(), self.mesh_names()
        for section, names in (("strands", strands), ("meshes", meshes)):
            for k, name in enumerate(names):
                if names.index(name) < k:
                    raise located((section, k, "name"), f"must be unique; already used by "
                                                        f"{section}[{names.index(name)}]", name)
        for k, m in enumerate(self.simplicial):
            for name, part in m.parts.items():
                if part.kind == "rod" and part.material not in self.materials:
                    raise located(("simplicial", k, "parts", name, "material"), "unknown "
                                  "material; available: " + _names(self.materials),
                                  part.material)
            for i, c in enumerate(m.connections):
                for name in c.parts:
                    if name not in m.parts:
                        raise located(("simplicial", k, "connections", i, "parts"), "unknown "
                                      "part; available: " + _names(m.parts), name)
            for i, h in enumerate(m.holds):
                if h.frame is not None and not 0 <= h.frame < len(self.frames):
                    raise located(("simplicial", k, "holds", i, "frame"), f"index out of "
                                  f"range: there are {len(self.frames)} frames", h.frame)
        for k, s in enumerate(self.strands):
            if s.material not in self.materials:
                raise located(("strands", k, "material"), "unknown material; available: "
                              + _names(self.materials), s.material)
        for section in ("frames", "bodies"):
            for k, item in enumerate(getattr(self, section)):
                for i, a in enumerate(item.attach):
                    _reference((section, k, "attach", i, "strand"), a.strand, strands, "strand")
        for k, t in enumerate(self.triangle_attachments):
            _reference(("triangle_attachments", k, "strand"), t.strand, strands, "strand")
            m = _reference(("triangle_attachments", k, "mesh"), t.mesh, meshes, "mesh")
            n = self.meshes[m].n_triangles
            if t.triangle >= n:
                raise located(("triangle_attachments", k, "triangle"), f"must be a triangle "
                              f"index in [0, {n - 1}] of mesh {meshes[m]!r}", t.triangle)
        for k, ld in enumerate(self.loads):
            s = _reference(("loads", k, "strand"), ld.strand, strands, "strand")
            n = self.strands[s].n_points
            if not -n <= ld.vertex < n:
                raise located(("loads", k, "vertex"), f"must be a vertex index in [{-n}, "
                              f"{n - 1}] of strand {strands[s]!r}", ld.vertex)
        return self


def _names(names) -> str:
    return ", ".join(repr(n) for n in names) or "(none)"


def _reference(loc: tuple, ref, names: list[str], what: str) -> int:
    k = resolve(ref, names)
    if k is None:
        if isinstance(ref, str):
            raise located(loc, f"unknown {what}; available: {_names(names)}", ref)
        raise located(loc, f"index out of range: there are {len(names)} {what}s", ref)
    return k


#: Top-level sections of a scene file, in the order they are processed.
SECTIONS = tuple(SceneFile.model_fields)
