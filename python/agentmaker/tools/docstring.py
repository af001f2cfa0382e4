"""Docstring parsing for callable tools (the parser itself is Rust: src/docstring.rs).

The tool description is the docstring's first paragraph; parameter descriptions come from the
parameter section in Google (``Args:`` / ``Arguments:`` / ``Parameters:``), NumPy
(``Parameters`` + dashes), Sphinx / epytext (``:param x:``, ``@param x:``) or Chinese (``参数：``)
style, multi-line and multi-paragraph entries kept.  Parsing never raises.
"""

from __future__ import annotations

from typing import NamedTuple

from agentmaker._native import _parse_docstring

__all__ = ["DocInfo", "doc_parts", "parse_docstring"]


class DocInfo(NamedTuple):
    description: str
    params: dict[str, str]


def parse_docstring(doc: str | None) -> DocInfo:
    """Return the first paragraph and the per-parameter descriptions of ``doc``."""
    if not doc or not isinstance(doc, str):
        return DocInfo("", {})
    try:
        description, params = _parse_docstring(doc)
    except Exception:  # noqa: BLE001 - e.g. lone surrogates that are not valid UTF-8
        return DocInfo("", {})
    return DocInfo(description, params)


def doc_parts(doc: str | None) -> tuple[str, dict[str, str]]:
    """``parse_docstring`` as a plain (description, params) pair (the @tool hot path)."""
    if not doc or type(doc) is not str:
        return "", {}
    try:
        return _parse_docstring(doc)
    except Exception:  # noqa: BLE001 - e.g. lone surrogates that are not valid UTF-8
        return "", {}
