//! MCP client: remote tools from an MCP server, treated as untrusted.
//!
//! Built on the Rust `rmcp` SDK. A [`client::McpClient`] owns one connection (a stdio child
//! process or a streamable-HTTP endpoint); [`client::McpClient::load_tools`] lists the server's
//! tools and turns each into an [`client::McpTool`], a [`crate::tool::NativeTool`] with a
//! namespaced display name, origin `mcp:{namespace}`, external content, confirmation per the
//! client, a fingerprint ([`fingerprint`]) and a prepared input schema ([`schema`]). Texts
//! from the server are cleaned by [`sanitize`]; results are bounded by [`result`].

pub mod bounded;
pub mod catalog;
pub mod client;
pub mod fingerprint;
pub mod http;
pub mod http_client;
pub mod http_events;
pub mod line_guard;
pub mod own_messages;
pub mod remote_tool;
pub mod result;
pub mod resumed_streams;
pub use crate::sanitize;
pub mod schema;
pub mod stdio;
pub mod stdio_transport;

use crate::error::ConfigError;
use crate::prompts::Prompts;
use std::collections::HashMap;

/// Prompt keys used by MCP tools (overridable with `prompts=`).
pub struct MessageKey;

impl MessageKey {
    pub const NO_SESSION: &'static str = "tool.msg.mcp.no_session";
    pub const STALE_SESSION: &'static str = "tool.msg.mcp.stale_session";
    pub const FORKED: &'static str = "tool.msg.mcp.forked";
    pub const TIMEOUT: &'static str = "tool.msg.mcp.timeout";
    pub const NO_TEXT: &'static str = "tool.msg.mcp.no_text";
    pub const ERROR: &'static str = "tool.msg.mcp.error";
    pub const FAILED: &'static str = "tool.msg.mcp.failed";
}

/// Default English texts for [`MessageKey`].
pub const DEFAULT_PROMPTS: &[(&str, &str)] = &[
    (
        MessageKey::NO_SESSION,
        "Error: the MCP session is not established or has been closed; call within the `async with MCPClient(...)` block.",
    ),
    (
        MessageKey::STALE_SESSION,
        "Error: this MCP tool was loaded in an earlier session of its client, which has been closed; call load_tools() again and use the tools it returns.",
    ),
    (
        MessageKey::FORKED,
        "Error: this MCP tool's client was opened before this process was forked, and its connection belongs to the parent process; open a new MCPClient in this process.",
    ),
    (MessageKey::TIMEOUT, "Error: the MCP tool call timed out (>{timeout}s) and was aborted"),
    (MessageKey::NO_TEXT, "(the tool produced no text output)"),
    (MessageKey::ERROR, "Error: {text}"),
    (MessageKey::FAILED, "Error: the MCP tool call failed: {err}"),
];

/// The MCP prompts with user overrides applied (unknown keys are refused). An override of
/// `no_session` alone also words `stale_session` and `forked` (added later: a translation of
/// the first should not meet English for the others).
pub fn default_prompts(overrides: Option<HashMap<String, String>>) -> Result<Prompts, ConfigError> {
    let overrides = overrides.map(|mut o| {
        if let Some(text) = o.get(MessageKey::NO_SESSION).cloned() {
            o.entry(MessageKey::STALE_SESSION.to_owned())
                .or_insert_with(|| text.clone());
            o.entry(MessageKey::FORKED.to_owned()).or_insert(text);
        }
        o
    });
    Prompts::new(DEFAULT_PROMPTS, overrides)
}
