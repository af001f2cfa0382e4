//! Approval rules and limits for calls that need a person's confirmation (`Approval` in
//! Python).
//!
//! A call that needs confirmation is decided, in order: by the first approval rule whose
//! pattern matches the tool's name (approve without asking, or refuse without asking); then,
//! once a person has refused `max_attempts` calls of the tool in this run, refused without
//! asking; otherwise a person is asked. A call no rule covers and nobody can be asked about is
//! refused: no call that needs confirmation is ever approved silently.

use std::collections::HashMap;
use std::sync::Mutex;

/// Whether `name` matches `pattern`: `*` matches any run of characters, `?` one character,
/// anything else itself.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Classic wildcard matching with one backtrack point for the last `*`.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == n[ni])) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The approval rules of a run: `(pattern, approve)` pairs, the first match deciding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApprovalRules {
    pub rules: Vec<(String, bool)>,
    /// Refusals by a person of one tool's calls after which its calls are refused unasked.
    pub max_attempts: Option<u32>,
}

impl ApprovalRules {
    pub fn new(rules: Vec<(String, bool)>, max_attempts: Option<u32>) -> ApprovalRules {
        ApprovalRules {
            rules,
            max_attempts,
        }
    }

    /// The first matching rule's verdict and pattern, or None when no rule covers the tool.
    pub fn rule_for(&self, name: &str) -> Option<(bool, &str)> {
        self.rules
            .iter()
            .find(|(pattern, _)| pattern_matches(pattern, name))
            .map(|(pattern, approve)| (*approve, pattern.as_str()))
    }
}

/// A person's refusals in one run, per tool.
#[derive(Debug, Default)]
pub struct Refusals {
    counts: Mutex<HashMap<String, u32>>,
}

impl Refusals {
    /// Counts one refusal of `name`.
    pub fn record(&self, name: &str) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        *counts.entry(name.to_owned()).or_default() += 1;
    }

    /// Whether `name` has been refused `max` times or more.
    pub fn used_up(&self, name: &str, max: u32) -> bool {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.get(name).copied().unwrap_or(0) >= max
    }
}

/// A call refused without asking, because its tool was refused `max` times in this run.
pub fn attempts_used(name: &str, max: u32) -> String {
    let times = if max == 1 {
        "once".to_owned()
    } else {
        format!("{max} times")
    };
    format!(
        "Error: calls of tool '{name}' were refused {times} in this run, the most its approval \
         allows; this call was refused without asking. Do not call '{name}' again in this run: \
         do without it or tell the user what you need."
    )
}

/// A call refused by an approval rule (`pattern`).
pub fn refused_by_rule(name: &str, pattern: &str) -> String {
    format!(
        "Error: tool '{name}' may not run: the approval rule '{pattern}' refuses it; the call \
         was not executed."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_like_shell_globs() {
        assert!(pattern_matches("delete_*", "delete_file"));
        assert!(pattern_matches("*", "anything"));
        assert!(pattern_matches("read_?", "read_a"));
        assert!(!pattern_matches("read_?", "read_ab"));
        assert!(pattern_matches("a*b*c", "aXbYbZc"));
        assert!(!pattern_matches("a*b*c", "aXbYbZ"));
        assert!(pattern_matches("exact", "exact"));
        assert!(!pattern_matches("exact", "exactly"));
        assert!(pattern_matches("mcp:*", "mcp:fs_write"));
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let rules = ApprovalRules {
            rules: vec![("send_mail".into(), false), ("send_*".into(), true)],
            max_attempts: None,
        };
        assert_eq!(rules.rule_for("send_mail"), Some((false, "send_mail")));
        assert_eq!(rules.rule_for("send_sms"), Some((true, "send_*")));
        assert_eq!(rules.rule_for("delete"), None);
    }

    #[test]
    fn refusals_are_counted_per_tool() {
        let r = Refusals::default();
        assert!(!r.used_up("t", 1));
        r.record("t");
        assert!(r.used_up("t", 1));
        assert!(!r.used_up("t", 2));
        assert!(!r.used_up("u", 1));
        assert_eq!(
            attempts_used("t", 2),
            "Error: calls of tool 't' were refused 2 times in this run, the most its approval \
             allows; this call was refused without asking. Do not call 't' again in this run: \
             do without it or tell the user what you need."
        );
        assert!(attempts_used("t", 1).contains("refused once in this run"));
    }
}
