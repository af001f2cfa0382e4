"""The tool list a served registry shows an MCP client (``tools/list``).

Each tool is listed as an agent's model sees it: the same name, description and parameter
schema (the registry's OpenAI rendering, so wire names and schema fixes are the same), plus
what only MCP has: an ``outputSchema`` when a ``@tool`` function's return type has a JSON
Schema form, and ``annotations`` from the tool's hint flags. Denied tools are left out.
"""

from __future__ import annotations

import typing
from typing import Any

from agentmaker.tools.schema.infer import Unmappable, closure_defs, infer

__all__ = ["listing", "output_schema", "structured"]

# Tool attribute -> MCP annotation.
_HINTS = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}

_WRAPPED = "x-agentmaker-wrapped"


def output_schema(tool: Any) -> dict[str, Any] | None:
    """The ``outputSchema`` of a function tool with a typed return, else None. MCP needs an
    object schema: another type is wrapped as ``{"result": ...}`` (and so is its result)."""
    spec = getattr(tool, "_spec", None)
    func = getattr(spec, "func", None)
    if func is None:
        return None
    try:
        ann = typing.get_type_hints(func, include_extras=True).get("return")
    except Exception:  # noqa: BLE001 - an unresolvable annotation: no schema, as if untyped
        return None
    if ann is None or ann is Any or ann is type(None):
        return None
    try:
        node = infer(ann)
    except Unmappable:
        return None
    schema = dict(node.schema)
    defs = dict(closure_defs(node.refs)) if node.refs else None
    ref = schema.get("$ref")
    if defs and isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) == 1:
        schema = dict(defs[ref.removeprefix("#/$defs/")])  # a class: its object schema, at the top
    if schema.get("type") == "object":
        out = schema
    else:
        out = {"type": "object", "properties": {"result": schema}, "required": ["result"], _WRAPPED: True}
    if defs:
        out = {**out, "$defs": defs}
    return out


def structured(schema: dict[str, Any] | None, data: Any, text: str) -> Any:
    """The ``structuredContent`` of a successful call of a tool with ``schema``: the result's
    data (a text result keeps no data: then its text)."""
    if schema is None:
        return None
    if not schema.get(_WRAPPED):
        return data
    if data is None and schema["properties"]["result"].get("type") == "string":
        data = text
    return {"result": data}


def listing(registry: Any, permissions: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The MCP tool objects, and each listed name's output schema (None when untyped)."""
    names = list(registry.names())
    if permissions is not None:
        names = [n for n in names if permissions.denial_reason(registry.get(n)) is None]
    tools: list[dict[str, Any]] = []
    schemas: dict[str, Any] = {}
    if not names:
        return tools, schemas
    for rendered in registry.to_openai_schema(names=names):
        fn = rendered["function"]
        tool = registry.get(registry.resolve_name(fn["name"]) or fn["name"])
        entry: dict[str, Any] = {
            "name": fn["name"],
            "description": fn.get("description") or "",
            "inputSchema": fn.get("parameters") or {"type": "object", "properties": {}},
        }
        schema = output_schema(tool)
        schemas[fn["name"]] = schema
        if schema is not None:
            entry["outputSchema"] = schema
        hints = {
            key: value for attr, key in _HINTS.items() if (value := getattr(tool, attr, None)) is not None
        }
        if hints:
            entry["annotations"] = hints
        tools.append(entry)
    return tools, schemas
