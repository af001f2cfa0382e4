"""The chat messages an agent sends and records, and how a run's input becomes messages.

A message is the OpenAI chat shape (``{"role": "user", "content": "..."}``); it is a plain dict
at run time, typed here as :class:`Message` so a type checker can follow ``RunResult.messages``
and the input of ``Agent.run``.

``Agent.run`` / ``arun`` take one of:

- a string: one user message;
- a list (or tuple) of content parts (dicts with a ``type``, e.g. ``{"type": "text", ...}`` or
  ``{"type": "image_url", ...}``): one user message whose content is that list;
- a list (or tuple) of messages (dicts with a ``role``): sent as given, after the agent's
  instructions (which always come first, as the system message). Each message is copied, so the
  caller's dicts are never changed by the run.

A list mixing messages and content parts, an empty list, an unknown role or a content that is
neither a string, a list nor None is refused with a clear error before the model is called.

A conversation goes on with ``message_history=``: a list of messages (usually a previous
``RunResult.messages`` or ``new_messages()``) sent before the new input. The shape is the
provider-neutral one above, so a history recorded with one provider's LLM is the input of a run
with another's; :func:`messages_to_json` and :func:`messages_from_json` store it as JSON text.
An assistant message may also carry ``provider_reasoning`` (see :class:`ProviderReasoning`):
the reasoning its provider needs back, sent to that provider only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, Required, TypeAlias, TypedDict

__all__ = [
    "ContentPart",
    "Message",
    "ProviderReasoning",
    "RunInput",
    "history_messages",
    "input_messages",
    "messages_from_json",
    "messages_to_json",
    "query_text",
]

Role: TypeAlias = Literal["system", "developer", "user", "assistant", "tool"]
_ROLES: frozenset[str] = frozenset(("system", "developer", "user", "assistant", "tool"))


class ContentPart(TypedDict, total=False):
    """One part of a multi-part message content: ``{"type": "text", "text": "..."}``,
    ``{"type": "image_url", "image_url": {"url": "..."}}`` and the like."""

    type: Required[str]
    text: str
    image_url: dict[str, Any]
    input_audio: dict[str, Any]
    file: dict[str, Any]


class FunctionCall(TypedDict):
    """The ``function`` of a tool call: its name and its arguments as a JSON text."""

    name: str
    arguments: str


class ToolCallMessage(TypedDict):
    """One entry of an assistant message's ``tool_calls``."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class ProviderReasoning(TypedDict, total=False):
    """The reasoning parts of one reply, exactly as its provider sent them, kept so that the
    provider gets them back with the turn (Anthropic's ``thinking`` blocks with their
    ``signature`` and ``redacted_thinking`` blocks with their ``data``). Only the provider
    named here is sent them; every other provider's request leaves them out. ``layout`` is
    there only when a part came after the reply's text or a tool call (interleaved thinking):
    the reply's order as ``"reasoning"``, ``"text"`` and ``"call"`` entries."""

    provider: Required[str]
    parts: Required[list[dict[str, Any]]]
    layout: list[Literal["reasoning", "text", "call"]]


class Message(TypedDict, total=False):
    """One chat message: ``role`` always, ``content`` for most roles, ``tool_calls`` on an
    assistant message that calls tools, ``tool_call_id`` on the tool message answering one,
    ``provider_reasoning`` on an assistant message whose provider's reasoning must go back
    with it."""

    role: Required[Role]
    content: str | list[ContentPart] | None
    name: str
    tool_calls: list[ToolCallMessage]
    tool_call_id: str
    provider_reasoning: ProviderReasoning


RunInput: TypeAlias = str | Sequence[Message] | Sequence[ContentPart]
"""What ``Agent.run`` and ``Agent.arun`` accept."""


def input_messages(input: object) -> list[Message]:
    """The messages a run's input adds after the system message (see the module docstring)."""
    if isinstance(input, str):
        return [{"role": "user", "content": input}]
    if not isinstance(input, (list, tuple)):
        raise TypeError(
            "run input must be a string, a list of messages or a list of content parts, "
            f"got {type(input).__name__}: {input!r}"
        )
    if not input:
        raise ValueError("run input is an empty list; give a string, messages or content parts")
    if not any(isinstance(m, dict) and "role" in m for m in input):
        for i, part in enumerate(input):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise TypeError(
                    f"run input item {i} is neither a message (a dict with a 'role') nor a content "
                    f"part (a dict with a 'type'): {part!r}"
                )
        return [{"role": "user", "content": list(input)}]
    return _checked(input, "run input")


def _checked(items: Sequence[object], what: str) -> list[Message]:
    """Copies of ``items``, each checked to be a message (a dict with a known role and a string,
    list or None content)."""
    messages: list[Message] = []
    for i, msg in enumerate(items):
        if not isinstance(msg, dict) or "role" not in msg:
            raise TypeError(
                f"{what} item {i} is not a message (a dict with a 'role'): {msg!r}; a list is "
                "either all messages or all content parts"
            )
        role = msg["role"]
        if role not in _ROLES:
            raise ValueError(
                f"{what} message {i} has role {role!r}; expected one of {', '.join(sorted(_ROLES))}"
            )
        content = msg.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise TypeError(
                f"{what} message {i} has content of type {type(content).__name__}; "
                "expected a string, a list of content parts or None"
            )
        copied: Message = dict(msg)  # type: ignore[assignment]
        messages.append(copied)
    return messages


def history_messages(history: object) -> list[Message]:
    """The messages of ``message_history=``, checked and copied. A leading system message (the
    previous run's instructions) is left out: the agent's own instructions come first."""
    if isinstance(history, (str, bytes)) or not isinstance(history, (list, tuple)):
        raise TypeError(
            f"message_history must be a list of messages (e.g. a previous result.messages), "
            f"got {type(history).__name__}"
        )
    messages = _checked(history, "message_history")
    if messages and messages[0]["role"] == "system":
        del messages[0]
    return messages


def messages_to_json(messages: Sequence[Message]) -> str:
    """A conversation as JSON text (a JSON array of the messages), for storing it; read it back
    with :func:`messages_from_json`. Raises ``TypeError`` when a message holds something JSON
    cannot represent."""
    checked = _checked(list(messages), "messages")
    try:
        return json.dumps(checked, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"messages cannot be written as JSON: {exc}") from None


def messages_from_json(text: str | bytes) -> list[Message]:
    """The messages :func:`messages_to_json` wrote, checked like a run's input."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"messages JSON is not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise TypeError(f"messages JSON must be an array of messages, got {type(data).__name__}")
    return _checked(data, "messages JSON")


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def query_text(messages: Sequence[Message]) -> str:
    """The text Tool-RAG searches with: the last user message's text (its text parts joined)."""
    for msg in reversed(messages):
        if msg.get("role") == "user":
            return _content_text(msg.get("content"))
    return ""
