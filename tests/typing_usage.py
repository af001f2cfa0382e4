"""The public API as a type checker sees it, used the way a user would.

Checked with ``mypy --strict`` in CI (see .ci/run) and run as a plain script by
tests/test_typing.py, so every ``assert_type`` below is checked statically and every ``assert``
at run time. Every name in ``agentmaker.__all__`` is used here at least once (a test checks it).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Annotated, Any, assert_never, assert_type

from agentmaker import (
    Agent,
    AgentmakerError,
    AgentRunFlow,
    AgentTool,
    Approval,
    CalculatorTool,
    CLITool,
    ContentPart,
    FetchTool,
    FunctionTool,
    GuardrailDecision,
    GuardrailTripped,
    HybridRetriever,
    Isolation,
    LLMClient,
    LLMEnd,
    LLMResponse,
    LLMResponseError,
    LLMStart,
    LLMStream,
    MCPClient,
    MCPTool,
    Message,
    NotesTool,
    PendingCall,
    RetryAgentRun,
    RunCancelled,
    RunContext,
    RunEnd,
    RunEvent,
    RunHooks,
    RunInput,
    RunLimitExceeded,
    RunPolicy,
    RunResult,
    RunStart,
    RunStatus,
    RunUsage,
    SearchTool,
    SkillsTool,
    StopAgentRun,
    TextDelta,
    TodoTool,
    TodoUpdate,
    Tool,
    ToolCallRecord,
    ToolCallStatus,
    ToolCheck,
    ToolConfigError,
    ToolDefinitionWarning,
    ToolEnd,
    ToolError,
    ToolFlags,
    Toolkit,
    ToolParameter,
    ToolPermissions,
    ToolRegistrationError,
    ToolRegistry,
    ToolResponse,
    ToolRetriever,
    ToolSearchTool,
    ToolStart,
    ToolStatus,
    UserInputTool,
    Workspace,
    cli_confirm,
    messages_from_json,
    messages_to_json,
    report_progress,
    tool,
)
from agentmaker.testing import ScriptedLLM

RAW_MCP_SERVER = Path(__file__).resolve().parent / "mcp_servers" / "raw_server.py"

# ------------------------------------------------------------------ @tool keeps the signature


@tool
def get_weather(city: Annotated[str, "City name"], days: int = 1) -> str:
    """Look up the weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@tool(name="add_numbers", supports_parallel=True, timeout=5.0)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def fetch_title(url: str) -> str:
    """Fetch a page title."""
    return f"title of {url}"


# The decorated object is a Tool and still the function, parameter names included.
weather_tool: Tool = get_weather
weather_call: Callable[[str, int], str] = get_weather
assert_type(get_weather("Paris"), str)
assert_type(get_weather("Paris", days=2), str)
assert_type(add(1, 2), int)
add_func: Callable[[int, int], int] = add.func
title: Coroutine[Any, Any, str] = fetch_title("https://example.org")
assert weather_call("Paris", 2) == "Paris: sunny for 2 day(s)" and weather_tool.name == "get_weather"
assert add(2, 3) == add_func(2, 3) == 5 and add.name == "add_numbers" and add.supports_parallel
assert asyncio.run(title) == "title of https://example.org" and fetch_title.is_async


def shout(text: str) -> str:
    """Uppercase a text."""
    return text.upper()


flags: ToolFlags = {"requires_confirmation": True}
shout_tool = Tool.from_callable(shout, name="shout", **flags)
upper: FunctionTool[[str], str] = shout_tool
assert_type(shout_tool("hi"), str)
assert shout_tool("hi") == "HI" and shout_tool.requires_confirmation

registry = ToolRegistry()
registry.register_all([get_weather, add, fetch_title])
registered = registry.register_callable(shout, name="shout_again", stop_after_tool_call=True)
assert_type(registered("x"), str)
assert registered("x") == "X"

# ------------------------------------------------------------------ responses and their status


def to_upper(parameters: dict[str, Any]) -> str:
    return str(parameters["text"]).upper()


dict_tool: Tool = registry.register_function(
    to_upper, "to_upper", "Uppercase a text.", [ToolParameter("text", "string", "The text.")]
)
assert dict_tool.name == "to_upper"

