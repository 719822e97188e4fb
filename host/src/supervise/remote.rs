//! Hooks that run as network services (`[hooks.remotes.NAME]`), reached
//! through jsonrpsee's WebSocket and HTTP clients with the same protocol
//! and the same hello as a process (spec/protocol.md section 2.2).
//!
//! A [`RemoteHook`] is to a remote what a [`crate::supervise::hook::HookEntry`] is to
//! a process: its state (published by [`maintain`], the task that
//! connects, handshakes and reconnects with backoff), what its hello
//! declared, and its counters. Its place in the chain is a
//! [`crate::members::Member`] like any other hook's, so priority, filters,
//! deadlines, `on_error` and the breaker work unchanged.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use hookhost_protocol::stage::method;
use hookhost_protocol::{ErrorObject, Stage};
use jsonrpsee::core::ClientError;
use jsonrpsee::core::client::ClientT;
use jsonrpsee::core::traits::ToRpcParams;
use jsonrpsee::http_client::{HttpClient, HttpClientBuilder};
use jsonrpsee::ws_client::{HeaderMap, HeaderValue, PingConfig, WsClient, WsClientBuilder};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::time::{Instant, timeout_at};

use crate::config::{Defaults, RemoteConfig, RemoteTransport};
use crate::error::CallError;
use crate::observe::log_budget::LogBudget;
use crate::supervise::declaration::{Declaration, Effective};
use crate::supervise::hook::{Counters, Observer, events_forwarded, offer, wait_for_state};
use crate::supervise::supervisor::{STABLE_AFTER, accept_hello, backoff, hello_params, stopping};

/// How often an idle WebSocket is pinged, and how long without any frame
/// from the server before the connection counts as dead. A load balancer
/// or a half-open TCP connection can swallow a peer without a close; this
/// notices within a minute rather than at the next call's deadline.
const PING_INTERVAL: Duration = Duration::from_secs(15);
const INACTIVE_LIMIT: Duration = Duration::from_secs(45);

/// Requests that may wait for the connection's writer; past this, callers
/// wait (within their deadlines) instead of growing memory.
const MAX_QUEUED: usize = 1024;

/// A connected client, cheap to clone.
#[derive(Clone)]
pub enum Link {
    /// One WebSocket connection.
    Ws(Arc<WsClient>),
    /// An HTTP client (a connection pool; one POST per request).
    Http(HttpClient),
}

impl Link {
    /// One request through whichever client this is.
    async fn request(&self, method: &str, params: Raw) -> Result<Value, ClientError> {
        match self {
            Link::Ws(c) => c.request(method, params).await,
            Link::Http(c) => c.request(method, params).await,
        }
    }
}

/// Where a remote hook is in its life.
#[derive(Clone)]
pub enum RemoteState {
    /// Connecting or reconnecting; calls wait for it within their deadline.
    Connecting,
    /// Handshake done; calls go through.
    Ready(Link),
    /// The last attempt failed; calls fail at once (and the hook's policy
    /// decides) until a retry, with backoff, succeeds.
    Down(String),
    /// Shut down for good.
    Stopped,
}

/// One remote hook: how to reach it, its state, its declaration and its
/// counters.
pub struct RemoteHook {
    /// The configured name.
    pub name: Arc<str>,
    /// Its config section.
    pub config: RemoteConfig,
    /// WebSocket or HTTP.
    pub transport: RemoteTransport,
    /// Stage defaults and limits.
    pub defaults: Defaults,
    state: watch::Sender<RemoteState>,
    declaration: Declaration,
    /// In flight, reconnects (counted as restarts) and dropped events.
    pub counters: Counters,
    events: mpsc::Sender<Arc<RawValue>>,
    /// Set by the event forwarder once it has handed on (or counted as
    /// lost) what was emitted before shutdown; [`maintain`] keeps the
    /// connection open until then.
    events_done: watch::Sender<bool>,
    /// HTTP: a transport failure asks [`maintain`] for a new hello.
    rehello: Notify,
    version: AtomicU32,
    hello_us: AtomicU64,
}

