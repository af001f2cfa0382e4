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
    // The walker visits a directory's entries only when the directory itself passed, and the
    // base (depth 0) passed the full check as the tool's `path`, so `prunes` (the entry's own
    // name, and path tails only for a name that may end one) is all it takes.
    b.filter_entry(move |e| {
        let path = e.path();
        let bytes = path.as_os_str().as_bytes();
        let name = memchr::memrchr(b'/', bytes).map_or(bytes, |i| &bytes[i + 1..]);
        match std::str::from_utf8(name) {
            Ok(name) if e.depth() > 0 => !deny.prunes(name, || relative(&root, path)),
            _ => true,
        }
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

    /// The directory `dirs` (a workspace-relative path, `""` for the root) below the root, None
    /// when it cannot be reached without following a link (or is gone).
    fn parent(&mut self, dirs: &str) -> Option<&OwnedFd> {
        let root = self.root;
        let mut names = dirs.split('/').filter(|n| !n.is_empty()).peekable();
        let mut shared = 0;
        while let (Some((open, _)), Some(name)) = (self.open.get(shared), names.peek()) {
            if open != name {
                break;
            }
            names.next();
            shared += 1;
        }
        self.open.truncate(shared);
        // Past `MAX_HELD` levels, the rest is opened for this lookup alone.
        let mut deep: Option<OwnedFd> = None;
        for name in names {
            let above = match &deep {
                Some(fd) => fd,
                None => self.open.last().map_or(&root.fd, |(_, fd)| fd),
            };
            let fd = root.open_child(above, name, false).ok()?;
            if deep.is_none() && self.open.len() < MAX_HELD {
                self.open.push((name.to_string(), fd));
            } else {
                deep = Some(fd);
            }
        }
        match deep {
            Some(fd) => Some(self.deep.insert(fd)),
            None => Some(self.open.last().map_or(&root.fd, |(_, fd)| fd)),
        }
    }

    /// Whether `rel` (workspace-relative) names a regular file, reached without following links.
    pub fn is_file(&mut self, rel: &str) -> bool {
        let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        let root = self.root;
        match self.parent(dirs) {
            Some(fd) => root.stat_regular(fd, name).is_ok(),
            None => false,
        }
    }

    /// Opens the regular file `rel` (workspace-relative) for reading.
    pub fn open(&mut self, rel: &str) -> Result<(std::fs::File, FileStat), Refusal> {
        let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if name.is_empty() {
            return Err(Refusal::IsDir);
        }
        let root = self.root;
        let fd = self.parent(dirs).ok_or(Refusal::NotFound)?;
        root.open_file_in(fd, name)
            .map(|(fd, st)| (std::fs::File::from(fd), st))
    }
}

/// Sorts workspace-relative results the way `rg --sort path` does: component by component,
/// which is byte order with `/` taken as lower than any byte a name can hold (no name holds NUL).
pub(super) fn sort_paths<T>(items: &mut [(String, T)]) {
    items.sort_unstable_by(|a, b| path_order(&a.0, &b.0));
}

fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let key = |s: &[u8]| {
        s.get(same)
            .map(|&c| if c == b'/' { 0 } else { u16::from(c) + 1 })
    };
    key(a).cmp(&key(b))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_sort_component_by_component() {
        let names = [
            "a", "a/b", "a-b", "a.b/c", "a/b/c", "ab", "a/-", "a/b.py", "a/b/x", "A", "é/x", "a b",
            "a/\u{1}", "z",
        ];
        let mut items: Vec<(String, ())> = names.iter().map(|n| (n.to_string(), ())).collect();
        sort_paths(&mut items);
        let mut expected: Vec<&str> = names.to_vec();
        expected.sort_by(|a, b| a.split('/').cmp(b.split('/')));
        assert_eq!(
            items.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
            expected
        );
        assert_eq!(
            expected[..4],
            ["A", "a", "a/\u{1}", "a/-"],
            "a directory's entries come right after it"
        );
    }

    #[test]
    fn walked_paths_are_cut_at_the_root() {
        let root = Path::new("/w/root");
        assert_eq!(relative(root, Path::new("/w/root/a/b.py")), Some("a/b.py"));
        assert_eq!(relative(root, Path::new("/w/root")), Some(""));
        assert_eq!(relative(root, Path::new("/w/rootless/a")), None);
        assert_eq!(relative(Path::new("/"), Path::new("/etc/x")), Some("etc/x"));
    }
}