response = registry.execute_tool("to_upper", {"text": "abc"})
assert_type(response, ToolResponse)
assert_type(response.status, ToolStatus)
assert response.text == "ABC" and response.status == "success"


def describe(status: ToolStatus) -> str:
    match status:
        case "success":
            return "ok"
        case "partial":
            return "some"
        case "error":
            return "failed"
        case _:
            assert_never(status)


assert describe(registry.execute_tool("add_numbers", {"a": 1}).status) == "failed"
assert ToolResponse.partial("half").status == "partial"


class Reverse(Tool):
    """A class-based tool."""

    def __init__(self) -> None:
        super().__init__("reverse", "Reverse a text.")

    def get_parameters(self) -> list[ToolParameter]:
        return [ToolParameter("text", "string", "The text to reverse.")]

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return ToolResponse.ok(str(parameters["text"])[::-1])


registry.register(Reverse())


async def run_async_tool() -> ToolResponse:
    return await registry.aexecute_tool("reverse", {"text": "abc"})


assert asyncio.run(run_async_tool()).text == "cba"

# ------------------------------------------------------------------ built-in tools

calc = CalculatorTool()
assert calc.run({"expression": "6 * 7"}).text == "42"
cli = CLITool(["echo"], timeout=5.0)
assert cli.allowed_commands == ["echo"]
search = SearchTool(max_results=3)
assert search.max_results == 3
with tempfile.TemporaryDirectory() as notes_dir:
    notes = NotesTool(notes_dir)
    assert notes.root == Path(notes_dir).resolve()
    workspace = Workspace(notes_dir, read_only=True)
    assert_type(workspace["grep"].read_only, bool)
    assert [t.name for t in workspace] == ["ls", "read_file", "glob", "grep"]
    skills = SkillsTool([notes_dir])
    asker = UserInputTool(lambda question, choices: "yes")
    assert asker.mode == "callback"
    assert UserInputTool(mode="pause").name == "ask_user"
    assert skills.instructions is None
    assert skills.system_prompt_section() == ""
    assert skills.skills == []
fetch = FetchTool(allowed_hosts=["127.0.0.1"], timeout=5.0)
assert fetch.name == "fetch_url" and fetch.read_only
permissions = ToolPermissions(deny=["search"])
assert not permissions.is_allowed(search)

# ------------------------------------------------------------------ an agent run


def confirm(tool: Tool, parameters: dict[str, Any]) -> bool:
    return tool.name == "shout"


llm = ScriptedLLM(
    [ScriptedLLM.tool_call("get_weather", {"city": "Oslo", "days": 2}), "Sunny in Oslo, two days."]
)
agent = Agent(
    "typed",
    llm,
    tool_registry=registry,
    confirm=confirm,
    permissions=permissions,
    run_policy=RunPolicy(max_llm_calls=5),
)
limits = Isolation(memory_mb=512, cpu_seconds=10.0, open_files=64)
isolated_policy = RunPolicy(isolate=limits)
assert isolated_policy.isolate is limits and limits.workers >= 1
result = agent.run("Weather in Oslo?")
assert_type(result, RunResult)
assert_type(result.status, RunStatus)
assert_type(result.usage, RunUsage)
assert_type(result.messages, list[Message])
assert result.status == "completed" and result.final_output == "Sunny in Oslo, two days."
assert result.usage.llm_calls == 2 and result.usage.tool_calls == 1

call = result.tool_calls[0]
assert_type(call, ToolCallRecord)
assert_type(call.status, ToolCallStatus)
assert call.status == "success" and call.output == "Oslo: sunny for 2 day(s)"


def ended(status: RunStatus) -> bool:
    match status:
        case "completed" | "stopped":
            return True
        case "max_turns" | "paused" | "failed":
            return False
        case _:
            assert_never(status)


assert ended(result.status)

# The input may be a list of messages (sent after the instructions as given) ...
history: list[Message] = [
    {"role": "user", "content": "My name is Ada."},
    {"role": "assistant", "content": "Hello Ada."},
    {"role": "user", "content": "What is my name?"},
]
answer = Agent("chat", ScriptedLLM(["Ada."])).run(history)
assert [m["role"] for m in answer.messages] == ["system", "user", "assistant", "user", "assistant"]
assert answer.messages[1] == history[0] and answer.messages[1] is not history[0]

