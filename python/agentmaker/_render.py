"""Provider renderings of a tool's one root JSON Schema: OpenAI (plain and strict), Anthropic and
Gemini.  Pure functions over schema dicts; they never mutate their input.

Strict mode (OpenAI ``strict: true``) needs every property listed in ``required``, optional ones
nullable, ``additionalProperties: false`` on every object and only the keywords strict mode knows.
The strict form makes every optional property nullable (unless its type already admits null),
and mentions its default in the description; the registry's validation treats a null sent for
an optional property whose own schema refuses null as "absent" and drops it before the tool runs
(src/registry.rs), so the default applies.  The plain renderings never add null: a property is
nullable there exactly when its type admits ``None``.  When a schema
cannot be made strict (an open ``dict[str, T]``, a fixed tuple, ``Any``, an unsupported keyword)
``strict_schema`` says why and the tool is rendered without ``strict``.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "NotStrict",
    "anthropic_tool",
    "gemini_declaration",
    "gemini_schema",
    "openai_tool",
    "strict_schema",
]


class NotStrict(Exception):
    """Why a schema has no OpenAI strict form."""


# Keywords strict mode accepts (OpenAI structured outputs, "supported schemas").
_STRICT_KEYS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
# Annotations that carry no constraint: dropped from the strict form (a default is mentioned in
# the description instead, since null is how the model asks for it).
_ANNOTATIONS = frozenset(
    {"default", "title", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id"}
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_MAX_DEPTH = 10
_MAX_PROPERTIES = 5000
_MAX_ENUM = 1000


def openai_tool(
    name: str, description: str, schema: dict[str, Any], strict_form: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One entry of the OpenAI ``tools`` list; pass ``strict_form`` (from strict_schema) for strict."""
    function: dict[str, Any] = {"name": name, "description": description}
    if strict_form is not None:
        function["parameters"] = strict_form
        function["strict"] = True
    else:
        function["parameters"] = schema
    return {"type": "function", "function": function}


