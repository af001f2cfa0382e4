//! What every HTTP peer of the crate shares: the one HTTP client builder and the one loopback
//! check. (The MCP streamable-HTTP transport and the `search` tool use both; the Python model
//! client asks the loopback check through the binding.)

pub mod address;

use std::sync::Once;

use url::{Host, Url};

/// Whether `url` names this machine: `localhost` (any case; other names are not resolved),
/// 127.0.0.0/8 or `::1`. Only such hosts may be reached over plain `http://` by default, and
/// only they are reached around a configured proxy.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// How a client differs from the defaults; the defaults are what every client must keep.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientOptions {
    /// The `User-Agent` header, or none. `search` names itself to the providers; the MCP
    /// transport sends none, as it always has.
    pub user_agent: Option<&'static str>,
    /// Longest wait for a connection (TCP and TLS) to open; none: no limit of the client's own.
    pub connect_timeout: Option<std::time::Duration>,
    /// Longest wait for any single read (response headers, each body chunk); none: no limit.
    /// Unlike a total timeout it never cuts a long stream that keeps sending.
    pub read_timeout: Option<std::time::Duration>,
    /// Never go through a proxy from the environment (a loopback server is reached directly).
    pub direct: bool,
    /// Offer HTTP/2 in the TLS handshake (ALPN) and use it where the server picks it; else
    /// HTTP/1.1 only. Plain `http://` is always HTTP/1.1.
    pub http2: bool,
}

/// A reqwest client with rustls on the `ring` provider (installed once for the process; if the
/// application already installed a provider, that one is used). Redirects are never followed:
/// a redirect would replay our headers (bearer tokens, API keys) to wherever the server points.
/// Timeouts are per request, set by each caller.
pub fn http_client(opts: ClientOptions) -> Result<reqwest::Client, String> {
    client_builder(opts)
        .build()
        .map_err(|e| format!("could not build the HTTP client: {e}"))
}

/// The builder [`http_client`] builds, for a caller that adds to it at reqwest's own extension
/// points (`fetch_url` adds its checked DNS resolver).
pub fn client_builder(opts: ClientOptions) -> reqwest::ClientBuilder {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    if let Some(agent) = opts.user_agent {
        builder = builder.user_agent(agent);
    }
    if let Some(timeout) = opts.connect_timeout {
        builder = builder.connect_timeout(timeout);
    }
    if let Some(timeout) = opts.read_timeout {
        builder = builder.read_timeout(timeout);
    }
    if opts.direct {
        builder = builder.no_proxy();
    }
    if !opts.http2 {
        builder = builder.http1_only();
    }
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_localhost_127_8_and_ipv6_one() {
        let lo = |u: &str| is_loopback(&Url::parse(u).unwrap());
        for u in [
            "http://localhost/",
            "http://LocalHost:8080/x",
            "http://127.0.0.1/",
            "http://127.9.8.7/",
            "http://[::1]:1/",
        ] {
            assert!(lo(u), "{u}");
        }
        for u in [
            "http://localhost.evil.com/",
            "http://127.evil.com/",
            "http://10.0.0.1/",
            "http://[::2]/",
            "http://[::ffff:7f00:1]/",
            "file:///tmp/x",
        ] {
            assert!(!lo(u), "{u}");
        }
    }

    #[test]
    fn clients_build_with_and_without_a_user_agent() {
        assert!(http_client(ClientOptions::default()).is_ok());
        assert!(http_client(ClientOptions {
            user_agent: Some("agentmaker/test"),
            ..ClientOptions::default()
        })
        .is_ok());
    }
}
