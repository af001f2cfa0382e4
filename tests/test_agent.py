"""The Agent loop: the LLM contract, turns and messages, malformed calls, flow control."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from agent_support import Add
from agentmaker import (
    Agent,
    LLMResponse,
    RetryAgentRun,
    StopAgentRun,
    Tool,
    ToolParameter,
    ToolRegistry,
    ToolResponse,
)
from agentmaker.testing import ScriptedLLM


class Signal(Tool):
    """Raises the flow-control exception named in its argument."""

    def __init__(self, name: str = "signal") -> None:
        super().__init__(name, "Steer the run.")

    def get_parameters(self):
        return [ToolParameter("kind", "string", "stop, retry or boom.")]

    def run(self, parameters):
        kind = parameters["kind"]
        if kind == "stop":
            raise StopAgentRun("stopped by the tool")
        if kind == "retry":
            raise RetryAgentRun("try again with a smaller number")
        raise ValueError("boom")


def tool_messages(result):
    return [(m["tool_call_id"], m["content"]) for m in result.messages if m["role"] == "tool"]


# ----------------------------------------------------------------------------------- basics


def test_plain_question_answering_sends_no_tools():
    llm = ScriptedLLM(["  Paris.  "])
    result = Agent("geo", llm, instructions="Answer briefly.").run("Capital of France?")
    assert result.final_output == "Paris."
    assert str(result) == "Paris."
    assert result.status == "completed"
    req = llm.requests[0]
    assert req.tools is None and req.kwargs == {}
    assert req.messages == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert result.usage.llm_calls == 1 and result.usage.tool_calls == 0


def test_one_tool_call_round_trip():
    add = Add()
    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 2, "b": 3}, call_id="c7"), "It is 5."])
    result = Agent("calc", llm, tools=[add]).run("2+3?")
    assert result.final_output == "It is 5."
    assert add.seen == [{"a": 2, "b": 3}]
    assert [t["function"]["name"] for t in llm.requests[0].tools] == ["add"]
    assistant = result.messages[2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "c7"
    assert result.messages[3] == {"role": "tool", "tool_call_id": "c7", "content": "5"}
    # The model's second call saw the tool result.
    assert llm.requests[1].messages[-1] == {"role": "tool", "tool_call_id": "c7", "content": "5"}
    (call,) = result.tool_calls
    assert (call.name, call.arguments, call.status, call.call_id) == (
        "add",
        {"a": 2, "b": 3},
        "success",
        "c7",
    )
    assert call.data == 5 and call.duration >= 0.0 and call.executed
    assert result.usage.tool_calls == 1 and result.usage.llm_calls == 2


def test_usage_counts_tokens():
    resp = ScriptedLLM.tool_call("add", {"a": 1, "b": 1})
    resp.usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    final = LLMResponse(content="2", usage={"prompt_tokens": 20, "completion_tokens": 1})
    result = Agent("a", ScriptedLLM([resp, final]), tools=[Add()]).run("1+1")
    assert result.usage.prompt_tokens == 30
    assert result.usage.completion_tokens == 6
    assert result.usage.total_tokens == 36


def test_empty_reply_is_nudged_once_then_given_up():
    llm = ScriptedLLM(["", "  "])
    result = Agent("a", llm).run("hi")
    assert result.final_output == "(No valid answer was obtained from the model; please retry.)"
    assert llm.requests[1].messages[-1] == {"role": "user", "content": "Please give a text answer."}
    llm = ScriptedLLM(["", "second try"])
    assert Agent("a", llm).run("hi").final_output == "second try"


def test_max_turns_exhausted():
    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 1, "b": 1})] * 3)
    result = Agent("a", llm, tools=[Add()], max_turns=3).run("loop")
    assert result.status == "max_turns"
    assert result.final_output == "(Max turns reached without a final answer; consider increasing max_turns.)"
    assert llm.calls == 3


def test_constructor_errors():
    llm = ScriptedLLM([])
    with pytest.raises(ValueError, match="either tools=.* or tool_registry=.*not both"):
        Agent("a", llm, tools=[Add()], tool_registry=ToolRegistry())
    with pytest.raises(ValueError, match="max_turns must be a positive integer, got 0"):
        Agent("a", llm, max_turns=0)
    with pytest.raises(ValueError, match="function calling"):
        Agent("a", ScriptedLLM([], supports_function_calling=False), tools=[Add()])
    Agent("a", ScriptedLLM([], supports_function_calling=False))  # no tools: fine
    with pytest.raises(TypeError, match="chat"):
        Agent("a", object())
    with pytest.raises(TypeError, match="confirm must be a callable"):
        Agent("a", llm, confirm="yes")
    with pytest.raises(ValueError, match="tool_timeout must be a positive number"):
        Agent("a", llm, tool_timeout=0)
    with pytest.raises(ValueError, match="max_concurrency must be a positive integer"):
        Agent("a", llm, max_concurrency=0)
    with pytest.raises(TypeError, match="tool_registry must be a ToolRegistry"):
        Agent("a", llm, tool_registry=[Add()])


def test_tools_list_and_registry_are_equivalent():
    reg = ToolRegistry()
    reg.register(Add())
    agent = Agent("a", ScriptedLLM([]), tool_registry=reg, tool_retriever=None)
    assert agent.tool_registry is reg
    built = Agent("a", ScriptedLLM([]), tools=[Add()]).tool_registry
    assert isinstance(built, ToolRegistry) and built.names() == ["add"]


# ------------------------------------------------------------------------------ the LLM contract


class AsyncChatLLM:
    """A client whose chat is a coroutine that really suspends on the event loop."""

    def __init__(self, replies):
        self.replies = list(replies)

    async def chat(self, messages, *, tools=None, **kwargs):
        await asyncio.sleep(0.001)
        return self.replies.pop(0)


class BothLLM:
    def __init__(self):
        self.used = []

    def chat(self, messages, **kwargs):
        self.used.append("chat")
        return LLMResponse(content="sync")

    async def achat(self, messages, **kwargs):
        self.used.append("achat")
        return LLMResponse(content="async")


def test_async_chat_works_with_run_and_arun():
    script = [ScriptedLLM.tool_call("add", {"a": 1, "b": 2}), LLMResponse(content="3")]
    assert Agent("a", AsyncChatLLM(script), tools=[Add()]).run("x").final_output == "3"
    script = [ScriptedLLM.tool_call("add", {"a": 1, "b": 2}), LLMResponse(content="3")]
    result = asyncio.run(Agent("a", AsyncChatLLM(script), tools=[Add()]).arun("x"))
    assert result.final_output == "3" and tool_messages(result) == [("call_1", "3")]


def test_arun_prefers_achat_and_run_uses_chat():
    llm = BothLLM()
    assert Agent("a", llm).run("x").final_output == "sync"
    assert asyncio.run(Agent("a", llm).arun("x")).final_output == "async"
    assert llm.used == ["chat", "achat"]


def test_run_inside_a_running_loop_points_to_arun():
    async def main():
        with pytest.raises(RuntimeError, match=r"use `await agent.arun\(...\)`"):
            Agent("a", ScriptedLLM(["x"])).run("hi")

    asyncio.run(main())


def test_run_from_a_thread_while_another_thread_runs_a_loop():
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def serve():
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    server = threading.Thread(target=serve)
    server.start()
    try:
        ready.wait(5)
        results = []

        def worker():
            script = [ScriptedLLM.tool_call("add", {"a": 4, "b": 4}), LLMResponse(content="8")]
            results.append(Agent("a", AsyncChatLLM(script), tools=[Add()]).run("4+4").final_output)

        t = threading.Thread(target=worker)
        t.start()
        t.join(10)
        assert results == ["8"]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        server.join(5)
        loop.close()


def test_run_twice_in_a_row_reuses_the_thread_loop():
    for _ in range(3):
        script = [ScriptedLLM.tool_call("add", {"a": 1, "b": 1}), LLMResponse(content="2")]
        assert Agent("a", AsyncChatLLM(script), tools=[Add()]).run("x").final_output == "2"


def test_llm_exception_propagates():
    llm = ScriptedLLM([ConnectionError("model down")])
    with pytest.raises(ConnectionError, match="model down"):
        Agent("a", llm).run("hi")


# ----------------------------------------------------------------------------- malformed calls


def test_garbage_tool_calls_become_error_messages_and_the_run_continues():
    add = Add()
    bad = LLMResponse(
        content="let me try",
        tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{not json"}},
            {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "[1, 2]"}},
            {"id": "c3", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
            {"type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
            {"id": "c5", "type": "function", "function": {"name": "add", "arguments": '{"a": "x"}'}},
            {"id": "c6", "type": "function"},
            {"id": "c7", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
        ],
    )
    llm = ScriptedLLM([bad, "done"])
    result = Agent("a", llm, tools=[add]).run("go")
    assert result.final_output == "done"
    msgs = tool_messages(result)
    ids = [i for i, _ in msgs]
    assert ids == ["c1", "c2", "c3", "call_missing_id_t1_3", "c5", "c6", "c7"]
    texts = [t for _, t in msgs]
    assert texts[0] == "Error: arguments for tool 'add' are not valid JSON"
    assert texts[1] == "Error: arguments for tool 'add' must be a JSON object"
    assert texts[2] == "Error: tool 'nope' does not exist. Available tools: add"
    assert "has no id" in texts[3]
    assert texts[4].startswith("Error: tool 'add' failed parameter validation")
    assert texts[5] == "Error: a tool call has no function name. It was not executed."
    assert texts[6] == "3"
    statuses = [c.status for c in result.tool_calls]
    assert statuses == [
        "invalid_args",
        "invalid_args",
        "unknown_tool",
        "invalid_call",
        "invalid",
        "invalid_call",
        "success",
    ]
    assert add.seen == [{"a": 1, "b": 2}]
    assert result.usage.tool_calls == 1
    # The recorded assistant message answers every tool message with a matching id.
    assistant = result.messages[2]
    assert [c["id"] for c in assistant["tool_calls"]] == ids
    assert assistant["content"] == "let me try"


def test_empty_and_dict_arguments_are_accepted():
    class NoArgs(Tool):
        def __init__(self):
            super().__init__("ping", "Ping.")

        def get_parameters(self):
            return []

        def run(self, parameters):
            return ToolResponse.ok("pong")

    resp = LLMResponse(
        tool_calls=[
            {"id": "a", "type": "function", "function": {"name": "ping", "arguments": ""}},
            {"id": "b", "type": "function", "function": {"name": "ping", "arguments": None}},
            {"id": "c", "type": "function", "function": {"name": "ping", "arguments": {}}},
        ]
    )
    result = Agent("a", ScriptedLLM([resp, "ok"]), tools=[NoArgs()]).run("x")
    assert tool_messages(result) == [("a", "pong"), ("b", "pong"), ("c", "pong")]
    assert json.loads(result.messages[2]["tool_calls"][2]["function"]["arguments"]) == {}


def test_tool_errors_and_bad_return_values_reach_the_model():
    class Broken(Tool):
        def __init__(self):
            super().__init__("broken", "Returns junk.")

        def get_parameters(self):
            return []

        def run(self, parameters):
            return 42

    llm = ScriptedLLM([ScriptedLLM.tool_calls(("signal", {"kind": "boom"}), ("broken", {})), "recovered"])
    result = Agent("a", llm, tools=[Signal(), Broken()]).run("go")
    assert result.final_output == "recovered"
    (_, boom), (_, junk) = tool_messages(result)
    assert boom == "Error: tool 'signal' raised during execution: ValueError: boom"
    assert "instead of a ToolResponse" in junk
    assert [c.status for c in result.tool_calls] == ["error", "error"]


# ------------------------------------------------------------------------------- flow control


def test_stop_agent_run_ends_the_run_with_its_message():
    add = Add()
    llm = ScriptedLLM(
        [ScriptedLLM.tool_calls(("signal", {"kind": "stop"}), ("add", {"a": 1, "b": 1})), "never"]
    )
    result = Agent("a", llm, tools=[Signal(), add]).run("go")
    assert result.final_output == "stopped by the tool"
    assert result.status == "stopped"
    assert llm.calls == 1 and add.seen == []
    assert [c.status for c in result.tool_calls] == ["stopped", "skipped"]
    assert tool_messages(result)[1] == ("call_2", "(not run: an earlier tool call ended the run)")


def test_retry_agent_run_feeds_the_message_back():
    llm = ScriptedLLM([ScriptedLLM.tool_call("signal", {"kind": "retry"}), "ok, smaller"])
    result = Agent("a", llm, tools=[Signal()]).run("go")
    assert result.final_output == "ok, smaller"
    assert tool_messages(result) == [("call_1", "try again with a smaller number")]
    assert result.tool_calls[0].status == "retry"
    assert result.usage.tool_calls == 1


def test_stop_after_tool_call_flag():
    class Finish(Add):
        stop_after_tool_call = True

        def __init__(self):
            super().__init__()
            self.name = "finish"

    llm = ScriptedLLM([ScriptedLLM.tool_call("finish", {"a": 20, "b": 22}), "never"])
    result = Agent("a", llm, tools=[Finish()]).run("go")
    assert result.final_output == "42" and result.status == "stopped" and llm.calls == 1


def test_flow_control_on_the_async_path():
    llm = ScriptedLLM([ScriptedLLM.tool_call("signal", {"kind": "stop"}), "never"])
    result = asyncio.run(Agent("a", llm, tools=[Signal()]).arun("go"))
    assert result.final_output == "stopped by the tool"


# ------------------------------------------------------------------------------- ScriptedLLM


def test_scripted_llm_records_and_counts():
    llm = ScriptedLLM(["a", lambda messages, tools: f"{len(messages)} messages"])
    assert (
        llm.chat(
            [{"role": "user", "content": "x"}], tools=[{"function": {"name": "t"}}], temperature=0
        ).content
        == "a"
    )
    assert asyncio.run(llm.achat([1, 2, 3])).content == "3 messages"
    assert llm.calls == 2 and llm.remaining == 0
    assert llm.requests[0].tool_names == ["t"] and llm.requests[0].kwargs == {"temperature": 0}
    with pytest.raises(AssertionError, match=r"ran out of script: this is call #3 but only 2 entries"):
        llm.chat([])


def test_scripted_tool_call_helpers():
    one = ScriptedLLM.tool_call("calculator", {"expression": "1+1"}, call_id="x", content="thinking")
    assert one.content == "thinking"
    assert one.tool_calls == [
        {
            "id": "x",
            "type": "function",
            "function": {"name": "calculator", "arguments": '{"expression": "1+1"}'},
        }
    ]
    many = ScriptedLLM.tool_calls(
        ("a", {"k": "é"}), ("b", None, "own"), ScriptedLLM.tool_call("c", call_id="z")
    )
    assert [c["id"] for c in many.tool_calls] == ["call_1", "own", "z"]
    assert many.tool_calls[0]["function"]["arguments"] == '{"k": "é"}'
    assert many.tool_calls[1]["function"]["arguments"] == "{}"
    with pytest.raises(TypeError, match="tuples"):
        ScriptedLLM.tool_calls("a")


# ---------------------------------------------------------------------------- nesting and loops


class AsyncInside(Tool):
    """A sync tool that wraps async code with asyncio.run, as many wrappers of async libraries do."""

    def __init__(self) -> None:
        super().__init__("wrapped", "Runs its own event loop.")

    def get_parameters(self):
        return []

    def run(self, parameters):
        async def work():
            await asyncio.sleep(0.001)
            return "from asyncio.run"

        return ToolResponse.ok(asyncio.run(work()))


class SubAgent(Tool):
    """A sync tool that runs another agent (agents as tools)."""

    def __init__(self) -> None:
        super().__init__("delegate", "Ask the specialist.")

    def get_parameters(self):
        return [ToolParameter("question", "string", "The question.")]

    def run(self, parameters):
        script = [ScriptedLLM.tool_call("add", {"a": 2, "b": 2}), LLMResponse(content="four")]
        inner = Agent("inner", AsyncChatLLM(script), tools=[Add()])
        return ToolResponse.ok(inner.run(parameters["question"]).final_output)


def test_sync_tools_may_run_their_own_loop_even_when_the_model_is_async():
    script = [
        ScriptedLLM.tool_calls(("wrapped", {}), ("delegate", {"question": "2+2?"})),
        LLMResponse(content="ok"),
    ]
    result = Agent("outer", AsyncChatLLM(script), tools=[AsyncInside(), SubAgent()]).run("go")
    assert [c.output for c in result.tool_calls] == ["from asyncio.run", "four"]
    assert result.final_output == "ok"


# --------------------------------------------------------------------------- Tool-RAG in the loop


class Named(Tool):
    def __init__(self, name: str, discovers: list[str] | None = None) -> None:
        super().__init__(name, f"The {name} tool.")
        self.discovers = discovers

    def get_parameters(self):
        return []

    def run(self, parameters):
        if self.discovers is not None:
            return ToolResponse.ok("found some", data={"discovered": self.discovers})
        return ToolResponse.ok(self.name)


class PickFirst:
    """A stand-in retriever: offers the tools whose names appear in the query."""

    def __init__(self, registry):
        self.registry = registry
        self.queries = []

    def schema_for(self, query):
        self.queries.append(query)
        return self.registry.to_openai_schema(names=[n for n in self.registry.names() if n in query])


@pytest.mark.parametrize("use_async", [False, True])
def test_retriever_picks_the_tools_and_discoveries_are_merged(use_async):
    from agentmaker import ToolPermissions

    reg = ToolRegistry()
    reg.register_all(
        [Named("finder", ["convert", "secret", "ghost"]), Named("convert"), Named("secret"), Named("other")]
    )
    retriever = PickFirst(reg)
    llm = ScriptedLLM([ScriptedLLM.tool_call("finder"), ScriptedLLM.tool_call("convert"), "done"])
    agent = Agent(
        "a", llm, tool_registry=reg, tool_retriever=retriever, permissions=ToolPermissions(deny={"secret"})
    )
    result = asyncio.run(agent.arun("use finder please")) if use_async else agent.run("use finder please")
    assert retriever.queries == ["use finder please"]
    assert [r.tool_names for r in llm.requests] == [["finder"], ["finder", "convert"], ["finder", "convert"]]
    assert [c.output for c in result.tool_calls] == ["found some", "convert"]


def test_tool_retriever_type_is_checked():
    with pytest.raises(TypeError, match="schema_for"):
        Agent("a", ScriptedLLM([]), tools=[Add()], tool_retriever=object())


def test_more_garbage_from_the_model():
    add = Add()
    deep = "[" * 100_000 + "]" * 100_000
    resp = LLMResponse(
        tool_calls=[
            None,
            "call add please",
            {"id": "x1", "type": "function", "function": {"name": 7, "arguments": "{}"}},
            {"id": "x2", "type": "function", "function": {"name": "add", "arguments": deep}},
            {"id": "x3", "type": "function", "function": {"name": "add", "arguments": 12}},
            {"id": "x4", "type": "function", "function": "add"},
        ]
    )
    result = Agent("a", ScriptedLLM([resp, "still here"]), tools=[add]).run("go")
    assert result.final_output == "still here"
    statuses = [c.status for c in result.tool_calls]
    assert statuses == [
        "invalid_call",
        "invalid_call",
        "invalid_call",
        "invalid_args",
        "invalid_args",
        "invalid_call",
    ]
    assert result.tool_calls[3].output == "Error: arguments for tool 'add' are nested too deeply"
    assert add.seen == [] and result.usage.tool_calls == 0
    # Every tool message answers an id present in the recorded assistant message.
    wire_ids = [c["id"] for c in result.messages[2]["tool_calls"]]
    assert [m["tool_call_id"] for m in result.messages if m["role"] == "tool"] == wire_ids
    assert len(set(wire_ids)) == 6


def test_a_single_call_object_instead_of_a_list():
    resp = LLMResponse(
        tool_calls={
            "id": "solo",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'},
        }
    )
    result = Agent("a", ScriptedLLM([resp, "2"]), tools=[Add()]).run("go")
    assert tool_messages(result) == [("solo", "2")]


def test_tasks_left_behind_by_a_sync_run_are_cancelled():
    state = {"cancelled": False}

    class Spawner(Tool):
        def __init__(self):
            super().__init__("spawn", "Starts background work.")

        def get_parameters(self):
            return []

        async def arun(self, parameters):
            async def background():
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    state["cancelled"] = True
                    raise

            asyncio.get_running_loop().create_task(background())
            return ToolResponse.ok("started")

    result = Agent("a", ScriptedLLM([ScriptedLLM.tool_call("spawn"), "ok"]), tools=[Spawner()]).run("go")
    assert result.final_output == "ok" and state["cancelled"]
