//! One remote tool of an MCP server: a [`NativeTool`] whose calls go through rmcp's session.

use super::bounded::UNREAD_KEY;
use super::catalog::CatalogEntry;
use super::client::{bounded, secs, service_error, ClientConfig, Session, ERROR_CHARS};
use super::result::convert_result;
use super::sanitize::sanitize_marked;
use super::MessageKey;
use crate::prompts::Prompts;
use crate::registry::check_args_with;
use crate::response::ToolResponse;
use crate::tool::{NativeTool, ToolSpec};
use crate::validation::SchemaValidator;
use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// One remote tool, callable while its session is open.
pub struct McpTool {
    spec: ToolSpec,
    remote_name: String,
    fingerprint: String,
    origin: String,
    session: Arc<Session>,
    /// The client's current session (see [`McpTool::no_session`]); weak, so that a tool kept
    /// after its client is dropped does not keep that client's later session (and server) alive.
    client: Weak<Mutex<Option<Arc<Session>>>>,
    config: Arc<ClientConfig>,
    /// Compiled on the first direct call (`run`/`arun`); a registry validates with its own.
    validator: OnceLock<Result<SchemaValidator, String>>,
}

impl McpTool {
    pub(super) fn new(
        e: CatalogEntry,
        config: &Arc<ClientConfig>,
        session: Arc<Session>,
        client: Weak<Mutex<Option<Arc<Session>>>>,
    ) -> McpTool {
        let mut spec = ToolSpec::new(e.display_name, e.description, Vec::new());
        spec.input_schema = Some(e.input_schema);
        spec.requires_confirmation = config.requires_confirmation;
        spec.external_content = true;
        // Calls on one connection are independent requests; concurrency is the server's call.
        spec.supports_parallel = true;
        McpTool {
            spec,
            remote_name: e.remote_name,
            fingerprint: e.fingerprint,
            origin: format!("mcp:{}", config.namespace),
            session,
            client,
            config: config.clone(),
            validator: OnceLock::new(),
        }
    }

    /// Why a call cannot be made once this tool's session is closed: the client is closed, or
    /// it was opened again since and this tool belongs to the session before (its tools must
    /// be loaded again: the server may have changed them, and their pins were checked then).
    fn no_session(&self) -> ToolResponse {
        let prompts = &self.config.prompts;
        if self.session.is_foreign() {
            // Before any lock: one a parent's thread held at the fork stays held here.
            return ToolResponse::error(prompts.fmt(MessageKey::FORKED, &[]));
        }
        let reopened = self.client.upgrade().is_some_and(|client| {
            client.lock().ok().is_some_and(|current| {
                current
                    .as_ref()
                    .is_some_and(|s| !Arc::ptr_eq(s, &self.session) && !s.is_closed())
            })
        });
        let key = if reopened {
            MessageKey::STALE_SESSION
        } else {
            MessageKey::NO_SESSION
        };
        ToolResponse::error(prompts.fmt(key, &[]))
    }

    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// `mcp:{namespace}`, set by us, never by the server.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Calls the remote tool and hands the response to `done`, exactly once, on whichever
    /// thread settles the call (possibly this one, at once). Never fails: problems become
    /// error responses. The call runs through rmcp's session as a task on the session's
    /// runtime. The returned handle cancels the call; dropping it does not.
    pub fn call_then<F>(&self, args: Value, done: F) -> CallHandle
    where
        F: FnOnce(ToolResponse) + Send + 'static,
    {
        let config = &self.config;
        let prompts = &config.prompts;
        if self.session.is_closed() {
            done(self.no_session());
            return CallHandle(None);
        }
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Default::default(),
            other => {
                let err = format!("arguments must be a JSON object, got {other}");
                done(failed(prompts, &err, 200));
                return CallHandle(None);
            }
        };
        let (config, name) = (config.clone(), self.remote_name.clone());
        let fut = call_remote(self.session.clone(), config.clone(), name, arguments);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        self.session.runtime.spawn(async move {
            done(tokio::select! {
                response = fut => response,
                // Dropping rmcp's call future sends `notifications/cancelled`.
                Ok(()) = stopped => {
                    let err = "the call was cancelled before the server answered";
                    failed(&config.prompts, err, ERROR_CHARS)
                }
            })
        });
        CallHandle(Some(stop))
    }
}

