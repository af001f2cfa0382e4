//! `search`: web search with fallback across providers (Tavily, DuckDuckGo, Brave, SerpAPI, in
//! that order). A keyed provider without its key is skipped; a provider that fails, times out or
//! finds nothing hands over to the next. Only when all fail is the result an error, listing why
//! each one failed. API keys are read from the environment at call time and never appear in any
//! text or data the tool returns (they are scrubbed from everything, provider echoes included).
//!
//! Requests go over HTTPS (reqwest + rustls) with a timeout per request. Each endpoint can be
//! replaced (constructor, or `AGENTMAKER_<PROVIDER>_URL`); a replacement must be `https://`, or
//! `http://` to a loopback address, so a key is never sent in clear text over a network.

pub(crate) mod html;
mod providers;

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use url::Url;

use crate::error::ConfigError;
use crate::prompts::Prompts;
use crate::response::ToolResponse;
use crate::schema::ToolParameter;
use crate::tool::{NativeTool, ToolSpec};

pub use providers::{Provider, ORDER};

/// Bounds on what a provider may send back and on what we pass on to the model.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
const MAX_QUERY_CHARS: usize = 2000;
const MAX_TITLE_CHARS: usize = 300;
const MAX_SNIPPET_CHARS: usize = 1000;
const MAX_URL_CHARS: usize = 2048;
/// Upper bound for `max_results` (providers cap their pages at 20-100 anyway).
pub const MAX_RESULTS_LIMIT: usize = 50;

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// What a provider found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub hits: Vec<Hit>,
    pub answer: Option<String>,
}

/// Why a provider gave no results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    NoKey {
        env: &'static str,
    },
    BadEndpoint {
        reason: String,
    },
    Timeout,
    Network(String),
    Status {
        code: u16,
        detail: Option<String>,
    },
    TooLarge,
    Body(String),
    /// The provider answered with an error message of its own.
    Api(String),
    NoResults,
}

/// Endpoint replacements given to the constructor (they win over the environment).
#[derive(Clone, Debug, Default)]
pub struct Endpoints {
    pub tavily: Option<String>,
    pub duckduckgo: Option<String>,
    pub brave: Option<String>,
    pub serpapi: Option<String>,
}

impl Endpoints {
    fn get(&self, p: Provider) -> Option<&str> {
        match p {
            Provider::Tavily => self.tavily.as_deref(),
            Provider::DuckDuckGo => self.duckduckgo.as_deref(),
            Provider::Brave => self.brave.as_deref(),
            Provider::SerpApi => self.serpapi.as_deref(),
        }
    }
}

pub struct SearchOptions {
    pub max_results: usize,
    pub timeout: Duration,
    pub endpoints: Endpoints,
    pub prompts: Option<HashMap<String, String>>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            max_results: 5,
            timeout: Duration::from_secs(10),
            endpoints: Endpoints::default(),
            prompts: None,
        }
    }
}

/// Checks an endpoint: `https://`, or `http://` to a loopback host.
pub fn check_endpoint(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw).map_err(|e| format!("not a URL: {e}"))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" => {
            let loopback = crate::net::is_loopback(&url);
            if loopback {
                Ok(url)
            } else {
                Err("plain http is only allowed to a loopback address; use https".into())
            }
        }
        other => Err(format!("unsupported scheme '{other}'")),
    }
}

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "search.description",
        "Search the web; returns up to {max_results} results, each with title, snippet and link. \
         Tries Tavily, DuckDuckGo, Brave and SerpAPI in turn until one answers.",
    ),
    ("search.param.query", "Search keywords or a question"),
    ("search.empty", "Error: the search query must not be empty"),
    ("search.not_text", "Error: the search query must be a string"),
    ("search.too_long", "Error: the search query is too long (over {max} characters)"),
    ("search.source_label", "[source: {source}]"),
    ("search.ai_answer", "AI answer: {answer}"),
    ("search.result_title", "{index}. {title}"),
    ("search.result_line", "   {text}"),
    (
        "search.all_failed",
        "Error: search failed; all sources are unavailable:\n{errors}\n\
         Tip: set TAVILY_API_KEY, BRAVE_API_KEY or SERPAPI_API_KEY to enable more sources (DuckDuckGo needs no key).",
    ),
    ("search.failure_line", "- {reason}"),
    ("search.fail.no_key", "{source}: skipped ({env} is not set)"),
    ("search.fail.endpoint", "{source}: invalid endpoint ({reason})"),
    ("search.fail.timeout", "{source}: no answer within {seconds} s"),
    ("search.fail.network", "{source}: request failed ({reason})"),
    ("search.fail.status", "{source}: HTTP {code}"),
    ("search.fail.status_detail", "{source}: HTTP {code} ({detail})"),
    ("search.fail.too_large", "{source}: answer larger than {max} bytes"),
    ("search.fail.body", "{source}: unreadable answer ({reason})"),
    ("search.fail.api", "{source}: {message}"),
    ("search.fail.no_results", "{source}: no results"),
];