# A conversation goes on from a stored history.
stored: str = messages_to_json(answer.messages)
later = Agent("chat", ScriptedLLM(["Still Ada."])).run("And now?", message_history=messages_from_json(stored))
assert_type(later.new_messages(), list[Message])
assert later.new_messages()[0] == {"role": "user", "content": "And now?"}


# A run paused for approval, resumed with a decision per pending call.
@tool(requires_confirmation=True)
def wipe(path: str) -> str:
    """Wipe a file.

    Args:
        path: The file.
    """
    return "wiped " + path


pausing = Agent(
    "ops",
    ScriptedLLM([ScriptedLLM.tool_call("wipe", {"path": "x"}), "Wiped."]),
    tools=[wipe],
    confirm="pause",
)
paused = pausing.run("wipe x")
waiting: list[PendingCall] = paused.pending
assert paused.status == "paused" and waiting[0].tool_name == "wipe"
resumed = pausing.resume(RunResult.from_json(paused.to_json()), {waiting[0].id: True})
assert resumed.final_output == "Wiped."


# A tool that reads the run's context (not part of its schema).
@tool
def whose(ctx: RunContext[str], item: str) -> str:
    """Say whose an item is.

    Args:
        item: The item.
    """
    return f"{item} of {ctx.deps}"


owned = Agent("ops", ScriptedLLM([ScriptedLLM.tool_call("whose", {"item": "pen"}), "ok"]), tools=[whose])
assert owned.run("whose pen?", deps="ada").tool_calls[0].output == "pen of ada"


# Tools grouped in a toolkit, renamed and explained to the model.
kit = Toolkit([whose], prefix="ops_", instructions="Ops tools are slow.")
assert [t.name for t in kit.tools] == ["ops_whose"]
kitted = Agent("ops", ScriptedLLM(["ok"]), tools=[kit])
assert kitted.run("hi").output == "ok"


# Hooks and the event stream.
class Printer(RunHooks):
    def on_run_start(self, event: RunStart) -> None:
        assert event.agent == "ops"

    def on_llm_start(self, event: LLMStart) -> None:
        assert event.turn >= 1

    def on_llm_end(self, event: LLMEnd) -> None:
        assert event.duration >= 0.0

    def on_tool_start(self, event: ToolStart) -> None:
        assert event.tool_name

    def on_tool_end(self, event: ToolEnd) -> None:
        assert event.status == "success"

    def on_todo_update(self, event: TodoUpdate) -> None:
        assert_type(event.todos, list[dict[str, str]])


watched = Agent("ops", ScriptedLLM(["fine"]), hooks=Printer())
events: list[RunEvent] = list(watched.stream("hi"))
last = events[-1]
assert isinstance(last, RunEnd) and last.result.final_output == "fine"
assert [e.text for e in events if isinstance(e, TextDelta)] == ["fine"]

# A task list and a sub-agent as tools.
planner = Agent(
    "planner",
    ScriptedLLM(
        [ScriptedLLM.tool_call("write_todos", {"todos": [{"content": "a", "status": "pending"}]}), "ok"]
    ),
    tools=[TodoTool()],
)
helper: AgentTool = planner.as_tool(description="Plans the work.", max_depth=2)
assert helper.max_depth == 2
lead = Agent(
    "lead", ScriptedLLM([ScriptedLLM.tool_call("planner", {"input": "plan"}), "done"]), tools=[helper]
)
led = lead.run("go")
assert_type(led.todos, list[dict[str, str]])
assert (
    isinstance(led.tool_calls[0].data, RunResult) and led.tool_calls[0].data.todos[0]["status"] == "pending"
)

# ... or content parts of one user message.
parts: Sequence[ContentPart] = [{"type": "text", "text": "Describe this."}]
scripted = ScriptedLLM(["A picture."])
described = Agent("parts", scripted).run(parts)
assert described.messages[1] == {"role": "user", "content": [{"type": "text", "text": "Describe this."}]}


async def arun(input: RunInput) -> RunResult:
    return await Agent("async", ScriptedLLM(["done"])).arun(input)


