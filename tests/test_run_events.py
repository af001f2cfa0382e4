"""Observing a run: hooks, and the event stream of Agent.astream / stream."""

from __future__ import annotations

import asyncio
import logging

import pytest
from agentmaker import (
    Agent,
    LLMEnd,
    LLMResponse,
    LLMStart,
    RunCancelled,
    RunEnd,
    RunHooks,
    RunStart,
    TextDelta,
    ToolEnd,
    ToolStart,
    tool,
)
from agentmaker.testing import ScriptedLLM
from test_history import add


def script():
    return ScriptedLLM([ScriptedLLM.tool_calls(("add", {"a": 1, "b": 2}), ("nope", {})), "The sum is 3."])


class Recorder(RunHooks):
    def __init__(self):
        self.seen = []

    def on_run_start(self, event):
        self.seen.append(("run_start", event.agent, [m["content"] for m in event.input]))

    def on_llm_start(self, event):
        self.seen.append(("llm_start", event.turn, event.tools))

    def on_llm_end(self, event):
        self.seen.append(("llm_end", event.turn, event.response.content))

    def on_tool_start(self, event):
        self.seen.append(("tool_start", event.tool_name, event.arguments))

    def on_tool_end(self, event):
        assert event.duration >= 0.0
        self.seen.append(("tool_end", event.tool_name, event.status, event.output[:20]))

    def on_run_end(self, event):
        self.seen.append(("run_end", event.result.status, event.result.final_output))


EXPECTED = [
    ("run_start", "calc", ["add them"]),
    ("llm_start", 1, 1),
    ("llm_end", 1, ""),
    ("tool_start", "add", {"a": 1, "b": 2}),
    ("tool_end", "add", "success", "3"),
    ("tool_start", "nope", {}),
    ("tool_end", "nope", "unknown_tool", "Error: tool 'nope' d"),
    ("llm_start", 2, 1),
    ("llm_end", 2, "The sum is 3."),
    ("run_end", "completed", "The sum is 3."),
]


@pytest.mark.parametrize("use_async", [False, True])
def test_hooks_see_every_step_of_a_run_in_order(use_async):
    hooks = Recorder()
    agent = Agent("calc", script(), tools=[add], hooks=hooks)
    result = asyncio.run(agent.arun("add them")) if use_async else agent.run("add them")
    assert result.final_output == "The sum is 3."
    assert hooks.seen == EXPECTED


def test_any_object_with_some_hook_methods_will_do_and_a_raising_hook_is_logged(caplog):
    class Partial:
        def __init__(self):
            self.ends = []

        def on_tool_end(self, event):
            self.ends.append(event.status)
            raise ValueError("hook bug")

    hooks = Partial()
    with caplog.at_level(logging.ERROR, logger="agentmaker.hooks"):
        result = Agent("calc", script(), tools=[add], hooks=hooks).run("add them")
    assert result.final_output == "The sum is 3."
    assert hooks.ends == ["success", "unknown_tool"]
    logged = [r for r in caplog.records if r.name == "agentmaker.hooks"]
    assert len(logged) == 2
    assert "hook on_tool_end raised; the run goes on" in logged[0].getMessage()
    assert "ValueError: hook bug" in caplog.text


def test_a_hook_stops_the_run_with_run_cancelled_and_the_partial_result():
    class Stopper:
        def on_tool_end(self, event):
            raise RunCancelled("budget review")

    llm = script()
    agent = Agent("calc", llm, tools=[add], hooks=Stopper())
    with pytest.raises(RunCancelled, match="budget review") as info:
        agent.run("add them")
    partial = info.value.result
    assert partial.status == "failed"
    assert partial.usage.llm_calls == 1
    assert partial.tool_calls[0].status == "success"
    assert llm.calls == 1


def test_hooks_must_be_an_object_with_hook_methods():
    with pytest.raises(
        TypeError, match=r"hooks must be an instance, got the class Recorder; write hooks=Recorder\(\)"
    ):
        Agent("a", ScriptedLLM([]), hooks=Recorder)
    with pytest.raises(TypeError, match="hooks must have at least one of the methods on_run_start"):
        Agent("a", ScriptedLLM([]), hooks=object())


def kinds(events):
    return [type(e).__name__ for e in events]


