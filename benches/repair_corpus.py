"""Build the argument-repair corpus (benches/data/repair_corpus.json) from BFCL v4.

BFCL v4 (https://github.com/ShishirPatil/gorilla, Apache-2.0) pairs each query with its
function docs (``bfcl_eval/data/BFCL_v4_<cat>.json``) and the possible answers of each call
(``.../possible_answer/BFCL_v4_<cat>.json``). For every ground-truth call, the intended
arguments are the first possible answer of each parameter (an empty string means "left out"),
kept only when they validate against that entry's own function doc. Each fault a model makes
is then applied where it fits the schema, giving the text the model would have sent.

    python benches/repair_corpus.py GORILLA_GIT_DIR [--calls N] [--out PATH]

GORILLA_GIT_DIR is a clone (or bare mirror) of the gorilla repository; files are read with
``git show HEAD:<path>``. The corpus is deterministic for a given commit.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from agentmaker import Tool, ToolRegistrationError, ToolRegistry, ToolResponse

DATA = "berkeley-function-call-leaderboard/bfcl_eval/data"
# Java and JavaScript entries type their parameters in those languages ("String", "HashMap"),
# not in JSON Schema: left out.
CATEGORIES = [
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
]
TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "array": "array",
    "object": "object",
    "number": "number",
}
IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
PROSE_BEFORE = "Sure, here are the arguments: "
PROSE_AFTER = "\nLet me know if you need anything else."


def git_json_lines(repo: Path, path: str) -> list[dict[str, Any]]:
    text = subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
    ).stdout
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def to_schema(s: Any) -> dict[str, Any] | None:
    """A BFCL parameter doc as JSON Schema, or None when a type has no JSON Schema form."""
    if not isinstance(s, dict):
        return None
    out: dict[str, Any] = {}
    t = s.get("type")
    if t is not None and t != "any":
        if t not in TYPES:
            return None
        out["type"] = TYPES[t]
    if "enum" in s:
        out["enum"] = s["enum"]
    if "description" in s:
        out["description"] = s["description"]
    if isinstance(s.get("properties"), dict):
        props = {}
        for k, v in s["properties"].items():
            sub = to_schema(v)
            if sub is None:
                return None
            props[k] = sub
        out["properties"] = props
        if s.get("required"):
            out["required"] = list(s["required"])
    if isinstance(s.get("items"), dict):
        items = to_schema(s["items"])
        if items is None:
            return None
        out["items"] = items
    return out


def first(options: Any) -> Any:
    """The first possible answer of a parameter (None: left out)."""
    if not isinstance(options, list) or not options:
        return None
    value = options[0]
    return None if value == "" else resolve(value)


def resolve(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            got = first(v) if isinstance(v, list) else resolve(v)
            if got is not None:
                out[k] = got
        return out
    if isinstance(value, list):
        return [resolve(v) for v in value]
    return value


class Probe(Tool):
    """A tool that is only its schema (the builder validates intended arguments with it, the
    bench sends the corpus's calls to it)."""

    def __init__(self, name: str, schema: dict[str, Any]) -> None:
        super().__init__(name, "probe")
        self._schema = schema

    def get_input_schema(self) -> dict[str, Any]:
        return self._schema

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return ToolResponse.ok("ok")


def _ok(**_: Any) -> str:
    return "ok"


class FunctionProbe(Probe):
    """The same schema behind a function, as ``@tool`` makes it: the registry calls the function
    with the declared keys only, so a misnamed key is renamed to its property (a ``Tool``
    subclass receives valid arguments exactly as sent)."""

    is_async = False

    def __init__(self, name: str, schema: dict[str, Any]) -> None:
        super().__init__(name, schema)
        self._fast_call = (_ok, list(schema.get("properties", {})))


# ------------------------------------------------------------------------------ serialisations


def sq(value: Any, bare_keys: bool = False, python: bool = False) -> str:
    """`value` in single quotes (and bare keys / Python literals when asked)."""
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            key = k if bare_keys else sq(k)
            parts.append(f"{key}: {sq(v, bare_keys, python)}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(sq(v, bare_keys, python) for v in value) + "]"
    if isinstance(value, str):
        inner = json.dumps(value, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'")
        return f"'{inner}'"
    if python and (value is None or isinstance(value, bool)):
        return repr(value)
    return json.dumps(value)


def all_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in all_keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in all_keys(v)]
    return []


def has_literal(value: Any) -> bool:
    if isinstance(value, dict):
        return any(has_literal(v) for v in value.values())
    if isinstance(value, list):
        return any(has_literal(v) for v in value)
    return value is None or isinstance(value, bool)


def syntax_faults(args: dict[str, Any]) -> dict[str, str]:
    text = json.dumps(args, ensure_ascii=False)
    out = {
        "fence": f"```json\n{text}\n```",
        "prose": f"{PROSE_BEFORE}{text}{PROSE_AFTER}",
        "comment": "{ /* the arguments */ " + text[1:],
        "double_encoded": json.dumps(text, ensure_ascii=False),
    }
    if args:
        out["missing_close"] = text.rstrip("}]")
        out["trailing_comma"] = text[:-1] + ",}"
        out["single_quotes"] = sq(args)
        if all(IDENT.match(k) for k in all_keys(args)):
            out["unquoted_keys"] = sq(args, bare_keys=True)
        if has_literal(args):
            out["python_literals"] = sq(args, python=True)
    return out


def variant(name: str) -> str:
    if "_" in name:
        head, *rest = name.split("_")
        return head + "".join(p[:1].upper() + p[1:] for p in rest)
    return name.upper() if name.upper() != name else name.lower()


def type_faults(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Faults of values and names, each applied to every parameter it fits."""
    props = schema.get("properties", {})
    faults: dict[str, dict[str, Any]] = {}

    def put(fault: str, key: str, value: Any) -> None:
        faults.setdefault(fault, dict(args))[key] = value

    for k, v in args.items():
        p = props.get(k, {})
        t = p.get("type")
        if t in ("integer", "number") and isinstance(v, (int, float)) and not isinstance(v, bool):
            put("numeric_string", k, json.dumps(v))
        if t == "boolean" and isinstance(v, bool):
            put("bool_string", k, json.dumps(v))
        if t in ("array", "object") and isinstance(v, (list, dict)):
            put("json_in_string", k, json.dumps(v, ensure_ascii=False))
        if t == "array" and isinstance(v, list) and len(v) == 1 and not isinstance(v[0], list):
            put("single_value", k, v[0])
        if "enum" in p and isinstance(v, str):
            changed = v.upper() if v.upper() != v else v.lower()
            if changed != v:
                put("enum_case", k, changed)
    for k in args:
        new = variant(k)
        if new != k and new not in props and new not in args:
            renamed = {(new if key == k else key): value for key, value in args.items()}
            faults["key_case"] = renamed
            break
    return faults


CLASS = {
    "valid": "valid",
    "numeric_string": "type",
    "bool_string": "type",
    "json_in_string": "type",
    "single_value": "type",
    "enum_case": "type",
    "key_case": "name",
}


def build(repo: Path, calls: int) -> dict[str, Any]:
    tools: dict[str, dict[str, Any]] = {}
    picked: list[tuple[str, dict[str, Any]]] = []
    reg = ToolRegistry()
    for cat in CATEGORIES:
        entries = git_json_lines(repo, f"{DATA}/BFCL_v4_{cat}.json")
        answers = {a["id"]: a for a in git_json_lines(repo, f"{DATA}/possible_answer/BFCL_v4_{cat}.json")}
        for entry in entries:
            answer = answers.get(entry["id"])
            if answer is None:
                continue
            docs = {f["name"]: f for f in entry["function"]}
            for n, call in enumerate(answer["ground_truth"]):
                ((fname, params),) = call.items()
                doc = docs.get(fname)
                schema = to_schema(doc.get("parameters")) if doc else None
                if schema is None or schema.get("type") != "object":
                    continue
                args = resolve(params)
                key = f"{entry['id']}#{n}"
                safe = re.sub(r"[^A-Za-z0-9_-]", "_", key)[:64]
                try:
                    reg.register(Probe(safe, schema))
                except ToolRegistrationError:
                    continue
                if reg.validate(safe, args) is not None:
                    continue
                tools[key] = schema
                picked.append((key, args))
    # Every k-th call, so the corpus stays small and spans every category.
    step = max(1, len(picked) // calls)
    picked = picked[::step][:calls]
    cases = []
    for key, args in picked:
        schema = tools[key]
        cases.append(
            {"tool": key, "fault": "valid", "class": "valid", "text": json.dumps(args), "expected": args}
        )
        for fault, text in syntax_faults(args).items():
            cases.append({"tool": key, "fault": fault, "class": "syntax", "text": text, "expected": args})
        for fault, sent in type_faults(args, schema).items():
            cases.append(
                {
                    "tool": key,
                    "fault": fault,
                    "class": CLASS[fault],
                    "text": json.dumps(sent),
                    "expected": args,
                }
            )
    used = {c["tool"] for c in cases}
    return {
        "source": "BFCL v4 (ShishirPatil/gorilla, Apache-2.0), built by benches/repair_corpus.py",
        "tools": {k: v for k, v in tools.items() if k in used},
        "cases": cases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gorilla", type=Path, help="the gorilla repository's git directory")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / "repair_corpus.json")
    args = parser.parse_args()
    corpus = build(args.gorilla, args.calls)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(corpus, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(
        f"{len(corpus['cases'])} cases over {len(corpus['tools'])} calls -> {args.out} ({args.out.stat().st_size:,} bytes)"
    )


if __name__ == "__main__":
    main()
