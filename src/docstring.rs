//! Docstring parsing for tools made from Python functions (`@tool`).
//!
//! The description is the first paragraph; parameter descriptions come from the parameter
//! section in any of the common styles: Google (`Args:` / `Arguments:` / `Parameters:`, the
//! header may carry trailing text), NumPy (`Parameters` underlined with dashes), Sphinx / epytext
//! (`:param x:`, `:param int x:`, `@param x:`) and the Chinese `参数：` section. Entries may span
//! several lines and paragraphs: lines are joined with a space, paragraphs with a blank line.
//! The first entry for a name wins.
//!
//! This runs once per decorated function and is most of the cost of `@tool` when written in
//! Python, hence Rust. It never fails: unreadable text yields what could be read.

/// What a docstring says about a function.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocInfo {
    pub description: String,
    /// (parameter name, description) in order of appearance, one entry per name.
    pub params: Vec<(String, String)>,
}

impl DocInfo {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.as_str())
    }

    fn insert(&mut self, name: &str, text: String) {
        let name = name.trim_start_matches('*');
        if !name.is_empty() && self.param(name).is_none() {
            self.params.push((name.to_string(), text));
        }
    }
}

const PARAM_SECTIONS: &[&str] = &[
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "kwargs",
    "other parameters",
    "attributes",
    "参数",
    "参数列表",
    "属性",
];
const NUMPY_SECTIONS: &[&str] = &[
    "parameters",
    "other parameters",
    "attributes",
    "params",
    "参数",
    "参数列表",
    "属性",
];
/// Headers that end the summary even with text after the colon ("Returns: the sum").
const STRONG_EXTRA: &[&str] = &[
    "returns", "return", "yields", "yield", "raises", "返回", "异常",
];
/// Headers that end the summary only when alone on their line ("Note: ..." is often prose).
const WEAK_SECTIONS: &[&str] = &[
    "examples",
    "example",
    "notes",
    "note",
    "see also",
    "references",
    "warnings",
    "warning",
    "todo",
    "methods",
    "示例",
    "例子",
    "注意",
    "说明",
    "备注",
];
/// Headers that end a section whose entries are not indented below its header.
const OTHER_SECTIONS: &[&str] = &[
    "returns",
    "return",
    "yields",
    "yield",
    "raises",
    "examples",
    "example",
    "notes",
    "note",
    "see also",
    "references",
    "warnings",
    "warning",
    "todo",
    "methods",
    "返回",
    "异常",
    "示例",
    "例子",
    "注意",
    "说明",
    "备注",
];
const FIELD_WORDS: &[&str] = &["param", "parameter", "arg", "argument", "key", "keyword"];
const SUMMARY_FIELD_WORDS: &[&str] = &[
    "param",
    "parameter",
    "arg",
    "argument",
    "key",
    "keyword",
    "type",
    "returns",
    "return",
    "rtype",
    "raises",
    "raise",
    "except",
    "exception",
    "var",
    "ivar",
    "cvar",
    "vartype",
    "meta",
];

/// Parse a docstring (as found in `__doc__`, indentation included).
pub fn parse(doc: &str) -> DocInfo {
    let expanded;
    let doc = if doc.contains('\t') {
        expanded = expand_tabs(doc);
        expanded.as_str()
    } else {
        doc
    };
    let mut info = DocInfo {
        description: summary(doc),
        params: Vec::new(),
    };
    let lines: Vec<&str> = doc.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let s = line.trim();
        if s.is_empty() {
            i += 1;
            continue;
        }
        let indent = indent_of(line);
        let next_is_rule = lines.get(i + 1).is_some_and(|l| is_rule(l));
        if next_is_rule && NUMPY_SECTIONS.contains(&s.to_lowercase().as_str()) {
            let body = &lines[i + 2..];
            i += 2 + numpy_section(body, indent, &mut info);
        } else if header_name(s).is_some_and(|(name, _)| PARAM_SECTIONS.contains(&name.as_str())) {
            let body = &lines[i + 1..];
            i += 1 + google_section(body, indent, &mut info);
        } else if starts_field(s, FIELD_WORDS, false) {
            i += field(&lines[i..], indent, &mut info);
        } else {
            i += 1;
        }
    }
    info
}

fn expand_tabs(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len() + 16);
    let mut col = 0;
    for ch in doc.chars() {
        match ch {
            '\t' => {
                let n = 8 - col % 8;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' | '\r' => {
                out.push(ch);
                col = 0;
            }
            _ => {
                out.push(ch);
                col += 1;
            }
        }
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).count()
}

fn is_rule(line: &str) -> bool {
    let s = line.trim();
    s.chars().count() >= 3 && s.chars().all(|c| c == '-')
}

fn is_blank_for_summary(line: &str) -> bool {
    line.chars().all(|c| c == ' ' || c == '\t' || c == '\r')
}

