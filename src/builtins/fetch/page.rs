//! A fetched body as text: decoded with its declared charset (UTF-8 by default, invalid bytes
//! replaced), HTML turned into Markdown-like text by `htmd` (scripts, styles, forms and other
//! non-content elements dropped) with the page's `<title>`, then cut into pages by characters.

use crate::builtins::search::html::{decode_entities, fold_whitespace};

/// How a body is shown, from its Content-Type (or a sniff when there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Html,
    Text,
    Binary,
}

pub(super) fn kind_of(content_type: Option<&str>, body: &[u8]) -> Kind {
    let Some(ct) = content_type else {
        let head = &body[..body.len().min(1024)];
        let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
        return if head.contains(&0) {
            Kind::Binary
        } else if lower.contains("<html") || lower.contains("<!doctype html") {
            Kind::Html
        } else {
            Kind::Text
        };
    };
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        m if m.starts_with("text/")
            || m.ends_with("+json")
            || m.ends_with("+xml")
            || matches!(
                m,
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/x-yaml"
                    | "application/yaml"
                    | ""
            ) =>
        {
            Kind::Text
        }
        _ => Kind::Binary,
    }
}

/// The body as text, decoded with the charset the Content-Type names (else UTF-8).
pub(super) fn decode(content_type: Option<&str>, body: &[u8]) -> String {
    let label = content_type.and_then(|ct| {
        ct.split(';')
            .filter_map(|p| p.trim().strip_prefix("charset="))
            .next()
            .map(|c| c.trim_matches('"').to_string())
    });
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// The `<title>` of an HTML page, entities decoded and whitespace folded.
pub(super) fn title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let t = fold_whitespace(&decode_entities(&html[start..end]));
    (!t.is_empty()).then_some(t)
}

/// HTML as Markdown-like text.
pub(super) fn markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "head", "script", "style", "noscript", "template", "svg", "canvas", "iframe", "form",
            "button", "input", "select", "textarea", "nav",
        ])
        .build();
    let text = converter.convert(html).unwrap_or_default();
    // Runs of blank lines left by dropped elements.
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

/// Characters `start..start+max` of `text`: the slice, its end offset and the total count.
pub(super) fn page(text: &str, start: usize, max: usize) -> (&str, usize, usize) {
    let total = text.chars().count();
    let from = text
        .char_indices()
        .nth(start)
        .map_or(text.len(), |(i, _)| i);
    let to_char = (start + max).min(total);
    let to = text
        .char_indices()
        .nth(to_char)
        .map_or(text.len(), |(i, _)| i);
    (&text[from..to], to_char, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_with_its_title() {
        let html = "<html><head><title>A &amp; B</title><style>p{}</style></head><body>\
            <nav>menu</nav><h1>Hello</h1><p>Some <b>bold</b> and a <a href=\"/x\">link</a>.</p>\
            <script>alert(1)</script><ul><li>one</li><li>two</li></ul></body></html>";
        assert_eq!(title(html).as_deref(), Some("A & B"));
        let md = markdown(html);
        assert!(md.starts_with("# Hello"), "{md}");
        assert!(md.contains("Some **bold** and a [link](/x)."), "{md}");
        assert!(md.contains("one") && md.contains("two"), "{md}");
        assert!(
            !md.contains("alert") && !md.contains("menu") && !md.contains("p{}"),
            "{md}"
        );
    }

    #[test]
    fn kinds_charsets_and_pages() {
        assert_eq!(kind_of(Some("text/html; charset=utf-8"), b""), Kind::Html);
        assert_eq!(kind_of(Some("application/json"), b""), Kind::Text);
        assert_eq!(kind_of(Some("image/png"), b""), Kind::Binary);
        assert_eq!(kind_of(None, b"<!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(kind_of(None, b"\x89PNG\0"), Kind::Binary);
        assert_eq!(
            decode(Some("text/plain; charset=iso-8859-1"), b"caf\xe9"),
            "café"
        );
        assert_eq!(decode(None, b"caf\xc3\xa9"), "café");
        assert_eq!(page("héllo world", 1, 4), ("éllo", 5, 11));
        assert_eq!(page("abc", 2, 10), ("c", 3, 3));
    }
}
