//! Workspace: file tools confined to one directory (`ls`, `read_file`, `write_file`,
//! `edit_file`, `multi_edit`, `glob`, `grep`), with the notes tool's confinement
//! (see `confine.rs`), a deny list for secret files (`secrets.rs`) and a read-before-write
//! check (`freshness.rs`).
//!
//! One [`Workspace`] holds the root descriptor, the options and what the agent has read; each
//! tool is a [`WorkspaceTool`] sharing it. Read tools (`ls`, `read_file`, `glob`, `grep`) may run
//! in parallel and are flagged read-only; write tools (`write_file`, `edit_file`, `multi_edit`)
//! run one at a time and are flagged destructive. Their results are the workspace's own files,
//! framed as external content like the notes tool's reads.

mod confine;
mod edit;
mod freshness;
mod glob;
mod grep;
mod ls;
mod read;
mod replace;
mod secrets;
mod setup;
mod texts;
mod walk;
mod write;

#[cfg(test)]
mod tests;

use crate::prompts::Prompts;
use crate::response::ToolResponse;
use crate::tool::{NativeTool, ToolSpec};
use confine::{Refusal, RelPath, Root};
use freshness::Seen;
use secrets::DenyList;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

pub use secrets::DEFAULT_DENY;
pub use setup::{WorkspaceOptions, WorkspaceSetupError};
pub use texts::PROMPTS;

/// The tools in the order they are offered.
pub const TOOL_NAMES: &[&str] = &[
    "ls",
    "read_file",
    "glob",
    "grep",
    "write_file",
    "edit_file",
    "multi_edit",
];

/// The state the workspace tools share.
pub struct Workspace {
    root: Root,
    root_text: String,
    prompts: Prompts,
    deny: Arc<DenyList>,
    seen: Seen,
    opts: WorkspaceOptions,
}

/// One workspace tool.
pub struct WorkspaceTool {
    ws: Arc<Workspace>,
    kind: Kind,
    spec: ToolSpec,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ls,
    Read,
    Glob,
    Grep,
    Write,
    Edit,
    MultiEdit,
}

impl Workspace {
    pub fn new(root: &Path, opts: WorkspaceOptions) -> Result<Arc<Workspace>, WorkspaceSetupError> {
        setup::build(root, opts)
    }

    pub fn root(&self) -> &Path {
        &self.root.path
    }

    /// The system-prompt text for an agent given these tools.
    pub fn instructions(&self) -> String {
        self.prompts
            .fmt("workspace.instructions", &[("root", &self.root_text)])
    }