def anthropic_tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "input_schema": schema or {"type": "object", "properties": {}},
    }


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI strict form of a root schema; raise NotStrict with the reason otherwise."""
    if schema.get("type") != "object":
        raise NotStrict("the root schema must be an object")
    counter = [0]
    out = _strict(schema, "", 0, counter)
    defs = schema.get("$defs")
    if isinstance(defs, dict):
        out["$defs"] = {k: _strict(v, f"$defs.{k}", 0, counter) for k, v in defs.items()}
    return out


def _where(path: str) -> str:
    return f"parameter '{path}'" if path and not path.startswith("$defs") else (path or "the root")


def _strict(schema: Any, path: str, depth: int, counter: list[int]) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise NotStrict(f"{_where(path)}: boolean schemas are not supported by strict mode")
    if depth > _MAX_DEPTH:
        raise NotStrict(f"{_where(path)}: nested deeper than {_MAX_DEPTH} levels")
    if not schema or not ({"type", "$ref", "anyOf", "enum", "const"} & schema.keys()):
        raise NotStrict(f"{_where(path)} accepts any value; strict mode needs a type")
    out: dict[str, Any] = {}
    default = schema.get("default")
    for key, value in schema.items():
        if key in _ANNOTATIONS or key == "$defs":
            continue
        if key not in _STRICT_KEYS:
            raise NotStrict(f"{_where(path)} uses '{key}', which strict mode does not support")
        if key == "format" and value not in _STRICT_FORMATS:
            continue
        out[key] = value
    if "enum" in out and isinstance(out["enum"], list) and len(out["enum"]) > _MAX_ENUM:
        raise NotStrict(f"{_where(path)}: more than {_MAX_ENUM} enum values")
    if default is not None and "default" in schema:
        note = f"(default: {json.dumps(default, ensure_ascii=False)})"
        out["description"] = f"{out['description']} {note}" if out.get("description") else note
    if "anyOf" in out:
        out["anyOf"] = [_strict(s, path, depth + 1, counter) for s in out["anyOf"]]
    types = out.get("type")
    kinds = {types} if isinstance(types, str) else set(types or ())
    if "object" in kinds:
        props = out.get("properties")
        if out.get("additionalProperties", False) is not False:
            raise NotStrict(
                f"{_where(path)} allows additional properties (e.g. dict[str, T]); strict mode needs fixed properties"
            )
        if not isinstance(props, dict):
            raise NotStrict(
                f"{_where(path)} is a free-form object (dict); strict mode needs fixed properties"
            )
        required = set(schema.get("required", ()))
        new_props = {}
        for name, sub in (props or {}).items():
            sub_path = f"{path}.{name}" if path else name
            counter[0] += 1
            if counter[0] > _MAX_PROPERTIES:
                raise NotStrict(f"more than {_MAX_PROPERTIES} properties in total")
            converted = _strict(sub, sub_path, depth + 1, counter)
            if name not in required and not _accepts_null(converted):
                converted = _nullable(converted)
            new_props[name] = converted
        out["properties"] = new_props
        out["required"] = list(new_props)
        out["additionalProperties"] = False
    if "array" in kinds:
        items = out.get("items")
        if items is None:
            raise NotStrict(
                f"{_where(path)} is an array without an item type; strict mode needs one (use list[T])"
            )
        out["items"] = _strict(items, f"{path}[]", depth + 1, counter)
    return out


def _accepts_null(schema: dict[str, Any]) -> bool:
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(isinstance(s, dict) and _accepts_null(s) for s in schema.get("anyOf", ()))


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    t = schema.get("type")
    if isinstance(t, str) and "anyOf" not in schema and "$ref" not in schema:
        out = dict(schema)
        out["type"] = [t, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    desc = schema.get("description")
    inner = {k: v for k, v in schema.items() if k != "description"}
    out = {"anyOf": [inner, {"type": "null"}]}
    if desc:
        out["description"] = desc
    return out


# ---------------------------------------------------------------------------------------------
# Gemini: an OpenAPI-3 flavoured subset.  No $ref / $defs (inlined), no additionalProperties,
# "nullable" instead of null types, string-only enums, anyOf allowed.

_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "default",
        "title",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
    }
)
_GEMINI_FORMATS = {
    "string": {"date-time", "enum"},
    "number": {"float", "double"},
    "integer": {"int32", "int64"},
}


def gemini_declaration(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A Gemini ``functionDeclarations`` entry; ``parameters`` is omitted for a tool without
    parameters (Gemini rejects an object schema with no properties)."""
    out: dict[str, Any] = {"name": name, "description": description}
    converted = gemini_schema(schema)
    if converted.get("properties"):
        out["parameters"] = converted
    return out


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    return _gemini(schema, defs, ())