/// The `search` built-in tool.
pub struct SearchTool {
    spec: ToolSpec,
    prompts: Prompts,
    max_results: usize,
    timeout: Duration,
    endpoints: Endpoints,
    client: reqwest::Client,
    /// [`crate::runtime::fork_generation`] when `client` was built: in a forked child its
    /// pooled connections are the parent's, so each request there gets a client of its own.
    process: u64,
}

fn http_client() -> Result<reqwest::Client, String> {
    crate::net::http_client(crate::net::ClientOptions {
        user_agent: Some(concat!("agentmaker/", env!("CARGO_PKG_VERSION"))),
        ..crate::net::ClientOptions::default()
    })
}

impl SearchTool {
    pub fn new(opts: SearchOptions) -> Result<Self, ConfigError> {
        if opts.max_results == 0 || opts.max_results > MAX_RESULTS_LIMIT {
            return Err(ConfigError::Invalid(format!(
                "max_results must be a positive integer of at most {MAX_RESULTS_LIMIT}, got {}",
                opts.max_results
            )));
        }
        if opts.timeout.is_zero() {
            return Err(ConfigError::Invalid(
                "timeout must be a positive number of seconds".into(),
            ));
        }
        for p in ORDER {
            if let Some(raw) = opts.endpoints.get(p) {
                check_endpoint(raw).map_err(|e| {
                    ConfigError::Invalid(format!("invalid {} endpoint {raw:?}: {e}", p.label()))
                })?;
            }
        }
        let prompts = Prompts::new(PROMPTS, opts.prompts)?;
        let description = prompts.fmt(
            "search.description",
            &[("max_results", &opts.max_results.to_string())],
        );
        let param = ToolParameter::new("query", "string", prompts.fmt("search.param.query", &[]));
        let mut spec = ToolSpec::new("search", description, vec![param]);
        spec.external_content = true;
        spec.supports_parallel = true;
        Ok(SearchTool {
            spec,
            prompts,
            max_results: opts.max_results,
            timeout: opts.timeout,
            endpoints: opts.endpoints,
            client: http_client().map_err(ConfigError::Invalid)?,
            process: crate::runtime::fork_generation(),
        })
    }

