"""max_result_chars: a long result is cut, marked partial, and the model is told what is left."""

from __future__ import annotations

import asyncio

import pytest
from agent_support import ENTRY_POINTS, run_by
from agentmaker import Agent, RunPolicy, ToolRegistrationError, ToolResponse, tool
from agentmaker.testing import ScriptedLLM

LINES = "".join(f"line {i:02d}\n" for i in range(10))  # 10 lines of 8 characters


@tool
def dump() -> str:
    """Return ten lines."""
    return LINES


@tool(max_result_chars=20)
def read(path: str, offset: int = 0) -> str:
    """Read a file from a line offset.

    Args:
        path: The file.
        offset: The first line to read.
    """
    return LINES


@tool(max_result_chars=5, external_content=True)
async def fetch(url: str) -> str:
    """Fetch a page.

    Args:
        url: The page.
    """
    await asyncio.sleep(0)
    return "x" * 12


def _tool_texts(llm: ScriptedLLM) -> list[str]:
    return [m["content"] for m in llm.requests[-1].messages if m["role"] == "tool"]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_run_policy_cuts_at_a_line_and_says_how_much_is_left(how):
    llm = ScriptedLLM([ScriptedLLM.tool_call("dump"), "done"])
    agent = Agent("a", llm, tools=[dump], run_policy=RunPolicy(max_result_chars=30))
    result = run_by(agent, how)
    record = result.tool_calls[0]
    assert record.status == "partial"
    expected = (
        "line 00\nline 01\nline 02\n[result cut: showing 24 of 80 characters; 56 characters "
        "(7 lines) were left out; this tool cannot page, so if you need the rest, call it with "
        "narrower arguments.]"
    )
    assert record.output == expected
    assert _tool_texts(llm) == [expected]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_tool_limit_wins_and_a_paging_tool_says_how_to_ask_for_more(how):
    llm = ScriptedLLM(
        [ScriptedLLM.tool_calls(("read", {"path": "f"}), ("fetch", {"url": "u"}), ("dump", {})), "done"]
    )
    agent = Agent("a", llm, tools=[read, fetch, dump], run_policy=RunPolicy(max_result_chars=1000))
    result = run_by(agent, how)
    by_name = {r.name: r for r in result.tool_calls}
    assert by_name["read"].output == (
        "line 00\nline 01\n[result cut: showing 16 of 80 characters; 64 characters (8 lines) were "
        "left out; to read the rest, call 'read' again with its 'offset' argument set past what "
        "you have read.]"
    )
    assert by_name["read"].status == "partial"
    # The cut comes before the external-content frame: the frame holds the notice and closes.
    fetched = by_name["fetch"].output
    assert by_name["fetch"].status == "partial"
    assert "xxxxx\n[result cut: showing 5 of 12 characters; 7 characters (1 line)" in fetched
    assert "xxxxxx" not in fetched
    assert fetched.endswith(" END>>>")
    assert fetched.index("BEGIN>>>") < fetched.index("[result cut") < fetched.index("END>>>")
    # Under the run's larger limit, the plain tool is whole.
    assert (by_name["dump"].status, by_name["dump"].output) == ("success", LINES)


def test_without_a_limit_nothing_is_cut_and_an_error_stays_an_error():
    @tool(max_result_chars=4)
    def broken() -> ToolResponse:
        """Fail at length."""
        return ToolResponse.error("Error: a long explanation")

    llm = ScriptedLLM([ScriptedLLM.tool_calls(("dump", {}), ("broken", {})), "done"])
    result = Agent("a", llm, tools=[dump, broken]).run("go")
    assert (result.tool_calls[0].status, result.tool_calls[0].output) == ("success", LINES)
    assert result.tool_calls[1].status == "error"
    assert result.tool_calls[1].output.startswith("Erro\n[result cut: showing 4 of 25 characters")


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "10"])
def test_bad_limits_are_refused_at_definition(bad):
    with pytest.raises(
        ValueError, match=f"RunPolicy.max_result_chars must be an integer >= 1 or None, got {bad!r}"
    ):
        RunPolicy(max_result_chars=bad)
    with pytest.raises(ToolRegistrationError, match="max_result_chars must be an integer >= 1 or None"):

        @tool(max_result_chars=bad)
        def f() -> str:
            """F."""
            return ""
