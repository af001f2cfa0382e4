"""What Agent.run / arun accept: a string, content parts of one user message, or messages."""

from __future__ import annotations

import asyncio

import pytest
from agentmaker import Agent, FunctionTool, Message, ToolRegistry, ToolRetriever, tool
from agentmaker.testing import ScriptedLLM


def _agent(*replies: str) -> tuple[Agent, ScriptedLLM]:
    llm = ScriptedLLM(list(replies))
    return Agent("input", llm, instructions="Be brief."), llm


def test_a_string_is_one_user_message():
    agent, llm = _agent("hello")
    result = agent.run("hi")
    assert llm.requests[0].messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert result.messages[-1] == {"role": "assistant", "content": "hello"}


def test_messages_are_sent_after_the_instructions_as_given():
    history: list[Message] = [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": [{"type": "text", "text": "What is my name?"}]},
    ]
    snapshot = [dict(m) for m in history]
    agent, llm = _agent("Ada.")
    result = agent.run(history)
    assert llm.requests[0].messages == [{"role": "system", "content": "Be brief."}, *snapshot]
    assert result.final_output == "Ada."
    assert result.messages[1:4] == snapshot
    # The run copies each message: the caller's list and dicts are left as they were.
    assert history == snapshot
    assert all(a is not b for a, b in zip(result.messages[1:4], history, strict=True))


def test_a_tuple_of_messages_works_with_arun():
    agent, llm = _agent("fine")
    messages = ({"role": "user", "content": "How are you?"},)
    result = asyncio.run(agent.arun(messages))
    assert result.final_output == "fine"
    assert llm.requests[0].messages[1] == {"role": "user", "content": "How are you?"}


def test_content_parts_are_one_user_message():
    parts = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    agent, llm = _agent("A cat.")
    agent.run(parts)
    assert llm.requests[0].messages[1] == {"role": "user", "content": parts}


@pytest.mark.parametrize(
    ("bad", "error", "text"),
    [
        (42, TypeError, "run input must be a string, a list of messages or a list of content parts, got int"),
        ({"role": "user", "content": "hi"}, TypeError, "got dict"),
        ([], ValueError, "run input is an empty list"),
        (
            [{"role": "user", "content": "hi"}, {"type": "text", "text": "x"}],
            TypeError,
            "run input item 1 is not a message",
        ),
        (["just text"], TypeError, "run input item 0 is neither a message"),
        (
            [{"role": "usr", "content": "hi"}],
            ValueError,
            "run input message 0 has role 'usr'; expected one of",
        ),
        ([{"role": "user", "content": 7}], TypeError, "run input message 0 has content of type int"),
    ],
)
def test_bad_input_is_refused_before_the_model_is_called(bad, error, text):
    agent, llm = _agent("never")
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        agent.run(bad)
    assert llm.calls == 0


def test_tool_rag_searches_with_the_last_user_message():
    @tool
    def get_weather(city: str) -> str:
        """Get the weather forecast for a city."""
        return city

    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email message to a recipient."""
        return to

    registry = ToolRegistry()
    registry.register_all([get_weather, send_email])
    retriever = ToolRetriever(registry, top_k=1, on_empty="none")
    retriever.index()
    llm = ScriptedLLM(["ok"])
    agent = Agent("rag", llm, tool_registry=registry, tool_retriever=retriever)
    agent.run(
        [
            {"role": "user", "content": "send an email to Ana"},
            {"role": "assistant", "content": "Sure."},
            {"role": "user", "content": [{"type": "text", "text": "first, the weather forecast in Oslo?"}]},
        ]
    )
    assert llm.requests[0].tool_names == ["get_weather"]


def test_a_decorated_function_is_a_generic_function_tool():
    @tool
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    assert isinstance(double, FunctionTool)
    assert FunctionTool[[int], int].__origin__ is FunctionTool
    assert double(4) == 8
    assert double.func(5) == 10
