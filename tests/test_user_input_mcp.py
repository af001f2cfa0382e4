"""A served ``ask_user`` (UserInputTool) asks the person at the MCP client, in both protocol
eras, through the official SDK client's elicitation callback: an ``elicitation/create`` request
for a 2025-11-25 session, an ``input_required`` round for a 2026-07-28 one."""

from __future__ import annotations

from typing import Any

import pytest
from agentmaker import ToolRegistry, UserInputTool
from test_mcp_serve_http import serving

from mcp import Client as SDKClient
from mcp import types

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def registry(tool: UserInputTool) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(tool)
    return reg


def person(action: str, content: dict[str, Any] | None, asked: list[Any]) -> Any:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append((params.message, params.requested_schema["properties"]["answer"]))
        return types.ElicitResult(action=action, content=content)

    return elicit


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("tool_mode", ["callback", "pause"])
async def test_the_question_goes_to_the_client_person(mode: str, tool_mode: str) -> None:
    tool = (
        UserInputTool(mode="pause")
        if tool_mode == "pause"
        else UserInputTool(lambda q, c: "never asked here")
    )
    asked: list[Any] = []
    async with serving(registry(tool)) as url:
        async with SDKClient(
            url, mode=mode, elicitation_callback=person("accept", {"answer": "blue"}, asked)
        ) as c:
            assert c.protocol_version == ERAS[mode]
            out = await c.call_tool("ask_user", {"question": "Which colour?", "choices": ["red", "blue"]})
            assert (out.is_error, out.content[0].text) == (False, "The person answered: blue")
        assert asked == [("Which colour?", {"type": "string", "title": "Answer", "enum": ["red", "blue"]})]
        asked.clear()
        async with SDKClient(url, mode=mode, elicitation_callback=person("decline", None, asked)) as c:
            out = await c.call_tool("ask_user", {"question": "Name?"})
            assert out.content[0].text == "(the question was not answered: the person declined to answer)"
        assert asked == [("Name?", {"type": "string", "title": "Answer"})]


async def test_a_client_that_cannot_be_asked_gets_the_callback_or_a_refusal() -> None:
    for tool, error, text in (
        (UserInputTool(lambda q, c: "from the server"), False, "The person answered: from the server"),
        (UserInputTool(mode="pause"), True, "does not support elicitation"),
    ):
        async with serving(registry(tool)) as url, SDKClient(url, mode="legacy") as c:
            out = await c.call_tool("ask_user", {"question": "Which colour?"})
            assert out.is_error is error
            assert text in out.content[0].text
