"""OpenTelemetry spans for runs, model calls and tool calls (GenAI conventions), and nothing
at all when the application does not trace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "otel_script.py"


def spans(mode: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), mode], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[-1] == "api only"
    return [json.loads(line) for line in out[:-1]]


def test_a_traced_run_makes_genai_spans():
    made = spans("traced")
    assert [(s["name"], s["parent"], s["kind"], s["status"]) for s in made] == [
        ("chat m-1", "invoke_agent calc", "CLIENT", None),
        ("execute_tool add", "invoke_agent calc", "INTERNAL", None),
        ("execute_tool missing", "invoke_agent calc", "INTERNAL", "ERROR"),
        ("chat m-1", "invoke_agent calc", "CLIENT", None),
        ("invoke_agent calc", None, "INTERNAL", None),
    ]
    chat = made[3]["attributes"]
    assert chat == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m-1",
        "gen_ai.provider.name": "acme",
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.finish_reasons": ["stop"],
    }
    assert made[1]["attributes"] == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_1",
        "agentmaker.tool.status": "success",
    }
    assert made[2]["attributes"]["agentmaker.tool.status"] == "unknown_tool"
    run = made[4]["attributes"]
    assert run == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "calc",
        "gen_ai.usage.input_tokens": 14,
        "gen_ai.usage.output_tokens": 6,
        "agentmaker.run.status": "completed",
    }


def test_without_a_tracer_provider_no_span_is_made():
    # The first run of the script happens before any provider is set: it leaves no span.
    made = spans("failing")
    assert [(s["name"], s["status"]) for s in made] == [
        ("chat test", "ERROR"),
        ("invoke_agent calc", "ERROR"),
    ]
    assert made[1]["attributes"]["agentmaker.run.status"] == "failed"


def test_a_run_never_imports_opentelemetry():
    code = (
        "import sys\n"
        "from agentmaker import Agent\n"
        "from agentmaker.testing import ScriptedLLM\n"
        "Agent('a', ScriptedLLM(['hi'])).run('x')\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_tools_own_model_call_is_a_span_under_the_tool_call():
    made = spans("tool_search")
    assert [(s["name"], s["parent"], s["kind"], s["status"]) for s in made] == [
        ("chat m-1", "invoke_agent calc", "CLIENT", None),
        ("chat small", "execute_tool tool_search", "CLIENT", None),
        ("execute_tool tool_search", "invoke_agent calc", "INTERNAL", None),
        ("chat small", "execute_tool tool_search", "CLIENT", "ERROR"),
        ("execute_tool tool_search", "invoke_agent calc", "INTERNAL", None),
        ("chat m-1", "invoke_agent calc", "CLIENT", None),
        ("invoke_agent calc", None, "INTERNAL", None),
    ]
    assert made[1]["attributes"] == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "small",
        "gen_ai.provider.name": "test",
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 3,
    }
