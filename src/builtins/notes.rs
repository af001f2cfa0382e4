//! NotesTool: read and append note files confined to one directory.
//!
//! Confinement does not rely on path strings: the root is opened once at construction (its
//! ownership and mode are checked on that descriptor) and every call walks from it with `openat`,
//! one component at a time, with O_NOFOLLOW (and O_DIRECTORY for directories), through
//! [`ConfinedDir`]. A symlink at any position therefore fails instead of being followed, whoever
//! swaps it in and whenever.
//!
//! Decisions (the guide is silent on these):
//! - Paths: surrounding whitespace is trimmed; absolute paths and `..` are out of bounds; empty
//!   components (`a//b`, a trailing `/`), hidden components (a leading `.`, which is where
//!   configuration such as `.git/` or `.ssh/` lives), NUL, control and invisible formatting
//!   characters are refused; `.` components are dropped. At most 32 components and 1024 bytes.
//! - Append creates missing directories (0700) and the file (0600). Every check that can refuse
//!   happens before anything is created, and a write error rolls the file back to its previous
//!   size, so a refused append leaves no trace.
//! - Only singly linked regular files are read or appended; FIFOs, sockets and devices are
//!   refused without being opened for I/O (O_NONBLOCK, and a type check before opening).
//! - Appends take a non-blocking exclusive flock, reads a non-blocking shared one: contention is
//!   an immediate error, never a wait.
//! - Reads return raw bytes as text (no newline translation); invalid UTF-8 is shown with
//!   replacement characters and flagged in `data`.
//! - Construction errors: bad limits or a root that is not a real directory → `Config`; a root
//!   owned by someone else or open to group/others → `Permission`; I/O failures → `Io`.

use crate::builtins::confined_dir::{
    components, read_limit, read_prefix, text_response, ConfinedDir, OpenRefusal, PathRefusal,
};
use crate::prompts::Prompts;
use crate::response::ToolResponse;
use crate::schema::ToolParameter;
use crate::tool::{NativeTool, ToolSpec};
use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstat, fstatat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};
use serde_json::{json, Value};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use setup::io_err;
pub use setup::{NotesOptions, NotesSetupError, PROMPTS};
use sys::{effective_uid, flock};

pub struct NotesTool {
    spec: ToolSpec,
    prompts: Prompts,
    root: PathBuf,
    root_text: String,
    dir: ConfinedDir,
    max_read_chars: usize,
    max_append_chars: usize,
    max_file_bytes: u64,
}