    /// The tools: all of them, or only the read tools when the workspace is read-only.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<WorkspaceTool>> {
        let kinds: &[Kind] = if self.opts.read_only {
            &[Kind::Ls, Kind::Read, Kind::Glob, Kind::Grep]
        } else {
            &[
                Kind::Ls,
                Kind::Read,
                Kind::Glob,
                Kind::Grep,
                Kind::Write,
                Kind::Edit,
                Kind::MultiEdit,
            ]
        };
        kinds
            .iter()
            .map(|&kind| {
                Arc::new(WorkspaceTool {
                    ws: Arc::clone(self),
                    kind,
                    spec: setup::spec(self, kind),
                })
            })
            .collect()
    }

    /// The checked path, or the error response. Secret files are refused here.
    fn path(&self, args: &Value, param: &str, allow_root: bool) -> Result<RelPath, ToolResponse> {
        let raw = args.get(param).and_then(Value::as_str).unwrap_or("");
        if raw.trim().is_empty() && !allow_root {
            return Err(ToolResponse::error(
                self.prompts
                    .fmt("workspace.msg.empty_path", &[("param", param)]),
            ));
        }
        let shown = crate::builtins::cli::tokenize::py_repr_str(raw.trim());
        let rel = self
            .root
            .parse(raw, allow_root)
            .map_err(|r| self.refusal(&shown, r))?;
        if let Some(pattern) = self.deny.matched(&rel.shown()) {
            return Err(self.refusal(&rel.shown(), Refusal::Secret(pattern.to_string())));
        }
        Ok(rel)
    }

    /// The error response for a refused path.
    fn refusal(&self, path: &str, r: Refusal) -> ToolResponse {
        let p = &self.prompts;
        let text = match r {
            Refusal::Empty => p.fmt("workspace.msg.empty_path", &[("param", "path")]),
            Refusal::Outside => p.fmt(
                "workspace.msg.outside",
                &[("path", path), ("root", &self.root_text)],
            ),
            Refusal::BadPath => p.fmt("workspace.msg.bad_path", &[("path", path)]),
            Refusal::Secret(pattern) => p.fmt(
                "workspace.msg.secret",
                &[("path", path), ("pattern", &pattern)],
            ),
            Refusal::NotFound => p.fmt("workspace.msg.not_found", &[("path", path)]),
            Refusal::NotDir => p.fmt("workspace.msg.not_dir", &[("path", path)]),
            Refusal::IsDir => p.fmt("workspace.msg.is_dir", &[("path", path)]),
            Refusal::Symlink => p.fmt("workspace.msg.symlink", &[("path", path)]),
            Refusal::Special(kind) => {
                p.fmt("workspace.msg.special", &[("path", path), ("kind", kind)])
            }
            Refusal::HardLink => p.fmt("workspace.msg.hardlink", &[("path", path)]),
            Refusal::OtherDevice => p.fmt("workspace.msg.other_device", &[("path", path)]),
            Refusal::Io(e) => self.io_text("opening", path, e),
        };
        ToolResponse::error(text)
    }

    fn io_text(&self, action: &str, path: &str, e: nix::errno::Errno) -> String {
        self.prompts.fmt(
            "workspace.msg.io",
            &[("action", action), ("path", path), ("err", e.desc())],
        )
    }

    /// An argument of the wrong shape (the schema check normally catches these first).
    fn bad_arg(&self, param: &str, what: &str, got: &Value) -> ToolResponse {
        ToolResponse::error(self.prompts.fmt(
            "workspace.msg.bad_arg",
            &[("param", param), ("what", what), ("got", &got.to_string())],
        ))
    }

    /// An optional non-negative integer argument.
    fn count_arg(&self, args: &Value, param: &str, default: u64) -> Result<u64, ToolResponse> {
        match args.get(param) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .ok_or_else(|| self.bad_arg(param, "a non-negative integer", v)),
        }
    }

    fn bool_arg(&self, args: &Value, param: &str, default: bool) -> Result<bool, ToolResponse> {
        match args.get(param) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.bad_arg(param, "true or false", v)),
        }
    }
}

impl WorkspaceTool {
    /// MCP-style hints: read tools only read; write tools may destroy content.
    pub fn read_only(&self) -> bool {
        matches!(self.kind, Kind::Ls | Kind::Read | Kind::Glob | Kind::Grep)
    }

    pub fn destructive(&self) -> bool {
        !self.read_only()
    }

    /// Writing the same content or applying the same edit twice does not give the same result
    /// for edits (the second one finds nothing); a read or a full write is idempotent.
    pub fn idempotent(&self) -> bool {
        !matches!(self.kind, Kind::Edit | Kind::MultiEdit)
    }
}

impl NativeTool for WorkspaceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn keeps_run_state(&self) -> bool {
        true // what each run has read (see `freshness.rs`)
    }

    fn call(&self, args: &Value) -> ToolResponse {
        let ws = &*self.ws;
        match self.kind {
            Kind::Ls => ls::run(ws, args),
            Kind::Read => read::run(ws, args),
            Kind::Glob => glob::run(ws, args),
            Kind::Grep => grep::run(ws, args),
            Kind::Write => write::run(ws, args),
            Kind::Edit => edit::run_edit(ws, args),
            Kind::MultiEdit => edit::run_multi(ws, args),
        }
    }
}
