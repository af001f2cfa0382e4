//! agentmaker: the tool layer for LLM agents.
//!
//! The core (everything outside `py`) knows nothing of Python: tools are described by a
//! [`tool::ToolSpec`], their arguments are `serde_json::Value`s validated against one compiled
//! JSON Schema, and results are [`response::ToolResponse`]s. The `python` feature adds the PyO3
//! binding that builds `agentmaker._native`. Each networked part is a cargo feature
//! (`mcp-client`, `mcp-server`, `llm`, `search`; all on by default), so
//! `--no-default-features` builds the core alone.

pub mod builtins;
pub mod docstring;
pub mod error;
pub mod executor;
pub mod guard;
pub mod isolation;
#[cfg(feature = "llm")]
pub mod llm;
#[cfg(feature = "mcp-client")]
pub mod mcp;
#[cfg(feature = "mcp-server")]
pub mod mcp_server;
#[cfg(any(feature = "mcp-client", feature = "llm", feature = "search"))]
pub mod net;
pub mod null_optional;
pub mod permissions;
pub mod prompts;
pub mod rag;
pub mod registry;
pub mod render;
pub mod response;
pub mod run_policy;
pub mod runtime;
pub mod sanitize;
pub mod schema;
pub mod sha256;
#[cfg(any(feature = "mcp-client", feature = "llm"))]
pub mod sse;
pub mod tool;
pub mod validation;
pub mod wire;

#[cfg(feature = "python")]
mod py;

pub use error::RegistrationError;
pub use prompts::Prompts;
pub use registry::{ConflictMode, Registry};
pub use response::{ToolResponse, ToolStatus};
pub use schema::ToolParameter;
pub use tool::{check_tool_name, is_wire_safe, wire_base, NameRule, NativeTool, ToolSpec};
