//! A directory that model-supplied relative paths are confined to: the notes tool's root and a
//! skill's folder.
//!
//! Confinement does not rely on path strings: the directory is opened once and every access
//! walks from that descriptor with `openat`, one component at a time, with O_NOFOLLOW (and
//! O_DIRECTORY for directories). A symlink at any position therefore fails instead of being
//! followed, whoever swaps it in and whenever. Paths are checked first ([`components`]):
//! surrounding whitespace is trimmed; absolute paths and `..` are out of bounds; empty
//! components, hidden components (a leading `.`), NUL, control and invisible formatting
//! characters are refused; `.` components are dropped; at most 32 components and 1024 bytes.
//! Only singly linked regular files on the directory's own device are opened, FIFOs, sockets
//! and devices are refused without being opened for I/O (O_NONBLOCK, and a type check before
//! opening).

use crate::prompts::Prompts;
use crate::response::ToolResponse;
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use serde_json::{json, Value};
use std::os::fd::OwnedFd;
use std::path::Path;

const MAX_COMPONENTS: usize = 32;
const MAX_PATH_BYTES: usize = 1024;

/// How a directory is opened: read-only, a directory, never through a symlink.
pub const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// Why a model-supplied path was refused before anything was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRefusal {
    /// Empty after trimming (or only `.` components).
    Empty,
    /// Absolute or with a `..` component.
    Escape,
    /// Any other rule of the module doc.
    Bad,
}

/// Why a confined file could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenRefusal {
    /// The file or one of its directories does not exist.
    Missing,
    /// A symlink, a special file, a hard-linked file or another device on the way.
    NotRegular,
    Os(Errno),
}

/// The validated components of a relative path (see the module doc).
pub fn components(raw: &str) -> Result<Vec<String>, PathRefusal> {
    let path = raw.trim();
    if path.is_empty() {
        return Err(PathRefusal::Empty);
    }
    if path.starts_with('/') || path.split('/').any(|c| c == "..") {
        return Err(PathRefusal::Escape);
    }
    if path.len() > MAX_PATH_BYTES
        || path
            .chars()
            .any(|c| c.is_control() || crate::builtins::cli::tokenize::is_disguising_char(c))
    {
        return Err(PathRefusal::Bad);
    }
    let mut parts = Vec::new();
    for c in path.split('/') {
        if c == "." {
            continue;
        }
        if c.is_empty() || c.starts_with('.') {
            return Err(PathRefusal::Bad);
        }
        parts.push(c.to_string());
    }
    if parts.is_empty() {
        return Err(PathRefusal::Empty);
    }
    if parts.len() > MAX_COMPONENTS {
        return Err(PathRefusal::Bad);
    }
    Ok(parts)
}

/// An open directory and its device; every access walks from it.
pub struct ConfinedDir {
    fd: OwnedFd,
    dev: u64,
}

impl ConfinedDir {
    /// Opens `path` as a directory; its last component must not be a symlink.
    pub fn open(path: &Path) -> Result<(ConfinedDir, FileStat), Errno> {
        let fd = nix::fcntl::open(path, DIR_FLAGS, Mode::empty())?;
        let st = fstat(&fd)?;
        Ok((ConfinedDir { fd, dev: st.st_dev }, st))
    }

