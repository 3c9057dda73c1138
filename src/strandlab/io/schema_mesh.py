"""Scene-file tables of labelled rod/shell/solid meshes (``[[simplicial]]``, solver ``mixed``);
part of the format of :mod:`strandlab.io.schema`."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from .schema_types import (
    Flag,
    Indices,
    Integer,
    Name,
    NonNegative,
    Positive,
    Vector,
    _expect,
    _list_of,
    _number,
    _Table,
    _tables,
    located,
)

__all__ = ["PartTable", "ConnectionTable", "HoldTable", "SimplicialTable"]


class PartTable(_Table):
    """``[simplicial.parts.NAME]``: the kind and material of a labelled part of a mesh file.
    Rod parts name a ``[materials]`` entry; shells and solids give their material here."""

    kind: Literal["rod", "shell", "solid"] = Field(description="rod edges, shell triangles or "
                                                               "solid tetrahedra")
    material: Name = Field(None, description="rod parts: a [materials] name")
    young_modulus: Positive = Field(None, description="shells, solids: Young's modulus [Pa]")
    poisson_ratio: _number("a number in (-1, 0.5)", gt=-1, lt=0.5) = Field(
        None, description="shells, solids: Poisson's ratio")
    thickness: Positive = Field(None, description="shells: thickness [m]")
    density: Positive = Field(None, description="shells, solids: density [kg/m^3]")

    @model_validator(mode="after")
    def _fields(self):
        need = {"rod": ("material",), "shell": ("young_modulus", "poisson_ratio", "thickness",
                                                "density"),
                "solid": ("young_modulus", "poisson_ratio", "density")}[self.kind]
        for k in need:
            if getattr(self, k) is None:
                raise located((k,), f"is required for a {self.kind} part", None, rule=True)
        for k in ("material", "young_modulus", "poisson_ratio", "thickness", "density"):
            if k not in need and getattr(self, k) is not None:
                raise located((k,), f"is not a key of a {self.kind} part", getattr(self, k))
        return self


class ConnectionTable(_Table):
    """``[[simplicial.connections]]``: two parts joined where they meet (docs/mixed.md)."""

    kind: Literal["point", "curve"] = Field(description="at shared vertices or along shared "
                                                        "edges")
    parts: _list_of(Name, "a list of 2 part names", n=2) = Field(description="the two parts")
    mode: Literal["elastic", "hard", "free"] = Field("elastic", description="energies, stiff "
                                                                           "penalty or none")
    twist_stiffness: NonNegative = Field(0.0, description="point: k_t [N m / rad^2]")
    bend_stiffness: NonNegative = Field(0.0, description="point: k_b [N m / rad^2]; curve: per "
                                                         "unit length [N / rad^2]")
    hard_stiffness: NonNegative = Field(0.0, description="hard mode's penalty stiffness")
    angle_update: Literal["incremental2", "incremental1", "direct"] = Field(
        "incremental2", description="how connection angles are followed (section 3.1)")
    vertices: Indices = Field(None, description="point: only these shared vertices")


class HoldTable(_Table):
    """``[[simplicial.holds]]``: vertices held in place, or moved by a frame: given by index,
    or as every vertex of a part, or inside a box, or of a part inside a box."""

    vertices: Indices = Field(None, description="vertex indices of the mesh file")
    part: Name = Field(None, description="or every vertex of this part of the file (with box: "
                                         "those inside the box)")
    box: _list_of(Vector, "two corners [[x, y, z], [x, y, z]]", n=2) = Field(
        None, description="or every vertex of the mesh (of part, where given) inside this box: "
                          "its lower and upper corners [m], in strandlab's coordinates (after "
                          "scale and up)")
    frame: Integer = Field(None, description="index of the [[frames]] entry that moves them "
                                             "(default: held in place)")
    rod_twist: Flag = Field(True, description="rod edges between held vertices turn with them")
    until: Positive = Field(None, description="released from this time on [s] (default: "
                                              "held for ever)")
    turn_only: Flag = Field(False, description="the vertices stay in place and the frame "
                                               "only turns the rod edges between them")

    @model_validator(mode="after")
    def _which(self):
        if (self.vertices is None) == (self.box is None and self.part is None):
            raise located(("vertices",), "give either vertices, or part or box (or both)", None,
                          rule=True)
        if self.box is not None and any(lo > hi for lo, hi in zip(*self.box)):
            raise located(("box",), "the first corner must be the lower one on every axis",
                          self.box)
        return self


class SimplicialTable(_Table):
    """``[[simplicial]]``: a labelled rod/shell/solid mesh from a Gmsh, VTU, OBJ, USD or Alembic
    file (solver ``mixed``)."""

    name: Name = Field(None, description="name (default: the file's stem)")
    file: Name = Field(description="mesh file (.msh, .vtu, a Gmsh script .geo, .obj, "
                                   ".usd/.usda/.usdc/.usdz or .abc), relative to the scene "
                                   "file")
    scale: Positive = Field(None, description="metres per file unit (default: a USD file's "
                                              "metersPerUnit, else 1)")
    up: Literal["z", "y"] = Field(None, description="the file's up axis (y: (x, y, z) is read "
                                                    "as (x, -z, y); default: a USD file's "
                                                    "upAxis, y for .abc, else z)")
    weld: NonNegative = Field(1e-6, description=".obj, .usd, .abc: vertices this close [file "
                                                "units] become one")
    parts: Annotated[dict[str, PartTable],
                     _expect("a table of named parts", lambda v: isinstance(v, dict),
                             inner=True)] = Field(description="kind and material per part "
                                                              "(the file's physical names)")
    connections: _tables(ConnectionTable, "an array of tables [[simplicial.connections]]") = \
        Field([], description="connections between parts")
    holds: _tables(HoldTable, "an array of tables [[simplicial.holds]]") = Field(
        [], description="held or frame-driven vertices")
