use super::*;
use crate::schema::ToolParameter;
use serde_json::json;

fn spec(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        format!("{name} tool"),
        vec![ToolParameter::new("x", "integer", "An x")],
    )
}

fn entry(name: &str, payload: u32) -> Entry<u32> {
    Registry::prepare(spec(name), payload).unwrap()
}

#[test]
fn register_get_unregister_keep_order() {
    let mut r = Registry::new();
    r.register(entry("b", 1), false).unwrap();
    r.register(entry("a", 2), false).unwrap();
    r.register(entry("c", 3), false).unwrap();
    assert_eq!(r.names().collect::<Vec<_>>(), ["b", "a", "c"]);
    r.register(entry("a", 9), true).unwrap();
    assert_eq!(
        r.names().collect::<Vec<_>>(),
        ["b", "a", "c"],
        "overwrite keeps position"
    );
    assert_eq!(r.get("a").unwrap().payload, 9);
    assert_eq!(r.unregister("b").unwrap().payload, 1);
    assert!(r.unregister("b").is_none());
    assert_eq!(r.names().collect::<Vec<_>>(), ["a", "c"]);
    assert_eq!(r.len(), 2);
}

#[test]
fn duplicates_and_bad_names_are_refused() {
    let mut r = Registry::new();
    r.register(entry("a", 1), false).unwrap();
    let err = r.register(entry("a", 2), false).unwrap_err();
    assert!(matches!(err, RegistrationError::Duplicate { .. }));
    assert!(err.to_string().contains("overwrite=True"));
    assert!(matches!(
        Registry::prepare(spec("calc\n"), 0).unwrap_err(),
        RegistrationError::IllegalName { .. }
    ));
    assert_eq!(r.get("a").unwrap().payload, 1);
}

#[test]
fn the_default_rule_is_strict_and_catalog_names_are_an_opt_in() {
    let mut r = Registry::new();
    assert_eq!(r.name_rule(), NameRule::Strict);
    let err = r.register(entry("math.factorial", 1), false).unwrap_err();
    assert!(matches!(err, RegistrationError::StrictName { .. }), "{err}");
    let err = r
        .register_all(
            vec![entry("ok", 1), entry("fs/read", 2)],
            ConflictMode::Raise,
        )
        .unwrap_err();
    assert!(err.to_string().contains("character 3 is '/'"), "{err}");
    assert!(r.is_empty(), "a refused batch registers nothing");
    let mut catalog = Registry::with_name_rule(NameRule::Catalog);
    catalog.register(entry("math.factorial", 1), false).unwrap();
    catalog
        .register_all(
            vec![entry("fs/read", 2), entry(&"x".repeat(128), 3)],
            ConflictMode::Raise,
        )
        .unwrap();
    assert_eq!(catalog.len(), 3);
}

#[test]
fn register_all_is_atomic_on_conflict() {
    let mut r = Registry::new();
    r.register(entry("a", 1), false).unwrap();
    let v = r.version();
    let err = r
        .register_all(vec![entry("b", 2), entry("a", 3)], ConflictMode::Raise)
        .unwrap_err();
    assert!(matches!(err, RegistrationError::Duplicate { ref name } if name == "a"));
    assert_eq!(r.names().collect::<Vec<_>>(), ["a"]);
    assert_eq!(r.version(), v);
    let err = r
        .register_all(vec![entry("b", 2), entry("b", 3)], ConflictMode::Raise)
        .unwrap_err();
    assert!(
        matches!(err, RegistrationError::Duplicate { .. }),
        "duplicates inside the batch too"
    );
    assert_eq!(r.len(), 1);
}

#[test]
fn register_all_skip_and_overwrite() {
    let mut r = Registry::new();
    r.register(entry("a", 1), false).unwrap();
    let got = r
        .register_all(vec![entry("a", 2), entry("b", 3)], ConflictMode::Skip)
        .unwrap();
    assert_eq!(got, ["b"]);
    assert_eq!(r.get("a").unwrap().payload, 1);
    let got = r
        .register_all(vec![entry("a", 4)], ConflictMode::Overwrite)
        .unwrap();
    assert_eq!(got, ["a"]);
    assert_eq!(r.get("a").unwrap().payload, 4);
    assert!("bogus".parse::<ConflictMode>().is_err());
    assert_eq!(
        "error".parse::<ConflictMode>().unwrap(),
        ConflictMode::Raise
    );
}

