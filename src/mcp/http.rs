//! The streamable-HTTP transport's configuration: URL rules, TLS, and headers on every request
//! (the client that makes the requests is [`super::http_client`]).
//!
//! `auth` is either a bearer token or a [`HeaderSource`] asked for headers before every HTTP
//! request (so a token can be refreshed between calls). An `httpx.Auth` object is not
//! accepted: its protocol is a generator that receives httpx `Request`/`Response` objects and
//! may resend requests, which only works when httpx itself performs the HTTP exchange; here the
//! exchange is made by reqwest in Rust, so there is no httpx request for it to act on.

use reqwest::header::{HeaderName, HeaderValue};
use std::collections::HashMap;

/// Gives the headers for one HTTP request (an `auth` callable from Python); called on a
/// blocking thread, never on the async executor.
pub trait HeaderSource: Send + Sync {
    fn headers(&self) -> Result<Vec<(String, String)>, String>;
}

/// Why a URL was refused before connecting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("MCP URL must be an absolute http:// or https:// endpoint")]
    NotHttp,
    #[error("MCP URL must not contain embedded credentials; pass them with headers= or auth=")]
    Credentials,
    #[error("cleartext MCP HTTP is refused for non-loopback hosts; use https:// or pass allow_insecure_http=True explicitly")]
    Insecure,
}

/// Applies the URL rules: http(s) with a host, no `user:password@`, and `http` only to a
/// loopback host (`localhost`, 127.0.0.0/8, ::1; other names are not resolved) unless
/// `allow_insecure_http`.
pub fn check_url(url: &str, allow_insecure_http: bool) -> Result<reqwest::Url, UrlError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| UrlError::NotHttp)?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(UrlError::NotHttp);
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(UrlError::Credentials);
    }
    if parsed.scheme() == "http" && !allow_insecure_http && !crate::net::is_loopback(&parsed) {
        return Err(UrlError::Insecure);
    }
    Ok(parsed)
}

/// HTTP headers by name, as rmcp's transport takes them.
pub type Headers = HashMap<HeaderName, HeaderValue>;

/// Parses user headers; names and values must be legal HTTP.
pub fn parse_headers(pairs: &[(String, String)]) -> Result<Headers, String> {
    let mut out = HashMap::with_capacity(pairs.len());
    for (k, v) in pairs {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("invalid HTTP header name {k:?}"))?;
        let value =
            HeaderValue::from_str(v).map_err(|_| format!("invalid value for HTTP header {k:?}"))?;
        out.insert(name, value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_rules() {
        assert!(check_url("https://mcp.example.com/mcp", false).is_ok());
        assert!(check_url("http://127.0.0.1:8000/mcp", false).is_ok());
        assert!(check_url("http://127.9.9.9/mcp", false).is_ok());
        assert!(check_url("http://localhost:1/mcp", false).is_ok());
        assert!(check_url("http://[::1]:1/mcp", false).is_ok());
        assert_eq!(
            check_url("http://mcp.example.com/mcp", false).unwrap_err(),
            UrlError::Insecure
        );
        assert_eq!(
            check_url("http://10.0.0.1/mcp", false).unwrap_err(),
            UrlError::Insecure
        );
        assert_eq!(
            check_url("http://localhost.evil.com/mcp", false).unwrap_err(),
            UrlError::Insecure
        );
        assert!(check_url("http://mcp.example.com/mcp", true).is_ok());
        assert_eq!(
            check_url("https://user:pw@mcp.example.com/", false).unwrap_err(),
            UrlError::Credentials
        );
        assert_eq!(
            check_url("https://user@mcp.example.com/", false).unwrap_err(),
            UrlError::Credentials
        );
        assert_eq!(check_url("ftp://x/", false).unwrap_err(), UrlError::NotHttp);
        assert_eq!(
            check_url("/relative", false).unwrap_err(),
            UrlError::NotHttp
        );
        assert_eq!(
            check_url("file:///etc/passwd", false).unwrap_err(),
            UrlError::NotHttp
        );
    }

    #[test]
    fn header_parsing() {
        let h = parse_headers(&[("X-Api-Key".into(), "k".into())]).unwrap();
        assert_eq!(h.get(&HeaderName::from_static("x-api-key")).unwrap(), "k");
        assert!(parse_headers(&[("bad name".into(), "v".into())]).is_err());
        assert!(parse_headers(&[("x".into(), "a\nb".into())]).is_err());
    }
}