def test_astream_yields_typed_events_and_ends_with_the_result():
    async def main():
        agent = Agent("calc", script(), tools=[add])
        return [e async for e in agent.astream("add them")]

    events = asyncio.run(main())
    assert kinds(events) == [
        "RunStart",
        "LLMStart",
        "LLMEnd",
        "ToolStart",
        "ToolEnd",
        "ToolStart",
        "ToolEnd",
        "LLMStart",
        "TextDelta",
        "LLMEnd",
        "RunEnd",
    ]
    assert isinstance(events[0], RunStart) and isinstance(events[1], LLMStart)
    assert isinstance(events[2], LLMEnd) and isinstance(events[3], ToolStart)
    assert isinstance(events[4], ToolEnd) and events[4].output == "3"
    assert events[8] == TextDelta(2, "The sum is 3.")
    last = events[-1]
    assert isinstance(last, RunEnd)
    assert last.result.final_output == "The sum is 3."
    assert last.result.usage.tool_calls == 1


class StreamingLLM(ScriptedLLM):
    """A model with its own stream: text in pieces, then the complete reply."""

    async def astream(self, messages, *, tools=None):
        reply = self.chat(messages, tools=tools)
        for i in range(0, len(reply.content), 4):
            yield reply.content[i : i + 4]
            await asyncio.sleep(0)
        yield reply


class SyncStreamingLLM(ScriptedLLM):
    """A model with a blocking stream that yields only pieces (no final response)."""

    def stream(self, messages, *, tools=None):
        reply = self.chat(messages, tools=tools)
        yield from reply.content.split(" ")


def test_a_streaming_model_gives_text_deltas_and_its_tool_calls():
    llm = StreamingLLM([ScriptedLLM.tool_call("add", {"a": 2, "b": 2}, content="Adding"), "Four it is."])

    async def main():
        return [e async for e in Agent("calc", llm, tools=[add]).astream("2+2")]

    events = asyncio.run(main())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["Addi", "ng", "Four", " it ", "is."]
    assert [e.output for e in events if isinstance(e, ToolEnd)] == ["4"]
    assert events[-1].result.final_output == "Four it is."


def test_sync_stream_uses_a_blocking_model_stream():
    llm = SyncStreamingLLM(["one two three"])
    events = list(Agent("a", llm).stream("count"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["one", "two", "three"]
    assert events[-1].result.final_output == "onetwothree"
    assert isinstance(events[-1], RunEnd)


def test_a_failing_streamed_run_raises_after_its_events_with_the_partial_result():
    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 1, "b": 1}), RuntimeError("model down")])
    seen = []
    with pytest.raises(RuntimeError, match="model down") as info:
        seen.extend(Agent("a", llm, tools=[add]).stream("go"))
    assert kinds(seen)[-3:] == ["ToolEnd", "LLMStart", "RunEnd"]
    assert seen[-1].result.status == "failed"
    assert info.value.result.tool_calls[0].output == "2"


def test_leaving_a_stream_early_cancels_the_run():
    calls = []

    @tool
    def record(x: int) -> int:
        """Record a number.

        Args:
            x: The number.
        """
        calls.append(x)
        return x

    llm = ScriptedLLM(
        [ScriptedLLM.tool_call("record", {"x": 1}), ScriptedLLM.tool_call("record", {"x": 2}), "done"]
    )
    for event in Agent("a", llm, tools=[record]).stream("go"):
        if isinstance(event, ToolEnd):
            break
    assert calls == [1]
    assert llm.calls == 1


def test_stream_refuses_a_running_loop():
    async def main():
        with pytest.raises(RuntimeError, match=r"use `async for event in agent.astream\(...\)` instead"):
            next(iter(Agent("a", ScriptedLLM(["x"])).stream("hi")))

    asyncio.run(main())


def test_a_model_stream_of_something_else_is_a_clear_error():
    class Odd(ScriptedLLM):
        async def astream(self, messages, *, tools=None):
            yield 42

    with pytest.raises(TypeError, match="the model's stream yielded a int; expected text pieces"):
        list(Agent("a", Odd(["x"])).stream("hi"))


def test_the_final_response_of_a_stream_wins_over_the_pieces():
    class Final(ScriptedLLM):
        async def astream(self, messages, *, tools=None):
            yield "draft"
            yield LLMResponse(content="final")

    events = list(Agent("a", Final([])).stream("hi"))
    assert events[-1].result.final_output == "final"
