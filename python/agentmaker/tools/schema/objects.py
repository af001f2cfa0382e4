"""Object-shaped classes (dataclasses, TypedDicts, NamedTuples) as ``$defs`` entries.

A field with a default is optional, never nullable unless its type admits ``None``.  OpenAI's
strict rendering makes optional properties nullable (every property is required there); the
registry's validation drops such a null (src/registry.rs) and the converter skips it too, so
the default applies.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

from agentmaker.tools.docstring import parse_docstring
from agentmaker.tools.schema import node as shared
from agentmaker.tools.schema.json_values import json_default

__all__ = ["class_docs", "object_class"]


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
