"""OpenTelemetry spans for runs, model calls and tool calls, when the application traces.

Nothing here imports OpenTelemetry: a run looks for ``opentelemetry.trace`` among the modules
already imported, and uses it only when the application has set a tracer provider (the API's
default proxy and no-op providers mean nobody collects spans). Then the run's events become
spans named and attributed by the OpenTelemetry GenAI semantic conventions:

- ``invoke_agent {agent}``: the whole run (``gen_ai.operation.name`` ``invoke_agent``,
  ``gen_ai.agent.name``, token usage at the end), an error when the run failed;
- ``chat {model}``: each model call, a child of the run (``gen_ai.request.model``,
  ``gen_ai.provider.name``, ``gen_ai.usage.input_tokens`` / ``output_tokens``,
  ``gen_ai.response.finish_reasons``); a tool's own model call (``LLMStart.call_id``) is a
  child of that tool call's span instead, named and attributed by the tool's model, and an
  error when it failed;
- ``execute_tool {tool}``: each tool call, a child of the run (``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``agentmaker.tool.status``), an error when the call did not succeed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from agentmaker.agent.events import LLMEnd, LLMStart, RunEnd, RunEvent, RunStart, ToolEnd, ToolStart

__all__ = ["otel_observer"]

_OK_TOOL = frozenset(("success", "partial", "pending"))


def otel_observer(llm: Any) -> Callable[[RunEvent], None] | None:
    """An observer turning one run's events into spans, or None when nobody traces."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return _Spans(trace, provider.get_tracer("agentmaker"), llm).observe


class _Spans:
    __slots__ = ("llm", "llm_span", "run_context", "run_span", "tool_llm", "tools", "trace", "tracer")

    def __init__(self, trace: Any, tracer: Any, llm: Any) -> None:
        self.trace = trace
        self.tracer = tracer
        self.llm = llm
        self.run_span: Any = None
        self.run_context: Any = None
        self.llm_span: Any = None
        self.tools: dict[str, Any] = {}
        self.tool_llm: dict[str, Any] = {}  # a tool's own model call, by the tool call's id

    def _child(self, name: str, kind: Any, attributes: dict[str, Any], parent: Any = None) -> Any:
        context = self.run_context if parent is None else self.trace.set_span_in_context(parent)
        return self.tracer.start_span(name, context=context, kind=kind, attributes=attributes)

    def _error(self, span: Any, description: str) -> None:
        trace = self.trace
        span.set_status(trace.Status(trace.StatusCode.ERROR, description))

    def observe(self, event: RunEvent) -> None:
        trace = self.trace
        if isinstance(event, ToolStart):
            self.tools[event.call_id] = self._child(
                f"execute_tool {event.tool_name}",
                trace.SpanKind.INTERNAL,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": event.tool_name,
                    "gen_ai.tool.call.id": event.call_id,
                },
            )
        elif isinstance(event, ToolEnd):
            span = self.tools.pop(event.call_id, None)
            if span is not None:
                span.set_attribute("agentmaker.tool.status", event.status)
                if event.status not in _OK_TOOL:
                    self._error(span, event.status)
                span.end()
        elif isinstance(event, LLMStart):
            llm = self.llm if event.llm is None else event.llm
            model = str(getattr(llm, "model", "") or "")
            attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
            provider = getattr(llm, "provider", None)
            if isinstance(provider, str) and provider:
                attributes["gen_ai.provider.name"] = provider
            name = f"chat {model}".rstrip()
            if event.call_id is None:
                self.llm_span = self._child(name, trace.SpanKind.CLIENT, attributes)
            else:
                parent = self.tools.get(event.call_id)
                self.tool_llm[event.call_id] = self._child(name, trace.SpanKind.CLIENT, attributes, parent)
        elif isinstance(event, LLMEnd):
            if event.call_id is None:
                span, self.llm_span = self.llm_span, None
            else:
                span = self.tool_llm.pop(event.call_id, None)
            self._end_llm(span, event)
        elif isinstance(event, RunStart):
            self.run_span = self.tracer.start_span(
                f"invoke_agent {event.agent}",
                kind=trace.SpanKind.INTERNAL,
                attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": event.agent},
            )
            self.run_context = trace.set_span_in_context(self.run_span)
        elif isinstance(event, RunEnd):
            self._end_run(event)

    def _end_llm(self, span: Any, event: LLMEnd) -> None:
        if span is None:
            return
        if event.error is not None:
            self._error(span, type(event.error).__name__)
        response = event.response
        usage = getattr(response, "usage", None)
        if isinstance(usage, dict):
            for key, attr in (("prompt_tokens", "input"), ("completion_tokens", "output")):
                if isinstance(usage.get(key), int):
                    span.set_attribute(f"gen_ai.usage.{attr}_tokens", usage[key])
        reason = getattr(response, "finish_reason", None)
        if isinstance(reason, str):
            span.set_attribute("gen_ai.response.finish_reasons", [reason])
        model = getattr(response, "model", None)
        if isinstance(model, str) and model:
            span.set_attribute("gen_ai.response.model", model)
        span.end()

    def _end_run(self, event: RunEnd) -> None:
        result = event.result
        failed = result.status == "failed"
        for span in [self.llm_span, *self.tool_llm.values(), *self.tools.values()]:  # left open by a failure
            if span is not None:
                self._error(span, "the run failed")
                span.end()
        self.llm_span = None
        self.tool_llm.clear()
        self.tools.clear()
        span = self.run_span
        if span is None:
            return
        span.set_attribute("gen_ai.usage.input_tokens", result.usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", result.usage.completion_tokens)
        span.set_attribute("agentmaker.run.status", result.status)
        if failed:
            self._error(span, "the run failed")
        span.end()
