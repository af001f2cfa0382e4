//! Cleaning text that comes from an MCP server before a model (or a terminal) reads it.
//!
//! Removed: C0 controls except `\n` and `\t` (so `\r`, which lets a line overwrite itself on
//! a terminal, goes too), DEL, C1 controls (U+0080..U+009F), the line and paragraph separators
//! U+2028/U+2029, and every Unicode format character (general category Cf: bidi embeddings,
//! overrides and isolates, zero-width space, word joiner, BOM, interlinear annotation marks,
//! tag characters, ...), except the three that real text needs: ZWNJ U+200C and ZWJ U+200D
//! (emoji sequences, Indic and Persian shaping) and the soft hyphen U+00AD.
//!
//! `\n` and `\t` are kept in descriptions and results alike: tool descriptions are often
//! multi-line docstrings and results are often tables or logs; neither character can hide or
//! reorder text.
//!
//! The scan copies runs of clean text as slices, so clean input costs one pass and, when it
//! also fits the limit, no allocation at all.

use std::borrow::Cow;

/// Appended to text that was cut at its limit.
pub const TRUNCATION_MARK: &str = "…(truncated)";

/// Format characters (Unicode general category Cf, Unicode 16) other than ZWNJ, ZWJ and the
/// soft hyphen, as inclusive ranges. Kept as a table so the result does not depend on which
/// Unicode version some library was built with.
const FORMAT_RANGES: &[(u32, u32)] = &[
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200B),
    (0x200E, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// Whether `c` is removed by [`sanitize`].
#[inline]
pub fn is_removed(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (u < 0x20 && c != '\n' && c != '\t') || u == 0x7F;
    }
    if u <= 0x9F || u == 0x2028 || u == 0x2029 {
        return true;
    }
    if u < 0x0600 {
        return false;
    }
    FORMAT_RANGES.iter().any(|&(lo, hi)| u >= lo && u <= hi)
}

/// The result of [`sanitize`]: the kept text and whether anything was cut at the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanitized<'a> {
    pub text: Cow<'a, str>,
    pub truncated: bool,
}

/// Removes the characters listed in the module doc and keeps at most `limit` characters
/// (counted after removal). Borrows when nothing was removed.
pub fn sanitize(text: &str, limit: usize) -> Sanitized<'_> {
    let mut kept = 0usize;
    let mut out: Option<String> = None;
    // Start of the current run of kept characters, and where the kept text ends, in bytes.
    let mut run_start = 0usize;
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        if is_removed(c) {
            out.get_or_insert_with(|| {
                String::with_capacity(text.len().min(limit.saturating_mul(4)))
            })
            .push_str(&text[run_start..i]);
            run_start = i + c.len_utf8();
        } else if kept == limit {
            end = i;
            break;
        } else {
            kept += 1;
        }
    }
    let truncated = end < text.len();
    let text = match out {
        None => Cow::Borrowed(&text[..end]),
        Some(mut buf) => {
            buf.push_str(&text[run_start..end]);
            Cow::Owned(buf)
        }
    };
    Sanitized { text, truncated }
}

/// [`sanitize`], with [`TRUNCATION_MARK`] appended when the text was cut.
pub fn sanitize_marked(text: &str, limit: usize) -> String {
    let s = sanitize(text, limit);
    let mut text = s.text.into_owned();
    if s.truncated {
        text.push_str(TRUNCATION_MARK);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_is_borrowed() {
        let s = sanitize("plain text\twith\nlines, ünïcödé, 中文, emoji 👍", 1000);
        assert!(matches!(s.text, Cow::Borrowed(_)));
        assert!(!s.truncated);
    }

    #[test]
    fn controls_and_format_chars_are_removed() {
        let dirty = "a\u{0}b\rc\u{1b}[31md\u{7f}e\u{85}f\u{9f}g\u{2028}h\u{2029}i\u{202e}j\u{2066}k\u{2069}l\u{200b}m\u{feff}n\u{e0041}o\u{61c}p\u{2060}q";
        assert_eq!(sanitize(dirty, 1000).text, "abc[31mdefghijklmnopq");
    }

    #[test]
    fn joiners_soft_hyphen_newline_tab_are_kept() {
        let family = "👨\u{200d}👩\u{200d}👧";
        let persian = "می\u{200c}خواهم";
        let t = format!("{family} {persian} hy\u{ad}phen\n\tend");
        assert_eq!(sanitize(&t, 1000).text, t);
    }

    #[test]
    fn limit_counts_kept_characters() {
        let s = sanitize("\u{202e}abcdef", 3);
        assert_eq!(s.text, "abc");
        assert!(s.truncated);
        let s = sanitize("abc\u{202e}", 3);
        assert_eq!(s.text, "abc");
        assert!(!s.truncated, "only removed characters follow the limit");
        let s = sanitize("ééé", 2);
        assert_eq!(s.text, "éé");
        assert!(s.truncated);
        assert_eq!(sanitize_marked("abcdef", 2), "ab…(truncated)");
        assert_eq!(sanitize_marked("", 2), "");
    }

    #[test]
    fn every_listed_range_is_removed_and_neighbours_kept() {
        for &(lo, hi) in FORMAT_RANGES {
            for u in [lo, hi] {
                let c = char::from_u32(u).unwrap();
                assert!(is_removed(c), "{u:#x}");
            }
        }
        for c in [
            '\u{200c}', '\u{200d}', '\u{ad}', 'a', '\u{a0}', '\u{2027}', '\u{202f}',
        ] {
            assert!(!is_removed(c), "{:#x}", c as u32);
        }
    }

    #[test]
    fn large_text_is_one_pass_and_borrowed_when_clean() {
        // No wall-clock bound (flaky on shared machines): clean text must not be copied, and
        // dirty text is copied once, in runs.
        let big = "x".repeat(10_000_000);
        assert!(matches!(sanitize(&big, usize::MAX).text, Cow::Borrowed(_)));
        let dirty = big.clone() + "\u{202e}";
        let s = sanitize(&dirty, 20_000_000);
        assert!(matches!(s.text, Cow::Owned(_)));
        assert_eq!(s.text.len(), 10_000_000);
        // The scan stops at the limit.
        assert_eq!(sanitize(&dirty, 5).text, "xxxxx");
    }
}
