//! FetchTool: the `fetch_url(url, start, max_chars)` tool, with the address check of
//! [`crate::net::address`] before every connection.
//!
//! - Only `http` and `https`. An IP literal in the URL (every spelling the URL standard accepts:
//!   decimal `2130706433`, octal `0177.0.0.1`, hex, IPv4-mapped IPv6 ...; the `url` crate turns
//!   them into one address) is checked before anything is sent; a host name is resolved by the
//!   checked resolver, which hands reqwest only the addresses it checked.
//! - Redirects are followed by hand (at most `max_redirects`), each hop checked like the first.
//! - No proxy from the environment: a proxy would resolve and connect for us, unchecked.
//! - Caps: `max_bytes` of body (the text says when the download stopped there) and `timeout`
//!   for the whole fetch, redirects included.
//! - HTML becomes Markdown-like text (see `page.rs`); text types are shown as they are; other
//!   types are refused. The text is paged by characters (`start`, `max_chars`).
//! - The result is external content: the executor frames it before the model reads it.

mod page;
mod texts;

#[cfg(test)]
mod tests;

use crate::net::address::{AddressPolicy, CheckedResolver, RefusedAddress};
use crate::prompts::Prompts;
use crate::response::ToolResponse;
use crate::schema::ToolParameter;
use crate::tool::{NativeTool, ToolSpec};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{mpsc, Arc};
use std::time::Duration;
use url::{Host, Url};

pub use texts::PROMPTS;

#[derive(Debug, Clone)]
pub struct FetchOptions {
    pub policy: AddressPolicy,
    pub timeout: Duration,
    pub max_bytes: usize,
    pub max_chars: usize,
    pub max_redirects: usize,
    pub prompts: Option<HashMap<String, String>>,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            policy: AddressPolicy::default(),
            timeout: Duration::from_secs(20),
            max_bytes: 5_000_000,
            max_chars: 20_000,
            max_redirects: 5,
            prompts: None,
        }
    }
}

pub struct FetchTool {
    spec: ToolSpec,
    prompts: Prompts,
    opts: FetchOptions,
    policy: Arc<AddressPolicy>,
    client: reqwest::Client,
}

/// Why a fetch failed, before it becomes the model's text.
#[derive(Debug)]
enum Failure {
    /// A host name whose resolved address the check refused.
    Resolved(RefusedAddress),
    /// A redirect towards an IP literal the check refuses.
    RedirectedTo(Box<(Url, RefusedAddress)>),
    TooManyRedirects,
    BadRedirect(String),
    Timeout,
    Network(String),
    Status(u16),
}

struct Fetched {
    url: Url,
    content_type: Option<String>,
    body: Vec<u8>,
    cut: bool,
}

impl FetchTool {
    pub fn new(opts: FetchOptions) -> Result<FetchTool, String> {
        if opts.timeout.is_zero() || opts.max_bytes == 0 || opts.max_chars == 0 {
            return Err("timeout, max_bytes and max_chars must be positive".into());
        }
        let prompts = Prompts::new(PROMPTS, opts.prompts.clone()).map_err(|e| e.to_string())?;
        let policy = Arc::new(AddressPolicy {
            allow_private: opts.policy.allow_private,
            allowed_hosts: opts
                .policy
                .allowed_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
        });
        let client = crate::net::client_builder(crate::net::ClientOptions {
            user_agent: Some(concat!("agentmaker/", env!("CARGO_PKG_VERSION"))),
            connect_timeout: Some(opts.timeout),
            direct: true,
            ..Default::default()
        })
        .dns_resolver(Arc::new(CheckedResolver {
            policy: Arc::clone(&policy),
        }))
        .build()
        .map_err(|e| format!("could not build the HTTP client: {e}"))?;
        let max = opts.max_chars.to_string();
        let mut spec = ToolSpec::new(
            "fetch_url",
            prompts.get("fetch.description"),
            vec![
                ToolParameter::new("url", "string", prompts.get("fetch.param.url")),
                ToolParameter::new("start", "integer", prompts.get("fetch.param.start"))
                    .optional(Some(json!(0))),
                ToolParameter::new(
                    "max_chars",
                    "integer",
                    prompts.fmt("fetch.param.max_chars", &[("max", &max)]),
                )
                .optional(Some(json!(opts.max_chars))),
            ],
        );
        spec.external_content = true;
        spec.supports_parallel = true;
        Ok(FetchTool {
            spec,
            prompts,
            opts,
            policy,
            client,
        })
    }

