"""A model call's own TimeoutError against the run's deadline.

A client that gives up (a read timeout) raises TimeoutError from inside the model call; that is
the model's failure and reaches the caller unchanged, whatever the run's policy and however the
model is called. Only the run's own deadline becomes ``RunLimitExceeded(kind="deadline")``.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from agentmaker import Agent, RunLimitExceeded, RunPolicy
from agentmaker.llm import LLMResponse

POLICIES = {
    "no policy": None,
    "a policy without a deadline": RunPolicy(max_llm_calls=5),
    "a far deadline": RunPolicy(deadline_seconds=600),
}


class ChatTimesOut:
    def chat(self, messages, **kwargs):
        raise TimeoutError("model read timed out")


class AsyncChatTimesOut:
    async def chat(self, messages, **kwargs):
        await asyncio.sleep(0)
        raise TimeoutError("model read timed out")


class Streams:
    """The agent needs a chat method; with a stream it is not called on a streamed run."""

    def chat(self, messages, **kwargs):
        raise AssertionError("a streamed run calls the stream")


class AsyncStreamTimesOut(Streams):
    async def astream(self, messages, **kwargs):
        yield "Par"
        raise TimeoutError("model read timed out")


class StreamTimesOut(Streams):
    def stream(self, messages, **kwargs):
        yield "Par"
        raise TimeoutError("model read timed out")


def _run(agent: Agent, entry: str) -> object:
    if entry == "run":
        return agent.run("Weather in Paris?")
    if entry == "arun":
        return asyncio.run(agent.arun("Weather in Paris?"))
    return list(agent.stream("Weather in Paris?"))


@pytest.mark.parametrize("policy", list(POLICIES.values()), ids=list(POLICIES))
@pytest.mark.parametrize(
    ("model", "entry"),
    [
        (ChatTimesOut, "run"),
        (ChatTimesOut, "stream"),
        (AsyncChatTimesOut, "run"),
        (AsyncChatTimesOut, "arun"),
        (AsyncChatTimesOut, "stream"),
        (AsyncStreamTimesOut, "stream"),
        (StreamTimesOut, "stream"),
    ],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_a_timeout_raised_by_the_model_reaches_the_caller_unchanged(model, entry, policy):
    agent = Agent("weather", model(), run_policy=policy)
    with pytest.raises(TimeoutError, match="^model read timed out$") as info:
        _run(agent, entry)
    assert type(info.value) is TimeoutError
    assert info.value.result.status == "failed"  # like every error that ends a run


async def test_the_run_deadline_still_cuts_a_streamed_model_call_short():
    class Hangs(Streams):
        async def astream(self, messages, **kwargs):
            yield "Par"
            await asyncio.Event().wait()  # never set: only the deadline ends this call

    agent = Agent("weather", Hangs(), run_policy=RunPolicy(deadline_seconds=0.2))
    with pytest.raises(RunLimitExceeded, match="exceeded wall-clock time limit 0.2s") as info:
        async for _ in agent.astream("Weather in Paris?"):
            pass
    assert info.value.kind == "deadline"


class SlowHook:
    """Runs long between the run's admission of a model call and the call itself."""

    def on_llm_start(self, event):
        time.sleep(0.3)


async def test_a_model_call_does_not_start_once_the_deadline_has_passed():
    began = []

    class Instant:
        async def chat(self, messages, **kwargs):
            began.append("chat")
            return LLMResponse(content="Sunny")

    class Instantly(Streams):
        async def astream(self, messages, **kwargs):
            began.append("stream")
            yield "Sunny"

    policy = RunPolicy(deadline_seconds=0.1)
    with pytest.raises(RunLimitExceeded, match="exceeded wall-clock time limit 0.1s") as info:
        await Agent("weather", Instant(), run_policy=policy, hooks=SlowHook()).arun("Weather in Paris?")
    assert (info.value.kind, info.value.result.usage.llm_calls) == ("deadline", 0)
    seen = []
    with pytest.raises(RunLimitExceeded, match="exceeded wall-clock time limit 0.1s") as info:
        async for event in Agent("weather", Instantly(), run_policy=policy, hooks=SlowHook()).astream("Hi"):
            seen.append(type(event).__name__)
    assert (info.value.kind, info.value.result.usage.llm_calls) == ("deadline", 0)
    assert "TextDelta" not in seen
    assert began == []
