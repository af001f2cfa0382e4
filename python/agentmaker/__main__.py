"""Command line: ``python -m agentmaker serve package.module:attr [options]``.

``attr`` names a ToolRegistry, a list of tools, or a module-level function returning either.
Over HTTP the server prints ``serving MCP on <url>`` to stderr once it listens. A bearer
token for ``--allow-remote`` is read from the environment variable ``AGENTMAKER_MCP_TOKEN``
(never from the command line, where other users of the machine could read it).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from typing import Any

from agentmaker._native import ToolRegistry
from agentmaker.mcp.serve import serve_mcp


def load_target(target: str) -> Any:
    """The registry or tool list ``package.module:attr`` names."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise SystemExit(f"error: expected package.module:attr, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"error: cannot import {module_name!r}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SystemExit(f"error: {module_name!r} has no attribute {attr!r}") from None
    if inspect.isfunction(obj):
        obj = obj()
    if not isinstance(obj, (ToolRegistry, list, tuple)):
        raise SystemExit(
            f"error: {target} is a {type(obj).__name__}; expected a ToolRegistry, a list of tools, "
            "or a function returning one"
        )
    return obj


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agentmaker")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve tools as an MCP server")
    serve.add_argument("target", help="package.module:attr (a ToolRegistry, a list of tools, or a function)")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--path", default="/mcp")
    serve.add_argument("--stateless", action="store_true", help="keep no session (for load balancers)")
    serve.add_argument("--name", default="agentmaker", help="the server name clients see")
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --host (needs a token)"
    )
    serve.add_argument("--allowed-host", action="append", dest="allowed_hosts", help="accepted Host header")
    serve.add_argument("--max-concurrent-calls", type=int, default=64)
    args = parser.parse_args(argv)

    sys.path.insert(0, os.getcwd())
    tools = load_target(args.target)

    options: dict[str, Any] = {"name": args.name, "max_concurrent_calls": args.max_concurrent_calls}
    if args.transport == "http":
        options.update(
            host=args.host,
            port=args.port,
            path=args.path,
            stateless=args.stateless,
            allow_remote=args.allow_remote,
            token=os.environ.get("AGENTMAKER_MCP_TOKEN") or None,
            allowed_hosts=args.allowed_hosts,
            on_ready=lambda url: print(f"serving MCP on {url}", file=sys.stderr, flush=True),
        )
    try:
        serve_mcp(tools, args.transport, **options)
    except (ValueError, TypeError, OSError) as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    main()