/// For "Args:" / "Parameters (optional): text" / "参数：" lines: the lowercased name before the
/// colon (without a parenthesised qualifier) and whether text follows the colon.
fn header_name(stripped: &str) -> Option<(String, bool)> {
    let cut = stripped
        .char_indices()
        .find(|&(_, c)| c == ':' || c == '：')?;
    let (pos, colon) = cut;
    if pos == 0 {
        return None;
    }
    let mut head = stripped[..pos].trim_end();
    if head.ends_with(')') || head.ends_with('）') {
        if let Some(open) = head.find(['(', '（']) {
            head = head[..open].trim_end();
        }
    }
    let rest = &stripped[pos + colon.len_utf8()..];
    Some((head.to_lowercase(), !rest.trim().is_empty()))
}

/// ":param x: ...", "@param x: ..." (or, for the summary, any known field) at the line start.
fn starts_field(stripped: &str, words: &[&str], colon_ok: bool) -> bool {
    let Some(rest) = stripped
        .strip_prefix(':')
        .or_else(|| stripped.strip_prefix('@'))
    else {
        return false;
    };
    words.iter().any(|w| {
        rest.strip_prefix(w)
            .and_then(|after| after.chars().next())
            .is_some_and(|c| c.is_whitespace() || (colon_ok && c == ':'))
    })
}

fn ends_summary(lines: &[&str], i: usize) -> bool {
    let s = lines[i].trim_start();
    if s.starts_with(">>>") || starts_field(s, SUMMARY_FIELD_WORDS, true) {
        return true;
    }
    if lines.get(i + 1).is_some_and(|l| is_rule(l)) {
        return true;
    }
    match header_name(s) {
        Some((name, has_text)) => {
            PARAM_SECTIONS.contains(&name.as_str())
                || STRONG_EXTRA.contains(&name.as_str())
                || (!has_text && WEAK_SECTIONS.contains(&name.as_str()))
        }
        None => false,
    }
}

fn summary(doc: &str) -> String {
    let body = doc.trim_start();
    let lines: Vec<&str> = body.split('\n').collect();
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate().skip(1) {
        if is_blank_for_summary(line) {
            end = i;
            break;
        }
    }
    let para = &lines[..end];
    let cut = (0..para.len())
        .find(|&i| ends_summary(para, i))
        .unwrap_or(para.len());
    let mut out = String::new();
    for line in &para[..cut] {
        for word in line.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
    }
    out
}

/// The lines of one entry; `None` marks a paragraph break.
#[derive(Default)]
struct Entry<'a> {
    parts: Vec<Option<&'a str>>,
}

impl<'a> Entry<'a> {
    fn push(&mut self, text: &'a str) {
        if !text.is_empty() {
            self.parts.push(Some(text));
        }
    }

    fn gap(&mut self) {
        if matches!(self.parts.last(), Some(Some(_))) {
            self.parts.push(None);
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        let mut pending_break = false;
        for part in &self.parts {
            match part {
                None => pending_break = true,
                Some(t) => {
                    if !out.is_empty() {
                        out.push_str(if pending_break { "\n\n" } else { " " });
                    }
                    out.push_str(t);
                    pending_break = false;
                }
            }
        }
        out
    }
}

fn is_word_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `*name`, leaving the rest of the text; None if no identifier starts here.
fn take_name(s: &str) -> Option<(&str, &str)> {
    let stars = s.len() - s.trim_start_matches('*').len();
    if stars > 2 {
        return None;
    }
    let rest = &s[stars..];
    let first = rest.chars().next()?;
    if !is_word_start(first) {
        return None;
    }
    let end = rest
        .char_indices()
        .find(|&(_, c)| !is_word(c))
        .map_or(rest.len(), |(i, _)| i);
    Some((&s[..stars + end], &rest[end..]))
}

/// "name (type): text" / "名称（类型）：文本" -> (name, text). An ASCII colon must be followed
/// by whitespace or end the line, so "http://x" is not taken for an entry.
fn google_entry(s: &str) -> Option<(&str, &str)> {
    let (name, mut rest) = take_name(s)?;
    rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('(').or_else(|| rest.strip_prefix('（')) {
        let close = inner.find([')', '）'])?;
        let closing = inner[close..].chars().next()?;
        rest = inner[close + closing.len_utf8()..].trim_start();
    }
    let text = if let Some(after) = rest.strip_prefix(':') {
        if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
            return None;
        }
        after
    } else {
        rest.strip_prefix('：')?
    };
    Some((name.trim_start_matches('*'), text.trim()))
}

