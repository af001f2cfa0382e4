//! A SKILL.md: its YAML front matter (between a first line `---` and the next line `---`),
//! checked field by field, and the body after it.
//!
//! Decisions: a UTF-8 byte order mark before the first `---` is skipped and `\r\n` line ends
//! are accepted; keys other than `name`, `description` and `triggers` are allowed and ignored
//! (the Agent Skills format has `license`, `metadata`, ...); `triggers` may be absent. Every
//! error names the file and the line: the line of the offending key, of the YAML error, or 1
//! when something is missing altogether.

use super::texts::*;
use crate::prompts::render;
use serde_yaml_ng::Value;

/// Longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// What the front matter says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillMeta {
    pub name: String,
    pub description: String,
    pub triggers: Vec<String>,
    /// The line of `name:` (to point at both files of a duplicate).
    pub name_line: usize,
}

/// A parsed SKILL.md: its front matter and where the body starts (a byte offset).
pub struct Parsed<'a> {
    pub meta: SkillMeta,
    pub body: &'a str,
}

/// Whether `name` follows the rule: 1 to 64 lowercase ASCII letters, digits and hyphens.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The text of a SKILL.md, or the error naming its first invalid byte's line and column.
pub fn as_text<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, String> {
    std::str::from_utf8(bytes).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let column = before.len() - line_start + 1;
        render(
            ERR_UTF8,
            &[
                ("file", file),
                ("line", &line.to_string()),
                ("column", &column.to_string()),
            ],
        )
    })
}

/// Splits and checks the front matter of `text` (the file named `file`).
pub fn parse<'a>(file: &str, text: &'a str) -> Result<Parsed<'a>, String> {
    let f = [("file", file)];
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if !is_fence(first) {
        return Err(render(ERR_NO_FRONT_MATTER, &f));
    }
    let yaml_start = first.len();
    let mut at = yaml_start;
    let mut end = None;
    for line in lines {
        if is_fence(line) {
            end = Some((at, at + line.len()));
            break;
        }
        at += line.len();
    }
    let Some((yaml_end, body_start)) = end else {
        return Err(render(ERR_UNCLOSED, &f));
    };
    let yaml = &text[yaml_start..yaml_end];
    let value: Value = serde_yaml_ng::from_str(yaml).map_err(|e| {
        // The YAML starts on the file's line 2.
        let line = e.location().map_or(2, |l| l.line() + 1);
        let mut err = e.to_string();
        // The location is given as the file's line already; drop the YAML's own.
        if let Some(cut) = err.find(" at line ") {
            err.truncate(cut);
        }
        render(
            ERR_YAML,
            &[("file", file), ("line", &line.to_string()), ("err", &err)],
        )
    })?;
    let map = match value {
        Value::Mapping(map) => map,
        other => {
            return Err(render(
                ERR_NOT_MAPPING,
                &[("file", file), ("kind", kind(&other))],
            ))
        }
    };
    let line_of = |key: &str| key_line(yaml, key);
    let string_field = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(render(
                ERR_NOT_STRING,
                &[
                    ("file", file),
                    ("line", &line_of(key).to_string()),
                    ("key", key),
                    ("kind", kind(other)),
                ],
            )),
        }
    };
    let name_line = line_of("name");
    let name = string_field("name")?.ok_or_else(|| render(ERR_NO_NAME, &f))?;
    if !is_valid_name(&name) {
        return Err(render(
            ERR_BAD_NAME,
            &[
                ("file", file),
                ("line", &name_line.to_string()),
                ("name", &crate::builtins::cli::tokenize::py_repr_str(&name)),
            ],
        ));
    }
    let description_line = line_of("description").to_string();
    let description = string_field("description")?
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| {
            render(
                ERR_NO_DESCRIPTION,
                &[("file", file), ("line", &description_line)],
            )
        })?;
    let n = description.chars().count();
    if n > MAX_DESCRIPTION_CHARS {
        return Err(render(
            ERR_LONG_DESCRIPTION,
            &[
                ("file", file),
                ("line", &description_line),
                ("n", &n.to_string()),
            ],
        ));
    }
    let triggers = match map.get("triggers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Sequence(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad_triggers(file, line_of("triggers")))?,
        Some(_) => return Err(bad_triggers(file, line_of("triggers"))),
    };
    Ok(Parsed {
        meta: SkillMeta {
            name,
            description,
            triggers,
            name_line,
        },
        body: &text[body_start..],
    })
}

fn bad_triggers(file: &str, line: usize) -> String {
    render(
        ERR_BAD_TRIGGERS,
        &[("file", file), ("line", &line.to_string())],
    )
}

/// A line `---` (trailing spaces and `\r` allowed).
fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// The file line of a top-level `key:` in the front matter, or 1 (the opening fence).
fn key_line(yaml: &str, key: &str) -> usize {
    yaml.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(1, |i| i + 2)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}
