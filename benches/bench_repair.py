"""Argument repair on a corpus of faulty calls built from BFCL v4 (benches/repair_corpus.py).

Each case is the text a model sent for one ground-truth call, with one fault applied (or none:
the valid calls). Ours: the agent's call pipeline (``CallPipeline.prepare``: lenient parsing,
lookup, schema-aligned coercion, validation). Theirs: ``json_repair.loads`` followed by
pydantic's lax validation against a model built from the same schema (``pip install
json-repair pydantic``; without them only our side runs). A case is

- recovered: the arguments the tool would receive equal the intended ones;
- a wrong repair: they were changed into arguments that differ from the intended ones (goal 0);
- as sent: admitted unchanged, because the schema accepts what the model sent (a misnamed
  optional key where the schema admits other keys: the probe is a ``Tool`` subclass, which
  receives valid arguments exactly as sent; an ``@tool`` function gets the key renamed, which
  the second run, with the same schemas behind functions, shows);
- refused: the call stays an error the model reads (not recovered, but no harm done).

Valid calls changed (goal 0): a valid call admitted with different arguments or any repair.

    python benches/bench_repair.py [CORPUS]   (default: benches/data/repair_corpus.json)
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from agentmaker import ToolRegistry, _native
from repair_corpus import FunctionProbe, Probe

CORPUS = Path(__file__).resolve().parent / "data" / "repair_corpus.json"
REPEAT = 5  # each case is timed this many times; the best counts


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, but a bool is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def strict(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def ours(corpus: dict[str, Any], probe: type[Probe] = Probe) -> tuple[dict[str, list[str]], list[float]]:
    reg = ToolRegistry()
    names = {}
    for i, (key, schema) in enumerate(corpus["tools"].items()):
        names[key] = f"t{i}"
        reg.register(probe(f"t{i}", schema))
    pipeline = _native.CallPipeline(reg)
    for name in names.values():  # each validator is compiled on first use: not what is timed
        reg.validate(name, {})
    outcomes: dict[str, list[str]] = defaultdict(list)
    times = []
    for case in corpus["cases"]:
        wire = [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": names[case["tool"]], "arguments": case["text"]},
            }
        ]
        best = float("inf")
        for _ in range(REPEAT):
            start = time.perf_counter_ns()
            recs, _ = pipeline.prepare(wire, 1)
            best = min(best, (time.perf_counter_ns() - start) / 1000)
        times.append(best)
        rec = recs[0]
        if rec.status is not None:
            verdict = "refused"
        elif same(rec.arguments, case["expected"]) and (case["class"] != "valid" or not rec.repairs):
            verdict = "recovered"
        elif not rec.repairs and same(rec.arguments, strict(case["text"])):
            verdict = "as sent"
        else:
            verdict = "wrong"
        outcomes[case["fault"]].append(verdict)
    return outcomes, times


def pydantic_model(schema: dict[str, Any], name: str = "Args") -> Any:
    import pydantic

    def py_type(s: dict[str, Any], where: str) -> Any:
        if s.get("enum"):
            return Literal[tuple(s["enum"])]
        t = s.get("type")
        if t == "integer":
            return int
        if t == "number":
            return float
        if t == "string":
            return str
        if t == "boolean":
            return bool
        if t == "array":
            return list[py_type(s["items"], where)] if isinstance(s.get("items"), dict) else list
        if t == "object":
            return pydantic_model(s, where) if s.get("properties") else dict[str, Any]
        return Any

    required = set(schema.get("required", []))
    fields = {}
    for key, sub in schema.get("properties", {}).items():
        tp = py_type(sub, f"{name}_{len(fields)}")
        fields[key] = (tp, ...) if key in required else (tp | None, None)
    return pydantic.create_model(name, **fields)


def theirs(corpus: dict[str, Any]) -> tuple[dict[str, list[str]], list[float]] | None:
    try:
        import json_repair
        import pydantic
    except ImportError:
        return None
    models = {}
    for key, schema in corpus["tools"].items():
        try:
            models[key] = pydantic_model(schema)
        except Exception:  # noqa: BLE001 - a schema pydantic cannot express is skipped
            models[key] = None
    outcomes: dict[str, list[str]] = defaultdict(list)
    times = []
    for case in corpus["cases"]:
        model = models[case["tool"]]
        if model is None:
            continue
        best = float("inf")
        for _ in range(REPEAT):
            start = time.perf_counter_ns()
            try:
                value = json_repair.loads(case["text"])
                valid = isinstance(value, dict)
                args = model.model_validate(value).model_dump(exclude_unset=True) if valid else None
            except (pydantic.ValidationError, ValueError, TypeError):
                args = None
            best = min(best, (time.perf_counter_ns() - start) / 1000)
        times.append(best)
        if args is None:
            verdict = "refused"
        elif same(args, case["expected"]):
            verdict = "recovered"
        elif same(args, strict(case["text"])):
            verdict = "as sent"
        else:
            verdict = "wrong"
        outcomes[case["fault"]].append(verdict)
    return outcomes, times


def rates(outcomes: dict[str, list[str]], faults: list[str]) -> tuple[int, int, int, int]:
    got = [v for f in faults for v in outcomes.get(f, [])]
    return len(got), got.count("recovered"), got.count("wrong"), got.count("as sent")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else CORPUS
    corpus = json.loads(path.read_text(encoding="utf-8"))
    cases = corpus["cases"]
    by_class: dict[str, list[str]] = defaultdict(list)
    for c in cases:
        if c["fault"] not in by_class[c["class"]]:
            by_class[c["class"]].append(c["fault"])
    mine = ours(corpus)
    other = theirs(corpus)
    print(f"repair corpus: {len(cases)} cases, {len(corpus['tools'])} calls ({path.name})")
    head = f"{'recovered':>10} {'wrong':>6} {'as sent':>8}"
    print(f"{'fault':<18}{'class':<8}{'cases':>6}  ours: {head}  json_repair+pydantic: {head}")

    def cells(outcomes: dict[str, list[str]], faults: list[str]) -> str:
        n, ok, wrong, kept = rates(outcomes, faults)
        return f"{100 * ok / max(n, 1):>9.1f}% {wrong:>6} {kept:>8}"

    for klass in ("syntax", "type", "name", "valid"):
        rows = [(f, klass, [f]) for f in by_class.get(klass, [])]
        rows.append((f"= {klass}", "", by_class.get(klass, [])))
        for label, kind, faults in rows:
            n = rates(mine[0], faults)[0]
            line = f"{label:<18}{kind:<8}{n:>6}        {cells(mine[0], faults)}"
            if other is not None:
                line += f"                        {cells(other[0], faults)}"
            print(line)

    def split(times: list[float]) -> tuple[float, float]:
        valid = [t for t, c in zip(times, cases, strict=True) if c["class"] == "valid"]
        faulty = [t for t, c in zip(times, cases, strict=True) if c["class"] != "valid"]
        return sum(valid) / max(len(valid), 1), sum(faulty) / max(len(faulty), 1)

    functions, function_times = ours(corpus, FunctionProbe)
    shares = []
    for klass in ("syntax", "type", "name", "valid"):
        n, ok, wrong, kept = rates(functions, by_class.get(klass, []))
        shares.append(f"{klass} {100 * ok / max(n, 1):.1f}% ({wrong} wrong, {kept} as sent)")
    print("ours, the same schemas behind @tool-shaped functions: " + "; ".join(shares))

    shapes = {"Tool subclass": split(mine[1]), "@tool-shaped function": split(function_times)}
    for shape, (valid_us, faulty_us) in shapes.items():
        print(
            f"ours, {shape}, the whole CallPipeline.prepare (reading the call, lookup, gates, the "
            f"record): {valid_us:.2f} µs per valid call, {faulty_us:.2f} µs per faulty call "
            f"(repair: +{faulty_us - valid_us:.2f} µs)"
        )
    if other is not None and len(other[1]) == len(cases):
        their_valid, their_faulty = split(other[1])
        ratios = ", ".join(f"{their_faulty / faulty:.1f}x ({shape})" for shape, (_, faulty) in shapes.items())
        print(
            f"json_repair+pydantic: {their_valid:.2f} µs per valid call, {their_faulty:.2f} µs per "
            f"faulty call; ours is faster per faulty call by {ratios}"
        )


if __name__ == "__main__":
    main()
