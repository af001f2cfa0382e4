"""Approving a confirmation-gated served tool from real third-party MCP clients, in both eras
of the protocol: clients that negotiate up to 2025-11-25 are asked with `elicitation/create`;
clients that negotiate 2026-07-28 (which has no server-initiated requests, SEP-2322) get an
`input_required` result and call again with the answer. Each client runs over stdio (the
server in a subprocess) and over streamable HTTP (served on 127.0.0.1)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from fastmcp import Client as FastMCPClient
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp_servers import served_tools
from pydantic_ai.mcp import MCPToolset
from test_mcp_serve import serve_args, server_env
from test_mcp_serve_http import serving

from mcp import Client as SDKClient
from mcp import StdioServerParameters, types

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
NOT_APPROVED = "Error: tool '{}' was not approved; the call was not executed."


class Person:
    """The person at the client: answers every question the same way, and keeps them."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.asked: list[str] = []

    async def fastmcp(self, message: str, response_type: Any, params: Any, context: Any) -> Any:
        self.asked.append(message)
        return {"approve": self.approve}

    async def sdk(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": self.approve})


# What a client reports for a call: (is_error, text).
Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str]]]


@contextlib.asynccontextmanager
async def served(transport: str) -> AsyncIterator[Any]:
    """The gated tools served over `transport`: a URL for HTTP, the command for stdio."""
    if transport == "http":
        async with serving(served_tools.gated()) as url:
            yield url
    else:
        yield [sys.executable, *serve_args("mcp_servers.served_tools:gated")]


def fastmcp_transport(where: Any) -> Any:
    if isinstance(where, str):
        return StreamableHttpTransport(where)
    return StdioTransport(where[0], where[1:], env=server_env())


@contextlib.asynccontextmanager
async def fastmcp_client(where: Any, mode: str, person: Person) -> AsyncIterator[tuple[str, Call]]:
    async with FastMCPClient(fastmcp_transport(where), elicitation_handler=person.fastmcp, mode=mode) as c:

        async def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            result = await c.call_tool(name, args, raise_on_error=False)
            return result.is_error, result.content[0].text

        yield c.protocol_version, call


@contextlib.asynccontextmanager
async def pydantic_ai_toolset(where: Any, mode: str, person: Person) -> AsyncIterator[tuple[str, Call]]:
    if mode == "auto":  # the toolset's own client, as most users build it
        toolset = MCPToolset(
            fastmcp_transport(where), elicitation_handler=person.fastmcp, tool_error_behavior="error"
        )
    else:  # a legacy session needs a client built with mode="legacy"
        client = FastMCPClient(fastmcp_transport(where), elicitation_handler=person.fastmcp, mode=mode)
        toolset = MCPToolset(client, tool_error_behavior="error")
    async with toolset:

        async def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            try:
                return False, await toolset.direct_call_tool(name, args)
            except Exception as exc:  # noqa: BLE001 - the toolset raises a served isError as ToolError
                return True, str(exc)

        yield toolset.client.protocol_version, call


@contextlib.asynccontextmanager
async def sdk_client(where: Any, mode: str, person: Person) -> AsyncIterator[tuple[str, Call]]:
    server = (
        where
        if isinstance(where, str)
        else StdioServerParameters(command=where[0], args=where[1:], env=server_env())
    )
    async with SDKClient(server, mode=mode, elicitation_callback=person.sdk) as c:

        async def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            result = await c.call_tool(name, args)
            return result.is_error, result.content[0].text

        yield c.protocol_version, call


CLIENTS = {"fastmcp": fastmcp_client, "pydantic-ai": pydantic_ai_toolset, "mcp-sdk": sdk_client}


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", sorted(ERAS))
@pytest.mark.parametrize("client", sorted(CLIENTS))
async def test_a_real_client_approves_a_gated_call_in_either_era(client, mode, transport, tmp_path):
    person = Person(approve=True)
    target = tmp_path / "made"
    async with served(transport) as where, CLIENTS[client](where, mode, person) as (version, call):
        assert version == ERAS[mode]
        assert await call("touch", {"path": str(target)}) == (False, f"created {target}")
        assert await call("wipe", {"path": "/tmp/x"}) == (False, "wiped /tmp/x")
    assert target.exists()
    assert person.asked == [
        f'Allow the tool \'touch\' to run with {{"path": "{target}"}}?',
        'Allow the tool \'wipe\' to run with {"path": "/tmp/x"}?',
    ]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_refusal_in_either_era_runs_nothing(mode, transport, tmp_path):
    person = Person(approve=False)
    target = tmp_path / "never"
    async with served(transport) as where, fastmcp_client(where, mode, person) as (version, call):
        assert version == ERAS[mode]
        assert await call("wipe", {"path": "/tmp/x"}) == (True, NOT_APPROVED.format("wipe"))
        assert await call("touch", {"path": str(target)}) == (True, NOT_APPROVED.format("touch"))
    assert not target.exists()
    assert len(person.asked) == 2


async def test_a_stateless_http_server_asks_a_2026_client():
    """A stateless server keeps nothing between requests, and 2026-07-28 needs nothing kept:
    the question and the approval travel in the requests themselves."""
    person = Person(approve=True)
    async with (
        serving(served_tools.gated(), stateless=True) as url,
        fastmcp_client(url, "auto", person) as (version, call),
    ):
        assert version == "2026-07-28"
        assert await call("wipe", {"path": "/tmp/x"}) == (False, "wiped /tmp/x")
    assert len(person.asked) == 1


async def test_a_2026_client_without_elicitation_is_refused_as_before():
    async with (
        serving(served_tools.gated()) as url,
        SDKClient(url, mode="auto") as c,
    ):
        assert c.protocol_version == "2026-07-28"
        refused = await c.call_tool("wipe", {"path": "/tmp/x"})
    assert refused.is_error
    assert refused.content[0].text == (
        "Error: tool 'wipe' is a high-risk operation and needs confirmation, but this MCP client "
        "does not support elicitation, so no one can be asked; the call was refused."
    )
