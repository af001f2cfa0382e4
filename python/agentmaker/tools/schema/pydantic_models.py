"""pydantic v2 models (and, as a last resort, any type pydantic understands) as schema nodes.

pydantic is never imported for a model: a model class exists only if the user imported pydantic.
The type-adapter fallback imports it on demand and quietly does nothing when it is not installed.

pydantic's own JSON Schema is used (it knows validators, aliases, custom types), adopted into our
process-wide ``$defs`` registry: its def names are re-issued so they cannot clash with other
classes, refs are rewritten to match and titles are dropped (noise for the model).  A property
with a default stays as pydantic renders it (not nullable); a null sent for it means "use the
default", exactly like dataclass fields (see objects): the converter strips those nulls
and calls pydantic's validation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentmaker.tools.schema import node as shared

__all__ = ["adapter_node", "model_node"]

_NODES: dict[Any, shared.Node] = {}
_NULL_KEYS: dict[str, frozenset[str]] = {}  # def name -> properties whose null means "default"


def model_node(cls: type) -> shared.Node:
    node = _NODES.get(cls)
    if node is not None:
        return node
    try:
        raw = cls.model_json_schema(ref_template="#/$defs/{model}", mode="validation")  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - user code / third-party errors become messages
        raise shared.Unmappable(
            f"pydantic cannot build a JSON Schema for {cls.__qualname__} ({type(exc).__name__}: {exc})"
        ) from None
    node = _adopt(raw, cls, cls.__name__, f"{cls.__module__}.{cls.__qualname__}", cls.model_validate)  # type: ignore[attr-defined]
    _NODES[cls] = node
    return node


_PYDANTIC: Any = None


def _pydantic() -> Any:
    global _PYDANTIC
    if _PYDANTIC is None:
        try:
            import pydantic
        except ImportError:
            _PYDANTIC = False
        else:
            _PYDANTIC = pydantic
    return _PYDANTIC


def adapter_node(ann: Any) -> shared.Node | None:
    """Schema and validation for a type only pydantic knows (IPv4Address, bytes, ...)."""
    try:
        node = _NODES.get(ann)
    except TypeError:
        return None
    if node is not None:
        return node
    pyd = _pydantic()
    if not pyd:
        return None
    try:
        adapter = pyd.TypeAdapter(ann)
        raw = adapter.json_schema(ref_template="#/$defs/{model}", mode="validation")
    except Exception:  # noqa: BLE001 - user code / third-party errors become messages
        return None
    name = getattr(ann, "__name__", None) or type(ann).__name__
    node = _adopt(raw, ("adapter", ann), name, repr(ann), adapter.validate_python)
    _NODES[ann] = node
    return node


def _adopt(
    raw: dict[str, Any], key: Any, preferred: str, qualified: str, validate: Callable[[Any], Any]
) -> shared.Node:
    raw = json.loads(json.dumps(raw))  # private deep copy: pydantic may cache what it returned
    defs: dict[str, Any] = raw.pop("$defs", {})
    rename: dict[str, str] = {}
    for old, schema in defs.items():
        content = json.dumps(schema, sort_keys=True)
        rename[old] = shared._def_name(("pydantic", old, content), old, f"{qualified}.{old}")
    root_ref = raw.get("$ref") if len(raw) == 1 else None
    if root_ref is not None:
        root_name = rename[root_ref.rsplit("/", 1)[-1]]
    else:
        root_name = shared._def_name(key, preferred, qualified)
        defs[None] = raw  # type: ignore[index]
        rename[None] = root_name  # type: ignore[index]
    all_refs: set[str] = set()
    for old, schema in defs.items():
        new = rename[old]
        refs: set[str] = set()
        _clean(schema, rename, refs)
        null_keys = _nullable_defaults(schema)
        if null_keys:
            _NULL_KEYS[new] = null_keys
        shared._DEFS[new] = schema
        shared._DEF_REFS[new] = frozenset(refs)
        all_refs |= refs
    all_refs.add(root_name)
    prune = _pruner(root_name) if any(n in _NULL_KEYS for n in all_refs) else None

    def conv(value: Any) -> Any:
        if prune is not None:
            value = prune(value)
        try:
            return validate(value)
        except Exception as exc:  # noqa: BLE001 - user code / third-party errors become messages
            raise shared.ConversionError(_render_error(exc)) from None

    return shared.Node(shared._ref(root_name), conv, frozenset(all_refs), False, "object")


_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames")


def _clean(schema: Any, rename: dict[Any, str], refs: set[str]) -> None:
    """Rewrite $refs to the re-issued names and drop titles, walking only schema positions."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        new = rename.get(ref[len("#/$defs/") :])
        if new is not None:
            schema["$ref"] = f"#/$defs/{new}"
            refs.add(new)
    if isinstance(schema.get("title"), str):
        del schema["title"]
    props = schema.get("properties")
    if isinstance(props, dict):
        for sub in props.values():
            _clean(sub, rename, refs)
    for k in _SUBSCHEMA_LISTS:
        for sub in schema.get(k, ()) if isinstance(schema.get(k), list) else ():
            _clean(sub, rename, refs)
    for k in _SUBSCHEMA_ONE:
        _clean(schema.get(k), rename, refs)


def _accepts_null(schema: dict[str, Any]) -> bool:
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    if not schema or (
        "type" not in schema
        and "$ref" not in schema
        and "anyOf" not in schema
        and "enum" not in schema
        and "const" not in schema
    ):
        return True  # unconstrained
    return any(isinstance(s, dict) and _accepts_null(s) for s in schema.get("anyOf", ()))


def _nullable_defaults(schema: dict[str, Any]) -> frozenset[str]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return frozenset()
    required = set(schema.get("required", ()))
    keys = []
    for name, sub in props.items():
        if name in required or not isinstance(sub, dict) or _accepts_null(sub):
            continue
        keys.append(name)
    return frozenset(keys)


def _pruner(root: str) -> Callable[[Any], Any]:
    """Drop the nulls that mean "use the default", following $refs through the value."""

    def walk(value: Any, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return value
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            schema = shared._DEFS.get(name, {})
            drop = _NULL_KEYS.get(name, frozenset())
        else:
            drop = frozenset()
        if isinstance(value, dict):
            props = schema.get("properties", {})
            out = {}
            for k, v in value.items():
                if v is None and k in drop:
                    continue
                out[k] = walk(v, props.get(k)) if k in props else v
            return out
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            return [walk(v, schema["items"]) for v in value]
        for option in schema.get("anyOf", ()):
            if isinstance(option, dict) and "$ref" in option and isinstance(value, dict):
                return walk(value, option)
        return value

    ref = shared._ref(root)
    return lambda value: walk(value, ref)


def _render_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            parts = []
            for err in errors():
                loc = ".".join(str(p) for p in err.get("loc", ()))
                msg = err.get("msg", "invalid value")
                parts.append(f"{loc}: {msg}" if loc else msg)
            if parts:
                return "; ".join(parts)
        except Exception:  # noqa: BLE001, S110 - best effort: fall back to the generic message
            pass
    return f"{type(exc).__name__}: {exc}"
