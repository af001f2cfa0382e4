//! `write_todos`: the run's task list, which the model rewrites as it works (`TodoTool` in
//! Python keeps the list in the run).
//!
//! Decisions: each call sends the whole list (so the model never has to patch it by index);
//! an item is `{content, status}` with status `pending`, `in_progress` or `completed`; at most
//! [`MAX_ITEMS`] items of at most [`MAX_CONTENT_CHARS`] characters each, content not blank. The
//! model reads the whole list back after every call, with counts, so it sees what it wrote.
//! More than one item in progress is allowed (parallel work happens) but the description asks
//! for one at a time.

use crate::prompts::Prompts;
use serde_json::{json, Value};

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "tool.desc.write_todos",
        "Keep a task list for this job: send the whole list each time (it replaces the previous one). Use it for work of three or more steps: write the steps down first, mark one in_progress before you start it and completed as soon as it is done, add steps you discover. Skip it for simple requests.",
    ),
    ("tool.param.write_todos.todos", "The complete task list, in order"),
    ("tool.param.write_todos.content", "What to do, as a short imperative sentence"),
    ("tool.param.write_todos.status", "pending, in_progress or completed"),
    ("tool.msg.write_todos.header", "Task list updated: {completed} of {total} completed, {in_progress} in progress, {pending} pending."),
    ("tool.msg.write_todos.empty", "Task list cleared (no items)."),
    ("tool.msg.write_todos.done", "All items are completed."),
    ("tool.msg.write_todos.too_many", "Error: the task list has {count} items; at most {max} are allowed. Merge small steps."),
    ("tool.msg.write_todos.too_long", "Error: item {index} has {count} characters; at most {max} are allowed. Keep each item short."),
    ("tool.msg.write_todos.not_list", "Error: todos must be a list of items, each with content and status."),
    ("tool.msg.write_todos.blank", "Error: item {index} has no content."),
    ("tool.msg.write_todos.bad_item", "Error: item {index} must be an object with content (a string) and status (pending, in_progress or completed)."),
];

/// At most this many items.
pub const MAX_ITEMS: usize = 100;
/// At most this many characters in one item's content.
pub const MAX_CONTENT_CHARS: usize = 2000;

/// Where an item stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

impl TodoStatus {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "in_progress" => Some(Self::InProgress),
            "completed" => Some(Self::Completed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }

    fn mark(self) -> &'static str {
        match self {
            Self::Pending => "[ ]",
            Self::InProgress => "[~]",
            Self::Completed => "[x]",
        }
    }
}

/// One item of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Todo {
    pub content: String,
    pub status: TodoStatus,
}

/// The root input schema of `write_todos`.
pub fn input_schema(p: &Prompts) -> Value {
    json!({
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "maxItems": MAX_ITEMS,
                "description": p.get("tool.param.write_todos.todos"),
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": MAX_CONTENT_CHARS,
                            "description": p.get("tool.param.write_todos.content"),
                        },
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "completed"],
                            "description": p.get("tool.param.write_todos.status"),
                        },
                    },
                    "required": ["content", "status"],
                    "additionalProperties": false,
                },
            },
        },
        "required": ["todos"],
        "additionalProperties": false,
    })
}

