//! One connection to an MCP server and the tools it offers.
//!
//! Lifecycle: [`McpClient::new`] checks the configuration (URL rules included) without
//! connecting; [`McpClient::connect`] starts the transport and runs `initialize`;
//! [`McpClient::load_tools`] lists and vets the catalog; [`McpClient::close`] ends the session
//! and, for stdio, the server's whole process group. Every wait on the server (initialize,
//! each page of the listing, every call) is bounded by `timeout` unless it is `None`.

use super::catalog::{build_catalog, parse_page, CatalogError, CatalogRules, ListedTool};
use super::http::{check_url, parse_headers, HeaderSource};
use super::http_client::BoundedHttpClient;
pub use super::remote_tool::{CallHandle, McpTool};
use super::sanitize::sanitize_marked;
use super::stdio::{ChildProcess, StdioConfig};
use crate::prompts::Prompts;
use crate::tool::is_wire_safe;
use rmcp::model::{
    ClientCapabilities, ClientRequest, CustomRequest, Implementation, InitializeRequestParams,
    ServerResult,
};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError, ServiceExt};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a stdio server gets to exit after its stdin is closed before its group is killed.
const EXIT_GRACE: Duration = Duration::from_millis(1500);
/// Error texts quoting the server are cut to this many characters.
pub(super) const ERROR_CHARS: usize = 500;

/// Where the server is.
#[derive(Clone)]
pub enum TransportConfig {
    Stdio(StdioConfig),
    Http(HttpConfig),
}

#[derive(Clone, Default)]
pub struct HttpConfig {
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// Sent as `Authorization: Bearer <token>`.
    pub bearer: Option<String>,
    pub header_source: Option<Arc<dyn HeaderSource>>,
    pub allow_insecure_http: bool,
}

impl HttpConfig {
    /// The bearer token as an `Authorization` header.
    fn bearer_header(&self) -> Option<(String, String)> {
        let token = self.bearer.as_ref()?;
        Some(("authorization".into(), format!("Bearer {token}")))
    }
}

/// Everything `MCPClient(...)` takes.
#[derive(Clone)]
pub struct ClientConfig {
    pub transport: TransportConfig,
    pub namespace: String,
    pub requires_confirmation: bool,
    pub expected_fingerprints: Option<BTreeMap<String, String>>,
    pub max_tools: usize,
    pub max_result_chars: usize,
    pub max_desc_chars: usize,
    pub timeout: Option<Duration>,
    pub prompts: Prompts,
}

pub const DEFAULT_MAX_TOOLS: usize = 128;
pub const DEFAULT_MAX_RESULT_CHARS: usize = 50_000;
pub const DEFAULT_MAX_DESC_CHARS: usize = 4096;

/// Failures of the client itself (a tool call never fails this way: it returns an error
/// [`ToolResponse`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("{0}")]
    Config(String),
    #[error("MCPClient is already connected")]
    AlreadyConnected,
    #[error("the MCPClient was closed while it was connecting; the server was stopped")]
    ClosedWhileConnecting,
    #[error("MCP session not established or already closed: load_tools() must be called while the `async with MCPClient(...)` block is alive")]
    NotConnected,
    #[error("this MCPClient was opened before this process was forked, and its connection belongs to the parent process; open a new MCPClient in this process")]
    Forked,
    #[error("could not start the MCP server {target}: {reason}")]
    Spawn { target: String, reason: String },
    #[error("MCP server handshake with {target} failed: {reason}")]
    Handshake { target: String, reason: String },
    #[error("MCP server handshake timed out (>{secs}s): {target}")]
    HandshakeTimeout { target: String, secs: String },
    #[error("MCP tool listing timed out (>{secs}s)")]
    ListTimeout { secs: String },
    #[error("MCP tool listing failed: {reason}")]
    List { reason: String },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

/// Why a server could not be started. A missing working directory makes the OS report "No
/// such file or directory", which would blame the command.
fn spawn_failure(cfg: &StdioConfig, err: &std::io::Error) -> String {
    let Some(dir) = &cfg.cwd else {
        return err.to_string();
    };
    let problem = match std::fs::metadata(dir) {
        Err(_) => "does not exist",
        Ok(m) if !m.is_dir() => "is not a directory",
        Ok(_) => return err.to_string(),
    };
    let shown = sanitize_marked(dir, 200);
    format!("its working directory (cwd) {shown:?} {problem}")
}

