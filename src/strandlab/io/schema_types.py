"""Value types and the table base of the scene file format (:mod:`strandlab.io.schema`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    WrapValidator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

__all__ = ["located", "Number", "Positive", "NonNegative", "Fraction", "PoissonRatio",
           "Integer", "Text", "Name", "Flag", "Vector", "NonZeroVector", "Rotation",
           "Indices", "Triangles", "Ref", "End", "Alpha", "Direction", "BoxSize",
           "PositiveOrList", "Radius"]


# ---------------------------------------------------------------------------------- errors
def _expected(message: str) -> PydanticCustomError:
    """An error about one value; the message is completed with the value found."""
    return PydanticCustomError("scene", "{message}", {"message": message})


def _rule(message: str) -> PydanticCustomError:
    """An error about a table as a whole; the message says what was found."""
    return PydanticCustomError("scene_rule", "{message}", {"message": message})


def located(loc: tuple, message: str, value: Any, *, rule: bool = False) -> ValidationError:
    """A validation error at ``loc`` (relative to the model raising it) about ``value``."""
    err = (_rule if rule else _expected)(message)
    return ValidationError.from_exception_data(
        "scene file", [InitErrorDetails(type=err, loc=tuple(loc), input=value)])


# ---------------------------------------------------------------------------------- value types
def _expect(what: str, accept: Callable[[Any], bool] | None = None, *,
            inner: bool = False) -> WrapValidator:
    """Report any failure as ``must be <what>``.

    ``accept`` is checked first (e.g. the length of a list); with ``inner`` the errors of the
    items are passed on with their own paths, otherwise they are replaced by this message.
    """
    def check(value, handler):
        if accept is not None and not accept(value):
            raise _expected(f"must be {what}")
        if inner:
            return handler(value)
        try:
            return handler(value)
        except ValidationError:
            raise _expected(f"must be {what}") from None
    return WrapValidator(check)


def _either(first, second, use_second: Callable[[Any], bool]):
    """``first`` or ``second``, chosen by the input's form (errors keep their item paths)."""
    adapters = (TypeAdapter(first), TypeAdapter(second))
    return Annotated[first | second,
                     WrapValidator(lambda v, _h: adapters[bool(use_second(v))].validate_python(v))]


def _number(what: str = "a finite number", **bounds):
    return Annotated[float, Field(strict=True, allow_inf_nan=False, **bounds), _expect(what)]


def _integer(minimum: int | None = None):
    what = "an integer" if minimum is None else f"an integer >= {minimum}"
    return Annotated[int, Field(strict=True, ge=minimum), _expect(what)]


def _list_of(item, what: str, n: int | None = None, at_least: int = 0):
    """A list of ``item``: exactly ``n`` of them, or at least ``at_least``."""
    def ok(v) -> bool:
        return isinstance(v, list) and (len(v) == n if n is not None else len(v) >= at_least)

    bounds = {"min_length": n, "max_length": n} if n is not None else (
        {"min_length": at_least} if at_least else {})
    return Annotated[list[item], Field(**bounds), _expect(what, ok, inner=True)]


def _nonzero(v: list) -> list:
    if not any(v):
        raise _expected("must be a non-zero vector")
    return v


def _is_list(v) -> bool:
    return isinstance(v, list)


Number = _number()
Positive = _number("a finite number > 0", gt=0)
NonNegative = _number("a finite number >= 0", ge=0)
Fraction = _number("a number in [0, 1]", ge=0, le=1)
PoissonRatio = _number("a number in (-1, 0.5]", gt=-1, le=0.5)
Integer = _integer()
Text = Annotated[str, Field(strict=True), _expect("a string")]
Name = Annotated[str, Field(strict=True, pattern=r"\S"), _expect("a non-empty string")]
Flag = Annotated[bool, Field(strict=True), _expect("true or false")]
Vector = _list_of(Number, "a list of 3 numbers [x, y, z]", n=3)
NonZeroVector = Annotated[Vector, AfterValidator(_nonzero)]
Rotation = _list_of(Vector, "3 rows of 3 numbers (a rotation matrix)", n=3)
Indices = _list_of(Integer, "a list of integer indices")
Triangles = _list_of(_list_of(Integer, "3 vertex indices [i, j, k]", n=3),
                     "a non-empty list of [i, j, k] vertex indices", at_least=1)
Ref = Annotated[str | int,
                _expect("a name (string) or an index (integer)",
                        lambda v: isinstance(v, (str, int)) and not isinstance(v, bool))]
End = Annotated[Literal[0, -1], _expect("0 (first vertex) or -1 (last vertex)",
                                        lambda v: type(v) is int and v in (0, -1))]
Alpha = _either(Fraction, _list_of(Fraction, "a list of 3 numbers in [0, 1]", n=3), _is_list)
Direction = _either(NonZeroVector, _list_of(NonZeroVector, "a list of vectors, one per edge",
                                              at_least=1),
                    lambda v: isinstance(v, list) and bool(v) and isinstance(v[0], list))
BoxSize = _either(Positive, _list_of(Positive, "a list of 3 numbers > 0", n=3), _is_list)
PositiveOrList = _either(Positive, _list_of(Positive, "a list of numbers > 0", at_least=1),
                         _is_list)
Radius = _either(Positive, _list_of(Positive, "a list of numbers > 0, one per vertex",
                                    at_least=2), _is_list)


def _points(at_least: int):
    return _list_of(Vector, f"a list of at least {at_least} points [x, y, z]",
                    at_least=at_least)


def _tables(model, what: str):
    """An array of tables (``[[name]]`` in TOML, a list of objects in JSON)."""
    return Annotated[list[model], _expect(what, _is_list, inner=True)]


def _no_null_defaults(schema: dict) -> None:
    """Optional keys without a default value show no ``default: null`` in the JSON Schema."""
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


# ---------------------------------------------------------------------------------- tables
class _Table(BaseModel):
    """A table of a scene file: known keys only, strict types."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_no_null_defaults)
    unknown: ClassVar[str] = "unknown key"
    renamed: ClassVar[dict] = {}  # former keys -> their new place, named in the message

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data):
        if not isinstance(data, dict):
            raise _expected("must be a table")
        if cls.model_config.get("extra") == "forbid":
            for key in data:
                if key not in cls.model_fields:
                    now = f" (now {cls.renamed[key]})" if key in cls.renamed else ""
                    raise PydanticCustomError(
                        "unknown_key", "{what} {key}{now}; allowed: {allowed}",
                        {"what": cls.unknown, "key": repr(key), "now": now,
                         "allowed": ", ".join(cls.model_fields)})
        return data
