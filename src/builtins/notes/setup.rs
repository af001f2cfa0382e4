//! The NotesTool's configuration: its prompt texts, its limits and why building it failed.

use nix::errno::Errno;
use std::collections::HashMap;

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "tool.desc.notes",
        "Read or append note files under the restricted directory {root}, for recording progress / plans / decisions across sessions. action=read reads the whole note; action=append appends content to the end (writes to disk, needs confirmation).",
    ),
    ("tool.param.notes.action", "Operation: read = read the note / append = append to the end of the note"),
    ("tool.param.notes.path", "Note file path relative to the restricted root, e.g. progress.md"),
    ("tool.param.notes.content", "For append: the text to append; ignored for read"),
    ("tool.msg.notes.bad_action", "Error: action must be read / append, got {action}"),
    ("tool.msg.notes.empty_path", "Error: path must not be empty"),
    ("tool.msg.notes.path_escape", "Error: path out of bounds; only files under {root} are accessible"),
    (
        "tool.msg.notes.bad_path",
        "Error: path {path} is not accepted: use plain names separated by single '/' (no empty or hidden components, no control characters, at most 32 levels and 1024 bytes)",
    ),
    ("tool.msg.notes.empty_note", "(note {path} does not exist yet or is empty)"),
    ("tool.msg.notes.read_failed", "Error: failed to read note {path} ({err})"),
    ("tool.msg.notes.truncated", "\n…(note truncated, over {max} characters)"),
    ("tool.msg.notes.append_empty", "Error: append content must not be empty"),
    ("tool.msg.notes.append_too_large", "Error: a single append exceeds the limit ({max} characters); rejected"),
    ("tool.msg.notes.file_too_large", "Error: the note would exceed the size limit ({max} bytes) after appending; rejected"),
    ("tool.msg.notes.write_failed", "Error: failed to write note {path} ({err})"),
    ("tool.msg.notes.busy", "Error: note {path} is in use by another reader or writer; try again"),
    ("tool.msg.notes.not_regular", "Error: note {path} is not a regular file with a single link; refused"),
    ("tool.msg.notes.appended", "Appended {n} characters to note {path}."),
];

/// Why a NotesTool could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotesSetupError {
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Permission(String),
    #[error("{message}")]
    Io { errno: i32, message: String },
}

pub struct NotesOptions {
    pub max_read_chars: usize,
    pub max_append_chars: usize,
    pub max_file_bytes: u64,
    pub prompts: Option<HashMap<String, String>>,
}

impl Default for NotesOptions {
    fn default() -> Self {
        NotesOptions {
            max_read_chars: 8000,
            max_append_chars: 50_000,
            max_file_bytes: 2_000_000,
            prompts: None,
        }
    }
}

/// A failed system call while setting up, with what was being done.
pub(super) fn io_err(e: Errno, what: &str) -> NotesSetupError {
    NotesSetupError::Io {
        errno: e as i32,
        message: format!("{what}: {}", e.desc()),
    }
}
