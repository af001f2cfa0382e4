//! The four search providers: how each is asked, and how its documented answer is read.
//!
//! - Tavily: `POST /search` with a JSON body, `Authorization: Bearer <key>`; answer
//!   `{"answer": str|null, "results": [{"title", "url", "content"}]}`.
//! - DuckDuckGo: the HTML endpoint (`POST https://html.duckduckgo.com/html/`, form field `q`),
//!   read by [`super::html::duckduckgo_results`]. Chosen over the instant-answer JSON API, which
//!   returns encyclopedia topics rather than web results.
//! - Brave: `GET /res/v1/web/search?q=&count=` with `X-Subscription-Token: <key>`; answer
//!   `{"web": {"results": [{"title", "url", "description"}]}}` (no `web` when nothing matched).
//! - SerpAPI: `GET /search.json?engine=google&q=&num=&api_key=<key>`; answer
//!   `{"organic_results": [{"title", "link", "snippet"}], "answer_box": {"answer"}}` or
//!   `{"error": str}`.

use serde_json::{json, Value};

use super::{html, Failure, Found, Hit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    Tavily,
    DuckDuckGo,
    Brave,
    SerpApi,
}

/// Fallback order.
pub const ORDER: [Provider; 4] = [
    Provider::Tavily,
    Provider::DuckDuckGo,
    Provider::Brave,
    Provider::SerpApi,
];

impl Provider {
    pub fn label(self) -> &'static str {
        match self {
            Provider::Tavily => "Tavily",
            Provider::DuckDuckGo => "DuckDuckGo",
            Provider::Brave => "Brave",
            Provider::SerpApi => "SerpAPI",
        }
    }

    /// The environment variable holding the API key; DuckDuckGo needs none.
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            Provider::Tavily => Some("TAVILY_API_KEY"),
            Provider::DuckDuckGo => None,
            Provider::Brave => Some("BRAVE_API_KEY"),
            Provider::SerpApi => Some("SERPAPI_API_KEY"),
        }
    }

    /// The environment variable that points the provider at another endpoint.
    pub fn url_env(self) -> &'static str {
        match self {
            Provider::Tavily => "AGENTMAKER_TAVILY_URL",
            Provider::DuckDuckGo => "AGENTMAKER_DUCKDUCKGO_URL",
            Provider::Brave => "AGENTMAKER_BRAVE_URL",
            Provider::SerpApi => "AGENTMAKER_SERPAPI_URL",
        }
    }

    pub fn default_url(self) -> &'static str {
        match self {
            Provider::Tavily => "https://api.tavily.com/search",
            Provider::DuckDuckGo => "https://html.duckduckgo.com/html/",
            Provider::Brave => "https://api.search.brave.com/res/v1/web/search",
            Provider::SerpApi => "https://serpapi.com/search.json",
        }
    }
}