#[test]
fn renderings_follow_selection() {
    let mut r = Registry::new();
    for (i, n) in ["a", "b", "c"].iter().enumerate() {
        r.register(entry(n, i as u32), false).unwrap();
    }
    assert_eq!(
        r.catalog::<&str>(None),
        "- a: a tool\n- b: b tool\n- c: c tool"
    );
    let subset = ["c", "zzz", "a", "c"];
    let names: Vec<String> = r
        .openai_schema(Some(&subset))
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["c", "a"]);
    assert_eq!(r.openai_schema(Some(&[] as &[&str])), Vec::<Value>::new());
    assert_eq!(
        r.tools_description(Some(&["b"])),
        "- b: b tool\n    - x (integer, required): An x"
    );
    assert_eq!(r.tools_description(Some(&["nope"])), EMPTY_CATALOG);
    let t = &r.openai_schema::<&str>(None)[0];
    assert_eq!(
        t,
        &json!({"type": "function", "function": {"name": "a", "description": "a tool", "parameters": {"type": "object", "properties": {"x": {"type": "integer", "description": "An x"}}, "required": ["x"]}}})
    );
}

#[test]
fn arguments_are_checked_against_the_rendered_schema() {
    let e = entry("a", 0);
    assert!(e.check_args(&mut json!({"x": 1})).is_ok());
    let err = e.check_args(&mut json!({"x": "1"})).unwrap_err();
    assert_eq!(err, "Error: tool 'a' failed parameter validation: parameter 'x': \"1\" is not of type \"integer\"");
    let err = e.check_args(&mut json!({})).unwrap_err();
    assert!(
        err.ends_with("parameter 'x': is required but missing"),
        "{err}"
    );
}

#[test]
fn plain_parameters_are_checked_now_and_built_on_first_use() {
    let e = entry("lazy", 0);
    assert!(!e.schema_is_built() && !e.validator_is_compiled());
    let rendered = r#"{"type":"object","properties":{"x":{"type":"integer","description":"An x"}},"required":["x"]}"#;
    assert_eq!(serde_json::to_string(&e.schema_value()).unwrap(), rendered);
    assert!(!e.schema_is_built(), "a rendering copy is not kept");
    assert!(e.check_args(&mut json!({"x": 1})).is_ok());
    assert!(e.schema_is_built() && e.validator_is_compiled());
    assert_eq!(serde_json::to_string(e.schema()).unwrap(), rendered);

    let twice = ToolSpec::new(
        "twice",
        "",
        vec![
            ToolParameter::new("a", "string", ""),
            ToolParameter::new("a", "string", ""),
        ],
    );
    let err = Registry::prepare(twice, 0).unwrap_err().to_string();
    assert!(err.contains("'a' is declared twice"), "{err}");
    let bad_type = ToolSpec::new("t", "", vec![ToolParameter::new("a", "str", "")]);
    assert!(matches!(
        Registry::prepare(bad_type, 0).unwrap_err(),
        RegistrationError::InvalidSchema { .. }
    ));
    let own = ToolSpec::new(
        "own",
        "",
        vec![ToolParameter::new("a", "string", "")
            .with_schema(json!({"type": "string", "enum": ["x"]}))],
    );
    let e = Registry::prepare(own, 0).unwrap();
    // Checked whole now, kept as text until first use.
    assert!(!e.schema_is_built() && !e.validator_is_compiled());
    assert_eq!(e.schema()["properties"]["a"]["enum"], json!(["x"]));
}

#[test]
fn a_given_schema_is_kept_as_text_until_first_use_and_reads_back_the_same() {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string", "description": "Wh\u{e9}re"}, "n": {"type": ["integer", "null"]}},
        "required": ["city"],
    });
    let mut spec = ToolSpec::new("t", "", Vec::new());
    spec.input_schema = Some(schema.clone());
    let e = Registry::prepare(spec, 0).unwrap();
    assert!(!e.schema_is_built());
    assert_eq!(e.schema_value(), schema);
    assert!(e.description_block().contains("city"));
    assert!(!e.schema_is_built(), "a rendering copy is not kept");
    let mut args = json!({"city": 5});
    assert!(e.check_args(&mut args).is_err());
    assert!(e.schema_is_built() && e.validator_is_compiled());
    assert_eq!(e.schema(), &schema);
    // Deeper than the JSON reader goes: kept as a value.
    let mut deep = json!({"type": "string"});
    for _ in 0..120 {
        deep = json!({"type": "array", "items": deep});
    }
    let mut spec = ToolSpec::new("deep", "", Vec::new());
    spec.input_schema = Some(json!({"type": "object", "properties": {"x": deep}}));
    let e = Registry::prepare(spec, 0).unwrap();
    assert!(e.schema_is_built());
}

