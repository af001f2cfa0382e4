//! `edit_file` and `multi_edit`: exact-string edits of one file, written atomically.
//!
//! The file must exist, be text (UTF-8; a UTF-8 byte-order mark is kept) and, by default, have
//! been read by the agent and not changed since. All edits of a `multi_edit` are applied in
//! memory first: if one fails, nothing is written and the file stays byte-identical.

use super::replace::{closest, diff, find, Edit, Found, Miss};
use super::write::{check_target, replace};
use super::Workspace;
use crate::response::ToolResponse;
use serde_json::{json, Value};
use std::io::Read;

/// Files larger than this are not edited in memory.
const MAX_EDIT_BYTES: i64 = 64 * 1024 * 1024;
const DIFF_LINES: usize = 12;
const DIFF_CHANGES: usize = 3;
/// Up to this many pieces (text between matches, replacements) are written one by one.
const MAX_WRITE_PIECES: usize = 17;

pub(super) fn run_edit(ws: &Workspace, args: &Value) -> ToolResponse {
    let edit = match parse_edit(ws, args, None) {
        Ok(e) => e,
        Err(resp) => return resp,
    };
    edit_file(ws, args, vec![edit], false)
}

pub(super) fn run_multi(ws: &Workspace, args: &Value) -> ToolResponse {
    let items = match args.get("edits") {
        Some(Value::Array(items)) => items,
        other => return ws.bad_arg("edits", "a list of edits", other.unwrap_or(&Value::Null)),
    };
    if items.is_empty() {
        return ToolResponse::error(ws.prompts.fmt("workspace.msg.multi.empty", &[]));
    }
    let mut edits = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match parse_edit(ws, item, Some(i)) {
            Ok(e) => edits.push(e),
            Err(resp) => return resp,
        }
    }
    edit_file(ws, args, edits, true)
}

fn parse_edit(ws: &Workspace, v: &Value, index: Option<usize>) -> Result<Edit, ToolResponse> {
    let p = &ws.prompts;
    let shape = |_| {
        ToolResponse::error(p.fmt(
            "workspace.msg.multi.bad_edit",
            &[("index", &index.unwrap_or(0).to_string())],
        ))
    };
    let text = |key: &str| -> Result<String, ToolResponse> {
        match v.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            other if index.is_some() => Err(shape(other)),
            other => Err(ws.bad_arg(key, "a string", other.unwrap_or(&Value::Null))),
        }
    };
    let old = text("old_string")?;
    let new = text("new_string")?;
    let all = match v.get("replace_all") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) if index.is_some() => return Err(shape(Some(other))),
        Some(other) => return Err(ws.bad_arg("replace_all", "true or false", other)),
    };
    Ok(Edit { old, new, all })
}

/// Why one edit failed, as the model reads it.
fn miss_text(ws: &Workspace, shown: &str, text: &str, edit: &Edit, miss: Miss) -> String {
    let p = &ws.prompts;
    if edit.old.is_empty() {
        return p.fmt("workspace.msg.edit.empty_old", &[]);
    }
    if edit.old == edit.new {
        return p.fmt("workspace.msg.edit.same", &[]);
    }
    match miss {
        Miss::NotFound => match closest(text, &edit.old) {
            Some(lines) => p.fmt(
                "workspace.msg.edit.not_found",
                &[("path", shown), ("closest", &lines)],
            ),
            None => p.fmt("workspace.msg.edit.not_found_bare", &[("path", shown)]),
        },
        Miss::Ambiguous(n, lines) => {
            let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
            p.fmt(
                "workspace.msg.edit.ambiguous",
                &[
                    ("n", &n.to_string()),
                    ("path", shown),
                    ("lines", &lines.join(", ")),
                ],
            )
        }
    }
}

