"""Python annotation -> JSON Schema (draft 2020-12), plus the converter that turns validated JSON
values back into what the annotation promises (Enum members, dataclass / TypedDict / pydantic
instances, sets, tuples, datetimes ...).

Every annotation is analysed once: results are cached per annotation object, and class schemas
(dataclasses, TypedDicts, NamedTuples, pydantic models) are registered once per process under a
unique ``$defs`` name, so a function signature costs a few dict lookups once its types were seen.

A converter is ``None`` when the JSON value already is the Python value (str, int, list[int], ...):
the call path then passes the validated arguments through untouched.  Otherwise it is a callable
``conv(value) -> value`` that raises ``ConversionError`` with the failing path.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import sys
import threading
import types
import typing
from collections.abc import Callable
from typing import Any

from agentmaker.tools.schema import choices, json_values, objects, pydantic_models, scalars
from agentmaker.tools.schema.node import (
    _IN_PROGRESS,
    ConversionError,
    Converter,
    Node,
    Unmappable,
    _node,
    _NoneType,
    closure_defs,
)

__all__ = ["ConversionError", "Node", "Unmappable", "closure_defs", "infer"]

# ---------------------------------------------------------------------------------------------
# Entry point


_CACHE: dict[Any, Node] = {}
_BY_ID: dict[int, tuple[Any, Node]] = {}
_BY_ID_MAX = 4096
_ANNOTATED = type(typing.Annotated[int, ""])
# Held while a signature is analysed: the recursion markers and the $defs registry are shared,
# and a class half-registered by one thread must not be seen by another.
LOCK = threading.RLock()


def infer(ann: Any, resolve: Callable[[Any], Any] | None = None) -> Node:
    """Map ``ann`` to a Node; raise Unmappable when it has no JSON Schema form.

    ``resolve`` turns a ``typing.ForwardRef`` met inside a generic into a real type (the caller
    knows the defining namespace).  Results that did not need it are cached.
    """
    if type(ann) is _ANNOTATED and any(type(m) is str for m in getattr(ann, "__metadata__", ())):
        # A description is one parameter's own text: cached, each tool ever defined would keep
        # an entry for the life of the process. Its base type is cached as usual.
        return _infer(ann, resolve)
    # typing's generic aliases hash their arguments on every call; the objects themselves are
    # mostly the same ones (typing caches them), so they are first looked up by identity (the
    # entry holds the object, so its id cannot be reused while it is there).
    seen = _BY_ID.get(id(ann))
    if seen is not None and seen[0] is ann:
        return seen[1]
    try:
        node = _CACHE.get(ann)
    except TypeError:  # unhashable metadata somewhere inside
        return _infer(ann, resolve)
    if node is not None and len(_BY_ID) < _BY_ID_MAX:
        _BY_ID[id(ann)] = (ann, node)
    if node is None:
        before = _FORWARD_HITS
        node = _infer(ann, resolve)
        # Results that depended on a forward reference are namespace-specific: not cached.
        if not _IN_PROGRESS and before == _FORWARD_HITS:
            _CACHE[ann] = node
    return node


_FORWARD_HITS = 0


_SIMPLE: dict[object, Node] = {
    str: Node({"type": "string"}, None, frozenset(), False, "string"),
    int: Node({"type": "integer"}, None, frozenset(), False, "integer"),
    float: Node({"type": "number"}, None, frozenset(), False, "number"),
    bool: Node({"type": "boolean"}, None, frozenset(), False, "boolean"),
    list: Node({"type": "array"}, None, frozenset(), False, "array"),
    dict: Node({"type": "object"}, None, frozenset(), False, "object"),
    _NoneType: Node({"type": "null"}, None, frozenset(), True, "null"),
    Any: Node({}, None, frozenset(), True, "any"),
    object: Node({}, None, frozenset(), True, "any"),
}
_SIMPLE[None] = _SIMPLE[_NoneType]


def _infer(ann: Any, resolve: Callable[[Any], Any] | None) -> Node:
    simple = _SIMPLE.get(ann) if isinstance(ann, type) or ann is Any or ann is None else None
    if simple is not None:
        return simple
    if isinstance(ann, (typing.ForwardRef, str)):
        global _FORWARD_HITS
        _FORWARD_HITS += 1
        if resolve is None:
            raise Unmappable(f"forward reference {ann!r} cannot be resolved here")
        return infer(resolve(ann), resolve)
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _annotated(ann, resolve)
    if origin is typing.Union or origin is types.UnionType:
        return _union(typing.get_args(ann), resolve)
    if origin is typing.Literal:
        return choices.literal_node(typing.get_args(ann))
    if origin is not None:
        return _generic(ann, origin, typing.get_args(ann), resolve)
    if isinstance(ann, type):
        return _class(ann, resolve)
    supertype = getattr(ann, "__supertype__", None)  # typing.NewType
    if supertype is not None:
        return infer(supertype, resolve)
    if isinstance(ann, typing.TypeVar):
        if ann.__bound__ is not None:
            return infer(ann.__bound__, resolve)
        if ann.__constraints__:
            return _union(ann.__constraints__, resolve)
        return _SIMPLE[Any]
    value = getattr(ann, "__value__", None)  # PEP 695 type aliases
    if value is not None:
        return infer(value, resolve)
    return _pydantic_fallback(ann)


# ---------------------------------------------------------------------------------------------
# Annotated metadata


def _annotated(ann: Any, resolve: Callable[[Any], Any] | None) -> Node:
    base = infer(ann.__origin__, resolve)
    extra: dict[str, Any] = {}
    for meta in ann.__metadata__:
        if isinstance(meta, str):
            extra.setdefault("description", meta)
        else:
            _constraints(meta, extra, base.schema)
    if not extra:
        return base
    schema = dict(base.schema)
    schema.update(extra)
    return Node(schema, base.conv, base.refs, base.accepts_none, base.type_word)


_BOUND_KEYS = (
    ("gt", "exclusiveMinimum"),
    ("ge", "minimum"),
    ("lt", "exclusiveMaximum"),
    ("le", "maximum"),
    ("multiple_of", "multipleOf"),
)


def _constraints(meta: Any, out: dict[str, Any], base: dict[str, Any]) -> None:
    """Read pydantic ``Field(...)`` and annotated-types metadata (duck-typed: neither package is
    imported here)."""
    cls_name = type(meta).__name__
    if cls_name == "FieldInfo":
        for attr, key in (("description", "description"), ("title", "title")):
            val = getattr(meta, attr, None)
            if isinstance(val, str) and val:
                out.setdefault(key, val)
        examples = getattr(meta, "examples", None)
        if isinstance(examples, list) and examples:
            out.setdefault("examples", [json_values.jsonable(e) for e in examples])
        for sub in getattr(meta, "metadata", ()) or ():
            _constraints(sub, out, base)
        return
    if cls_name == "Interval" or hasattr(meta, "__dict__") or hasattr(meta, "__slots__"):
        for attr, key in _BOUND_KEYS:
            val = getattr(meta, attr, None)
            if isinstance(val, (int, float)) and not isinstance(val, bool):
                out[key] = val
        for attr, kind in (("min_length", "min"), ("max_length", "max")):
            val = getattr(meta, attr, None)
            if isinstance(val, int) and not isinstance(val, bool):
                t = base.get("type")
                if t == "string":
                    out[f"{kind}Length"] = val
                elif t == "object":
                    out[f"{kind}Properties"] = val
                else:
                    out[f"{kind}Items"] = val
        pattern = getattr(meta, "pattern", None)
        if isinstance(pattern, str):
            out["pattern"] = pattern


# ---------------------------------------------------------------------------------------------
# Unions, literals, enums


def _nullable(node: Node) -> Node:
    if node.accepts_none:
        return node
    schema = node.schema
    t = schema.get("type")
    if isinstance(t, str) and "$ref" not in schema and "anyOf" not in schema:
        new = dict(schema)
        new["type"] = [t, "null"]
        if "enum" in new and None not in new["enum"]:
            new["enum"] = [*new["enum"], None]
    else:
        new = {"anyOf": [schema, {"type": "null"}]}
    conv = node.conv
    if conv is not None:
        inner = conv

        def conv(value: Any) -> Any:
            return None if value is None else inner(value)

    return Node(new, conv, node.refs, True, node.type_word)


def _union(args: tuple[Any, ...], resolve: Callable[[Any], Any] | None) -> Node:
    has_none = any(a is _NoneType or a is None for a in args)
    members = [infer(a, resolve) for a in args if a is not _NoneType and a is not None]
    if not members:
        return _SIMPLE[_NoneType]
    if len(members) == 1:
        return _nullable(members[0]) if has_none else members[0]
    schemas = [m.schema for m in members]
    if has_none:
        schemas.append({"type": "null"})
    refs = frozenset().union(*(m.refs for m in members))
    conv = None
    if any(m.conv is not None for m in members):
        conv = _union_conv(members)
    accepts = has_none or any(m.accepts_none for m in members)
    return Node({"anyOf": schemas}, conv, refs, accepts, "any")


_JSON_KIND = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    _NoneType: "null",
}


def _kinds(schema: dict[str, Any]) -> set[str] | None:
    """JSON kinds a schema can accept; None = unknown (try it)."""
    t = schema.get("type")
    if isinstance(t, str):
        kinds = {t}
    elif isinstance(t, list):
        kinds = set(t)
    else:
        return None
    if "integer" in kinds:
        kinds.add("number")
    return kinds


def _union_conv(members: list[Node]) -> Converter:
    options = [(_kinds(m.schema), m.conv) for m in members]

    def conv(value: Any) -> Any:
        if value is None:
            return None
        kind = _JSON_KIND.get(type(value), "any")
        if kind == "integer":
            kind = "number"
        first_error: ConversionError | None = None
        for kinds, c in options:
            if kinds is not None and kind not in kinds and not (kind == "number" and "integer" in kinds):
                continue
            if c is None:
                return value
            try:
                return c(value)
            except ConversionError as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error
        return value

    return conv


# ---------------------------------------------------------------------------------------------
# Generic containers


_SEQUENCES = {list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection, cabc.Iterator}
_SETS = {set: set, frozenset: frozenset, cabc.Set: frozenset, cabc.MutableSet: set}
_MAPPINGS = {dict, cabc.Mapping, cabc.MutableMapping}
_KEY_WRAPPERS = {typing.Required, typing.NotRequired, typing.ClassVar, typing.Final}


def _generic(ann: Any, origin: Any, args: tuple[Any, ...], resolve: Callable[[Any], Any] | None) -> Node:
    if origin in _SEQUENCES or (isinstance(origin, type) and issubclass(origin, list)):
        item = infer(args[0], resolve) if args else _SIMPLE[Any]
        schema: dict[str, Any] = {"type": "array"}
        if item.schema:
            schema["items"] = item.schema
        make = (
            origin if isinstance(origin, type) and issubclass(origin, list) and origin is not list else None
        )
        return _node(schema, _seq_conv(item.conv, make), item.refs)
    if origin in _SETS or (isinstance(origin, type) and issubclass(origin, (set, frozenset))):
        item = infer(args[0], resolve) if args else _SIMPLE[Any]
        schema = {"type": "array", "uniqueItems": True}
        if item.schema:
            schema["items"] = item.schema
        make = _SETS.get(origin, origin)
        return _node(schema, _seq_conv(item.conv, make), item.refs)
    if origin is tuple or (isinstance(origin, type) and issubclass(origin, tuple)):
        return _tuple(args, resolve)
    if origin in _MAPPINGS or (isinstance(origin, type) and issubclass(origin, dict)):
        return _mapping(
            args,
            resolve,
            origin if isinstance(origin, type) and origin is not dict and issubclass(origin, dict) else None,
        )
    if origin in _KEY_WRAPPERS:
        return infer(args[0], resolve)
    return _pydantic_fallback(ann)


def _seq_conv(item: Converter | None, make: Callable[[Any], Any] | None) -> Converter | None:
    if item is None and make is None:
        return None
    if item is None:
        return make

    def conv(value: list[Any]) -> Any:
        out = []
        for i, v in enumerate(value):
            try:
                out.append(item(v))
            except ConversionError as exc:
                exc.path.insert(0, i)
                raise
        return make(out) if make is not None else out

    return conv


def _tuple(args: tuple[Any, ...], resolve: Callable[[Any], Any] | None) -> Node:
    if len(args) == 2 and args[1] is Ellipsis:
        item = infer(args[0], resolve)
        schema: dict[str, Any] = {"type": "array"}
        if item.schema:
            schema["items"] = item.schema
        return _node(schema, _seq_conv(item.conv, tuple), item.refs)
    if not args:  # bare typing.Tuple
        return _node({"type": "array"}, tuple)
    if args == ((),):  # tuple[()]
        return _node({"type": "array", "maxItems": 0}, tuple)
    items = [infer(a, resolve) for a in args]
    schema = {
        "type": "array",
        "prefixItems": [i.schema for i in items],
        "items": False,
        "minItems": len(items),
        "maxItems": len(items),
    }
    convs = [i.conv for i in items]

    def conv(value: list[Any]) -> tuple[Any, ...]:
        out = []
        for i, (c, v) in enumerate(zip(convs, value)):
            if c is None:
                out.append(v)
                continue
            try:
                out.append(c(v))
            except ConversionError as exc:
                exc.path.insert(0, i)
                raise
        return tuple(out)

    return _node(schema, conv, frozenset().union(*(i.refs for i in items)))


def _mapping(args: tuple[Any, ...], resolve: Callable[[Any], Any] | None, make: Any) -> Node:
    schema: dict[str, Any] = {"type": "object"}
    if not args:
        return _node(schema, make)
    key = infer(args[0], resolve)
    if key.schema.get("type") != "string" and key.schema:
        raise Unmappable(f"dict keys must be str (JSON object keys are strings), got {args[0]!r}")
    if "enum" in key.schema or "pattern" in key.schema:
        schema["propertyNames"] = {k: v for k, v in key.schema.items() if k in ("enum", "pattern", "type")}
    value = infer(args[1], resolve)
    if value.schema:
        schema["additionalProperties"] = value.schema
    kconv, vconv = key.conv, value.conv
    if kconv is None and vconv is None and make is None:
        return _node(schema, None, value.refs)

    def conv(obj: dict[str, Any]) -> Any:
        out = {}
        for k, v in obj.items():
            try:
                out[kconv(k) if kconv else k] = vconv(v) if vconv else v
            except ConversionError as exc:
                exc.path.insert(0, k)
                raise
        return make(out) if make is not None else out

    return _node(schema, conv, value.refs)


# ---------------------------------------------------------------------------------------------
# Classes


def _class(cls: type, resolve: Callable[[Any], Any] | None) -> Node:
    if issubclass(cls, enum.Enum):
        return choices.enum_node(cls)
    scalar = scalars.scalar_node(cls)
    if scalar is not None:
        return scalar
    if dataclasses.is_dataclass(cls):
        return objects.object_class(cls, "dataclass", resolve, infer)
    if _is_typeddict(cls):
        return objects.object_class(cls, "typeddict", resolve, infer)
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return objects.object_class(cls, "namedtuple", resolve, infer)
    pyd = sys.modules.get("pydantic")
    if (
        pyd is not None
        and isinstance(getattr(pyd, "BaseModel", None), type)
        and issubclass(cls, pyd.BaseModel)
    ):
        return pydantic_models.model_node(cls)
    # Subclasses of the JSON scalar / container types: same schema, converted to the subclass.
    for base, (schema, word) in _BASES:
        if issubclass(cls, base):
            if cls in (set, frozenset):
                return _node({"type": "array", "uniqueItems": True}, cls)
            return Node(schema, cls, frozenset(), False, word)
    return _pydantic_fallback(cls)


_BASES: list[tuple[type | tuple[type, ...], tuple[dict[str, Any], str]]] = [
    (bool, ({"type": "boolean"}, "boolean")),
    (int, ({"type": "integer"}, "integer")),
    (float, ({"type": "number"}, "number")),
    (str, ({"type": "string"}, "string")),
    ((set, frozenset), ({"type": "array", "uniqueItems": True}, "array")),
    ((list, tuple), ({"type": "array"}, "array")),
    (dict, ({"type": "object"}, "object")),
]


def _is_typeddict(cls: type) -> bool:
    if typing.is_typeddict(cls):
        return True
    te = sys.modules.get("typing_extensions")
    return te is not None and te.is_typeddict(cls)


def _pydantic_fallback(ann: Any) -> Node:
    node = pydantic_models.adapter_node(ann)
    if node is None:
        raise Unmappable(f"{ann!r} has no JSON Schema form")
    return node
