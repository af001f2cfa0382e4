"""Content parts on each wire: text parts stay separate blocks/parts (never glued), image_url
parts (data URLs and http(s) URLs) become Anthropic image blocks and Gemini inlineData/fileData
parts, and a part a wire cannot take is refused with a clear error before anything is sent.
Every request body is checked against the official SDKs' request types."""

from __future__ import annotations

from typing import Any

import pytest
from agentmaker import Agent, LLMClient
from llm_wire_server import WireServer, json_reply
from provider_wire_types import anthropic_reply, check_anthropic_request, check_gemini_request, gemini_reply

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
RULES = [{"type": "text", "text": "Rule one."}, {"type": "text", "text": "Rule two."}]
PICTURE = [
    {"type": "text", "text": "What is in these?"},
    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "high"}},
    {"type": "image_url", "image_url": {"url": "https://images.example/cat.jpg"}},
]


def claude_text(text: str) -> dict[str, Any]:
    return anthropic_reply(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 2},
        }
    )


def gemini_text(text: str) -> dict[str, Any]:
    return gemini_reply(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}]}
    )


def claude(server: WireServer) -> LLMClient:
    return LLMClient("claude-x", provider="anthropic", base_url=server.url())


def gemini(server: WireServer) -> LLMClient:
    return LLMClient("gemini-x", provider="gemini", base_url=server.url("/v1beta"))


def test_text_parts_are_separate_anthropic_blocks() -> None:
    with WireServer([json_reply(claude_text("ok"))]) as server:
        claude(server).chat([{"role": "system", "content": RULES}, {"role": "user", "content": RULES}])
    body = check_anthropic_request(server.raw[0])
    assert body["system"] == RULES
    assert body["messages"] == [{"role": "user", "content": RULES}]


def test_text_parts_are_separate_gemini_parts() -> None:
    with WireServer([json_reply(gemini_text("ok"))]) as server:
        gemini(server).chat([{"role": "system", "content": RULES}, {"role": "user", "content": RULES}])
    body = check_gemini_request(server.raw[0])
    assert body["systemInstruction"] == {"parts": [{"text": "Rule one."}, {"text": "Rule two."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Rule one."}, {"text": "Rule two."}]}]


def test_an_agent_sends_images_as_anthropic_image_blocks() -> None:
    with WireServer([json_reply(claude_text("A pixel and a cat."))]) as server:
        result = Agent("v", claude(server)).run(PICTURE)
    assert result.final_output == "A pixel and a cat."
    body = check_anthropic_request(server.raw[0])
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "What is in these?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "https://images.example/cat.jpg"}},
    ]


def test_an_agent_sends_images_as_gemini_inline_and_file_data() -> None:
    with WireServer([json_reply(gemini_text("A pixel and a cat."))]) as server:
        result = Agent("v", gemini(server)).run(PICTURE)
    assert result.final_output == "A pixel and a cat."
    body = check_gemini_request(server.raw[0])
    assert body["contents"][0]["parts"] == [
        {"text": "What is in these?"},
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://images.example/cat.jpg"}},
    ]


def image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


REFUSED = [
    (
        "anthropic",
        image("data:application/pdf;base64,JVBERi0="),
        'Anthropic cannot take an image of type "application/pdf"',
    ),
    ("anthropic", image("data:image/heic;base64,AAAA"), 'an image of type "image/heic"'),
    ("anthropic", image("data:image/png,rawbytes"), "not base64"),
    (
        "anthropic",
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
        'cannot take a "input_audio" content part',
    ),
    ("anthropic", image("file:///etc/passwd"), "must be a data: URL or an http(s) URL"),
    (
        "gemini",
        image("https://images.example/photo"),
        'Gemini cannot take the image URL "https://images.example/photo" without its type',
    ),
    ("gemini", image("data:text/plain;base64,aGk="), 'Gemini cannot take an image of type "text/plain"'),
    ("gemini", image("data:image/gif;base64,R0lGODlh"), 'an image of type "image/gif"'),
    ("gemini", {"type": "file", "file": {"file_id": "file-1"}}, 'Gemini cannot take a "file" content part'),
    ("gemini", {"type": "image_url"}, "an image_url part needs image_url"),
]


@pytest.mark.parametrize(("provider", "part", "error"), REFUSED)
def test_a_part_the_wire_cannot_take_is_refused_before_sending(
    provider: str, part: dict[str, Any], error: str
) -> None:
    with WireServer([]) as server:
        client = claude(server) if provider == "anthropic" else gemini(server)
        with pytest.raises(ValueError, match="message 1") as caught:
            Agent("v", client).run([{"type": "text", "text": "Look:"}, part])
    assert error in str(caught.value)
    assert server.requests == []


def test_images_in_system_or_assistant_messages_are_refused() -> None:
    with WireServer([]) as server:
        for client in (claude(server), gemini(server)):
            with pytest.raises(ValueError, match="a system message takes text parts only"):
                client.chat([{"role": "system", "content": PICTURE}, {"role": "user", "content": "x"}])
            with pytest.raises(ValueError, match="an assistant message takes text parts only"):
                client.chat([{"role": "user", "content": "x"}, {"role": "assistant", "content": PICTURE}])
    assert server.requests == []


def test_a_tool_result_with_an_image_goes_to_anthropic_and_is_refused_by_gemini() -> None:
    call = {"id": "toolu_1", "type": "function", "function": {"name": "snap", "arguments": "{}"}}
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Snap it."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": PICTURE[:2]},
    ]
    with WireServer([json_reply(claude_text("A pixel."))]) as server:
        claude(server).chat(history)
        with pytest.raises(ValueError, match="a tool message sent to Gemini takes text parts only"):
            gemini(server).chat(history)
    assert len(server.requests) == 1
    body = check_anthropic_request(server.raw[0])
    assert body["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ],
        }
    ]
