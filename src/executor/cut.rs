//! The `max_result_chars` cut: a result longer than its limit is cut before the model reads it.
//!
//! The cut comes after the tool's result (and after output guardrails, which see the whole
//! result) and before the external-content frame, so the frame always closes. Characters are
//! Unicode scalar values (what Python's `len` counts). The text is cut after the last whole
//! line that fits; when that would keep less than half the limit (one very long line), it is
//! cut inside the line instead, at a character boundary. A notice follows the kept text (it is
//! not counted in the limit): how much was left out and, when the tool pages (it takes an
//! `offset`, `page` or `cursor` argument), how to ask for the rest.

/// The argument names that make a tool one that pages, in the order they are looked for.
pub const PAGING_ARGUMENTS: [&str; 3] = ["offset", "page", "cursor"];

/// The paging argument among a tool's argument names, if it has one.
pub fn paging_argument<'a>(mut names: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    names.find_map(|n| PAGING_ARGUMENTS.iter().copied().find(|p| *p == n))
}

/// A result that was cut: the text the model reads (kept text and notice) and the counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub text: String,
    /// Characters kept, of `total`.
    pub kept: usize,
    pub total: usize,
}

/// Cuts `text` to at most `max_chars` characters, or None when it fits. `tool` names the tool
/// in the notice; `paging` is its paging argument (see [`paging_argument`]).
pub fn cut(text: &str, max_chars: usize, tool: &str, paging: Option<&str>) -> Option<Cut> {
    // The byte index just past the `max_chars`-th character; None when the text fits.
    let (limit, _) = text.char_indices().nth(max_chars)?;
    let window = &text[..limit];
    let at = match window.rfind('\n') {
        Some(nl) if window[..nl].chars().count() * 2 >= max_chars => nl + 1,
        _ => limit,
    };
    let kept_text = &text[..at];
    let kept = kept_text.chars().count();
    let total = kept + text[at..].chars().count();
    let lines_left = text[at..].lines().count();
    let notice = notice(tool, kept, total, lines_left, paging);
    let sep = if kept_text.is_empty() || kept_text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    Some(Cut {
        text: format!("{kept_text}{sep}{notice}"),
        kept,
        total,
    })
}

/// The words after a cut result.
fn notice(
    tool: &str,
    kept: usize,
    total: usize,
    lines_left: usize,
    paging: Option<&str>,
) -> String {
    let left = total - kept;
    let lines = if lines_left == 1 {
        "1 line".to_owned()
    } else {
        format!("{lines_left} lines")
    };
    let more = match paging {
        Some("page") => format!(
            "to read the rest, call '{tool}' again with the next 'page'."
        ),
        Some(arg) => format!(
            "to read the rest, call '{tool}' again with its '{arg}' argument set past what you have read."
        ),
        None => "this tool cannot page, so if you need the rest, call it with narrower arguments."
            .to_owned(),
    };
    format!(
        "[result cut: showing {kept} of {total} characters; {left} characters ({lines}) were left out; {more}]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_that_fits_is_left_alone() {
        assert_eq!(cut("abc", 3, "t", None), None);
        assert_eq!(cut("", 1, "t", None), None);
        assert_eq!(cut("日本語", 3, "t", None), None);
    }

    #[test]
    fn a_long_result_is_cut_after_the_last_whole_line() {
        let text = "line one\nline two\nline three\n";
        let c = cut(text, 20, "read", None).unwrap();
        assert_eq!((c.kept, c.total), (18, 29));
        assert_eq!(
            c.text,
            "line one\nline two\n[result cut: showing 18 of 29 characters; 11 characters \
             (1 line) were left out; this tool cannot page, so if you need the rest, call it \
             with narrower arguments.]"
        );
    }

    #[test]
    fn a_line_too_long_is_cut_at_a_character_boundary() {
        let text = format!("ab\n{}", "é".repeat(50));
        let c = cut(&text, 10, "t", None).unwrap();
        assert_eq!(c.kept, 10);
        assert!(
            c.text
                .starts_with(&format!("ab\n{}\n[result cut", "é".repeat(7))),
            "{}",
            c.text
        );
        assert_eq!(c.total, 53);
        // No newline at all: a plain character cut.
        let c = cut(&"x".repeat(100), 7, "t", None).unwrap();
        assert!(c.text.starts_with(
            "xxxxxxx\n[result cut: showing 7 of 100 characters; 93 characters (1 line)"
        ));
    }

    #[test]
    fn a_tool_that_pages_is_named_with_its_argument() {
        assert_eq!(
            paging_argument(["path", "offset"].into_iter()),
            Some("offset")
        );
        assert_eq!(paging_argument(["query"].into_iter()), None);
        let c = cut("a\nb\nc\nd\n", 4, "read", Some("offset")).unwrap();
        assert!(
            c.text.ends_with(
                "2 lines) were left out; to read the rest, call 'read' again with its 'offset' \
                 argument set past what you have read.]"
            ),
            "{}",
            c.text
        );
        let c = cut("a\nb\nc\nd\n", 4, "list", Some("page")).unwrap();
        assert!(
            c.text.ends_with("call 'list' again with the next 'page'.]"),
            "{}",
            c.text
        );
    }
}
