"""Docstring parsing: description = first paragraph; parameter docs in every common style."""

from __future__ import annotations

import pytest
from agentmaker.tools.docstring import parse_docstring

GOOGLE = """Get the weather.

    More detail that is not part of the summary.

    Args:
        city (str): The city
            name, continued on a second line.

            A second paragraph.
        days: Days ahead.
        *extra: Ignored star prefix.

    Returns:
        A report.
    """

NUMPY = """Add numbers.

    Parameters
    ----------
    a : int
        The first number.
    b, c : float
        The others,
        described together.

        Second paragraph.

    Returns
    -------
    float
    """

SPHINX = """Sphinx style.

    :param int a: the first
        continued.
    :param b: the second
    :type b: str
    :returns: something
    """

CHINESE = """查询城市天气。

    参数：
        城市: 城市名（如：北京）
        天数：预测天数
    返回：
        天气文本
    """

CASES = [
    (
        "google",
        GOOGLE,
        "Get the weather.",
        {
            "city": "The city name, continued on a second line.\n\nA second paragraph.",
            "days": "Days ahead.",
            "extra": "Ignored star prefix.",
        },
    ),
    (
        "numpy",
        NUMPY,
        "Add numbers.",
        {
            "a": "The first number.",
            "b": "The others, described together.\n\nSecond paragraph.",
            "c": "The others, described together.\n\nSecond paragraph.",
        },
    ),
    ("sphinx", SPHINX, "Sphinx style.", {"a": "the first continued.", "b": "the second"}),
    ("chinese", CHINESE, "查询城市天气。", {"城市": "城市名（如：北京）", "天数": "预测天数"}),
    (
        "arguments header with text",
        """Summary line.

    Arguments: the values below
        x: An x.
    """,
        "Summary line.",
        {"x": "An x."},
    ),
    (
        "parameters google with type in header",
        """S.

    Parameters (all optional):
        q: Query.
    """,
        "S.",
        {"q": "Query."},
    ),
    (
        "multi-line summary",
        """First line
    second line.

    Args:
        a: A.
    """,
        "First line second line.",
        {"a": "A."},
    ),
    (
        "note with text does not end summary",
        """Note: this is the
    whole summary.
    """,
        "Note: this is the whole summary.",
        {},
    ),
    (
        "returns header ends summary",
        """Summary.
    Returns: the sum
    """,
        "Summary.",
        {},
    ),
    (
        "starts with Args",
        """Args:
        a: A.
    """,
        "",
        {"a": "A."},
    ),
    (
        "unindented entries",
        """Summary.

    Args:
    a: A.
    b: B.

    Trailing text.
    """,
        "Summary.",
        {"a": "A.", "b": "B."},
    ),
    (
        "url in continuation is not an entry",
        """S.

    Args:
        link: See
            http://example.invalid/x for details.
    """,
        "S.",
        {"link": "See http://example.invalid/x for details."},
    ),
    (
        "description on the next line",
        """S.

    Args:
        long_name (dict[str, int]):
            The mapping.
    """,
        "S.",
        {"long_name": "The mapping."},
    ),
    (
        "epytext",
        """S.

    @param x: The x.
    """,
        "S.",
        {"x": "The x."},
    ),
    ("tabs", "S.\n\n\tArgs:\n\t\ta: A.\n", "S.", {"a": "A."}),
    (
        "first entry wins",
        """S.

    Args:
        a: first.

    Parameters
    ----------
    a : int
        second.
    """,
        "S.",
        {"a": "first."},
    ),
    ("no sections", "Just text.", "Just text.", {}),
    ("empty", "", "", {}),
    ("blank", "   \n  ", "", {}),
]


@pytest.mark.parametrize(("label", "doc", "description", "params"), CASES, ids=[c[0] for c in CASES])
def test_parse(label: str, doc: str, description: str, params: dict[str, str]) -> None:
    info = parse_docstring(doc)
    assert info.description == description
    assert info.params == params


def test_none() -> None:
    assert parse_docstring(None) == ("", {})


@pytest.mark.parametrize(
    "junk",
    [
        "Args:",
        ":param",
        "Parameters\n---",
        "参数：\n",
        ":param :",
        "x\n" * 500 + "Args:\n  :",
        "bad \ud800 surrogate\n\n    Args:\n        a: A.\n",
        "\t\tArgs:\n\t\t\ta: b",
    ],
)
def test_never_raises(junk: str) -> None:
    info = parse_docstring(junk)
    assert isinstance(info.description, str)
    assert isinstance(info.params, dict)


def test_cached_result_is_not_shared() -> None:
    doc = "S.\n\n    Args:\n        a: A.\n"
    first = parse_docstring(doc)
    first.params["a"] = "mutated"
    assert parse_docstring(doc).params == {"a": "A."}


def test_random_text_never_breaks_the_parser() -> None:
    import random

    rng = random.Random(1234)
    alphabet = list("Args:Parameters-参数：（）() \t\n:@*xyzé\u3000\r>") + [
        ":param ",
        "@param ",
        "----\n",
        "    ",
    ]
    for _ in range(3000):
        doc = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        info = parse_docstring(doc)
        assert isinstance(info.description, str)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in info.params.items())
