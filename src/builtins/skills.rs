//! SkillsTool: skills are folders holding a `SKILL.md` (YAML front matter with `name`,
//! `description` and optional `triggers`, then instructions in Markdown). The model lists them,
//! loads one (its body, without the front matter, and the list of the folder's other files)
//! and reads those files, confined to the skill's folder like the notes tool's root
//! ([`crate::builtins::confined_dir`]).
//!
//! Decisions (the issue is silent on these):
//! - Discovery happens once, when the tool is built; the bodies are read on demand, so an edited
//!   body shows at the next load, while names and descriptions stay those discovered (the
//!   system prompt must not change under a run). A folder replaced since discovery (another
//!   device or inode) is refused.
//! - The system-prompt section and `action=list` show names and descriptions only, each
//!   description cleaned like an MCP server's (controls and invisible format characters
//!   removed), its whitespace runs folded to one space, and cut at `max_description_chars`.
//! - Skill texts are the user's own configuration: results are not framed as external content
//!   and no call needs confirmation.
//! - `load` lists at most [`MAX_LISTED_FILES`] files, four levels deep, hidden files and links
//!   left out; `read` and `load` return at most `max_read_chars` characters (then a partial
//!   result says how many were kept).

use crate::builtins::confined_dir::{
    components, read_limit, read_prefix, text_response, ConfinedDir, OpenRefusal, PathRefusal,
};
use crate::prompts::Prompts;
use crate::response::ToolResponse;
use crate::schema::ToolParameter;
use crate::tool::{NativeTool, ToolSpec};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use discover::{Skill, MAX_SKILL_FILE_BYTES, SKILL_FILE};
pub use front_matter::{is_valid_name, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
pub use texts::PROMPTS;

/// At most this many files are listed by `load`.
pub const MAX_LISTED_FILES: usize = 100;
const MAX_LISTED_DEPTH: usize = 4;

/// Why a SkillsTool could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillsSetupError {
    /// Bad options.
    #[error("{0}")]
    Config(String),
    /// A path or a SKILL.md is wrong; one problem a line, each naming its file and line.
    #[error("{0}")]
    Invalid(String),
}

pub struct SkillsOptions {
    pub max_read_chars: usize,
    pub max_description_chars: usize,
    pub prompts: Option<HashMap<String, String>>,
}

impl Default for SkillsOptions {
    fn default() -> Self {
        SkillsOptions {
            max_read_chars: 20_000,
            max_description_chars: 300,
            prompts: None,
        }
    }
}

pub struct SkillsTool {
    spec: ToolSpec,
    prompts: Prompts,
    skills: Vec<Skill>,
    by_name: HashMap<String, usize>,
    max_read_chars: usize,
    /// The cleaned `- name: description` lines, shared by the section and `list`.
    listing: String,
}

