"""MCP client figures (issue 21), each printed with its target and verdict.

Against a tiny rmcp stdio echo server (examples/bench_mcp_server.rs), which isolates the client:

1. One call, ``await registry.aexecute_tool(...)`` in a loop: within 1.2x of rmcp's own Rust
   client doing the same calls (examples/bench_mcp_rmcp_client.rs), and below the official
   Python SDK's client (``mcp.ClientSession`` over ``stdio_client``) on the same server.
2. A burst of 200 concurrent calls (``asyncio.gather``): its ratio to one call, and not slower
   than the SDK client's 200-call burst on the same server.

Against the official Python SDK server (tests/mcp_servers/sdk_server.py with 50 extra tools),
where the server dominates: not slower than the SDK client calling it.

First it prints the size of src/mcp (at most 3,000 lines before the unit tests).

Each client has a server process of its own, all connected at once, and the figures are taken
in interleaved rounds (each figure the best of its rounds): on this shared 2-core VM the cost of
a cross-CPU wake-up drifts by up to 25x, sometimes from one round to the next, and a round trip
follows it; interleaving makes the drift hit every client alike. The sync ``execute_tool`` line
has no target.

The rmcp server and client are built through cargo on each run (a no-op when fresh):
``cargo build --release --no-default-features --features bench-server --example
bench_mcp_server --example bench_mcp_rmcp_client``.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

from agentmaker import MCPClient, ToolRegistry
from harness import awaited_per_call_us, fmt, report

GROUP = "mcp"
ROOT = Path(__file__).resolve().parent.parent
SDK_SERVER = ROOT / "tests" / "mcp_servers" / "sdk_server.py"
RUST_SERVER = ROOT / "target" / "release" / "examples" / "bench_mcp_server"
RMCP_CLIENT = ROOT / "target" / "release" / "examples" / "bench_mcp_rmcp_client"
ROUNDS = 8
BURST = 200


def build_rust_side() -> bool:
    """Builds the rmcp bench server and client through cargo every time (a no-op when they
    are fresh): a binary left from older sources would measure another server."""
    print("  building the rmcp bench server and client (release, feature bench-server)...", flush=True)
    done = subprocess.run(
        ["cargo", "build", "--release", "--no-default-features", "--features", "bench-server"]
        + ["--example", "bench_mcp_server", "--example", "bench_mcp_rmcp_client"],
        cwd=ROOT,
        check=False,
    )
    return done.returncode == 0


class RmcpClient:
    """rmcp's own client, in Rust with no Python, on a server of its own: a process that times
    each batch it is sent (see examples/bench_mcp_rmcp_client.rs), so that its batches
    interleave with the Python clients' like theirs do with each other."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [str(RMCP_CLIENT), str(RUST_SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def ask(self, command: str) -> float:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def one_us(self, n: int, repeat: int = 3) -> float:
        """Best mean per call of `repeat` batches of n sequential calls."""
        return min(self.ask(f"calls {n}") for _ in range(repeat))

    def burst_us(self, n: int = BURST, repeat: int = 3) -> float:
        return min(self.ask(f"burst {n}") for _ in range(repeat))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


async def burst_us(call, n: int = BURST, repeat: int = 3) -> float:
    """Best time of ``asyncio.gather`` over n calls started at once."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        await asyncio.gather(*(call() for _ in range(n)))
        best = min(best, (time.perf_counter_ns() - start) / 1000)
    return best


async def sdk_session(stack: contextlib.AsyncExitStack, command: str, args: list[str]):
    """The official SDK's client connected to a server of its own, or None without the SDK."""
    try:
        from mcp.client.stdio import stdio_client

        from mcp import ClientSession, StdioServerParameters
    except ImportError:
        return None
    read, write = await stack.enter_async_context(
        stdio_client(StdioServerParameters(command=command, args=args))
    )
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def registry_for(client: MCPClient) -> ToolRegistry:
    reg = ToolRegistry()
    for t in await client.load_tools():
        reg.register(t)
    return reg


def spread(values: list[float]) -> str:
    values = sorted(values)
    return f"{values[0]:.2f}-{values[-1]:.2f}x"


async def python_server_scenario() -> None:
    """Ours and the SDK client, each on its own SDK server process, in alternating rounds."""
    args = [str(SDK_SERVER), "--tools", "50"]
    async with contextlib.AsyncExitStack() as stack:
        session = await sdk_session(stack, sys.executable, args)
        if session is None:
            print("  (the mcp package is not installed; Python-server scenario skipped)")
            return
        client = await stack.enter_async_context(MCPClient(command=sys.executable, args=args, namespace="py"))
        reg = await registry_for(client)

        def ours():
            return reg.aexecute_tool("py_tool_000", {"x": 1})

        def theirs():
            return session.call_tool("tool_000", {"x": 1})

        assert (await ours()).text == "1"
        samples: dict = {ours: [], theirs: []}
        for _ in range(ROUNDS):
            for call in (ours, theirs):
                samples[call].append(await awaited_per_call_us(call, 100, repeat=1))
    ratios = [a / b for a, b in zip(samples[ours], samples[theirs])]
    report(
        GROUP,
        f"one call, Python SDK server ({len(reg.list_tools())} tools), vs the SDK client",
        min(samples[ours]),
        floor_us=min(samples[theirs]),
        target_ratio=1.0,
        note=f"floor = the SDK client on the same server; rounds {spread(ratios)}",
    )


