"""The JSON-able view of Python values: what a schema shows as a default, and what a tool's
result and a run's JSON form are made of (dataclasses, NamedTuples, pydantic models, Enums,
sets, dates and times, UUIDs, paths, Decimals, anywhere inside containers)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import enum
import math
import pathlib
import sys
import uuid
from typing import Any

from agentmaker.tools.schema import node as shared

__all__ = ["json_default", "jsonable"]


def json_default(value: Any) -> Any:
    """The JSON form of a default value, or _MISSING when it has none worth showing."""
    try:
        out = jsonable(value, strict=True)
    except _NotJson:
        return shared._MISSING
    return out


class _NotJson(Exception):
    """A value with no JSON form: ``value`` is the offending leaf, ``reason`` says why."""

    def __init__(self, value: Any, reason: str = "") -> None:
        super().__init__(reason)
        self.value = value
        self.reason = reason


def jsonable(value: Any, strict: bool = False) -> Any:
    """A JSON-serialisable view of ``value``: containers walked, dataclasses / pydantic models /
    NamedTuples as objects, Enums as their values, dates as ISO text, sets as lists.  Other leaves
    become ``str(value)`` (or raise _NotJson when ``strict``)."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float:
        if math.isfinite(value):
            return value
        if strict:
            raise _NotJson(value, f"the float {value} (NaN and infinity are not JSON)")
        return str(value)
    if t is list or t is tuple:
        return [jsonable(v, strict) for v in value]
    if t is dict:
        return {_key(k, strict): jsonable(v, strict) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return jsonable(value.value, strict)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (uuid.UUID, pathlib.PurePath)):
        return str(value)
    if isinstance(value, decimal.Decimal):
        if strict and not value.is_finite():
            raise _NotJson(value, f"the Decimal {value} (NaN and infinity are not JSON)")
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), strict) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if dump is not None and sys.modules.get("pydantic") is not None and not isinstance(value, type):
        try:
            return dump(mode="json")
        except Exception as exc:  # noqa: BLE001 - user code / third-party errors become messages
            if strict:
                reason = f"a {type(value).__qualname__} whose model_dump(mode='json') failed ({type(exc).__name__}: {exc})"
                raise _NotJson(value, reason) from None
            return str(value)
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: jsonable(v, strict) for k, v in value._asdict().items()}
    for base in (str, bool, int, float):
        if isinstance(value, base):
            return jsonable(base(value), strict)
    if isinstance(value, (list, tuple)):
        return [jsonable(v, strict) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [jsonable(v, strict) for v in value]
        try:
            items.sort()
        except TypeError:
            pass
        return items
    if isinstance(value, dict):
        return {_key(k, strict): jsonable(v, strict) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray, memoryview)):
        if strict:
            kind = type(value).__qualname__
            raise _NotJson(
                value, f"a value of type {kind} (decode text to str, or base64-encode binary data)"
            )
        return bytes(value).decode("utf-8", "replace")
    if strict:
        raise _NotJson(value, f"a value of type {type(value).__qualname__}")
    return str(value)


def _key(k: Any, strict: bool) -> str:
    if type(k) is str:
        return k
    if isinstance(k, enum.Enum):
        k = k.value
    if isinstance(k, (str, int, float, bool)) or k is None:
        return k if isinstance(k, str) else _json_scalar_text(k)
    if strict:
        raise _NotJson(k, f"a dict key of type {type(k).__qualname__} (JSON object keys are strings)")
    return str(k)


def _json_scalar_text(k: Any) -> str:
    # json.dumps converts these keys the same way (True -> "true", None -> "null")
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    return str(k)
