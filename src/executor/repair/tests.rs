//! What is repaired, what never is, and how each repair reads.

use super::coerce::{coerce, fold, integral_floats, Coercion};
use crate::executor::arguments::{parse_arguments_with, RawArguments};
use crate::executor::{CallStatus, RepairMode};
use serde_json::{json, Value};

fn parsed(text: &str) -> Result<(Value, Vec<String>), (CallStatus, String)> {
    parse_arguments_with("t", RawArguments::Text(text), || RepairMode::Full, false)
        .map(|(m, r)| (Value::Object(m), r))
        .map_err(|r| (r.status, r.text))
}

fn cut(text: &str) -> Result<(Value, Vec<String>), (CallStatus, String)> {
    parse_arguments_with("t", RawArguments::Text(text), || RepairMode::Full, true)
        .map(|(m, r)| (Value::Object(m), r))
        .map_err(|r| (r.status, r.text))
}

#[test]
fn syntax_faults_are_repaired_and_named() {
    let want = json!({"a": 1, "b": 2});
    for (text, note) in [
        (r#"{"a": 1, "b": 2,}"#, "trailing comma removed"),
        (
            "{'a': 1, 'b': 2}",
            "single-quoted strings read as JSON strings",
        ),
        (r#"{a: 1, b: 2}"#, "unquoted keys quoted"),
        ("```json\n{\"a\": 1, \"b\": 2}\n```", "code fence removed"),
        (
            "Sure! {\"a\": 1, \"b\": 2} Hope this helps.",
            "text around the JSON object removed",
        ),
        (
            "{\"a\": 1, // one\n \"b\": 2 /* two */}",
            "comments removed",
        ),
        (r#"{"a": 1, "b": 2"#, "missing '}' added at the end"),
        (
            r#""{\"a\": 1, \"b\": 2}""#,
            "the object was sent as a JSON string; decoded",
        ),
    ] {
        let (value, repairs) = parsed(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(value, want, "{text}");
        assert_eq!(repairs, [note], "{text}");
    }
    let (value, repairs) = parsed("{'ok': True, 'no': False, 'x': None, 'y': undefined}").unwrap();
    assert_eq!(
        value,
        json!({"ok": true, "no": false, "x": null, "y": null})
    );
    assert!(repairs.contains(&"True → true".to_owned()), "{repairs:?}");
    assert!(
        repairs.contains(&"undefined → null".to_owned()),
        "{repairs:?}"
    );
    let (value, repairs) = parsed(r#"{"a": [1, {"b": [2"#).unwrap();
    assert_eq!(value, json!({"a": [1, {"b": [2]}]}));
    assert_eq!(repairs, ["missing ']}]}' added at the end"]);
    let (value, _) = parsed("{\"text\": \"two\nlines\"}").unwrap();
    assert_eq!(value, json!({"text": "two\nlines"}));
}

#[test]
fn what_is_never_guessed_stays_an_error() {
    let not_json = "Error: arguments for tool 't' are not valid JSON";
    for text in [
        r#"{"path": "/tmp/fi"#, // cut inside a string: never completed
        r#"{"a": 1, "b""#,      // a key without its value
        r#"{"a": 1, "b":"#,     // a colon without its value
        r#"{"a": yes}"#,        // a bare word is not a string
        r#"{"a": 1 "b": 2}"#,   // a missing comma
        r#"{"a": NaN}"#,        // not JSON
        r#"{"a": 1} {"b": 2}"#, // two objects: which one?
        "```json\n{\"a\": 1}\n```\n```json\n{\"a\": 2}\n```",
        r#"{"a": 12abc}"#,
        "{not json",
        r#"{"a": "\q"}"#,
    ] {
        assert_eq!(
            parsed(text).unwrap_err(),
            (CallStatus::InvalidArgs, not_json.to_owned()),
            "{text}"
        );
    }
}

#[test]
fn a_reply_cut_off_by_its_token_limit_is_never_completed() {
    let (status, text) = cut(r#"{"a": 1, "b": 2"#).unwrap_err();
    assert_eq!(status, CallStatus::InvalidArgs);
    assert!(
        text.starts_with("Error: the arguments for tool 't' were cut off"),
        "{text}"
    );
    assert!(cut(r#"{"cmd": "rm -rf /tmp/x"#)
        .unwrap_err()
        .1
        .contains("cut off"));
    // What is complete is still repaired.
    assert_eq!(cut(r#"{"a": 1,}"#).unwrap().0, json!({"a": 1}));
    // Strict JSON needs no repair at all.
    assert_eq!(cut(r#"{"a": 1}"#).unwrap(), (json!({"a": 1}), vec![]));
}

#[test]
fn other_modes_parse_strictly() {
    for mode in [RepairMode::Coerce, RepairMode::Off] {
        let r = parse_arguments_with("t", RawArguments::Text("{'a': 1}"), || mode, false);
        assert_eq!(
            r.unwrap_err().text,
            "Error: arguments for tool 't' are not valid JSON"
        );
    }
    let mut asked = false;
    let r = parse_arguments_with(
        "t",
        RawArguments::Text(r#"{"a": 1}"#),
        || {
            asked = true;
            RepairMode::Full
        },
        false,
    );
    assert!(r.is_ok());
    assert!(!asked, "valid JSON never asks for the mode");
}

#[test]
fn hostile_text_is_refused_without_a_crash() {
    let deep = format!(r#"{{"a": {}1"#, "[".repeat(100_000));
    assert_eq!(
        parsed(&deep).unwrap_err().1,
        "Error: arguments for tool 't' are nested too deeply"
    );
    let huge = format!("{{'a': '{}'}}", "x".repeat(2 << 20));
    assert_eq!(
        parsed(&huge).unwrap_err().1,
        "Error: arguments for tool 't' are not valid JSON"
    );
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "x": {"type": "number"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "color": {"type": "string", "enum": ["red", "dark_blue"]},
            "user_name": {"type": "string"},
            "unit": {"type": "string", "default": "metric"},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        },
        "required": ["a"]
    })
}

fn coerced(args: Value) -> (Value, Coercion) {
    let mut args = args;
    let mut out = Coercion::default();
    coerce(&schema(), &mut args, &mut out);
    (args, out)
}

#[test]
fn values_are_coerced_to_their_schema_and_reported() {
    let (args, out) = coerced(json!({
        "a": "5.0", "x": "-1.5e3", "flag": "true", "tags": "[1, 2]", "opts": "{\"n\": \"3\"}",
        "color": "Dark-Blue", "UserName": "ann", "unit": null, "maybe": "7"
    }));
    assert_eq!(
        args,
        json!({"a": 5, "x": -1500.0, "flag": true, "tags": [1, 2], "opts": {"n": 3},
               "color": "dark_blue", "user_name": "ann", "maybe": 7})
    );
    assert!(out.ambiguities.is_empty() && out.pruned);
    for want in [
        r#"'a': "5.0" → 5"#,
        r#"'flag': "true" → true"#,
        r#"'tags': "[1, 2]" → [1,2]"#,
        r#"'opts.n': "3" → 3"#,
        r#"'color': "Dark-Blue" → "dark_blue""#,
        "'UserName' → 'user_name'",
        r#"'maybe': "7" → 7"#,
    ] {
        assert!(
            out.repairs.iter().any(|r| r == want),
            "{want} not in {:?}",
            out.repairs
        );
    }
    let (args, out) = coerced(json!({"a": 5.0, "tags": 4}));
    assert_eq!(args, json!({"a": 5, "tags": [4]}));
    assert_eq!(out.repairs, ["'a': 5.0 → 5", "'tags': 4 → [4]"]);
}

#[test]
fn nothing_is_guessed() {
    for (sent, why) in [
        (json!({"a": "5 apples"}), "not exactly a number"),
        (json!({"a": "5.5"}), "not an integer"),
        (json!({"a": " 5"}), "not exactly a number"),
        (json!({"a": "0x10"}), "not JSON's number grammar"),
        (json!({"flag": "yes"}), "only true and false"),
        (json!({"flag": "True"}), "only true and false"),
        (json!({"tags": "[1, 2"}), "broken JSON text is not wrapped"),
        (json!({"color": "blue"}), "no enum value matches"),
        (json!({"a": true}), "a boolean is no number"),
        (json!({"user": "ann"}), "no property matches"),
    ] {
        let (args, out) = coerced(sent.clone());
        assert_eq!(args, sent, "{why}");
        assert!(out.repairs.is_empty(), "{why}: {:?}", out.repairs);
    }
    let two = json!({"type": "object", "properties": {
        "c": {"type": "string", "enum": ["red", "RED"]},
        "user_name": {"type": "string"}, "username": {"type": "string"}
    }});
    let mut args = json!({"c": "Red", "UserName": "ann"});
    let mut out = Coercion::default();
    coerce(&two, &mut args, &mut out);
    assert_eq!(args, json!({"c": "Red", "UserName": "ann"}));
    assert_eq!(
        out.ambiguities,
        [
            r#"'UserName' matches more than one parameter ("user_name", "username"); it was not renamed"#,
            r#"'c': "Red" matches more than one allowed value ("red", "RED"); it was not changed"#
        ]
    );
    // An exact key is never renamed away, and two keys for one property are not chosen between.
    let mut args = json!({"a": 1, "user_name": "x", "UserName": "y"});
    let mut out = Coercion::default();
    coerce(&schema(), &mut args, &mut out);
    assert_eq!(args, json!({"a": 1, "user_name": "x", "UserName": "y"}));
    let mut args = json!({"a": 1, "UserName": "x", "user-name": "y"});
    let mut out = Coercion::default();
    coerce(&schema(), &mut args, &mut out);
    assert_eq!(args, json!({"a": 1, "UserName": "x", "user-name": "y"}));
    assert_eq!(
        out.ambiguities,
        [r#"more than one key could mean 'user_name' ("UserName", "user-name"); none was renamed"#]
    );
}

#[test]
fn valid_arguments_change_only_for_integral_floats_of_integers() {
    let mut repairs = Vec::new();
    let mut args = json!({"a": 2.0, "x": 2.0, "tags": [1.0, 3]});
    assert!(integral_floats(&schema(), &mut args, &mut repairs));
    assert_eq!(args, json!({"a": 2, "x": 2.0, "tags": [1, 3]}));
    assert_eq!(repairs, ["'a': 2.0 → 2", "'tags.0': 1.0 → 1"]);
    let mut args = json!({"a": 2, "UserName": "kept: the schema allows extra keys"});
    assert!(!integral_floats(&schema(), &mut args, &mut repairs));
}

#[test]
fn folding_ignores_case_dashes_and_underscores() {
    assert_eq!(fold("Dark-Blue"), "darkblue");
    assert_eq!(fold("user_Name"), "username");
}

#[test]
fn the_note_lists_a_few_repairs_and_a_run_ending_text_keeps_its_words() {
    use crate::executor::finish::with_repair_note;
    let repairs: Vec<String> = (1..=7).map(|i| format!("fix {i}")).collect();
    let text = with_repair_note("ok".into(), CallStatus::Success, &repairs);
    assert_eq!(
        text,
        "ok\n\n(Note: the arguments of this call were repaired before it ran: fix 1; fix 2; fix 3; \
         fix 4; fix 5; and 2 more. Send arguments that match the schema exactly.)"
    );
    assert_eq!(
        with_repair_note("ok".into(), CallStatus::Success, &[]),
        "ok"
    );
    assert_eq!(
        with_repair_note("bye".into(), CallStatus::Stopped, &repairs),
        "bye"
    );
}

#[test]
fn shown_values_and_paths_are_bounded() {
    let long = Value::String("x".repeat(10_000));
    let text = crate::executor::messages::coerced(&"k".repeat(10_000), &long, &json!(1));
    assert!(text.len() < 200, "{text}");
    // Each part is cut to its own length: the path to 64 characters, a value to 40.
    let text =
        crate::executor::messages::coerced(&"é".repeat(70), &json!("ü".repeat(50)), &json!([1]));
    let (path, value) = ("é".repeat(64), "ü".repeat(39));
    assert_eq!(text, format!("'{path}…': \"{value}… → [1]"));
    assert_eq!(
        crate::executor::messages::coerced("a.b", &json!("1"), &json!(1)),
        "'a.b': \"1\" → 1"
    );
}

#[test]
fn thousands_of_spellings_of_one_name_rename_nothing_and_are_named_briefly() {
    // Every key is a spelling of "abcdefghijklmn" in other cases (the exact one is left out):
    // none is chosen, and the note names a few of them.
    let name = "abcdefghijklmn";
    let mut keys = serde_json::Map::new();
    for i in 1..(1u32 << name.len()) {
        let spelling: String = name
            .chars()
            .enumerate()
            .map(|(bit, c)| {
                if i & (1 << bit) == 0 {
                    c
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect();
        keys.insert(spelling, json!(1));
    }
    let root = json!({"type": "object", "properties": {name: {"type": "integer"}, "c": {}}, "required": [name]});
    let mut args = Value::Object(keys.clone());
    let mut out = Coercion::default();
    coerce(&root, &mut args, &mut out);
    assert_eq!(args, Value::Object(keys), "nothing renamed");
    assert!(out.repairs.is_empty());
    let shown = r#"("Abcdefghijklmn", "aBcdefghijklmn", "ABcdefghijklmn", "abCdefghijklmn", "AbCdefghijklmn" and 16378 more)"#;
    assert_eq!(
        out.ambiguities,
        [format!(
            "more than one key could mean '{name}' {shown}; none was renamed"
        )]
    );
}