impl RemoteHook {
    /// A new hook in state Connecting, with its event queue's receiver.
    /// Fails only on a URL scheme that config loading would have refused.
    pub(crate) fn new(
        name: &str,
        config: RemoteConfig,
        defaults: Defaults,
    ) -> Result<(Arc<RemoteHook>, mpsc::Receiver<Arc<RawValue>>), String> {
        let transport = config.transport().map_err(|e| e.to_string())?;
        let (events, rx) = mpsc::channel(defaults.event_queue);
        let observe = match transport {
            RemoteTransport::WebSocket => config.observe_patterns(),
            RemoteTransport::Http => Vec::new(),
        };
        let hook = Arc::new(RemoteHook {
            name: name.into(),
            declaration: Declaration::new(observe),
            config,
            transport,
            defaults,
            state: watch::channel(RemoteState::Connecting).0,
            counters: Counters::default(),
            events,
            events_done: watch::channel(false).0,
            rehello: Notify::new(),
            version: AtomicU32::new(0),
            hello_us: AtomicU64::new(0),
        });
        Ok((hook, rx))
    }

    /// Where it is in its life now.
    pub fn state(&self) -> RemoteState {
        self.state.borrow().clone()
    }

    /// The protocol version of the last handshake (0 before the first).
    pub fn version(&self) -> u32 {
        self.version.load(Ordering::Relaxed)
    }

    /// How long the last connect plus handshake took.
    pub fn hello_time(&self) -> Duration {
        Duration::from_micros(self.hello_us.load(Ordering::Relaxed))
    }

    /// What it is called for now.
    pub fn effective(&self) -> Effective {
        self.declaration.effective()
    }

    /// Whether its hello declared `stage` (true when it declared nothing).
    pub fn declares(&self, stage: Stage) -> bool {
        self.declaration.declares(stage)
    }

    /// Whether it wants events of `kind` (never, over HTTP).
    pub fn observes(&self, kind: &str) -> bool {
        self.declaration.observes(kind)
    }

    /// Waits until connected, at most until `deadline`.
    async fn ready(&self, deadline: Instant, budget: Duration) -> Result<Link, CallError> {
        wait_for_state(
            &self.state,
            deadline,
            budget,
            "its connector ended",
            |state| match state {
                RemoteState::Ready(Link::Ws(c)) if c.is_connected() => Some(Ok(Link::Ws(c))),
                RemoteState::Ready(Link::Http(c)) => Some(Ok(Link::Http(c))),
                RemoteState::Ready(_) | RemoteState::Connecting => None,
                RemoteState::Down(why) => Some(Err(CallError::Unavailable(why))),
                RemoteState::Stopped => Some(Err(CallError::Unavailable(
                    "the host is shutting down".into(),
                ))),
            },
        )
        .await
    }

