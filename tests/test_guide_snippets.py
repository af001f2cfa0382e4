"""The Python snippets of the user documentation (docs/*.md) run as written.

Every ```python block in docs/ is a snippet, extracted at test time, so an edit to a page is
checked too:

- a block whose first line is a comment naming a Python file (``# my_server.py``) is that file:
  it is written into the scratch directory every snippet runs in, instead of being run;
- any other block runs on its own, exactly as written, in a fresh namespace that holds only the
  names the guide's first example defines (``llm``, ``registry``, ``to_upper``: see PRELUDE),
  with a scratch directory as its working directory and ``python`` on PATH. Top-level
  ``await`` is allowed (the block then runs as the body of a coroutine);
- a block followed by a ```text block must print exactly that text; a block that prints
  without one fails, and so does a block with neither an ``assert`` nor an expected output,
  since it would prove nothing.

A snippet that connects to a remote host (it names an ``https://`` URL) is only compiled, and
the keywords it passes to ``MCPClient`` must be ones it accepts: tests never leave 127.0.0.1.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import os
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import agentmaker
import pytest
from conftest import REPO

DOCS = REPO / "docs"
GUIDE = DOCS / "guide.md"
_FILE_BLOCK = re.compile(r"^# ([\w.-]+\.py)$")


@dataclass(frozen=True)
class Snippet:
    page: str
    lineno: int
    src: str
    expected: str | None  # the ```text block right after it, if any


def extract(text: str, page: str) -> tuple[list[Snippet], dict[str, str]]:
    """The runnable snippets of a Markdown page, and its file blocks by file name."""
    lines = text.splitlines()
    snippets: list[Snippet] = []
    files: dict[str, str] = {}
    i = 0

    def block(start: int) -> tuple[str, int]:
        end = start
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        assert end < len(lines), f"{page}:{start}: unclosed code block"
        return "\n".join(lines[start:end]), end + 1

    while i < len(lines):
        if lines[i].strip() != "```python":
            i += 1
            continue
        lineno = i + 2
        src, i = block(i + 1)
        named = _FILE_BLOCK.match(src.splitlines()[0]) if src else None
        if named:
            files[named.group(1)] = src + "\n"
            continue
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        expected = None
        if j < len(lines) and lines[j].strip() == "```text":
            expected, i = block(j + 1)
        snippets.append(Snippet(page, lineno, src, expected))
    return snippets, files


def _collect() -> tuple[list[Snippet], dict[str, str]]:
    snippets: list[Snippet] = []
    files: dict[str, str] = {}
    for page in sorted(DOCS.glob("*.md")):
        s, f = extract(page.read_text(encoding="utf-8"), page.name)
        snippets += s
        files.update(f)
    return snippets, files


SNIPPETS, FILES = _collect()


def test_the_guide_is_there_and_has_its_snippets():
    assert GUIDE.exists(), f"the guide is expected at {GUIDE}"
    in_guide = [s for s in SNIPPETS if s.page == "guide.md"]
    assert len(in_guide) >= 20, [s.src.splitlines()[0] for s in in_guide]
    assert any("ToolPermissions(allow_origins" in s.src for s in in_guide)
    assert any("MCPClient(command=" in s.src for s in in_guide)
    assert "my_server.py" in FILES


# Names the guide must explain: the public API, and the methods and options a user reaches for.
PROMISED = [
    *agentmaker.__all__,
    "ScriptedLLM",
    "register_callable",
    "serve_mcp",
    "aserve_mcp",
    "register_function",
    "register_all",
    "on_conflict",
    "overwrite",
    "from_callable",
    "get_parameters",
    "get_catalog",
    "get_tools_description",
    "to_openai_schema",
    "to_anthropic_schema",
    "to_gemini_schema",
    "strict_fallbacks",
    "execute_tool",
    "aexecute_tool",
    "validate",
    "requires_confirmation",
    "external_content",
    "supports_parallel",
    "stop_after_tool_call",
    "needs_confirmation",
    "is_external_content",
    "load_tools",
    "expected_fingerprints",
    "fingerprint",
    "max_tools",
    "max_result_chars",
    "allow_insecure_http",
    "namespace",
    "always_include",
    "on_empty",
    "selector",
    "schema_for",
    "retrieve",
    "index",
    "arg_policy",
    "prompts",
]


def test_the_guide_explains_every_public_name():
    text = GUIDE.read_text(encoding="utf-8")
    missing = [n for n in PROMISED if not re.search(rf"`[^`]*\b{re.escape(n)}\b[^`]*`", text)]
    assert not missing, f"the guide never mentions {missing}"


# ----------------------------------------------------------------------------------- context

# What the guide's first example defines, and what later snippets may use without defining.
PRELUDE = '''
from agentmaker import ToolRegistry, tool
from agentmaker.testing import ScriptedLLM

@tool
def to_upper(text: str) -> str:
    """Uppercase a piece of text.

    Args:
        text: The text to uppercase.
    """
    return text.upper()

llm = ScriptedLLM(["ok"])
registry = ToolRegistry()
'''
PAGE_NAMES = ("llm", "registry", "to_upper")


def page_namespace() -> dict:
    scratch: dict = {}
    exec(compile(PRELUDE, "<prelude>", "exec"), scratch)  # noqa: S102 - the page context
    namespace = {"__name__": "__guide__", "__builtins__": scratch["__builtins__"]}
    namespace.update({n: scratch[n] for n in PAGE_NAMES})
    return namespace


def _awaits(src: str) -> bool:
    try:
        compile(src, "<snippet>", "exec")  # ast.parse alone accepts a top-level await
    except SyntaxError:
        return True  # top-level await or async with: compiled as a coroutine body below
    return False


def run_snippet(src: str, namespace: dict, where: str) -> None:
    """Execute ``src`` unchanged, as a coroutine body when it awaits at top level."""
    if _awaits(src):
        body = "async def __snippet__():\n" + textwrap.indent(src, "    ") + "\n    return locals()\n"
        exec(compile(body, where, "exec"), namespace)  # noqa: S102 - running the guide is the point
        namespace.update(asyncio.run(namespace["__snippet__"]()))
        return
    exec(compile(src, where, "exec"), namespace)  # noqa: S102 - running the guide is the point


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A scratch working directory holding the pages' files (my_server.py), `python` on PATH."""
    for name, src in FILES.items():
        (tmp_path / name).write_text(src, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return tmp_path


def _asserts(src: str) -> bool:
    body = "async def _s():\n" + textwrap.indent(src, "    ") if _awaits(src) else src
    return any(isinstance(node, ast.Assert) for node in ast.walk(ast.parse(body)))


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"{s.page}:{s.lineno}" for s in SNIPPETS])
def test_snippet_runs_as_written(snippet, sandbox):
    src = snippet.src
    where = f"{snippet.page}:{snippet.lineno}"
    if "https://" in src:
        # It connects to a remote host, which tests never do: it is compiled, and the keywords
        # it gives MCPClient must be accepted.
        compile("async def _s():\n" + textwrap.indent(src, "    "), where, "exec")
        params = inspect.signature(agentmaker.MCPClient).parameters
        keywords = re.findall(r"(\w+)=", src.split("MCPClient(", 1)[1].split(")")[0])
        assert keywords
        for kw in keywords:
            assert kw in params, kw
        return
    assert snippet.expected is not None or _asserts(src), f"{where} checks nothing: add an assert"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_snippet(src, page_namespace(), where)
    printed = out.getvalue()
    if snippet.expected is None:
        assert printed == "", f"{where} prints output its page does not show:\n{printed}"
    else:
        assert printed.rstrip("\n") == snippet.expected.rstrip("\n")


def test_a_broken_promise_fails():
    """The checks above catch a snippet whose output differs from its page, or whose assert fails."""
    snippets, _ = extract(
        "```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n\n```python\nassert 1 + 1 == 3\n```\n", "t.md"
    )
    assert [s.expected for s in snippets] == ["3", None]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_snippet(snippets[0].src, page_namespace(), "t.md:2")
    assert out.getvalue().rstrip("\n") != snippets[0].expected
    with pytest.raises(AssertionError):
        run_snippet(snippets[1].src, page_namespace(), "t.md:10")


def test_guide_snippets_run_as_scripts_without_top_level_await():
    """Pasted into a script, a top-level ``await`` is a SyntaxError: the guide shows
    ``asyncio.run(main())`` instead."""
    awaiting = [f"{s.page}:{s.lineno}" for s in SNIPPETS if s.page == "guide.md" and _awaits(s.src)]
    assert awaiting == []
