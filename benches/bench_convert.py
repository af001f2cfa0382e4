"""Python <-> JSON conversion (issue 32): the cost of turning typical tool arguments into the
core's `serde_json::Value` and back, the conversion every `execute_tool` call pays on its
arguments. Timed inside the extension (`_native._time_conversion`: a loop in Rust, no Python
call per round), so the figures are the converter's alone. pythonize, measured against it once,
is not built any more: its figures are in `src/py/convert.rs` and benches/README.md."""

from __future__ import annotations

from agentmaker import _native
from harness import report

GROUP = "convert"
ROUNDS = 200_000
REPEAT = 7

#: Tool arguments as models send them: a flat dict of five scalars, and a nested one.
SHAPES = {
    "5 scalars": {"city": "Oslo", "days": 3, "units": "metric", "verbose": True, "limit": 2.5},
    "nested dict/list": {
        "query": {
            "text": "open invoices",
            "filters": [
                {"field": "status", "op": "eq", "value": "open"},
                {"field": "amount", "op": "gt", "value": 100},
            ],
            "sort": ["due", "amount"],
        },
        "page": {"size": 20, "offset": 0},
        "include_archived": False,
    },
}


def best(value: object) -> tuple[float, float]:
    """Best of REPEAT runs, in µs per conversion (to JSON, back to Python)."""
    runs = [_native._time_conversion(value, ROUNDS) for _ in range(REPEAT)]
    return min(r[0] for r in runs) / 1000, min(r[1] for r in runs) / 1000


def main() -> None:
    for shape, value in SHAPES.items():
        to_json, back = best(value)
        report(GROUP, f"{shape}, Python -> Value", to_json)
        report(GROUP, f"{shape}, Value -> Python", back)


if __name__ == "__main__":
    main()
