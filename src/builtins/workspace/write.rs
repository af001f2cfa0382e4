//! `write_file(file_path, content, create_dirs)` and the atomic replacement every write and edit
//! goes through.
//!
//! The new content is written to a temporary file in the same directory (created exclusively,
//! never through a link), given the old file's permission bits, and renamed over the target: a
//! reader, or a process killed midway (SIGKILL included), sees the old file or the new one, never
//! half of it (a killed write can leave its hidden temporary file `.NAME.PID.N.tmp` behind). A
//! new file gets the usual mode (0666 less the umask). Just before the rename the target is
//! checked again against what the agent last read (`freshness.rs`).
//!
//! There is no fsync: editors and formatters do not pay one per save either, and it would cost
//! more than the edit itself. Against a power loss, ext4 (`auto_da_alloc`), XFS and btrfs flush
//! a file's data before a rename over an existing file is committed.

use super::confine::{Refusal, RelPath};
use super::freshness::Verdict;
use super::Workspace;
use crate::response::ToolResponse;
use nix::errno::Errno;
use nix::fcntl::{openat, renameat, AtFlags, OFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, FileStat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};
use serde_json::{json, Value};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The target as it is now: None when it does not exist. Refuses what is not a regular file and
/// an existing file the agent has not read or that changed since it read it.
pub(super) fn check_target(
    ws: &Workspace,
    run: Option<&str>,
    parent: &OwnedFd,
    name: &str,
    shown: &str,
) -> Result<Option<FileStat>, ToolResponse> {
    let st = match ws.root.stat_regular(parent, name) {
        Ok(st) => st,
        Err(Refusal::NotFound) => return Ok(None),
        Err(r) => return Err(ws.refusal(shown, r)),
    };
    match ws.seen.verdict(run, shown, &st) {
        Verdict::Fresh => Ok(Some(st)),
        Verdict::NeverRead if !ws.opts.read_before_write => Ok(Some(st)),
        Verdict::NeverRead => Err(ToolResponse::error(
            ws.prompts
                .fmt("workspace.msg.write.not_read", &[("path", shown)]),
        )),
        Verdict::Stale => Err(ToolResponse::error(
            ws.prompts
                .fmt("workspace.msg.write.stale", &[("path", shown)]),
        )),
    }
}

/// Replaces (or creates) `name` in `parent` with `parts` one after the other, atomically.
/// `before` is the target as checked by [`check_target`]; it is checked again right before the
/// rename.
pub(super) fn replace(
    ws: &Workspace,
    run: Option<&str>,
    parent: &OwnedFd,
    name: &str,
    shown: &str,
    parts: &[&[u8]],
    before: Option<&FileStat>,
) -> Result<(), ToolResponse> {
    let fail = |action: &str, e: Errno| ToolResponse::error(ws.io_text(action, shown, e));
    let temp = format!(
        ".{}.{}.{}.tmp",
        name.chars().take(100).collect::<String>(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let flags = OFlag::O_WRONLY
        | OFlag::O_CREAT
        | OFlag::O_EXCL
        | OFlag::O_NOFOLLOW
        | OFlag::O_CLOEXEC
        | OFlag::O_NOCTTY;
    let fd = openat(
        parent,
        temp.as_str(),
        flags,
        Mode::from_bits_truncate(0o666),
    )
    .map_err(|e| fail("writing", e))?;
    let result = (|| -> Result<(), ToolResponse> {
        for bytes in parts {
            let mut written = 0;
            while written < bytes.len() {
                match nix::unistd::write(&fd, &bytes[written..]) {
                    Ok(n) => written += n,
                    Err(Errno::EINTR) => continue,
                    Err(e) => return Err(fail("writing", e)),
                }
            }
        }
        if let Some(st) = before {
            fchmod(&fd, Mode::from_bits_truncate(st.st_mode & 0o7777))
                .map_err(|e| fail("writing", e))?;
        }
        // Changed between the first check and now: leave it alone.
        let now = match fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => Some(st),
            Err(Errno::ENOENT) => None,
            Err(e) => return Err(fail("writing", e)),
        };
        let same = match (before, &now) {
            (None, None) => true,
            (Some(b), Some(n)) => {
                super::freshness::Fingerprint::of(b) == super::freshness::Fingerprint::of(n)
            }
            _ => false,
        };
        if !same {
            return Err(ToolResponse::error(
                ws.prompts
                    .fmt("workspace.msg.write.stale", &[("path", shown)]),
            ));
        }
        renameat(parent, temp.as_str(), parent, name).map_err(|e| fail("writing", e))?;
        Ok(())
    })();
    match result {
        Ok(()) => {
            if let Ok(st) = fstat(&fd) {
                ws.seen.record(run, shown, &st);
            }
            Ok(())
        }
        Err(resp) => {
            let _ = unlinkat(parent, temp.as_str(), UnlinkatFlags::NoRemoveDir);
            Err(resp)
        }
    }
}

pub(super) fn line_count(bytes: &[u8]) -> usize {
    let n = memchr::memchr_iter(b'\n', bytes).count();
    if bytes.last().is_some_and(|b| *b != b'\n') {
        n + 1
    } else {
        n
    }
}

pub(super) fn run(ws: &Workspace, args: &Value) -> ToolResponse {
    let rel: RelPath = match ws.path(args, "file_path", false) {
        Ok(rel) => rel,
        Err(resp) => return resp,
    };
    let shown = rel.shown();
    let content = match args.get("content") {
        Some(Value::String(s)) => s.as_str(),
        other => return ws.bad_arg("content", "a string", other.unwrap_or(&Value::Null)),
    };
    let create_dirs = match ws.bool_arg(args, "create_dirs", false) {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    let (parent, name) = match ws.root.open_parent(&rel, create_dirs) {
        Ok(pair) => pair,
        Err(Refusal::NotFound) => {
            return ToolResponse::error(
                ws.prompts
                    .fmt("workspace.msg.write.missing_parent", &[("path", &shown)]),
            )
        }
        Err(r) => return ws.refusal(&shown, r),
    };
    let run = super::freshness::run_of(args);
    let before = match check_target(ws, run, &parent, name, &shown) {
        Ok(st) => st,
        Err(resp) => return resp,
    };
    if let Err(resp) = replace(
        ws,
        run,
        &parent,
        name,
        &shown,
        &[content.as_bytes()],
        before.as_ref(),
    ) {
        return resp;
    }
    let key = if before.is_some() {
        "workspace.msg.write.replaced"
    } else {
        "workspace.msg.write.created"
    };
    let lines = line_count(content.as_bytes());
    ToolResponse::ok(ws.prompts.fmt(
        key,
        &[
            ("path", &shown),
            ("bytes", &content.len().to_string()),
            ("lines", &lines.to_string()),
        ],
    ))
    .with_data(json!({"path": shown, "bytes": content.len(), "created": before.is_none()}))
}
