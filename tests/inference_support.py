"""Helpers of the schema inference tests: a one-parameter function of a given annotation."""

from typing import Any

from agentmaker.tools.signature import analyze

_NO = object()


def make(ann: Any, default: Any = _NO) -> Any:
    if default is _NO:

        def f(x):  # type: ignore[no-untyped-def]
            return x
    else:

        def f(x=default):  # type: ignore[no-untyped-def]
            return x

    f.__annotations__ = {"x": ann}
    return f


def prop(ann: Any, default: Any = _NO) -> dict[str, Any]:
    return analyze(make(ann, default)).schema["properties"]["x"]


def convert(ann: Any, value: Any) -> Any:
    spec = analyze(make(ann))
    result = spec.prepare({"x": value})
    assert not isinstance(result, str), result
    return result[1]["x"]
