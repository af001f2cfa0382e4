"""``UserInputTool``: the model asks the person a question (``ask_user(question, choices=None)``).

Two ways to answer:

- a callback, ``UserInputTool(answer)``: ``answer(question, choices)`` returns the answer text
  (``choices`` is a list of strings or ``None``); it may be ``async def``, and a blocking
  callback (``input()``) runs off the event loop in async runs like any sync tool;
- ``UserInputTool(mode="pause")``: the run pauses on the question as it does on a call awaiting
  approval with ``confirm="pause"`` (``result.status == "paused"``; the question is a
  ``PendingCall`` with ``kind == "question"``), and ``agent.resume(result, answers={call_id:
  "..."})`` goes on, in this process or another through ``RunResult.to_json``/``from_json``.

Served over MCP (``serve_mcp``), the question goes to the person at the client, by an
elicitation request or, for 2026-07-28 clients, an ``input_required`` round; a client that cannot
be asked gets the callback's answer, or, in pause mode, a refusal.

The texts the model reads (description, parameters, how an answer is shown) are the core's
(``prompts=`` overrides them).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from agentmaker._native import Tool, ToolResponse, _UserInputTexts
from agentmaker.errors import ToolConfigError

__all__ = ["UserInputTool"]

AnswerCallback = Callable[[str, "list[str] | None"], "str | Awaitable[str]"]


class UserInputTool(Tool):
    """Tool ``ask_user``: the model asks the person a question, optionally with choices.

    ``UserInputTool(answer)`` answers through ``answer(question, choices)`` (sync or async);
    ``UserInputTool(mode="pause")`` pauses the run until ``Agent.resume(result,
    answers={call_id: text})``. See the module doc.
    """

    mode: Literal["callback", "pause"]
    # Served over MCP, the question goes to the client's person (mcp/serve.py).
    _asks_person = True
    _texts: Any
    _answer: AnswerCallback | None

    def __new__(  # noqa: PYI034 - returns the subclass that answers the way asked
        cls,
        answer: AnswerCallback | None = None,
        *,
        mode: Literal["callback", "pause"] = "callback",
        name: str = "ask_user",
        prompts: dict[str, str] | None = None,
    ) -> UserInputTool:
        if mode not in ("callback", "pause"):
            raise ToolConfigError(f'UserInputTool mode must be "callback" or "pause", got {mode!r}')
        if mode == "pause" and answer is not None:
            raise ToolConfigError(
                'UserInputTool(mode="pause") takes no answer callback: answers come with resume()'
            )
        if mode == "callback" and not callable(answer):
            raise ToolConfigError(
                "UserInputTool needs an answer callback (question, choices) -> str, "
                f'or mode="pause"; got {answer!r}'
            )
        if mode == "pause":
            kind: type[UserInputTool] = _PausingUserInput
        elif inspect.iscoroutinefunction(answer) or inspect.iscoroutinefunction(
            getattr(answer, "__call__", None)  # noqa: B004 - an object whose __call__ is async
        ):
            kind = _AsyncUserInput
        else:
            kind = _SyncUserInput
        obj: UserInputTool = Tool.__new__(kind)
        return obj

    def __init__(
        self,
        answer: AnswerCallback | None = None,
        *,
        mode: Literal["callback", "pause"] = "callback",
        name: str = "ask_user",
        prompts: dict[str, str] | None = None,
    ) -> None:
        texts = _UserInputTexts(prompts)
        super().__init__(name, texts.description())
        self.mode = mode
        self._texts = texts
        self._answer = answer

    def get_input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self._texts.input_schema()
        return schema

    def _shown(self, answer: object) -> ToolResponse:
        if not isinstance(answer, str):
            return ToolResponse.error(self._texts.bad_answer(type(answer).__name__))
        return ToolResponse.ok(self._texts.answer(answer))

    def __repr__(self) -> str:
        return f"UserInputTool(name={self.name!r}, mode={self.mode!r})"


def _question(parameters: dict[str, Any]) -> tuple[str, list[str] | None]:
    choices = parameters.get("choices")
    return str(parameters["question"]), (list(choices) if choices is not None else None)


class _SyncUserInput(UserInputTool):
    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        assert self._answer is not None
        return self._shown(self._answer(*_question(parameters)))


class _AsyncUserInput(UserInputTool):
    async def arun(self, parameters: dict[str, Any]) -> ToolResponse:
        assert self._answer is not None
        answer = self._answer(*_question(parameters))
        return self._shown(await answer if inspect.isawaitable(answer) else answer)


class _PausingUserInput(UserInputTool):
    # The agent's confirmation gate is where a run pauses: it sees this flag and marks the call
    # pending as a question (agent/tool_calls.py) instead of asking for an approval.
    requires_confirmation = True
    _pauses_run = True

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return ToolResponse.error(self._texts.no_run())
