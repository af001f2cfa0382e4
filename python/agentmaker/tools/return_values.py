"""What a tool function's return value becomes: the ToolResponse the model reads.

The rules (docs/results.md explains them for users):

- a ``ToolResponse`` is used as it is, a ``str`` becomes a success with that text, ``None`` an
  empty success;
- JSON values (dict with str keys, list, tuple, str, int, float, bool, None, nested) become
  compact JSON text (``ensure_ascii=False``, no spaces) with the value kept in ``data``;
- dataclasses and NamedTuples become objects of their fields, pydantic models their
  ``model_dump(mode="json")``, an ``Enum`` its value, sets and frozensets lists (sorted when
  their items can be sorted), dates, times and datetimes their ISO 8601 text, a ``timedelta``
  its seconds, a ``UUID``, a path or a finite ``Decimal`` its text, anywhere inside containers;
  ``data`` then holds the converted JSON value;
- everything else is refused: ``bytes``, ``bytearray`` and ``memoryview`` (the model reads text:
  decode it or base64-encode it), NaN and infinity, dict keys that are not str, int, float, bool,
  None or an Enum, and any other type. The tool call becomes an error response whose text names
  the type and where it is, and a WARNING goes to the ``agentmaker.tools`` logger, because a
  tool that returns something unreadable is a bug in the tool, not an answer.

str, ToolResponse, None and plain JSON values are handled in Rust (``_native._tool_result``);
this module converts the rest and is called from there, so the rules live in one place.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import logging
from typing import Any

from agentmaker._native import ToolResponse, _result_not_json_text
from agentmaker.tools.schema.json_values import _NotJson, jsonable

__all__ = ["result_to_response"]

_log = logging.getLogger("agentmaker.tools")


def result_to_response(tool_name: str, value: Any) -> ToolResponse:
    """Convert a result that is not str, ToolResponse, None or plain JSON (see the module doc):
    a success carrying its JSON form, or an error naming what could not be converted."""
    try:
        data = jsonable(value, strict=True)
    except _NotJson as exc:
        path = _locate(value, exc.value, 0)
        if path == []:
            what = exc.reason
        else:
            where = f" at '{'.'.join(path)}'" if path else ""
            what = f"a {type(value).__qualname__} containing {exc.reason}{where}"
        return _refuse(tool_name, what)
    except RecursionError:
        return _refuse(tool_name, f"a {type(value).__qualname__} nested too deeply (or containing itself)")
    return ToolResponse.ok(json.dumps(data, ensure_ascii=False, separators=(",", ":")), data=data)


def _refuse(tool_name: str, what: str) -> ToolResponse:
    text = _result_not_json_text(tool_name, what)
    _log.warning("%s", text)
    return ToolResponse.error(text)


def _locate(root: Any, leaf: Any, depth: int) -> list[str] | None:
    """The path from ``root`` to the offending ``leaf`` (by identity), [] for the root itself,
    None when it cannot be found (the error path only: never runs for a good result)."""
    if root is leaf:
        return []
    if depth > 200:
        return None
    children: Any = ()
    if isinstance(root, dict):
        for k in root:
            if k is leaf:
                return [str(k)]
        children = ((str(k), v) for k, v in root.items())
    elif isinstance(root, (list, tuple, set, frozenset)):
        if isinstance(root, tuple) and hasattr(root, "_asdict"):
            children = root._asdict().items()
        else:
            children = ((str(i), v) for i, v in enumerate(root))
    elif isinstance(root, enum.Enum):
        return _locate(root.value, leaf, depth + 1)
    elif dataclasses.is_dataclass(root) and not isinstance(root, type):
        children = ((f.name, getattr(root, f.name)) for f in dataclasses.fields(root))
    for key, child in children:
        found = _locate(child, leaf, depth + 1)
        if found is not None:
            return [key, *found]
    return None