    /// Opens the directory of `parts` (all but the last component), component by component,
    /// never following links. With `create`, missing directories are made (0700) and recorded
    /// in `created` (their parent and name) so that a failed write can remove them again.
    pub fn walk(
        &self,
        dirs: &[String],
        create: bool,
        created: &mut Vec<(OwnedFd, String)>,
    ) -> Result<OwnedFd, Errno> {
        let mut cur = self
            .fd
            .try_clone()
            .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(0)))?;
        for name in dirs {
            let next = match openat(&cur, name.as_str(), DIR_FLAGS, Mode::empty()) {
                Err(Errno::ENOENT) if create => {
                    match mkdirat(&cur, name.as_str(), Mode::from_bits_truncate(0o700)) {
                        Ok(()) => created
                            .push((cur.try_clone().map_err(|_| Errno::EMFILE)?, name.clone())),
                        Err(Errno::EEXIST) => {}
                        Err(e) => return Err(e),
                    }
                    openat(&cur, name.as_str(), DIR_FLAGS, Mode::empty())?
                }
                other => other?,
            };
            let st = fstat(&next)?;
            if st.st_dev != self.dev {
                return Err(Errno::EXDEV);
            }
            cur = next;
        }
        Ok(cur)
    }

    /// A singly linked regular file on this directory's device.
    pub fn is_regular(&self, st: &FileStat) -> bool {
        SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFREG
            && st.st_nlink == 1
            && st.st_dev == self.dev
    }

    /// Opens the file at `parts` for reading (non-blocking, never through a link) and returns
    /// it with its size.
    pub fn open_regular(&self, parts: &[String]) -> Result<(OwnedFd, usize), OpenRefusal> {
        let (dirs, file) = parts.split_at(parts.len() - 1);
        let parent = match self.walk(dirs, false, &mut Vec::new()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Err(OpenRefusal::Missing),
            Err(Errno::ELOOP | Errno::ENOTDIR | Errno::EXDEV) => {
                return Err(OpenRefusal::NotRegular)
            }
            Err(e) => return Err(OpenRefusal::Os(e)),
        };
        let name = file[0].as_str();
        match fstatat(&parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Err(Errno::ENOENT) => return Err(OpenRefusal::Missing),
            Err(e) => return Err(OpenRefusal::Os(e)),
            Ok(st) if !self.is_regular(&st) => return Err(OpenRefusal::NotRegular),
            Ok(_) => {}
        }
        let flags = OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_CLOEXEC
            | OFlag::O_NOCTTY;
        let fd = match openat(&parent, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Err(OpenRefusal::Missing),
            Err(Errno::ELOOP | Errno::ENXIO) => return Err(OpenRefusal::NotRegular),
            Err(e) => return Err(OpenRefusal::Os(e)),
        };
        match fstat(&fd) {
            Ok(st) if self.is_regular(&st) => Ok((fd, st.st_size.max(0) as usize)),
            Ok(_) => Err(OpenRefusal::NotRegular),
            Err(e) => Err(OpenRefusal::Os(e)),
        }
    }
}

/// Reads at most `limit` bytes of an open file whose size was `size` (one spare byte beyond
/// the size tells a file that grew).
pub fn read_prefix(fd: &OwnedFd, size: usize, limit: usize) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; limit.min(size.saturating_add(1))];
    let mut filled = 0;
    while filled < buf.len() {
        match nix::unistd::read(fd, &mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
    buf.truncate(filled);
    Ok(buf)
}

/// The response of a read of `buf` (read with [`read_limit`]): at most `max_chars` characters
/// of its text, `data` gaining `invalid_utf8` and `truncated` flags where they hold. Cut text is
/// `partial` and followed by the `truncated_key` message (its `{max}` is `max_chars`).
pub fn text_response(
    buf: &[u8],
    max_chars: usize,
    mut data: Value,
    prompts: &Prompts,
    truncated_key: &str,
) -> ToolResponse {
    let (text, invalid_utf8, truncated) = text_prefix(buf, max_chars);
    if invalid_utf8 {
        data["invalid_utf8"] = json!(true);
    }
    if truncated {
        data["truncated"] = json!(true);
        let shown = format!(
            "{text}{}",
            prompts.fmt(truncated_key, &[("max", &max_chars.to_string())])
        );
        ToolResponse::partial(shown).with_data(data)
    } else {
        ToolResponse::ok(text).with_data(data)
    }
}

/// Text of at most `max_chars` characters from bytes read with a limit of `max_chars * 4 + 4`:
/// invalid UTF-8 shows as replacement characters (a character cut at the end of a full read is
/// dropped rather than shown as invalid). Returns the text, whether the bytes were invalid
/// UTF-8, and whether the text was cut.
pub fn text_prefix(buf: &[u8], max_chars: usize) -> (String, bool, bool) {
    let full_read = buf.len() < read_limit(max_chars);
    let mut bytes = buf;
    if !full_read {
        if let Err(e) = std::str::from_utf8(bytes) {
            if e.error_len().is_none() {
                bytes = &bytes[..e.valid_up_to()];
            }
        }
    }
    let invalid_utf8 = std::str::from_utf8(bytes).is_err();
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => (text[..at].to_string(), invalid_utf8, true),
        None => (text.into_owned(), invalid_utf8, false),
    }
}

/// Enough bytes to hold `max_chars` characters plus one, whatever their width.
pub fn read_limit(max_chars: usize) -> usize {
    max_chars.saturating_mul(4).saturating_add(4)
}
