//! Exact-string replacement in a file's text, the way `edit_file` and `multi_edit` need it: the
//! file's own line endings kept, uniqueness enforced, and for a miss the closest lines found.
//!
//! Line endings: models send `\n`. In a file that uses `\r\n`, an `old_string` without `\r` is
//! matched with its newlines as `\r\n`, and `new_string` is written the same way, so the rest of
//! the file (even a mixed one) is left byte for byte as it was.

use std::collections::HashMap;

pub(super) struct Edit {
    pub old: String,
    pub new: String,
    pub all: bool,
}

#[derive(Debug)]
pub(super) enum Miss {
    NotFound,
    /// How many times it occurs, and the line numbers of the first few.
    Ambiguous(usize, Vec<usize>),
}

/// One replacement, for the diff: where in the text before it, and what it replaced.
pub(super) struct Change {
    pub at: usize,
    pub old: String,
    pub new: String,
}

fn line_of(text: &str, at: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count() + 1
}

/// Where one edit applies in a text: the form of its strings that matched (newlines as `\r\n`
/// in a CRLF file) and the byte offsets of the matches, which are char boundaries (whole matches
/// of a UTF-8 needle in UTF-8 text).
pub(super) struct Found {
    pub starts: Vec<usize>,
    old: String,
    new: String,
}

impl Found {
    /// The edited text as consecutive pieces: the text between matches and the replacement.
    pub fn pieces<'a>(&'a self, text: &'a str) -> Vec<&'a str> {
        let mut out = Vec::with_capacity(self.starts.len() * 2 + 1);
        let mut last = 0;
        for &i in &self.starts {
            out.push(&text[last..i]);
            out.push(self.new.as_str());
            last = i + self.old.len();
        }
        out.push(&text[last..]);
        out
    }

    /// The first `max` replacements, for the diff.
    pub fn changes(&self, max: usize) -> Vec<Change> {
        self.starts
            .iter()
            .take(max)
            .map(|&at| Change {
                at,
                old: self.old.clone(),
                new: self.new.clone(),
            })
            .collect()
    }
}

/// Finds where one edit applies in `text`.
pub(super) fn find(text: &str, edit: &Edit) -> Result<Found, Miss> {
    if edit.old.is_empty() {
        return Err(Miss::NotFound);
    }
    // Without a newline in either string, the line endings change nothing: no need to look.
    let crlf = (edit.old.contains('\n') || edit.new.contains('\n'))
        && !edit.old.contains('\r')
        && memchr::memmem::find(text.as_bytes(), b"\r\n").is_some();
    let mut forms: Vec<(String, String)> = Vec::with_capacity(2);
    if crlf {
        forms.push((
            edit.old.replace('\n', "\r\n"),
            edit.new.replace('\n', "\r\n"),
        ));
    }
    if !crlf || edit.old.contains('\n') {
        forms.push((edit.old.clone(), edit.new.clone()));
    }
    for (old, new) in forms {
        let starts: Vec<usize> =
            memchr::memmem::find_iter(text.as_bytes(), old.as_bytes()).collect();
        if starts.is_empty() {
            continue;
        }
        if starts.len() > 1 && !edit.all {
            let lines = starts.iter().take(10).map(|&i| line_of(text, i)).collect();
            return Err(Miss::Ambiguous(starts.len(), lines));
        }
        return Ok(Found { starts, old, new });
    }
    Err(Miss::NotFound)
}

/// The changed lines before and after one change, as `-`/`+` lines under an `@@ line N @@`
/// header, at most `max_lines` of each.
pub(super) fn diff(text_before: &str, change: &Change, max_lines: usize) -> String {
    let bytes = text_before.as_bytes();
    let start = memchr::memrchr(b'\n', &bytes[..change.at]).map_or(0, |i| i + 1);
    let end_old = change.at + change.old.len();
    let end = memchr::memchr(b'\n', &bytes[end_old..]).map_or(bytes.len(), |i| end_old + i);
    let prefix = &text_before[start..change.at];
    let suffix = &text_before[end_old..end];
    let mut out = format!("@@ line {} @@", line_of(text_before, change.at));
    for (sign, body) in [("-", &change.old), ("+", &change.new)] {
        let block = format!("{prefix}{body}{suffix}");
        let lines: Vec<&str> = block.split('\n').collect();
        for line in lines.iter().take(max_lines) {
            out.push('\n');
            out.push_str(sign);
            out.push_str(line.strip_suffix('\r').unwrap_or(line));
        }
        if lines.len() > max_lines {
            out.push_str(&format!(
                "\n{sign}…({} more lines)",
                lines.len() - max_lines
            ));
        }
    }
    out
}

