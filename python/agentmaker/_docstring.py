"""Docstring parsing for callable tools.

A tool's description is the docstring's first paragraph; parameter descriptions come from the
parameter section in any of the common styles: Google (``Args:`` / ``Arguments:`` /
``Parameters:``, the header may carry trailing text), NumPy (``Parameters`` underlined with
dashes), Sphinx / epytext (``:param x:``, ``:param int x:``, ``@param x:``) and the Chinese
``参数：`` section.  Entries may span several lines and several paragraphs; continuation lines are
joined with a space and paragraphs with a blank line.

The parser never raises: an unparseable docstring yields what could be read (at worst an empty
description and no parameter docs).  It runs once per decorated function, so it works line by line
with cheap string tests first and regexes only where a line may be a header or an entry.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["DocInfo", "parse_docstring"]


class DocInfo(NamedTuple):
    description: str
    params: dict[str, str]


# Section names compared case-insensitively against the text before the colon of a line.
_PARAM_WORDS = r"args|arguments|parameters|params|keyword args|keyword arguments|kwargs|other parameters|attributes"
_PARAM_WORDS_ZH = r"参数|参数列表|属性"
_FIELD_WORDS = r"param|parameter|arg|argument|key|keyword"

# A parameter section header: Google / Chinese ("Args:", "Parameters (optional):", "参数：",
# trailing text allowed), NumPy (a name underlined with dashes) or a Sphinx / epytext field.
# It is only tried at the starts of lines that contain one of _NEEDLES (regex scanning of the
# whole text with re.M costs more than the rest of the parse together).
_SECTION = re.compile(
    rf"([ \t]*)(?:"
    rf"(?P<numpy>(?i:parameters|other parameters|attributes|params)|{_PARAM_WORDS_ZH})[ \t]*\n[ \t]*-{{3,}}[ \t]*"
    rf"|(?P<google>(?i:{_PARAM_WORDS})|{_PARAM_WORDS_ZH})[ \t]*(?:[(（][^)）\n]*[)）])?[ \t]*[:：][^\n]*"
    rf"|(?P<field>[:@](?:{_FIELD_WORDS})\s[^\n]*)"
    rf")$",
    re.M,
)
_NEEDLES = ("arg", "param", "attributes", ":key", "参数", "属性")
# Lines that end the summary paragraph: any section header that announces a block ("Returns:
# the sum" included), prose-like headers ("Note:", "Example:") only when alone on their line,
# Sphinx fields and doctest prompts.  NumPy underlined headers are found separately.
_SUMMARY_STOP = re.compile(
    rf"[ \t]*(?:"
    rf"(?:(?i:{_PARAM_WORDS}|returns?|yields?|raises)|{_PARAM_WORDS_ZH}|返回|异常)[ \t]*(?:\([^)\n]*\))?[ \t]*[:：]"
    rf"|(?:(?i:examples?|notes?|see also|references|warnings?|todo|methods)|示例|例子|注意|说明|备注)[ \t]*[:：][ \t]*$"
    rf"|[:@](?:{_FIELD_WORDS}|type|returns?|rtype|raises?|except|exception|var|ivar|cvar|vartype|meta)[\s:]"
    rf"|>>>"
    rf")",
)
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")
_OTHER_HEADER = re.compile(
    r"(?:(?i:returns?|yields?|raises|examples?|notes?|see also|references|warnings?|todo|methods)"
    r"|返回|异常|示例|例子|注意|说明|备注)[ \t]*[:：]"
)

# "name (type): text", "name: text", "*args: text", "名称（类型）：文本".  An ASCII colon must be
# followed by whitespace or the end of the line so "http://x" is not taken for an entry.
_GOOGLE_ENTRY = re.compile(r"(\*{0,2}[^\W\d]\w*)\s*(?:[(（][^)）]*[)）])?\s*(?::(?=\s|$)|：)\s*(.*)")
_NUMPY_ENTRY = re.compile(r"(\*{0,2}[^\W\d]\w*(?:\s*,\s*\*{0,2}[^\W\d]\w*)*)\s*(?::.*)?")
_FIELD = re.compile(rf"[:@](?:{_FIELD_WORDS})\s+([^:]*?)\s*:(?!:)\s*(.*)")


def parse_docstring(doc: str | None) -> DocInfo:
    """Return the first paragraph and the per-parameter descriptions of ``doc``."""
    if not doc:
        return DocInfo("", {})
    try:
        cached = _CACHE.get(doc)
        if cached is None:
            cached = _parse(doc)
            if len(_CACHE) < 4096:
                _CACHE[doc] = cached
        return DocInfo(cached[0], dict(cached[1]))
    except Exception:  # noqa: BLE001 - documented contract: parsing never raises
        return DocInfo("", {})


_CACHE: dict[str, tuple[str, dict[str, str]]] = {}


def _parse(doc: str) -> tuple[str, dict[str, str]]:
    if "\t" in doc:
        doc = doc.expandtabs(8)
    body = doc.lstrip()
    blank = _BLANK_LINE.search(body)
    para = body[: blank.start()] if blank is not None else body
    if ":" in para or "：" in para or ">>>" in para or "---" in para:
        para = _cut_summary(para)
    description = " ".join(para.split())

    params: dict[str, str] = {}
    lower = doc.lower()
    starts = set()
    for needle in _NEEDLES:
        pos = lower.find(needle)
        while pos >= 0:
            starts.add(lower.rfind("\n", 0, pos) + 1)
            pos = lower.find(needle, pos + len(needle))
    done = 0  # offset up to which sections were consumed (entries never start new sections)
    for start in sorted(starts):
        if start < done:
            continue
        m = _SECTION.match(doc, start)
        if m is None:
            continue
        indent = len(m.group(1))
        if m.group("field") is not None:
            done = start
            lines = doc[start:].split("\n")
            used = _field(lines, indent, _FIELD.match(lines[0].strip()), params)
        else:
            lines = doc[m.end() + 1 :].split("\n")
            if m.group("numpy") is not None:
                used = _numpy_section(lines, indent, params)
            else:
                used = _google_section(lines, indent, params)
            done = m.end() + 1
        for line in lines[:used]:
            done += len(line) + 1
    return description, params


def _cut_summary(para: str) -> str:
    lines = para.split("\n")
    for i, line in enumerate(lines):
        if _SUMMARY_STOP.match(line) or (i + 1 < len(lines) and _is_rule(lines[i + 1])):
            return "\n".join(lines[:i])
    return para


def _is_rule(line: str) -> bool:
    s = line.strip()
    return len(s) >= 3 and not s.strip("-")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


_PARA = "\n\n"


def _entry_text(parts: list[str]) -> str:
    """Join an entry's lines with spaces and its paragraphs (marked by _PARA) with a blank line."""
    while parts and parts[-1] is _PARA:
        parts.pop()
    if _PARA not in parts:
        return " ".join(parts)
    return " ".join(parts).replace(" \n\n ", "\n\n").strip()