pub enum Body {
    None,
    Json(Value),
    Form(Vec<(&'static str, String)>),
}

/// One HTTP request, independent of the client library.
pub struct Request {
    pub post: bool,
    pub query: Vec<(&'static str, String)>,
    pub headers: Vec<(&'static str, String)>,
    pub body: Body,
}

pub fn request(p: Provider, key: Option<&str>, query: &str, max_results: usize) -> Request {
    let key = key.unwrap_or_default().to_string();
    let q = query.to_string();
    match p {
        Provider::Tavily => Request {
            post: true,
            query: vec![],
            headers: vec![("Authorization", format!("Bearer {key}"))],
            body: Body::Json(json!({
                "query": q,
                "max_results": max_results.min(20),
                "include_answer": true,
                "search_depth": "basic",
            })),
        },
        Provider::DuckDuckGo => Request {
            post: true,
            query: vec![],
            headers: vec![],
            body: Body::Form(vec![("q", q)]),
        },
        Provider::Brave => Request {
            post: false,
            query: vec![("q", q), ("count", max_results.min(20).to_string())],
            headers: vec![
                ("X-Subscription-Token", key),
                ("Accept", "application/json".into()),
            ],
            body: Body::None,
        },
        Provider::SerpApi => Request {
            post: false,
            query: vec![
                ("engine", "google".into()),
                ("q", q),
                ("num", max_results.to_string()),
                ("api_key", key),
            ],
            headers: vec![],
            body: Body::None,
        },
    }
}

fn json_body(body: &[u8]) -> Result<Value, Failure> {
    serde_json::from_slice(body).map_err(|e| {
        let start = body.iter().find(|b| !b.is_ascii_whitespace());
        Failure::Body(if start == Some(&b'<') {
            "HTML instead of JSON".into()
        } else {
            format!("not JSON: {e}")
        })
    })
}

fn field(v: &Value, name: &str) -> String {
    v.get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn list<'a>(v: &'a Value, path: &[&str]) -> Result<&'a [Value], Failure> {
    let mut at = v;
    for name in path {
        match at.get(name) {
            Some(next) => at = next,
            // Providers leave the list (or its container) out when nothing matched.
            None => return Ok(&[]),
        }
    }
    at.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| Failure::Body(format!("'{}' is not a list", path.join("."))))
}

fn hits(items: &[Value], title: &str, url: &str, snippet: &str) -> Vec<Hit> {
    items
        .iter()
        .map(|item| Hit {
            title: field(item, title),
            url: field(item, url),
            snippet: field(item, snippet),
        })
        .collect()
}

/// A short provider-supplied reason from an error body (`{"error": ...}`, `{"detail": ...}`).
pub fn error_detail(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let detail = ["error", "detail", "message"]
        .iter()
        .find_map(|k| match v.get(k)? {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o
                .get("error")
                .or_else(|| o.get("message"))
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        })?;
    Some(html::fold_whitespace(&detail).chars().take(200).collect())
}

/// Reads a successful (2xx) answer.
pub fn parse(p: Provider, body: &[u8], max_results: usize) -> Result<Found, Failure> {
    if p == Provider::DuckDuckGo {
        let page = String::from_utf8_lossy(body);
        return Ok(Found {
            hits: html::duckduckgo_results(&page, max_results),
            answer: None,
        });
    }
    let v = json_body(body)?;
    if !v.is_object() {
        return Err(Failure::Body("expected a JSON object".into()));
    }
    match p {
        Provider::Tavily => {
            if v.get("results").is_none() {
                return Err(Failure::Body("no 'results' in the answer".into()));
            }
            let answer = Some(field(&v, "answer")).filter(|a| !a.trim().is_empty());
            Ok(Found {
                hits: hits(list(&v, &["results"])?, "title", "url", "content"),
                answer,
            })
        }
        Provider::Brave => Ok(Found {
            hits: hits(
                list(&v, &["web", "results"])?,
                "title",
                "url",
                "description",
            ),
            answer: None,
        }),
        Provider::SerpApi => {
            if let Some(err) = v.get("error").and_then(Value::as_str) {
                return Err(Failure::Api(
                    html::fold_whitespace(err).chars().take(200).collect(),
                ));
            }
            let answer = v
                .get("answer_box")
                .map(|b| field(b, "answer"))
                .filter(|a| !a.trim().is_empty());
            Ok(Found {
                hits: hits(list(&v, &["organic_results"])?, "title", "link", "snippet"),
                answer,
            })
        }
        Provider::DuckDuckGo => Ok(Found {
            hits: vec![],
            answer: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_documented_format() {
        let tavily = br#"{"query":"q","answer":"Paris.","results":[{"title":"T1","url":"https://a","content":"c1","score":0.9}]}"#;
        let f = parse(Provider::Tavily, tavily, 5).unwrap();
        assert_eq!(f.answer.as_deref(), Some("Paris."));
        assert_eq!(
            f.hits,
            vec![Hit {
                title: "T1".into(),
                url: "https://a".into(),
                snippet: "c1".into()
            }]
        );

        let brave = br#"{"type":"search","web":{"results":[{"title":"<strong>B</strong>","url":"https://b","description":"d"}]}}"#;
        let f = parse(Provider::Brave, brave, 5).unwrap();
        assert_eq!(f.hits[0].title, "<strong>B</strong>");
        assert!(parse(Provider::Brave, br#"{"type":"search"}"#, 5)
            .unwrap()
            .hits
            .is_empty());

        let serp = br#"{"answer_box":{"answer":"42"},"organic_results":[{"position":1,"title":"S","link":"https://s","snippet":"sn"}]}"#;
        let f = parse(Provider::SerpApi, serp, 5).unwrap();
        assert_eq!(
            (f.answer.as_deref(), f.hits[0].url.as_str()),
            (Some("42"), "https://s")
        );
    }

    #[test]
    fn malformed_answers_are_failures() {
        assert_eq!(
            parse(Provider::Tavily, b"<html>oops</html>", 5).unwrap_err(),
            Failure::Body("HTML instead of JSON".into())
        );
        assert!(
            matches!(parse(Provider::Brave, b"{\"web\": ", 5), Err(Failure::Body(m)) if m.starts_with("not JSON"))
        );
        assert_eq!(
            parse(Provider::Tavily, b"[1, 2]", 5).unwrap_err(),
            Failure::Body("expected a JSON object".into())
        );
        assert_eq!(
            parse(Provider::Tavily, b"{}", 5).unwrap_err(),
            Failure::Body("no 'results' in the answer".into())
        );
        assert_eq!(
            parse(Provider::Brave, br#"{"web":{"results":"x"}}"#, 5).unwrap_err(),
            Failure::Body("'web.results' is not a list".into())
        );
        assert_eq!(
            parse(Provider::SerpApi, br#"{"error":"Invalid API key."}"#, 5).unwrap_err(),
            Failure::Api("Invalid API key.".into())
        );
    }

    #[test]
    fn error_details() {
        assert_eq!(
            error_detail(br#"{"detail":{"error":"Unauthorized: missing key"}}"#).as_deref(),
            Some("Unauthorized: missing key")
        );
        assert_eq!(error_detail(br#"{"error":"bad"}"#).as_deref(), Some("bad"));
        assert_eq!(error_detail(b"<html>500</html>"), None);
    }

    #[test]
    fn keys_go_where_each_provider_documents_them() {
        let r = request(Provider::Tavily, Some("k1"), "q", 50);
        assert!(r.post && r.headers == vec![("Authorization", "Bearer k1".to_string())]);
        assert!(matches!(&r.body, Body::Json(v) if v["max_results"] == 20 && v["query"] == "q"));
        let r = request(Provider::Brave, Some("k2"), "q", 3);
        assert!(!r.post && r.headers[0] == ("X-Subscription-Token", "k2".to_string()));
        assert!(r.query.contains(&("count", "3".to_string())));
        let r = request(Provider::SerpApi, Some("k3"), "q", 3);
        assert!(
            r.query.contains(&("api_key", "k3".to_string()))
                && r.query.contains(&("engine", "google".to_string()))
        );
        let r = request(Provider::DuckDuckGo, None, "q", 3);
        assert!(
            r.post
                && r.headers.is_empty()
                && matches!(&r.body, Body::Form(f) if f == &vec![("q", "q".to_string())])
        );
    }
}
