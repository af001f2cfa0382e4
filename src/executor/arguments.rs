//! Gate 1: the call is well formed. A model's tool call names a function and carries its
//! arguments as JSON text (OpenAI, and the agent's neutral form) or as an object already parsed
//! (SDK objects, Anthropic and Gemini codecs).

use super::messages;
use super::prepare::Refusal;
use super::repair::envelope;
use super::repair::lenient::Fault;
use super::repair::RepairMode;
use super::status::CallStatus;
use serde_json::{Map, Value};

/// The arguments as the call carried them.
pub enum RawArguments<'a> {
    /// No arguments, or an empty string: an empty object.
    Missing,
    Text(&'a str),
    /// Already parsed (it may still not be an object).
    Parsed(Value),
}

/// The call's id and function name, checked in that order.
pub fn check_call(id: Option<&str>, name: Option<&str>) -> Result<(), Refusal> {
    let name = name.unwrap_or("");
    if id.is_none_or(str::is_empty) {
        return Err(Refusal::new(CallStatus::InvalidCall, messages::no_id(name)));
    }
    if name.is_empty() {
        return Err(Refusal::new(CallStatus::InvalidCall, messages::no_name()));
    }
    Ok(())
}

/// The arguments as a JSON object, or the refusal the model reads (strict JSON only).
pub fn parse_arguments(tool: &str, raw: RawArguments<'_>) -> Result<Map<String, Value>, Refusal> {
    parse_arguments_with(tool, raw, || RepairMode::Off, false).map(|(map, _)| map)
}

/// The arguments as a JSON object and the syntax repairs made to read them, or the refusal the
/// model reads. Text that strict JSON refuses is read leniently when `mode` (asked only then)
/// is [`RepairMode::Full`]. `cut_off`: the reply ended at the model's token limit, so nothing
/// missing at the end is ever added, and arguments that end early are refused with a text
/// that says the reply was cut off.
pub fn parse_arguments_with(
    tool: &str,
    raw: RawArguments<'_>,
    mode: impl FnOnce() -> RepairMode,
    cut_off: bool,
) -> Result<(Map<String, Value>, Vec<String>), Refusal> {
    let mut repairs = Vec::new();
    let (mut ask, mut asked) = (Some(mode), None);
    let mut mode =
        move || *asked.get_or_insert_with(|| ask.take().map_or(RepairMode::Off, |f| f()));
    let value = match raw {
        RawArguments::Missing => return Ok((Map::new(), repairs)),
        RawArguments::Text("") => return Ok((Map::new(), repairs)),
        RawArguments::Text(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::String(inner)) if mode() == RepairMode::Full => {
                let mut fixes = Vec::new();
                match envelope::decode_twice_encoded(&inner, !cut_off, &mut fixes) {
                    Ok(v) => {
                        repairs.extend(fixes.iter().map(messages::syntax_fix));
                        v
                    }
                    Err(_) => Value::String(inner),
                }
            }
            Ok(v) => v,
            // serde_json stops at 128 levels, like the conversion of a parsed object does. Its
            // error is told apart by its text, written out only for a text that could nest
            // that deeply (every other failure goes on to the lenient reader).
            Err(e)
                if could_nest_too_deeply(text)
                    && e.to_string().starts_with("recursion limit exceeded") =>
            {
                return Err(Refusal::new(
                    CallStatus::InvalidArgs,
                    messages::nested_too_deeply(tool),
                ))
            }
            Err(e) => {
                let lenient = match mode() {
                    RepairMode::Full => Some(envelope::read_arguments(text, !cut_off)),
                    _ => None,
                };
                match lenient {
                    Some(Ok((v, fixes))) => {
                        repairs.extend(fixes.iter().map(messages::syntax_fix));
                        v
                    }
                    Some(Err(Fault::TooDeep)) => {
                        return Err(Refusal::new(
                            CallStatus::InvalidArgs,
                            messages::nested_too_deeply(tool),
                        ))
                    }
                    other => {
                        let ended_early =
                            e.is_eof() || matches!(other, Some(Err(Fault::Incomplete)));
                        let text = if cut_off && ended_early {
                            messages::cut_off(tool)
                        } else {
                            messages::not_json(tool)
                        };
                        return Err(Refusal::new(CallStatus::InvalidArgs, text));
                    }
                }
            }
        },
        RawArguments::Parsed(v) => v,
    };
    match value {
        Value::Object(map) => Ok((map, repairs)),
        _ => Err(Refusal::new(
            CallStatus::InvalidArgs,
            messages::not_an_object(tool),
        )),
    }
}

