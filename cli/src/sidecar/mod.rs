//! hookhost as a sidecar: an agent not written in Rust speaks JSON-RPC to
//! hookhost itself (`host.before_tool`, ..., `host.emit`, `host.stats`,
//! `host.reload`) and gets the merged verdicts, so it embeds hookhost
//! without linking it. `spec/sidecar.md` is the contract.
//!
//! [`serve`] runs one connection over any line stream, and
//! [`serve_websocket`] one WebSocket connection (one message per text
//! message), let in by origin, host and token ([`Access`]). Both feed
//! a `Session`: a task per request and one writer that
//! owns the output, so slow hooks never hold up other requests and nothing
//! but JSON-RPC reaches the output. Each returns at the end of input once
//! every request read has been answered.

mod access;
mod budget;
mod cap;
mod http;
mod lines;
mod metrics;
#[cfg(feature = "ui")]
mod observer;
mod rfc6455;
mod routes;
mod session;
#[cfg(feature = "ui")]
mod ui;
mod websocket;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::meta::Meta;
use hookhost_protocol::sidecar::{EmitParams, ReloadResult, StatsResult};
use hookhost_protocol::{ErrorObject, LifecycleEvent, LifecycleParams, Stage, error_code};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use access::Access;
pub use budget::GLOBAL_BYTES;
use budget::Pool;
pub(crate) use cap::{ConnectionCap, Ticket};
pub use lines::serve;
pub use websocket::{Reader, Writer, WsError, WsOptions, serve_websocket};

use hookhost::{Host, Identity};

/// Serves plain HTTP on one Unix-socket connection (the daemon's socket:
/// `hookhost relay` and `hookhost status`), until the peer closes it.
/// Whoever reaches the socket is let in: its folder's mode and the
/// caller's peer check are its access check.
pub async fn serve_plain(sidecar: &Sidecar, stream: tokio::net::UnixStream) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut read = tokio::io::BufReader::with_capacity(16 * 1024, read);
    http::serve(sidecar, &mut read, &mut write, None, None).await
}

/// The longest request (line or WebSocket message) accepted; a longer one
/// is answered -32600 and skipped.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Requests served at once; past this the sidecar stops reading until one
/// is answered, so an agent that floods requests (or stops reading its
/// answers) meets backpressure instead of growing hookhost's memory.
pub const MAX_IN_FLIGHT: usize = 1024;

/// How long a new WebSocket connection may take to send its upgrade
/// request; one that sends nothing does not hold a session open.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a WebSocket connection may send nothing, with nothing in
/// flight, before it is closed (1001), so idle connections cannot keep
/// agents out for ever.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// WebSocket connections served at once by `hookhost serve --listen`, at
/// most; `serve` lowers it to what the descriptor limit leaves room for.
/// One more is closed at once (and logged).
pub const MAX_CONNECTIONS: usize = 1024;

/// Connections past the access check one peer may hold at once; every
/// loopback address counts as one peer ([`ConnectionCap`]).
pub const MAX_CONNECTIONS_PER_PEER: usize = 256;

/// Server error: the request was not read because [`GLOBAL_BYTES`] are in
/// flight across sessions; sending it again later may succeed.
pub const BUSY: i64 = -32001;

/// Server error: `host.reload` found the config invalid (hooks unchanged).
pub const RELOAD_FAILED: i64 = -32000;

/// What `host.reload` re-reads.
#[derive(Debug, Clone)]
pub enum ReloadFrom {
    /// The config file the sidecar was started with, through the same
    /// loader (strict keys, preflight, builtins).
    File(PathBuf),
}

