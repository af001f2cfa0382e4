//! Confined access to the workspace root: every path the model gives is opened from the root's
//! directory descriptor, one component at a time, with O_NOFOLLOW (and O_DIRECTORY for
//! directories). A symlink anywhere on the way fails instead of being followed, whoever swaps it
//! in and whenever, so there is no window between a check and an open.
//!
//! Decisions: surrounding whitespace is trimmed; `.` components and repeated `/` are dropped;
//! `..` is refused anywhere (even `a/../b`); an absolute path is accepted only when it lies
//! lexically under the root (models trained on absolute paths send them) and is then opened
//! relative to the root like any other. Only regular files with one link on the root's file
//! system are read or written: a FIFO, socket or device is refused after a non-blocking open
//! (checked with fstatat first, so a device is never opened at all), a hard link could name a
//! file outside, and a mount point inside the root could expose another file system.

use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

pub(super) const MAX_COMPONENTS: usize = 64;
pub(super) const MAX_PATH_BYTES: usize = 4096;

pub(super) const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

const FILE_READ_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_NONBLOCK)
    .union(OFlag::O_CLOEXEC)
    .union(OFlag::O_NOCTTY);

/// Why a path could not be used. Each maps onto one message in `texts.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    Empty,
    Outside,
    BadPath,
    Secret(String),
    NotFound,
    NotDir,
    IsDir,
    Symlink,
    Special(&'static str),
    HardLink,
    OtherDevice,
    Io(Errno),
}

/// A model-supplied path, checked: its components below the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RelPath {
    pub parts: Vec<String>,
}

impl RelPath {
    /// The path as shown to the model: components joined by `/`, `.` for the root.
    pub fn shown(&self) -> String {
        if self.parts.is_empty() {
            ".".into()
        } else {
            self.parts.join("/")
        }
    }

    pub fn is_root(&self) -> bool {
        self.parts.is_empty()
    }
}

/// The workspace root, opened once.
pub(super) struct Root {
    pub path: PathBuf,
    pub fd: OwnedFd,
    pub dev: u64,
}

pub(super) fn kind_of(st: &FileStat) -> &'static str {
    match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFREG => "file",
        SFlag::S_IFDIR => "directory",
        SFlag::S_IFLNK => "symlink",
        SFlag::S_IFIFO => "FIFO (named pipe)",
        SFlag::S_IFSOCK => "socket",
        SFlag::S_IFCHR => "character device",
        SFlag::S_IFBLK => "block device",
        _ => "special file",
    }
}

impl Root {
    /// Checks a raw path. `allow_root`: whether the root itself (empty path, `.`) is fine.
    pub fn parse(&self, raw: &str, allow_root: bool) -> Result<RelPath, Refusal> {
        let path = raw.trim();
        if path.is_empty() && !allow_root {
            return Err(Refusal::Empty);
        }
        if path.len() > MAX_PATH_BYTES
            || path
                .chars()
                .any(|c| c.is_control() || crate::builtins::cli::tokenize::is_disguising_char(c))
        {
            return Err(Refusal::BadPath);
        }
        let rest = if path.starts_with('/') {
            match Path::new(path).strip_prefix(&self.path) {
                Ok(rest) => rest.to_str().unwrap_or_default().to_string(),
                Err(_) => return Err(Refusal::Outside),
            }
        } else {
            path.to_string()
        };
        let mut parts = Vec::new();
        for c in rest.split('/') {
            match c {
                "" | "." => continue,
                ".." => return Err(Refusal::Outside),
                c => parts.push(c.to_string()),
            }
        }
        if parts.len() > MAX_COMPONENTS {
            return Err(Refusal::BadPath);
        }
        if parts.is_empty() && !allow_root {
            return Err(Refusal::IsDir);
        }
        Ok(RelPath { parts })
    }

