"""Tools and helpers the registry's hostile-input tests share."""

from __future__ import annotations

import threading

from agentmaker import Tool, ToolParameter, ToolRegistry, ToolResponse

ECHO_PARAMETERS = (
    ToolParameter("text", "string", "Text to echo."),
    ToolParameter("times", "integer", "Repetitions.", required=False, default=1),
)


class Echo(Tool):
    """Answers with ``text``; ``data`` is the very parameters object it received."""

    def __init__(self, name="echo", description="Echo text back."):
        super().__init__(name, description)

    def get_parameters(self):
        return list(ECHO_PARAMETERS)

    def run(self, parameters):
        return ToolResponse.ok(parameters["text"], data=parameters)


class Seen(Tool):
    """Records the parameters object it was called with."""

    def __init__(self, name="seen", params=None):
        super().__init__(name, "Records its arguments.")
        self.params = params or [
            ToolParameter("n", "integer", "", required=False),
            ToolParameter("x", "number", "", required=False),
            ToolParameter("s", "string", "", required=False),
            ToolParameter(
                "mode", "string", "", required=False, schema={"type": "string", "enum": ["read", "append"]}
            ),
            ToolParameter(
                "items", "array", "", required=False, schema={"type": "array", "items": {"type": "integer"}}
            ),
        ]
        self.calls = []

    def get_parameters(self):
        return self.params

    def run(self, parameters):
        self.calls.append(parameters)
        return "ok"


def make(*tools):
    reg = ToolRegistry()
    for t in tools:
        reg.register(t)
    return reg


def run_threads(targets):
    """Starts every target on a daemon thread and joins them; a thread still alive after the
    join is a deadlock (the bound only detects a hang, it measures no speed)."""
    errors = []

    def guard(fn):
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=guard, args=(fn,), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [t.is_alive() for t in threads] == [False] * len(threads), "deadlock: threads still running"
    assert errors == []
