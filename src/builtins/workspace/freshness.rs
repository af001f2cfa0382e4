//! What the agent last saw of each file: the read-before-write and staleness checks.
//!
//! `read_file` (and every successful write or edit) records the file's identity, size and
//! modification time. A later write or edit of an existing file goes ahead only when the file on
//! disk still has that fingerprint, so a change made meanwhile (by a person, a formatter, another
//! agent) is never overwritten with content built from an old copy. The records live as long as
//! the `Workspace` (give each agent run its own workspace for per-run records).

use nix::sys::stat::FileStat;
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fingerprint {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: (i64, i64),
}

impl Fingerprint {
    pub fn of(st: &FileStat) -> Fingerprint {
        Fingerprint {
            dev: st.st_dev,
            ino: st.st_ino,
            size: st.st_size,
            mtime: (st.st_mtime, st.st_mtime_nsec),
        }
    }
}

/// Whether an existing file may be replaced.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Fresh,
    NeverRead,
    Stale,
}

#[derive(Default)]
pub(super) struct Seen {
    files: Mutex<HashMap<String, Fingerprint>>,
}

impl Seen {
    pub fn record(&self, rel: &str, st: &FileStat) {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(rel.to_string(), Fingerprint::of(st));
    }

    pub fn verdict(&self, rel: &str, now: &FileStat) -> Verdict {
        match self
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(rel)
        {
            None => Verdict::NeverRead,
            Some(fp) if *fp == Fingerprint::of(now) => Verdict::Fresh,
            Some(_) => Verdict::Stale,
        }
    }
}
