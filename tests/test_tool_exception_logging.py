"""An exception raised inside a tool: the model gets one line, the developer the traceback (a
WARNING with ``exc_info`` on the ``agentmaker`` logger tree), on every way a tool runs.
Flow-control signals are not errors and are not logged."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from agentmaker import Agent, RetryAgentRun, StopAgentRun, Tool, ToolRegistry, ToolResponse, tool
from agentmaker.testing import ScriptedLLM

RAISED: list[BaseException] = []


def _boom(where: str) -> None:
    exc = ValueError(f"boom in {where}")
    RAISED.append(exc)
    raise exc


class Failing(Tool):
    def __init__(self) -> None:
        super().__init__("failing", "A Tool subclass that raises.")

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        _boom("failing")
        raise AssertionError("unreachable")


@tool
def fast_fail() -> str:
    """Plain signature, called from Rust."""
    _boom("fast_fail")
    return "unreachable"


@tool
def slow_fail(times: int = 1) -> str:
    """Run through Python's argument handling (a parameter with a conversion)."""
    _boom("slow_fail")
    return "unreachable"


@tool
async def async_fail() -> str:
    """Awaited on the async path."""
    _boom("async_fail")
    return "unreachable"


def _dict_fail(params: dict[str, Any]) -> str:
    _boom("dict_fail")
    return "unreachable"


SYNC_TOOLS = ("failing", "fast_fail", "slow_fail", "dict_fail")


def _registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register_all([Failing(), fast_fail, slow_fail, async_fail])
    reg.register_function(_dict_fail, "dict_fail", "A dict function that raises.", [])
    return reg


def _told(name: str) -> str:
    return f"Error: tool '{name}' raised during execution: ValueError: boom in {name}"


def _check(records: list[logging.LogRecord], names: list[str]) -> None:
    """One WARNING per call, each carrying the very exception the tool raised."""
    assert len(records) == len(names), [r.getMessage() for r in records]
    for record, name in zip(records, names, strict=True):
        assert record.name.split(".")[0] == "agentmaker"
        assert record.levelno == logging.WARNING
        assert record.exc_info is not None
        exc = record.exc_info[1]
        assert isinstance(exc, ValueError) and str(exc) == f"boom in {name}"
        assert exc in RAISED  # the original object, with its traceback
        assert exc.__traceback__ is not None
        assert name in record.getMessage() and _told(name) in record.getMessage()


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAISED.clear()


def test_execute_tool_logs_the_traceback_and_tells_the_model_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reg = _registry()
    with caplog.at_level(logging.WARNING, logger="agentmaker"):
        for name in SYNC_TOOLS:
            resp = reg.execute_tool(name, {})
            assert resp.is_error and resp.text == _told(name)
    _check(caplog.records, list(SYNC_TOOLS))
    # The traceback points into the tool.
    tb = caplog.records[0].exc_info[2]  # type: ignore[index]
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert frames[-1] == "_boom" and "run" in frames


async def test_aexecute_tool_logs_on_threads_and_on_the_loop(caplog: pytest.LogCaptureFixture) -> None:
    reg = _registry()
    names = [*SYNC_TOOLS, "async_fail"]
    with caplog.at_level(logging.WARNING, logger="agentmaker"):
        for name in names:
            resp = await reg.aexecute_tool(name, {})
            assert resp.is_error and resp.text == _told(name)
    _check(caplog.records, names)


def _script(*names: str) -> ScriptedLLM:
    calls = [ScriptedLLM.tool_call(n, {}, call_id=f"c{i}") for i, n in enumerate(names)]
    return ScriptedLLM([*calls, "done"])


def _tool_messages(result: Any) -> list[str]:
    return [m["content"] for m in result.messages if m.get("role") == "tool"]


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["inline", "threaded"])
def test_agent_run_logs_inline_and_threaded_calls(
    caplog: pytest.LogCaptureFixture, timeout: float | None
) -> None:
    reg = _registry()
    with caplog.at_level(logging.WARNING, logger="agentmaker"):
        result = Agent("a", _script(*SYNC_TOOLS), tool_registry=reg, tool_timeout=timeout).run("go")
    assert _tool_messages(result) == [_told(n) for n in SYNC_TOOLS]
    assert [c.status for c in result.tool_calls] == ["error"] * len(SYNC_TOOLS)
    _check(caplog.records, list(SYNC_TOOLS))


async def test_agent_arun_logs_sync_and_async_tools(caplog: pytest.LogCaptureFixture) -> None:
    reg = _registry()
    names = [*SYNC_TOOLS, "async_fail"]
    with caplog.at_level(logging.WARNING, logger="agentmaker"):
        result = await Agent("a", _script(*names), tool_registry=reg).arun("go")
    assert _tool_messages(result) == [_told(n) for n in names]
    _check(caplog.records, names)


@tool
def stopper() -> str:
    """Ends the run."""
    raise StopAgentRun("stopped here")


@tool
def retrier() -> str:
    """Asks the model to try again."""
    raise RetryAgentRun("try another way")


def _loud(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


def test_flow_control_is_not_logged_as_an_error(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agentmaker"):
        result = Agent("a", _script("retrier", "stopper"), tools=[retrier, stopper]).run("go")
        assert result.final_output == "stopped here"
        assert _tool_messages(result)[0] == "try another way"
        reg = ToolRegistry()
        reg.register(stopper)
        with pytest.raises(StopAgentRun):
            reg.execute_tool("stopper", {})
    assert _loud(caplog) == []


async def test_flow_control_is_not_logged_as_an_error_async(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agentmaker"):
        result = await Agent("a", _script("retrier", "stopper"), tools=[retrier, stopper]).arun("go")
        assert result.final_output == "stopped here"
        assert _tool_messages(result)[0] == "try another way"
        reg = ToolRegistry()
        reg.register(retrier)
        with pytest.raises(RetryAgentRun):
            await reg.aexecute_tool("retrier", {})
    assert _loud(caplog) == []