impl SkillsTool {
    pub fn new(paths: &[PathBuf], opts: SkillsOptions) -> Result<SkillsTool, SkillsSetupError> {
        for (name, v) in [
            ("max_read_chars", opts.max_read_chars),
            ("max_description_chars", opts.max_description_chars),
        ] {
            if v == 0 {
                return Err(SkillsSetupError::Config(format!(
                    "{name} must be a positive integer, got 0"
                )));
            }
        }
        let prompts = Prompts::new(PROMPTS, opts.prompts)
            .map_err(|e| SkillsSetupError::Config(e.to_string()))?;
        let skills = discover::discover(paths).map_err(SkillsSetupError::Invalid)?;
        let by_name = skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.meta.name.clone(), i))
            .collect();
        let listing = skills
            .iter()
            .map(|s| {
                prompts.fmt(
                    "tool.msg.skills.item",
                    &[
                        ("name", &s.meta.name),
                        (
                            "description",
                            &clean_description(&s.meta.description, opts.max_description_chars),
                        ),
                    ],
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let action_schema = json!({
            "type": "string",
            "enum": ["list", "load", "read"],
            "description": prompts.get("tool.param.skills.action"),
        });
        let mut spec = ToolSpec::new(
            "skills",
            prompts.get("tool.desc.skills").to_string(),
            vec![
                ToolParameter::new("action", "string", prompts.get("tool.param.skills.action"))
                    .with_schema(action_schema),
                ToolParameter::new("name", "string", prompts.get("tool.param.skills.name"))
                    .optional(None),
                ToolParameter::new("file", "string", prompts.get("tool.param.skills.file"))
                    .optional(None),
            ],
        );
        spec.requires_confirmation = false;
        spec.external_content = false;
        Ok(SkillsTool {
            spec,
            prompts,
            skills,
            by_name,
            max_read_chars: opts.max_read_chars,
            listing,
        })
    }

    /// The skills discovered, in order.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The system-prompt section: names and cleaned descriptions; empty without skills.
    pub fn system_prompt_section(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        self.prompts
            .fmt("tool.section.skills", &[("skills", &self.listing)])
    }

    fn list(&self) -> ToolResponse {
        let text = if self.skills.is_empty() {
            self.prompts.get("tool.msg.skills.none").to_string()
        } else {
            self.prompts
                .fmt("tool.msg.skills.list", &[("skills", &self.listing)])
        };
        let names: Vec<&str> = self.skills.iter().map(|s| s.meta.name.as_str()).collect();
        ToolResponse::ok(text).with_data(json!({ "skills": names }))
    }

    fn find(&self, action: &str, args: &Value) -> Result<&Skill, ToolResponse> {
        let p = &self.prompts;
        let name = args
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        if name.is_empty() {
            return Err(ToolResponse::error(
                p.fmt("tool.msg.skills.no_name", &[("action", action)]),
            ));
        }
        match self.by_name.get(name) {
            Some(&i) => Ok(&self.skills[i]),
            None => {
                let names: Vec<&str> = self.skills.iter().map(|s| s.meta.name.as_str()).collect();
                let names = if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                };
                Err(ToolResponse::error(p.fmt(
                    "tool.msg.skills.unknown",
                    &[
                        ("name", &crate::builtins::cli::tokenize::py_repr_str(name)),
                        ("names", &crate::sanitize::sanitize_marked(&names, 2000)),
                    ],
                )))
            }
        }
    }

    fn load(&self, skill: &Skill) -> ToolResponse {
        let p = &self.prompts;
        let name = skill.meta.name.as_str();
        let dir = match discover::reopen(skill) {
            Ok(dir) => dir,
            Err(e) => return self.failure(name, SKILL_FILE, e),
        };
        let bytes = match discover::read_skill_file(&dir) {
            Ok(bytes) => bytes,
            Err(e) => return self.failure(name, SKILL_FILE, e),
        };
        let file = skill.file().display().to_string();
        let parsed = front_matter::as_text(&file, &bytes)
            .and_then(|text| front_matter::parse(&file, text).map(|p| p.body.to_string()));
        let body = match parsed {
            Ok(body) => body,
            Err(err) => {
                return ToolResponse::error(
                    p.fmt("tool.msg.skills.changed", &[("name", name), ("err", &err)]),
                )
            }
        };
        let body = body.trim_start_matches(['\n', '\r']).trim_end();
        let (files, more) = list_files(&skill.dir);
        let mut text = p.fmt("tool.msg.skills.loaded", &[("name", name), ("body", body)]);
        let mut truncated = false;
        if let Some((at, _)) = text.char_indices().nth(self.max_read_chars) {
            text.truncate(at);
            text.push_str(&p.fmt(
                "tool.msg.skills.truncated",
                &[("max", &self.max_read_chars.to_string())],
            ));
            truncated = true;
        }
        if !files.is_empty() {
            let mut lines: Vec<String> = files.iter().map(|f| format!("- {f}")).collect();
            if more > 0 {
                lines.push(p.fmt("tool.msg.skills.more_files", &[("n", &more.to_string())]));
            }
            text.push_str(&p.fmt(
                "tool.msg.skills.files",
                &[("name", name), ("files", &lines.join("\n"))],
            ));
        }
        let data = json!({"name": name, "files": files, "truncated": truncated});
        if truncated {
            ToolResponse::partial(text).with_data(data)
        } else {
            ToolResponse::ok(text).with_data(data)
        }
    }

    fn read(&self, skill: &Skill, args: &Value) -> ToolResponse {
        let p = &self.prompts;
        let name = skill.meta.name.as_str();
        let raw = args.get("file").and_then(Value::as_str).unwrap_or("");
        let shown = crate::builtins::cli::tokenize::py_repr_str(raw.trim());
        let parts = match components(raw) {
            Ok(parts) => parts,
            Err(PathRefusal::Empty) => {
                return ToolResponse::error(p.get("tool.msg.skills.no_file").to_string())
            }
            Err(PathRefusal::Escape) => {
                return ToolResponse::error(p.fmt(
                    "tool.msg.skills.path_escape",
                    &[("file", &shown), ("name", name)],
                ))
            }
            Err(PathRefusal::Bad) => {
                return ToolResponse::error(p.fmt("tool.msg.skills.bad_path", &[("file", &shown)]))
            }
        };
        let rel = parts.join("/");
        let dir: ConfinedDir = match discover::reopen(skill) {
            Ok(dir) => dir,
            Err(e) => return self.failure(name, &rel, e),
        };
        let (fd, size) = match dir.open_regular(&parts) {
            Ok(opened) => opened,
            Err(OpenRefusal::Missing) => {
                return self.failure(name, &rel, discover::ReadFailure::Missing)
            }
            Err(OpenRefusal::NotRegular) => {
                return self.failure(name, &rel, discover::ReadFailure::NotRegular)
            }
            Err(OpenRefusal::Os(e)) => {
                return self.failure(name, &rel, discover::ReadFailure::Os(e))
            }
        };
        let buf = match read_prefix(&fd, size, read_limit(self.max_read_chars)) {
            Ok(buf) => buf,
            Err(e) => return self.failure(name, &rel, discover::ReadFailure::Os(e)),
        };
        text_response(
            &buf,
            self.max_read_chars,
            json!({"name": name, "file": rel}),
            p,
            "tool.msg.skills.truncated",
        )
    }

    fn failure(&self, name: &str, file: &str, e: discover::ReadFailure) -> ToolResponse {
        use discover::ReadFailure as F;
        let p = &self.prompts;
        let args = [("name", name), ("file", file)];
        ToolResponse::error(match e {
            F::Missing => p.fmt("tool.msg.skills.missing", &args),
            F::NotRegular => p.fmt("tool.msg.skills.not_regular", &args),
            F::Moved => p.fmt("tool.msg.skills.moved", &args),
            F::TooLarge => p.fmt(
                "tool.msg.skills.read_failed",
                &[("name", name), ("file", file), ("err", "file too large")],
            ),
            F::Os(e) => p.fmt(
                "tool.msg.skills.read_failed",
                &[("name", name), ("file", file), ("err", e.desc())],
            ),
        })
    }
}