    /// The check of a URL before any connection: scheme, and the address of an IP literal.
    fn check_url(&self, url: &Url) -> Result<(), ToolResponse> {
        let p = &self.prompts;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(ToolResponse::error(
                p.fmt("fetch.bad_scheme", &[("scheme", url.scheme())]),
            ));
        }
        match literal_refusal(&self.policy, url) {
            Some(e) => {
                let why = p.fmt(
                    "fetch.refused_literal",
                    &[("host", &e.host), ("reason", e.reason)],
                );
                Err(ToolResponse::error(p.fmt(
                    "fetch.refused",
                    &[("url", url.as_str()), ("why", &why)],
                )))
            }
            None => Ok(()),
        }
    }

    fn get(&self, url: Url) -> Result<Fetched, ToolResponse> {
        let runtime = crate::runtime::shared().map_err(|e| {
            ToolResponse::error(self.prompts.fmt(
                "fetch.network",
                &[("url", url.as_str()), ("err", &e.to_string())],
            ))
        })?;
        let (tx, rx) = mpsc::sync_channel(1);
        let client = self.client.clone();
        let timeout = self.opts.timeout;
        let (max_bytes, max_redirects) = (self.opts.max_bytes, self.opts.max_redirects);
        let start = url.clone();
        // The literal check needs self; hops are checked through a copy of what it needs.
        let checker = HopCheck {
            policy: Arc::clone(&self.policy),
        };
        let task = runtime.spawn(async move {
            let work = fetch(&client, &checker, start, max_bytes, max_redirects);
            let out = match tokio::time::timeout(timeout, work).await {
                Ok(r) => r,
                Err(_) => Err(Failure::Timeout),
            };
            let _ = tx.send(out);
        });
        let out = rx
            .recv_timeout(timeout + Duration::from_secs(2))
            .unwrap_or(Err(Failure::Timeout));
        task.abort();
        out.map_err(|f| self.failure(&url, f))
    }

    fn failure(&self, url: &Url, f: Failure) -> ToolResponse {
        let p = &self.prompts;
        let u = url.as_str();
        ToolResponse::error(match f {
            Failure::Resolved(e) => {
                let why = p.fmt(
                    "fetch.refused_resolved",
                    &[
                        ("host", &e.host),
                        ("addr", &e.addr.to_string()),
                        ("reason", e.reason),
                    ],
                );
                p.fmt("fetch.refused", &[("url", u), ("why", &why)])
            }
            Failure::RedirectedTo(hop) => {
                let (target, e) = *hop;
                let why = p.fmt(
                    "fetch.refused_redirect",
                    &[
                        ("target", target.as_str()),
                        ("host", &e.host),
                        ("reason", e.reason),
                    ],
                );
                p.fmt("fetch.refused", &[("url", u), ("why", &why)])
            }
            Failure::TooManyRedirects => p.fmt(
                "fetch.too_many_redirects",
                &[("url", u), ("max", &self.opts.max_redirects.to_string())],
            ),
            Failure::BadRedirect(loc) => {
                p.fmt("fetch.bad_redirect", &[("url", u), ("location", &loc)])
            }
            Failure::Timeout => p.fmt(
                "fetch.timeout",
                &[
                    ("url", u),
                    ("seconds", &self.opts.timeout.as_secs_f64().to_string()),
                ],
            ),
            Failure::Network(err) => p.fmt("fetch.network", &[("url", u), ("err", &err)]),
            Failure::Status(code) => p.fmt(
                "fetch.http_status",
                &[("url", u), ("status", &code.to_string())],
            ),
        })
    }

    fn show(&self, fetched: Fetched, start: usize, max_chars: usize) -> ToolResponse {
        let p = &self.prompts;
        let u = fetched.url.as_str();
        let ct = fetched.content_type.as_deref();
        let kind = page::kind_of(ct, &fetched.body);
        let shown_type = ct.unwrap_or("unknown").to_string();
        if kind == page::Kind::Binary {
            return ToolResponse::error(
                p.fmt("fetch.unsupported", &[("url", u), ("type", &shown_type)]),
            );
        }
        let raw = page::decode(ct, &fetched.body);
        let (title, text) = match kind {
            page::Kind::Html => (page::title(&raw), page::markdown(&raw)),
            _ => (None, raw),
        };
        let (slice, to, total) = page::page(&text, start, max_chars);
        if start > 0 && start >= total {
            return ToolResponse::error(p.fmt(
                "fetch.past_end",
                &[
                    ("start", &start.to_string()),
                    ("url", u),
                    ("total", &total.to_string()),
                ],
            ));
        }
        let title = title.unwrap_or_default();
        let mut out = p.fmt(
            "fetch.header",
            &[("url", u), ("title", &title), ("type", &shown_type)],
        );
        out.push('\n');
        let (from_s, to_s, total_s) = (start.to_string(), to.to_string(), total.to_string());
        out.push_str(&p.fmt(
            "fetch.range",
            &[("from", &from_s), ("to", &to_s), ("total", &total_s)],
        ));
        if to < total {
            out.push_str(&p.fmt("fetch.more", &[("to", &to_s)]));
        }
        if fetched.cut {
            out.push_str(&p.fmt(
                "fetch.truncated_body",
                &[("max", &self.opts.max_bytes.to_string())],
            ));
        }
        out.push_str("\n\n");
        out.push_str(if slice.is_empty() {
            p.get("fetch.empty")
        } else {
            slice
        });
        let data = json!({
            "url": u,
            "title": title,
            "content_type": ct,
            "start": start,
            "end": to,
            "total_chars": total,
            "truncated": to < total || fetched.cut,
        });
        ToolResponse::ok(out).with_data(data)
    }
}