/// The sidecar's view of the world: the host and where reloads come from.
pub struct Sidecar {
    host: Host,
    reload_from: ReloadFrom,
    loader: fn(&std::path::Path) -> Result<hookhost::Config, String>,
    /// Bytes in flight across every session ([`GLOBAL_BYTES`]).
    bytes: Pool,
    /// Agents' events answered over HTTP and the socket, for `status`.
    agents: routes::AgentCounts,
    /// What `GET /metrics` shows; its observer is registered with `host`.
    metrics: metrics::Metrics,
    /// The console (`GET /ui`): its sessions and what it shows live.
    #[cfg(feature = "ui")]
    ui: ui::Ui,
    /// The files the config in force was read from (`Config::sources`),
    /// renewed by every reload whatever asked for it, for the daemon's
    /// watch.
    sources: std::sync::Mutex<Vec<PathBuf>>,
    started: std::time::SystemTime,
    /// The signed policy's part of `GET /status`, when one is served
    /// (`serve --policy` sets it; the sidecar knows nothing of bundles).
    policy_status: std::sync::OnceLock<fn() -> Value>,
}

impl Sidecar {
    /// Serves `host`; `loader` reads the config for `host.reload` (the CLI
    /// passes the one that also checks builtins); `sources` are the files
    /// the config in force was read from.
    pub fn new(
        host: Host,
        reload_from: ReloadFrom,
        loader: fn(&std::path::Path) -> Result<hookhost::Config, String>,
        sources: Vec<PathBuf>,
    ) -> Arc<Sidecar> {
        let (metrics, counts) = metrics::Metrics::new(&host);
        #[cfg(feature = "ui")]
        let ui = ui::Ui::new();
        #[cfg(feature = "ui")]
        let counts = observer::Fanout::of(vec![counts, ui.observer()]);
        host.set_observer(counts);
        Arc::new(Sidecar {
            host,
            metrics,
            #[cfg(feature = "ui")]
            ui,
            reload_from,
            loader,
            bytes: Pool::new(GLOBAL_BYTES),
            agents: routes::AgentCounts::default(),
            sources: std::sync::Mutex::new(sources),
            started: std::time::SystemTime::now(),
            policy_status: std::sync::OnceLock::new(),
        })
    }

    /// Shows what `status` gives in `GET /status` as `policy`.
    pub fn report_policy(&self, status: fn() -> Value) {
        let _ = self.policy_status.set(status);
    }

    /// Says the sidecar is served behind TLS (the console's cookie is
    /// then `Secure`).
    pub fn behind_tls(&self) {
        #[cfg(feature = "ui")]
        self.ui.behind_tls();
    }