    /// Opens the directory made of `dirs`, never following links. With `create`, missing
    /// directories are made (mode 0777 less the umask, like `mkdir -p`).
    pub fn open_dir(&self, dirs: &[String], create: bool) -> Result<OwnedFd, Refusal> {
        let Some((first, rest)) = dirs.split_first() else {
            return self
                .fd
                .try_clone()
                .map_err(|e| Refusal::Io(Errno::from_raw(e.raw_os_error().unwrap_or(0))));
        };
        let mut cur = self.open_child(&self.fd, first, create)?;
        for name in rest {
            cur = self.open_child(&cur, name, create)?;
        }
        Ok(cur)
    }

    /// Opens the directory `name` in `parent` (a directory opened from the root this way), never
    /// following a link and never crossing onto another file system. With `create`, a missing
    /// directory is made first.
    pub fn open_child(
        &self,
        parent: &OwnedFd,
        name: &str,
        create: bool,
    ) -> Result<OwnedFd, Refusal> {
        let next = match openat(parent, name, DIR_FLAGS, Mode::empty()) {
            Err(Errno::ENOENT) if create => {
                match mkdirat(parent, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(Refusal::Io(e)),
                }
                openat(parent, name, DIR_FLAGS, Mode::empty())
            }
            other => other,
        };
        let next = next.map_err(|e| self.dir_refusal(parent, name, e))?;
        let st = fstat(&next).map_err(Refusal::Io)?;
        if st.st_dev != self.dev {
            return Err(Refusal::OtherDevice);
        }
        Ok(next)
    }

    fn dir_refusal(&self, parent: &OwnedFd, name: &str, e: Errno) -> Refusal {
        match e {
            Errno::ENOENT => Refusal::NotFound,
            Errno::ELOOP => Refusal::Symlink,
            Errno::ENOTDIR => match fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(st) if kind_of(&st) == "symlink" => Refusal::Symlink,
                _ => Refusal::NotDir,
            },
            e => Refusal::Io(e),
        }
    }

    /// The parent directory of a file path and the file's name.
    pub fn open_parent<'a>(
        &self,
        rel: &'a RelPath,
        create: bool,
    ) -> Result<(OwnedFd, &'a str), Refusal> {
        let (name, dirs) = rel.parts.split_last().ok_or(Refusal::IsDir)?;
        Ok((self.open_dir(dirs, create)?, name.as_str()))
    }

    /// Checks what `name` in `parent` is, without following it or opening it.
    pub fn stat_regular(&self, parent: &OwnedFd, name: &str) -> Result<FileStat, Refusal> {
        match fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => self.check_regular(st),
            Err(Errno::ENOENT) => Err(Refusal::NotFound),
            Err(e) => Err(Refusal::Io(e)),
        }
    }

    pub fn check_regular(&self, st: FileStat) -> Result<FileStat, Refusal> {
        match kind_of(&st) {
            "file" => {}
            "directory" => return Err(Refusal::IsDir),
            "symlink" => return Err(Refusal::Symlink),
            other => return Err(Refusal::Special(other)),
        }
        if st.st_nlink != 1 {
            return Err(Refusal::HardLink);
        }
        if st.st_dev != self.dev {
            return Err(Refusal::OtherDevice);
        }
        Ok(st)
    }

    /// Opens a regular file for reading, with what fstat says of the descriptor.
    pub fn open_file(&self, rel: &RelPath) -> Result<(OwnedFd, FileStat), Refusal> {
        let (parent, name) = self.open_parent(rel, false)?;
        self.open_file_in(&parent, name)
    }

    pub fn open_file_in(
        &self,
        parent: &OwnedFd,
        name: &str,
    ) -> Result<(OwnedFd, FileStat), Refusal> {
        self.stat_regular(parent, name)?;
        let fd = match openat(parent, name, FILE_READ_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Err(Refusal::NotFound),
            Err(Errno::ELOOP) => return Err(Refusal::Symlink),
            Err(Errno::ENXIO) => return Err(Refusal::Special("socket or FIFO")),
            Err(e) => return Err(Refusal::Io(e)),
        };
        // Swapped between the fstatat above and the open: judge what was really opened.
        let st = self.check_regular(fstat(&fd).map_err(Refusal::Io)?)?;
        Ok((fd, st))
    }
}
