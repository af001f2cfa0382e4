"""Which of an LLM's chat/achat the agent calls: the most-derived one, on both entry points."""

from __future__ import annotations

import asyncio
import threading
import types

import pytest
from agentmaker import Agent, LLMClient, LLMResponse
from agentmaker.testing import ScriptedLLM


class ChatOverride(ScriptedLLM):
    """Overrides only chat, to record calls and rewrite replies (achat is inherited)."""

    def chat(self, messages, *, tools=None, **kwargs):
        resp = super().chat(messages, tools=tools, **kwargs)
        return LLMResponse(content=f"chat:{resp.content}")


class AchatOverride(ScriptedLLM):
    """Overrides only achat (chat is inherited)."""

    async def achat(self, messages, *, tools=None, **kwargs):
        await asyncio.sleep(0)
        resp = self._next(messages, tools, kwargs)
        return LLMResponse(content=f"achat:{resp.content}")


class BothOverride(ChatOverride):
    """Defines both below a class that defines only chat."""

    def chat(self, messages, *, tools=None, **kwargs):
        return LLMResponse(content="both-sync")

    async def achat(self, messages, *, tools=None, **kwargs):
        return LLMResponse(content="both-async")


class BelowChatOverride(ChatOverride):
    """Defines neither: ChatOverride, the nearest class that does, decides."""


class AchatRemoved(ScriptedLLM):
    achat = None


def run_both(llm_factory):
    """(Agent.run's answer, Agent.arun's answer), each with a fresh model."""
    sync = Agent("a", llm_factory()).run("hi").final_output
    coro = Agent("a", llm_factory()).arun("hi")
    return sync, asyncio.run(coro)


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        (ScriptedLLM, ("ok", "ok")),
        (ChatOverride, ("chat:ok", "chat:ok")),
        (BelowChatOverride, ("chat:ok", "chat:ok")),
        (AchatOverride, ("achat:ok", "achat:ok")),
        (BothOverride, ("both-sync", "both-async")),
        (AchatRemoved, ("ok", "ok")),
    ],
)
def test_the_most_derived_of_chat_and_achat_is_called(cls, expected):
    sync, asynchronous = run_both(lambda: cls(["ok"]))
    assert (sync, asynchronous.final_output) == expected


def test_a_chat_override_sees_every_turn_of_an_async_run():
    seen = []

    class Recording(ScriptedLLM):
        def chat(self, messages, *, tools=None, **kwargs):
            seen.append([m["role"] for m in messages])
            return super().chat(messages, tools=tools, **kwargs)

    script = [ScriptedLLM.tool_call("nope", {}), "done"]
    result = asyncio.run(Agent("a", Recording(script)).arun("hi"))
    assert result.final_output == "done"
    assert seen == [["system", "user"], ["system", "user", "assistant", "tool"]]


def test_methods_set_on_the_instance_come_first():
    calls = []

    def own_chat(self, messages, **kwargs):
        calls.append("own chat")
        return LLMResponse(content="own")

    async def own_achat(self, messages, **kwargs):
        calls.append("own achat")
        return LLMResponse(content="own async")

    llm = ScriptedLLM([])
    llm.chat = types.MethodType(own_chat, llm)
    sync, asynchronous = run_both(lambda: llm)
    assert (sync, asynchronous.final_output) == ("own", "own")
    assert calls == ["own chat", "own chat"]  # the instance's chat beats the class's achat
    llm.achat = types.MethodType(own_achat, llm)
    sync, asynchronous = run_both(lambda: llm)
    assert (sync, asynchronous.final_output) == ("own", "own async")
    only_async = ScriptedLLM(["class chat"])
    only_async.achat = types.MethodType(own_achat, only_async)
    sync, asynchronous = run_both(lambda: only_async)
    assert (sync, asynchronous.final_output) == ("own async", "own async")


def test_a_duck_typed_model_follows_the_same_rule():
    class Base:
        def chat(self, messages, **kwargs):
            return LLMResponse(content="base chat")

        async def achat(self, messages, **kwargs):
            return LLMResponse(content="base achat")

    class OnlyChat(Base):
        def chat(self, messages, **kwargs):
            return LLMResponse(content="derived chat")

    class OnlyAchat(Base):
        async def achat(self, messages, **kwargs):
            return LLMResponse(content="derived achat")

    sync, asynchronous = run_both(OnlyChat)
    assert (sync, asynchronous.final_output) == ("derived chat", "derived chat")
    sync, asynchronous = run_both(OnlyAchat)
    assert (sync, asynchronous.final_output) == ("derived achat", "derived achat")
    sync, asynchronous = run_both(Base)
    assert (sync, asynchronous.final_output) == ("base chat", "base achat")


def test_an_llmclient_subclass_overriding_chat_runs_it_off_the_loop():
    """LLMClient.achat runs self.chat on a worker thread, so it is kept below an overridden
    chat: the override runs, and a blocking one does not stall the event loop."""
    threads = []

    class Offline(LLMClient):
        def chat(self, messages, *, tools=None, **kwargs):
            threads.append(threading.current_thread())
            return LLMResponse(content="offline")

    agent = Agent("a", Offline("m", base_url="http://127.0.0.1:9"))
    assert agent.run("x").final_output == "offline"
    assert threads == [threading.main_thread()]

    async def main():
        loop_thread = threading.current_thread()
        result = await agent.arun("x")
        return result.final_output, loop_thread

    answer, loop_thread = asyncio.run(main())
    assert answer == "offline"
    assert threads[1] is not loop_thread
