"""A registry with a built-in and a custom tool, driven by a scripted model.

The model's first reply asks for the calculator; the agent validates the arguments against the
calculator's schema, runs it (in Rust) and feeds the result back; the second reply is the answer.
"""

from agentmaker import Agent, CalculatorTool, ToolRegistry, tool
from agentmaker.testing import ScriptedLLM


@tool
def to_upper(text: str) -> str:
    """Uppercase a piece of text.

    Args:
        text: The text to uppercase.
    """
    return text.upper()


registry = ToolRegistry()
registry.register(CalculatorTool())  # built-in: arithmetic without eval
registry.register(to_upper)  # a plain function, schema inferred from its signature

print(registry.get_catalog())

llm = ScriptedLLM(
    [
        ScriptedLLM.tool_call("calculator", {"expression": "(3 + 4) * 5"}),
        "The result is 35.",
    ]
)
agent = Agent("assistant", llm, tool_registry=registry)
result = agent.run("Compute (3 + 4) * 5")

print(f"calculator said: {result.tool_calls[0].output}")
print(result.final_output)
