"""Provider renderings of one root JSON Schema, for code that holds a schema rather than a
registry. The renderers are in the Rust core (``src/render``); ``ToolRegistry.to_openai_schema``,
``to_anthropic_schema`` and ``to_gemini_schema`` render registered tools through the same code.
"""

from __future__ import annotations

from typing import Any

from agentmaker._native import _render_gemini_schema, _render_strict_schema

__all__ = ["NotStrict", "gemini_schema", "strict_schema"]


class NotStrict(Exception):
    """Why a schema has no OpenAI strict form."""


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI strict form of a root schema; raise NotStrict with the reason otherwise."""
    form, reason = _render_strict_schema(schema)
    if reason is not None:
        raise NotStrict(reason)
    assert form is not None  # the renderer gives exactly one of the form and the reason
    return form


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The Gemini form of a schema ($refs inlined, nullable instead of null types)."""
    return _render_gemini_schema(schema)
