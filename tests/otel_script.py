"""Run by tests/test_otel.py in a subprocess: an agent run under a recording tracer provider
(built on the opentelemetry API alone), printing the spans it made as JSON lines."""

from __future__ import annotations

import json
import random
import sys

from agentmaker import Agent, tool
from agentmaker.llm import LLMResponse
from agentmaker.testing import ScriptedLLM
from opentelemetry import trace

FINISHED: list[dict] = []


class RecordingSpan(trace.NonRecordingSpan):
    def __init__(self, name, parent, kind, attributes):
        super().__init__(trace.SpanContext(random.getrandbits(128), random.getrandbits(64), False))
        self.name = name
        self.parent = parent
        self.kind = kind
        self.attributes = dict(attributes or {})
        self.status = None

    def is_recording(self):
        return True

    def set_attribute(self, key, value):
        self.attributes[key] = value

    def set_status(self, status, description=None):
        self.status = status.status_code.name

    def end(self, end_time=None):
        parent = self.parent.name if isinstance(self.parent, RecordingSpan) else None
        FINISHED.append(
            {
                "name": self.name,
                "parent": parent,
                "kind": self.kind.name,
                "status": self.status,
                "attributes": self.attributes,
            }
        )


class RecordingTracer(trace.Tracer):
    def start_span(self, name, context=None, kind=trace.SpanKind.INTERNAL, attributes=None, **_):
        parent = trace.get_current_span(context) if context is not None else None
        return RecordingSpan(name, parent, kind, attributes)

    def start_as_current_span(self, *args, **kwargs):  # the agent never uses it
        raise NotImplementedError


class RecordingProvider(trace.TracerProvider):
    def get_tracer(self, *args, **kwargs):
        return RecordingTracer()


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First.
        b: Second.
    """
    return a + b


if sys.argv[1] == "traced":
    trace.set_tracer_provider(RecordingProvider())
usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
call = ScriptedLLM.tool_calls(("add", {"a": 1, "b": 2}), ("missing", {}))
call.usage = usage
llm = ScriptedLLM(
    [call, LLMResponse(content="3", usage=usage, finish_reason="stop")], model="m-1", provider="acme"
)
Agent("calc", llm, tools=[add]).run("add")
if sys.argv[1] == "failing":
    trace.set_tracer_provider(RecordingProvider())
    try:
        Agent("calc", ScriptedLLM([RuntimeError("down")]), tools=[add]).run("add")
    except RuntimeError:
        pass
if sys.argv[1] == "tool_search":
    # A model-strategy tool_search: its own model call is a span under the tool call's span.
    from agentmaker import ToolRegistry, ToolRetriever, ToolSearchTool

    trace.set_tracer_provider(RecordingProvider())
    reg = ToolRegistry()
    reg.register(add, deferred=True)
    chooser = ScriptedLLM([LLMResponse(content='["add"]', usage=usage), RuntimeError("down")], model="small")
    reg.register(ToolSearchTool(ToolRetriever(reg), strategy="model", llm=chooser))
    search = ScriptedLLM.tool_calls(
        ("tool_search", {"query": "sum"}, "s1"), ("tool_search", {"query": "x"}, "s2")
    )
    Agent("calc", ScriptedLLM([search, "done"], model="m-1"), tool_registry=reg).run("add")
for span in FINISHED:
    print(json.dumps(span, sort_keys=True))
print("imported" if "opentelemetry.sdk" in sys.modules else "api only")
