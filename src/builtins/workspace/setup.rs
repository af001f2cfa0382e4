//! Building a workspace: its options, why building failed, and each tool's spec.

use super::confine::{Root, DIR_FLAGS};
use super::secrets::{DenyList, DEFAULT_DENY};
use super::{Kind, Workspace};
use crate::prompts::Prompts;
use crate::schema::ToolParameter;
use crate::tool::ToolSpec;
use nix::errno::Errno;
use nix::sys::stat::{fstat, Mode};
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Why a workspace could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceSetupError {
    #[error("{0}")]
    Config(String),
    #[error("{message}")]
    Io { errno: i32, message: String },
}

#[derive(Debug, Clone)]
pub struct WorkspaceOptions {
    /// Offer only the read tools.
    pub read_only: bool,
    /// Secret-file patterns (see `secrets.rs`); `None` for the default list.
    pub deny: Option<Vec<String>>,
    /// Require a read before an existing file is overwritten or edited.
    pub read_before_write: bool,
    /// `read_file`: lines per page by default, characters per line, bytes per result.
    pub read_lines: u64,
    pub max_line_chars: usize,
    pub max_read_bytes: usize,
    /// `ls` entries, `glob` paths and `grep` output lines shown by default.
    pub max_entries: u64,
    /// Bytes of `glob`/`grep` output.
    pub max_output_bytes: usize,
    pub prompts: Option<HashMap<String, String>>,
}

impl Default for WorkspaceOptions {
    fn default() -> Self {
        WorkspaceOptions {
            read_only: false,
            deny: None,
            read_before_write: true,
            read_lines: 2000,
            max_line_chars: 2000,
            max_read_bytes: 100_000,
            max_entries: 500,
            max_output_bytes: 50_000,
            prompts: None,
        }
    }
}

fn io_err(e: Errno, what: &str) -> WorkspaceSetupError {
    WorkspaceSetupError::Io {
        errno: e as i32,
        message: format!("{what}: {}", e.desc()),
    }
}

pub(super) fn build(
    root: &Path,
    opts: WorkspaceOptions,
) -> Result<Arc<Workspace>, WorkspaceSetupError> {
    for (name, v) in [
        ("read_lines", opts.read_lines),
        ("max_line_chars", opts.max_line_chars as u64),
        ("max_read_bytes", opts.max_read_bytes as u64),
        ("max_entries", opts.max_entries),
        ("max_output_bytes", opts.max_output_bytes as u64),
    ] {
        if v == 0 {
            return Err(WorkspaceSetupError::Config(format!(
                "{name} must be a positive integer, got 0"
            )));
        }
    }
    if root.as_os_str().is_empty() || root.to_string_lossy().trim().is_empty() {
        return Err(WorkspaceSetupError::Config(
            "workspace root must be a non-empty path".into(),
        ));
    }
    // The root is the user's choice: a symlink given as the root is resolved once, here.
    let path = std::fs::canonicalize(root).map_err(|e| {
        io_err(
            Errno::from_raw(e.raw_os_error().unwrap_or(0)),
            &format!("cannot open the workspace root {}", root.display()),
        )
    })?;
    let fd = match nix::fcntl::open(&path, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ENOTDIR) => {
            return Err(WorkspaceSetupError::Config(format!(
                "workspace root {} is not a directory",
                path.display()
            )))
        }
        Err(e) => {
            return Err(io_err(
                e,
                &format!("cannot open the workspace root {}", path.display()),
            ))
        }
    };
    let st = fstat(&fd).map_err(|e| io_err(e, "cannot inspect the workspace root"))?;
    let patterns = match &opts.deny {
        Some(list) => list.clone(),
        None => DEFAULT_DENY.iter().map(|s| s.to_string()).collect(),
    };
    let deny = DenyList::new(&patterns).map_err(WorkspaceSetupError::Config)?;
    let limit = opts.read_lines.to_string();
    let mut prompts = Prompts::new(super::PROMPTS, opts.prompts.clone())
        .map_err(|e| WorkspaceSetupError::Config(e.to_string()))?;
    // Defaults shown in parameter docs are part of the texts: rendered once, here.
    let head = opts.max_entries.to_string();
    let mut fixed = HashMap::new();
    fixed.insert(
        "workspace.param.read_file.limit".to_string(),
        prompts.fmt("workspace.param.read_file.limit", &[("limit", &limit)]),
    );
    fixed.insert(
        "workspace.param.grep.head_limit".to_string(),
        prompts.fmt("workspace.param.grep.head_limit", &[("limit", &head)]),
    );
    let mut all: HashMap<String, String> = opts.prompts.clone().unwrap_or_default();
    all.extend(fixed);
    prompts = Prompts::new(super::PROMPTS, Some(all))
        .map_err(|e| WorkspaceSetupError::Config(e.to_string()))?;
    Ok(Arc::new(Workspace {
        root_text: path.to_string_lossy().into_owned(),
        root: Root {
            path,
            fd,
            dev: st.st_dev,
        },
        prompts,
        deny: Arc::new(deny),
        seen: Default::default(),
        opts,
    }))
}

fn param(p: &Prompts, name: &str, ty: &str, key: &str) -> ToolParameter {
    ToolParameter::new(name, ty, p.get(key))
}

fn opt(p: &Prompts, name: &str, ty: &str, key: &str, default: serde_json::Value) -> ToolParameter {
    ToolParameter::new(name, ty, p.get(key)).optional(Some(default))
}

