//! Walking the workspace for `glob` and `grep`: the `ignore` crate's walker (what ripgrep
//! walks with), set up the same way for both, and confined access to what it finds.
//!
//! The walker honours `.gitignore` (also outside a git repository), `.ignore` and
//! `.git/info/exclude` inside the root; it reads no ignore file above the root and not the user's
//! global git excludes, so results depend on the workspace alone. It never follows links, and the
//! deny list prunes secret files and directories before they are visited.
//!
//! The walker lists directories by path. A directory swapped for a symlink during a walk could
//! therefore make it list names elsewhere; that is why every result is confirmed, and every file
//! opened, through [`DirCache`]: from the root descriptor, without following links. Names whose
//! path is not UTF-8 are skipped (they could not be given back to the other tools).

use super::confine::{Refusal, Root};
use super::secrets::DenyList;
use ignore::WalkBuilder;
use nix::sys::stat::FileStat;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

pub(super) fn walker(root: &Path, base: &Path, hidden: bool, deny: &Arc<DenyList>) -> WalkBuilder {
    let mut b = WalkBuilder::new(base);
    b.hidden(!hidden)
        .parents(false)
        .git_global(false)
        .git_exclude(true)
        .git_ignore(true)
        .ignore(true)
        .require_git(false)
        .follow_links(false);
    let deny = Arc::clone(deny);
    let root = root.to_path_buf();
    // The walker visits a directory's entries only when the directory itself passed, so
    // `prunes` (which looks at the entry's own name and path tails) is all it takes.
    b.filter_entry(move |e| match relative(&root, e.path()) {
        Some(rel) if !rel.is_empty() => !deny.prunes(rel, rel.rsplit('/').next().unwrap_or(rel)),
        _ => true,
    });
    b
}

/// The part of a walked path below `root`, if it is UTF-8. The walker builds every path by
/// joining names onto the root's, so this is a plain byte prefix (no component parsing).
pub(super) fn relative<'p>(root: &Path, path: &'p Path) -> Option<&'p str> {
    let root = root.as_os_str().as_bytes();
    let rest = path.as_os_str().as_bytes().strip_prefix(root)?;
    let rest = match rest {
        [] => rest,
        _ if root.ends_with(b"/") => rest,
        [b'/', rest @ ..] => rest,
        _ => return None,
    };
    std::str::from_utf8(rest).ok()
}

/// The directories of the path last looked up, each opened from the one above it (the first
/// from the root descriptor) without following links: a stack of descriptors. The next lookup
/// keeps the part of the stack its path shares and opens only the components that differ, so a
/// run of paths in sorted (or walk) order costs one `openat` per directory entered and one
/// `fstatat` per file, however deep the tree.
///
/// Every descriptor on the stack was reached exactly as [`Root::open_dir`] reaches it; keeping it
/// open between lookups changes nothing there: a directory swapped for a symlink after it was
/// opened is not followed (the descriptor still names the directory that was opened), and a
/// swap before is refused by `O_NOFOLLOW`.
pub(super) struct DirCache<'a> {
    root: &'a Root,
    /// The open directories, outermost first, with their names.
    open: Vec<(String, OwnedFd)>,
    /// The directory of the last lookup deeper than [`MAX_HELD`].
    deep: Option<OwnedFd>,
}

/// How many directories a [`DirCache`] keeps open (each walker thread has one), well below any
/// limit on open descriptors.
const MAX_HELD: usize = 64;

impl<'a> DirCache<'a> {
    pub fn new(root: &'a Root) -> Self {
        DirCache {
            root,
            open: Vec::new(),
            deep: None,
        }
    }

    /// The directory `dirs` below the root, None when it cannot be reached without following a
    /// link (or is gone).
    fn parent<S: AsRef<str>>(&mut self, dirs: &[S]) -> Option<&OwnedFd> {
        let root = self.root;
        let shared = self
            .open
            .iter()
            .zip(dirs)
            .take_while(|((open, _), name)| open == name.as_ref())
            .count();
        self.open.truncate(shared);
        let held = dirs.len().min(MAX_HELD);
        for name in &dirs[shared.min(held)..held] {
            let above = self.open.last().map_or(&root.fd, |(_, fd)| fd);
            let fd = root.open_child(above, name.as_ref(), false).ok()?;
            self.open.push((name.as_ref().to_string(), fd));
        }
        let top = self.open.last().map_or(&root.fd, |(_, fd)| fd);
        if dirs.len() == held {
            return Some(top);
        }
        // Deeper than the stack holds: the rest is opened for this lookup alone.
        let mut cur = root.open_child(top, dirs[held].as_ref(), false).ok()?;
        for name in &dirs[held + 1..] {
            cur = root.open_child(&cur, name.as_ref(), false).ok()?;
        }
        Some(self.deep.insert(cur))
    }

    /// Whether `parts` names a regular file, reached without following links.
    pub fn is_file<S: AsRef<str>>(&mut self, parts: &[S]) -> bool {
        let Some((name, dirs)) = parts.split_last() else {
            return false;
        };
        let root = self.root;
        match self.parent(dirs) {
            Some(fd) => root.stat_regular(fd, name.as_ref()).is_ok(),
            None => false,
        }
    }

    /// Opens the regular file `parts` for reading.
    pub fn open<S: AsRef<str>>(
        &mut self,
        parts: &[S],
    ) -> Result<(std::fs::File, FileStat), Refusal> {
        let Some((name, dirs)) = parts.split_last() else {
            return Err(Refusal::IsDir);
        };
        let root = self.root;
        let fd = self.parent(dirs).ok_or(Refusal::NotFound)?;
        root.open_file_in(fd, name.as_ref())
            .map(|(fd, st)| (std::fs::File::from(fd), st))
    }
}

/// Sorts workspace-relative results the way `rg --sort path` does (component by component).
pub(super) fn sort_paths<T>(items: &mut [(String, T)]) {
    items.sort_unstable_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
}

/// One walker thread's results, handed to the shared list when the thread's visitor is dropped
/// (at the end of the walk), so threads do not contend on a lock per result.
pub(super) struct Batch<'a, T> {
    pub items: Vec<T>,
    sink: &'a std::sync::Mutex<Vec<T>>,
}

impl<'a, T> Batch<'a, T> {
    pub fn new(sink: &'a std::sync::Mutex<Vec<T>>) -> Self {
        Batch {
            items: Vec::new(),
            sink,
        }
    }
}

impl<T> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        self.sink
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(&mut self.items);
    }
}
