//! Built-in tools implemented in Rust. Each one implements [`crate::tool::NativeTool`], so the
//! registry calls it without crossing into Python.

pub mod calculator;
pub mod cli;
#[cfg(feature = "search")]
pub mod fetch;
pub mod notes;
#[cfg(feature = "search")]
pub mod search;
pub mod workspace;