def _gemini(schema: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref[len("#/$defs/") :]
        if name in seen:  # recursive type: Gemini has no references, cut the cycle here
            desc = schema.get("description") or f"a nested {name} object"
            return {"type": "object", "description": desc}
        target = dict(defs.get(name, {}))
        for key, value in schema.items():
            if key != "$ref":
                target[key] = value
        return _gemini(target, defs, (*seen, name))
    out: dict[str, Any] = {}
    nullable = False
    t = schema.get("type")
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        nullable = len(rest) < len(t)
        if len(rest) == 1:
            t = rest[0]
        elif rest:
            variants = [{**{k: v for k, v in schema.items() if k != "type"}, "type": x} for x in rest]
            out = {"anyOf": [_gemini(v, defs, seen) for v in variants]}
            if nullable:
                out["nullable"] = True
            return out
        else:
            t = None
            nullable = True
    if t == "null":
        return {"nullable": True}
    if t is not None:
        out["type"] = t
    for key, value in schema.items():
        if key in (
            "type",
            "anyOf",
            "items",
            "properties",
            "enum",
            "const",
            "format",
            "default",
            "prefixItems",
        ):
            continue
        if key in _GEMINI_KEYS:
            out[key] = value
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _GEMINI_FORMATS.get(t or "", ()):
        out["format"] = fmt
    enum_values = schema.get("enum")
    if "const" in schema:
        enum_values = [schema["const"]]
    if isinstance(enum_values, list):
        values = [v for v in enum_values if v is not None]
        if len(values) < len(enum_values):
            nullable = True
        if values and all(isinstance(v, str) for v in values):
            out["enum"] = values
        elif values:
            note = "Allowed values: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in values)
            out["description"] = f"{out['description']} ({note})" if out.get("description") else note
    if "default" in schema and schema["default"] is not None:
        out["default"] = schema["default"]
    if "anyOf" in schema:
        options = []
        for option in schema["anyOf"]:
            if isinstance(option, dict) and option.get("type") == "null" and len(option) == 1:
                nullable = True
                continue
            options.append(_gemini(option, defs, seen))
        if len(options) == 1:
            merged = options[0]
            for key, value in out.items():
                merged.setdefault(key, value)
            out = merged
        elif options:
            out["anyOf"] = options
    props = schema.get("properties")
    if isinstance(props, dict):
        out["properties"] = {k: _gemini(v, defs, seen) for k, v in props.items()}
        if "required" in schema:
            out["required"] = [r for r in schema["required"] if r in props]
    items = schema.get("items")
    if isinstance(items, dict):
        out["items"] = _gemini(items, defs, seen)
    elif isinstance(schema.get("prefixItems"), list):
        # A fixed tuple: Gemini has no positional items; describe the element types as a union.
        members = [_gemini(s, defs, seen) for s in schema["prefixItems"]]
        unique = [m for i, m in enumerate(members) if m not in members[:i]]
        out["items"] = unique[0] if len(unique) == 1 else {"anyOf": unique}
    if nullable:
        out["nullable"] = True
    return out


# ---------------------------------------------------------------------------------------------
# Per-registry cache of the provider forms, keyed by the registry's shared OpenAI dict of each
# tool (that dict object is rebuilt exactly when the tool is re-registered).


def _strict_entry(function: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    try:
        form = strict_schema(function.get("parameters") or {"type": "object", "properties": {}})
    except NotStrict as exc:
        return openai_tool(
            function["name"], function.get("description", ""), function.get("parameters")
        ), str(exc)
    except RecursionError:
        reason = "the schema nests too deeply for strict mode"
        return openai_tool(
            function["name"], function.get("description", ""), function.get("parameters")
        ), reason
    return openai_tool(
        function["name"], function.get("description", ""), function.get("parameters"), form
    ), None


class ProviderForms:
    """Renders and caches the OpenAI-strict, Anthropic and Gemini forms of a registry's tools."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}

    def _forms(self, openai: dict[str, Any], fresh: dict[int, Any] | None) -> dict[str, Any]:
        key = id(openai)
        hit = self._entries.get(key)
        if hit is None or hit[0] is not openai:
            hit = (openai, {})
            self._entries[key] = hit
        if fresh is not None:
            fresh[key] = hit
        return hit[1]

    def render(self, openai_dicts: list[dict[str, Any]], kind: str, everything: bool) -> list[Any]:
        fresh: dict[int, Any] | None = {} if everything else None
        out = []
        for openai in openai_dicts:
            forms = self._forms(openai, fresh)
            value = forms.get(kind)
            if value is None:
                function = openai["function"]
                params = function.get("parameters") or {"type": "object", "properties": {}}
                if kind == "anthropic":
                    value = anthropic_tool(function["name"], function.get("description", ""), params)
                elif kind == "gemini":
                    value = gemini_declaration(function["name"], function.get("description", ""), params)
                else:
                    value, forms["strict_reason"] = _strict_entry(function)
                forms[kind] = value
            out.append(value)
        if fresh is not None:
            self._entries = fresh  # forget tools that are no longer registered
        return out

    def strict_reasons(self, openai_dicts: list[dict[str, Any]]) -> dict[str, str]:
        self.render(openai_dicts, "strict", False)
        reasons = {}
        for openai in openai_dicts:
            reason = self._forms(openai, None).get("strict_reason")
            if reason:
                reasons[openai["function"]["name"]] = reason
        return reasons
