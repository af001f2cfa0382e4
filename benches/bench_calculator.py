"""Calculator scenario (issue 4): CalculatorTool through execute_tool over 10,000 mixed expressions."""

from __future__ import annotations

import random
import time

from agentmaker import CalculatorTool, ToolRegistry
from harness import per_call_us, report

GROUP = "calculator"

TEMPLATES = [
    "({a} + {b}) * {c}",
    "{a} / {b} + {c} // 7 - {a} % 5",
    "-{a} ** 2 + {b} ** 0.5",
    "sqrt({a}) + log({b}, 10) - sin({c}) * cos({a})",
    "round({a} / {b}, 3) + abs(-{c}) + round({c} / 7)",
    "2 ** {p} // 3 + {a}",
    "{x} * {y} - {x} / {y}",
    "max({a}, {b}, {c}) - min({x}, {y})",
    "floor({x}) + ceil({y}) + exp(1) * pi",
    "{a} / ({b} - {b})",  # error: division by zero
    "sqrt(-{a})",  # error: math domain
    "({a} + {b}",  # error: syntax
]


def expressions(n: int, seed: int = 4) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = TEMPLATES[i % len(TEMPLATES)]
        out.append(
            {
                "expression": t.format(
                    a=rng.randint(1, 10_000),
                    b=rng.randint(1, 1000),
                    c=rng.randint(1, 100),
                    p=rng.randint(10, 200),
                    x=round(rng.uniform(-1000, 1000), 3),
                    y=round(rng.uniform(1, 100), 4),
                )
            }
        )
    return out


def main() -> None:
    reg = ToolRegistry()
    reg.register(CalculatorTool())
    exprs = expressions(10_000)
    errors = sum(reg.execute_tool("calculator", e).status == "error" for e in exprs)

    def run_all() -> None:
        for e in exprs:
            reg.execute_tool("calculator", e)

    best = min(_timed(run_all) for _ in range(7)) / len(exprs)

    def trivial(expression: str) -> str:
        return expression

    reg.register_callable(trivial, name="trivial")
    floor = per_call_us(lambda: reg.execute_tool("trivial", {"expression": "1+1"}))
    report(
        GROUP,
        f"execute_tool, 10,000 mixed expressions ({errors} errors), per expression",
        best,
        target_us=3.0,
        note=f"(execute_tool of a trivial Python tool: {floor:.2f} µs)",
    )
    tool = CalculatorTool()
    report(GROUP, "tool.run, '(3 + 4) * 5'", per_call_us(lambda: tool.run({"expression": "(3 + 4) * 5"})))


def _timed(fn) -> float:
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1000


if __name__ == "__main__":
    main()