fn google_section(lines: &[&str], header_indent: usize, info: &mut DocInfo) -> usize {
    let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return lines.len();
    };
    let entry_indent = indent_of(lines[first]);
    if entry_indent <= header_indent {
        return flat_section(lines, info);
    }
    let mut name: Option<&str> = None;
    let mut entry = Entry::default();
    let mut i = first;
    while i < lines.len() {
        let line = lines[i];
        let s = line.trim();
        if s.is_empty() {
            entry.gap();
            i += 1;
            continue;
        }
        let indent = indent_of(line);
        if indent <= header_indent {
            break;
        }
        if indent <= entry_indent {
            if let Some((n, text)) = google_entry(s) {
                if let Some(prev) = name {
                    info.insert(prev, entry.text());
                }
                name = Some(n);
                entry = Entry::default();
                entry.push(text);
                i += 1;
                continue;
            }
        }
        if name.is_some() {
            entry.push(s);
        }
        i += 1;
    }
    if let Some(prev) = name {
        info.insert(prev, entry.text());
    }
    i
}

/// A section whose entries are not indented below the header: it ends at a blank line after an
/// entry or at the next header; other lines continue the previous entry.
fn flat_section(lines: &[&str], info: &mut DocInfo) -> usize {
    let mut name: Option<&str> = None;
    let mut entry = Entry::default();
    let mut i = 0;
    while i < lines.len() {
        let s = lines[i].trim();
        if s.is_empty() {
            if name.is_some() {
                break;
            }
            i += 1;
            continue;
        }
        let other = header_name(s).is_some_and(|(n, _)| OTHER_SECTIONS.contains(&n.as_str()));
        if other || lines.get(i + 1).is_some_and(|l| is_rule(l)) {
            break;
        }
        if let Some((n, text)) = google_entry(s) {
            if let Some(prev) = name {
                info.insert(prev, entry.text());
            }
            name = Some(n);
            entry = Entry::default();
            entry.push(text);
        } else if name.is_some() {
            entry.push(s);
        }
        i += 1;
    }
    if let Some(prev) = name {
        info.insert(prev, entry.text());
    }
    i
}

/// "a : int" or "b, c : float" (the type is ignored) -> the names.
fn numpy_names(s: &str) -> Option<Vec<&str>> {
    let head = match s.find(':') {
        Some(pos) => s[..pos].trim_end(),
        None => s,
    };
    let mut names = Vec::new();
    for part in head.split(',') {
        let part = part.trim();
        let (name, rest) = take_name(part)?;
        if !rest.is_empty() {
            return None;
        }
        names.push(name);
    }
    Some(names)
}

fn numpy_section(lines: &[&str], header_indent: usize, info: &mut DocInfo) -> usize {
    let mut names: Vec<&str> = Vec::new();
    let mut entry = Entry::default();
    let mut i = 0;
    let flush = |names: &[&str], entry: &Entry<'_>, info: &mut DocInfo| {
        for n in names {
            info.insert(n, entry.text());
        }
    };
    while i < lines.len() {
        let line = lines[i];
        let s = line.trim();
        if s.is_empty() {
            entry.gap();
            i += 1;
            continue;
        }
        if lines.get(i + 1).is_some_and(|l| is_rule(l)) {
            break; // the next NumPy section
        }
        let indent = indent_of(line);
        if indent < header_indent {
            break;
        }
        if indent == header_indent {
            if s.starts_with(':') || s.starts_with('@') || s.starts_with(">>>") {
                break;
            }
            let Some(found) = numpy_names(s) else {
                break;
            };
            flush(&names, &entry, info);
            names = found;
            entry = Entry::default();
        } else if !names.is_empty() {
            entry.push(s);
        }
        i += 1;
    }
    flush(&names, &entry, info);
    i
}

/// One Sphinx / epytext field starting at `lines[0]`; returns the lines it spans.
fn field(lines: &[&str], field_indent: usize, info: &mut DocInfo) -> usize {
    let s = lines[0].trim();
    // ":param int x: text" -> ("int x", "text"); the first colon after the field word ends it.
    let after_word = s[1..].trim_start_matches(|c: char| c.is_alphabetic());
    let Some(colon) = after_word.find(':') else {
        return 1;
    };
    if after_word[colon + 1..].starts_with(':') {
        return 1;
    }
    let Some(name) = after_word[..colon].split_whitespace().last() else {
        return 1;
    };
    let mut entry = Entry::default();
    entry.push(after_word[colon + 1..].trim());
    let mut i = 1;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        if t.is_empty() {
            // A blank line continues the field only when an indented line follows it.
            let next_indented = lines
                .get(i + 1)
                .is_some_and(|l| !l.trim().is_empty() && indent_of(l) > field_indent);
            if next_indented {
                entry.gap();
                i += 1;
                continue;
            }
            break;
        }
        if indent_of(line) <= field_indent {
            break;
        }
        entry.push(t);
        i += 1;
    }
    info.insert(name, entry.text());
    i
}

#[cfg(test)]
mod tests;