fn edit_file(ws: &Workspace, args: &Value, edits: Vec<Edit>, multi: bool) -> ToolResponse {
    let p = &ws.prompts;
    let rel = match ws.path(args, "file_path", false) {
        Ok(rel) => rel,
        Err(resp) => return resp,
    };
    let shown = rel.shown();
    let (parent, name) = match ws.root.open_parent(&rel, false) {
        Ok(pair) => pair,
        Err(r) => return ws.refusal(&shown, r),
    };
    let run = super::freshness::run_of(args);
    let before = match check_target(ws, run, &parent, name, &shown) {
        Ok(Some(st)) => st,
        Ok(None) => return ws.refusal(&shown, super::confine::Refusal::NotFound),
        Err(resp) => return resp,
    };
    if before.st_size > MAX_EDIT_BYTES {
        return ToolResponse::error(p.fmt(
            "workspace.msg.edit.too_large",
            &[
                ("path", &shown),
                ("size", &before.st_size.to_string()),
                ("max", &MAX_EDIT_BYTES.to_string()),
            ],
        ));
    }
    let (fd, st) = match ws.root.open_file_in(&parent, name) {
        Ok(pair) => pair,
        Err(r) => return ws.refusal(&shown, r),
    };
    if super::freshness::Fingerprint::of(&st) != super::freshness::Fingerprint::of(&before) {
        return ToolResponse::error(p.fmt("workspace.msg.write.stale", &[("path", &shown)]));
    }
    let mut bytes = Vec::with_capacity(st.st_size.max(0) as usize);
    if let Err(e) = std::fs::File::from(fd).read_to_end(&mut bytes) {
        let errno = nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO));
        return ToolResponse::error(ws.io_text("reading", &shown, errno));
    }
    let bom: &[u8] = if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
        b"\xEF\xBB\xBF"
    } else {
        b""
    };
    let Ok(mut text) = String::from_utf8(bytes) else {
        return ToolResponse::error(p.fmt("workspace.msg.edit.not_text", &[("path", &shown)]));
    };
    let count = edits.len();
    let mut replacements = 0;
    let mut diffs: Vec<String> = Vec::new();
    let mut last: Option<Found> = None;
    for (i, edit) in edits.iter().enumerate() {
        let result = if edit.old == edit.new {
            Err(Miss::NotFound)
        } else {
            find(&text, edit)
        };
        match result {
            Ok(found) => {
                replacements += found.starts.len();
                for c in found.changes(DIFF_CHANGES) {
                    if diffs.len() < DIFF_CHANGES * 2 {
                        diffs.push(diff(&text, &c, DIFF_LINES));
                    }
                }
                if i + 1 < count {
                    text = found.pieces(&text).concat();
                } else {
                    last = Some(found);
                }
            }
            Err(miss) => {
                let reason = miss_text(ws, &shown, &text, edit, miss);
                let msg = if multi {
                    p.fmt(
                        "workspace.msg.multi.failed",
                        &[
                            ("index", &(i + 1).to_string()),
                            ("count", &count.to_string()),
                            ("reason", reason.trim_start_matches("Error: ")),
                        ],
                    )
                } else {
                    reason
                };
                return ToolResponse::error(msg)
                    .with_data(json!({"path": shown, "failed_edit": i}));
            }
        }
    }
    // The last edit is written straight from the text and its replacements, without building
    // the new text in memory (for a few matches; many are joined into one buffer first).
    let pieces = last
        .as_ref()
        .map_or_else(|| vec![text.as_str()], |f| f.pieces(&text));
    let joined: String;
    let mut parts: Vec<&[u8]> = vec![bom];
    if pieces.len() <= MAX_WRITE_PIECES {
        parts.extend(pieces.iter().map(|piece| piece.as_bytes()));
    } else {
        joined = pieces.concat();
        parts.push(joined.as_bytes());
    }
    if let Err(resp) = replace(ws, run, &parent, name, &shown, &parts, Some(&before)) {
        return resp;
    }
    let diff_text = diffs.join("\n");
    let n = replacements.to_string();
    let msg = if multi {
        p.fmt(
            "workspace.msg.multi.done",
            &[
                ("path", &shown),
                ("count", &count.to_string()),
                ("n", &n),
                ("diff", &diff_text),
            ],
        )
    } else {
        p.fmt(
            "workspace.msg.edit.done",
            &[("path", &shown), ("n", &n), ("diff", &diff_text)],
        )
    };
    ToolResponse::ok(msg).with_data(json!({"path": shown, "replacements": replacements}))
}
