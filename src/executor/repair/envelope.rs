//! Finding the one object in what a model sent as arguments: inside a code fence, between
//! sentences, or encoded a second time as a JSON string. The object itself is read by
//! [`super::lenient`].

use super::lenient::{note, read_value, Fault, Fix};
use serde_json::Value;

/// Texts longer than this are not repaired (they are refused as invalid JSON, as before).
pub const MAX_REPAIR_BYTES: usize = 1 << 20;

/// Reads the arguments object from `text`, which strict parsing refused. `may_close`: brackets
/// missing at the very end may be added (the model ended its reply itself). The value is
/// whatever the text holds (the caller refuses one that is not an object).
pub fn read_arguments(text: &str, may_close: bool) -> Result<(Value, Vec<Fix>), Fault> {
    if text.len() > MAX_REPAIR_BYTES {
        return Err(Fault::Invalid);
    }
    let mut fixes = Vec::new();
    let body = unfence(text, &mut fixes)?;
    let start = body.len() - body.trim_start().len();
    match body.as_bytes().get(start) {
        None => Err(Fault::Invalid),
        Some(b'"' | b'\'') => {
            let (value, end) = read_value(body, start, true, &mut fixes)?;
            if !body[end..].trim().is_empty() {
                return Err(Fault::Invalid);
            }
            let Value::String(inner) = value else {
                return Err(Fault::Invalid);
            };
            let value = decode_twice_encoded(&inner, may_close, &mut fixes)?;
            Ok((value, fixes))
        }
        Some(_) => {
            let open = body[start..].find('{').ok_or(Fault::Invalid)? + start;
            let before = &body[start..open];
            if before.contains(['[', ']', '}']) {
                return Err(Fault::Invalid);
            }
            let (value, end) = read_value(body, open, may_close, &mut fixes)?;
            let after = body[end..].trim();
            // Only prose around one object: a second object, or stray brackets, is no repair.
            if after.contains(['{', '}', '[', ']']) {
                return Err(Fault::Invalid);
            }
            if !before.trim().is_empty() || !after.is_empty() {
                note(&mut fixes, Fix::Prose);
            }
            Ok((value, fixes))
        }
    }
}

/// A JSON string that holds the object (strictly valid JSON text whose value is a string):
/// the object, read strictly and then leniently, never decoded a third time.
pub fn decode_twice_encoded(
    inner: &str,
    may_close: bool,
    fixes: &mut Vec<Fix>,
) -> Result<Value, Fault> {
    if inner.len() > MAX_REPAIR_BYTES {
        return Err(Fault::Invalid);
    }
    let trimmed = inner.trim();
    if !trimmed.starts_with('{') {
        return Err(Fault::Invalid);
    }
    let value = match serde_json::from_str::<Value>(trimmed) {
        Ok(v) => v,
        Err(_) => {
            let (v, end) = read_value(trimmed, 0, may_close, fixes)?;
            if !trimmed[end..].trim().is_empty() {
                return Err(Fault::Invalid);
            }
            v
        }
    };
    if !value.is_object() {
        return Err(Fault::Invalid);
    }
    note(fixes, Fix::DoubleEncoded);
    Ok(value)
}

/// The text inside a Markdown code fence (```` ```json ... ``` ````), or the whole text.
fn unfence<'a>(text: &'a str, fixes: &mut Vec<Fix>) -> Result<&'a str, Fault> {
    let Some(open) = text.find("```") else {
        return Ok(text);
    };
    let after = &text[open + 3..];
    // The info string (`json`) runs to the end of the fence's line.
    let line_end = after.find('\n').ok_or(Fault::Invalid)?;
    let info = after[..line_end].trim();
    if !info.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(Fault::Invalid);
    }
    let body = &after[line_end + 1..];
    let body = match body.find("```") {
        Some(close) => {
            if body[close + 3..].contains("```") {
                return Err(Fault::Invalid); // a second fence: which one was meant?
            }
            &body[..close]
        }
        None => body,
    };
    note(fixes, Fix::Fence);
    Ok(body)
}
