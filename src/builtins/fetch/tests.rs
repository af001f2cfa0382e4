//! Refusals that happen before any packet is sent. Only loopback spellings are used: a broken
//! check could then reach nothing but this machine. Other ranges are covered by the unit tests
//! of `crate::net::address`, which never connect.
use super::*;
use crate::response::ToolStatus;

fn call(tool: &FetchTool, url: &str) -> ToolResponse {
    tool.call(&json!({ "url": url }))
}

#[test]
fn loopback_literals_in_every_spelling_are_refused() {
    let tool = FetchTool::new(FetchOptions::default()).unwrap();
    for (url, host, reason) in [
        ("http://127.0.0.1/", "127.0.0.1", "loopback"),
        ("http://[::1]:8080/x", "[::1]", "loopback"),
        ("http://0.0.0.0/", "0.0.0.0", "unspecified"),
        ("http://2130706433/", "127.0.0.1", "loopback"),
        ("http://0177.0.0.1/", "127.0.0.1", "loopback"),
        ("http://0x7f.1/", "127.0.0.1", "loopback"),
        ("http://127.1/", "127.0.0.1", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]", "loopback"),
        ("https://[::ffff:7f00:1]/", "[::ffff:7f00:1]", "loopback"),
    ] {
        let resp = call(&tool, url);
        assert_eq!(resp.status, ToolStatus::Error, "{url}");
        let want = format!("{host} is not a public address ({reason}). Only public internet addresses can be fetched.");
        assert!(resp.text.ends_with(&want), "{url}: {}", resp.text);
    }
}

#[test]
fn bad_urls_and_schemes() {
    let tool = FetchTool::new(FetchOptions::default()).unwrap();
    assert!(call(&tool, "not a url")
        .text
        .starts_with("Error: 'not a url' is not a valid http(s) URL"));
    assert_eq!(
        call(&tool, "file:///etc/passwd").text,
        "Error: only http:// and https:// URLs can be fetched, got file://"
    );
    assert!(call(&tool, "ftp://127.0.0.1/").text.contains("got ftp://"));
    assert!(FetchTool::new(FetchOptions {
        max_bytes: 0,
        ..Default::default()
    })
    .is_err());
    assert_eq!(tool.spec().name, "fetch_url");
    assert!(tool.spec().external_content && tool.spec().supports_parallel);
}