    /// Sends one request once connected, waiting at most until `deadline`
    /// (`budget` is that wait's length, for the timeout message).
    pub async fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Instant,
        budget: Duration,
    ) -> Result<Value, CallError> {
        self.counters.in_flight.fetch_add(1, Ordering::Relaxed);
        let _done = Leave(&self.counters.in_flight);
        let link = self.ready(deadline, budget).await?;
        let params = raw(params)?;
        match timeout_at(deadline, link.request(method, params)).await {
            Err(_) => Err(CallError::Timeout(budget)),
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                if matches!(link, Link::Http(_)) && is_transport(&e) {
                    self.rehello.notify_one();
                }
                Err(call_error(e, budget))
            }
        }
    }

    /// Queues a runtime event's params without waiting; a full queue (or
    /// one closed by shutdown) drops it, counts it and says so.
    pub(crate) fn offer_event(&self, params: &Arc<RawValue>) {
        offer(self, &self.events, params.clone());
    }

    /// At shutdown, waits (at most the shutdown grace) until the event
    /// forwarder has handed on what was emitted before it, so that the
    /// connection closes after those events and not before them.
    async fn events_forwarded(&self) {
        if self.transport == RemoteTransport::WebSocket {
            let grace = Duration::from_millis(self.defaults.shutdown_grace_ms);
            events_forwarded(&self.events_done, grace).await;
        }
    }

    /// Its URL as it may be shown: without a password (see
    /// [`crate::observe::redact::display_url`]).
    pub fn shown_url(&self) -> std::borrow::Cow<'_, str> {
        crate::observe::redact::display_url(&self.config.url)
    }

    /// Why a step failed, for reasons, the audit and the log: the URL
    /// shown without its password, and the client's error redacted (it may
    /// quote a URL, such as a redirect's location).
    fn failed(&self, what: &str, e: impl std::fmt::Display) -> String {
        let e = e.to_string();
        format!(
            "{what} {}: {}",
            self.shown_url(),
            crate::observe::redact::redact(&e)
        )
    }

    fn connect_timeout(&self) -> Duration {
        Duration::from_millis(
            self.config
                .connect_timeout_ms
                .unwrap_or(self.defaults.hello_timeout_ms),
        )
    }

    /// The configured headers, `${env:NAME}` read now so that a rotated
    /// token is picked up on reconnect; marked sensitive so that no debug
    /// output of jsonrpsee or hyper prints them.
    fn headers(&self) -> Result<HeaderMap, String> {
        let mut map = HeaderMap::new();
        for (name, value) in self
            .config
            .resolved_headers(|n| std::env::var(n).ok())
            .map_err(|e| e.to_string())?
        {
            let key = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| format!("header `{name}`: {e}"))?;
            let mut value = HeaderValue::from_str(&value)
                .map_err(|e| format!("header `{name}`: invalid value: {e}"))?;
            value.set_sensitive(true);
            map.insert(key, value);
        }
        Ok(map)
    }

    /// The longest request sent: `max_line_bytes`. A longer one fails at
    /// once, by the hook's policy.
    fn max_message(&self) -> u32 {
        u32::try_from(self.defaults.max_line_bytes).unwrap_or(u32::MAX)
    }

    /// The longest answer read: as for a process, room for an answer about
    /// as large as the longest request (a redaction of a large output), so
    /// a fail-open redactor is not failed by the size of its own answer.
    fn max_reply(&self) -> u32 {
        let max = self.defaults.max_line_bytes;
        u32::try_from(crate::transport::connection::reply_cap(max, max)).unwrap_or(u32::MAX)
    }

    /// jsonrpsee's own request timeout is a backstop only: every call has
    /// the host's deadline already. It must outlast the longest of them.
    fn client_timeout(&self) -> Duration {
        let d = &self.defaults;
        let longest = [
            d.approval_timeout_ms,
            d.interceptor_timeout_ms,
            d.observer_timeout_ms,
            d.hello_timeout_ms,
            self.config.timeout_ms.unwrap_or(0),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        Duration::from_millis(longest.saturating_add(1000))
    }

    async fn connect_ws(&self) -> Result<Link, String> {
        let client = WsClientBuilder::new()
            // One connection attempt, no redirect followed: jsonrpsee
            // counts attempts here, and would otherwise send the headers
            // (a bearer token) to wherever a 3xx points, `ws://` included.
            .max_redirections(1)
            .set_headers(self.headers()?)
            .max_request_size(self.max_message())
            .max_response_size(self.max_reply())
            .connection_timeout(self.connect_timeout())
            .request_timeout(self.client_timeout())
            .max_concurrent_requests(MAX_QUEUED)
            .enable_ws_ping(
                PingConfig::new()
                    .ping_interval(PING_INTERVAL)
                    .inactive_limit(INACTIVE_LIMIT),
            )
            .build(&self.config.url)
            .await
            .map_err(|e| self.failed("cannot connect to", refused_redirect(e)))?;
        Ok(Link::Ws(Arc::new(client)))
    }

    fn connect_http(&self) -> Result<Link, String> {
        let client = HttpClientBuilder::new()
            .set_headers(self.headers()?)
            .max_request_size(self.max_message())
            .max_response_size(self.max_reply())
            .connect_timeout(self.connect_timeout())
            .request_timeout(self.client_timeout())
            .build(&self.config.url)
            .map_err(|e| self.failed("cannot use", e))?;
        Ok(Link::Http(client))
    }

    /// Connects (WebSocket) or builds the client (HTTP), then handshakes.
    async fn connect(&self) -> Result<Link, String> {
        let begun = Instant::now();
        let link = match self.transport {
            RemoteTransport::WebSocket => self.connect_ws().await?,
            RemoteTransport::Http => self.connect_http()?,
        };
        let params = hello_params(
            &self.name,
            &self.config.intercept,
            !self.config.observe.is_empty(),
        )?;
        let budget = Duration::from_millis(self.defaults.hello_timeout_ms);
        let params = raw(&params).map_err(|e| e.to_string())?;
        let reply = timeout_at(
            begun + self.connect_timeout() + budget,
            link.request(method::HELLO, params),
        )
        .await;
        let reply = match reply {
            Err(_) => {
                return Err(format!(
                    "no answer to hook.hello from {} within {} ms",
                    self.shown_url(),
                    budget.as_millis()
                ));
            }
            Ok(Err(e)) => return Err(self.failed("hook.hello failed at", e)),
            Ok(Ok(v)) => v,
        };
        let (version, hello) = accept_hello(&reply)?;
        if self.transport == RemoteTransport::Http
            && hello.observe.as_ref().is_some_and(|o| !o.is_empty())
        {
            tracing::warn!(
                hook = %self.name,
                "the hook declares `observe`, but HTTP carries requests only: it gets no runtime events (use ws:// for events)"
            );
        }
        self.declaration.apply_hello(&hello);
        self.version.store(version, Ordering::Relaxed);
        self.hello_us
            .store(begun.elapsed().as_micros() as u64, Ordering::Relaxed);
        Ok(link)
    }
}

