//! Every text the pipeline gives the model in place of a tool's result. One place, so the
//! agent, the registry and an MCP server answer a refused call with the same words.

use crate::validation::{truncate, truncate_from};

/// A name the model sent that matched no checks yet is shown at most this long.
const SHOWN_NAME_CHARS: usize = 64;

fn shown(name: &str) -> String {
    truncate(name, SHOWN_NAME_CHARS)
}

pub fn no_id(name: &str) -> String {
    format!(
        "Error: the call to tool '{}' has no id; every tool call needs a unique id. It was not executed.",
        shown(name)
    )
}

pub fn no_name() -> String {
    "Error: a tool call has no function name. It was not executed.".to_owned()
}

pub fn not_json(name: &str) -> String {
    format!(
        "Error: arguments for tool '{}' are not valid JSON",
        shown(name)
    )
}

pub fn nested_too_deeply(name: &str) -> String {
    format!(
        "Error: arguments for tool '{}' are nested too deeply",
        shown(name)
    )
}

pub fn not_an_object(name: &str) -> String {
    format!(
        "Error: arguments for tool '{}' must be a JSON object",
        shown(name)
    )
}

/// A direct call (`execute_tool`) named its tool with something other than a string; `kind` is
/// the type the caller passed.
pub fn name_not_text(kind: &str) -> String {
    format!("Error: the tool name must be a string, got {kind}")
}

/// Arguments handed over as an object that holds something JSON cannot (`why` says what, and
/// where).
pub fn arguments_not_json(name: &str, why: &str) -> String {
    crate::validation::validation_failed(name, &format!("the arguments are not JSON: {why}"))
}

/// A tool function's return value that has no JSON form (`what` says what it is, and where
/// the offending part sits).
pub fn result_not_json(name: &str, what: &str) -> String {
    format!(
        "Error: tool '{name}' returned {what}, which cannot be sent to the model as JSON; return \
         str, JSON types (dict, list, str, int, float, bool, None), a dataclass, a pydantic \
         model or an Enum"
    )
}

/// Valid arguments that could not be handed to the tool once validation had pruned them.
pub fn cannot_take_arguments(name: &str, why: &str) -> String {
    format!("Error: tool '{name}' could not take its arguments: {why}")
}

/// A tool's `run` returned something other than a ToolResponse or a str.
pub fn not_a_response(name: &str, type_name: &str) -> String {
    format!("Error: tool '{name}' returned a {type_name} instead of a ToolResponse (or str); this is a bug in the tool")
}

/// An async-only tool called through a blocking entry point.
pub fn async_only(name: &str) -> String {
    format!("Error: tool '{name}' is async-only; it must be run through the async entry point (aexecute_tool / Agent.arun)")
}

/// An `async def` tool called synchronously on a thread whose event loop is running.
pub fn async_in_running_loop(name: &str) -> String {
    format!(
        "Error: tool '{name}' is an async function and this thread is already running an \
         event loop, so it cannot be run synchronously here; call it with aexecute_tool instead"
    )
}

/// A served call (MCP) that the host failed to run (`problem` is the exception as
/// `Type: message`).
pub fn serve_failed(name: &str, problem: &str) -> String {
    format!("Error: the server failed to run tool '{name}': {problem}")
}

/// An MCP call whose answer was lost (the client went away before it came).
pub fn mcp_call_abandoned() -> String {
    "Error: the MCP call was abandoned before it finished".to_owned()
}

/// Arguments for an MCP tool that have no JSON form (`why` says what, and where).
pub fn mcp_arguments_not_json(why: &str) -> String {
    format!("Error: MCP tool arguments are not JSON: {why}")
}

/// A command line the shell tool could not take apart (`why` says what is wrong with it).
pub fn unusable_arguments(name: &str, why: &str) -> String {
    format!("Error: tool '{name}' got unusable arguments: {why}")
}

/// A tool whose own worker failed before it produced a result.
pub fn tool_failed(name: &str, why: &str) -> String {
    format!("Error: tool '{name}' failed: {why}")
}

