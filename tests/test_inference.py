# ruff: noqa: UP007, UP045  (these tests exercise the typing.Optional / typing.Union spellings on purpose)
"""Schema inference from annotations, argument conversion and definition-time errors.

This module deliberately does NOT use ``from __future__ import annotations`` (annotations are
real objects here); tests/test_callable_tools.py covers the string-annotation path.
"""

import collections.abc as cabc
import dataclasses
import datetime
import decimal
import enum
import ipaddress
import pathlib
import uuid
from typing import (
    Annotated,
    Any,
    Literal,
    NamedTuple,
    NewType,
    NotRequired,
    Optional,
    Required,
    TypedDict,
    Union,
)

import annotated_types
import jsonschema
import pydantic
import pytest
from agentmaker import ToolRegistrationError
from agentmaker.tools.signature import analyze
from inference_support import convert, make


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class UserId(str):
    pass


class Count(int):
    pass


Tag = NewType("Tag", str)


SCHEMAS = [
    ("str", str, {"type": "string"}),
    ("int", int, {"type": "integer"}),
    ("float", float, {"type": "number"}),
    ("bool", bool, {"type": "boolean"}),
    ("list", list, {"type": "array"}),
    ("tuple", tuple, {"type": "array"}),
    ("dict", dict, {"type": "object"}),
    ("set", set, {"type": "array", "uniqueItems": True}),
    ("str subclass", UserId, {"type": "string"}),
    ("int subclass", Count, {"type": "integer"}),
    ("NewType", Tag, {"type": "string"}),
    ("Any", Any, {}),
    ("object", object, {}),
    ("Optional", Optional[int], {"type": ["integer", "null"]}),
    ("pipe None", int | None, {"type": ["integer", "null"]}),
    ("Union", Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    (
        "Union with None",
        Union[int, str, None],
        {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
    ),
    ("Literal str", Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    ("Literal int", Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    ("Literal mixed", Literal["a", 1], {"type": ["string", "integer"], "enum": ["a", 1]}),
    ("Optional Literal", Optional[Literal["a"]], {"type": ["string", "null"], "enum": ["a", None]}),
    ("Enum", Color, {"type": "string", "enum": ["red", "blue"]}),
    ("IntEnum", Level, {"type": "integer", "enum": [1, 2]}),
    ("list[int]", list[int], {"type": "array", "items": {"type": "integer"}}),
    ("typing.List", list[str], {"type": "array", "items": {"type": "string"}}),
    (
        "nested list",
        list[list[str]],
        {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    ),
    ("Sequence", cabc.Sequence[int], {"type": "array", "items": {"type": "integer"}}),
    ("tuple[T, ...]", tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (
        "fixed tuple",
        tuple[int, str],
        {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "items": False,
            "minItems": 2,
            "maxItems": 2,
        },
    ),
    ("set[str]", set[str], {"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
    ("frozenset[int]", frozenset[int], {"type": "array", "uniqueItems": True, "items": {"type": "integer"}}),
    ("dict[str, int]", dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
    (
        "Mapping",
        cabc.Mapping[str, list[float]],
        {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}},
    ),
    (
        "dict Literal keys",
        dict[Literal["a", "b"], int],
        {
            "type": "object",
            "propertyNames": {"type": "string", "enum": ["a", "b"]},
            "additionalProperties": {"type": "integer"},
        },
    ),
    (
        "deep nesting",
        dict[str, list[tuple[int, ...] | None]],
        {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {"type": ["array", "null"], "items": {"type": "integer"}},
            },
        },
    ),
    ("datetime", datetime.datetime, {"type": "string", "format": "date-time"}),
    ("date", datetime.date, {"type": "string", "format": "date"}),
    ("time", datetime.time, {"type": "string", "format": "time"}),
    ("UUID", uuid.UUID, {"type": "string", "format": "uuid"}),
    ("Path", pathlib.Path, {"type": "string", "format": "path"}),
    ("timedelta", datetime.timedelta, {"type": "number", "description": "duration in seconds"}),
    ("Annotated str", Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
    (
        "Annotated outer first",
        Annotated[Annotated[int, "inner"], "outer"],
        {"type": "integer", "description": "inner"},
    ),
    (
        "Field bounds",
        Annotated[int, pydantic.Field(ge=1, le=5, description="d")],
        {"type": "integer", "description": "d", "minimum": 1, "maximum": 5},
    ),
    (
        "Field lengths",
        Annotated[str, pydantic.Field(min_length=2, max_length=3, pattern="^a")],
        {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^a"},
    ),
    (
        "Field list length",
        Annotated[list[int], pydantic.Field(min_length=1)],
        {"type": "array", "items": {"type": "integer"}, "minItems": 1},
    ),
    (
        "annotated_types",
        Annotated[float, annotated_types.Gt(0), annotated_types.Lt(1)],
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    ),
    ("pydantic fallback", ipaddress.IPv4Address, {"$ref": "#/$defs/IPv4Address"}),
]


@pytest.mark.parametrize(("label", "ann", "expected"), SCHEMAS, ids=[c[0] for c in SCHEMAS])
def test_schema(label: str, ann: Any, expected: dict[str, Any]) -> None:
    spec = analyze(make(ann))
    assert spec.schema["properties"]["x"] == expected
    assert spec.schema["required"] == ["x"]
    jsonschema.Draft202012Validator.check_schema(spec.schema)


CONVERSIONS = [
    ("Enum member", Color, "blue", Color.BLUE),
    ("IntEnum member", Level, 2, Level.HIGH),
    ("str subclass", UserId, "u1", UserId("u1")),
    ("tuple", tuple, [1, 2], (1, 2)),
    ("tuple[int, ...]", tuple[int, ...], [1, 2], (1, 2)),
    ("fixed tuple with enum", tuple[Color, int], ["red", 3], (Color.RED, 3)),
    ("set", set[str], ["a", "b", "a"], {"a", "b"}),
    ("frozenset", frozenset[int], [1, 1], frozenset({1})),
    ("list of enums", list[Color], ["red", "blue"], [Color.RED, Color.BLUE]),
    ("dict of dates", dict[str, datetime.date], {"a": "2024-05-01"}, {"a": datetime.date(2024, 5, 1)}),
    (
        "datetime",
        datetime.datetime,
        "2024-05-01T12:30:00Z",
        datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.UTC),
    ),
    ("time", datetime.time, "08:15:00", datetime.time(8, 15)),
    (
        "UUID",
        uuid.UUID,
        "12345678-1234-5678-1234-567812345678",
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
    ),
    ("Path", pathlib.Path, "a/b.txt", pathlib.Path("a/b.txt")),
    ("Decimal from number", decimal.Decimal, 1.1, decimal.Decimal("1.1")),
    ("Decimal from text", decimal.Decimal, "2.50", decimal.Decimal("2.50")),
    ("timedelta", datetime.timedelta, 90, datetime.timedelta(seconds=90)),
    ("Optional passes None", Optional[Color], None, None),
    ("Optional converts", Optional[Color], "red", Color.RED),
    ("Literal of enum members", Literal[Color.RED], "red", Color.RED),
    ("Union picks by JSON kind", Union[int, datetime.date], "2024-01-02", datetime.date(2024, 1, 2)),
    ("Union keeps int", Union[int, datetime.date], 5, 5),
    ("pydantic fallback", ipaddress.IPv4Address, "10.0.0.1", ipaddress.IPv4Address("10.0.0.1")),
]


@pytest.mark.parametrize(("label", "ann", "value", "expected"), CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_conversion(label: str, ann: Any, value: Any, expected: Any) -> None:
    out = convert(ann, value)
    assert out == expected
    assert type(out) is type(expected)


@pytest.mark.parametrize("ann", [str, int, list[int], dict[str, list[str]], Optional[str], Literal["a"], Any])
def test_json_native_types_need_no_conversion(ann: Any) -> None:
    spec = analyze(make(ann))
    assert spec.plain


# ---------------------------------------------------------------------------------------------
# Object-shaped classes


@dataclasses.dataclass
class Point:
    """A point on the plane.

    Attributes:
        x: Horizontal.
        y: Vertical.
    """

    x: int
    y: int = 0
    label: Annotated[str, "a label"] = ""
    tags: list[str] = dataclasses.field(default_factory=list)
    hidden: int = dataclasses.field(default=7, init=False)


@dataclasses.dataclass
class Shape:
    points: list[Point]
    color: Color = Color.RED


@dataclasses.dataclass
class TreeNode:
    value: int
    children: "list[TreeNode]" = dataclasses.field(default_factory=list)


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class Options(TypedDict, total=False):
    verbose: bool
    level: Required[Level]


class Pair(NamedTuple):
    left: int
    right: str = "r"


class Address(pydantic.BaseModel):
    street: str
    zip_code: str = pydantic.Field(description="postal code", min_length=5)


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0)
    address: Address | None = None
    friends: list["Person"] = []


def test_dataclass_schema_and_defs() -> None:
    spec = analyze(make(Shape))
    schema = spec.schema
    assert schema["properties"]["x"] == {"$ref": "#/$defs/Shape"}
    assert schema["$defs"]["Point"] == {
        "type": "object",
        "description": "A point on the plane.",
        "properties": {
            "x": {"type": "integer", "description": "Horizontal."},
            "y": {"type": "integer", "description": "Vertical.", "default": 0},
            "label": {"type": "string", "description": "a label", "default": ""},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
    }
    assert schema["$defs"]["Shape"]["properties"]["points"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Point"},
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    value = {"points": [{"x": 1, "y": None, "tags": ["t"]}], "color": "blue"}
    with pytest.raises(jsonschema.ValidationError):  # a default does not make a field nullable
        jsonschema.validate({"x": value}, schema)
    jsonschema.validate({"x": {"points": [{"x": 1, "tags": ["t"]}], "color": "blue"}}, schema)
    out = spec.prepare({"x": value})[1]["x"]  # a null that reaches the converter means the default
    assert out == Shape([Point(1, 0, "", ["t"])], Color.BLUE)


def test_recursive_dataclass() -> None:
    spec = analyze(make(TreeNode))
    node = spec.schema["$defs"]["TreeNode"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    value = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}
    jsonschema.validate({"x": value}, spec.schema)
    assert spec.prepare({"x": value})[1]["x"] == TreeNode(1, [TreeNode(2, [TreeNode(3)])])


def test_typeddict_total_and_not() -> None:
    spec = analyze(make(Movie))
    movie = spec.schema["$defs"]["Movie"]
    assert movie["required"] == ["title"]
    assert movie["properties"]["year"] == {"type": "integer"}
    assert spec.prepare({"x": {"title": "T", "year": None}})[1]["x"] == {"title": "T"}
    opts = analyze(make(Options)).schema["$defs"]["Options"]
    assert opts["required"] == ["level"]
    assert analyze(make(Options)).prepare({"x": {"level": 2}})[1]["x"] == {"level": Level.HIGH}


def test_namedtuple() -> None:
    spec = analyze(make(Pair))
    assert spec.schema["$defs"]["Pair"]["required"] == ["left"]
    assert spec.prepare({"x": {"left": 1}})[1]["x"] == Pair(1, "r")


def test_pydantic_model() -> None:
    spec = analyze(make(Person))
    schema = spec.schema
    jsonschema.Draft202012Validator.check_schema(schema)
    refs = _all_refs(schema)
    assert refs and all(r.startswith("#/$defs/") and r[len("#/$defs/") :] in schema["$defs"] for r in refs)
    person = schema["$defs"]["Person"]
    assert person["properties"]["age"]["minimum"] == 0
    assert "title" not in person
    assert schema["$defs"]["Address"]["properties"]["zip_code"]["description"] == "postal code"
    assert person["required"] == ["name", "age"]
    value = {
        "name": "A",
        "age": 1,
        "friends": [
            {"name": "B", "age": 3, "friends": None, "address": {"street": "s", "zip_code": "12345"}}
        ],
    }
    with pytest.raises(jsonschema.ValidationError):  # a default does not make a field nullable
        jsonschema.validate({"x": value}, schema)
    out = spec.prepare({"x": value})[1]["x"]
    assert isinstance(out, Person) and out.friends[0].address == Address(street="s", zip_code="12345")
    assert out.friends[0].friends == []  # null meant "use the default"


def test_pydantic_validation_error_is_a_readable_error() -> None:
    spec = analyze(make(Person))
    text = spec.prepare({"x": {"name": "A", "age": 1, "address": {"street": "s", "zip_code": "1"}}})
    assert isinstance(text, str)
    assert text.startswith("Error: tool 'f' failed parameter validation: parameter 'x': address.zip_code:")


def test_same_class_name_in_two_places_gets_two_defs() -> None:
    def outer() -> type:
        @dataclasses.dataclass
        class Point:
            z: str

        return Point

    other = outer()
    spec = analyze(make(tuple[Point, other]))
    defs = spec.schema["$defs"]
    assert len(defs) == 2
    assert {d["required"][0] for d in defs.values()} == {"x", "z"}


def _all_refs(obj: Any) -> list[str]:
    if isinstance(obj, dict):
        out = [obj["$ref"]] if isinstance(obj.get("$ref"), str) else []
        for v in obj.values():
            out += _all_refs(v)
        return out
    if isinstance(obj, list):
        return [r for v in obj for r in _all_refs(v)]
    return []


# ---------------------------------------------------------------------------------------------
# Defaults and required-ness


def test_required_iff_no_default_and_json_defaults_shown() -> None:
    def f(
        a: int,
        b: Optional[int],
        c: str = "x",
        d: Optional[int] = None,
        e: Color = Color.BLUE,
        g: datetime.date = datetime.date(2024, 1, 1),
        h: object = object(),
        i: float = float("inf"),
        *,
        k: list[int] = [1, 2],  # noqa: B006
    ) -> None:
        pass

    spec = analyze(f)
    props = spec.schema["properties"]
    assert spec.schema["required"] == ["a", "b"]
    assert props["b"] == {"type": ["integer", "null"]}
    assert props["c"] == {"type": "string", "default": "x"}
    assert props["d"] == {"type": ["integer", "null"], "default": None}
    assert props["e"]["default"] == "blue"
    assert props["g"]["default"] == "2024-01-01"
    assert "default" not in props["h"] and "default" not in props["i"]
    assert props["k"]["default"] == [1, 2]
    assert spec.null_defaults == ("c", "e", "g", "i", "k")
    assert [p.required for p in spec.params] == [True, True, False, False, False, False, False, False, False]


# ---------------------------------------------------------------------------------------------
# A class with no schema (the definition-time errors name it: tests/test_definition_errors.py)


class Opaque:
    pass


# ---------------------------------------------------------------------------------------------
# Conversion failures are error texts naming the path


def test_conversion_errors_name_the_path() -> None:
    def f(when: datetime.date, shapes: list[Shape], ids: dict[str, uuid.UUID] | None = None) -> None: ...

    spec = analyze(f)
    assert spec.prepare({"when": "yesterday", "shapes": []}) == (
        "Error: tool 'f' failed parameter validation: parameter 'when': 'yesterday' is not a valid date (ISO 8601)"
    )
    assert spec.prepare({"when": "2024-01-01", "shapes": [{"points": [{"x": 1}]}], "ids": {"k": "nope"}}) == (
        "Error: tool 'f' failed parameter validation: parameter 'ids.k': 'nope' is not a valid uuid"
    )
    assert spec.prepare(
        {"when": "2024-01-01", "shapes": [{"points": []}, {"points": [], "color": "green"}]}
    ) == (
        "Error: tool 'f' failed parameter validation: parameter 'shapes.1.color': 'green' is not a valid Color"
    )


def test_constructor_failure_is_an_error_text() -> None:
    @dataclasses.dataclass
    class Positive:
        n: int

        def __post_init__(self) -> None:
            if self.n <= 0:
                raise ValueError("n must be positive")

    spec = analyze(make(Positive))
    assert spec.prepare({"x": {"n": -1}}) == (
        "Error: tool 'f' failed parameter validation: parameter 'x': could not build Positive: "
        "ValueError: n must be positive"
    )


# ---------------------------------------------------------------------------------------------
# Without pydantic


def test_without_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from agentmaker.tools.schema import infer as _schema_infer
    from agentmaker.tools.schema import pydantic_models as _pydantic_schema

    monkeypatch.setitem(sys.modules, "pydantic", None)  # `import pydantic` now raises ImportError
    monkeypatch.setattr(_pydantic_schema, "_PYDANTIC", None)
    monkeypatch.setattr(_schema_infer, "_CACHE", {})
    monkeypatch.setattr(_pydantic_schema, "_NODES", {})

    def f(p: Shape, t: Movie, c: Color, when: datetime.datetime | None = None) -> None: ...

    spec = analyze(f)
    assert set(spec.schema["$defs"]) == {"Shape", "Point", "Movie"}

    def g(ip: ipaddress.IPv4Address) -> None: ...

    with pytest.raises(ToolRegistrationError, match="parameter 'ip' annotation"):
        analyze(g)


def test_concurrent_definitions_get_complete_defs() -> None:
    import threading

    def make_family(i: int) -> Any:
        leaf = dataclasses.make_dataclass(f"Leaf{i}", [("v", int)])
        node = dataclasses.make_dataclass(
            f"Branch{i}", [("leaves", list[leaf]), ("tag", str, dataclasses.field(default=""))]
        )
        return make(dict[str, node])

    funcs = [make_family(i) for i in range(24)]
    results: list[Any] = []
    barrier = threading.Barrier(4)

    def work(chunk: list[Any]) -> None:
        barrier.wait()
        results.extend(analyze(f).schema for f in chunk)

    threads = [threading.Thread(target=work, args=(funcs[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 24
    for schema in results:
        jsonschema.Draft202012Validator.check_schema(schema)
        assert all(r[len("#/$defs/") :] in schema["$defs"] for r in _all_refs(schema))
