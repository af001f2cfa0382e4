"""The token estimate bounds the real cl100k and o200k counts from above on enum- and
number-heavy schemas, so ``schema_for(query, max_tokens=N)`` never selects more than N real
tokens. The counts come from tiktoken with OpenAI's encoding files as the ``bpe-openai`` package
ships them (tiktoken checks their SHA-256); nothing is downloaded: tiktoken's fetch is replaced
by one that serves those files and fails on anything else."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from agentmaker import Tool, ToolParameter, ToolRegistry, ToolResponse, ToolRetriever, tool
from agentmaker.rag import estimate_tokens
from hard_schemas import hard_catalog

ENCODINGS = ("cl100k_base", "o200k_base")
PROVIDERS = ("openai", "anthropic", "gemini")


@pytest.fixture(scope="module")
def encodings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import tiktoken
    import tiktoken.load

    # The package's data directory, found without importing the package (its import warns).
    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.submodule_search_locations
    data = Path(spec.submodule_search_locations[0]) / "data"

    def shipped(blobpath: str) -> bytes:
        name = blobpath.rsplit("/", 1)[-1]
        if name not in {f"{e}.tiktoken" for e in ENCODINGS}:
            raise AssertionError(f"the test would download {blobpath}")
        return gzip.decompress((data / f"{name}.gz").read_bytes())

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tiktoken.load, "read_file", shipped)
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("tiktoken")))
        return {name: tiktoken.get_encoding(name) for name in ENCODINGS}


class Given(Tool):
    def __init__(self, name: str, description: str, schema: dict[str, Any]) -> None:
        super().__init__(name, description)
        self.schema = schema

    def get_input_schema(self) -> dict[str, Any]:
        return self.schema

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return ToolResponse.success("ok")


def hard_registry() -> ToolRegistry:
    reg = ToolRegistry()
    for name, description, schema in hard_catalog():
        reg.register(Given(name, description, schema))
    return reg


def rendered(reg: ToolRegistry, provider: str, name: str) -> dict[str, Any]:
    return getattr(reg, f"to_{provider}_schema")(names=[name])[0]  # type: ignore[no-any-return]


def real(encoding: Any, value: Any) -> int:
    return len(encoding.encode(json.dumps(value, separators=(",", ":"), ensure_ascii=False)))


def test_every_hard_tool_is_estimated_at_or_above_its_real_count(encodings):
    reg = hard_registry()
    assert len(reg) == 31
    checked = 0
    for provider in PROVIDERS:
        for name in reg.names():
            t = rendered(reg, provider, name)
            for enc_name, enc in encodings.items():
                assert real(enc, t) <= estimate_tokens(t), (provider, name, enc_name)
                checked += 1
    assert checked == 31 * 3 * 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("budget", [400, 1000, 2500])
def test_selections_within_a_budget_are_within_it_in_real_tokens(encodings, provider, budget):
    reg = hard_registry()
    retriever = ToolRetriever(reg, top_k=len(reg))
    total = 0
    for query in ("convert currency amount", "pick a version date or time", "numbers sensor grid", "选择"):
        picked = retriever.schema_for(query, provider=provider, max_tokens=budget)
        total += len(picked)
        assert sum(estimate_tokens(t) for t in picked) <= budget
        for enc in encodings.values():
            assert sum(real(enc, t) for t in picked) <= budget, (query, provider)
    assert total > 0, "the budget selects something"


def test_ordinary_tools_are_not_overcharged_much(encodings):
    @tool
    def get_weather(city: str, days: int = 3) -> str:
        """Get the weather forecast for a city.

        Args:
            city: The name of the city, for example Paris or New York.
            days: How many days to forecast, from 1 to 14.
        """
        return ""

    reg = ToolRegistry()
    reg.register(get_weather)
    reg.register_function(
        lambda p: p,
        "send_email",
        "Send an email message to a person on behalf of the user.",
        [ToolParameter("to", "string", "The recipient's email address."), ToolParameter("body", "string")],
    )
    for provider in PROVIDERS:
        for name in reg.names():
            t = rendered(reg, provider, name)
            for enc in encodings.values():
                assert real(enc, t) <= estimate_tokens(t) <= 2 * real(enc, t), (provider, name)