/// The reply was cut off by the model's token limit inside the arguments: they are never
/// completed (the missing part may hold arguments), and the model is told why.
pub fn cut_off(name: &str) -> String {
    format!(
        "Error: the arguments for tool '{}' were cut off: your reply reached its token limit \
         before they were complete, so the call was not run. Send the call again, shorter if \
         it must be.",
        shown(name)
    )
}

/// A value shown inside a repair note: compact JSON, at most this long.
const SHOWN_VALUE_CHARS: usize = 40;
/// The note at the end of a repaired call's text lists at most this many repairs.
const NOTED_REPAIRS: usize = 5;

fn shown_path(path: &str) -> String {
    truncate(path, SHOWN_NAME_CHARS)
}

/// A value coerced to the schema: `'a': "1" → 1`. Written into one string (a call with a
/// type fault writes one of these for each value changed).
pub fn coerced(path: &str, old: &serde_json::Value, new: &serde_json::Value) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(path.len() + 24);
    text.push('\'');
    text.push_str(path);
    truncate_from(&mut text, 1, SHOWN_NAME_CHARS);
    text.push_str("': ");
    for (i, value) in [old, new].into_iter().enumerate() {
        if i == 1 {
            text.push_str(" → ");
        }
        let start = text.len();
        let _ = write!(text, "{value}"); // writing into a String cannot fail
        truncate_from(&mut text, start, SHOWN_VALUE_CHARS);
    }
    text
}

/// A key renamed to the property it matched: `'UserName' → 'user_name'`.
pub fn renamed(parent: &str, key: &str, property: &str) -> String {
    let (key, property) = if parent.is_empty() {
        (key.to_owned(), property.to_owned())
    } else {
        (format!("{parent}.{key}"), format!("{parent}.{property}"))
    };
    format!("'{}' → '{}'", shown_path(&key), shown_path(&property))
}

fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("\"{}\"", truncate(s, SHOWN_VALUE_CHARS)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An enum value that matches several allowed values once case, `-` and `_` are ignored.
pub fn ambiguous_value(path: &str, sent: &str, candidates: &[&str]) -> String {
    format!(
        "'{}': \"{}\" matches more than one allowed value ({}); it was not changed",
        shown_path(path),
        truncate(sent, SHOWN_VALUE_CHARS),
        quoted_list(candidates)
    )
}

/// An unknown key that matches several missing properties.
pub fn ambiguous_name(parent: &str, key: &str, candidates: &[&str]) -> String {
    let key = if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    };
    format!(
        "'{}' matches more than one parameter ({}); it was not renamed",
        shown_path(&key),
        quoted_list(candidates)
    )
}

/// Several unknown keys that match the same missing property.
pub fn ambiguous_keys(parent: &str, property: &str, keys: &[&str]) -> String {
    let property = if parent.is_empty() {
        property.to_owned()
    } else {
        format!("{parent}.{property}")
    };
    // The keys come from the model, so there may be thousands: a few are named.
    let listed = quoted_list(&keys[..keys.len().min(NOTED_REPAIRS)]);
    let more = match keys.len().saturating_sub(NOTED_REPAIRS) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "more than one key could mean '{}' ({listed}{more}); none was renamed",
        shown_path(&property),
    )
}

/// A validation failure followed by what could not be repaired without guessing.
pub fn with_ambiguities(failure: String, ambiguities: &[String]) -> String {
    if ambiguities.is_empty() {
        return failure;
    }
    format!(
        "{failure}\nNot repaired (more than one reading fits): {}",
        ambiguities.join("; ")
    )
}

/// What the lenient reader repaired in the arguments text.
pub fn syntax_fix(fix: &super::repair::lenient::Fix) -> String {
    use super::repair::lenient::Fix;
    match fix {
        Fix::Fence => "code fence removed".into(),
        Fix::Prose => "text around the JSON object removed".into(),
        Fix::TrailingComma => "trailing comma removed".into(),
        Fix::SingleQuotes => "single-quoted strings read as JSON strings".into(),
        Fix::UnquotedKey => "unquoted keys quoted".into(),
        Fix::Literal(from, to) => format!("{from} → {to}"),
        Fix::Comment => "comments removed".into(),
        Fix::LineBreakInString => "line breaks inside strings escaped".into(),
        Fix::Closed(brackets) => format!("missing '{brackets}' added at the end"),
        Fix::DoubleEncoded => "the object was sent as a JSON string; decoded".into(),
    }
}

