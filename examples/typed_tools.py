"""Typed @tool functions: the schema comes from the signature, arguments arrive as Python values.

Run: python examples/typed_tools.py
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from typing import Annotated, Any, Literal

from agentmaker import ToolRegistry, tool


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclasses.dataclass
class Trip:
    """A trip to plan.

    Attributes:
        city: Where to go.
        start: First day.
        nights: How many nights.
    """

    city: str
    start: datetime.date
    nights: int = 1


@tool
def forecast(city: Annotated[str, "city name"], days: int = 3, unit: Unit = Unit.CELSIUS) -> dict[str, Any]:
    """Forecast the weather for a city.

    Args:
        days: How many days ahead (1-7).
        unit: Temperature unit.
    """
    return {"city": city, "days": days, "unit": unit.value, "high": 24 if unit is Unit.CELSIUS else 75}


@tool
def plan(trip: Trip, pace: Literal["slow", "fast"] = "slow", tags: set[str] | None = None) -> str:
    """Plan a trip."""
    end = trip.start + datetime.timedelta(days=trip.nights)
    return (
        f"{trip.city}: {trip.start.isoformat()} to {end.isoformat()}, {pace} pace, tags {sorted(tags or [])}"
    )


@tool
def tally(counts: dict[str, int]) -> int:
    """Add up counts per name."""
    return sum(counts.values())


registry = ToolRegistry()
registry.register_all([forecast, plan, tally])

schema = registry.get_schema("forecast")
assert schema is not None  # None only for a name that is not registered
print(json.dumps(schema["properties"]["unit"]))
print(registry.execute_tool("forecast", {"city": "Oslo", "unit": "fahrenheit"}).text)
print(registry.execute_tool("forecast", {"city": "Oslo", "days": None}).text)  # null = use the default
print(
    registry.execute_tool(
        "plan", {"trip": {"city": "Kyoto", "start": "2025-04-01", "nights": 3}, "tags": ["food", "temples"]}
    ).text
)
print(registry.execute_tool("plan", {"trip": {"city": "Kyoto"}}).text)  # a missing nested field

strict = {
    t["function"]["name"]: t["function"].get("strict", False) for t in registry.to_openai_schema(strict=True)
}
print("strict:", strict)
print("not strict:", registry.strict_fallbacks())
print("gemini:", json.dumps(registry.to_gemini_schema(["forecast"])[0]["parameters"]["properties"]["unit"]))
