"""The call pipeline seen from Python: what the core decides for each call of a response, and
how a record is finished exactly once."""

from __future__ import annotations

import threading
import time

from agentmaker import Agent, ToolPermissions, ToolRegistry, tool
from agentmaker._native import CallPipeline
from agentmaker.llm import LLMResponse
from agentmaker.testing import ScriptedLLM

runs: list[str] = []


@tool(supports_parallel=True)
def fetch(key: str) -> str:
    """Fetch a value."""
    runs.append(key)
    return key.upper()


@tool
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "finally"


def calls(*pairs):
    return ScriptedLLM.tool_calls(*pairs).tool_calls


def registry(*tools) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register_all(list(tools))
    return reg


def test_prepare_reads_every_call_and_plans_the_batches():
    made = calls(
        ("fetch", {"key": "a"}), ("fetch", {"key": 5}), ("fetch", {"key": "b"}), ("slow", {"seconds": 0})
    )
    pipe = CallPipeline(registry(fetch, slow))
    recs, groups = pipe.prepare(made, 1)
    assert [r.status for r in recs] == [None, "invalid", None, None]
    # The refused call keeps its place without splitting the batch; `slow` runs alone.
    assert groups == [(0, 3, True), (3, 4, False)]
    assert [r._route for r in recs] == ["thread", None, "thread", "thread"]
    assert recs[1].output.startswith("Error: ") and "key" in recs[1].output


def test_a_blocking_run_keeps_a_lone_call_on_its_own_thread():
    pipe = CallPipeline(registry(slow), blocking_run=True)
    (rec,), groups = pipe.prepare(calls(("slow", {"seconds": 0})), 1)
    assert groups == [(0, 1, False)] and rec._route == "inline"
    pipe.set_timeout(rec, 1.0)  # a timeout must be waited for from outside
    assert rec._route == "thread" and rec._timeout == 1.0
    pipe.run(rec)
    assert (rec.status, rec.output, rec.executed, pipe.executed) == ("success", "finally", True, 1)


def test_a_call_abandoned_before_it_started_never_runs():
    runs.clear()
    pipe = CallPipeline(registry(fetch))
    (rec,), _ = pipe.prepare(calls(("fetch", {"key": "late"})), 1)
    pipe.time_out(rec, 0.5, 0.5)
    pipe.run(rec)  # a worker that takes the call only now
    assert runs == []
    assert rec.status == "timeout"
    assert rec.output == "Error: tool 'fetch' did not finish within 0.5 seconds; the call was abandoned."
    assert pipe.executed == 1  # it was admitted and counted once


def test_a_late_result_does_not_overwrite_the_timeout():
    started, release = threading.Event(), threading.Event()

    @tool
    def held() -> str:
        """Answer once released."""
        started.set()
        release.wait(30)
        return "late"

    pipe = CallPipeline(registry(held))
    (rec,), _ = pipe.prepare(calls(("held", {})), 1)
    worker = threading.Thread(target=pipe.run, args=(rec,))
    worker.start()
    assert started.wait(30)  # running: its result comes after the timeout, whatever the load
    pipe.time_out(rec, 0.05, 0.05)
    release.set()
    worker.join()
    assert rec.status == "timeout" and "0.05 seconds" in rec.output
    assert pipe.executed == 1


def test_permissions_hide_denied_tools_from_the_unknown_tool_answer():
    perms = ToolPermissions(deny=["slow"])
    pipe = CallPipeline(registry(fetch, slow), perms)
    recs, _ = pipe.prepare(calls(("nope", {}), ("slow", {"seconds": 0})), 1)
    assert recs[0].status == "unknown_tool"
    assert recs[0].output == "Error: tool 'nope' does not exist. Available tools: fetch"
    assert recs[1].status == "denied" and recs[1].output.startswith("(not allowed to call: ")


def test_a_model_that_floods_the_name_gets_a_short_answer():
    huge = "x" * 100_000
    result = Agent(
        "a",
        ScriptedLLM([LLMResponse(tool_calls=[{"function": {"name": huge, "arguments": "{}"}}]), "ok"]),
        tools=[fetch],
    ).run("go")
    rec = result.tool_calls[0]
    assert rec.status == "invalid_call" and len(rec.output) < 200


def test_arguments_that_are_not_json_are_refused_even_where_python_is_lenient():
    # Python's json module accepts NaN; JSON does not, and neither does the pipeline.
    call = {"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": '{"key": NaN}'}}
    result = Agent("a", ScriptedLLM([LLMResponse(tool_calls=[call]), "ok"]), tools=[fetch]).run("go")
    assert result.tool_calls[0].status == "invalid_args"
    assert result.tool_calls[0].output == "Error: arguments for tool 'fetch' are not valid JSON"


def test_a_registry_that_is_not_a_tool_registry_is_refused_at_once():
    class Lookalike:
        def get(self, name): ...
        def to_openai_schema(self): ...

    try:
        Agent("a", ScriptedLLM(["x"]), tool_registry=Lookalike())
    except TypeError as exc:
        assert "tool_registry must be a ToolRegistry" in str(exc)
    else:
        raise AssertionError("a look-alike registry was accepted")


def test_unreadable_arguments_are_refused_before_an_unknown_tool_and_read_ones_after():
    pipe = CallPipeline(registry(fetch))
    wire = [
        {"id": "c1", "type": "function", "function": {"name": "nope", "arguments": '{"key": "a'}},
        {"id": "c2", "type": "function", "function": {"name": "nope", "arguments": "{'key': 'a',}"}},
        {"id": "c3", "type": "function", "function": {"name": "fetch", "arguments": "{'key': 'a',}"}},
    ]
    unreadable, repairable, known = pipe.prepare(wire, 1)[0]
    assert (unreadable.status, unreadable.output) == (
        "invalid_args",
        "Error: arguments for tool 'nope' are not valid JSON",
    )
    # Read leniently under the run's setting, then refused by the next gate: no such tool.
    assert repairable.status == "unknown_tool" and repairable.arguments == {"key": "a"}
    assert known.status is None and known.arguments == {"key": "a"} and len(known.repairs) == 2