    /// The host it serves.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The files the config in force was read from.
    pub fn sources(&self) -> Vec<PathBuf> {
        self.sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The config file the sidecar serves.
    pub fn config_path(&self) -> &std::path::Path {
        let ReloadFrom::File(path) = &self.reload_from;
        path
    }

    /// Re-reads the config and applies it; the report or why not.
    pub async fn reload(&self) -> Result<Value, ErrorObject> {
        let ReloadFrom::File(path) = &self.reload_from;
        let config = (self.loader)(path).map_err(|e| ErrorObject::new(RELOAD_FAILED, e))?;
        *self.sources.lock().unwrap_or_else(|p| p.into_inner()) = config.sources.clone();
        let report = self.host.reload(config).await;
        wire(&ReloadResult {
            unchanged: report.unchanged,
            changed: report.changed,
            removed: report.removed,
        })
    }

    /// Answers one request from `caller`, whom a gateway's credential
    /// names: its identity is stamped on the call over what the call
    /// claims, and `host.reload` is refused (a gateway's policy is the
    /// admin's file or bundle, not any caller's to reload).
    pub async fn call_as(
        &self,
        method: &str,
        mut params: Value,
        caller: Option<&Identity>,
    ) -> Result<Value, ErrorObject> {
        let Some(caller) = caller else {
            return self.call(method, params).await;
        };
        match method {
            "host.reload" => Err(ErrorObject::new(
                error_code::INVALID_REQUEST,
                "host.reload is not offered to a gateway's callers: the gateway reloads its own \
                 config and policy",
            )),
            "host.stats" => self.call(method, params).await,
            _ => {
                caller.stamp(&mut params);
                self.call(method, params).await
            }
        }
    }

    /// Answers one request.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let stage = match method {
            "host.before_tool" => Stage::BeforeTool,
            "host.after_tool" => Stage::AfterTool,
            "host.before_llm" => Stage::BeforeLlm,
            "host.after_llm" => Stage::AfterLlm,
            "host.approve_tool" => Stage::ApproveTool,
            "host.lifecycle" => return self.lifecycle(params).await,
            "host.stats" => {
                no_params(&params)?;
                return wire(&StatsResult {
                    hooks: self.host.stats(),
                });
            }
            "host.reload" => {
                no_params(&params)?;
                return self.reload().await;
            }
            "host.emit" => {
                return Err(ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    "host.emit is a notification: send it without an id",
                ));
            }
            other => {
                return Err(ErrorObject::new(
                    error_code::METHOD_NOT_FOUND,
                    format!("no method {other:?}"),
                ));
            }
        };
        let outcome = self
            .host
            .run_stage(stage, params)
            .await
            .map_err(|e| ErrorObject::new(error_code::INVALID_PARAMS, e.to_string()))?;
        Ok(outcome.to_wire(stage))
    }

    /// A request event runs the chain (a stop's blocks counted per
    /// session); any other named event, or an agent's own snake_case
    /// event, is emitted and runs the command hooks that list it.
    async fn lifecycle(&self, params: Value) -> Result<Value, ErrorObject> {
        let invalid = |e: String| {
            ErrorObject::new(
                error_code::INVALID_PARAMS,
                format!("invalid lifecycle params: {e}"),
            )
        };
        let named = params.get("event").and_then(Value::as_str);
        if let Some(name) = named.filter(|n| n.parse::<LifecycleEvent>().is_err()) {
            let p = NamedParams::deserialize(&params).map_err(|e| invalid(e.to_string()))?;
            self.host
                .lifecycle_named(name, p.meta, p.payload)
                .await
                .map_err(|e| invalid(e.to_string()))?;
            return Ok(json!({"action": "continue"}));
        }
        let p = LifecycleParams::deserialize(&params).map_err(|e| invalid(e.to_string()))?;
        if p.event.is_request() {
            let outcome = self
                .host
                .run_stage(Stage::Lifecycle, params)
                .await
                .map_err(|e| ErrorObject::new(error_code::INVALID_PARAMS, e.to_string()))?;
            return Ok(outcome.to_wire(Stage::Lifecycle));
        }
        self.host.lifecycle_with(p).await;
        Ok(json!({"action": "continue"}))
    }

    /// `host.emit` from `caller`: its identity replaces the event's
    /// `scope` keys it names.
    fn emit_as(&self, mut params: Value, caller: Option<&Identity>) -> Result<(), String> {
        if let (Some(caller), Value::Object(p)) = (caller, &mut params) {
            caller.stamp_meta(p.entry("scope").or_insert(Value::Null));
        }
        self.emit(params)
    }

    /// `host.emit`: `id` and `time` may be left out; the host fills them.
    fn emit(&self, params: Value) -> Result<(), String> {
        let p = EmitParams::deserialize(&params).map_err(|e| e.to_string())?;
        let event = p.into_event(
            || self.host.next_event_id(),
            || hookhost::protocol::time::rfc3339(std::time::SystemTime::now()),
        );
        self.host.emit(event);
        Ok(())
    }
}

fn wire<T: Serialize>(value: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(value)
        .map_err(|e| ErrorObject::new(error_code::INTERNAL_ERROR, e.to_string()))
}

fn no_params(params: &Value) -> Result<(), ErrorObject> {
    match params {
        Value::Null => Ok(()),
        Value::Object(m) if m.is_empty() => Ok(()),
        _ => Err(ErrorObject::new(
            error_code::INVALID_PARAMS,
            "this method takes no params",
        )),
    }
}

/// The params of an agent's own lifecycle event: its name is read apart,
/// since it is none of the protocol's events.
#[derive(Deserialize)]
struct NamedParams {
    #[serde(default)]
    meta: Meta,
    #[serde(default)]
    payload: Map<String, Value>,
}