/// Takes one off the in-flight count when dropped, even when the caller's
/// future is dropped mid-way.
struct Leave<'a>(&'a AtomicU64);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Params already encoded, handed to jsonrpsee as they are.
struct Raw(Box<RawValue>);

impl ToRpcParams for Raw {
    fn to_rpc_params(self) -> Result<Option<Box<RawValue>>, serde_json::Error> {
        Ok(Some(self.0))
    }
}

fn raw(params: &Value) -> Result<Raw, CallError> {
    serde_json::value::to_raw_value(params)
        .map(Raw)
        .map_err(|e| CallError::Protocol(format!("params did not encode: {e}")))
}

/// The connect error, said plainly when it is a redirect not followed:
/// after its one attempt, jsonrpsee's ws client reports a redirect as "no
/// IP address found" for the redirect's host.
fn refused_redirect(e: ClientError) -> String {
    use jsonrpsee_client_transport::ws::WsHandshakeError;
    if let ClientError::Transport(inner) = &e
        && let Some(WsHandshakeError::NoAddressFound(_) | WsHandshakeError::Redirected { .. }) =
            inner.downcast_ref::<WsHandshakeError>()
    {
        return "the server answered the upgrade with a redirect, which hookhost does not follow \
                (or the host name resolved to no address)"
            .into();
    }
    e.to_string()
}

/// Whether the connection, not the hook's answer, failed.
fn is_transport(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::Transport(_) | ClientError::RestartNeeded(_) | ClientError::ServiceDisconnect
    )
}

fn call_error(e: ClientError, budget: Duration) -> CallError {
    match e {
        ClientError::Call(obj) => {
            let mut error = ErrorObject::new(obj.code().into(), obj.message());
            error.data = obj
                .data()
                .and_then(|d| serde_json::from_str::<Value>(d.get()).ok());
            CallError::Rpc(error)
        }
        ClientError::RequestTimeout => CallError::Timeout(budget),
        ClientError::ParseError(e) => CallError::Protocol(format!("invalid response: {e}")),
        other => CallError::Network(other.to_string()),
    }
}

