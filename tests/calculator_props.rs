//! Property tests: any input, however hostile, gives a value or an error text, never a panic,
//! and never takes long. The case count is bounded so this runs in every `cargo test`.

use std::time::{Duration, Instant};

use agentmaker::builtins::calculator::{evaluate, CalculatorTool, Limits};
use agentmaker::ToolStatus;
use proptest::prelude::*;

/// Generous for unoptimized test builds on a loaded 2-core machine; release builds stay under
/// a millisecond (see benches).
fn time_bound() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_millis(60)
    } else {
        Duration::from_millis(3)
    }
}

const TOKENS: &[&str] = &[
    "0",
    "1",
    "2",
    "7",
    "9",
    "10",
    "999",
    "1183",
    "0x",
    "0b1",
    "0o7",
    "1_0",
    "_",
    ".",
    "1.5",
    "1e308",
    "1e-308",
    "e",
    "pi",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "(",
    ")",
    ",",
    " ",
    "sqrt(",
    "round(",
    "log(",
    "sin(",
    "min(",
    "max(",
    "floor(",
    "exp(",
    "abs(",
    "=",
    "^",
    "'",
    "\"",
    "[",
    "]",
    "é",
    "\u{0663}",
    "\u{ff11}",
    "j",
    "nan",
    "inf",
    "__import__",
    "x",
    "10**999",
    "9**9**9",
    "7**1183",
    "(-8)",
    "0.0",
    "\n",
    "\t",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..400).prop_map(|v| v.concat())
}

/// Syntactically valid expressions, so evaluation (not just parsing) is exercised.
fn valid_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        (0u32..1200).prop_map(|i| i.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:?}")),
        prop::sample::select(&["pi", "e", "10**999", "7**1183", "0", "0.0"][..])
            .prop_map(str::to_string),
    ];
    leaf.prop_recursive(6, 200, 4, |inner| {
        prop_oneof![
            (inner.clone(), prop::sample::select(&["+", "-", "*", "/", "//", "%", "**"][..]), inner.clone())
                .prop_map(|(a, op, b)| format!("{a}{op}{b}")),
            inner.clone().prop_map(|a| format!("-({a})")),
            inner.clone().prop_map(|a| format!("({a})")),
            (prop::sample::select(&["sqrt", "abs", "round", "log", "sin", "cos", "tan", "exp", "floor", "ceil"][..]), inner.clone())
                .prop_map(|(f, a)| format!("{f}({a})")),
            (prop::sample::select(&["round", "log", "min", "max"][..]), inner.clone(), inner)
                .prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
        ]
    })
}

fn check(expr: &str) {
    let tool = CalculatorTool::new(None).expect("default prompts");
    let mut best = Duration::MAX;
    // A timing over the bound is re-measured: a busy machine should not fail the test, a slow
    // input fails every attempt.
    for _ in 0..3 {
        let start = Instant::now();
        let r = tool.evaluate(expr);
        best = best.min(start.elapsed());
        match r.status {
            ToolStatus::Success => assert!(r.data.is_some() && !r.text.is_empty()),
            _ => assert!(r.text.starts_with("Error: "), "{expr:?} -> {}", r.text),
        }
        if best <= time_bound() {
            return;
        }
    }
    panic!("{expr:?} took {best:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn token_soup_never_panics_or_stalls(s in token_soup()) {
        check(&s);
    }

    #[test]
    fn valid_expressions_never_panic_or_stall(s in valid_expr()) {
        check(&s);
    }

    #[test]
    fn arbitrary_unicode_never_panics(s in ".{0,300}") {
        check(&s);
    }

    #[test]
    fn syntax_error_columns_point_into_the_input(s in token_soup()) {
        if let Err(agentmaker::builtins::calculator::CalcError::Syntax { column, .. }) = evaluate(&s, Limits::default()) {
            prop_assert!(column >= 1 && column <= s.chars().count() + 1);
        }
    }
}

#[test]
fn hostile_inputs_fail_fast() {
    let nested = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    let million = "9".repeat(1_000_000);
    let deep_unary = "-".repeat(999) + "1";
    let deep_pow = "2**".repeat(333) + "2";
    for e in [
        "9**9**9",
        "9**9**9**9",
        "(10**999)**(10**999)",
        "__import__('os')",
        "\u{0661}\u{0662}",
        "1e308*10",
        "nan",
        "inf",
        "10**999*10**999",
        nested.as_str(),
        million.as_str(),
        deep_unary.as_str(),
        deep_pow.as_str(),
    ] {
        check(e);
        assert!(evaluate(e, Limits::default()).is_err(), "{:.40}", e);
    }
}
