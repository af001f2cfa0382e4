//! Finding the skills under the configured paths.
//!
//! Decisions: each path is a directory whose subfolders holding a `SKILL.md` are skills (hidden
//! subfolders are skipped, other subfolders are ignored); a path that itself holds a `SKILL.md`
//! is one skill. Paths and skill folders may be symlinks (they are the user's configuration):
//! each skill folder is resolved once here and remembered by device and inode, and everything
//! inside it, `SKILL.md` included, is opened without following links (see
//! [`crate::builtins::confined_dir`]). Skills come in the order of the paths, then by folder
//! name. Every problem is reported, not only the first: the error lists them one a line.

use super::front_matter::{as_text, parse, SkillMeta};
use super::texts::*;
use crate::builtins::confined_dir::{read_prefix, ConfinedDir, OpenRefusal};
use crate::prompts::render;
use std::path::{Path, PathBuf};

/// Largest SKILL.md read, in bytes.
pub const MAX_SKILL_FILE_BYTES: usize = 1 << 20;
pub const SKILL_FILE: &str = "SKILL.md";
/// At most this many problems are listed in the error (then how many more there are).
pub const MAX_REPORTED: usize = 50;

/// One discovered skill.
#[derive(Debug, Clone)]
pub struct Skill {
    pub meta: SkillMeta,
    /// The skill's folder, resolved.
    pub dir: PathBuf,
    pub dev: u64,
    pub ino: u64,
}

impl Skill {
    pub fn file(&self) -> PathBuf {
        self.dir.join(SKILL_FILE)
    }
}

/// The skills under `paths`, or every problem found, one a line.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<Skill>, String> {
    let mut skills: Vec<Skill> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for path in paths {
        let shown = path.display().to_string();
        let folders = match skill_folders(path) {
            Ok(folders) => folders,
            Err(e) => {
                errors.push(render(ERR_PATH, &[("path", &shown), ("err", &e)]));
                continue;
            }
        };
        for dir in folders {
            match load(&dir) {
                Ok(Some(skill)) => skills.push(skill),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
    }
    // Duplicates: the map is keyed by name, pointing at the first skill of that name.
    let mut seen: std::collections::HashMap<&str, &Skill> = Default::default();
    for skill in &skills {
        if let Some(first) = seen.insert(&skill.meta.name, skill) {
            seen.insert(&first.meta.name, first);
            let at = |s: &Skill| format!("{}:{}", s.file().display(), s.meta.name_line);
            errors.push(render(
                ERR_DUPLICATE,
                &[
                    ("name", &skill.meta.name),
                    ("first", &at(first)),
                    ("second", &at(skill)),
                ],
            ));
        }
    }
    if errors.is_empty() {
        return Ok(skills);
    }
    let more = errors.len().saturating_sub(MAX_REPORTED);
    errors.truncate(MAX_REPORTED);
    if more > 0 {
        errors.push(render(ERR_MORE, &[("n", &more.to_string())]));
    }
    Err(errors.join("\n"))
}

/// The folders under `path` that may hold a SKILL.md, resolved (or `path` itself when it
/// holds one). Entries' types come from the directory listing: only symlinks cost a lookup.
fn skill_folders(path: &Path) -> Result<Vec<PathBuf>, String> {
    let root = std::fs::canonicalize(path).map_err(|e| e.to_string())?;
    if !std::fs::metadata(&root)
        .map_err(|e| e.to_string())?
        .is_dir()
    {
        return Err("not a directory".into());
    }
    if std::fs::symlink_metadata(root.join(SKILL_FILE)).is_ok() {
        return Ok(vec![root]);
    }
    // (the name in the listing, the resolved folder): skills come by the names the user sees.
    let mut folders: Vec<(std::ffi::OsString, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&root).map_err(|e| e.to_string())? {
        let Ok(entry) = entry else { continue };
        if entry.file_name().as_encoded_bytes().starts_with(b".") {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => folders.push((entry.file_name(), entry.path())),
            Ok(t) if t.is_symlink() => {
                if let Ok(target) = std::fs::canonicalize(entry.path()) {
                    if target.is_dir() {
                        folders.push((entry.file_name(), target));
                    }
                }
            }
            _ => {}
        }
    }
    folders.sort();
    Ok(folders.into_iter().map(|(_, dir)| dir).collect())
}

/// Reads and parses the SKILL.md of the resolved folder `dir`; `None` when it has none.
fn load(dir: &Path) -> Result<Option<Skill>, String> {
    let file = dir.join(SKILL_FILE).display().to_string();
    let read_err = |err: &str| render(ERR_READ, &[("file", &file), ("err", err)]);
    let opened = open_dir(dir)
        .and_then(|(confined, dev, ino)| read_skill_file(&confined).map(|bytes| (bytes, dev, ino)));
    let (bytes, dev, ino) = match opened {
        Ok(read) => read,
        Err(ReadFailure::Missing) => return Ok(None),
        Err(e) => {
            return Err(match e {
                ReadFailure::TooLarge => render(
                    ERR_TOO_LARGE,
                    &[("file", &file), ("max", &MAX_SKILL_FILE_BYTES.to_string())],
                ),
                ReadFailure::NotRegular => read_err("not a regular file with a single link"),
                ReadFailure::Os(e) => read_err(e.desc()),
                ReadFailure::Missing | ReadFailure::Moved => {
                    read_err("the folder changed while it was read")
                }
            })
        }
    };
    let text = as_text(&file, &bytes)?;
    let meta = parse(&file, text)?.meta;
    Ok(Some(Skill {
        meta,
        dir: dir.to_path_buf(),
        dev,
        ino,
    }))
}

/// Why a SKILL.md could not be read.
pub enum ReadFailure {
    Missing,
    NotRegular,
    TooLarge,
    /// The folder is not the one discovered (checked by device and inode).
    Moved,
    Os(nix::errno::Errno),
}

/// Opens `dir` (its last component must not be a symlink) with its device and inode.
fn open_dir(dir: &Path) -> Result<(ConfinedDir, u64, u64), ReadFailure> {
    let (confined, st) = ConfinedDir::open(dir).map_err(|e| match e {
        nix::errno::Errno::ENOENT | nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR => {
            ReadFailure::Moved
        }
        e => ReadFailure::Os(e),
    })?;
    Ok((confined, st.st_dev, st.st_ino))
}

/// The bytes of the SKILL.md in `confined`, read without following links.
pub fn read_skill_file(confined: &ConfinedDir) -> Result<Vec<u8>, ReadFailure> {
    let (fd, size) = confined
        .open_regular(&[SKILL_FILE.to_string()])
        .map_err(|e| match e {
            OpenRefusal::Missing => ReadFailure::Missing,
            OpenRefusal::NotRegular => ReadFailure::NotRegular,
            OpenRefusal::Os(e) => ReadFailure::Os(e),
        })?;
    if size > MAX_SKILL_FILE_BYTES {
        return Err(ReadFailure::TooLarge);
    }
    let bytes = read_prefix(&fd, size, MAX_SKILL_FILE_BYTES + 1).map_err(ReadFailure::Os)?;
    if bytes.len() > MAX_SKILL_FILE_BYTES {
        return Err(ReadFailure::TooLarge);
    }
    Ok(bytes)
}

/// The skill's folder, opened again and checked to be the one discovered.
pub fn reopen(skill: &Skill) -> Result<ConfinedDir, ReadFailure> {
    let (confined, dev, ino) = open_dir(&skill.dir)?;
    if dev != skill.dev || ino != skill.ino {
        return Err(ReadFailure::Moved);
    }
    Ok(confined)
}
