//! Property tests: arguments valid for their schema pass unchanged and unreported, and the
//! lenient reader never panics, whatever it is given.

use super::envelope::read_arguments;
use crate::executor::{RepairMode, Repairing};
use crate::registry::Registry;
use crate::tool::ToolSpec;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// A schema shape, from which both the schema and values valid for it are made.
#[derive(Debug, Clone)]
enum Shape {
    Int,
    Num,
    Str,
    Bool,
    Enum(Vec<String>),
    NullableInt,
    OptionalInt,
    Array(Box<Shape>),
    Object(Vec<(String, Shape, bool)>),
}

const NAMES: [&str; 8] = ["a", "b_c", "Name", "user_name", "x-y", "color", "n", "tags"];

fn shape() -> impl Strategy<Value = Shape> + Clone {
    let leaf = prop_oneof![
        Just(Shape::Int),
        Just(Shape::Num),
        Just(Shape::Str),
        Just(Shape::Bool),
        Just(Shape::NullableInt),
        Just(Shape::OptionalInt),
        prop::sample::subsequence(
            vec!["red", "Red", "dark_blue", "DARK-BLUE", "5", "true"],
            1..4
        )
        .prop_map(|v| Shape::Enum(v.into_iter().map(String::from).collect())),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Shape::Array(Box::new(s))),
            object(inner),
        ]
    })
}

fn object(inner: impl Strategy<Value = Shape> + Clone) -> impl Strategy<Value = Shape> + Clone {
    prop::collection::vec(
        (prop::sample::select(NAMES.to_vec()), inner, any::<bool>()),
        0..5,
    )
    .prop_map(|props| {
        let mut seen = Vec::new();
        let props = props
            .into_iter()
            .filter(|(n, _, _)| {
                let fresh = !seen.contains(n);
                seen.push(*n);
                fresh
            })
            .map(|(n, s, r)| (n.to_owned(), s, r))
            .collect();
        Shape::Object(props)
    })
}

fn schema(shape: &Shape) -> Value {
    match shape {
        Shape::Int => json!({"type": "integer"}),
        Shape::Num => json!({"type": "number"}),
        Shape::Str => json!({"type": "string"}),
        Shape::Bool => json!({"type": "boolean"}),
        Shape::Enum(values) => json!({"type": "string", "enum": values}),
        Shape::NullableInt => json!({"type": ["integer", "null"]}),
        Shape::OptionalInt => {
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null})
        }
        Shape::Array(item) => json!({"type": "array", "items": schema(item)}),
        Shape::Object(props) => {
            let properties: Map<String, Value> = props
                .iter()
                .map(|(n, s, _)| (n.clone(), schema(s)))
                .collect();
            let required: Vec<&str> = props
                .iter()
                .filter(|(_, _, r)| *r)
                .map(|(n, _, _)| n.as_str())
                .collect();
            json!({"type": "object", "properties": properties, "required": required})
        }
    }
}

fn value(shape: &Shape, extra: bool) -> BoxedStrategy<Value> {
    match shape {
        Shape::Int => any::<i64>().prop_map(Value::from).boxed(),
        Shape::Num => prop_oneof![
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
        ]
        .boxed(),
        Shape::Str => prop_oneof![
            any::<String>(),
            prop::sample::select(vec![
                "5",
                "5.0",
                "true",
                "[1, 2]",
                "{\"a\": 1}",
                "null",
                "RED"
            ])
            .prop_map(String::from),
        ]
        .prop_map(Value::String)
        .boxed(),
        Shape::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Shape::Enum(values) => prop::sample::select(values.clone())
            .prop_map(Value::String)
            .boxed(),
        Shape::NullableInt | Shape::OptionalInt => prop::option::of(any::<i32>())
            .prop_map(|v| json!(v))
            .boxed(),
        Shape::Array(item) => prop::collection::vec(value(item, extra), 0..4)
            .prop_map(Value::Array)
            .boxed(),
        Shape::Object(props) => {
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                .iter()
                .map(|(n, s, required)| {
                    let n = n.clone();
                    let v = value(s, extra);
                    if *required {
                        v.prop_map(move |v| Some((n.clone(), v))).boxed()
                    } else {
                        prop::option::of(v)
                            .prop_map(move |v| v.map(|v| (n.clone(), v)))
                            .boxed()
                    }
                })
                .collect();
            // An extra key that differs from a property only in case: the schema allows it,
            // so it must stay as it is even when that property is missing.
            let extra = props
                .first()
                .filter(|_| extra)
                .map(|(n, _, _)| n.to_uppercase());
            (fields, any::<bool>())
                .prop_map(move |(fields, add_extra)| {
                    let mut map: Map<String, Value> = fields.into_iter().flatten().collect();
                    if let Some(extra) = extra.as_ref().filter(|_| add_extra) {
                        map.entry(extra.clone()).or_insert(json!("extra"));
                    }
                    Value::Object(map)
                })
                .boxed()
        }
    }
}

/// A root schema and arguments valid for it; `extra`: with keys the schema does not name that
/// differ from a property only in case.
fn root_and_value(extra: bool) -> impl Strategy<Value = (Value, Value)> {
    object(shape()).prop_flat_map(move |s| (Just(schema(&s)), value(&s, extra)))
}

fn passes_unchanged(root: &Value, args: &Value, function_tool: bool) -> Result<(), TestCaseError> {
    let mut spec = ToolSpec::new("t", "t", vec![]);
    spec.input_schema = Some(root.clone());
    let entry = Registry::prepare(spec, ()).unwrap();
    prop_assert!(entry.validator().unwrap().is_valid(args), "{root} {args}");
    let mut sent = args.clone();
    let mut repairs = Vec::new();
    let how = || Repairing {
        mode: RepairMode::Full,
        function_tool,
    };
    let changed = entry.check_args_with(&mut sent, how, &mut repairs);
    prop_assert_eq!(changed, Ok(false));
    prop_assert_eq!(&sent, args);
    prop_assert!(repairs.is_empty(), "{:?}", repairs);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn valid_arguments_pass_unchanged_and_unreported((root, args) in root_and_value(false)) {
        passes_unchanged(&root, &args, true)?;
    }

    #[test]
    fn a_tool_subclass_gets_even_unknown_keys_as_sent((root, args) in root_and_value(true)) {
        passes_unchanged(&root, &args, false)?;
    }

    #[test]
    fn the_lenient_reader_never_panics(text in "[{}\\[\\],:'\" a-zA-Z0-9_/*\\\\\n.-]{0,64}") {
        let _ = read_arguments(&text, true);
        let _ = read_arguments(&text, false);
    }

    #[test]
    fn text_strict_json_reads_is_read_the_same((_, args) in root_and_value(true)) {
        let text = args.to_string();
        if let Ok((value, fixes)) = read_arguments(&text, true) {
            prop_assert_eq!(value, args);
            prop_assert!(fixes.is_empty());
        }
    }
}