    pub fn max_results(&self) -> usize {
        self.max_results
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs the search for `query` through the providers.
    pub fn search(&self, query: &str) -> ToolResponse {
        let query = query.trim();
        if query.is_empty() {
            return ToolResponse::error(self.prompts.fmt("search.empty", &[]));
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return ToolResponse::error(
                self.prompts
                    .fmt("search.too_long", &[("max", &MAX_QUERY_CHARS.to_string())]),
            );
        }
        let keys: Vec<(Provider, Option<String>)> = ORDER
            .iter()
            .map(|p| {
                (
                    *p,
                    p.key_env()
                        .and_then(|k| std::env::var(k).ok())
                        .filter(|k| !k.trim().is_empty()),
                )
            })
            .collect();
        let secrets: Vec<String> = keys.iter().filter_map(|(_, k)| k.clone()).collect();
        let mut failures = Vec::new();
        for (p, key) in &keys {
            match self.try_provider(*p, key.as_deref(), query) {
                Ok(found) => return scrub_response(self.success(*p, found, &failures), &secrets),
                Err(f) => failures.push(self.failure_text(*p, &f)),
            }
        }
        let lines: Vec<String> = failures
            .iter()
            .map(|f| self.prompts.fmt("search.failure_line", &[("reason", f)]))
            .collect();
        let text = self
            .prompts
            .fmt("search.all_failed", &[("errors", &lines.join("\n"))]);
        scrub_response(
            ToolResponse::error(text).with_data(json!({ "errors": failures })),
            &secrets,
        )
    }

    fn endpoint(&self, p: Provider) -> Result<Url, Failure> {
        let raw = match self.endpoints.get(p) {
            Some(u) => u.to_string(),
            None => std::env::var(p.url_env())
                .ok()
                .filter(|u| !u.trim().is_empty())
                .unwrap_or_else(|| p.default_url().into()),
        };
        check_endpoint(raw.trim()).map_err(|reason| Failure::BadEndpoint {
            reason: format!("{}: {reason}", p.url_env()),
        })
    }

    fn try_provider(&self, p: Provider, key: Option<&str>, query: &str) -> Result<Found, Failure> {
        if let (Some(env), None) = (p.key_env(), key) {
            return Err(Failure::NoKey { env });
        }
        let url = self.endpoint(p)?;
        let req = providers::request(p, key, query, self.max_results);
        let (code, body) = self.fetch(url, req)?;
        if !(200..300).contains(&code) {
            return Err(Failure::Status {
                code,
                detail: providers::error_detail(&body),
            });
        }
        let found = providers::parse(p, &body, self.max_results)?;
        let hits: Vec<Hit> = found
            .hits
            .into_iter()
            .filter_map(clean)
            .take(self.max_results)
            .collect();
        if hits.is_empty() {
            return Err(Failure::NoResults);
        }
        let answer = found
            .answer
            .map(|a| truncate(&html::fold_whitespace(&a), MAX_SNIPPET_CHARS));
        Ok(Found { hits, answer })
    }

    /// Sends one request on the runtime and waits for it on this (non-runtime) thread.
    fn fetch(&self, mut url: Url, req: providers::Request) -> Result<(u16, Vec<u8>), Failure> {
        if !req.query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(req.query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        let fresh;
        let client = if self.process == crate::runtime::fork_generation() {
            &self.client
        } else {
            fresh = http_client().map_err(Failure::Network)?;
            &fresh
        };
        // The process's runtime (asked at every request: a forked child starts its own).
        let runtime = crate::runtime::shared()
            .map_err(|e| Failure::Network(format!("could not start the tokio runtime: {e}")))?;
        let mut rb = if req.post {
            client.post(url)
        } else {
            client.get(url)
        };
        for (name, value) in &req.headers {
            rb = rb.header(*name, value);
        }
        rb = match req.body {
            providers::Body::None => rb,
            providers::Body::Json(v) => rb
                .header("Content-Type", "application/json")
                .body(v.to_string()),
            providers::Body::Form(pairs) => {
                let form = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(pairs)
                    .finish();
                rb.header("Content-Type", "application/x-www-form-urlencoded")
                    .body(form)
            }
        };
        let timeout = self.timeout;
        let (tx, rx) = mpsc::sync_channel(1);
        let task = runtime.spawn(async move {
            let _ = tx.send(send(rb.timeout(timeout)).await);
        });
        // The request carries its own timeout; this one only guards against a stalled runtime.
        let result = match rx.recv_timeout(timeout + Duration::from_secs(2)) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Failure::Timeout),
            // The runtime dropped the task (it is shutting down).
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(Failure::Network("the request was dropped".into()))
            }
        };
        task.abort();
        result
    }

    fn success(&self, p: Provider, found: Found, failures: &[String]) -> ToolResponse {
        let fmt = |key: &str, args: &[(&str, &str)]| self.prompts.fmt(key, args);
        let mut lines = vec![fmt("search.source_label", &[("source", p.label())])];
        if let Some(answer) = &found.answer {
            lines.push(fmt("search.ai_answer", &[("answer", answer)]));
            lines.push(String::new());
        }
        for (i, hit) in found.hits.iter().enumerate() {
            lines.push(fmt(
                "search.result_title",
                &[("index", &(i + 1).to_string()), ("title", &hit.title)],
            ));
            for text in [&hit.snippet, &hit.url] {
                if !text.is_empty() {
                    lines.push(fmt("search.result_line", &[("text", text)]));
                }
            }
        }
        let results: Vec<Value> = found
            .hits
            .iter()
            .map(|h| json!({"title": h.title, "url": h.url, "snippet": h.snippet}))
            .collect();
        let mut data = json!({"source": p.label(), "answer": found.answer, "results": results});
        if !failures.is_empty() {
            data["degraded"] = json!(failures);
        }
        ToolResponse::ok(lines.join("\n")).with_data(data)
    }

    fn failure_text(&self, p: Provider, f: &Failure) -> String {
        let source = p.label();
        let fmt = |key: &str, extra: &[(&str, &str)]| {
            let mut args = vec![("source", source)];
            args.extend_from_slice(extra);
            self.prompts.fmt(key, &args)
        };
        match f {
            Failure::NoKey { env } => fmt("search.fail.no_key", &[("env", env)]),
            Failure::BadEndpoint { reason } => fmt("search.fail.endpoint", &[("reason", reason)]),
            Failure::Timeout => fmt(
                "search.fail.timeout",
                &[("seconds", &format_seconds(self.timeout))],
            ),
            Failure::Network(reason) => fmt("search.fail.network", &[("reason", reason)]),
            Failure::Status { code, detail: None } => {
                fmt("search.fail.status", &[("code", &code.to_string())])
            }
            Failure::Status {
                code,
                detail: Some(d),
            } => fmt(
                "search.fail.status_detail",
                &[("code", &code.to_string()), ("detail", d)],
            ),
            Failure::TooLarge => fmt(
                "search.fail.too_large",
                &[("max", &MAX_BODY_BYTES.to_string())],
            ),
            Failure::Body(reason) => fmt("search.fail.body", &[("reason", reason)]),
            Failure::Api(message) => fmt("search.fail.api", &[("message", message)]),
            Failure::NoResults => fmt("search.fail.no_results", &[]),
        }
    }
}