assert asyncio.run(arun("go")).final_output == "done"

# ------------------------------------------------------------------ flow control and errors


@tool
def finish(summary: str) -> str:
    """End the run with a summary."""
    raise StopAgentRun(summary)


stopped = Agent(
    "stopper", ScriptedLLM([ScriptedLLM.tool_call("finish", {"summary": "all done"})]), tools=[finish]
)
stop_result = stopped.run("stop")
assert stop_result.status == "stopped" and stop_result.tool_calls[0].status == "stopped"

assert issubclass(StopAgentRun, AgentRunFlow) and issubclass(RetryAgentRun, AgentRunFlow)
for error in (
    ToolError,
    ToolRegistrationError,
    ToolConfigError,
    RunLimitExceeded,
    RunCancelled,
    LLMResponseError,
):
    assert issubclass(error, AgentmakerError)
try:
    Agent("limited", ScriptedLLM(["a"]), run_policy=RunPolicy(max_llm_calls=1, max_tokens=1)).run(
        [{"role": "user", "content": "hi"}]
    )
except RunLimitExceeded as exc:
    assert exc.kind == "tokens" or isinstance(exc, AgentmakerError)
assert issubclass(ToolDefinitionWarning, UserWarning)
failure = LLMResponseError("bad gateway", status=502)
assert failure.status == 502

# ------------------------------------------------------------------ the model client

client = LLMClient("gpt-4o-mini", base_url="http://127.0.0.1:9", api_key="unused")
reply = LLMResponse(content="hi", usage={"total_tokens": 3})
assert client.model == "gpt-4o-mini" and str(reply) == "hi"
claude = LLMClient(
    "claude-sonnet-4-5",
    provider="anthropic",
    base_url="http://127.0.0.1:9",
    connect_timeout=2.0,
    read_timeout=30.0,
    max_retries=0,
)
pending: LLMStream = claude.stream([{"role": "user", "content": "hi"}], tools=None, temperature=0)
streamed_later: LLMStream = claude.astream([{"role": "user", "content": "hi"}])
pending.close()
assert claude.provider == "anthropic" and isinstance(streamed_later, LLMStream)
manual: Callable[[Any, dict[str, Any]], bool] = cli_confirm
assert callable(manual)


# ------------------------------------------------------------------ approval and guardrails


async def no_wipes(check: ToolCheck) -> GuardrailDecision | None:
    if check.tool_name == "erase":
        return GuardrailDecision.trip("no erasing")
    return None


@tool
def erase() -> str:
    """Erase the disk."""
    return "erased"


guarded = Agent(
    "guarded",
    ScriptedLLM([ScriptedLLM.tool_call("erase"), "x"]),
    tools=[erase],
    confirm=Approval(manual, rules={"read_*": True}, max_attempts=2),
    input_guardrails=[no_wipes],
    run_policy=RunPolicy(
        output_guardrails=[lambda c: GuardrailDecision.replace(c.output or "")], max_result_chars=100
    ),
)
try:
    guarded.run("erase it")
    raise AssertionError("the guardrail trips")
except GuardrailTripped as tripped:
    assert_type(tripped.stage, str)
    assert tripped.tool_name == "erase"
report_progress(1, 2, "outside a served call: nothing is sent")

# ------------------------------------------------------------------ Tool-RAG

retriever = ToolRetriever(registry, HybridRetriever(), top_k=2, always_include=["tool_search"])
registry.register(ToolSearchTool(retriever))
retriever.index()
schema = retriever.schema_for("weather forecast for a city")
assert "get_weather" in [entry["function"]["name"] for entry in schema]

# ------------------------------------------------------------------ MCP


async def use_mcp() -> list[MCPTool]:
    async with MCPClient(
        command=sys.executable, args=[str(RAW_MCP_SERVER), "plain"], namespace="raw", timeout=30.0
    ) as mcp:
        tools = await mcp.load_tools()
        first: ToolResponse = await tools[0].arun({})
        assert first.text.startswith("fine"), first.text
        return tools


mcp_tools = asyncio.run(use_mcp())
assert [t.name for t in mcp_tools] == ["raw_ok"]

print("typing usage: ok")
