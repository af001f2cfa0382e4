"""Conversation history: new_messages(), message_history=, and the messages' JSON form."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from agentmaker import Agent, messages_from_json, messages_to_json, tool
from agentmaker.testing import ScriptedLLM


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First.
        b: Second.
    """
    return a + b


def first_run():
    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 2, "b": 3}), "It is 5."])
    agent = Agent("a", llm, tools=[add], instructions="Be brief.")
    return agent.run("What is 2 + 3?")


def test_new_messages_are_the_input_replies_and_tool_results():
    result = first_run()
    new = result.new_messages()
    assert [m["role"] for m in new] == ["user", "assistant", "tool", "assistant"]
    assert new[0] == {"role": "user", "content": "What is 2 + 3?"}
    assert new[2]["content"] == "5"
    assert result.messages[0] == {"role": "system", "content": "Be brief."}
    assert result.messages[1:] == new


@pytest.mark.parametrize("use_async", [False, True])
def test_a_second_turn_sees_the_history_then_the_new_input(use_async):
    first = first_run()
    llm = ScriptedLLM(["It was 5."])
    agent = Agent("a", llm, tools=[add], instructions="Be brief.")
    if use_async:
        second = asyncio.run(agent.arun("What did you say?", message_history=first.messages))
    else:
        second = agent.run("What did you say?", message_history=first.messages)
    sent = llm.requests[0].messages
    # One system message (this agent's instructions), then the whole first conversation.
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert [m["role"] for m in sent].count("system") == 1
    assert sent[1:-1] == first.new_messages()
    assert sent[-1] == {"role": "user", "content": "What did you say?"}
    assert [m["role"] for m in second.new_messages()] == ["user", "assistant"]
    assert second.messages[1:5] == first.new_messages()


def test_history_from_new_messages_chains_turns_and_is_not_changed():
    first = first_run()
    history = first.new_messages()
    before = json.dumps(history)
    llm = ScriptedLLM(["again"])
    Agent("a", llm).run("more", message_history=history)
    assert json.dumps(history) == before
    assert llm.requests[0].messages[1:-1] == history


def test_history_crosses_providers_unchanged():
    """A transcript recorded through one LLM object is the plain input of another."""
    first = first_run()
    other = ScriptedLLM(["ok"], provider="other", model="m2")
    Agent("b", other, tools=[add]).run("next", message_history=first.new_messages())
    sent = other.requests[0].messages
    call = sent[2]["tool_calls"][0]
    assert call["function"] == {"name": "add", "arguments": json.dumps({"a": 2, "b": 3})}
    assert sent[3] == {"role": "tool", "tool_call_id": call["id"], "content": "5"}


@pytest.mark.parametrize(
    ("history", "error", "text"),
    [
        ("hello", TypeError, "message_history must be a list of messages"),
        ([{"content": "x"}], TypeError, "message_history item 0 is not a message"),
        ([{"role": "robot", "content": "x"}], ValueError, "message_history message 0 has role 'robot'"),
        ([{"role": "user", "content": 3}], TypeError, "message_history message 0 has content of type int"),
    ],
)
def test_bad_history_is_refused_before_the_model_is_called(history, error, text):
    llm = ScriptedLLM(["never"])
    with pytest.raises(error, match=text):
        Agent("a", llm).run("hi", message_history=history)
    assert llm.calls == 0


def test_messages_round_trip_through_json_in_another_process(tmp_path):
    first = first_run()
    path = tmp_path / "conversation.json"
    path.write_text(messages_to_json(first.messages), encoding="utf-8")
    script = (
        "import sys\n"
        "from agentmaker import Agent, messages_from_json\n"
        "from agentmaker.testing import ScriptedLLM\n"
        "history = messages_from_json(open(sys.argv[1], encoding='utf-8').read())\n"
        "llm = ScriptedLLM(['It was 5.'])\n"
        "r = Agent('a', llm).run('And?', message_history=history)\n"
        "print([m['role'] for m in llm.requests[0].messages], r.final_output)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['system', 'user', 'assistant', 'tool', 'assistant', 'user'] It was 5."
    assert messages_from_json(path.read_text(encoding="utf-8")) == first.messages


def test_messages_json_errors_are_clear():
    with pytest.raises(ValueError, match="not valid JSON"):
        messages_from_json("[{")
    with pytest.raises(TypeError, match="must be an array of messages, got dict"):
        messages_from_json('{"role": "user"}')
    with pytest.raises(ValueError, match="messages JSON message 0 has role 'x'"):
        messages_from_json('[{"role": "x"}]')
    with pytest.raises(TypeError, match="cannot be written as JSON"):
        messages_to_json([{"role": "user", "content": "hi", "name": object()}])
