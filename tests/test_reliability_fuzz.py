"""Property-based fuzzing of what a model sends: tool-call payloads (malformed JSON, wrong types,
huge and deep values, odd Unicode, duplicate keys), through ``Agent.run`` and ``execute_tool``;
schemas given to ``ToolParameter``; calculator expressions. No input may crash the process or
escape as an exception, each one finishes (pytest-timeout and hypothesis' deadline bound it),
and every failure is an error response that says what went wrong.
benches/reliability/fuzz.py runs many more examples."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from agentmaker import Agent, CalculatorTool, LLMResponse, NotesTool, ToolParameter, ToolResponse
from agentmaker.testing import ScriptedLLM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_workload import mixed_registry, quiet_tool_errors

#: benches/reliability/fuzz.py sets this to run many more examples, with random seeds.
BENCH_EXAMPLES = int(os.environ.get("AGENTMAKER_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=BENCH_EXAMPLES or 150,
    deadline=timedelta(seconds=10),  # a hang bound, not a speed test
    derandomize=not BENCH_EXAMPLES,  # the same inputs on every CI run
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ODD = [
    "\ud800",  # a lone surrogate
    "\x00",
    "\u202e",  # right-to-left override
    "\ufeff",
    "\U0001f600",
    "e\u0301",
    "\uffff",
    "\r\n",
    '"',
    "\\",
    "\u2028",
]
odd_text = st.text(max_size=20) | st.lists(st.sampled_from(ODD) | st.text(max_size=3), max_size=6).map(
    "".join
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats()
    | odd_text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(odd_text, inner, max_size=4),
    max_leaves=25,
)
NAMES = ["echo", "boom", "big", "calculator", "notes", "nested", "nope"]
names = st.sampled_from(NAMES) | odd_text


@pytest.fixture(autouse=True, scope="module")
def _quiet_tool_errors():
    with quiet_tool_errors():
        yield


def nested_depth(n: int) -> str:
    return '{"text": ' + "[" * n + "]" * n + ', "n": 1}'


@st.composite
def raw_arguments(draw) -> object:
    """What a model may put in ``function.arguments``."""
    choice = draw(st.integers(0, 7))
    if choice == 0:
        return json.dumps(draw(json_values), ensure_ascii=draw(st.booleans()))
    if choice == 1:  # valid JSON cut anywhere
        text = json.dumps(draw(st.dictionaries(odd_text, json_values, max_size=4)))
        return text[: draw(st.integers(0, len(text)))]
    if choice == 2:
        return nested_depth(draw(st.sampled_from([1, 64, 999, 1001, 5000, 100_000]) | st.integers(0, 3000)))
    if choice == 3:  # duplicate keys
        a, b = draw(odd_text), draw(odd_text)
        return f'{{"text": {json.dumps(a)}, "text": {json.dumps(b)}, "n": {draw(st.integers())}}}'
    if choice == 4:
        return draw(st.text(max_size=50))
    if choice == 5:  # a huge string value
        return json.dumps({"text": "x" * draw(st.integers(0, 2_000_000)), "n": 1})
    if choice == 6:  # not a string at all
        return draw(json_values)
    args = {"text": draw(odd_text), "n": draw(st.integers() | st.floats() | odd_text)}
    return json.dumps(args)


def nested_tool_registry(root: Path):
    reg = mixed_registry()
    reg.register(NotesTool(root))
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "integer"}},
            "mode": {"enum": ["a", "b"]},
        },
        "required": ["items"],
    }

    def nested(parameters: dict) -> str:
        return f"{sorted(parameters)}"

    reg.register_function(
        nested, "nested", "Nested schema.", [ToolParameter("spec", "object", schema=schema)]
    )
    return reg


def assert_clear(resp: object, name: object) -> None:
    assert type(resp) is ToolResponse
    assert resp.status in ("success", "partial", "error")
    assert isinstance(resp.text, str)
    if resp.status == "error":
        assert resp.text.startswith("Error"), resp.text[:200]
        if name in NAMES and name not in ("calculator", "notes"):  # the built-ins word theirs
            assert repr(name)[1:-1] in resp.text or "argument" in resp.text, resp.text[:200]


@FUZZ
@given(name=names, raw=raw_arguments())
def test_agent_turns_any_tool_call_payload_into_a_clear_result(tmp_path_factory, name, raw):
    reg = nested_tool_registry(tmp_path_factory.getbasetemp())
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": raw}}
    turn = LLMResponse(content="", model="fuzz", finish_reason="tool_calls", tool_calls=[call])
    result = Agent("fuzz", ScriptedLLM([turn, "ok"]), tool_registry=reg, confirm=lambda t, a: True).run("go")
    assert result.final_output == "ok"
    (rec,) = result.tool_calls
    assert isinstance(rec.output, str) and rec.output
    if rec.status not in ("success", "partial"):
        assert rec.output.startswith("Error"), (rec.status, rec.output[:200])


@FUZZ
@given(name=names, params=json_values)
def test_execute_tool_answers_any_arguments_with_a_response(tmp_path_factory, name, params):
    reg = nested_tool_registry(tmp_path_factory.getbasetemp())
    assert_clear(reg.execute_tool(name, params), name)


@FUZZ
@given(params=st.dictionaries(st.sampled_from(["text", "n", "extra", ""]), json_values, max_size=4))
def test_execute_tool_with_near_miss_arguments(params):
    resp = mixed_registry().execute_tool("echo", params)
    assert_clear(resp, "echo")
    if resp.status == "success":  # only a valid call runs, and it gets its own arguments back
        n = params["n"]
        assert resp.text == f"{params['text']}:{int(n) if isinstance(n, float) else n}"


@FUZZ
@given(
    type_=st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"]) | odd_text,
    default=json_values,
    schema=st.none()
    | st.dictionaries(
        st.sampled_from(["type", "items", "enum", "properties", "$ref", "x"]), json_values, max_size=3
    ),
)
def test_tool_parameter_accepts_or_refuses_any_schema_clearly(type_, default, schema):
    try:
        param = ToolParameter("p", type_, required=False, default=default, schema=schema)
    except (TypeError, ValueError) as exc:  # ToolConfigError is a ValueError
        assert str(exc)
        return
    reg = mixed_registry()
    try:
        reg.register_function(lambda p: "ran", "fuzzed", "A fuzzed schema.", [param])
    except (TypeError, ValueError) as exc:
        assert str(exc)
        return
    assert_clear(reg.execute_tool("fuzzed", {}), "fuzzed")
    reg.to_openai_schema()


@FUZZ
@given(expr=st.text(alphabet="0123456789+-*/%().,^ eE!absqrtlogsinpi", max_size=60) | odd_text)
def test_calculator_answers_any_expression(expr):
    assert_clear(CalculatorTool().run({"expression": expr}), "calculator")
