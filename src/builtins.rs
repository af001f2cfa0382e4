//! Built-in tools implemented in Rust. Each one implements [`crate::tool::NativeTool`], so the
//! registry calls it without crossing into Python.

pub mod agent_tool;
pub mod calculator;
pub mod cli;
pub mod confined_dir;
#[cfg(feature = "search")]
pub mod fetch;
pub mod notes;
#[cfg(test)]
mod scratch_dir;
#[cfg(feature = "search")]
pub mod search;
pub mod skills;
pub mod todos;
pub mod user_input;
pub mod workspace;