impl NotesTool {
    pub fn new(root: &Path, opts: NotesOptions) -> Result<NotesTool, NotesSetupError> {
        for (name, v) in [
            ("max_read_chars", opts.max_read_chars as u64),
            ("max_append_chars", opts.max_append_chars as u64),
            ("max_file_bytes", opts.max_file_bytes),
        ] {
            if v == 0 {
                return Err(NotesSetupError::Config(format!(
                    "{name} must be a positive integer, got 0"
                )));
            }
        }
        if root.as_os_str().is_empty() || root.to_string_lossy().trim().is_empty() {
            return Err(NotesSetupError::Config(
                "notes root must be a non-empty path".into(),
            ));
        }
        let root = if root.is_absolute() {
            root.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| {
                    io_err(
                        Errno::from_raw(e.raw_os_error().unwrap_or(0)),
                        "cannot resolve the notes root",
                    )
                })?
                .join(root)
        };
        if std::fs::symlink_metadata(&root).is_err() {
            use std::os::unix::fs::DirBuilderExt;
            match std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&root)
            {
                Ok(()) => {
                    use std::os::unix::fs::PermissionsExt;
                    // The umask may have removed bits we want and cannot add others; be exact.
                    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))
                        .map_err(|e| {
                            io_err(
                                Errno::from_raw(e.raw_os_error().unwrap_or(0)),
                                "cannot set the notes root mode",
                            )
                        })?;
                }
                Err(e) => {
                    return Err(io_err(
                        Errno::from_raw(e.raw_os_error().unwrap_or(0)),
                        &format!("cannot create the notes root {}", root.display()),
                    ))
                }
            }
        }
        let (dir, st) = match ConfinedDir::open(&root) {
            Ok(opened) => opened,
            Err(Errno::ELOOP | Errno::ENOTDIR) => {
                return Err(NotesSetupError::Config(
                    "notes root must be a directory and must not be a symlink".into(),
                ))
            }
            Err(e) => {
                return Err(io_err(
                    e,
                    &format!("cannot open the notes root {}", root.display()),
                ))
            }
        };
        if st.st_uid != effective_uid() {
            return Err(NotesSetupError::Permission(
                "notes root must be owned by the current user".into(),
            ));
        }
        if st.st_mode & 0o077 != 0 {
            return Err(NotesSetupError::Permission(
                "notes root must not be accessible to group or others (e.g. chmod 0700)".into(),
            ));
        }
        let prompts = Prompts::new(PROMPTS, opts.prompts)
            .map_err(|e| NotesSetupError::Config(e.to_string()))?;
        let root_text = root.to_string_lossy().into_owned();
        let action_schema = json!({
            "type": "string",
            "enum": ["read", "append"],
            "description": prompts.get("tool.param.notes.action"),
        });
        let mut spec = ToolSpec::new(
            "notes",
            prompts.fmt("tool.desc.notes", &[("root", &root_text)]),
            vec![
                ToolParameter::new("action", "string", prompts.get("tool.param.notes.action"))
                    .with_schema(action_schema),
                ToolParameter::new("path", "string", prompts.get("tool.param.notes.path")),
                ToolParameter::new("content", "string", prompts.get("tool.param.notes.content"))
                    .optional(None),
            ],
        );
        spec.requires_confirmation = true;
        spec.external_content = false;
        Ok(NotesTool {
            spec,
            prompts,
            root,
            root_text,
            dir,
            max_read_chars: opts.max_read_chars,
            max_append_chars: opts.max_append_chars,
            max_file_bytes: opts.max_file_bytes,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Validated components of a model-supplied path, or the error response.
    fn components(&self, raw: &str) -> Result<Vec<String>, ToolResponse> {
        let p = &self.prompts;
        components(raw).map_err(|refusal| match refusal {
            PathRefusal::Empty => ToolResponse::error(p.fmt("tool.msg.notes.empty_path", &[])),
            PathRefusal::Escape => ToolResponse::error(
                p.fmt("tool.msg.notes.path_escape", &[("root", &self.root_text)]),
            ),
            PathRefusal::Bad => ToolResponse::error(p.fmt(
                "tool.msg.notes.bad_path",
                &[(
                    "path",
                    &crate::builtins::cli::tokenize::py_repr_str(raw.trim()),
                )],
            )),
        })
    }

    fn read(&self, rel: &str, parts: &[String]) -> ToolResponse {
        let p = &self.prompts;
        let missing = || {
            ToolResponse::ok(p.fmt("tool.msg.notes.empty_note", &[("path", rel)]))
                .with_data(json!({"path": rel, "exists": false}))
        };
        let fail = |e: Errno| {
            ToolResponse::error(p.fmt(
                "tool.msg.notes.read_failed",
                &[("path", rel), ("err", e.desc())],
            ))
        };
        let (fd, size) = match self.dir.open_regular(parts) {
            Ok(opened) => opened,
            Err(OpenRefusal::Missing) => return missing(),
            Err(OpenRefusal::NotRegular) => return self.not_regular(rel),
            Err(OpenRefusal::Os(e)) => return fail(e),
        };
        if let Err(e) = flock(&fd, nix::libc::LOCK_SH | nix::libc::LOCK_NB) {
            return if e == Errno::EWOULDBLOCK {
                self.busy(rel)
            } else {
                fail(e)
            };
        }
        // The shared lock keeps cooperating appenders out, so the size read above stays valid;
        // one spare byte still tells a file that grew anyway.
        let buf = match read_prefix(&fd, size, read_limit(self.max_read_chars)) {
            Ok(buf) => buf,
            Err(e) => return fail(e),
        };
        drop(fd);
        text_response(
            &buf,
            self.max_read_chars,
            json!({"path": rel, "exists": true}),
            p,
            "tool.msg.notes.truncated",
        )
    }

    fn not_regular(&self, rel: &str) -> ToolResponse {
        ToolResponse::error(
            self.prompts
                .fmt("tool.msg.notes.not_regular", &[("path", rel)]),
        )
    }

    fn busy(&self, rel: &str) -> ToolResponse {
        ToolResponse::error(self.prompts.fmt("tool.msg.notes.busy", &[("path", rel)]))
    }

    fn append(&self, rel: &str, parts: &[String], content: &str) -> ToolResponse {
        let p = &self.prompts;
        if content.trim().is_empty() {
            return ToolResponse::error(p.fmt("tool.msg.notes.append_empty", &[]));
        }
        // Count characters without walking a huge string twice: bytes bound characters.
        if content.len() > self.max_append_chars && content.chars().count() > self.max_append_chars
        {
            return ToolResponse::error(p.fmt(
                "tool.msg.notes.append_too_large",
                &[("max", &self.max_append_chars.to_string())],
            ));
        }
        let mut chunk = content.to_string();
        if !chunk.ends_with('\n') {
            chunk.push('\n');
        }
        let too_big = || {
            ToolResponse::error(p.fmt(
                "tool.msg.notes.file_too_large",
                &[("max", &self.max_file_bytes.to_string())],
            ))
        };
        if chunk.len() as u64 > self.max_file_bytes {
            return too_big();
        }
        let fail = |e: Errno| {
            ToolResponse::error(p.fmt(
                "tool.msg.notes.write_failed",
                &[("path", rel), ("err", e.desc())],
            ))
        };

        let mut created_dirs: Vec<(OwnedFd, String)> = Vec::new();
        let result = self.append_inner(parts, &chunk, &mut created_dirs);
        if result.is_err() {
            // Leave no trace: remove directories this call created (only if still empty).
            for (parent, name) in created_dirs.iter().rev() {
                let _ = unlinkat(parent, name.as_str(), UnlinkatFlags::RemoveDir);
            }
        }
        match result {
            Ok(()) => {
                let n = chunk.chars().count();
                ToolResponse::ok(p.fmt(
                    "tool.msg.notes.appended",
                    &[("n", &n.to_string()), ("path", rel)],
                ))
                .with_data(json!({"path": rel, "appended_chars": n}))
            }
            Err(AppendError::TooBig) => too_big(),
            Err(AppendError::Busy) => self.busy(rel),
            Err(AppendError::NotRegular) => self.not_regular(rel),
            Err(AppendError::Os(e)) => fail(e),
        }
    }

    fn append_inner(
        &self,
        parts: &[String],
        chunk: &str,
        created_dirs: &mut Vec<(OwnedFd, String)>,
    ) -> Result<(), AppendError> {
        let (dirs, file) = parts.split_at(parts.len() - 1);
        let parent = self
            .dir
            .walk(dirs, true, created_dirs)
            .map_err(|e| match e {
                Errno::ELOOP | Errno::ENOTDIR | Errno::EXDEV => AppendError::NotRegular,
                e => AppendError::Os(e),
            })?;
        let name = file[0].as_str();
        match fstatat(&parent, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) if !self.dir.is_regular(&st) => return Err(AppendError::NotRegular),
            Ok(_) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(AppendError::Os(e)),
        }
        let base = OFlag::O_WRONLY
            | OFlag::O_APPEND
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_CLOEXEC
            | OFlag::O_NOCTTY;
        let mut created = false;
        let fd = match openat(&parent, name, base, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => match openat(
                &parent,
                name,
                base | OFlag::O_CREAT | OFlag::O_EXCL,
                Mode::from_bits_truncate(0o600),
            ) {
                Ok(fd) => {
                    created = true;
                    fd
                }
                Err(Errno::EEXIST) => {
                    openat(&parent, name, base, Mode::empty()).map_err(open_error)?
                }
                Err(e) => return Err(open_error(e)),
            },
            Err(e) => return Err(open_error(e)),
        };
        let undo_create = |fd: &OwnedFd| {
            if created {
                // Only remove the name if it still refers to the file this call created.
                if let (Ok(mine), Ok(there)) = (
                    fstat(fd),
                    fstatat(&parent, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW),
                ) {
                    if mine.st_ino == there.st_ino
                        && mine.st_dev == there.st_dev
                        && mine.st_size == 0
                    {
                        let _ = unlinkat(&parent, name, UnlinkatFlags::NoRemoveDir);
                    }
                }
            }
        };
        if let Err(e) = flock(&fd, nix::libc::LOCK_EX | nix::libc::LOCK_NB) {
            // A file this call just created but someone else locked is theirs too: keep it.
            return Err(if e == Errno::EWOULDBLOCK {
                AppendError::Busy
            } else {
                AppendError::Os(e)
            });
        }
        let st = fstat(&fd).map_err(AppendError::Os)?;
        if !self.dir.is_regular(&st) {
            undo_create(&fd);
            return Err(AppendError::NotRegular);
        }
        let size = st.st_size as u64;
        if size + chunk.len() as u64 > self.max_file_bytes {
            undo_create(&fd);
            return Err(AppendError::TooBig);
        }
        let mut written = 0;
        let bytes = chunk.as_bytes();
        while written < bytes.len() {
            match nix::unistd::write(&fd, &bytes[written..]) {
                Ok(n) => written += n,
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    // Roll back a partial append (disk full, quota) while still holding the lock.
                    let _ = nix::unistd::ftruncate(&fd, size as nix::libc::off_t);
                    undo_create(&fd);
                    return Err(AppendError::Os(e));
                }
            }
        }
        Ok(())
    }
}

