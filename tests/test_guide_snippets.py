"""The Python snippets of the tools guide run unchanged against this package.

The snippets are extracted from ``shared/reference/tools-guide.en.txt`` at test time, so an edit
to the guide is checked too. A snippet that relies on context from the page (``llm``,
``registry``, ``to_upper``, a retriever, an open MCP server) gets that context as a prelude;
the snippet's own lines are executed exactly as written.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SHARED

GUIDE = SHARED / "reference" / "tools-guide.en.txt"

# A line that can begin or continue a code block (prose lines start with a capitalised word).
_CODE_START = re.compile(r"^(from |import |@|def |class |async |await |#|\)|\]|\}|[A-Za-z_][\w.]*\s*(=|\())")


def _compiles(src: str) -> bool:
    if "await " in src or "async with" in src:
        src = "async def _snippet():\n" + textwrap.indent(src, "    ")
    try:
        ast.parse(src)
    except SyntaxError:
        return False
    return True


def _carve(block: list[str]) -> list[str]:
    """The longest compilable pieces of a run of code-looking lines, left to right."""
    out = []
    start = 0
    while start < len(block):
        for end in range(len(block), start, -1):
            src = "\n".join(block[start:end]).strip("\n")
            if src and _compiles(src):
                out.append(src)
                start = end
                break
        else:
            start += 1
    return out


def extract_snippets(text: str) -> list[tuple[int, str]]:
    lines = text.splitlines()

    def code_like(line: str) -> bool:
        return line.startswith((" ", "\t")) or bool(_CODE_START.match(line))

    snippets = []
    i = 0
    while i < len(lines):
        if not (lines[i].strip() and code_like(lines[i])):
            i += 1
            continue
        j, last = i, i
        while j < len(lines):
            if not lines[j].strip():
                j += 1
            elif code_like(lines[j]):
                last = j
                j += 1
            else:
                break
        offset = i
        for src in _carve(lines[i : last + 1]):
            first = src.splitlines()[0]
            lineno = lines.index(first, offset) + 1
            snippets.append((lineno, src))
            offset = lineno
        i = last + 1
    return snippets


SNIPPETS = extract_snippets(GUIDE.read_text(encoding="utf-8")) if GUIDE.exists() else []


def test_the_guide_is_there_and_has_its_snippets():
    assert GUIDE.exists(), f"the guide is expected at {GUIDE}"
    firsts = [s.splitlines()[0] for _, s in SNIPPETS]
    assert len(SNIPPETS) >= 20, firsts
    assert any("ToolPermissions(allow_origins" in s for _, s in SNIPPETS)
    assert any("MCPClient(command=" in s for _, s in SNIPPETS)


# ----------------------------------------------------------------------------------- context

MCP_SERVER = '''
"""A tiny MCP server over stdio (the guide's my_server.py)."""
try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

server = Server("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
'''

PRELUDE = '''
from agentmaker import *  # the names the guide's page has in scope
from agentmaker import tool
from agentmaker.testing import ScriptedLLM

@tool
def to_upper(text: str) -> str:
    """Uppercase a string."""
    return text.upper()

llm = ScriptedLLM(["ok"])
registry = ToolRegistry()
'''

RETRIEVER = '''
retriever = HybridRetriever()
@tool
def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount of money between currencies."""
    return f"{amount} {source} in {target}"
registry.register(convert_currency)
'''


def prelude_for(src: str) -> str:
    parts = [PRELUDE]
    if 'execute_tool("calculator"' in src and "CalculatorTool()" not in src:
        parts.append("registry.register(CalculatorTool())")
    if "retriever" in src:
        parts.append(RETRIEVER)
        if "ToolRetriever(" not in src:
            parts.append(
                'tool_retriever = ToolRetriever(registry, retriever, always_include=("tool_search",))'
            )
    return "\n".join(parts)


def run_snippet(src: str, namespace: dict) -> object:
    """Execute ``src`` unchanged; returns the value of a trailing expression statement."""
    tree = ast.parse(src) if _compiles(src) and "await " not in src and "async with" not in src else None
    if tree is None:  # top-level await: run the snippet as the body of a coroutine
        body = "async def __snippet__():\n" + textwrap.indent(src, "    ") + "\n    return locals()\n"
        exec(compile(body, "<guide>", "exec"), namespace)  # noqa: S102 - running the guide is the point
        namespace.update(asyncio.run(namespace["__snippet__"]()))
        return None
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, "<guide>", "exec"), namespace)  # noqa: S102 - running the guide is the point
    if last is not None:
        return eval(compile(ast.Expression(last.value), "<guide>", "eval"), namespace)
    return None


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A scratch working directory with the guide's my_server.py, and `python` on PATH."""
    (tmp_path / "my_server.py").write_text(MCP_SERVER, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return tmp_path


def _ids():
    return [f"line{n}-{s.splitlines()[0][:40]}" for n, s in SNIPPETS]


@pytest.mark.parametrize(("lineno", "src"), SNIPPETS, ids=_ids())
def test_snippet_runs_unchanged(lineno, src, sandbox):
    if "https://" in src:
        # This one connects to a remote host, which tests never do: it is compiled, and the
        # keywords it uses must be accepted by MCPClient.
        import inspect

        from agentmaker import MCPClient

        assert _compiles(src)
        params = inspect.signature(MCPClient).parameters
        for kw in re.findall(r"(\w+)=", src.split("MCPClient(", 1)[1].split(")")[0]):
            assert kw in params, kw
        return
    namespace: dict = {"__name__": "__guide__"}
    exec(compile(prelude_for(src), "<prelude>", "exec"), namespace)  # noqa: S102 - the page context
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        value = run_snippet(src, namespace)
    if "print(agent.run" in src:
        assert out.getvalue().strip() == "The result is 35."
    if src.startswith('registry.execute_tool("calculator"'):
        assert (value.text, value.status) == ("4", "success")
    if src.startswith("ToolResponse.ok("):
        assert value.status == "error" and value.text == "query must not be empty"
    if src.startswith("ToolParameter("):
        assert value.schema["enum"] == ["read", "append"]
    if "MCPClient(command=" in src:
        assert "calc_add" in namespace["registry"].names()
    if "tool_retriever.retrieve(" in src:
        assert namespace["names"][0] == "convert_currency"
        assert namespace["schema"][0]["function"]["name"] == "convert_currency"
    if "NotesTool(root=" in src:
        assert (sandbox / "agent_notes").is_dir()
