"""CalculatorTool through the registry and directly: Python's arithmetic, clear errors, bounded cost."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from agentmaker import CalculatorTool, Tool, ToolConfigError, ToolRegistry


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(CalculatorTool())
    return reg


def calc(registry: ToolRegistry, expression: str):
    return registry.execute_tool("calculator", {"expression": expression})


def test_identity_and_schema() -> None:
    tool = CalculatorTool()
    assert isinstance(tool, Tool)
    assert tool.name == "calculator"
    assert tool.origin == "builtin"
    assert [p.name for p in tool.get_parameters()] == ["expression"]
    param = tool.get_parameters()[0]
    assert param.type == "string" and param.required
    assert (tool.requires_confirmation, tool.external_content, tool.supports_parallel) == (
        False,
        False,
        False,
    )
    # The model reads the limits and the function list in the description.
    for word in ("1000 characters", "100 levels", "250", "1000 digits", "sqrt", "round", "log", "pi", "**"):
        assert word in tool.description, word


def test_guide_example(registry: ToolRegistry) -> None:
    resp = calc(registry, "(3 + 4) * 5")
    assert (resp.status, resp.text, resp.data) == ("success", "35", 35)


PYTHON_CASES = [
    "1 + 2 * 3",
    "(1 + 2) * 3",
    "7 / 2",
    "4 / 2",
    "0.1 + 0.2",
    "1e16",
    "1e15",
    "2.0",
    "1e-5",
    "-7 // 2",
    "-7 % 3",
    "7 % -3",
    "-7.5 // 2",
    "-7.5 % 2",
    "-2 ** 2",
    "2 ** -1",
    "2 ** 3 ** 2",
    "(-2) ** 2",
    "2 ** 100",
    "2 ** 64 // 3",
    "-(2 ** 70) % 7",
    "10 ** 20 / 3",
    "2 ** 0.5",
    "abs(-3)",
    "abs(-3.5)",
    "round(2.5)",
    "round(3.5)",
    "round(-2.5)",
    "round(2.675, 2)",
    "round(1234.5678, -2)",
    "round(1250, -2)",
    "round(-0.4, 0)",
    "0.0 * -1",
    "1_000 + 0x10 + 0o10 + 0b10",
    ".5 + 1.",
    "+-+-1",
    "123456789 * 987654321 * 123456789",
    "2 ** 62 * 2",
    "(2 ** 53 + 1) / 1",
    "1 / 3",
]


@pytest.mark.parametrize("expression", PYTHON_CASES)
def test_matches_python(registry: ToolRegistry, expression: str) -> None:
    expected = eval(expression, {"__builtins__": {"abs": abs, "round": round}})  # trusted test literal
    resp = calc(registry, expression)
    assert resp.status == "success", resp.text
    assert resp.text == str(expected)
    if isinstance(expected, int) and abs(expected) < 2**63:
        assert resp.data == expected and type(resp.data) is int
    elif isinstance(expected, float):
        assert resp.data == expected and type(resp.data) is float


MATH_CASES = [
    ("sqrt(16)", math.sqrt(16)),
    ("sqrt(2)", math.sqrt(2)),
    ("log(e)", math.log(math.e)),
    ("log(100, 10)", math.log10(100)),
    ("log(10 ** 400)", math.log(10**400)),
    ("sin(pi)", math.sin(math.pi)),
    ("cos(0)", 1.0),
    ("tan(1)", math.tan(1)),
    ("exp(1)", math.exp(1)),
    ("floor(-2.5)", -3),
    ("ceil(2.1)", 3),
    ("min(3, 1.0, 1)", 1.0),
    ("max(1, 1.0)", 1),
    ("pi", math.pi),
    ("e", math.e),
]


@pytest.mark.parametrize(("expression", "expected"), MATH_CASES)
def test_functions_match_math(registry: ToolRegistry, expression: str, expected: float) -> None:
    resp = calc(registry, expression)
    assert resp.status == "success", resp.text
    assert resp.text == repr(expected)


def test_big_integers_are_exact(registry: ToolRegistry) -> None:
    resp = calc(registry, "2 ** 100 + 1")
    assert resp.text == str(2**100 + 1)
    # JSON numbers cannot carry it exactly, so data holds the decimal digits.
    assert resp.data == str(2**100 + 1)
    assert calc(registry, "9" * 999).text == "9" * 999


ERRORS = [
    ("1 / 0", "Error: division by zero"),
    ("5 // 0", "Error: division by zero"),
    ("5.0 % 0", "Error: division by zero"),
    ("sqrt(-1)", "Error: math domain error"),
    ("log(0)", "Error: math domain error"),
    ("9 ** 9 ** 9", "Error: integer result too large (over 1000 digits)"),
    ("10.0 ** 400", "Error: numeric result out of range (beyond the float range)"),
    ("1e308 * 10", "Error: numeric result out of range (beyond the float range)"),
    (
        "(-8) ** (1 / 3)",
        "Error: the result would be a complex number (negative number raised to a fractional power)",
    ),
    (
        "nan",
        "Error: unknown name 'nan'; available: pi, e, sqrt, abs, round, log, sin, cos, tan, exp, floor, ceil, min, max",
    ),
    (
        "factorial(5)",
        "Error: unknown name 'factorial'; available: pi, e, sqrt, abs, round, log, sin, cos, tan, exp, floor, ceil, min, max",
    ),
    ("pi(2)", "Error: 'pi' is not a function and cannot be called"),
    ("sqrt", "Error: 'sqrt' is a function; call it with arguments, e.g. sqrt(2)"),
    ("sqrt(1, 2)", "Error: sqrt() takes exactly 1 argument (2 given)"),
    ("round(1, 2, 3)", "Error: round() takes 1 or 2 arguments (3 given)"),
    ("round(1.5, 1.0)", "Error: round() needs an integer number of digits"),
    ("", "Error: the expression must not be empty"),
    ("   ", "Error: the expression must not be empty"),
    ("(1 + 2", "Error: invalid syntax at column 1: '(' was never closed"),
    ("1 + 2)", "Error: invalid syntax at column 6: unmatched ')'"),
    ("1 +", "Error: invalid syntax at column 4: the expression ends too early"),
    ("2 ^ 3", "Error: invalid syntax at column 3: unsupported operator '^' (use ** for powers)"),
    ("__import__('os')", "Error: invalid syntax at column 12: unexpected character '\\''"),
    ("round(2.5, ndigits=1)", "Error: invalid syntax at column 12: keyword arguments are not supported"),
    ("0123", "Error: invalid syntax at column 1: invalid number literal"),
    ("3j", "Error: invalid syntax at column 1: complex numbers are not supported"),
    ("\u0661 + 1", "Error: invalid syntax at column 1: unexpected character '\u0661'"),
    ("2 pi", "Error: invalid syntax at column 3: unexpected name 'pi'"),
    ("[1, 2]", "Error: invalid syntax at column 1: unexpected character '['"),
    ("1 if 2 else 3", "Error: invalid syntax at column 3: unexpected name 'if'"),
]


@pytest.mark.parametrize(("expression", "message"), ERRORS)
def test_errors_are_responses(registry: ToolRegistry, expression: str, message: str) -> None:
    resp = calc(registry, expression)
    assert (resp.status, resp.text, resp.data) == ("error", message, None)


def test_hostile_inputs_are_fast_errors(registry: ToolRegistry) -> None:
    hostile = {
        "9**9**9": "too large",
        "(" * 10_000 + "1" + ")" * 10_000: "too long",
        "(" * 400 + "1" + ")" * 400: "nested too deeply",
        "-" * 900 + "1": "nested too deeply",
        "1" + "+1" * 400: "too complex",
        "1+" * 500_000 + "1": "too long",
        "__import__('os').system('echo pwned')": "unexpected character",
        "\uff11\uff12": "unexpected character",
        "1e999 - 1e999": "out of range",
        "10**999 * 10**999": "too large",
    }
    for expression, fragment in hostile.items():
        start = time.perf_counter()
        resp = calc(registry, expression)
        elapsed = time.perf_counter() - start
        assert resp.status == "error" and fragment in resp.text, (expression[:40], resp.text)
        # Release builds answer in microseconds; the bound only catches a blow-up (a quadratic
        # scan of the million-character input would take minutes), not a busy CI machine.
        assert elapsed < 0.5, (expression[:40], elapsed)


def test_wrong_argument_shapes_never_raise(registry: ToolRegistry) -> None:
    resp = registry.execute_tool("calculator", {"expression": 5})
    assert resp.status == "error" and "expression" in resp.text
    resp = registry.execute_tool("calculator", {})
    assert resp.status == "error" and "expression" in resp.text
    # Called directly (no registry validation), the tool still answers with an error response.
    tool = CalculatorTool()
    assert tool.run({"expression": 5}).text == "Error: the expression must be a string"
    assert tool.run({}).text == "Error: the expression must not be empty"


def test_run_and_arun_directly() -> None:
    tool = CalculatorTool()
    assert tool.run({"expression": "2 ** 10"}).text == "1024"

    async def main():
        return await tool.arun({"expression": "7 / 2"})

    resp = asyncio.run(main())
    assert (resp.text, resp.data) == ("3.5", 3.5)


def test_async_registry_path(registry: ToolRegistry) -> None:
    async def main():
        return await asyncio.gather(
            *(registry.aexecute_tool("calculator", {"expression": f"{i} * {i}"}) for i in range(20))
        )

    results = asyncio.run(main())
    assert [r.text for r in results] == [str(i * i) for i in range(20)]


def test_prompts_localize_messages() -> None:
    tool = CalculatorTool(
        prompts={
            "calculator.div_zero": "Fehler: Division durch null",
            "calculator.syntax": "Fehler in Spalte {column}: {detail}",
            "calculator.syntax.unexpected_end": "Ausdruck endet zu früh",
            "calculator.description": "Rechnet. Höchstens {max_length} Zeichen.",
        }
    )
    assert tool.run({"expression": "1/0"}).text == "Fehler: Division durch null"
    assert tool.run({"expression": "1 +"}).text == "Fehler in Spalte 4: Ausdruck endet zu früh"
    assert tool.description == "Rechnet. Höchstens 1000 Zeichen."
    # Keys not overridden keep their English text.
    assert tool.run({"expression": "sqrt(-1)"}).text == "Error: math domain error"


def test_unknown_prompt_key_is_refused() -> None:
    with pytest.raises(ToolConfigError, match="calculator.div_zeroo"):
        CalculatorTool(prompts={"calculator.div_zeroo": "x"})
    with pytest.raises(TypeError):
        CalculatorTool({"calculator.div_zero": "x"})  # type: ignore[misc]