/// The list the model sent, checked (the schema already held it, but a tool called directly
/// skips validation); the error is the text the model reads.
pub fn parse(p: &Prompts, todos: &Value) -> Result<Vec<Todo>, String> {
    let items = todos
        .as_array()
        .ok_or_else(|| p.get("tool.msg.write_todos.not_list").to_string())?;
    if items.len() > MAX_ITEMS {
        let (count, max) = (items.len().to_string(), MAX_ITEMS.to_string());
        return Err(p.fmt(
            "tool.msg.write_todos.too_many",
            &[("count", &count), ("max", &max)],
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let index = i + 1;
        let content = item.get("content").and_then(Value::as_str);
        let status = item
            .get("status")
            .and_then(Value::as_str)
            .and_then(TodoStatus::parse);
        let (Some(content), Some(status)) = (content, status) else {
            return Err(bad_item(p, index));
        };
        let content = content.trim();
        if content.is_empty() {
            return Err(p.fmt(
                "tool.msg.write_todos.blank",
                &[("index", &index.to_string())],
            ));
        }
        let chars = content.chars().count();
        if chars > MAX_CONTENT_CHARS {
            let args = [
                ("index", index.to_string()),
                ("count", chars.to_string()),
                ("max", MAX_CONTENT_CHARS.to_string()),
            ];
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            return Err(p.fmt("tool.msg.write_todos.too_long", &args));
        }
        out.push(Todo {
            content: content.to_string(),
            status,
        });
    }
    Ok(out)
}

fn bad_item(p: &Prompts, index: usize) -> String {
    p.fmt(
        "tool.msg.write_todos.bad_item",
        &[("index", &index.to_string())],
    )
}

/// What the model reads after a call: the counts and the whole list, one numbered line each.
pub fn render(p: &Prompts, todos: &[Todo]) -> String {
    if todos.is_empty() {
        return p.get("tool.msg.write_todos.empty").to_string();
    }
    let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count().to_string();
    let completed = count(TodoStatus::Completed);
    let header = p.fmt(
        "tool.msg.write_todos.header",
        &[
            ("total", &todos.len().to_string()),
            ("completed", &completed),
            ("in_progress", &count(TodoStatus::InProgress)),
            ("pending", &count(TodoStatus::Pending)),
        ],
    );
    let mut text = header;
    for (i, t) in todos.iter().enumerate() {
        // One line per item: a newline inside an item would read as another item.
        let content = t.content.replace(['\r', '\n'], " ");
        text.push_str(&format!("\n{}. {} {}", i + 1, t.status.mark(), content));
    }
    if completed == todos.len().to_string() {
        text.push('\n');
        text.push_str(p.get("tool.msg.write_todos.done"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompts() -> Prompts {
        Prompts::new(PROMPTS, None).unwrap()
    }

    #[test]
    fn renders_the_whole_list_with_counts() {
        let p = prompts();
        let todos = parse(
            &p,
            &json!([
                {"content": "Read the config", "status": "completed"},
                {"content": " Fix the parser\nquickly ", "status": "in_progress"},
                {"content": "Run the tests", "status": "pending"},
            ]),
        )
        .unwrap();
        assert_eq!(todos[1].content, "Fix the parser\nquickly");
        assert_eq!(
            render(&p, &todos),
            "Task list updated: 1 of 3 completed, 1 in progress, 1 pending.\n\
             1. [x] Read the config\n2. [~] Fix the parser quickly\n3. [ ] Run the tests"
        );
        assert_eq!(render(&p, &[]), "Task list cleared (no items).");
        let done = parse(&p, &json!([{"content": "a", "status": "completed"}])).unwrap();
        assert!(render(&p, &done).ends_with("\nAll items are completed."));
    }

    #[test]
    fn refuses_bad_lists_with_the_item_named() {
        let p = prompts();
        let err = |v: Value| parse(&p, &v).unwrap_err();
        assert_eq!(err(json!([{"content": "a", "status": "done"}])), "Error: item 1 must be an object with content (a string) and status (pending, in_progress or completed).");
        assert_eq!(
            err(
                json!([{"content": "a", "status": "pending"}, {"content": "  ", "status": "pending"}])
            ),
            "Error: item 2 has no content."
        );
        let many: Vec<Value> = (0..101)
            .map(|i| json!({"content": i.to_string(), "status": "pending"}))
            .collect();
        assert!(
            err(Value::Array(many)).starts_with("Error: the task list has 101 items; at most 100")
        );
        let long = "é".repeat(2001);
        assert!(err(json!([{"content": long, "status": "pending"}]))
            .starts_with("Error: item 1 has 2001 characters"));
        assert_eq!(
            err(json!("not a list")),
            "Error: todos must be a list of items, each with content and status."
        );
    }

    #[test]
    fn schema_matches_the_limits() {
        let s = input_schema(&prompts());
        assert_eq!(s["properties"]["todos"]["maxItems"], json!(100));
        assert_eq!(
            s["properties"]["todos"]["items"]["properties"]["status"]["enum"],
            json!(["pending", "in_progress", "completed"])
        );
    }
}
