"""``MCPTool.run``/``arun`` validate the arguments against the tool's input schema before anything
is sent, like ``registry.execute_tool``: a real SDK server shows it is never called with invalid
arguments (``slow_write`` would write its file: the SDK's pydantic would even coerce ``"0"`` to
a float and run it). A value argument repair can read (``"0"`` for a number) is repaired on the
registry's path, as for any tool (docs/guide.md, "Repairing arguments"), and refused by the
tool's own ``run``/``arun``, which take arguments as given."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentmaker import ToolRegistry
from mcp_support import by_remote, sdk_client

BAD = [
    ({"seconds": "zero"}, 'parameter \'seconds\': "zero" is not of type "number"'),
    ({"seconds": None, "started": 5}, "parameter 'seconds'"),
    ({"path": None}, "parameter 'path': null is not of type \"string\""),
    ({"drop": True}, "parameter 'path': is required but missing"),
]


def call_args(marker: Path, change: dict) -> dict:
    args = {"path": str(marker), "seconds": 0, "started": str(marker) + ".started"}
    args.update(change)
    if "drop" in change:
        del args["drop"], args["path"]
    return args


async def test_direct_calls_never_send_invalid_arguments(tmp_path):
    async with sdk_client() as client:
        tool = by_remote(await client.load_tools())["slow_write"]
        reg = ToolRegistry()
        reg.register(tool)
        for i, (change, why) in enumerate(BAD):
            marker = tmp_path / f"m{i}"
            args = call_args(marker, change)
            sync = await asyncio.to_thread(tool.run, dict(args))
            direct = await tool.arun(dict(args))
            registry = await reg.aexecute_tool("calc_slow_write", dict(args))
            for resp in (sync, direct, registry):
                assert resp.status == "error", resp.text
                assert resp.text.startswith("Error: tool 'calc_slow_write' failed parameter validation"), (
                    resp.text
                )
                assert why in resp.text, resp.text
            # Every path says the same, and the server never ran the tool.
            assert sync.text == direct.text == registry.text
            assert not marker.exists() and not Path(str(marker) + ".started").exists()
        # "0" is refused by the tool itself and repaired to 0 by the registry, which then runs it.
        strict = tmp_path / "strict"
        assert (await tool.arun(call_args(strict, {"seconds": "0"}))).status == "error"
        assert not strict.exists()
        repaired = await reg.aexecute_tool("calc_slow_write", call_args(strict, {"seconds": "0"}))
        assert repaired.text == "finished" and strict.read_text() == "finished"
        # Valid arguments still go through, on both paths.
        ok = tmp_path / "ok"
        assert (await tool.arun(call_args(ok, {}))).text == "finished"
        assert ok.read_text() == "finished"
        again = tmp_path / "again"
        assert (await asyncio.to_thread(tool.run, call_args(again, {}))).text == "finished"
        assert again.exists()


@pytest.mark.parametrize("args", [None, {}])
async def test_no_arguments_are_checked_too(args):
    async with sdk_client() as client:
        tools = by_remote(await client.load_tools())
        resp = await tools["add"].arun(args)
        assert resp.status == "error" and "parameter 'a': is required but missing" in resp.text
        # A tool without parameters takes None or {} as before.
        assert (await tools["pid"].arun(args)).status == "success"
