"""Quickstart: one tool, a scripted model, one run.

The scripted model stands in for a real one (swap in ``LLMClient("gpt-4o-mini")``), so this runs
without a key or a network. It asks for the weather tool, reads the result, and answers.
"""

from typing import Annotated

from agentmaker import Agent, tool
from agentmaker.testing import ScriptedLLM


@tool
def get_weather(city: Annotated[str, "City name"], days: int = 1) -> str:
    """Look up the weather forecast for a city."""
    forecasts = {"Paris": "sunny, 24°C", "Oslo": "light rain, 12°C"}
    return f"{city}: {forecasts.get(city, 'no data')} for the next {days} day(s)"


llm = ScriptedLLM(
    [
        ScriptedLLM.tool_call("get_weather", {"city": "Paris", "days": 2}),
        "It will be sunny in Paris, around 24°C.",
    ]
)
agent = Agent("weather-bot", llm, tools=[get_weather])
result = agent.run("What's the weather in Paris this weekend?")

for call in result.tool_calls:
    print(f"tool {call.name}({call.arguments}) -> {call.output}")
print(result.final_output)