/// The note at the end of the text the model reads for a call whose arguments were repaired,
/// so it can send them right the next time.
pub fn repair_note(repairs: &[String]) -> String {
    let mut listed: Vec<&str> = repairs
        .iter()
        .take(NOTED_REPAIRS)
        .map(String::as_str)
        .collect();
    let more;
    if repairs.len() > NOTED_REPAIRS {
        more = format!("and {} more", repairs.len() - NOTED_REPAIRS);
        listed.push(&more);
    }
    format!(
        "\n\n(Note: the arguments of this call were repaired before it ran: {}. Send arguments \
         that match the schema exactly.)",
        listed.join("; ")
    )
}

/// The unknown-tool text, listing or suggesting the names the caller may reveal.
pub fn unknown_tool(name: &str, visible: &[&str]) -> String {
    crate::registry::unknown_tool_message(name, visible, false)
}

pub fn denied(reason: &str) -> String {
    format!("(not allowed to call: {reason})")
}

/// `problem` is the exception as `Type: message`.
pub fn confirmation_rule_failed(name: &str, problem: &str) -> String {
    format!("Error: tool '{name}' could not decide whether the call needs confirmation ({problem}); it was not executed.")
}

pub fn no_confirm_callback(name: &str) -> String {
    format!(
        "Error: tool '{name}' is a high-risk operation and needs confirmation, but no confirm \
         callback is configured; the call was refused (give the Agent confirm=..., e.g. cli_confirm)."
    )
}

pub fn confirmation_failed(name: &str, problem: &str) -> String {
    format!(
        "Error: the confirmation for tool '{name}' failed ({problem}); the call was not executed."
    )
}

/// A served call (MCP) that needs confirmation, from a client that cannot be asked.
pub fn no_elicitation(name: &str) -> String {
    format!(
        "Error: tool '{name}' is a high-risk operation and needs confirmation, but this MCP \
         client does not support elicitation, so no one can be asked; the call was refused."
    )
}

pub fn not_approved(name: &str) -> String {
    format!("Error: tool '{name}' was not approved; the call was not executed.")
}

/// A person refused the call and said why.
pub fn declined(name: &str, reason: &str) -> String {
    format!("Error: tool '{name}' was not approved: {reason}. The call was not executed.")
}

/// What a paused call's record says until a person decides (the model never reads it: the run
/// is paused, and resuming replaces it with the call's result or refusal).
pub fn pending(name: &str) -> String {
    format!("(tool '{name}' awaits a person's approval; the run is paused)")
}

pub fn timed_out(name: &str, seconds: f64) -> String {
    format!(
        "Error: tool '{name}' did not finish within {} seconds; the call was abandoned.",
        general_number(seconds)
    )
}

/// An isolated tool's call overran its timeout; its worker was stopped.
pub fn stopped_after(name: &str, seconds: f64) -> String {
    format!(
        "Error: tool '{name}' timed out after {} s; the tool was stopped.",
        general_number(seconds)
    )
}

/// An isolated tool's worker crossed one of its limits and was stopped.
pub fn over_limit(name: &str, limit: &str) -> String {
    format!("Error: tool '{name}' exceeded its {limit}; the tool was stopped and the call has no result.")
}

/// An isolated tool's worker died during the call (`how`: "killed by SIGSEGV", "exit status 3").
pub fn worker_died(name: &str, how: &str) -> String {
    format!("Error: tool '{name}' ended its worker process ({how}); the call has no result.")
}

/// Why an isolated call was not sent to a worker: `place` ("line 12 of /path/script.py", or the
/// script's path when the line is unknown) runs it from the main script's top-level code, which
/// a worker process started by the fork server would run again when it imports the script.
pub fn unguarded_script(place: &str) -> String {
    format!(
        "{place} calls it from the script's top-level code, which every worker process would run again when it imports the script; put that code under if __name__ == \"__main__\":"
    )
}