async def rust_server_scenario() -> None:
    """Ours, the SDK client and rmcp's own client, each on its own rmcp server process, one
    call and a 200-call burst each, their batches interleaved; plus our server's CPU per burst."""
    params = {"a": 2, "b": 3}
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(MCPClient(command=str(RUST_SERVER), namespace="rs"))
        reg = await registry_for(client)
        session = await sdk_session(stack, str(RUST_SERVER), [])

        def ours():
            return reg.aexecute_tool("rs_tool_000", params)

        def theirs():
            return session.call_tool("tool_000", params)

        assert (await ours()).text == "5"
        clients = [ours] if session is None else [ours, theirs]
        for call in clients:
            await awaited_per_call_us(call, 200, repeat=1)
        rmcp = RmcpClient()
        stack.callback(rmcp.close)
        one: dict = {call: [] for call in [*clients, rmcp]}
        burst: dict = {call: [] for call in [*clients, rmcp]}
        server_cpu, sync_one = [], []
        for _ in range(ROUNDS):
            for call in clients:
                one[call].append(await awaited_per_call_us(call, 300 if call is ours else 100, repeat=3))
            # The Rust client runs while this loop waits for its answer: nothing else runs here.
            one[rmcp].append(rmcp.one_us(300))
            sync_one.append(await asyncio.to_thread(sync_per_call, reg, params, 300))
            for call in clients:
                before = cpu_ns(client.server_pid) if call is ours else 0
                burst[call].append(await burst_us(call))
                if call is ours:
                    server_cpu.append((cpu_ns(client.server_pid) - before) / 3 / 1000)
            burst[rmcp].append(rmcp.burst_us())

    rounds = f"rounds {fmt(min(one[ours]))}-{fmt(max(one[ours]))}"
    report(
        GROUP,
        "one call, rmcp server, vs rmcp's own Rust client",
        min(one[ours]),
        floor_us=min(one[rmcp]),
        target_ratio=1.2,
        note=f"{rounds}; per-round ratios {spread([a / b for a, b in zip(one[ours], one[rmcp])])}",
    )
    if session is not None:
        report(
            GROUP,
            "one call, rmcp server, vs the Python SDK client",
            min(one[ours]),
            floor_us=min(one[theirs]),
            target_ratio=1.0,
            note=f"per-round ratios {spread([a / b for a, b in zip(one[ours], one[theirs])])}",
        )
    report(
        GROUP,
        "one call, rmcp server, sync execute_tool",
        min(sync_one),
        floor_us=min(one[rmcp]),
        note="no target; from a worker thread while the loop waits",
    )
    # "One call" is the sequential round trip (an average over 300 calls): steadier than timing
    # a lone gather, and a little faster, so the ratio is not flattered.
    to_one = [b / o for b, o in zip(burst[ours], one[ours])]
    scale = (
        f"{statistics.median(to_one):.0f}x one call (median of {ROUNDS} rounds, range "
        f"{min(to_one):.0f}-{max(to_one):.0f}x); for scale: rmcp's own client {fmt(min(burst[rmcp]))}, "
        f"our server's CPU {fmt(min(server_cpu))} per burst"
    )
    if session is None:
        report(GROUP, f"{BURST} concurrent calls, rmcp server", min(burst[ours]), note=scale)
        print("  (the mcp package is not installed; SDK-client lines skipped)")
        return
    report(
        GROUP,
        f"{BURST} concurrent calls, rmcp server, vs the SDK client's burst",
        min(burst[ours]),
        floor_us=min(burst[theirs]),
        target_ratio=1.0,
        note=scale,
    )


def cpu_ns(pid: int) -> int:
    """CPU time a process has used so far, every thread summed (schedstat: nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        total += int((task / "schedstat").read_text().split()[0])
    return total


def sync_per_call(reg: ToolRegistry, params: dict, n: int, repeat: int = 3) -> float:
    """Best mean per call of `repeat` batches of n sequential ``execute_tool`` calls."""
    for _ in range(20):
        reg.execute_tool("rs_tool_000", params)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(n):
            reg.execute_tool("rs_tool_000", params)
        best = min(best, (time.perf_counter_ns() - start) / n / 1000)
    return best


def source_size() -> None:
    """The size of src/mcp, counted as issue 21 counts it: each file's lines before its unit
    tests (its ``#[cfg(test)]`` module), and of those the lines that hold code (not blank,
    not only a comment)."""
    lines = code = 0
    largest = (0, "")
    for path in sorted((ROOT / "src" / "mcp").glob("*.rs")):
        text = path.read_text().splitlines()
        text = text[: next((i for i, line in enumerate(text) if line.startswith("#[cfg(test)]")), len(text))]
        lines += len(text)
        code += sum(1 for line in text if line.strip() and not line.strip().startswith("//"))
        largest = max(largest, (len(text), path.name))
    verdict = "ok" if lines <= 3000 else "OVER"
    print(
        f"{GROUP:<10} {'src/mcp, lines before the unit tests':<58} {lines:>11,}  target <= 3,000 [{verdict}]"
        f"  {code:,} of them code; largest file {largest[1]} ({largest[0]})",
        flush=True,
    )


def main() -> None:
    source_size()
    asyncio.run(python_server_scenario())
    if not build_rust_side():
        print("  (the rmcp bench server could not be built; rmcp-server scenarios skipped)")
        return
    asyncio.run(rust_server_scenario())


if __name__ == "__main__":
    main()