/// Cancels a call made with [`McpTool::call_then`]: its `done` then gets a "cancelled" error
/// response (unless the call had already ended) and the server is told with
/// `notifications/cancelled`, so it can stop the work. Dropping the handle does nothing.
/// Empty when the call settled before anything was sent.
pub struct CallHandle(Option<tokio::sync::oneshot::Sender<()>>);

impl CallHandle {
    pub fn cancel(self) {
        if let Some(stop) = self.0 {
            let _ = stop.send(());
        }
    }
}

/// A call through rmcp's session, worded for the model.
async fn call_remote(
    session: Arc<Session>,
    config: Arc<ClientConfig>,
    name: String,
    arguments: serde_json::Map<String, Value>,
) -> ToolResponse {
    let prompts = &config.prompts;
    let params = CallToolRequestParams::new(name).with_arguments(arguments);
    // Boxed: rmcp's call future is about 5 KB, and it would be stored twice in this one.
    let call = Box::pin(session.peer.call_tool(params));
    match bounded(config.timeout, call).await {
        Some(Ok(mut result)) => {
            // Structured content of too many values, left out unread by
            // `bounded::bounded_message`: `data` says `{"truncated": true}`.
            let marker = serde_json::json!({UNREAD_KEY: true});
            let unread = result
                .structured_content
                .take_if(|s| *s == marker)
                .is_some();
            let mut resp = convert_result(&result, config.max_result_chars, prompts);
            if unread {
                resp.data = Some(serde_json::json!({"truncated": true}));
            }
            resp
        }
        Some(Err(_)) if session.is_closed() => {
            ToolResponse::error(prompts.get(MessageKey::NO_SESSION))
        }
        Some(Err(e)) => failed(prompts, &service_error(&e), ERROR_CHARS),
        None => {
            let timeout = secs(config.timeout);
            ToolResponse::error(prompts.fmt(MessageKey::TIMEOUT, &[("timeout", &timeout)]))
        }
    }
}

/// The `tool.msg.mcp.failed` error, `err` (raw) cleaned and cut to `limit` characters.
fn failed(prompts: &Prompts, err: &str, limit: usize) -> ToolResponse {
    let err = sanitize_marked(err, limit);
    ToolResponse::error(prompts.fmt(MessageKey::FAILED, &[("err", &err)]))
}

impl NativeTool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Waits for the call on this thread (not a tokio worker: the binding calls this with the
    /// GIL released from a plain thread).
    fn call(&self, args: &Value) -> ToolResponse {
        let response = self.call_interruptible(args, &mut || false);
        response.unwrap_or_else(|| self.no_session())
    }

    /// Asks `interrupted` every 50 ms while it waits; when that returns true the call is
    /// cancelled (the server is told) and `None` returned.
    fn call_interruptible(
        &self,
        args: &Value,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Option<ToolResponse> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let handle = self.call_then(args.clone(), move |resp| {
            let _ = tx.send(resp);
        });
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(resp) => return Some(resp),
                Err(RecvTimeoutError::Disconnected) => return Some(self.no_session()),
                Err(RecvTimeoutError::Timeout) if interrupted() => {
                    handle.cancel();
                    return None;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    fn awaitable(&self) -> bool {
        true
    }

    /// A direct call is validated against the (prepared) input schema like a registry call,
    /// so invalid arguments never reach the server.
    fn check_direct_args(&self, mut args: Value) -> Result<Value, String> {
        if self.session.is_closed() {
            // Nothing can be sent: the call answers that the session is closed, whatever the
            // arguments (the same answer as before validation ran here).
            return Ok(args);
        }
        let schema = self
            .spec
            .input_schema
            .as_ref()
            .expect("set in McpTool::new");
        let validator = self
            .validator
            .get_or_init(|| SchemaValidator::compile(schema))
            .as_ref()
            .map_err(|reason| {
                format!(
                    "Error: tool '{}' has an input schema that cannot be compiled: {reason}",
                    self.spec.name
                )
            })?;
        check_args_with(&self.spec.name, schema, validator, &mut args)?;
        Ok(args)
    }
}