/// What a redirect hop is checked against (the same policy as the client's resolver).
struct HopCheck {
    policy: Arc<AddressPolicy>,
}

impl HopCheck {
    fn check(&self, url: &Url) -> Result<(), Failure> {
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(Failure::BadRedirect(url.to_string()));
        }
        match literal_refusal(&self.policy, url) {
            Some(e) => Err(Failure::RedirectedTo(Box::new((url.clone(), e)))),
            None => Ok(()),
        }
    }
}

/// The refusal of a URL whose host is an IP literal, if the policy refuses it. Names under
/// `localhost` (RFC 6761: always loopback) other than the bare name are refused here too, so
/// they never reach a resolver that might ask a DNS server; bare `localhost` is resolved from
/// the hosts file by the checked resolver like any other name.
fn literal_refusal(policy: &AddressPolicy, url: &Url) -> Option<RefusedAddress> {
    let ip = match url.host()? {
        Host::Ipv4(ip) => std::net::IpAddr::V4(ip),
        Host::Ipv6(ip) => std::net::IpAddr::V6(ip),
        Host::Domain(d) => {
            let d = d.to_ascii_lowercase();
            let name = d.strip_suffix('.').unwrap_or(&d);
            if name.ends_with(".localhost") || (name == "localhost" && d.ends_with('.')) {
                std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
            } else {
                return None;
            }
        }
    };
    policy.check(url.host_str().unwrap_or(""), ip).err()
}

/// A reqwest error as a reason: our refusal if the resolver refused, else the cause chain.
fn classify(e: reqwest::Error) -> Failure {
    if e.is_timeout() {
        return Failure::Timeout;
    }
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(err) = source {
        if let Some(r) = err.downcast_ref::<RefusedAddress>() {
            return Failure::Resolved(RefusedAddress {
                host: r.host.clone(),
                addr: r.addr,
                reason: r.reason,
            });
        }
        source = err.source();
    }
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(err) = source {
        text.push_str(": ");
        text.push_str(&err.to_string());
        source = err.source();
    }
    Failure::Network(text)
}

async fn fetch(
    client: &reqwest::Client,
    check: &HopCheck,
    mut url: Url,
    max_bytes: usize,
    max_redirects: usize,
) -> Result<Fetched, Failure> {
    let mut hops = 0;
    loop {
        if hops > 0 {
            check.check(&url)?;
        }
        let mut resp = client
            .get(url.clone())
            .header(
                "Accept",
                "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            )
            .send()
            .await
            .map_err(classify)?;
        let status = resp.status();
        if status.is_redirection() {
            if let Some(loc) = resp.headers().get(reqwest::header::LOCATION) {
                let loc = String::from_utf8_lossy(loc.as_bytes()).into_owned();
                url = url.join(&loc).map_err(|_| Failure::BadRedirect(loc))?;
                hops += 1;
                if hops > max_redirects {
                    return Err(Failure::TooManyRedirects);
                }
                continue;
            }
        }
        if !status.is_success() {
            return Err(Failure::Status(status.as_u16()));
        }
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body = Vec::new();
        let mut cut = false;
        while let Some(chunk) = resp.chunk().await.map_err(classify)? {
            let room = max_bytes - body.len();
            if chunk.len() >= room {
                body.extend_from_slice(&chunk[..room]);
                cut = chunk.len() > room || resp.chunk().await.ok().flatten().is_some();
                break;
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(Fetched {
            url,
            content_type,
            body,
            cut,
        });
    }
}

impl NativeTool for FetchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: &Value) -> ToolResponse {
        let p = &self.prompts;
        let raw = args.get("url").and_then(Value::as_str).unwrap_or("").trim();
        let url = match Url::parse(raw) {
            Ok(u) => u,
            Err(e) => {
                let shown = crate::builtins::cli::tokenize::py_repr_str(raw);
                return ToolResponse::error(
                    p.fmt("fetch.bad_url", &[("url", &shown), ("err", &e.to_string())]),
                );
            }
        };
        if let Err(resp) = self.check_url(&url) {
            return resp;
        }
        let number = |key: &str, default: usize| -> usize {
            args.get(key)
                .and_then(Value::as_u64)
                .map_or(default, |n| n as usize)
        };
        let start = number("start", 0);
        let max_chars =
            number("max_chars", self.opts.max_chars).clamp(1, self.opts.max_chars.max(1) * 5);
        match self.get(url) {
            Ok(fetched) => self.show(fetched, start, max_chars),
            Err(resp) => resp,
        }
    }
}
