"""Scalar classes carried as JSON strings or numbers: datetime / date / time (ISO 8601 text with a
``format``), timedelta (seconds), UUID, paths and Decimal; converted on the way in."""

from __future__ import annotations

import datetime as _dt
import decimal
import pathlib
import uuid
from typing import Any

from agentmaker.tools.schema.node import ConversionError, Node, _node

__all__ = ["scalar_node"]

_DECIMAL_TEXT = r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$"


def scalar_node(cls: type) -> Node | None:
    """The node for a scalar class, or None when ``cls`` is not one of them."""
    if issubclass(cls, _dt.datetime):  # before date: datetime is a date
        return _iso(cls, "date-time")
    if issubclass(cls, _dt.date):
        return _iso(cls, "date")
    if issubclass(cls, _dt.time):
        return _iso(cls, "time")
    if issubclass(cls, _dt.timedelta):
        return _node({"type": "number", "description": "duration in seconds"}, _timedelta_conv)
    if issubclass(cls, uuid.UUID):
        return _node({"type": "string", "format": "uuid"}, _uuid_conv)
    if issubclass(cls, pathlib.PurePath):
        return _node({"type": "string", "format": "path"}, cls)
    if issubclass(cls, decimal.Decimal):
        return _node(
            {"anyOf": [{"type": "number"}, {"type": "string", "pattern": _DECIMAL_TEXT}]}, _decimal_conv
        )
    return None


def _iso(cls: Any, fmt: str) -> Node:
    def conv(value: Any) -> Any:
        try:
            return cls.fromisoformat(value)
        except (TypeError, ValueError):
            raise ConversionError(f"{value!r} is not a valid {fmt} (ISO 8601)") from None

    return _node({"type": "string", "format": fmt}, conv)


def _uuid_conv(value: Any) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except (TypeError, ValueError, AttributeError):
        raise ConversionError(f"{value!r} is not a valid uuid") from None


def _decimal_conv(value: Any) -> decimal.Decimal:
    try:
        result = decimal.Decimal(value if isinstance(value, str) else repr(value))
    except (decimal.InvalidOperation, TypeError, ValueError):
        raise ConversionError(f"{value!r} is not a valid decimal number") from None
    if not result.is_finite():
        raise ConversionError(f"{value!r} is not a finite decimal number")
    return result


def _timedelta_conv(value: Any) -> _dt.timedelta:
    try:
        return _dt.timedelta(seconds=value)
    except (TypeError, OverflowError, ValueError):
        raise ConversionError(f"{value!r} is not a valid duration in seconds") from None
