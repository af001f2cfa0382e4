//! Unit tests of the docstring parser (the Python table tests cover every style in depth).
use super::*;

fn params(info: &DocInfo) -> Vec<(&str, &str)> {
    info.params
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect()
}

#[test]
fn google_multi_paragraph() {
    let info = parse(
        "Get the weather.\n\n    More.\n\n    Args:\n        city (str): The city\n            name.\n\n            Second.\n        days: Days.\n    Returns:\n        x\n",
    );
    assert_eq!(info.description, "Get the weather.");
    assert_eq!(
        params(&info),
        vec![("city", "The city name.\n\nSecond."), ("days", "Days.")]
    );
}

#[test]
fn numpy_and_sphinx_and_chinese() {
    let numpy = parse("Add.\n\n    Parameters\n    ----------\n    a, b : int\n        Numbers.\n\n    Returns\n    -------\n    int\n");
    assert_eq!(params(&numpy), vec![("a", "Numbers."), ("b", "Numbers.")]);
    let sphinx = parse("S.\n:param int a: first\n    more\n:param b: second\n:type b: str\n");
    assert_eq!(params(&sphinx), vec![("a", "first more"), ("b", "second")]);
    let zh = parse("查询。\n\n    参数：\n        城市: 城市名（如：北京）\n        天数：预测天数\n    返回：\n        文本\n");
    assert_eq!(zh.description, "查询。");
    assert_eq!(
        params(&zh),
        vec![("城市", "城市名（如：北京）"), ("天数", "预测天数")]
    );
}

#[test]
fn summary_rules() {
    assert_eq!(
        parse("Note: this is the\n    whole summary.\n").description,
        "Note: this is the whole summary."
    );
    assert_eq!(
        parse("Summary.\n    Returns: the sum\n").description,
        "Summary."
    );
    assert_eq!(parse("Args:\n    a: A.\n").description, "");
    assert_eq!(parse("").description, "");
}

#[test]
fn urls_are_not_entries_and_nothing_panics() {
    let info = parse("S.\n\n    Args:\n        link: See\n            http://x.invalid/y here.\n");
    assert_eq!(
        params(&info),
        vec![("link", "See http://x.invalid/y here.")]
    );
    for junk in [
        "Args:",
        ":param",
        ":param :",
        "Parameters\n---",
        "参数：\n",
        "\t\tArgs:\n\t\t\ta: b",
        "@param",
    ] {
        let _ = parse(junk);
    }
}
