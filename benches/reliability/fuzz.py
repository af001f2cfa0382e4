"""Fuzzing: the property tests of tests/test_reliability_fuzz.py (tool-call payloads through
``Agent.run`` and ``execute_tool``, ``ToolParameter`` schemas, calculator expressions) with
random seeds and many more examples. Promises: 0 failures (no crash, no exception escaping,
every failure an error response), slowest input under 10 s, and no leak: 2,000 drawn payloads,
replayed outside hypothesis (which keeps records of its own examples), grow RSS by <= 1 MB on
their second pass."""

from __future__ import annotations

import importlib
import os
import tempfile
import time
import traceback
import warnings
from pathlib import Path

from common import report, scale_arg, scaled
from reliability_workload import quiet_tool_errors, rss_mb

RSS_LIMIT_MB = 1.0
REPLAYED = 2_000


class _TmpFactory:
    """Stands in for pytest's ``tmp_path_factory``."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="am-fuzz-"))

    def getbasetemp(self) -> Path:
        return self.base


def replay_growth(fuzz, factory) -> float:
    """RSS growth over a second pass of drawn payloads through Agent.run and execute_tool."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .example() is meant for interactive use
        payloads = [(fuzz.names.example(), fuzz.raw_arguments().example()) for _ in range(REPLAYED)]
        arguments = [(fuzz.names.example(), fuzz.json_values.example()) for _ in range(REPLAYED)]
    agent = fuzz.test_agent_turns_any_tool_call_payload_into_a_clear_result.hypothesis.inner_test
    direct = fuzz.test_execute_tool_answers_any_arguments_with_a_response.hypothesis.inner_test

    def one_pass() -> None:
        for name, raw in payloads:
            agent(factory, name, raw)
        for name, params in arguments:
            direct(factory, name, params)

    one_pass()
    before = rss_mb()
    one_pass()
    return rss_mb() - before


def main() -> int:
    examples = scaled(5_000, scale_arg(__doc__))
    os.environ["AGENTMAKER_FUZZ_EXAMPLES"] = str(examples)
    fuzz = importlib.import_module("test_reliability_fuzz")
    counts = {"inputs": 0}
    slowest = [0.0]
    failures: list[str] = []
    tests = [
        fuzz.test_agent_turns_any_tool_call_payload_into_a_clear_result,
        fuzz.test_execute_tool_answers_any_arguments_with_a_response,
        fuzz.test_execute_tool_with_near_miss_arguments,
        fuzz.test_tool_parameter_accepts_or_refuses_any_schema_clearly,
        fuzz.test_calculator_answers_any_expression,
    ]
    factory = _TmpFactory()
    for test in tests:
        inner = test.hypothesis.inner_test

        def counted(*args, _inner=inner, **kwargs):
            t0 = time.perf_counter()
            try:
                return _inner(*args, **kwargs)
            finally:
                counts["inputs"] += 1
                slowest[0] = max(slowest[0], time.perf_counter() - t0)

        test.hypothesis.inner_test = counted
        kwargs = {"tmp_path_factory": factory} if "tmp_path_factory" in test.__code__.co_varnames else {}
        try:
            test(**kwargs)
        except Exception as exc:  # noqa: BLE001 - a broken promise, reported
            failures.append(f"{test.__name__}: {''.join(traceback.format_exception_only(exc)).strip()[:300]}")
        test.hypothesis.inner_test = inner
    growth = replay_growth(fuzz, factory)
    broken = list(failures)
    if growth > RSS_LIMIT_MB:
        broken.append(f"RSS grew {growth:.2f} MB > {RSS_LIMIT_MB} MB")
    if slowest[0] > 10:
        broken.append(f"an input took {slowest[0]:.1f} s")
    figures = {
        "inputs_fuzzed": counts["inputs"],
        "failures": len(failures),
        "slowest_input_ms": f"{slowest[0] * 1e3:.0f}",
        "replayed": 2 * REPLAYED,
        "replay_rss_growth_mb": f"{growth:+.2f}",
    }
    return report("fuzz", figures, broken)


if __name__ == "__main__":
    with quiet_tool_errors():
        raise SystemExit(main())
