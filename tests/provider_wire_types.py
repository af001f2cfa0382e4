"""The providers' own wire types, from their official SDKs (``anthropic``, ``google-genai``,
``openai``), used only as types: a request body our codecs built must validate against the SDK's
request type and lose nothing doing so, and a reply the fake server sends is first read with the
SDK's reply type, so it has a shape the real provider sends. No SDK client is ever made.

The Anthropic and OpenAI request types are TypedDicts, which pydantic validates by dropping keys
they do not know, and whose ``Iterable[...]`` fields it validates lazily: the validated value is
read to the end and compared with the body, so an unknown key or a bad nested block fails.
(They are validated from Python values: from JSON text, pydantic reads a string as an
``Iterable`` member of a ``str | Iterable[...]`` union, not as the ``str`` member.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic.types as anthropic_types
import openai.types.chat as openai_chat
from google.genai import types as genai_types
from pydantic import BaseModel, TypeAdapter

_anthropic_request = TypeAdapter(anthropic_types.MessageCreateParams)
_openai_request = TypeAdapter(openai_chat.CompletionCreateParams)


def _read_out(value: Any) -> Any:
    """``value`` with every lazily validated iterable read (which runs its validation)."""
    if isinstance(value, dict):
        return {k: _read_out(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        return value  # a reply type matched where a request type should: never equal to a dict
    if isinstance(value, (list, tuple, Iterator)) or type(value).__name__ == "ValidatorIterator":
        return [_read_out(v) for v in value]
    return value


def _same(validated: Any, body: Any, what: str) -> None:
    read = _read_out(validated)
    assert read == body, f"{what}: the SDK type does not hold the body as sent:\n{read}\n!=\n{body}"


def check_anthropic_request(raw: bytes, passed: tuple[str, ...] = ()) -> dict[str, Any]:
    """The body of an Anthropic request, checked against ``anthropic.types.MessageCreateParams``.
    ``passed`` names top-level keys a test gave the client on purpose that the SDK's type does
    not have (the codec sends a keyword it does not know as it is); they are not checked."""
    body = json.loads(raw)
    typed = {k: v for k, v in body.items() if k not in passed}
    _same(_anthropic_request.validate_python(typed), typed, "anthropic MessageCreateParams")
    return body


def check_openai_request(raw: bytes) -> dict[str, Any]:
    """The body of a chat-completions request, checked against the ``openai`` SDK's
    ``CompletionCreateParams``."""
    body = json.loads(raw)
    _same(_openai_request.validate_python(body), body, "openai CompletionCreateParams")
    return body


_GEMINI_FIELDS: dict[str, Any] = {
    "contents": TypeAdapter(list[genai_types.Content]),
    "systemInstruction": TypeAdapter(genai_types.Content),
    "tools": TypeAdapter(list[genai_types.Tool]),
    "toolConfig": TypeAdapter(genai_types.ToolConfig),
    "generationConfig": TypeAdapter(genai_types.GenerationConfig),
}


def check_gemini_request(raw: bytes) -> dict[str, Any]:
    """The body of a ``generateContent`` request, each field checked against google-genai's type
    for it (its models forbid unknown keys; bytes fields such as ``inlineData.data`` and
    ``thoughtSignature`` must be base64, as on the wire)."""
    body = json.loads(raw)
    unknown = set(body) - set(_GEMINI_FIELDS)
    assert not unknown, f"fields generateContent does not have: {unknown}"
    for key, value in body.items():
        _GEMINI_FIELDS[key].validate_json(json.dumps(value))
    return body


def check_request(path: str, raw: bytes, passed: tuple[str, ...] = ()) -> None:
    """A request body checked against the type of the endpoint ``path`` names."""
    if path.endswith("/messages"):
        check_anthropic_request(raw, passed)
    elif path.endswith("/chat/completions"):
        check_openai_request(raw)
    elif ":generateContent" in path or ":streamGenerateContent" in path:
        check_gemini_request(raw)
    else:
        raise AssertionError(f"no provider's endpoint is {path}")


def anthropic_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """``reply``, once ``anthropic.types.Message`` has read it."""
    message = anthropic_types.Message.model_validate(reply)
    assert [b.type for b in message.content] == [b["type"] for b in reply["content"]]
    return reply


def anthropic_event(event: dict[str, Any]) -> dict[str, Any]:
    """A stream event, once ``anthropic.types.RawMessageStreamEvent`` has read it."""
    TypeAdapter(anthropic_types.RawMessageStreamEvent).validate_python(event)
    return event


def gemini_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """``reply``, once google-genai's ``GenerateContentResponse`` has read it."""
    genai_types.GenerateContentResponse.model_validate_json(json.dumps(reply))
    return reply


def openai_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """``reply``, once the ``openai`` SDK's ``ChatCompletion`` has read it."""
    openai_chat.ChatCompletion.model_validate(reply)
    return reply


def openai_chunk(chunk: dict[str, Any]) -> dict[str, Any]:
    """A streamed chunk, once the ``openai`` SDK's ``ChatCompletionChunk`` has read it."""
    openai_chat.ChatCompletionChunk.model_validate(chunk)
    return chunk
