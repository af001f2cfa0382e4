//! What a tool is, independent of where it is implemented (Rust, Python or a remote server).

use crate::response::ToolResponse;
use crate::schema::{root_schema, ToolParameter};
use serde_json::Value;

/// Origin stamped on tools defined in this process. Remote tools get `mcp:{namespace}`.
pub const BUILTIN_ORIGIN: &str = "builtin";

/// Everything the registry needs to know about a tool besides how to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Vec<ToolParameter>,
    /// A complete root schema that replaces the one synthesized from `parameters`
    /// (inferred Python signatures with `$defs`, remote MCP schemas).
    pub input_schema: Option<Value>,
    pub requires_confirmation: bool,
    pub external_content: bool,
    pub supports_parallel: bool,
}

impl ToolSpec {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Vec<ToolParameter>,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
            input_schema: None,
            requires_confirmation: false,
            external_content: false,
            supports_parallel: false,
        }
    }

    /// The root JSON Schema of the tool's arguments.
    pub fn schema(&self) -> Value {
        match &self.input_schema {
            Some(schema) => schema.clone(),
            None => root_schema(&self.parameters),
        }
    }
}

/// A tool implemented in Rust. `call` may block (a subprocess, an HTTP request): the binding
/// runs it with the GIL released, and off the event loop on the async path.
pub trait NativeTool: Send + Sync {
    fn spec(&self) -> &ToolSpec;

    fn call(&self, args: &Value) -> ToolResponse;

    /// [`NativeTool::call`] for a caller that can be interrupted (the binding checks for
    /// Ctrl-C in `interrupted`). A tool that waits long on something else (an MCP server)
    /// asks it now and then and, when it returns true, gives up on the call (cancelling what
    /// it can) and returns `None`. By default the call just runs.
    fn call_interruptible(
        &self,
        args: &Value,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Option<ToolResponse> {
        let _ = interrupted;
        Some(self.call(args))
    }

    /// Per-call confirmation decision (NotesTool asks only for appends).
    fn needs_confirmation(&self, _args: &Value) -> bool {
        self.spec().requires_confirmation
    }

    /// Whether `call` can block for long (I/O, a subprocess). Non-blocking tools are called
    /// inline on the async path instead of paying for a worker-thread hop.
    fn blocks(&self) -> bool {
        true
    }

    /// Whether the tool also has a native asynchronous call that cancelling the awaiting task
    /// really stops (an MCP tool waits on a server, not on a thread, and tells it; a CLI
    /// command's process group is killed): async callers should await it rather than run the
    /// blocking [`NativeTool::call`] on a worker thread, which nothing can stop.
    fn awaitable(&self) -> bool {
        false
    }

    /// Per-call decision whether the result is external content to be wrapped.
    fn is_external_content(&self, _args: &Value) -> bool {
        self.spec().external_content
    }
}

/// The function-calling name rule `^[a-zA-Z0-9_-]{1,64}$`, applied to the whole string
/// (a trailing newline is not tolerated, unlike Python's `re.match` with `$`).
pub fn check_tool_name(name: &str) -> Result<(), crate::error::RegistrationError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(crate::error::RegistrationError::IllegalName {
            name: name.to_string(),
        })
    }
}

/// Maps any string onto the name rule: disallowed characters become `_`, the result is cut to
/// 64 characters, and an empty result becomes `tool`.
pub fn sanitize_tool_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if out.is_empty() {
        out.push_str("tool");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rule_accepts_legal_names() {
        for name in ["a", "calculator", "to_upper", "my-tool-2", &"x".repeat(64)] {
            assert!(check_tool_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn name_rule_rejects_illegal_names() {
        for name in [
            "",
            "calc\n",
            "a b",
            "a.b",
            "名字",
            "tool!",
            &"x".repeat(65),
            "\ncalc",
        ] {
            assert!(check_tool_name(name).is_err(), "{name:?}");
        }
        let msg = check_tool_name("calc\n").unwrap_err().to_string();
        assert!(
            msg.contains(r#""calc\n""#) && msg.contains("rename"),
            "{msg}"
        );
    }

    #[test]
    fn sanitize_maps_onto_the_rule() {
        assert_eq!(sanitize_tool_name("a.b c/d"), "a_b_c_d");
        assert_eq!(sanitize_tool_name("名字"), "__");
        assert_eq!(sanitize_tool_name(""), "tool");
        assert_eq!(sanitize_tool_name(&"y".repeat(100)).len(), 64);
        assert!(check_tool_name(&sanitize_tool_name("x\ny")).is_ok());
    }
}
