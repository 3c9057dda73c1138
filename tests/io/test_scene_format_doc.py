"""docs/scene-format.md documents every key of the scene file format: each property name of
the JSON Schema, at every level, and each setting of the solvers a file can name."""
from dataclasses import fields
from pathlib import Path

import pytest

from strandlab.io.scenefile import scene_json_schema
from strandlab.sim.solver import get_solver

DOC = Path(__file__).resolve().parents[2] / "docs" / "scene-format.md"


def _property_names(node, path: str = "") -> dict[str, str]:
    """{property name: a JSON path where it occurs} over the whole schema."""
    out: dict[str, str] = {}
    if isinstance(node, dict):
        for name in node.get("properties", {}):
            out.setdefault(name, f"{path}/properties/{name}")
        for key, value in node.items():
            out.update({k: v for k, v in _property_names(value, f"{path}/{key}").items()
                        if k not in out})
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.update({k: v for k, v in _property_names(value, f"{path}/{i}").items()
                        if k not in out})
    return out


def test_the_walk_finds_nested_properties():
    names = _property_names(scene_json_schema())
    # top-level sections, keys of tables inside arrays, of inline tables, of union members
    for name in ("strands", "segments", "ghost_mass_ratio", "orientation", "normal", "a"):
        assert name in names
    assert len(names) > 60


def test_every_key_of_the_schema_is_documented():
    text = DOC.read_text(encoding="utf-8")
    names = _property_names(scene_json_schema())
    missing = sorted(f"{n} ({where})" for n, where in names.items() if f"`{n}`" not in text)
    assert not missing, "keys missing from docs/scene-format.md: " + ", ".join(missing)


#: settings the other solvers' tables refer to pbd's for ("... as for `pbd`")
_AS_FOR_PBD = {"check_finite", "max_strain", "max_speed"}


@pytest.mark.parametrize("solver", ["pbd", "der", "csm", "mixed"])
def test_every_solver_setting_is_documented(solver):
    # in the solver's own part of the [solver] section: from its "For `type = ...`" line to
    # the next solver's (pbd's table follows the section's first paragraph)
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### `[solver]`"):text.index("### `[materials.NAME]`")]
    start = section.index(f'For `type = "{solver}"`')
    nxt = section.find("For `type = ", start + 1)
    own = section[start:nxt if nxt > 0 else len(section)]
    missing = sorted(f.name for f in fields(get_solver(solver).Settings)
                     if f"`{f.name}`" not in own
                     and not (solver != "pbd" and f.name in _AS_FOR_PBD))
    assert not missing, (f"{solver} settings missing from docs/scene-format.md: "
                         + ", ".join(missing))


def test_every_key_has_a_description_in_the_schema():
    schema = scene_json_schema()
    undescribed = [f"{model}.{name}" for model, d in schema["$defs"].items()
                   for name, prop in d.get("properties", {}).items()
                   if not prop.get("description")]
    undescribed += [n for n, p in schema["properties"].items() if not p.get("description")]
    assert not undescribed, undescribed
