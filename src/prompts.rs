//! User-facing message templates with per-instance overrides (`prompts=` on every built-in).
//!
//! A template is plain text with `{name}` placeholders. Overrides are checked against the
//! defaults when the tool is built, so a misspelt key fails then instead of being ignored.

use crate::error::ConfigError;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct Prompts {
    templates: HashMap<&'static str, String>,
}

impl Prompts {
    pub fn new(
        defaults: &[(&'static str, &'static str)],
        overrides: Option<HashMap<String, String>>,
    ) -> Result<Prompts, ConfigError> {
        let mut templates: HashMap<&'static str, String> = defaults
            .iter()
            .map(|(k, v)| (*k, (*v).to_string()))
            .collect();
        for (key, value) in overrides.unwrap_or_default() {
            match defaults.iter().find(|(k, _)| *k == key) {
                Some((k, _)) => {
                    templates.insert(k, value);
                }
                None => {
                    let mut known: Vec<&str> = defaults.iter().map(|(k, _)| *k).collect();
                    known.sort_unstable();
                    return Err(ConfigError::UnknownPromptKey {
                        key,
                        known: known.join(", "),
                    });
                }
            }
        }
        Ok(Prompts { templates })
    }

    /// The raw template for `key`. Keys are compile-time constants of the tool, so a missing
    /// key is a bug in the tool; it renders as the key itself rather than panicking.
    pub fn get<'a>(&'a self, key: &'a str) -> &'a str {
        self.templates.get(key).map(String::as_str).unwrap_or(key)
    }

    /// Renders `key` with `{name}` placeholders replaced. Unknown placeholders are left as they
    /// are, and `{{`/`}}` produce literal braces, so templates can show JSON.
    pub fn fmt(&self, key: &str, args: &[(&str, &str)]) -> String {
        render(self.get(key), args)
    }
}

pub fn render(template: &str, args: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(pos) = rest.find(['{', '}']) {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        if let Some(after) = tail.strip_prefix("{{") {
            out.push('{');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("}}") {
            out.push('}');
            rest = after;
        } else if tail.starts_with('{') {
            match tail.find('}') {
                Some(end) => {
                    let name = &tail[1..end];
                    match args.iter().find(|(k, _)| *k == name) {
                        Some((_, v)) => out.push_str(v),
                        None => out.push_str(&tail[..=end]),
                    }
                    rest = &tail[end + 1..];
                }
                None => {
                    out.push_str(tail);
                    rest = "";
                }
            }
        } else {
            out.push('}');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: &[(&str, &str)] = &[("greet", "hello {who}"), ("plain", "no args")];

    #[test]
    fn overrides_replace_defaults() {
        let mut o = HashMap::new();
        o.insert("greet".to_string(), "你好 {who}".to_string());
        let p = Prompts::new(DEFAULTS, Some(o)).unwrap();
        assert_eq!(p.fmt("greet", &[("who", "世界")]), "你好 世界");
        assert_eq!(p.fmt("plain", &[]), "no args");
    }

    #[test]
    fn unknown_override_key_is_refused() {
        let mut o = HashMap::new();
        o.insert("gret".to_string(), "x".to_string());
        let err = Prompts::new(DEFAULTS, Some(o)).unwrap_err().to_string();
        assert!(
            err.contains("\"gret\"") && err.contains("greet, plain"),
            "{err}"
        );
    }

    #[test]
    fn render_handles_braces_and_unknown_placeholders() {
        assert_eq!(render("{a}-{b}", &[("a", "1")]), "1-{b}");
        assert_eq!(render("{{\"k\": {v}}}", &[("v", "2")]), "{\"k\": 2}");
        assert_eq!(render("open { end", &[]), "open { end");
        assert_eq!(render("stray } brace", &[]), "stray } brace");
    }
}
