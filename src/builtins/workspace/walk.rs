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
use std::path::{Path, PathBuf};
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
    b.filter_entry(
        move |e| match e.path().strip_prefix(&root).ok().and_then(Path::to_str) {
            Some(rel) if !rel.is_empty() => deny.matched(rel).is_none(),
            _ => true,
        },
    );
    b
}

/// A workspace-relative path as components, if it is UTF-8.
pub(super) fn parts(root: &Path, path: &Path) -> Option<Vec<String>> {
    let rel = path.strip_prefix(root).ok()?;
    rel.components()
        .map(|c| c.as_os_str().to_str().map(str::to_string))
        .collect()
}

/// The directory last used, opened from the root: files of one directory come one after the
/// other, so most lookups cost a single `fstatat`/`openat`.
pub(super) struct DirCache<'a> {
    root: &'a Root,
    dir: Option<(Vec<String>, Option<OwnedFd>)>,
}

impl<'a> DirCache<'a> {
    pub fn new(root: &'a Root) -> Self {
        DirCache { root, dir: None }
    }

    fn parent(&mut self, dirs: &[String]) -> Option<&OwnedFd> {
        let fresh = !matches!(&self.dir, Some((d, _)) if d.as_slice() == dirs);
        if fresh {
            let fd = self.root.open_dir(dirs, false).ok();
            self.dir = Some((dirs.to_vec(), fd));
        }
        self.dir.as_ref().and_then(|(_, fd)| fd.as_ref())
    }

    /// Whether `parts` names a regular file, reached without following links.
    pub fn is_file(&mut self, parts: &[String]) -> bool {
        let Some((name, dirs)) = parts.split_last() else {
            return false;
        };
        let root = self.root;
        match self.parent(dirs) {
            Some(fd) => root.stat_regular(fd, name).is_ok(),
            None => false,
        }
    }

    /// Opens the regular file `parts` for reading.
    pub fn open(&mut self, parts: &[String]) -> Result<(std::fs::File, FileStat), Refusal> {
        let Some((name, dirs)) = parts.split_last() else {
            return Err(Refusal::IsDir);
        };
        let root = self.root;
        let fd = self.parent(dirs).ok_or(Refusal::NotFound)?;
        root.open_file_in(fd, name)
            .map(|(fd, st)| (std::fs::File::from(fd), st))
    }
}

/// Sorts workspace-relative results the way `rg --sort path` does (component by component).
pub(super) fn sort_paths<T>(items: &mut [(PathBuf, T)]) {
    items.sort_by(|a, b| a.0.cmp(&b.0));
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