/// Keeps one remote connected until shutdown: connect and handshake,
/// publish Ready, wait for the connection to drop (WebSocket) or for a
/// transport failure (HTTP), then again with backoff. `first` gets the
/// outcome of the first attempt.
pub(crate) async fn maintain(
    hook: Arc<RemoteHook>,
    mut shutdown: watch::Receiver<bool>,
    first: oneshot::Sender<Result<(), String>>,
) {
    let mut first = Some(first);
    let mut attempt: u32 = 0;
    let max = Duration::from_millis(hook.defaults.restart_backoff_max_ms);
    // A flapping server must not flood the log: a budget, as for restarts.
    let reports = LogBudget::about("reconnect reports");
    loop {
        let connected = tokio::select! {
            r = hook.connect() => r,
            _ = stopping(&mut shutdown) => break,
        };
        match connected {
            Ok(link) => {
                tracing::info!(
                    hook = %hook.name,
                    url = %hook.shown_url(),
                    hello_ms = hook.hello_time().as_millis() as u64,
                    "remote hook ready"
                );
                hook.state.send_replace(RemoteState::Ready(link.clone()));
                if let Some(tx) = first.take() {
                    let _ = tx.send(Ok(()));
                }
                let up_since = Instant::now();
                let lost = match &link {
                    Link::Ws(c) => tokio::select! {
                        e = c.on_disconnect() => Some(e.to_string()),
                        _ = stopping(&mut shutdown) => {
                            hook.events_forwarded().await;
                            None
                        }
                    },
                    Link::Http(_) => tokio::select! {
                        _ = hook.rehello.notified() => Some("a request failed in transport".into()),
                        _ = stopping(&mut shutdown) => None,
                    },
                };
                // Dropping the last clone of a WebSocket client closes it
                // and fails what is pending on it at once.
                drop(link);
                let Some(why) = lost else { break };
                if up_since.elapsed() >= STABLE_AFTER {
                    attempt = 0;
                }
                hook.counters.restarts.fetch_add(1, Ordering::Relaxed);
                reports.warn(
                    &hook.name,
                    format_args!("connection lost ({why}); reconnecting"),
                );
                hook.state.send_replace(RemoteState::Connecting);
                // The first reconnect is immediate; a server that is back
                // (or a balancer with another instance) costs no wait.
                if attempt == 0 {
                    attempt = 1;
                    continue;
                }
            }
            Err(why) => {
                if first.is_some() {
                    tracing::error!(hook = %hook.name, "remote hook did not come up: {why}");
                } else {
                    reports.warn(&hook.name, format_args!("reconnect failed: {why}"));
                }
                hook.state.send_replace(RemoteState::Down(why.clone()));
                if let Some(tx) = first.take() {
                    let _ = tx.send(Err(why));
                }
            }
        }
        let delay = backoff(attempt, max);
        attempt = attempt.saturating_add(1);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stopping(&mut shutdown) => break,
        }
    }
    reports.report_held_back(&hook.name);
    hook.state.send_replace(RemoteState::Stopped);
}

/// The event forwarder of a WebSocket remote (see
/// [`crate::supervise::hook::forward_events`]).
pub(crate) use crate::supervise::hook::forward_events;

impl Observer for RemoteHook {
    type Event = Arc<RawValue>;

    async fn deliver(
        &self,
        params: Arc<RawValue>,
        deadline: Instant,
        budget: Duration,
    ) -> Result<(), CallError> {
        let Link::Ws(c) = self.ready(deadline, budget).await? else {
            return Err(CallError::Unavailable("HTTP carries requests only".into()));
        };
        let params = Raw(params.as_ref().to_owned());
        match timeout_at(deadline, c.notification(method::RUNTIME_EVENT, params)).await {
            Ok(r) => r.map_err(|e| call_error(e, budget)),
            Err(_) => Err(CallError::Timeout(budget)),
        }
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn observer_timeout(&self) -> Duration {
        Duration::from_millis(self.defaults.observer_timeout_ms)
    }

    fn events_done(&self) -> &watch::Sender<bool> {
        &self.events_done
    }
}