fn bigrams(s: &str) -> HashMap<(char, char), usize> {
    let mut map = HashMap::new();
    let chars: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    for w in chars.windows(2) {
        *map.entry((w[0], w[1])).or_insert(0) += 1;
    }
    map
}

/// Similarity of two strings by shared character pairs (Dice), whitespace ignored.
fn similarity(probe: &HashMap<(char, char), usize>, probe_n: usize, line: &str) -> f64 {
    let other = bigrams(line);
    let n: usize = other.values().sum();
    if probe_n + n == 0 {
        return 0.0;
    }
    let shared: usize = other
        .iter()
        .map(|(k, c)| (*c).min(*probe.get(k).unwrap_or(&0)))
        .sum();
    2.0 * shared as f64 / (probe_n + n) as f64
}

/// The lines of `text` most like `old` (numbered as read_file numbers them), or None when
/// nothing is close.
pub(super) fn closest(text: &str, old: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.lines().collect();
    let first = old_lines.iter().position(|l| !l.trim().is_empty())?;
    let probe = bigrams(old_lines[first]);
    let probe_n: usize = probe.values().sum();
    let lines: Vec<&str> = text.lines().collect();
    let mut best = (0.0, 0usize);
    for (i, line) in lines.iter().enumerate() {
        let score = similarity(&probe, probe_n, line);
        if score > best.0 {
            best = (score, i);
        }
    }
    if best.0 < 0.5 {
        return None;
    }
    let from = best.1.saturating_sub(first);
    let count = old_lines.len().clamp(1, 10);
    let shown: Vec<String> = lines
        .iter()
        .enumerate()
        .skip(from)
        .take(count)
        .map(|(i, l)| format!("{:>6}\t{}", i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    Some(shown.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, edit: &Edit) -> Result<(String, Vec<Change>), Miss> {
        let found = find(text, edit)?;
        Ok((found.pieces(text).concat(), found.changes(usize::MAX)))
    }

    fn edit(old: &str, new: &str, all: bool) -> Edit {
        Edit {
            old: old.into(),
            new: new.into(),
            all,
        }
    }

    #[test]
    fn crlf_files_keep_their_endings_and_mixed_lines_stay() {
        let text = "a\r\nb\r\nc\nd\r\n";
        let (out, _) = apply(text, &edit("a\nb", "x\ny\nz", false)).unwrap();
        assert_eq!(out, "x\r\ny\r\nz\r\nc\nd\r\n");
    }

    #[test]
    fn a_crlf_file_gets_crlf_in_inserted_lines_only_where_needed() {
        let text = "a\r\nb\r\n";
        let (out, _) = apply(text, &edit("b", "b\nc", false)).unwrap();
        assert_eq!(out, "a\r\nb\r\nc\r\n");
        let (out, _) = apply("a\nb\n", &edit("b", "b\nc", false)).unwrap();
        assert_eq!(out, "a\nb\nc\n");
        let (out, _) = apply("x\r\na\nb\n", &edit("a\nb", "c", false)).unwrap();
        assert_eq!(
            out, "x\r\nc\n",
            "a mixed file's LF lines still match as sent"
        );
    }

    #[test]
    fn uniqueness_and_replace_all() {
        let text = "x = 1\ny = 1\nx = 1\n";
        match apply(text, &edit("x = 1", "x = 2", false)) {
            Err(Miss::Ambiguous(2, lines)) => assert_eq!(lines, vec![1, 3]),
            _ => panic!("expected ambiguous"),
        }
        let (out, changes) = apply(text, &edit("x = 1", "x = 2", true)).unwrap();
        assert_eq!(out, "x = 2\ny = 1\nx = 2\n");
        assert_eq!(changes.len(), 2);
        assert!(matches!(
            apply(text, &edit("z", "w", false)),
            Err(Miss::NotFound)
        ));
    }

    #[test]
    fn closest_lines_point_at_the_near_miss() {
        let text = "def f():\n    return 1\n\ndef compute_total(items):\n    return sum(items)\n";
        let got = closest(text, "def compute_totals(items):\n    return sum(items)").unwrap();
        assert_eq!(
            got,
            "     4\tdef compute_total(items):\n     5\t    return sum(items)"
        );
        assert!(closest(text, "zzzz qqqq").is_none());
    }

    #[test]
    fn diff_shows_whole_changed_lines() {
        let text = "one\ntwo three\nfour\n";
        let (_, changes) = apply(text, &edit("three", "3", false)).unwrap();
        assert_eq!(
            diff(text, &changes[0], 20),
            "@@ line 2 @@\n-two three\n+two 3"
        );
    }
}