/// A timeout in seconds as a user wrote it (`30`, `0.5`: `f64`'s `Display` adds no `.0`).
pub(super) fn secs(timeout: Option<Duration>) -> String {
    timeout
        .map(|t| t.as_secs_f64().to_string())
        .unwrap_or_default()
}

/// What [`McpClient::new`] refuses, worded for [`McpError::Config`].
fn check_config(config: &ClientConfig) -> Result<(), String> {
    if !is_wire_safe(&config.namespace) {
        return Err("namespace must match ^[a-zA-Z0-9_-]{1,64}$".into());
    }
    let limits = [
        ("max_tools", config.max_tools),
        ("max_result_chars", config.max_result_chars),
        ("max_desc_chars", config.max_desc_chars),
    ];
    if let Some((name, value)) = limits.into_iter().find(|(_, value)| *value < 1) {
        return Err(format!("{name} must be >= 1, got {value}"));
    }
    if config.timeout.is_some_and(|t| t.is_zero()) {
        return Err("timeout must be positive or None".into());
    }
    match &config.transport {
        TransportConfig::Stdio(s) => {
            if s.command.is_empty() {
                return Err("command must not be empty".into());
            }
            // The OS would take "A=B" as variable A, and NUL cuts a string short.
            if let Some((key, _)) = s.env.iter().find(|(key, value)| {
                key.is_empty() || key.contains(['=', '\0']) || value.contains('\0')
            }) {
                return Err(format!(
                    "env: {:?} is not a usable environment variable (a name must be \
                     non-empty without '=' or NUL, a value without NUL)",
                    sanitize_marked(key, 100)
                ));
            }
            if s.args.iter().chain([&s.command]).any(|a| a.contains('\0')) {
                return Err("command and args must not contain NUL characters".into());
            }
        }
        TransportConfig::Http(h) => {
            check_url(&h.url, h.allow_insecure_http).map_err(|e| e.to_string())?;
            parse_headers(&h.headers)?;
            if parse_headers(h.bearer_header().as_slice()).is_err() {
                return Err("auth token contains characters not allowed in an HTTP header".into());
            }
        }
    }
    Ok(())
}

/// The live part of a connection, shared by the client and its tools.
pub struct Session {
    pub(super) peer: Peer<RoleClient>,
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, InitializeRequestParams>>>,
    child: tokio::sync::Mutex<Option<ChildProcess>>,
    closed: AtomicBool,
    pub(super) runtime: tokio::runtime::Handle,
    child_pid: Option<u32>,
    /// [`crate::runtime::fork_generation`] when the session was opened.
    process: u64,
}

impl Session {
    /// Closed, or opened by another process: the parent of this one, which forked since (the
    /// connection, the server and the runtime serving them are the parent's).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire) || self.is_foreign()
    }

    pub(super) fn is_foreign(&self) -> bool {
        self.process != crate::runtime::fork_generation()
    }

    async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        if self.is_foreign() {
            // The parent's server and connection are left to the parent.
            return;
        }
        if let Some(running) = self.running.lock().await.take() {
            // Cancelling ends the service loop and drops the transport, which closes the
            // server's stdin (stdio) or ends the HTTP session.
            let _ = tokio::time::timeout(Duration::from_secs(5), running.cancel()).await;
        }
        if let Some(mut child) = self.child.lock().await.take() {
            child.shutdown(EXIT_GRACE).await;
        }
    }
}

pub struct McpClient {
    config: Arc<ClientConfig>,
    /// Shared with the tools loaded from it, which look here only once their own session is
    /// closed: to tell a tool of an earlier session from one whose client is closed.
    session: Arc<Mutex<Option<Arc<Session>>>>,
    /// Bumped by [`McpClient::close`] (under the `session` lock): a connect under way gives up,
    /// and the server it started is killed.
    closes: tokio::sync::watch::Sender<u64>,
}

