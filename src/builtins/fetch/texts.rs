//! Every text the model reads from `fetch_url`. Overridable per key with `prompts=`.

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "fetch.description",
        "Fetch a web page or text document over http(s) and return it as Markdown-like text with its title. Long pages are returned in parts: pass start (a character offset) to read on. Only public addresses can be fetched.",
    ),
    ("fetch.param.url", "The http:// or https:// URL to fetch"),
    ("fetch.param.start", "Character offset in the converted text to start from; default 0"),
    ("fetch.param.max_chars", "Maximum number of characters to return; default {max}"),
    ("fetch.bad_url", "Error: {url} is not a valid http(s) URL: {err}"),
    ("fetch.bad_scheme", "Error: only http:// and https:// URLs can be fetched, got {scheme}://"),
    ("fetch.refused", "Error: refused to fetch {url}: {why}. Only public internet addresses can be fetched."),
    ("fetch.refused_literal", "{host} is not a public address ({reason})"),
    ("fetch.refused_resolved", "{host} resolves to {addr}, which is not a public address ({reason})"),
    ("fetch.refused_redirect", "it redirected to {target}, and {host} is not a public address ({reason})"),
    ("fetch.too_many_redirects", "Error: {url} redirected more than {max} times; stopped"),
    ("fetch.bad_redirect", "Error: {url} redirected to an invalid location {location}"),
    ("fetch.timeout", "Error: fetching {url} took longer than {seconds} s; stopped"),
    ("fetch.network", "Error: could not fetch {url}: {err}"),
    ("fetch.http_status", "Error: {url} answered HTTP {status}"),
    ("fetch.unsupported", "Error: {url} is {type} content, which fetch_url cannot show as text"),
    ("fetch.header", "URL: {url}\nTitle: {title}\nContent-Type: {type}"),
    ("fetch.range", "Characters {from}-{to} of {total}"),
    ("fetch.more", "; read on with start={to}"),
    ("fetch.truncated_body", " (the download stopped at {max} bytes)"),
    ("fetch.past_end", "Error: start={start} is past the end of the text of {url} ({total} characters)"),
    ("fetch.empty", "(the page has no text)"),
];
