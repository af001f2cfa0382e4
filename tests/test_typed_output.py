"""Typed final answers: Agent(output_type=T) requests, validates, retries and converts."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Literal, TypedDict

import pydantic
import pytest
from agentmaker import Agent, RunLimitExceeded, RunPolicy
from agentmaker.testing import ScriptedLLM


@dataclass
class City:
    name: str
    population: int


class Weather(TypedDict):
    city: str
    celsius: float


class Invoice(pydantic.BaseModel):
    number: str
    total: float


def test_a_dataclass_answer_is_requested_with_its_schema_and_returned_as_the_dataclass():
    llm = ScriptedLLM(['{"answer": {"name": "Oslo", "population": 709000}}'])
    result = Agent("a", llm, output_type=City).run("Biggest city in Norway?")
    assert result.output == City("Oslo", 709000)
    assert isinstance(result.output, City)
    system = llm.requests[0].messages[0]["content"]
    assert system.startswith("You are a helpful assistant.\n\nWhen you give your final answer")
    schema = json.loads(system.split("\n")[-1])
    assert schema["properties"]["answer"]["$ref"] == "#/$defs/City"
    assert schema["$defs"]["City"]["properties"] == {
        "name": {"type": "string"},
        "population": {"type": "integer"},
    }
    assert schema["required"] == ["answer"]


@pytest.mark.parametrize(
    ("output_type", "reply", "expected"),
    [
        (
            Weather,
            '```json\n{"answer": {"city": "Rome", "celsius": 21.5}}\n```',
            {"city": "Rome", "celsius": 21.5},
        ),
        (Invoice, '{"number": "A-1", "total": 9.5}', Invoice(number="A-1", total=9.5)),
        (Literal["yes", "no"], '"yes"', "yes"),
        (int, "42", 42),
        (list[int], '{"answer": [1, 2]}', [1, 2]),
    ],
)
def test_each_kind_of_output_type(output_type, reply, expected):
    result = Agent("a", ScriptedLLM([reply]), output_type=output_type).run("q")
    assert result.output == expected
    assert type(result.output) is type(expected)


def test_an_invalid_answer_goes_back_to_the_model_with_the_reason():
    llm = ScriptedLLM(
        ['{"answer": {"name": "Oslo"}}', "not json at all", '{"answer": {"name": "Oslo", "population": 1}}']
    )
    result = asyncio.run(Agent("a", llm, output_type=City).arun("q"))
    assert result.output == City("Oslo", 1)
    first_retry = llm.requests[1].messages[-1]
    assert first_retry["role"] == "user"
    assert first_retry["content"].startswith("Your final answer is not valid: ")
    assert "population" in first_retry["content"]
    assert "not valid JSON" in llm.requests[2].messages[-1]["content"]
    assert result.usage.llm_calls == 3


def test_invalid_answers_count_against_max_retries():
    llm = ScriptedLLM(['"maybe"', '"perhaps"'])
    agent = Agent("a", llm, output_type=Literal["yes", "no"], run_policy=RunPolicy(max_retries=1))
    with pytest.raises(RunLimitExceeded) as info:
        agent.run("q")
    assert info.value.kind == "retries"
    assert "try again 2 times in this run, more than RunPolicy(max_retries=1)" in str(info.value)
    assert info.value.result.usage.llm_calls == 2


def test_without_output_type_the_output_is_the_text():
    result = Agent("a", ScriptedLLM(["plain"])).run("q")
    assert result.output == "plain" == result.final_output


class Opaque:
    def __init__(self, handle: int) -> None:
        self.handle = handle


def test_a_type_that_has_no_json_form_is_refused_when_the_agent_is_made():
    with pytest.raises(
        TypeError, match="output_type <class '.*Opaque'> cannot be described as JSON; use JSON-shaped"
    ):
        Agent("a", ScriptedLLM([]), output_type=Opaque)