enum AppendError {
    TooBig,
    Busy,
    NotRegular,
    Os(Errno),
}

fn open_error(e: Errno) -> AppendError {
    match e {
        // ELOOP: a symlink; ENXIO: a FIFO without reader or a socket.
        Errno::ELOOP | Errno::ENXIO => AppendError::NotRegular,
        e => AppendError::Os(e),
    }
}

impl NativeTool for NotesTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: &Value) -> ToolResponse {
        let p = &self.prompts;
        let action = args
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        if action != "read" && action != "append" {
            let shown = match args.get("action") {
                Some(Value::String(s)) => crate::builtins::cli::tokenize::py_repr_str(s.trim()),
                Some(other) => other.to_string(),
                None => "None".to_string(),
            };
            return ToolResponse::error(p.fmt("tool.msg.notes.bad_action", &[("action", &shown)]));
        }
        let raw = args.get("path").and_then(Value::as_str).unwrap_or("");
        let parts = match self.components(raw) {
            Ok(parts) => parts,
            Err(resp) => return resp,
        };
        let rel = parts.join("/");
        if action == "read" {
            self.read(&rel, &parts)
        } else {
            let content = args.get("content").and_then(Value::as_str).unwrap_or("");
            self.append(&rel, &parts, content)
        }
    }

    fn needs_confirmation(&self, args: &Value) -> bool {
        args.get("action").and_then(Value::as_str).map(str::trim) != Some("read")
    }

    fn is_external_content(&self, args: &Value) -> bool {
        args.get("action").and_then(Value::as_str).map(str::trim) == Some("read")
    }
}

mod setup;
mod sys;
#[cfg(test)]
mod tests;
