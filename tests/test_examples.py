"""Every script in examples/ runs as a real subprocess, and says what it should."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.py"))

# Lines each example must print (in this order). An example not listed must still exit cleanly.
EXPECTED: dict[str, list[str]] = {
    "01_quickstart.py": [
        "tool get_weather({'city': 'Paris', 'days': 2}) -> Paris: sunny, 24°C for the next 2 day(s)",
        "It will be sunny in Paris, around 24°C.",
    ],
    "02_tools_and_registry.py": [
        "calculator said: 35",
        "The result is 35.",
    ],
    "typed_tools.py": [
        '{"city":"Oslo","days":3,"unit":"fahrenheit","high":75}',
        "Kyoto: 2025-04-01 to 2025-04-04, slow pace, tags ['food', 'temples']",
        "strict: {'forecast': True, 'plan': False, 'tally': False}",
    ],
    "conversation_and_approval.py": [
        "turn 2 answer: It cost 49.90 EUR. (2 new messages)",
        "paused: refund({'order': 'A17', 'amount': 49.9}) digest 71b2fb798a47...",
        "resumed: refunded 49.9 EUR on order A17; The refund is done.",
        "event: lookup_order -> order B2: delivered, 49.90 EUR",
        "event: text 'Order B2 was delivered.'",
        "event: run completed",
    ],
    "coding_agent.py": [
        "write_todos: success: Task list updated: 0 of 2 completed, 1 in progress, 1 pending.",
        "grep: success: shop/cart.py:1:def total(prices):",
        "read_file: success:      1\tdef total(prices):",
        "read_file: error: Error: .env may hold secrets (it matches the workspace's deny list: .env); refused",
        (
            "edit_file: error: Error: old_string occurs 2 times in shop/cart.py (at lines 2, 6); add surrounding "
            "lines to make it unique, or pass replace_all=true"
        ),
        "edit_file: success: Edited shop/cart.py: 1 replacement(s).",
        "write_todos: success: Task list updated: 2 of 2 completed, 0 in progress, 0 pending.",
        "todos: ['completed', 'completed']",
        "coder: Fixed total_with_tax: it now multiplies by (1 + rate).",
        "lead: The coder fixed total_with_tax. (9 model calls in all)",
        "    return sum(prices) * (1 + rate)",
    ],
    "tool_rag.py": [
        "retrieved: ['tool_search', 'create_event']",
        "turn 3 offered: tool_search, create_event, send_email",
        "tool_search discovered: ['send_email']",
        "Meeting booked for Friday and Ana has the invitation.",
    ],
    "mcp_server.py": [
        "serving on 127.0.0.1",
        "tools: delete_note, multiply",
        "multiply -> 42",
        "delete_note refused: True",
    ],
    "mcp_client.py": [
        "loaded calc_multiply (origin mcp:calc, confirmation True)",
        "calc_multiply -> 42.0",
        "invalid arguments are caught locally: error",
        "after the block: error",
    ],
}


def run_example(path):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, str(path)],
        cwd=path.parent,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env=env,
        check=False,
    )


def test_the_documented_examples_exist():
    names = {p.name for p in EXAMPLES}
    assert set(EXPECTED) <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path):
    proc = run_example(path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    expected = EXPECTED.get(path.name, [])
    positions = []
    for want in expected:
        assert want in lines, f"{path.name} did not print {want!r}; it printed:\n{proc.stdout}"
        positions.append(lines.index(want))
    assert positions == sorted(positions), f"{path.name} printed the expected lines out of order"


def test_registry_example_prints_the_catalog():
    proc = run_example(REPO / "examples" / "02_tools_and_registry.py")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("- calculator: ")
    assert "- to_upper: Uppercase a piece of text." in proc.stdout
    assert proc.stdout.rstrip().endswith("The result is 35.")