impl McpClient {
    /// Checks the configuration; nothing is started and nothing is contacted.
    pub fn new(config: ClientConfig) -> Result<McpClient, McpError> {
        check_config(&config).map_err(McpError::Config)?;
        Ok(McpClient {
            config: Arc::new(config),
            session: Default::default(),
            closes: tokio::sync::watch::channel(0).0,
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    fn target(&self) -> String {
        match &self.config.transport {
            TransportConfig::Stdio(s) => sanitize_marked(&s.command, 200),
            TransportConfig::Http(h) => sanitize_marked(&h.url, 200),
        }
    }

    fn current(&self) -> Option<Arc<Session>> {
        self.session.lock().ok().and_then(|s| s.clone())
    }

    /// The server's process id (stdio only), for tests and diagnostics.
    pub fn server_pid(&self) -> Option<u32> {
        self.current().and_then(|s| s.child_pid)
    }

    pub fn is_connected(&self) -> bool {
        self.current().is_some_and(|s| !s.is_closed())
    }

    /// Starts the transport and runs the `initialize` handshake. Must run inside a tokio
    /// runtime, whose handle later serves the blocking [`NativeTool::call`]. A
    /// [`McpClient::close`] meanwhile, or dropping this future (a cancelled `__aenter__`),
    /// abandons the handshake and kills the server it started.
    pub async fn connect(&self) -> Result<(), McpError> {
        match self.current() {
            Some(s) if s.is_foreign() => return Err(McpError::Forked),
            Some(_) => return Err(McpError::AlreadyConnected),
            None => {}
        }
        let mut closes = self.closes.subscribe();
        let session = tokio::select! {
            biased;
            _ = closes.changed() => return Err(McpError::ClosedWhileConnecting),
            opened = self.open() => Arc::new(opened?),
        };
        // Two concurrent connects: the loser closes what it opened; so does a connect that a
        // close overtook (checked under the lock close() bumps under).
        let refused = {
            let poisoned = |_| McpError::Config("client state poisoned".into());
            let mut slot = self.session.lock().map_err(poisoned)?;
            if closes.has_changed().unwrap_or(true) {
                McpError::ClosedWhileConnecting
            } else if slot.is_some() {
                McpError::AlreadyConnected
            } else {
                *slot = Some(session);
                return Ok(());
            }
        };
        session.close().await;
        Err(refused)
    }

    /// The transport and the handshake; everything it started is dropped (the server killed)
    /// when it fails or is dropped.
    async fn open(&self) -> Result<Session, McpError> {
        let info = InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("agentmaker", env!("CARGO_PKG_VERSION")),
        );
        let target = self.target();
        let timeout = self.config.timeout;
        let (handshake, mut child) = match &self.config.transport {
            TransportConfig::Stdio(cfg) => {
                let (child, transport) = ChildProcess::spawn(cfg).map_err(|e| McpError::Spawn {
                    target: target.clone(),
                    reason: spawn_failure(cfg, &e),
                })?;
                let transport = super::own_messages::OwnMessagesAnswered::new(transport);
                (bounded(timeout, info.serve(transport)).await, Some(child))
            }
            TransportConfig::Http(h) => {
                // The bearer token's `Authorization` overrides one in `headers`.
                let pairs: Vec<_> = h.headers.iter().cloned().chain(h.bearer_header()).collect();
                let headers = parse_headers(&pairs).map_err(McpError::Config)?;
                let inner = crate::net::http_client(crate::net::ClientOptions::default());
                let client = BoundedHttpClient {
                    inner: inner.map_err(McpError::Config)?,
                    source: h.header_source.clone(),
                    resumed: Default::default(),
                };
                let cfg = StreamableHttpClientTransportConfig::with_uri(h.url.as_str())
                    .custom_headers(headers);
                let transport = super::own_messages::OwnMessagesAnswered::new(
                    StreamableHttpClientTransport::with_client(client, cfg),
                );
                (bounded(timeout, info.serve(transport)).await, None)
            }
        };
        let running = match handshake {
            Some(Ok(running)) => running,
            Some(Err(e)) => {
                let reason = match child.as_mut() {
                    Some(child) => {
                        let mut reason = sanitize_marked(&e.to_string(), ERROR_CHARS);
                        child.shutdown(Duration::from_millis(200)).await;
                        let tail = child.final_stderr_tail(Duration::from_millis(500)).await;
                        if !tail.is_empty() {
                            // The whole tail (at most 4 KiB, cleaned): a traceback ends with
                            // its cause.
                            reason.push_str(&format!("; server stderr: {tail}"));
                        }
                        reason
                    }
                    None => sanitize_marked(&without_type_names(&e.to_string()), ERROR_CHARS),
                };
                return Err(McpError::Handshake { target, reason });
            }
            None => {
                if let Some(child) = child.as_mut() {
                    child.shutdown(Duration::ZERO).await;
                }
                let secs = secs(timeout);
                return Err(McpError::HandshakeTimeout { target, secs });
            }
        };
        Ok(Session {
            peer: running.peer().clone(),
            child_pid: child.as_ref().and_then(ChildProcess::pid),
            running: tokio::sync::Mutex::new(Some(running)),
            child: tokio::sync::Mutex::new(child),
            closed: AtomicBool::new(false),
            runtime: tokio::runtime::Handle::current(),
            process: crate::runtime::fork_generation(),
        })
    }

    /// Ends the session; tools loaded from it answer with the `no_session` error afterwards.
    /// Closing twice is harmless.
    pub async fn close(&self) {
        let session = self.session.lock().ok().and_then(|mut s| {
            self.closes.send_modify(|n| *n += 1);
            s.take()
        });
        if let Some(s) = session {
            s.close().await;
        }
    }

    /// Lists the server's tools (following `nextCursor`) and vets them into [`McpTool`]s.
    pub async fn load_tools(&self) -> Result<Vec<McpTool>, McpError> {
        let session = match self.current() {
            Some(s) if s.is_foreign() => return Err(McpError::Forked),
            Some(s) if !s.is_closed() => s,
            _ => return Err(McpError::NotConnected),
        };
        let timeout = self.config.timeout;
        let listed = bounded(timeout, list_all(&session.peer, self.config.max_tools)).await;
        let listed = listed.ok_or_else(|| McpError::ListTimeout {
            secs: secs(timeout),
        })??;
        let rules = CatalogRules {
            namespace: &self.config.namespace,
            max_tools: self.config.max_tools,
            max_desc_chars: self.config.max_desc_chars,
            expected_fingerprints: self.config.expected_fingerprints.as_ref(),
        };
        let client = Arc::downgrade(&self.session);
        Ok(build_catalog(listed, &rules)?
            .into_iter()
            .map(|e| McpTool::new(e, &self.config, session.clone(), client.clone()))
            .collect())
    }
}

/// Runs `fut` under the optional timeout; `None` means it timed out.
pub(super) async fn bounded<F: Future>(timeout: Option<Duration>, fut: F) -> Option<F::Output> {
    match timeout {
        Some(t) => tokio::time::timeout(t, fut).await.ok(),
        None => Some(fut.await),
    }
}

/// `tools/list` sent as a plain request so the answer comes back as raw JSON (see
/// `catalog.rs`); pages are followed while the total stays within `max_tools`.
async fn list_all(peer: &Peer<RoleClient>, max_tools: usize) -> Result<Vec<ListedTool>, McpError> {
    let failed = |reason: String| McpError::List { reason };
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    // Each page but the last should add a tool; a server cycling through empty pages is cut off.
    for _ in 0..=max_tools {
        let params = cursor.take().map(|c| serde_json::json!({"cursor": c}));
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
        let raw = match peer.send_request(request).await {
            Ok(ServerResult::CustomResult(c)) => c.0,
            Ok(other) => serde_json::to_value(&other).map_err(|e| failed(e.to_string()))?,
            Err(e) => return Err(failed(sanitize_marked(&service_error(&e), ERROR_CHARS))),
        };
        let (tools, next) = parse_page(&raw)?;
        all.extend(tools);
        if all.len() > max_tools {
            let (count, max) = (all.len(), max_tools);
            return Err(CatalogError::TooManyTools { count, max }.into());
        }
        let Some(next) = next else {
            return Ok(all);
        };
        cursor = Some(next);
    }
    Err(failed("the server kept returning more pages".into()))
}

const SERVER_GONE: &str = "the MCP server closed the connection (it may have exited)";

/// A transport or protocol failure, worded for the model (not yet cleaned).
pub(super) fn service_error(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportClosed => SERVER_GONE.into(),
        ServiceError::McpError(data) => format!("{} (code {})", data.message, data.code.0),
        // The wrapper's text names rmcp's generic transport type; the inner error is the news.
        ServiceError::TransportSend(t) => format!("transport error: {}", t.error),
        other => without_type_names(&other.to_string()),
    }
}

/// rmcp's errors name its generic transport type ("Transport [rmcp::transport::worker::
/// WorkerTransport<...>] error: ..."), which tells a user nothing: the cause after it stays.
fn without_type_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once("Transport [") {
        let Some((_, cause)) = after.split_once("] error: ") else {
            break;
        };
        out.push_str(before);
        out.push_str("transport error: ");
        rest = cause;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::without_type_names;

    #[test]
    fn rmcps_transport_type_names_are_left_out_of_errors() {
        let text = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::x::Y<\
                    agentmaker::Z>>] error: unexpected server response: HTTP 307, when send initialize request";
        assert_eq!(
            without_type_names(text),
            "Send message error transport error: unexpected server response: HTTP 307, when send \
             initialize request"
        );
        assert_eq!(without_type_names("Transport [x"), "Transport [x");
    }
}