/// An isolated tool could not be run in a worker.
pub fn cannot_isolate(name: &str, why: &str) -> String {
    format!("Error: tool '{name}' could not run in a worker process: {why}")
}

/// An exception the tool raised (`problem` is `Type: message`, or just `Type` when the message
/// is empty); also the last net for one the tool's own conversion did not turn into a result.
pub fn raised(name: &str, problem: &str) -> String {
    format!("Error: tool '{name}' raised during execution: {problem}")
}

pub fn wrong_result_type(name: &str, type_name: &str) -> String {
    format!("Error: tool '{name}' returned {type_name} instead of a ToolResponse")
}

pub fn skipped() -> String {
    "(not run: an earlier tool call ended the run)".to_owned()
}

/// A number of seconds as people write it: at most six significant digits, no trailing zeros,
/// an exponent only for very small or very large values (`0.2`, `1`, `5e-05`, `1.5e+06`).
pub fn general_number(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let mantissa = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_owned()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_python_general_format() {
        for (x, want) in [
            (0.2, "0.2"),
            (1.0, "1"),
            (30.0, "30"),
            (0.05, "0.05"),
            (0.0001, "0.0001"),
            (0.00005, "5e-05"),
            (1234567.0, "1.23457e+06"),
            (123456.0, "123456"),
            (2.5, "2.5"),
            (1.0 / 3.0, "0.333333"),
        ] {
            assert_eq!(general_number(x), want, "{x}");
        }
    }

    #[test]
    fn texts_name_the_tool_and_what_happened() {
        assert_eq!(
            timed_out("slow", 0.2),
            "Error: tool 'slow' did not finish within 0.2 seconds; the call was abandoned."
        );
        assert_eq!(
            denied("tool 'rm' is denied"),
            "(not allowed to call: tool 'rm' is denied)"
        );
        assert!(no_confirm_callback("rm").contains("no confirm callback is configured"));
        assert!(no_elicitation("rm").contains("does not support elicitation"));
        assert_eq!(
            not_approved("rm"),
            "Error: tool 'rm' was not approved; the call was not executed."
        );
        assert_eq!(
            declined("rm", "not on Fridays"),
            "Error: tool 'rm' was not approved: not on Fridays. The call was not executed."
        );
        assert_eq!(
            raised("t", "ValueError: bad"),
            "Error: tool 't' raised during execution: ValueError: bad"
        );
    }

    #[test]
    fn direct_call_texts_read_like_the_pipelines() {
        assert_eq!(
            name_not_text("int"),
            "Error: the tool name must be a string, got int"
        );
        assert_eq!(
            arguments_not_json("t", "a value of type set (not JSON) at 'x'"),
            "Error: tool 't' failed parameter validation: the arguments are not JSON: a value of type set (not JSON) at 'x'"
        );
        assert!(not_a_response("t", "dict").contains("returned a dict instead of a ToolResponse"));
        assert!(async_only("t").contains("aexecute_tool / Agent.arun"));
        assert!(async_in_running_loop("t").ends_with("call it with aexecute_tool instead"));
        assert_eq!(
            serve_failed("t", "ValueError: no"),
            "Error: the server failed to run tool 't': ValueError: no"
        );
    }

    #[test]
    fn isolation_texts_say_what_stopped_the_tool() {
        assert_eq!(
            stopped_after("spin", 0.2),
            "Error: tool 'spin' timed out after 0.2 s; the tool was stopped."
        );
        assert_eq!(
            over_limit("hog", "memory limit (256 MB)"),
            "Error: tool 'hog' exceeded its memory limit (256 MB); the tool was stopped and the call has no result."
        );
        assert!(worker_died("t", "killed by SIGSEGV").contains("(killed by SIGSEGV)"));
    }

    #[test]
    fn a_huge_name_from_the_model_is_shortened() {
        let text = not_json(&"x".repeat(10_000));
        assert!(text.len() < 200, "{text}");
        assert!(text.contains('…'));
    }
}
