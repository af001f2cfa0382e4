"""``Literal[...]`` and ``Enum`` annotations: a JSON Schema ``enum`` of plain JSON values, and the
conversion from a value the model sent back to the Enum member the function expects."""

from __future__ import annotations

import enum
from typing import Any

from agentmaker.tools.schema.node import _JSON_TYPE, ConversionError, Node, Unmappable, _node, _NoneType

__all__ = ["enum_node", "literal_node"]


def _enum_type(values: list[Any]) -> str | list[str]:
    """The JSON type(s) of a list of enum values (subclasses of str/int count as their base)."""
    kinds: list[str] = []
    for v in values:
        k = next((word for base, word in _JSON_TYPE.items() if isinstance(v, base)), "string")
        if k not in kinds:
            kinds.append(k)
    return kinds[0] if len(kinds) == 1 else kinds


def literal_node(values: tuple[Any, ...]) -> Node:
    """``Literal[...]``: an enum of its values; Enum members among them stand for their values and
    are given back to the function as members."""
    out: list[Any] = []
    members: dict[Any, Any] = {}
    for v in values:
        if isinstance(v, enum.Enum):
            members[(type(v.value), v.value)] = v
            v = v.value
        if not isinstance(v, (str, int, float, bool, _NoneType)):
            raise Unmappable(f"Literal value {v!r} is not a JSON value")
        if v not in out or any(type(x) is not type(v) for x in out if x == v):
            out.append(v)
    schema: dict[str, Any] = {"type": _enum_type(out), "enum": out}
    conv = None
    if members:

        def conv(value: Any) -> Any:
            return members.get((type(value), value), value)

    return _node(schema, conv, accepts_none=None in out)


def enum_node(cls: type[enum.Enum]) -> Node:
    """An Enum class: an enum of its member values, converted back to members on the way in."""
    values = [m.value for m in cls]
    for v in values:
        if not isinstance(v, (str, int, float, bool, _NoneType)):
            raise Unmappable(
                f"Enum {cls.__name__} has the non-JSON value {v!r}; use str or int member values"
            )
    if not values:
        raise Unmappable(f"Enum {cls.__name__} has no members")
    schema: dict[str, Any] = {"type": _enum_type(values), "enum": values}

    def conv(value: Any) -> Any:
        try:
            return cls(value)
        except ValueError:
            raise ConversionError(f"{value!r} is not a valid {cls.__name__}") from None

    return _node(schema, conv, accepts_none=None in values)