async fn send(rb: reqwest::RequestBuilder) -> Result<(u16, Vec<u8>), Failure> {
    let mut resp = rb.send().await.map_err(network_failure)?;
    let code = resp.status().as_u16();
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_BODY_BYTES as u64)
    {
        return Err(Failure::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(network_failure)? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(Failure::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok((code, body))
}

/// A reqwest error as a short reason: the URL is left out (it can carry a key), the cause chain
/// is kept because the top-level message ("error sending request") says little.
fn network_failure(e: reqwest::Error) -> Failure {
    if e.is_timeout() {
        return Failure::Timeout;
    }
    let e = e.without_url();
    let mut parts = vec![e.to_string()];
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    Failure::Network(parts.join(": ").chars().take(300).collect())
}

fn format_seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// Normalizes a result; None when nothing useful is left.
fn clean(hit: Hit) -> Option<Hit> {
    let title = truncate(&html::text(&hit.title), MAX_TITLE_CHARS);
    let snippet = truncate(&html::text(&hit.snippet), MAX_SNIPPET_CHARS);
    let url = hit.url.trim();
    // Only web links reach the model: no javascript:/data: URLs, nothing absurdly long.
    let url = if (url.starts_with("https://") || url.starts_with("http://"))
        && url.len() <= MAX_URL_CHARS
        && !url.contains(char::is_whitespace)
    {
        url.to_string()
    } else {
        String::new()
    };
    if title.is_empty() && snippet.is_empty() && url.is_empty() {
        return None;
    }
    Some(Hit {
        title,
        url,
        snippet,
    })
}

fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if !s.is_empty() && out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "[redacted]");
        }
    }
    out
}

fn scrub_value(v: &mut Value, secrets: &[String]) {
    match v {
        Value::String(s) => *s = scrub(s, secrets),
        Value::Array(items) => items.iter_mut().for_each(|i| scrub_value(i, secrets)),
        Value::Object(map) => map.values_mut().for_each(|i| scrub_value(i, secrets)),
        _ => {}
    }
}

/// Removes every API key from the text and data (a provider may echo a key back).
fn scrub_response(mut r: ToolResponse, secrets: &[String]) -> ToolResponse {
    if secrets.is_empty() {
        return r;
    }
    r.text = scrub(&r.text, secrets);
    if let Some(d) = r.data.as_mut() {
        scrub_value(d, secrets);
    }
    r
}

impl NativeTool for SearchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: &Value) -> ToolResponse {
        match args.get("query") {
            Some(Value::String(q)) => self.search(q),
            None | Some(Value::Null) => ToolResponse::error(self.prompts.fmt("search.empty", &[])),
            Some(_) => ToolResponse::error(self.prompts.fmt("search.not_text", &[])),
        }
    }
}

#[cfg(test)]
#[path = "search/tests.rs"]
mod tests;
