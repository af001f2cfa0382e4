//! What the agent last saw of each file: the read-before-write and staleness checks.
//!
//! `read_file` (and every successful write or edit) records the file's identity, size and
//! modification time. A later write or edit of an existing file goes ahead only when the file on
//! disk still has that fingerprint, so a change made meanwhile (by a person, a formatter, another
//! agent) is never overwritten with content built from an old copy.
//!
//! The records are kept per agent run (the run's id, which the agent hands each call under
//! `crate::tool::RUN_KEY`): a run may only replace what it read itself, even when one `Workspace` serves
//! many runs, one after the other or at once. Calls made outside a run (`execute_tool`) share one
//! record of their own. The records of the [`MAX_RUNS`] runs seen last are kept; an older run's
//! next write finds nothing read and is told to read the file again.

use crate::tool::RUN_KEY;
use nix::sys::stat::FileStat;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
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

/// How many runs' records are kept.
pub const MAX_RUNS: usize = 256;

/// The run a call belongs to, if an agent said so.
pub(super) fn run_of(args: &Value) -> Option<&str> {
    args.get(RUN_KEY).and_then(Value::as_str)
}

type RunId = Option<Box<str>>;

#[derive(Default)]
pub(super) struct Seen {
    runs: Mutex<Runs>,
}

#[derive(Default)]
struct Runs {
    /// The runs with records, oldest first.
    order: VecDeque<RunId>,
    files: HashMap<RunId, HashMap<String, Fingerprint>>,
}

impl Seen {
    pub fn record(&self, run: Option<&str>, rel: &str, st: &FileStat) {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let key: RunId = run.map(Box::from);
        if !runs.files.contains_key(&key) {
            if runs.order.len() >= MAX_RUNS {
                if let Some(oldest) = runs.order.pop_front() {
                    runs.files.remove(&oldest);
                }
            }
            runs.order.push_back(key.clone());
        }
        runs.files
            .entry(key)
            .or_default()
            .insert(rel.to_string(), Fingerprint::of(st));
    }

    pub fn verdict(&self, run: Option<&str>, rel: &str, now: &FileStat) -> Verdict {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let key: RunId = run.map(Box::from);
        match runs.files.get(&key).and_then(|files| files.get(rel)) {
            None => Verdict::NeverRead,
            Some(fp) if *fp == Fingerprint::of(now) => Verdict::Fresh,
            Some(_) => Verdict::Stale,
        }
    }
}
