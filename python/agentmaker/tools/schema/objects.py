"""Object-shaped classes (dataclasses, TypedDicts, NamedTuples) as ``$defs`` entries, and the
JSON-able view of Python values used for schema defaults and tool results.

A field with a default is optional, never nullable unless its type admits ``None``.  OpenAI's
strict rendering makes optional properties nullable (every property is required there); the
registry's validation drops such a null (src/registry.rs) and the converter skips it too, so
the default applies.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import enum
import math
import pathlib
import sys
import typing
import uuid
from collections.abc import Callable
from typing import Any

from agentmaker.tools.docstring import parse_docstring
from agentmaker.tools.schema import node as shared

__all__ = ["class_docs", "json_default", "jsonable"]


def class_docs(cls: type) -> tuple[str, dict[str, str]]:
    """Description and field docs from a class docstring, ignoring the generated signature
    docstrings of dataclasses and NamedTuples ("Point(x: int, y: int)")."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or doc.startswith(cls.__name__ + "("):
        return "", {}
    info = parse_docstring(doc)
    return info.description, info.params


def _fields(cls: type, kind: str, hints: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
    """(name, annotation, default-or-_MISSING, metadata description) per constructor field."""
    out = []
    if kind == "dataclass":
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = _FACTORY
            else:
                default = shared._MISSING
            desc = f.metadata.get("description", "") if f.metadata else ""
            out.append((f.name, hints.get(f.name, f.type), default, desc if isinstance(desc, str) else ""))
    elif kind == "typeddict":
        required = getattr(cls, "__required_keys__", frozenset(hints))
        for name, ann in hints.items():
            # Required / NotRequired decide first: under `from __future__ import annotations`
            # Python 3.11 cannot see them and files every such key under the class's totality.
            origin = typing.get_origin(ann)
            if origin is typing.Annotated:
                origin = typing.get_origin(ann.__origin__)
            is_required = origin is not typing.NotRequired and (origin is typing.Required or name in required)
            out.append((name, ann, shared._MISSING if is_required else _ABSENT, ""))
    else:  # namedtuple
        defaults = getattr(cls, "_field_defaults", {})
        names: tuple[str, ...] = getattr(cls, "_fields", ())  # a NamedTuple class: checked by the caller
        for name in names:
            out.append((name, hints.get(name, Any), defaults.get(name, shared._MISSING), ""))
    return out


_FACTORY = object()  # default comes from a default_factory (not shown in the schema)
_ABSENT = object()  # a non-required TypedDict key


def object_class(
    cls: type, kind: str, resolve: Callable[[Any], Any] | None, infer: Callable[[Any], shared.Node]
) -> shared.Node:
    """A dataclass, TypedDict or NamedTuple as a ``$defs`` object; ``infer`` maps its fields."""
    done = _CLASS_NODES.get(cls)
    if done is not None:
        return done
    name = shared._def_name(cls, cls.__name__, f"{cls.__module__}.{cls.__qualname__}")
    if cls in shared._IN_PROGRESS:
        # A recursive reference: the converter is looked up when it runs.
        def lazy(value: Any) -> Any:
            conv = _CONVS.get(name)
            return conv(value) if conv is not None else value

        return shared.Node(shared._ref(name), lazy, frozenset({name}), False, "object")
    shared._IN_PROGRESS[cls] = name
    try:
        node = _build(cls, kind, name, infer)
    finally:
        del shared._IN_PROGRESS[cls]
    _CLASS_NODES[cls] = node
    return node


_CLASS_NODES: dict[type, shared.Node] = {}
_CONVS: dict[str, Callable[[Any], Any] | None] = {}


def _build(cls: type, kind: str, name: str, infer: Callable[[Any], shared.Node]) -> shared.Node:
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # NameError / TypeError from unresolvable annotations  # noqa: BLE001 - user code / third-party errors become messages
        raise shared.Unmappable(
            f"the annotations of {cls.__qualname__} cannot be resolved ({type(exc).__name__}: {exc}); "
            "define the types it uses at module level"
        ) from None
    description, field_docs = class_docs(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    refs: set[str] = set()
    plan: list[tuple[str, Callable[[Any], Any] | None, bool]] = []
    for fname, ann, default, meta_desc in _fields(cls, kind, hints):
        try:
            node = infer(ann)
        except shared.Unmappable as exc:
            raise shared.Unmappable(f"field '{fname}' of {cls.__qualname__}: {exc}") from None
        refs |= node.refs
        optional = default is not shared._MISSING
        null_default = optional and not node.accepts_none
        prop = dict(node.schema)
        desc = meta_desc or field_docs.get(fname, "")
        if desc and "description" not in prop:
            prop["description"] = desc
        if optional and default is not _FACTORY and default is not _ABSENT:
            shown = json_default(default)
            if shown is not shared._MISSING:
                prop["default"] = shown
        props[fname] = prop
        if not optional:
            required.append(fname)
        plan.append((fname, node.conv, null_default))
    schema: dict[str, Any] = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = props
    schema["required"] = required
    shared._DEFS[name] = schema
    shared._DEF_REFS[name] = frozenset(refs)
    conv = _make_conv(cls, kind, plan)
    _CONVS[name] = conv
    return shared.Node(shared._ref(name), conv, frozenset(refs | {name}), False, "object")


def _make_conv(
    cls: type, kind: str, plan: list[tuple[str, Callable[[Any], Any] | None, bool]]
) -> Callable[[Any], Any] | None:
    if kind == "typeddict" and all(c is None and not nd for _, c, nd in plan):
        return None
    build: Callable[..., Any] = dict if kind == "typeddict" else cls

    def conv(value: dict[str, Any]) -> Any:
        kwargs = {}
        for fname, c, null_default in plan:
            if fname not in value:
                continue
            v = value[fname]
            if v is None and null_default:
                continue
            if c is not None:
                try:
                    v = c(v)
                except shared.ConversionError as exc:
                    exc.path.insert(0, fname)
                    raise
            kwargs[fname] = v
        try:
            return build(**kwargs)
        except Exception as exc:  # a __post_init__ / __new__ that rejects the values  # noqa: BLE001 - user code / third-party errors become messages
            raise shared.ConversionError(
                f"could not build {cls.__name__}: {type(exc).__name__}: {exc}"
            ) from None

    return conv


# ---------------------------------------------------------------------------------------------
# JSON-able views


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
