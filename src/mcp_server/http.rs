//! Serving streamable HTTP: rmcp's tower service on hyper's HTTP/1 server.
//!
//! Gates before rmcp sees a request, in order: the path (404 elsewhere), then authorization
//! (401 without a valid `Authorization` header, when the server has a token or a checker).
//! rmcp then checks the `Host` header against the allowed hosts and a browser's `Origin`
//! against the allowed origins (both against DNS rebinding: 403), and the body size (413).
//! Stateless mode keeps no session (every POST stands alone and is answered with plain JSON),
//! so any number of processes can serve behind a load balancer.

use super::handler::Served;
use super::hub::Hub;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tower_service::Service;

/// Decides whether a request's `Authorization` header (absent: `None`) is allowed. It may
/// block (the binding asks Python): it runs on a blocking thread.
pub trait Authorize: Send + Sync + 'static {
    fn allows(&self, header: Option<&str>) -> bool;
}

/// A fixed bearer token, compared in constant time.
pub struct Bearer(pub String);

impl Authorize for Bearer {
    fn allows(&self, header: Option<&str>) -> bool {
        let Some(given) = header.and_then(|h| h.strip_prefix("Bearer ")) else {
            return false;
        };
        let (a, b) = (given.trim().as_bytes(), self.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

pub struct HttpOptions {
    pub path: String,
    pub stateless: bool,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
    pub authorize: Option<Arc<dyn Authorize>>,
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn unauthorized() -> Response<Body> {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        "401 Unauthorized: this MCP server needs an Authorization header (Bearer token).",
    );
    response.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    response
}

fn config(hub: &Hub, options: &HttpOptions) -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(hub.stop_token().child_token());
    if options.stateless {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_sse_retry(None);
    }
    config
}

/// Bind `addr` (port 0 picks a free one) and return the bound address with the future that
/// serves until the hub stops.
pub async fn bind(
    hub: Arc<Hub>,
    addr: SocketAddr,
    options: HttpOptions,
) -> std::io::Result<(SocketAddr, impl std::future::Future<Output = ()> + Send)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let shared = hub.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Served::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        config(&hub, &options),
    );
    let path: Arc<str> = options.path.into();
    let authorize = options.authorize;
    let stop = hub.stop_token().clone();
    let serving = async move {
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        // An answer is written in pieces (headers, then SSE events): without
                        // this, Nagle holds the last piece until the client's delayed ACK
                        // (about 40 ms a call).
                        let _ = stream.set_nodelay(true);
                        stream
                    }
                    Err(_) => continue,
                },
                () = stop.cancelled() => break,
            };
            let (mcp, path, authorize, stop) =
                (mcp.clone(), path.clone(), authorize.clone(), stop.clone());
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (mut mcp, path, authorize) = (mcp.clone(), path.clone(), authorize.clone());
                async move { Ok::<_, Infallible>(answer(&mut mcp, &path, authorize, req).await) }
            });
            tokio::spawn(async move {
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                tokio::pin!(conn);
                tokio::select! {
                    _ = conn.as_mut() => {}
                    () = stop.cancelled() => conn.as_mut().graceful_shutdown(),
                }
            });
        }
    };
    Ok((bound, serving))
}

async fn answer(
    mcp: &mut StreamableHttpService<Served, LocalSessionManager>,
    path: &str,
    authorize: Option<Arc<dyn Authorize>>,
    req: Request<Incoming>,
) -> Response<Body> {
    if req.uri().path() != path {
        return plain(
            StatusCode::NOT_FOUND,
            &format!("404 Not Found: this MCP server answers at {path}"),
        );
    }
    if let Some(check) = authorize {
        let header = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let allowed = tokio::task::spawn_blocking(move || check.allows(header.as_deref()))
            .await
            .unwrap_or(false);
        if !allowed {
            return unauthorized();
        }
    }
    let deleting = req.method() == http::Method::DELETE;
    let mut response = match mcp.call(req).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    // rmcp accepts a session's DELETE with 202; clients (the official SDK among them) expect
    // a finished termination to be 200 or 204, and it is finished.
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_token_must_match_exactly() {
        let bearer = Bearer("s3cret".into());
        assert!(bearer.allows(Some("Bearer s3cret")));
        assert!(!bearer.allows(Some("Bearer s3cre")));
        assert!(!bearer.allows(Some("Bearer s3cretx")));
        assert!(!bearer.allows(Some("Basic s3cret")));
        assert!(!bearer.allows(Some("s3cret")));
        assert!(!bearer.allows(None));
    }
}
