//! Gate 1: the call is well formed. A model's tool call names a function and carries its
//! arguments as JSON text (OpenAI, and the agent's neutral form) or as an object already parsed
//! (SDK objects, Anthropic and Gemini codecs).

use super::messages;
use super::prepare::Refusal;
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

/// The arguments as a JSON object, or the refusal the model reads.
pub fn parse_arguments(tool: &str, raw: RawArguments<'_>) -> Result<Map<String, Value>, Refusal> {
    let value = match raw {
        RawArguments::Missing => return Ok(Map::new()),
        RawArguments::Text("") => return Ok(Map::new()),
        RawArguments::Text(text) => match serde_json::from_str::<Value>(text) {
            Ok(v) => v,
            // serde_json stops at 128 levels, like the conversion of a parsed object does.
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                return Err(Refusal::new(
                    CallStatus::InvalidArgs,
                    messages::nested_too_deeply(tool),
                ))
            }
            Err(_) => {
                return Err(Refusal::new(
                    CallStatus::InvalidArgs,
                    messages::not_json(tool),
                ))
            }
        },
        RawArguments::Parsed(v) => v,
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Refusal::new(
            CallStatus::InvalidArgs,
            messages::not_an_object(tool),
        )),
    }
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