#[test]
fn dangling_refs_and_bad_patterns_fail_at_registration() {
    let mut dangling = spec("dangling");
    dangling.input_schema =
        Some(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}));
    let err = Registry::prepare(dangling, 0).unwrap_err();
    assert!(
        matches!(err, RegistrationError::InvalidSchema { .. }),
        "{err}"
    );
    let mut bad_regex = spec("bad_regex");
    bad_regex.input_schema = Some(
        json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}}),
    );
    assert!(Registry::prepare(bad_regex, 0).is_err());
    let mut fine = spec("fine");
    fine.input_schema = Some(
        json!({"type": "object", "$defs": {"P": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/P"}}}),
    );
    let entry = Registry::prepare(fine, 0).unwrap();
    assert!(entry.check_args(&mut json!({"a": 1})).is_ok());
    assert!(entry.check_args(&mut json!({"a": "x"})).is_err());
}

/// The agent's form of the message differs only in the full stop after the list of names.
#[test]
fn unknown_tool_message_for_the_agent_ends_its_list_without_a_stop() {
    assert_eq!(
        unknown_tool_message("nope", &["echo", "other"], false),
        "Error: tool 'nope' does not exist. Available tools: echo, other"
    );
    assert_eq!(
        unknown_tool_message("nope", &[], false),
        "Error: tool 'nope' does not exist. No tools are available."
    );
    let many: Vec<String> = (0..30).map(|i| format!("tool_{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(
        unknown_tool_message("tool_12x", &many, false),
        unknown_tool_message("tool_12x", &many, true)
    );
}

#[test]
fn unknown_tool_message_is_bounded() {
    let mut r = Registry::new();
    r.register(entry("alpha", 0), false).unwrap();
    let all = |_: &Entry<u32>| true;
    assert_eq!(
        r.unknown_tool_message("beta", &all),
        "Error: tool 'beta' does not exist. Available tools: alpha."
    );
    for i in 0..500 {
        r.register(entry(&format!("tool_{i}"), i), false).unwrap();
    }
    let msg = r.unknown_tool_message("tool_12x", &all);
    assert!(
        msg.contains("Closest names: tool_12,") && msg.contains("501 tools"),
        "{msg}"
    );
    assert!(msg.len() < 300, "{msg}");
    let none = |_: &Entry<u32>| false;
    assert!(r
        .unknown_tool_message("x", &none)
        .contains("No tools are available"));
}

#[test]
fn a_checked_tool_is_shared_by_the_registries_it_joins() {
    let checked = Arc::new(CheckedTool::check(NameRule::Catalog, spec("shared")).unwrap());
    let mut registries: Vec<Registry<u32>> = (0..10).map(|_| Registry::new()).collect();
    for (i, r) in registries.iter_mut().enumerate() {
        let entry = Entry::from_checked(r.name_rule(), Arc::clone(&checked), i as u32).unwrap();
        r.register(entry, false).unwrap();
    }
    // One check, one schema, one validator: compiled through one registry, seen by all.
    assert_eq!(Arc::strong_count(&checked), 11);
    let mut args = json!({"x": 1});
    registries[3]
        .get("shared")
        .unwrap()
        .check_args(&mut args)
        .unwrap();
    for r in &registries {
        let e = r.get("shared").unwrap();
        assert!(Arc::ptr_eq(e.checked(), &checked));
        assert!(e.validator_is_compiled());
    }
    assert_eq!(registries[9].get("shared").unwrap().payload, 9);
}

#[test]
fn a_shared_check_still_meets_each_registrys_name_rule() {
    let checked = Arc::new(CheckedTool::check(NameRule::Catalog, spec("docs.search")).unwrap());
    let err = Entry::from_checked(NameRule::Strict, Arc::clone(&checked), 0).unwrap_err();
    assert!(err.to_string().contains("docs.search"), "{err}");
    let mut catalog = Registry::with_name_rule(NameRule::Catalog);
    let entry = Entry::from_checked(catalog.name_rule(), checked, 1).unwrap();
    catalog.register(entry, false).unwrap();
    assert!(catalog.contains("docs.search"));
}
