"""Typed final answers: ``Agent(output_type=T)``.

``T`` is anything a ``@tool`` parameter may be (a dataclass, a TypedDict, a pydantic model, a
``Literal``, a JSON scalar type, lists and unions of them...). The answer is described the way a
tool parameter named ``answer`` of type ``T`` is: the JSON Schema our renderer gives for it goes
into the system prompt, with the request to give the final answer as ``{"answer": ...}`` and
nothing else. The reply (a JSON object, possibly in a fenced block; a bare value is taken as the
answer itself) is validated with the same validator tool arguments go through and converted to
``T`` the same way, so a dataclass comes back as the dataclass. An answer that fails is sent
back to the model with the reason, and counts against ``RunPolicy.max_retries``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentmaker.errors import ToolRegistrationError
from agentmaker.tools.decorator import tool
from agentmaker.tools.registry import ToolRegistry

__all__ = ["OutputSpec"]

_NAME = "final_answer"
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


class OutputSpec:
    """The schema, instructions and parser for one output type."""

    __slots__ = ("instructions", "output_type", "registry", "schema", "tool")

    def __init__(self, output_type: Any) -> None:
        def final_answer(answer: Any) -> Any:
            """The final answer.

            Args:
                answer: The answer.
            """
            return answer

        final_answer.__annotations__ = {"answer": output_type, "return": Any}
        try:
            self.tool = tool(final_answer)
        except ToolRegistrationError:
            raise TypeError(
                f"output_type {output_type!r} cannot be described as JSON; use JSON-shaped types (str, "
                "int, float, bool, list[T], dict[str, T], Literal, Enum, dataclasses, TypedDict, "
                "pydantic models)"
            ) from None
        self.output_type = output_type
        self.registry = ToolRegistry()
        self.registry.register(self.tool)
        self.schema = self.registry.to_openai_schema()[0]["function"]["parameters"]
        self.instructions = (
            "When you give your final answer, reply with only a JSON object (no other text) that "
            "matches this JSON Schema, the answer being the value of its 'answer' property:\n"
            + json.dumps(self.schema, ensure_ascii=False)
        )

    def parse(self, text: str) -> tuple[bool, Any]:
        """``(True, value)`` for a valid answer, ``(False, reason)`` for the model to correct."""
        body = text.strip()
        fenced = _FENCE.match(body)
        if fenced:
            body = fenced.group(1).strip()
        try:
            data = json.loads(body)
        except ValueError as exc:
            return False, f"the answer is not valid JSON ({exc})"
        if not (isinstance(data, dict) and set(data) == {"answer"}):
            data = {"answer": data}
        error = self.registry.validate(_NAME, data)
        if error is not None:
            return False, error.text
        prepared = self.tool._spec.prepare(data)
        if isinstance(prepared, str):
            return False, prepared
        return True, prepared[1]["answer"]

    def retry_message(self, reason: str) -> str:
        return (
            f"Your final answer is not valid: {reason}. Reply again with only the JSON object "
            'described in the instructions: {"answer": ...}.'
        )
