"""What every kind of annotation shares: the ``Node`` an annotation becomes, the two errors of
inference and conversion, and the process's ``$defs`` registry (one schema per class, under a
name unique in the process)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["ConversionError", "Node", "Unmappable", "closure_defs"]

_NoneType = type(None)
_MISSING = object()


class Unmappable(Exception):
    """An annotation that has no JSON Schema form; the message says what to use instead."""


class ConversionError(Exception):
    """A validated value that still could not become the annotated Python value."""

    def __init__(self, message: str, path: list[Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[Any] = path if path is not None else []

    def render(self) -> str:
        if not self.path:
            return self.message
        return f"parameter '{'.'.join(str(p) for p in self.path)}': {self.message}"


Converter = Callable[[Any], Any]


class Node(NamedTuple):
    schema: dict[str, Any]  # shared between users: never mutate
    conv: Converter | None
    refs: frozenset[str]  # $defs names this schema refers to (directly or through children)
    accepts_none: bool
    type_word: str  # the ToolParameter.type word


# ---------------------------------------------------------------------------------------------
# $defs registry: one schema per class per process, under a name unique in the process.

_DEFS: dict[str, dict[str, Any]] = {}
_DEF_REFS: dict[str, frozenset[str]] = {}
_DEF_OWNER: dict[str, Any] = {}  # def name -> the key (class or pydantic content) it belongs to
_KEY_NAME: dict[Any, str] = {}


def _def_name(key: Any, preferred: str, qualified: str) -> str:
    name = _KEY_NAME.get(key)
    if name is not None:
        return name
    for candidate in (preferred, qualified.replace("<", "").replace(">", "")):
        candidate = "".join(c if c.isalnum() or c in "_.-" else "_" for c in candidate) or "Model"
        if candidate not in _DEF_OWNER:
            break
    else:
        base, n = candidate, 2
        while f"{base}_{n}" in _DEF_OWNER:
            n += 1
        candidate = f"{base}_{n}"
    _DEF_OWNER[candidate] = key
    _KEY_NAME[key] = candidate
    return candidate


def closure_defs(refs: frozenset[str]) -> dict[str, dict[str, Any]]:
    """All $defs reachable from ``refs``, in a stable order."""
    out: dict[str, dict[str, Any]] = {}
    stack = sorted(refs, reverse=True)
    while stack:
        name = stack.pop()
        if name in out:
            continue
        out[name] = _DEFS[name]
        stack.extend(sorted(_DEF_REFS.get(name, ()), reverse=True))
    return dict(sorted(out.items()))


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


# Classes being analysed -> their def name (a class that refers to itself).
_IN_PROGRESS: dict[Any, str] = {}  # classes being analysed -> their def name (recursion)


_JSON_TYPE = {
    bool: "boolean",
    str: "string",
    int: "integer",
    float: "number",
    _NoneType: "null",
}  # bool before int


def _type_word(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, str):
        return t
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        return rest[0] if len(rest) == 1 else "any"
    if "$ref" in schema:
        return "object"
    if "enum" in schema:
        kinds = {_JSON_TYPE.get(type(v), "any") for v in schema["enum"]}
        kinds.discard("null")
        return kinds.pop() if len(kinds) == 1 else "any"
    return "any"


def _node(
    schema: dict[str, Any],
    conv: Converter | None,
    refs: frozenset[str] = frozenset(),
    accepts_none: bool = False,
) -> Node:
    return Node(schema, conv, refs, accepts_none, _type_word(schema))
