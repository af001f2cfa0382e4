"""A tool's checks are done once per tool object and shared by every registry it joins (issue
37): registering an ``@tool`` function checks its name against the registry's rule and stores a
reference. What a registry shows and validates is the same as with a fresh check."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import pytest
from agentmaker import Agent, Tool, ToolRegistrationError, ToolRegistry, ToolResponse, tool
from agentmaker.testing import ScriptedLLM


@tool
def find_hotel(
    city: Annotated[str, "The city."],
    nights: int = 1,
    max_price: Optional[float] = None,  # noqa: UP045 - the spelling users write, on purpose
) -> str:
    """Find a hotel.

    Args:
        city: Where to stay.
        nights: How many nights.
        max_price: The most to pay per night.
    """
    return f"{city}:{nights}:{max_price}"


def test_one_tool_in_ten_registries_behaves_the_same_in_each() -> None:
    registries = [ToolRegistry() for _ in range(10)]
    for reg in registries:
        reg.register(find_hotel)
    first = registries[0].to_openai_schema()
    for reg in registries:
        assert reg.to_openai_schema() == first
        assert reg.execute_tool("find_hotel", {"city": "Oslo", "nights": 2}).text == "Oslo:2:None"
        bad = reg.execute_tool("find_hotel", {"city": 3})
        assert bad.is_error and "city" in bad.text
    assert first[0]["function"]["parameters"]["required"] == ["city"]


def test_a_renamed_or_redescribed_tool_is_checked_again() -> None:
    @tool
    def ping(host: str) -> str:
        """Ping a host."""
        return host

    old = ToolRegistry()
    old.register(ping)
    ping.name = "ping_v2"
    ping.description = "Ping a host, twice."
    new = ToolRegistry()
    new.register(ping)
    assert [t.name for t in new.list_tools()] == ["ping_v2"]
    rendered = new.to_openai_schema()[0]["function"]
    assert rendered["name"] == "ping_v2" and rendered["description"] == "Ping a host, twice."
    assert "ping_v2" in new.get_tools_description()
    assert new.execute_tool("ping_v2", {"host": "h"}).text == "h"
    assert "ping" in old
    assert old.to_openai_schema()[0]["function"]["description"] == "Ping a host."


def test_each_registry_applies_its_own_name_rule_to_a_shared_check() -> None:
    def search(query: str) -> str:
        """Search the docs."""
        return query

    dotted = tool(name="docs.search")(search)  # catalog names only
    catalog = ToolRegistry(names="catalog")
    catalog.register(dotted)
    with pytest.raises(ToolRegistrationError, match="docs.search"):
        ToolRegistry().register(dotted)
    assert ToolRegistry(names="catalog").register(dotted) is None
    assert catalog.execute_tool("docs.search", {"query": "q"}).text == "q"


def test_a_subclass_schema_mutated_in_place_is_read_again() -> None:
    class Mutable(Tool):
        def __init__(self) -> None:
            super().__init__("mutable", "A schema that changes.")
            self.schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}

        def get_input_schema(self) -> dict[str, Any]:
            return self.schema

        def run(self, parameters: dict[str, Any]) -> ToolResponse:
            return ToolResponse.ok(repr(parameters))

    t = Mutable()
    reg = ToolRegistry()
    reg.register(t)
    t.schema["properties"]["a"]["type"] = "string"
    reg.register(t, overwrite=True)
    assert reg.get_schema("mutable")["properties"]["a"] == {"type": "string"}
    assert reg.execute_tool("mutable", {"a": 1}).is_error
    other = ToolRegistry()
    other.register(t)
    assert other.execute_tool("mutable", {"a": "x"}).text == "{'a': 'x'}"


def test_a_setting_changed_after_registration_reaches_the_next_registry() -> None:
    @tool
    def wipe(path: str) -> str:
        """Wipe a path."""
        return f"wiped {path}"

    before = ToolRegistry()
    before.register(wipe)
    wipe.requires_confirmation = True
    wipe.supports_parallel = True
    after = ToolRegistry()
    after.register(wipe)
    # The new registry reads the new settings; the tool's calls there need confirmation.
    llm = ScriptedLLM([ScriptedLLM.tool_call("wipe", {"path": "/tmp/x"}), "ok"])
    result = Agent("a", llm, tool_registry=after).run("go")
    assert result.tool_calls[0].status == "not_confirmed"

    # Another function behind the tool: the next registry calls it, the earlier one does not.
    @tool
    def wipe_gently(path: str) -> str:
        """Wipe a path gently."""
        return f"gently {path}"

    wipe._spec = wipe_gently._spec
    again = ToolRegistry()
    again.register(wipe)
    assert again.execute_tool("wipe", {"path": "p"}).text == "gently p"
    assert before.execute_tool("wipe", {"path": "p"}).text == "wiped p"


def test_an_inferred_schema_has_one_owner_shared_by_its_renderings() -> None:
    first, second = ToolRegistry(), ToolRegistry()
    first.register(find_hotel)
    second.register(find_hotel)
    owned = find_hotel.get_input_schema()
    for reg in (first, second):
        rendered = reg.to_openai_schema()[0]["function"]["parameters"]
        assert rendered is owned  # held, not converted into a copy per registry
    # What validation uses is the same schema, read from the core's own compact copy.
    assert first.execute_tool("find_hotel", {"city": "Oslo", "nights": "x"}).is_error
