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

/// The argument under which a run's call pipeline hands a tool that keeps state per run
/// ([`NativeTool::keeps_run_state`]) the run's id.
pub const RUN_KEY: &str = "_agentmaker_run";

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

    /// Checks the arguments of a direct call (`tool.run(...)`, `await tool.arun(...)`, outside
    /// a registry, which validates on its own) and returns the error text for the model, or
    /// the arguments to call with. Tools that validate inside `call` keep the default.
    fn check_direct_args(&self, args: Value) -> Result<Value, String> {
        Ok(args)
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

    /// Whether the tool keeps state per agent run (the workspace's read-before-write records):
    /// a run's call pipeline then adds the run's id to the validated arguments under
    /// [`RUN_KEY`] (no schema shows it; calls outside a run have none).
    fn keeps_run_state(&self) -> bool {
        false
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

/// The longest tool name the registry accepts, in characters.
pub const MAX_TOOL_NAME_CHARS: usize = 128;

/// The registry's name rule: 1 to 128 characters, none of them whitespace or a control
/// character. Dots, `::`, `/` and non-ASCII letters are allowed: a provider that needs a
/// stricter name gets a wire name (see [`is_wire_safe`]), the tool keeps its real name
/// everywhere else.
pub fn check_tool_name(name: &str) -> Result<(), crate::error::RegistrationError> {
    let illegal = |reason: String| {
        Err(crate::error::RegistrationError::IllegalName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() {
        return illegal("it is empty".into());
    }
    let mut count = 0;
    for (i, c) in name.chars().enumerate() {
        count += 1;
        if c.is_whitespace() || c.is_control() {
            let what = if c.is_whitespace() {
                "whitespace"
            } else {
                "a control character"
            };
            return illegal(format!(
                "character {} is {what} (U+{:04X})",
                i + 1,
                c as u32
            ));
        }
    }
    if count > MAX_TOOL_NAME_CHARS {
        return illegal(format!(
            "it is {count} characters long, more than {MAX_TOOL_NAME_CHARS}"
        ));
    }
    Ok(())
}

/// Which names a registry accepts. `Strict` (the default) is the function-calling rule of the
/// guide, `^[a-zA-Z0-9_-]{1,64}$`: every name goes to every provider unchanged. `Catalog` is the
/// opt-in for catalogs whose real names hold dots, `::` or `/` (Tool-RAG over an API catalog):
/// [`check_tool_name`]'s rule, with providers shown a wire name (see `wire.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NameRule {
    #[default]
    Strict,
    Catalog,
}

impl std::str::FromStr for NameRule {
    type Err = crate::error::RegistrationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "strict" => Ok(NameRule::Strict),
            "catalog" => Ok(NameRule::Catalog),
            other => Err(crate::error::RegistrationError::NameRule {
                got: other.to_string(),
            }),
        }
    }
}

impl NameRule {
    pub fn as_str(self) -> &'static str {
        match self {
            NameRule::Strict => "strict",
            NameRule::Catalog => "catalog",
        }
    }

    /// Checks `name` against this rule; the error says which character or length broke it and
    /// what to change.
    pub fn check(self, name: &str) -> Result<(), crate::error::RegistrationError> {
        if self == NameRule::Catalog || is_wire_safe(name) {
            return check_tool_name(name);
        }
        let count = name.chars().count();
        let reason = match name
            .chars()
            .enumerate()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            _ if name.is_empty() => "it is empty".to_string(),
            Some((i, c)) if c.is_whitespace() || c.is_control() => {
                format!("character {} is U+{:04X}", i + 1, c as u32)
            }
            Some((i, c)) => format!("character {} is {c:?}", i + 1),
            None => format!("it is {count} characters long, more than 64"),
        };
        Err(crate::error::RegistrationError::StrictName {
            name: name.to_string(),
            reason,
            hint: if check_tool_name(name).is_ok() {
                ", or create the registry with ToolRegistry(names=\"catalog\") to keep catalog names \
                 such as math.factorial (providers are sent a wire name)"
            } else {
                ""
            },
        })
    }
}

