"""A docstring parameter section that disagrees with the signature warns when the tool is
defined (ToolDefinitionWarning), in every docstring style the parser reads."""

from __future__ import annotations

import warnings
from typing import Annotated

import agentmaker
import pytest
from agentmaker import Tool, ToolRegistry, tool
from agentmaker.errors import ToolDefinitionWarning


def _define(func):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = tool(func)
    return t, [w for w in caught if issubclass(w.category, ToolDefinitionWarning)]


def google_unknown(city: str, days: int = 1) -> str:
    """Forecast.

    Args:
        city: The city.
        day: Days ahead.
    """
    return city


def google_missing(city: str, days: int = 1, unit: str = "c") -> str:
    """Forecast.

    Args:
        city: The city.
        days: Days ahead.
    """
    return city


def numpy_style(city: str, days: int = 1) -> str:
    """Forecast.

    Parameters
    ----------
    town : str
        The city.
    days : int
        Days ahead.
    """
    return city


def sphinx_style(city: str, days: int = 1) -> str:
    """Forecast.

    :param city: The city.
    """
    return city


def epytext_style(city: str, days: int = 1) -> str:
    """Forecast.

    @param city: The city.
    @param weeks: Weeks ahead.
    """
    return city


def test_warning_category_is_exported() -> None:
    assert issubclass(ToolDefinitionWarning, UserWarning)
    assert agentmaker.ToolDefinitionWarning is ToolDefinitionWarning
    assert "ToolDefinitionWarning" in agentmaker.__all__


def test_an_entry_for_no_parameter_warns_with_the_function_the_name_and_the_fix() -> None:
    t, caught = _define(google_unknown)
    (w,) = caught
    assert str(w.message) == (
        "Tool function 'google_unknown': its docstring describes 'day', which is not one of its "
        "parameters (did you mean 'days'?); rename the entry to the parameter it describes or remove it"
    )
    # Pointed at the function, not at agentmaker's internals.
    assert w.filename == __file__
    assert w.lineno == google_unknown.__code__.co_firstlineno
    assert isinstance(t, Tool)  # a warning, not an error: the tool still works
    assert t.get_input_schema()["properties"]["city"]["description"] == "The city."


def test_a_parameter_left_out_while_others_are_described_warns() -> None:
    _, caught = _define(google_missing)
    (w,) = caught
    assert str(w.message) == (
        "Tool function 'google_missing': parameter 'unit' has no entry in the docstring's "
        "parameter section while other parameters do, so the model gets no description for it; "
        "add an entry for 'unit'"
    )


@pytest.mark.parametrize(
    ("func", "messages"),
    [
        (numpy_style, ["describes 'town'", "parameter 'city' has no entry"]),
        (sphinx_style, ["parameter 'days' has no entry"]),
        (epytext_style, ["describes 'weeks'", "parameter 'days' has no entry"]),
    ],
    ids=["numpy", "sphinx", "epytext"],
)
def test_other_docstring_styles(func, messages: list[str]) -> None:  # type: ignore[no-untyped-def]
    _, caught = _define(func)
    assert len(caught) == len(messages)
    for w, fragment in zip(caught, messages, strict=True):
        assert fragment in str(w.message) and func.__name__ in str(w.message)


def test_no_warning_when_the_docstring_agrees_or_says_nothing_about_parameters() -> None:
    def complete(city: str, days: int = 1) -> str:
        """Forecast.

        Args:
            city: The city.
            days: Days ahead.
        """
        return city

    def summary_only(city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return city

    def described_elsewhere(city: str, days: Annotated[int, "Days ahead."] = 1) -> str:
        """Forecast.

        Args:
            city: The city.
        """
        return city

    def no_doc(city: str) -> str:
        return city

    for func in (complete, summary_only, described_elsewhere, no_doc):
        _, caught = _define(func)
        assert caught == [], func.__name__


def test_every_way_to_define_a_callable_tool_warns() -> None:
    with pytest.warns(ToolDefinitionWarning, match="describes 'day'"):
        tool(name="forecast")(google_unknown)
    with pytest.warns(ToolDefinitionWarning, match="describes 'day'"):
        Tool.from_callable(google_unknown)
    with pytest.warns(ToolDefinitionWarning, match="describes 'day'"):
        ToolRegistry().register_callable(google_unknown)


def test_the_warning_filter_can_turn_it_into_an_error() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolDefinitionWarning)
        with pytest.raises(ToolDefinitionWarning, match="google_missing"):
            tool(google_missing)
