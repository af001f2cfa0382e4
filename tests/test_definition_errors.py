"""Definition-time errors: a signature that has no schema, or an illegal name, raises
ToolRegistrationError (a ValueError) when the tool is defined, with a text that says what to
change.
"""

import typing
from typing import Any

import pytest
from agentmaker import ToolRegistrationError
from agentmaker.tools.signature import analyze
from inference_support import make
from test_inference import Opaque  # the expected texts name its module

# ---------------------------------------------------------------------------------------------
# Definition-time errors


def _varargs(*items: int) -> None: ...
def _varkw(**opts: int) -> None: ...
def _missing(a, b: int) -> None: ...  # type: ignore[no-untyped-def]
def _opaque(a: Opaque) -> None: ...
def _callable_param(fn: typing.Callable[[int], int]) -> None: ...
def _int_keys(m: dict[int, str]) -> None: ...
def _gen(a: int) -> typing.Iterator[int]:
    yield a


ERRORS = [
    ("varargs", _varargs, "Tool function '_varargs' has variadic parameter '*items'"),
    ("varkw", _varkw, "Tool function '_varkw' has variadic parameter '**opts'"),
    ("missing annotation", _missing, "Tool function '_missing' parameter 'a' is missing a type annotation"),
    (
        "opaque class",
        _opaque,
        "Tool function '_opaque' parameter 'a' annotation <class 'test_inference.Opaque'> cannot be mapped",
    ),
    ("Callable", _callable_param, "Tool function '_callable_param' parameter 'fn' annotation"),
    ("int keys", _int_keys, "dict keys must be str"),
    ("generator", _gen, "Tool function '_gen' is a generator"),
    ("lambda name", lambda a: a, "Cannot infer a valid tool name"),
    ("class", Opaque, "is a class"),
]


@pytest.mark.parametrize(("label", "func", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_definition_errors(label: str, func: Any, message: str) -> None:
    with pytest.raises(ToolRegistrationError) as info:
        analyze(func)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_illegal_explicit_name() -> None:
    def ok(a: int) -> None: ...

    for bad in ("has space", "x" * 129, "calc\n", ""):
        with pytest.raises(ToolRegistrationError, match="1 to 128 characters with no whitespace"):
            analyze(ok, name=bad) if bad else analyze(make(int), name="bad name")


def test_unresolvable_forward_reference() -> None:
    def f(a: "DoesNotExist") -> None: ...  # noqa: F821

    with pytest.raises(
        ToolRegistrationError, match="parameter 'a' annotation 'DoesNotExist' cannot be resolved"
    ):
        analyze(f)


def test_unbound_method_self_hint() -> None:
    class C:
        def m(self, a: int) -> None: ...

    with pytest.raises(ToolRegistrationError, match="register the bound method"):
        analyze(C.m)