/// The last two parameters of `glob` and `grep`: whether to walk hidden entries, and how many
/// results to return at most.
fn walk_options(ws: &Workspace) -> [ToolParameter; 2] {
    let p = &ws.prompts;
    [
        opt(
            p,
            "hidden",
            "boolean",
            "workspace.param.hidden",
            json!(false),
        ),
        opt(
            p,
            "head_limit",
            "integer",
            "workspace.param.grep.head_limit",
            json!(ws.opts.max_entries),
        ),
    ]
}

pub(super) fn spec(ws: &Workspace, kind: Kind) -> ToolSpec {
    let p = &ws.prompts;
    let (name, params) = match kind {
        Kind::Ls => (
            "ls",
            vec![opt(
                p,
                "path",
                "string",
                "workspace.param.ls.path",
                json!("."),
            )],
        ),
        Kind::Read => (
            "read_file",
            vec![
                param(
                    p,
                    "file_path",
                    "string",
                    "workspace.param.read_file.file_path",
                ),
                opt(
                    p,
                    "offset",
                    "integer",
                    "workspace.param.read_file.offset",
                    json!(1),
                ),
                opt(
                    p,
                    "limit",
                    "integer",
                    "workspace.param.read_file.limit",
                    json!(ws.opts.read_lines),
                ),
            ],
        ),
        Kind::Write => (
            "write_file",
            vec![
                param(
                    p,
                    "file_path",
                    "string",
                    "workspace.param.write_file.file_path",
                ),
                param(p, "content", "string", "workspace.param.write_file.content"),
                opt(
                    p,
                    "create_dirs",
                    "boolean",
                    "workspace.param.write_file.create_dirs",
                    json!(false),
                ),
            ],
        ),
        Kind::Edit => (
            "edit_file",
            vec![
                param(p, "file_path", "string", "workspace.param.edit.file_path"),
                param(p, "old_string", "string", "workspace.param.edit.old_string"),
                param(p, "new_string", "string", "workspace.param.edit.new_string"),
                opt(
                    p,
                    "replace_all",
                    "boolean",
                    "workspace.param.edit.replace_all",
                    json!(false),
                ),
            ],
        ),
        Kind::MultiEdit => {
            let item = json!({
                "type": "object",
                "properties": {
                    "old_string": {"type": "string", "description": p.get("workspace.param.edit.old_string")},
                    "new_string": {"type": "string", "description": p.get("workspace.param.edit.new_string")},
                    "replace_all": {"type": "boolean", "default": false, "description": p.get("workspace.param.edit.replace_all")},
                },
                "required": ["old_string", "new_string"],
                "additionalProperties": false,
            });
            let edits = json!({
                "type": "array",
                "minItems": 1,
                "items": item,
                "description": p.get("workspace.param.multi_edit.edits"),
            });
            (
                "multi_edit",
                vec![
                    param(p, "file_path", "string", "workspace.param.edit.file_path"),
                    param(p, "edits", "array", "workspace.param.multi_edit.edits")
                        .with_schema(edits),
                ],
            )
        }
        Kind::Glob => (
            "glob",
            [
                param(p, "pattern", "string", "workspace.param.glob.pattern"),
                opt(p, "path", "string", "workspace.param.glob.path", json!(".")),
            ]
            .into_iter()
            .chain(walk_options(ws))
            .collect(),
        ),
        Kind::Grep => {
            let modes = json!({
                "type": "string",
                "enum": ["content", "files_with_matches", "count"],
                "default": "files_with_matches",
                "description": p.get("workspace.param.grep.output_mode"),
            });
            (
                "grep",
                [
                    param(p, "pattern", "string", "workspace.param.grep.pattern"),
                    opt(p, "path", "string", "workspace.param.grep.path", json!(".")),
                    ToolParameter::new("glob", "string", p.get("workspace.param.grep.glob"))
                        .optional(None),
                    ToolParameter::new("type", "string", p.get("workspace.param.grep.type"))
                        .optional(None),
                    param(
                        p,
                        "output_mode",
                        "string",
                        "workspace.param.grep.output_mode",
                    )
                    .optional(Some(json!("files_with_matches")))
                    .with_schema(modes),
                    opt(p, "-i", "boolean", "workspace.param.grep.i", json!(false)),
                    opt(p, "-n", "boolean", "workspace.param.grep.n", json!(true)),
                    opt(p, "-A", "integer", "workspace.param.grep.A", json!(0)),
                    opt(p, "-B", "integer", "workspace.param.grep.B", json!(0)),
                    opt(p, "-C", "integer", "workspace.param.grep.C", json!(0)),
                    opt(
                        p,
                        "fixed_strings",
                        "boolean",
                        "workspace.param.grep.fixed_strings",
                        json!(false),
                    ),
                ]
                .into_iter()
                .chain(walk_options(ws))
                .collect(),
            )
        }
    };
    let desc_key = match kind {
        Kind::Ls => "workspace.desc.ls",
        Kind::Read => "workspace.desc.read_file",
        Kind::Write => "workspace.desc.write_file",
        Kind::Edit => "workspace.desc.edit_file",
        Kind::MultiEdit => "workspace.desc.multi_edit",
        Kind::Glob => "workspace.desc.glob",
        Kind::Grep => "workspace.desc.grep",
    };
    let mut spec = ToolSpec::new(name, p.get(desc_key), params);
    let reads = matches!(kind, Kind::Ls | Kind::Read | Kind::Glob | Kind::Grep);
    spec.supports_parallel = reads;
    spec.external_content = reads;
    spec
}