/// Whether `text` holds enough opening brackets to reach `serde_json`'s limit of 128 levels.
fn could_nest_too_deeply(text: &str) -> bool {
    text.len() >= 128 && text.bytes().filter(|b| matches!(b, b'[' | b'{')).count() >= 128
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refusal(r: Result<Map<String, Value>, Refusal>) -> (CallStatus, String) {
        let r = r.unwrap_err();
        (r.status, r.text)
    }

    #[test]
    fn missing_or_empty_arguments_are_an_empty_object() {
        assert!(parse_arguments("t", RawArguments::Missing)
            .unwrap()
            .is_empty());
        assert!(parse_arguments("t", RawArguments::Text(""))
            .unwrap()
            .is_empty());
        let args = parse_arguments("t", RawArguments::Text(r#"{"a": 1}"#)).unwrap();
        assert_eq!(Value::Object(args), json!({"a": 1}));
    }

    #[test]
    fn bad_arguments_are_refused_with_their_reason() {
        assert_eq!(
            refusal(parse_arguments("t", RawArguments::Text("{oops"))),
            (
                CallStatus::InvalidArgs,
                "Error: arguments for tool 't' are not valid JSON".into()
            )
        );
        assert_eq!(
            refusal(parse_arguments("t", RawArguments::Text("[1, 2]"))),
            (
                CallStatus::InvalidArgs,
                "Error: arguments for tool 't' must be a JSON object".into()
            )
        );
        assert_eq!(
            refusal(parse_arguments("t", RawArguments::Parsed(json!("x")))).1,
            "Error: arguments for tool 't' must be a JSON object"
        );
        // NaN is not JSON, whatever some parsers accept.
        assert_eq!(
            refusal(parse_arguments("t", RawArguments::Text(r#"{"a": NaN}"#))).1,
            "Error: arguments for tool 't' are not valid JSON"
        );
    }

    #[test]
    fn hostile_nesting_is_refused_not_a_crash() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let text = format!(r#"{{"a": {deep}}}"#);
        assert_eq!(
            refusal(parse_arguments("t", RawArguments::Text(&text))).1,
            "Error: arguments for tool 't' are nested too deeply"
        );
    }

    #[test]
    fn the_depth_limit_holds_at_its_edge_with_or_without_repair() {
        // The object and 126 arrays: 127 levels read; one more is refused in every mode.
        let nested = |levels: usize| {
            let inner = levels - 1;
            format!(r#"{{"a": {}{}}}"#, "[".repeat(inner), "]".repeat(inner))
        };
        let full =
            |t: &str| parse_arguments_with("t", RawArguments::Text(t), || RepairMode::Full, false);
        assert!(parse_arguments("t", RawArguments::Text(&nested(127))).is_ok());
        assert!(full(&nested(127)).is_ok_and(|(_, fixes)| fixes.is_empty()));
        for text in [nested(128), nested(128).replace("]]}", "],]}")] {
            let too_deep = "Error: arguments for tool 't' are nested too deeply";
            assert_eq!(
                refusal(parse_arguments("t", RawArguments::Text(&text))).1,
                too_deep
            );
            assert_eq!(refusal(full(&text).map(|(map, _)| map)).1, too_deep);
        }
    }

    #[test]
    fn a_call_needs_an_id_then_a_name() {
        assert_eq!(
            check_call(None, Some("t")).unwrap_err().status,
            CallStatus::InvalidCall
        );
        assert!(check_call(Some(""), Some("t"))
            .unwrap_err()
            .text
            .contains("has no id"));
        assert_eq!(
            check_call(Some("c1"), None).unwrap_err().text,
            "Error: a tool call has no function name. It was not executed."
        );
        assert!(check_call(Some("c1"), Some("t")).is_ok());
    }
}