/// A description as the model sees it in a list: cleaned like an MCP server's, whitespace runs
/// folded to one space, cut at `limit` characters.
pub fn clean_description(description: &str, limit: usize) -> String {
    let folded = description.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::sanitize::sanitize_marked(&folded, limit)
}

/// The regular files of a skill's folder other than its SKILL.md, sorted, at most
/// [`MAX_LISTED_FILES`] (and how many more there are); hidden entries and links left out.
fn list_files(dir: &Path) -> (Vec<String>, usize) {
    let mut found = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((path, prefix, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with('.') || (depth == 0 && name == SKILL_FILE) {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let rel = format!("{prefix}{name}");
            if kind.is_file() {
                found.push(rel);
            } else if kind.is_dir() && depth + 1 < MAX_LISTED_DEPTH {
                stack.push((entry.path(), format!("{rel}/"), depth + 1));
            }
        }
    }
    found.sort();
    let more = found.len().saturating_sub(MAX_LISTED_FILES);
    found.truncate(MAX_LISTED_FILES);
    (found, more)
}

impl NativeTool for SkillsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: &Value) -> ToolResponse {
        let action = args
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        match action {
            "list" => self.list(),
            "load" | "read" => match self.find(action, args) {
                Ok(skill) if action == "load" => self.load(skill),
                Ok(skill) => self.read(skill, args),
                Err(resp) => resp,
            },
            _ => {
                let shown = match args.get("action") {
                    Some(Value::String(s)) => crate::builtins::cli::tokenize::py_repr_str(s.trim()),
                    Some(other) => other.to_string(),
                    None => "None".to_string(),
                };
                ToolResponse::error(
                    self.prompts
                        .fmt("tool.msg.skills.bad_action", &[("action", &shown)]),
                )
            }
        }
    }
}

mod discover;
mod front_matter;
#[cfg(test)]
mod tests;
mod texts;