/// Whether `name` can go on the wire unchanged: it meets the function-name rule shared by
/// OpenAI (Chat Completions `tools[].function.name`: "a-z, A-Z, 0-9, or underscores and dashes,
/// with a maximum length of 64") and Anthropic (Messages API tool `name`: pattern
/// `^[a-zA-Z0-9_-]{1,64}$`). Gemini's `FunctionDeclaration.name` (Vertex AI / Gemini API
/// reference) must start with a letter or an underscore and may also hold dots (and, in newer
/// versions, colons), up to 64 characters; its `FunctionCall.name` keeps the OpenAI character
/// set. Every wire name [`wire_base`] makes meets all of these, so one wire name serves the three
/// providers. (An already-safe name that starts with a digit or `-` is rendered unchanged, as
/// before; Gemini may refuse it.)
pub fn is_wire_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The readable wire form of a name that is not wire-safe, before any collision suffix: each
/// run of other characters becomes one `_`, a name that would not start with a letter or `_`
/// gets a leading `_` (Gemini's rule), and the result is cut to 64 characters.
pub fn wire_base(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(64));
    let mut in_run = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out.truncate(64);
    out
}

/// Maps any string onto the wire rule: disallowed characters become `_`, the result is cut to
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
    fn name_rule_accepts_real_names() {
        for name in [
            "a",
            "calculator",
            "my-tool-2",
            "math.factorial",
            "svc::endpoint",
            "fs/read",
            "名字",
            &"x".repeat(128),
        ] {
            assert!(check_tool_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn name_rule_rejects_whitespace_control_and_length() {
        for (name, why) in [
            ("", "empty"),
            ("calc\n", "character 5 is whitespace (U+000A)"),
            ("a b", "character 2 is whitespace (U+0020)"),
            ("a\u{7}", "character 2 is a control character (U+0007)"),
            (&"x".repeat(129), "129 characters long"),
        ] {
            let msg = check_tool_name(name).unwrap_err().to_string();
            assert!(msg.contains(why) && msg.contains("rename"), "{msg}");
        }
    }

    #[test]
    fn strict_rule_is_the_function_calling_rule() {
        for name in ["a", "to_upper", "-x", "A-9_z", &"x".repeat(64)] {
            assert!(NameRule::Strict.check(name).is_ok(), "{name}");
        }
        for (name, why, hint) in [
            ("math.factorial", "character 5 is '.'", true),
            ("fs/read", "character 3 is '/'", true),
            ("名字", "character 1 is '名'", true),
            (&"x".repeat(65), "65 characters long, more than 64", true),
            ("calc\n", "character 5 is U+000A", false),
            ("", "it is empty", false),
        ] {
            let msg = NameRule::Strict.check(name).unwrap_err().to_string();
            assert!(
                msg.contains("^[a-zA-Z0-9_-]{1,64}$") && msg.contains(why),
                "{msg}"
            );
            assert_eq!(msg.contains("names=\"catalog\""), hint, "{msg}");
            assert!(msg.contains("rename the tool"), "{msg}");
        }
        assert!(NameRule::Catalog.check("math.factorial").is_ok());
        assert!(NameRule::Catalog.check("a b").is_err());
        assert_eq!("catalog".parse::<NameRule>(), Ok(NameRule::Catalog));
        assert!("loose"
            .parse::<NameRule>()
            .unwrap_err()
            .to_string()
            .contains("\"strict\""));
    }

    #[test]
    fn wire_rule_and_base() {
        assert!(is_wire_safe("to_upper") && !is_wire_safe("a.b") && !is_wire_safe(&"x".repeat(65)));
        assert_eq!(wire_base("math.factorial"), "math_factorial");
        assert_eq!(wire_base("svc::get / item"), "svc_get_item");
        assert_eq!(wire_base("1.x"), "_1_x");
        assert_eq!(wire_base(&"y".repeat(100)).len(), 64);
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
