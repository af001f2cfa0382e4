use super::*;
use std::io::{Read, Write};
use std::net::TcpListener;

/// A loopback HTTP peer answering each connection with the next canned response; returns its
/// base URL and a handle yielding the raw requests it saw.
fn serve(
    responses: Vec<(u16, &'static str, String)>,
) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for (code, ctype, body) in responses {
            let Ok((mut sock, _)) = listener.accept() else {
                break;
            };
            let mut buf = vec![0u8; 65536];
            let mut req = Vec::new();
            // Read headers, then as much body as Content-Length says.
            loop {
                let n = sock.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if req.len() >= end + 4 + len {
                        break;
                    }
                }
            }
            seen.push(String::from_utf8_lossy(&req).to_string());
            let reply = format!("HTTP/1.1 {code} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            let _ = sock.write_all(reply.as_bytes());
        }
        seen
    });
    (url, handle)
}

fn closed_port() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/", l.local_addr().expect("addr"));
    drop(l);
    url
}

fn tool(endpoints: Endpoints) -> SearchTool {
    SearchTool::new(SearchOptions {
        max_results: 2,
        timeout: Duration::from_secs(5),
        endpoints,
        ..SearchOptions::default()
    })
    .expect("valid options")
}

const DDG_PAGE: &str = r#"<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2F&amp;rut=1">First &amp; best</a>
<a class="result__snippet">one</a></div>
<div class="result"><a class="result__a" href="https://b.example/">Second</a><a class="result__snippet">two</a></div>
<div class="result"><a class="result__a" href="https://c.example/">Third</a></div>"#;

#[test]
fn duckduckgo_over_loopback_http_with_keyed_providers_skipped_or_failing() {
    let (ddg, seen) = serve(vec![(200, "text/html", DDG_PAGE.to_string())]);
    let dead = closed_port();
    let t = tool(Endpoints {
        tavily: Some(dead.clone()),
        duckduckgo: Some(ddg),
        brave: Some(dead.clone()),
        serpapi: Some(dead),
    });
    let r = t.call(&json!({"query": "  rust  "}));
    assert_eq!(r.status, crate::response::ToolStatus::Success, "{}", r.text);
    assert_eq!(
        r.text,
        "[source: DuckDuckGo]\n1. First & best\n   one\n   https://a.example/\n2. Second\n   two\n   https://b.example/"
    );
    let data = r.data.expect("data");
    assert_eq!(data["results"].as_array().map(Vec::len), Some(2));
    assert_eq!(data["source"], "DuckDuckGo");
    let requests = seen.join().expect("server");
    assert!(requests[0].starts_with("POST / HTTP/1.1"));
    assert!(requests[0].ends_with("q=rust"), "{}", requests[0]);
}

#[test]
fn every_failure_is_listed() {
    let (ddg, _seen) = serve(vec![(500, "text/html", "<html>down</html>".to_string())]);
    let dead = closed_port();
    let t = tool(Endpoints {
        tavily: Some(dead.clone()),
        duckduckgo: Some(ddg),
        brave: Some(dead.clone()),
        serpapi: Some(dead),
    });
    let r = t.search("anything");
    assert_eq!(r.status, crate::response::ToolStatus::Error);
    assert!(
        r.text
            .starts_with("Error: search failed; all sources are unavailable:\n"),
        "{}",
        r.text
    );
    assert!(r.text.contains("- DuckDuckGo: HTTP 500"), "{}", r.text);
    for name in ["Tavily", "Brave", "SerpAPI"] {
        assert!(r.text.contains(&format!("- {name}: ")), "{}", r.text);
    }
}

#[test]
fn query_checks() {
    let t = tool(Endpoints::default());
    assert_eq!(
        t.call(&json!({"query": "  "})).text,
        "Error: the search query must not be empty"
    );
    assert_eq!(
        t.call(&json!({})).text,
        "Error: the search query must not be empty"
    );
    assert_eq!(
        t.call(&json!({"query": 3})).text,
        "Error: the search query must be a string"
    );
    assert_eq!(
        t.search(&"x".repeat(2001)).text,
        "Error: the search query is too long (over 2000 characters)"
    );
    assert!(t.spec().external_content && t.spec().supports_parallel);
    assert_eq!(t.spec().name, "search");
}

#[test]
fn options_are_checked() {
    let bad = |o: SearchOptions| {
        SearchTool::new(o)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(bad(SearchOptions {
        max_results: 0,
        ..SearchOptions::default()
    })
    .contains("max_results"));
    assert!(bad(SearchOptions {
        max_results: 51,
        ..SearchOptions::default()
    })
    .contains("max_results"));
    assert!(bad(SearchOptions {
        timeout: Duration::ZERO,
        ..SearchOptions::default()
    })
    .contains("timeout"));
    let ep = Endpoints {
        brave: Some("http://search.example.com/".into()),
        ..Endpoints::default()
    };
    assert!(bad(SearchOptions {
        endpoints: ep,
        ..SearchOptions::default()
    })
    .contains("loopback"));
    let ep = Endpoints {
        tavily: Some("ftp://127.0.0.1/".into()),
        ..Endpoints::default()
    };
    assert!(bad(SearchOptions {
        endpoints: ep,
        ..SearchOptions::default()
    })
    .contains("scheme"));
    let mut p = HashMap::new();
    p.insert("search.nope".to_string(), "x".to_string());
    assert!(bad(SearchOptions {
        prompts: Some(p),
        ..SearchOptions::default()
    })
    .contains("search.nope"));
}

#[test]
fn endpoint_rule() {
    assert!(check_endpoint("https://api.tavily.com/search").is_ok());
    assert!(check_endpoint("http://127.0.0.1:8080/x").is_ok());
    assert!(check_endpoint("http://[::1]:8080/x").is_ok());
    assert!(check_endpoint("http://localhost/x").is_ok());
    assert!(check_endpoint("http://10.0.0.1/x").is_err());
    assert!(check_endpoint("not a url").is_err());
}

#[test]
fn results_are_cleaned() {
    let h = |t: &str, u: &str, s: &str| Hit {
        title: t.into(),
        url: u.into(),
        snippet: s.into(),
    };
    assert_eq!(
        clean(h("<b>T</b>", "javascript:alert(1)", "")),
        Some(h("T", "", ""))
    );
    assert_eq!(clean(h("", "", "  ")), None);
    assert_eq!(clean(h("", "ftp://x", "")), None);
    let long = clean(h(&"t".repeat(400), "https://x", "")).expect("kept");
    assert_eq!(long.title.chars().count(), MAX_TITLE_CHARS + 1);
    assert!(long.title.ends_with('…'));
}

#[test]
fn secrets_are_scrubbed_everywhere() {
    let secrets = vec!["sk-123".to_string()];
    let r = ToolResponse::ok("a sk-123 b")
        .with_data(json!({"x": ["sk-123", {"y": "zsk-123z"}], "n": 1}));
    let r = scrub_response(r, &secrets);
    assert_eq!(r.text, "a [redacted] b");
    assert_eq!(
        r.data,
        Some(json!({"x": ["[redacted]", {"y": "z[redacted]z"}], "n": 1}))
    );
}
