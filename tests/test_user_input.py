"""UserInputTool: the model asks the person, answered by a callback or by pausing the run."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import pytest
from agentmaker import (
    Agent,
    RunEnd,
    RunResult,
    ToolConfigError,
    ToolRegistry,
    UserInputTool,
    tool,
)
from agentmaker.testing import ScriptedLLM

ASK = ScriptedLLM.tool_call("ask_user", {"question": "Which colour?", "choices": ["red", "blue"]})


def test_the_tool_describes_itself_and_refuses_bad_setups() -> None:
    t = UserInputTool(lambda q, c: "blue")
    assert t.name == "ask_user"
    assert t.description.startswith("Ask the person you are working for a question")
    schema = t.get_input_schema()
    assert schema["required"] == ["question"] and set(schema["properties"]) == {"question", "choices"}
    assert isinstance(t, UserInputTool) and repr(t) == "UserInputTool(name='ask_user', mode='callback')"
    with pytest.raises(
        ToolConfigError, match='needs an answer callback .question, choices. -> str, or mode="pause"'
    ):
        UserInputTool()
    with pytest.raises(ToolConfigError, match='mode must be "callback" or "pause", got \'later\''):
        UserInputTool(mode="later")  # type: ignore[arg-type]
    with pytest.raises(ToolConfigError, match="takes no answer callback"):
        UserInputTool(lambda q, c: "x", mode="pause")
    with pytest.raises(ToolConfigError, match="nope"):
        UserInputTool(lambda q, c: "x", prompts={"nope": "x"})
    own = UserInputTool(lambda q, c: "42", prompts={"tool.msg.ask_user.answer": "Answer: {answer}"})
    assert own.run({"question": "n?"}).text == "Answer: 42"
    reg = ToolRegistry()
    reg.register(UserInputTool(lambda q, c: 3))  # type: ignore[arg-type,return-value]
    out = reg.execute_tool("ask_user", {"question": "n?"})
    assert (out.status, out.text) == (
        "error",
        "Error: no answer could be obtained (the answer callback returned int, not a string)",
    )
    assert reg.execute_tool("ask_user", {"question": ""}).status == "error"  # schema: minLength 1
    paused = ToolRegistry()
    paused.register(UserInputTool(mode="pause"))
    assert paused.execute_tool("ask_user", {"question": "n?"}).text.startswith(
        "Error: ask_user waits for the person by pausing"
    )


def test_a_sync_callback_answers_in_run() -> None:
    seen: list[Any] = []

    def answer(question: str, choices: list[str] | None) -> str:
        seen.append((question, choices, threading.current_thread() is threading.main_thread()))
        return "blue"

    llm = ScriptedLLM([ASK, "Blue it is."])
    result = Agent("a", llm, tools=[UserInputTool(answer)]).run("Paint it")
    assert result.output == "Blue it is."
    assert seen == [("Which colour?", ["red", "blue"], True)]
    assert llm.requests[1].messages[-1]["content"] == "The person answered: blue"


def test_an_async_callback_answers_in_arun() -> None:
    async def answer(question: str, choices: list[str] | None) -> str:
        await asyncio.sleep(0)
        return ""

    llm = ScriptedLLM([ASK, "ok"])
    asyncio.run(Agent("a", llm, tools=[UserInputTool(answer)]).arun("Paint it"))
    assert llm.requests[1].messages[-1]["content"] == "(the person gave no answer)"


def test_a_callback_answers_in_stream() -> None:
    llm = ScriptedLLM([ASK, "ok"])
    events = list(
        Agent("a", llm, tools=[UserInputTool(lambda q, c: f"{c[0] if c else '?'}")]).stream("Paint it")
    )
    end = events[-1]
    assert isinstance(end, RunEnd) and end.result.status == "completed"
    assert end.result.tool_calls[0].output == "The person answered: red"


def asking_agent(llm: ScriptedLLM, **kw: Any) -> Agent:
    return Agent("a", llm, tools=[UserInputTool(mode="pause")], **kw)


def check_paused(result: RunResult) -> None:
    assert result.status == "paused"
    [p] = result.pending
    assert (p.id, p.tool_name, p.kind, p.arguments["question"]) == (
        "call_1",
        "ask_user",
        "question",
        "Which colour?",
    )


def test_pause_mode_pauses_run_and_resumes_with_the_answer() -> None:
    llm = ScriptedLLM([ASK, "Red then."])
    agent = asking_agent(llm, confirm=lambda tool, args: pytest.fail("no approval is asked"))
    paused = agent.run("Paint it")
    check_paused(paused)
    done = agent.resume(paused, answers={"call_1": "red"})
    assert (done.status, done.output) == ("completed", "Red then.")
    assert llm.requests[1].messages[-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "The person answered: red",
    }
    assert done.tool_calls[0].status == "success"


def test_pause_mode_pauses_arun_and_aresumes() -> None:
    llm = ScriptedLLM([ASK, "Red then."])
    agent = asking_agent(llm)

    async def go() -> RunResult:
        paused = await agent.arun("Paint it")
        check_paused(paused)
        return await agent.aresume(paused, answers={"call_1": "red"})

    assert asyncio.run(go()).output == "Red then."


def test_pause_mode_pauses_stream() -> None:
    llm = ScriptedLLM([ASK, "Red then."])
    agent = asking_agent(llm)
    end = list(agent.stream("Paint it"))[-1]
    assert isinstance(end, RunEnd)
    check_paused(end.result)
    assert agent.resume(end.result, answers={"call_1": "red"}).output == "Red then."


def test_answers_and_decisions_are_checked() -> None:
    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file.

        Args:
            path: The file.
        """
        return f"deleted {path}"

    llm = ScriptedLLM(
        [ScriptedLLM.tool_calls(("ask_user", {"question": "Sure?"}), ("delete", {"path": "a"})), "done"]
    )
    agent = Agent("a", llm, tools=[UserInputTool(mode="pause"), delete], confirm="pause")
    paused = agent.run("go")
    assert [(p.id, p.kind) for p in paused.pending] == [("call_1", "question"), ("call_2", "approval")]
    with pytest.raises(ValueError, match=r"no answer for paused question 'call_1' \(ask_user\): 'Sure\?'"):
        agent.resume(paused, {"call_2": True})
    with pytest.raises(
        ValueError, match=r"'call_1' \(ask_user\) asks the person a question: give its answer in answers="
    ):
        agent.resume(paused, {"call_1": True, "call_2": True})
    with pytest.raises(ValueError, match=r"'call_2' \(delete\) awaits an approval, not an answer"):
        agent.resume(paused, answers={"call_1": "yes", "call_2": "yes"})
    with pytest.raises(TypeError, match="the answer for call 'call_1' must be a string, got True"):
        agent.resume(paused, {"call_2": True}, answers={"call_1": True})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="decision for unknown call id 'call_9'"):
        agent.resume(paused, {"call_2": True}, answers={"call_1": "yes", "call_9": "x"})
    done = agent.resume(paused, {"call_2": True}, answers={"call_1": "yes"})
    assert [c.output for c in done.tool_calls] == ["The person answered: yes", "deleted a"]


def test_a_paused_question_is_answered_in_a_new_process() -> None:
    paused = asking_agent(ScriptedLLM([ASK])).run("Paint it")
    text = paused.to_json()
    script = (
        "import sys\n"
        "from agentmaker import Agent, RunResult, UserInputTool\n"
        "from agentmaker.testing import ScriptedLLM\n"
        "paused = RunResult.from_json(sys.stdin.read())\n"
        "llm = ScriptedLLM(['Blue then.'])\n"
        "agent = Agent('a', llm, tools=[UserInputTool(mode='pause')])\n"
        "r = agent.resume(paused, answers={p.id: 'blue' for p in paused.pending if p.kind == 'question'})\n"
        "print(r.status, r.output, llm.requests[0].messages[-1]['content'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], input=text, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "completed Blue then. The person answered: blue"
