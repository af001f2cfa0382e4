//! Just enough HTML handling for search results: tag stripping, entity decoding, whitespace
//! folding, percent-decoding, and reading DuckDuckGo's HTML result page.

use super::Hit;

/// Text content of an HTML fragment: tags removed, entities decoded, whitespace folded.
pub fn text(fragment: &str) -> String {
    let mut no_tags = String::with_capacity(fragment.len());
    let mut rest = fragment;
    while let Some(open) = rest.find('<') {
        no_tags.push_str(&rest[..open]);
        match rest[open..].find('>') {
            Some(close) => {
                no_tags.push(' ');
                rest = &rest[open + close + 1..];
            }
            None => {
                rest = "";
            }
        }
    }
    no_tags.push_str(rest);
    fold_whitespace(&decode_entities(&no_tags))
}

pub fn fold_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Decodes the named entities search pages use and all numeric ones.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        // Entities are short; look for the `;` in the first few bytes only (ASCII, so any
        // position found is a char boundary).
        let end = rest.as_bytes().iter().take(12).position(|b| *b == b';');
        let decoded = end.and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    let c = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "hellip" => '…',
        "mdash" => '—',
        "ndash" => '–',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            return char::from_u32(code).filter(|c| !c.is_control() || c.is_whitespace());
        }
    };
    Some(c)
}

/// `%XX` decoding (and `+` as space, as in form-encoded query values); invalid UTF-8 is replaced.
pub fn percent_decode(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(hi * 16 + lo);
                i += 3;
                continue;
            }
        }
        out.push(if b == b'+' { b' ' } else { b });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let end = tag[at..].find('"')?;
    Some(&tag[at..at + end])
}

/// The target of a DuckDuckGo result link: either direct, or wrapped in its redirector
/// (`//duckduckgo.com/l/?uddg=<percent-encoded target>&rut=...`). Ad links (`/y.js`) give None.
fn result_url(href: &str) -> Option<String> {
    let href = decode_entities(href);
    if href.contains("duckduckgo.com/y.js") {
        return None;
    }
    if let Some(at) = href.find("uddg=") {
        let value = &href[at + 5..];
        let value = value.split('&').next().unwrap_or("");
        return Some(percent_decode(value));
    }
    Some(match href.strip_prefix("//") {
        Some(rest) => format!("https://{rest}"),
        None => href,
    })
}

/// The element starting at `start` (which points into its opening tag): the opening tag and
/// the inner HTML up to the matching close tag of the same name (no nesting of that name assumed).
fn element(page: &str, start: usize) -> Option<(&str, &str, usize)> {
    let open = page[..start].rfind('<')?;
    let tag_end = open + page[open..].find('>')?;
    let tag = &page[open..=tag_end];
    let name: String = tag[1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let close = format!("</{name}>");
    let inner_end = tag_end + 1 + page[tag_end + 1..].find(&close)?;
    Some((tag, &page[tag_end + 1..inner_end], inner_end + close.len()))
}

/// Results of DuckDuckGo's HTML endpoint (`html.duckduckgo.com/html/`): each result has an
/// `<a class="result__a" href=...>title</a>` and, before the next result, an element with class
/// `result__snippet`. Ads are skipped.
pub fn duckduckgo_results(page: &str, limit: usize) -> Vec<Hit> {
    const TITLE: &str = "class=\"result__a\"";
    const SNIPPET: &str = "class=\"result__snippet\"";
    let mut hits = Vec::new();
    let mut pos = 0;
    while hits.len() < limit {
        let Some(found) = page[pos..].find(TITLE) else {
            break;
        };
        let at = pos + found;
        let Some((tag, inner, after)) = element(page, at) else {
            break;
        };
        pos = after;
        let Some(url) = attribute(tag, "href").and_then(result_url) else {
            continue;
        };
        let next_title = page[pos..].find(TITLE).map_or(page.len(), |n| pos + n);
        let snippet = page[pos..next_title]
            .find(SNIPPET)
            .and_then(|s| element(page, pos + s))
            .map(|(_, inner, _)| text(inner))
            .unwrap_or_default();
        hits.push(Hit {
            title: text(inner),
            url,
            snippet,
        });
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_tags_and_decodes() {
        assert_eq!(
            text("A <b>bold</b>&nbsp;&amp; <i>safe</i> move &#39;x&#x27; &lt;3"),
            "A bold & safe move 'x' <3"
        );
        assert_eq!(text("unterminated <b"), "unterminated");
        assert_eq!(
            decode_entities("&bogus; & &#0; &#xZZ;"),
            "&bogus; & &#0; &#xZZ;"
        );
        assert_eq!(fold_whitespace("  a \n\t b  "), "a b");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(
            percent_decode("https%3A%2F%2Fexample.com%2Fa%20b"),
            "https://example.com/a b"
        );
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%C3%A9"), "é");
    }

    #[test]
    fn reads_duckduckgo_results() {
        let page = r##"<html><body>
        <div class="result results_links result--ad"><h2 class="result__title">
          <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=x.com&amp;u3=1">Ad title</a></h2>
          <a class="result__snippet" href="#">Buy things</a></div>
        <div class="result results_links"><h2 class="result__title">
          <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust%2Dlang.org%2Flearn&amp;rut=abc">The <b>Rust</b> Book</a></h2>
          <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">Learn <b>Rust</b> &amp; more.</a></div>
        <div class="result results_links"><h2 class="result__title">
          <a rel="nofollow" class="result__a" href="https://example.org/direct">Direct</a></h2></div>
        <div class="result results_links"><h2 class="result__title">
          <a rel="nofollow" class="result__a" href="//example.net/x">Third</a></h2>
          <a class="result__snippet">third snippet</a></div>
        </body></html>"##;
        let hits = duckduckgo_results(page, 10);
        assert_eq!(hits.len(), 3);
        assert_eq!(
            hits[0],
            Hit {
                title: "The Rust Book".into(),
                url: "https://www.rust-lang.org/learn".into(),
                snippet: "Learn Rust & more.".into()
            }
        );
        assert_eq!(
            hits[1],
            Hit {
                title: "Direct".into(),
                url: "https://example.org/direct".into(),
                snippet: String::new()
            }
        );
        assert_eq!(hits[2].url, "https://example.net/x");
        assert_eq!(hits[2].snippet, "third snippet");
        assert_eq!(duckduckgo_results(page, 1).len(), 1);
        assert!(duckduckgo_results("<html>No results.</html>", 5).is_empty());
        assert!(duckduckgo_results("<a class=\"result__a\" href=\"x\">never closed", 5).is_empty());
    }
}
