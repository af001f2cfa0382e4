//! `glob(pattern, path, hidden, head_limit)`: regular files whose path relative to `path`
//! matches a glob (globset, `*` within one directory, `**` across), sorted, capped.
//!
//! A pattern without `**` cannot match deeper than its own number of components, so the walk
//! stops there. Results are workspace-relative paths; each is confirmed to be a regular file
//! reached without following links (see `walk.rs`).

use super::walk::{relative, sort_paths, walker, Batch, DirCache};
use super::Workspace;
use crate::response::ToolResponse;
use globset::{GlobBuilder, GlobSetBuilder};
use ignore::WalkState;
use serde_json::{json, Value};
use std::sync::Mutex;

pub(super) fn run(ws: &Workspace, args: &Value) -> ToolResponse {
    let p = &ws.prompts;
    let raw = match args.get("pattern") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim(),
        Some(Value::String(_)) => {
            return ToolResponse::error(p.fmt("workspace.msg.empty_path", &[("param", "pattern")]))
        }
        other => return ws.bad_arg("pattern", "a string", other.unwrap_or(&Value::Null)),
    };
    let rel = match ws.path(args, "path", true) {
        Ok(rel) => rel,
        Err(resp) => return resp,
    };
    let (hidden, limit) = match (
        ws.bool_arg(args, "hidden", false),
        ws.count_arg(args, "head_limit", ws.opts.max_entries),
    ) {
        (Ok(h), Ok(l)) => (h, l.max(1) as usize),
        (Err(resp), _) | (_, Err(resp)) => return resp,
    };
    let shown_base = rel.shown();
    if let Err(r) = ws.root.open_dir(&rel.parts, false) {
        return ws.refusal(&shown_base, r);
    }
    let pattern = raw.trim_start_matches("./");
    // A set of one: globset then matches `**/*.py` by its extension, a name by a lookup, where
    // a lone matcher would run its regex on every walked file.
    let glob = match GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .and_then(|g| GlobSetBuilder::new().add(g).build())
    {
        Ok(set) => set,
        Err(e) => {
            return ToolResponse::error(p.fmt(
                "workspace.msg.glob.bad_pattern",
                &[
                    ("pattern", &crate::builtins::cli::tokenize::py_repr_str(raw)),
                    ("err", &e.kind().to_string()),
                ],
            ))
        }
    };
    let base = rel
        .parts
        .iter()
        .fold(ws.root.path.clone(), |acc, c| acc.join(c));
    // A walked path's part below `path`: past `path/` (nothing to skip at the root).
    let base_len = if rel.is_root() {
        0
    } else {
        shown_base.len() + 1
    };
    let mut builder = walker(&ws.root.path, &base, hidden, &ws.deny);
    if !pattern.contains("**") {
        builder.max_depth(Some(pattern.split('/').filter(|c| !c.is_empty()).count()));
    }
    // Each walker thread confirms its own matches as it finds them (see `walk.rs`), with a
    // stack of directory descriptors that follows the walk's depth-first order.
    let found: Mutex<Vec<(String, ())>> = Mutex::new(Vec::new());
    let root_path = &ws.root.path;
    builder.build_parallel().run(|| {
        let glob = &glob;
        let mut batch = Batch::new(&found);
        let mut cache = DirCache::new(&ws.root);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = relative(root_path, entry.path()) else {
                return WalkState::Continue;
            };
            // The path below `path`, for the pattern.
            let sub = rel.get(base_len..).unwrap_or_default();
            if glob.is_match(sub) && cache.is_file(rel) {
                batch.items.push((rel.to_string(), ()));
            }
            WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    sort_paths(&mut found);
    let total = found.len();
    let mut out: Vec<&str> = Vec::new();
    let mut bytes = 0usize;
    for (line, ()) in &found {
        if out.len() >= limit || bytes + line.len() + 1 > ws.opts.max_output_bytes {
            break;
        }
        bytes += line.len() + 1;
        out.push(line);
    }
    if total == 0 {
        return ToolResponse::ok(p.fmt(
            "workspace.msg.glob.none",
            &[
                ("pattern", &crate::builtins::cli::tokenize::py_repr_str(raw)),
                ("path", &shown_base),
            ],
        ))
        .with_data(json!({"count": 0}));
    }
    let shown = out.len();
    let mut text = out.join("\n");
    if shown < total {
        text.push('\n');
        text.push_str(&p.fmt(
            "workspace.msg.capped",
            &[("shown", &shown.to_string()), ("total", &total.to_string())],
        ));
    }
    ToolResponse::ok(text)
        .with_data(json!({"count": total, "shown": shown, "truncated": shown < total}))
}
