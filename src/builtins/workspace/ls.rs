//! `ls(path)`: one directory's entries, sorted by name, with kinds and sizes, capped.
//!
//! Directories end in `/`, files show their size, symlinks show that they are links (their
//! target is not read: it may name something outside), other kinds are named. Entries on the
//! deny list are listed (their names are not secret) and marked as refused.

use super::confine::kind_of;
use super::Workspace;
use crate::response::ToolResponse;
use nix::dir::Dir;
use nix::fcntl::AtFlags;
use nix::sys::stat::fstatat;
use serde_json::{json, Value};

pub(super) fn run(ws: &Workspace, args: &Value) -> ToolResponse {
    let rel = match ws.path(args, "path", true) {
        Ok(rel) => rel,
        Err(resp) => return resp,
    };
    let shown = rel.shown();
    let dir = match ws.root.open_dir(&rel.parts, false) {
        Ok(fd) => fd,
        Err(r) => return ws.refusal(&shown, r),
    };
    let listing = match dir
        .try_clone()
        .map_err(|_| nix::errno::Errno::EMFILE)
        .and_then(Dir::from_fd)
    {
        Ok(d) => d,
        Err(e) => return ToolResponse::error(ws.io_text("listing", &shown, e)),
    };
    let mut names: Vec<String> = Vec::new();
    // Left out like `glob` and `grep` do: a lossy name could not be opened again.
    let mut not_utf8 = 0usize;
    let mut listing = listing;
    for entry in listing.iter() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => return ToolResponse::error(ws.io_text("listing", &shown, e)),
        };
        match entry.file_name().to_str() {
            Ok("." | "..") => {}
            Ok(name) => names.push(name.to_string()),
            Err(_) => not_utf8 += 1,
        }
    }
    names.sort_unstable();
    let total = names.len();
    let left_out = |out: &mut String| {
        if not_utf8 > 0 {
            out.push('\n');
            out.push_str(
                &ws.prompts
                    .fmt("workspace.msg.ls.not_utf8", &[("n", &not_utf8.to_string())]),
            );
        }
    };
    if total == 0 {
        let mut out = ws
            .prompts
            .fmt("workspace.msg.ls.empty", &[("path", &shown)]);
        left_out(&mut out);
        return ToolResponse::ok(out).with_data(json!({"path": shown, "entries": 0}));
    }
    let cap = ws.opts.max_entries as usize;
    let mut out = ws.prompts.fmt(
        "workspace.msg.ls.header",
        &[("path", &shown), ("n", &total.to_string())],
    );
    for name in names.iter().take(cap) {
        out.push('\n');
        let child = if rel.is_root() {
            name.clone()
        } else {
            format!("{shown}/{name}")
        };
        let denied = ws.deny.matched(&child).is_some();
        match fstatat(&dir, name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => match kind_of(&st) {
                "directory" => out.push_str(&format!("{name}/")),
                "file" => out.push_str(&format!("{name}  ({} bytes)", st.st_size)),
                "symlink" => out.push_str(&format!("{name}  (symlink, not followed)")),
                kind => out.push_str(&format!("{name}  ({kind})")),
            },
            Err(_) => out.push_str(&format!("{name}  (vanished)")),
        }
        if denied {
            out.push_str("  [secret: refused]");
        }
    }
    left_out(&mut out);
    if total > cap {
        out.push('\n');
        out.push_str(&ws.prompts.fmt(
            "workspace.msg.ls.capped",
            &[("more", &(total - cap).to_string())],
        ));
        return ToolResponse::partial(out)
            .with_data(json!({"path": shown, "entries": total, "truncated": true}));
    }
    ToolResponse::ok(out).with_data(json!({"path": shown, "entries": total}))
}
