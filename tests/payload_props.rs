//! Property tests over what a model sends: any JSON value as a tool's arguments is validated
//! against the tool's schema and, when it passes, handled by the built-in, with a response or
//! an error text and never a panic. The Python side's fuzzing (tests/test_reliability_fuzz.py)
//! covers the binding; this covers the core alone. The case count is bounded so this runs in
//! every `cargo test`.

use agentmaker::builtins::calculator::CalculatorTool;
use agentmaker::builtins::cli::{CliOptions, CliTool};
use agentmaker::builtins::notes::{NotesOptions, NotesTool};
#[cfg(feature = "mcp-client")]
use agentmaker::mcp::schema::prepare_input_schema;
use agentmaker::{NativeTool, Registry, ToolResponse, ToolSpec, ToolStatus};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Odd strings: control characters, bidi overrides, surrogate-range escapes turned into
/// replacement characters by serde, path escapes, quotes.
fn odd_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(
            prop::sample::select(vec![
                "\u{0}",
                "\u{202e}",
                "\u{feff}",
                "\u{1f600}",
                "e\u{301}",
                "..",
                "/",
                "\\",
                "\"",
                "\n",
                "read",
                "append",
                "echo",
                "a",
            ]),
            0..8
        )
        .prop_map(|parts| parts.concat()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        odd_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((odd_string(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// Arguments shaped like the tool's, with any values (most random objects miss the required
/// properties and never reach the tool).
fn near_miss(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(keys.to_vec()), json_value()), 0..4)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

fn check_clear(resp: &ToolResponse) {
    if resp.status == ToolStatus::Error {
        assert!(
            resp.text.starts_with("Error"),
            "unclear error: {}",
            resp.text
        );
    }
}

/// Validates `args` as the registry does, then runs the tool when they pass.
fn run_checked(tool: &dyn NativeTool, mut args: Value) {
    let entry =
        Registry::<()>::prepare(tool.spec().clone(), ()).expect("a built-in's spec registers");
    match entry.check_args(&mut args) {
        Ok(_) => check_clear(&tool.call(&args)),
        Err(text) => assert!(!text.is_empty()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn any_arguments_to_the_calculator(args in prop_oneof![
        json_value(),
        near_miss(&["expression"]),
        odd_string().prop_map(|e| json!({ "expression": e })),
    ]) {
        run_checked(&CalculatorTool::new(None).unwrap(), args);
    }

    #[test]
    fn any_arguments_to_the_notes_tool(args in prop_oneof![
        json_value(),
        near_miss(&["action", "path", "content"]),
        (prop::sample::select(vec!["read", "append", "write"]), odd_string(), odd_string())
            .prop_map(|(a, p, c)| json!({ "action": a, "path": p, "content": c })),
    ]) {
        // Cargo's scratch directory for integration tests (under target/), reused across runs.
        let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("payload-props-notes");
        let notes = NotesTool::new(&root, NotesOptions::default()).unwrap();
        run_checked(&notes, args);
    }

    #[test]
    fn any_schema_given_as_a_tools_input_schema(schema in json_value(), args in json_value()) {
        let mut spec = ToolSpec::new("fuzzed", "A fuzzed schema.", vec![]);
        spec.input_schema = Some(schema);
        // A schema is accepted or refused with a reason; an accepted one validates anything.
        if let Ok(entry) = Registry::<()>::prepare(spec, ()) {
            let mut args = args;
            if let Err(text) = entry.check_args(&mut args) {
                prop_assert!(!text.is_empty());
            }
        }
    }
}

proptest! {
    // Each accepted command is a real process: fewer cases.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_arguments_to_the_cli_tool(args in prop_oneof![
        json_value(),
        near_miss(&["command"]),
        odd_string().prop_map(|c| json!({ "command": c })),
        odd_string().prop_map(|c| json!({ "command": format!("echo {c}") })),
    ]) {
        let cli = CliTool::new(&["echo".to_string()], CliOptions::default()).unwrap();
        run_checked(&cli, args);
    }
}

/// Values shaped like JSON Schemas: objects made of schema keywords with any values, nested.
#[cfg(feature = "mcp-client")]
fn schema_like() -> impl Strategy<Value = Value> {
    let keywords = vec![
        "type",
        "properties",
        "required",
        "$ref",
        "$defs",
        "description",
        "title",
        "items",
        "enum",
        "anyOf",
        "additionalProperties",
        "pattern",
        "default",
    ];
    let leaf = prop_oneof![
        json_value(),
        prop::sample::select(vec![
            "object",
            "string",
            "integer",
            "array",
            "nulll",
            "#/$defs/a"
        ])
        .prop_map(|w| json!(w)),
    ];
    leaf.prop_recursive(5, 40, 5, move |inner| {
        prop::collection::vec((prop::sample::select(keywords.clone()), inner), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
    })
}

// MCP schemas are the MCP client's (CI's `cargo test` enables it).
#[cfg(feature = "mcp-client")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// What an MCP server lists as a tool's input schema: refused with a reason, or prepared into
    /// an object schema with short descriptions, which then registers or is refused with a reason
    /// and validates any arguments without a panic.
    #[test]
    fn any_input_schema_an_mcp_server_lists(
        schema in prop_oneof![json_value(), schema_like()],
        args in json_value(),
    ) {
        match prepare_input_schema(&schema, 64) {
            Err(why) => prop_assert!(!why.to_string().is_empty()),
            Ok(prepared) => {
                prop_assert_eq!(prepared.get("type"), Some(&json!("object")));
                if let Some(Value::String(d)) = prepared.get("description") {
                    prop_assert!(d.chars().count() <= 64 + 3, "description not cut: {}", d);
                }
                let mut spec = ToolSpec::new("remote", "A fuzzed remote tool.", vec![]);
                spec.input_schema = Some(prepared);
                if let Ok(entry) = Registry::<()>::prepare(spec, ()) {
                    let mut args = args;
                    if let Err(text) = entry.check_args(&mut args) {
                        prop_assert!(!text.is_empty());
                    }
                }
            }
        }
    }
}
