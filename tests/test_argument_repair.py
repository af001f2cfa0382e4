"""Arguments the model almost got right are repaired, reported and never guessed, on every
path: ``Agent.run``, ``Agent.arun``, ``execute_tool`` / ``aexecute_tool`` and a served MCP call."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from agentmaker import Agent, RunPolicy, Tool, ToolRegistrationError, ToolRegistry, ToolResponse, tool
from agentmaker.events import ToolEnd
from agentmaker.llm import LLMResponse
from agentmaker.testing import ScriptedLLM
from mcp.client.stdio import stdio_client
from test_mcp_serve import serve_args, server_env

from mcp import ClientSession, StdioServerParameters

NOTE = "\n\n(Note: the arguments of this call were repaired before it ran: {}. Send arguments that match the schema exactly.)"

seen: list[Any] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    seen.append((a, b))
    return a + b


@tool
def paint(color: Literal["red", "dark_blue"], tags: list[int], loud: bool = False) -> str:
    """Paint."""
    seen.append((color, tags, loud))
    return f"{color} {tags} {loud}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    seen.clear()


def raw_call(name: str, arguments: str, finish_reason: str | None = "tool_calls") -> LLMResponse:
    """A response whose call carries `arguments` as the model wrote them."""
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return LLMResponse(tool_calls=[call], finish_reason=finish_reason)


def run_one(arguments: str, *, tools: list[Any] | None = None, name: str = "add", **agent: Any) -> Any:
    llm = ScriptedLLM([raw_call(name, arguments), "done"])
    result = Agent("a", llm, tools=tools or [add], **agent).run("go")
    return result.tool_calls[0]


@pytest.mark.parametrize(
    ("text", "repair"),
    [
        ('{"a": 1, "b": 2,}', "trailing comma removed"),
        ("{'a': 1, 'b': 2}", "single-quoted strings read as JSON strings"),
        ('{"a": 1, "b": 2', "missing '}' added at the end"),
        ('```json\n{"a": 1, "b": 2}\n```', "code fence removed"),
        ('Here you go: {"a": 1, "b": 2}', "text around the JSON object removed"),
        ("{a: 1, b: 2}", "unquoted keys quoted"),
        ('{"a": 1, /* the second */ "b": 2}', "comments removed"),
        ('"{\\"a\\": 1, \\"b\\": 2}"', "the object was sent as a JSON string; decoded"),
        ('{"a": "1", "b": 2}', "'a': \"1\" → 1"),
        ('{"a": "1.0", "b": 2}', "'a': \"1.0\" → 1"),
    ],
)
def test_run_repairs_reports_and_tells_the_model(text: str, repair: str) -> None:
    rec = run_one(text)
    assert rec.status == "success"
    assert rec.repairs == [repair]
    assert rec.output == "3" + NOTE.format(repair)
    assert rec.arguments == {"a": 1, "b": 2}
    assert seen == [(1, 2)] and all(type(v) is int for v in seen[0])


def test_valid_arguments_are_untouched_and_unreported() -> None:
    rec = run_one('{"a": 1, "b": 2}')
    assert (rec.status, rec.output, rec.repairs) == ("success", "3", [])


@dataclass
class Box:
    n: int


@tool
def boxed(box: Box, k: int) -> str:
    """Show what arrived."""
    return repr((box.n, k))


def test_a_function_receives_ints_for_integers_on_every_path() -> None:
    # 2.0 is an integer to JSON Schema, so these arguments are valid; the function still gets ints.
    rec = run_one('{"box": {"n": 2.0}, "k": 3.0}', tools=[boxed], name="boxed")
    assert rec.output.startswith("(2, 3)\n\n(Note: "), rec.output
    assert rec.repairs == ["'box.n': 2.0 → 2", "'k': 3.0 → 3"]
    reg = ToolRegistry()
    reg.register(boxed)
    assert reg.execute_tool("boxed", {"box": {"n": 2.0}, "k": 3.0}).text == "(2, 3)"


def test_a_function_gets_a_misnamed_optional_parameter_under_its_name() -> None:
    @tool
    def fall(time: int, initial_speed: int = 0) -> str:
        """Fall."""
        return repr((time, initial_speed))

    # Valid for the schema (it admits other keys), but the function would never see the key.
    rec = run_one('{"time": 1, "initialSpeed": 5}', tools=[fall], name="fall")
    assert rec.output.startswith("(1, 5)\n\n(Note: ") and rec.repairs == ["'initialSpeed' → 'initial_speed'"]
    reg = ToolRegistry()
    reg.register(fall)
    assert reg.execute_tool("fall", {"time": 1, "INITIAL-SPEED": 5}).text == "(1, 5)"


def test_values_are_coerced_to_the_schema() -> None:
    rec = run_one('{"color": "DARK-BLUE", "tags": "[1, 2]", "loud": "true"}', tools=[paint], name="paint")
    assert rec.status == "success", rec.output
    assert seen == [("dark_blue", [1, 2], True)]
    assert rec.repairs == [
        '\'color\': "DARK-BLUE" → "dark_blue"',
        "'tags': \"[1, 2]\" → [1,2]",
        "'loud': \"true\" → true",
    ]
    rec = run_one('{"color": "red", "tags": 7}', tools=[paint], name="paint")
    assert rec.status == "success" and seen[-1] == ("red", [7], False)


def test_a_reply_cut_off_by_the_token_limit_is_never_completed() -> None:
    llm = ScriptedLLM([raw_call("add", '{"a": 1, "b": 2', finish_reason="length"), "done"])
    rec = Agent("a", llm, tools=[add]).run("go").tool_calls[0]
    assert rec.status == "invalid_args"
    assert rec.output == (
        "Error: the arguments for tool 'add' were cut off: your reply reached its token limit "
        "before they were complete, so the call was not run. Send the call again, shorter if it must be."
    )
    assert seen == []


@pytest.mark.parametrize(
    "text",
    ['{"a": "1 apple", "b": 2}', '{"a": "1.5", "b": 2}', '{"a": 1, "b": "tw', '{"a": 1, "b": two}'],
)
def test_what_would_be_a_guess_stays_an_error(text: str) -> None:
    rec = run_one(text)
    assert rec.status in ("invalid", "invalid_args"), rec.output
    assert rec.repairs == [] and seen == []


def test_two_candidates_are_listed_not_chosen() -> None:
    @tool
    def shade(c: Literal["red", "RED"]) -> str:
        """Shade."""
        return c

    rec = run_one('{"c": "Red"}', tools=[shade], name="shade")
    assert rec.status == "invalid"
    assert rec.output.endswith(
        "Not repaired (more than one reading fits): 'c': \"Red\" matches more than one allowed "
        'value ("red", "RED"); it was not changed'
    ), rec.output


def test_the_policy_and_the_tool_choose_what_is_repaired() -> None:
    off = RunPolicy(repair="off")
    assert run_one('{"a": 1, "b": 2,}', run_policy=off).status == "invalid_args"
    assert run_one('{"a": "1", "b": 2}', run_policy=off).status == "invalid"
    coerce = RunPolicy(repair="coerce")
    assert run_one('{"a": 1, "b": 2,}', run_policy=coerce).status == "invalid_args"
    assert run_one('{"a": "1", "b": 2}', run_policy=coerce).status == "success"

    @tool(repair="off")
    def strict_add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert run_one('{"a": "1", "b": 2}', tools=[strict_add], name="strict_add").status == "invalid"
    assert run_one("{'a': 1, 'b': 2}", tools=[strict_add], name="strict_add").status == "invalid_args"

    class Lenient(Tool):
        repair = "full"

        def __init__(self) -> None:
            super().__init__("lenient", "Echo n.")

        def get_input_schema(self) -> dict[str, Any]:
            return {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

        def run(self, parameters: dict[str, Any]) -> ToolResponse:
            return ToolResponse.ok(repr(parameters["n"]))

    rec = run_one("{'n': '4'}", tools=[Lenient()], name="lenient", run_policy=off)
    assert (rec.status, rec.output.split("\n")[0]) == ("success", "4")

    with pytest.raises(ValueError, match='repair must be "full", "coerce" or "off"'):
        RunPolicy(repair="some")  # type: ignore[arg-type]
    with pytest.raises(ToolRegistrationError, match='repair must be "full", "coerce" or "off"'):
        tool(repair="yes")(add.func)  # type: ignore[call-overload]


def test_a_person_approves_the_repaired_arguments_and_events_list_the_repairs() -> None:
    asked: list[dict[str, Any]] = []

    @tool(requires_confirmation=True)
    def remove(count: int) -> str:
        """Remove some."""
        return f"removed {count!r}"

    def confirm(_tool: Any, args: dict[str, Any]) -> bool:
        asked.append(args)
        return True

    ends: list[ToolEnd] = []

    class Hooks:
        def on_tool_end(self, event: ToolEnd) -> None:
            ends.append(event)

    rec = run_one('{"count": "3",}', tools=[remove], name="remove", confirm=confirm, hooks=Hooks())
    assert asked == [{"count": 3}]
    assert rec.output.startswith("removed 3\n\n(Note: ")
    assert ends[0].repairs == ("trailing comma removed", "'count': \"3\" → 3")


def test_arun_repairs_async_tools_too() -> None:
    @tool
    async def mul(a: int, b: int) -> int:
        """Multiply."""
        seen.append((a, b))
        return a * b

    llm = ScriptedLLM([raw_call("mul", "{'a': '6', 'b': 7.0,}"), "done"])
    rec = asyncio.run(Agent("a", llm, tools=[mul]).arun("go")).tool_calls[0]
    assert rec.status == "success" and rec.output.startswith("42\n\n(Note: ")
    assert seen == [(6, 7)] and all(type(v) is int for v in seen[0])


def test_execute_tool_coerces_dict_arguments() -> None:
    reg = ToolRegistry()
    reg.register(add)
    assert reg.execute_tool("add", {"a": "1", "b": 2.0}).text == "3"
    assert asyncio.run(reg.aexecute_tool("add", {"a": 4.0, "b": "5"})).text == "9"
    assert seen == [(1, 2), (4, 5)] and all(type(v) is int for pair in seen for v in pair)
    bad = reg.execute_tool("add", {"a": "1 apple", "b": 2})
    assert bad.is_error and 'parameter \'a\': "1 apple" is not of type "integer"' in bad.text


def test_execute_tool_coerces_json_text_but_never_reads_it_leniently() -> None:
    reg = ToolRegistry()
    reg.register(add)
    assert reg.execute_tool("add", '{"a": "1", "b": 2.0}').text == "3"
    assert asyncio.run(reg.aexecute_tool("add", '{"a": 4.0, "b": "5"}')).text == "9"
    assert seen == [(1, 2), (4, 5)] and all(type(v) is int for pair in seen for v in pair)
    bad = reg.execute_tool("add", '{"a": 1, "b": 2,}')
    assert bad.is_error and bad.text == "Error: arguments for tool 'add' are not valid JSON"


async def test_a_served_call_is_repaired() -> None:
    params = StdioServerParameters(command=sys.executable, args=serve_args(), env=server_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        done = await session.call_tool("add", {"a": "2", "b": 40.0})
        assert done.is_error is False
        assert done.content[0].text == "42" + NOTE.format("'a': \"2\" → 2; 'b': 40.0 → 40")


def test_repairs_survive_the_run_results_json_form() -> None:
    from agentmaker import RunResult

    llm = ScriptedLLM([raw_call("add", "{'a': 1, 'b': 2}"), "done"])
    result = Agent("a", llm, tools=[add]).run("go")
    again = RunResult.from_json(result.to_json())
    assert again.tool_calls[0].repairs == ["single-quoted strings read as JSON strings"]


def test_a_paused_call_is_approved_and_resumed_with_its_repaired_arguments() -> None:
    @tool(requires_confirmation=True)
    def remove(count: int) -> str:
        """Remove some."""
        return f"removed {count!r}"

    llm = ScriptedLLM([raw_call("remove", "{'count': '3'}"), "done"])
    agent = Agent("a", llm, tools=[remove], confirm="pause")
    paused = agent.run("go")
    assert paused.status == "paused"
    (pending,) = paused.pending
    assert pending.arguments == {"count": 3}
    resumed = agent.resume(paused, decisions={pending.id: True}, digests={pending.id: pending.digest})
    rec = resumed.tool_calls[-1]
    assert rec.output.startswith("removed 3\n\n(Note: "), rec.output
    assert rec.repairs == ["single-quoted strings read as JSON strings", "'count': \"3\" → 3"]


def test_guardrails_see_repaired_arguments_and_the_note_follows_the_cut() -> None:
    """Parse and repair come first: an input guardrail sees the repaired arguments; an output
    guardrail sees the whole result; the note on the repairs follows the max_result_chars cut."""
    from agentmaker.agent.guardrails import ToolCheck

    checked: list[tuple[str, Any]] = []

    def look(check: ToolCheck) -> None:
        checked.append((check.stage, check.output if check.stage == "output" else check.arguments))

    @tool
    def words(n: int) -> str:
        """Say n words."""
        return " ".join(["word"] * n)

    rec = run_one(
        "{'n': '3'}",
        tools=[words],
        name="words",
        input_guardrails=[look],
        output_guardrails=[look],
        run_policy=RunPolicy(max_result_chars=4),
    )
    assert checked == [("input", {"n": 3}), ("output", "word word word")]
    assert rec.status == "partial" and rec.arguments == {"n": 3}
    note = NOTE.format("single-quoted strings read as JSON strings; 'n': \"3\" → 3")
    assert rec.output.startswith("word\n[result cut") and rec.output.endswith(note)