def _store(out: dict[str, str], names: list[str], parts: list[str]) -> None:
    if names:
        text = _entry_text(parts)
        for name in names:
            out.setdefault(name.lstrip("*"), text)


def _google_entry(s: str) -> tuple[str, str] | None:
    """Split "name (type): text" / "名称（类型）：文本" into (name, text), or None for other lines."""
    m = _GOOGLE_ENTRY.match(s)
    if m is None:
        return None
    return m.group(1).lstrip("*"), m.group(2).strip()


def _google_section(lines: list[str], header_indent: int, out: dict[str, str]) -> int:
    """Parse the body of a Google-style section; return the number of lines it spans.

    Entries sit at the indentation of the first body line; deeper lines (and blank lines between
    them) continue the current entry.  The section ends at the first line indented no deeper than
    its header.
    """
    n = len(lines)
    j = 0
    while j < n and not lines[j].strip():
        j += 1
    if j >= n:
        return j
    first = lines[j]
    entry_indent = len(first) - len(first.lstrip())
    if entry_indent <= header_indent:
        return _flat_section(lines, out)
    name = ""
    parts: list[str] = []
    i = j
    while i < n:
        line = lines[i]
        s = line.lstrip()
        if not s:
            if parts and parts[-1] is not _PARA:
                parts.append(_PARA)
            i += 1
            continue
        ind = len(line) - len(s)
        if ind <= header_indent:
            break
        s = s.rstrip()
        if ind <= entry_indent:
            found = _google_entry(s)
            if found is not None:
                if name and name not in out:
                    out[name] = _entry_text(parts)
                name = found[0]
                parts = [found[1]] if found[1] else []
                i += 1
                continue
        if name:
            parts.append(s)
        i += 1
    if name and name not in out:
        out[name] = _entry_text(parts)
    return i


def _flat_section(lines: list[str], out: dict[str, str]) -> int:
    """A section whose entries are not indented below the header: it ends at a blank line or at
    the next header; lines that are not entries continue the previous entry."""
    names: list[str] = []
    parts: list[str] = []
    i = 0
    for i, line in enumerate(lines):  # noqa: B007 - i is the result
        s = line.strip()
        if not s:
            if names:
                break
            continue
        if _OTHER_HEADER.match(s) or (i + 1 < len(lines) and _is_rule(lines[i + 1])):
            break
        found = _google_entry(s)
        if found is not None:
            _store(out, names, parts)
            names = [found[0]]
            parts = [found[1]] if found[1] else []
        elif names:
            parts.append(s)
    else:
        i = len(lines)
    _store(out, names, parts)
    return i


def _gap(parts: list[str]) -> None:
    if parts and parts[-1] is not _PARA:
        parts.append(_PARA)


def _numpy_section(lines: list[str], header_indent: int, out: dict[str, str]) -> int:
    """Parse a NumPy "Parameters" block (entries at the header's indent, text indented below)."""
    names: list[str] = []
    parts: list[str] = []
    n = len(lines)
    i = 0
    while i < n:
        line = lines[i]
        s = line.strip()
        if not s:
            _gap(parts)
            i += 1
            continue
        if i + 1 < n and _is_rule(lines[i + 1]):
            break  # the next NumPy section
        ind = len(line) - len(line.lstrip())
        if ind < header_indent:
            break
        if ind == header_indent:
            if s[0] in ":@" or s.startswith(">>>"):
                break
            m = _NUMPY_ENTRY.fullmatch(s)
            if m is None:
                break
            _store(out, names, parts)
            names = [part.strip() for part in m.group(1).split(",")]
            parts = []
        elif names:
            parts.append(s)
        i += 1
    _store(out, names, parts)
    return i


def _field(lines: list[str], field_indent: int, m: re.Match[str] | None, out: dict[str, str]) -> int:
    """Parse one Sphinx / epytext field starting at lines[0]; return the lines it spans."""
    if m is None:
        return 1
    words = m.group(1).split()
    if not words:
        return 1
    first = m.group(2).strip()
    parts = [first] if first else []
    i = 1
    n = len(lines)
    while i < n:
        line = lines[i]
        s = line.strip()
        if not s:
            # A blank line continues the field only when an indented line follows it.
            if i + 1 < n and lines[i + 1].strip() and _indent(lines[i + 1]) > field_indent:
                _gap(parts)
                i += 1
                continue
            break
        if _indent(line) <= field_indent:
            break
        parts.append(s)
        i += 1
    _store(out, [words[-1]], parts)
    return i
