//! The [`Connector`] for hooks that run as network services
//! (`[hooks.remotes.NAME]`), reached through jsonrpsee's WebSocket and HTTP
//! clients with the same protocol and the same hello as a process
//! (spec/protocol.md section 2.2). A WebSocket link is lost when the
//! connection drops; an HTTP one when a request fails in transport. Its
//! place in the chain is a chain member like any other hook's, so
//! priority, filters, deadlines, `on_error` and the breaker work
//! unchanged.

use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::ErrorObject;
use hookhost_protocol::stage::method;
use jsonrpsee::core::ClientError;
use jsonrpsee::core::client::ClientT;
use jsonrpsee::core::traits::ToRpcParams;
use jsonrpsee::http_client::{HttpClient, HttpClientBuilder};
use jsonrpsee::ws_client::{HeaderMap, HeaderValue, PingConfig, WsClient, WsClientBuilder};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, timeout_at};

use crate::config::{Defaults, RemoteConfig, RemoteTransport};
use crate::error::{CallError, StartError};
use crate::policy::deadline::Deadline;
use crate::supervise::events::Event;
use crate::supervise::handshake::{accept_hello, hello_params};
use crate::supervise::keep_alive::{Attempt, Connected, Connector, Terms, stopping};
use crate::supervise::peer::{Link, Peer, PeerKind};

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
pub(crate) enum Client {
    /// One WebSocket connection.
    Ws(Arc<WsClient>),
    /// An HTTP client (a connection pool; one POST per request).
    Http(HttpClient),
}

impl Client {
    /// Whether calls can go through (an HTTP client always can).
    pub(crate) fn is_connected(&self) -> bool {
        match self {
            Client::Ws(c) => c.is_connected(),
            Client::Http(_) => true,
        }
    }

    /// One request through whichever client this is.
    async fn request(&self, method: &str, params: Raw) -> Result<Value, ClientError> {
        match self {
            Client::Ws(c) => c.request(method, params).await,
            Client::Http(c) => c.request(method, params).await,
        }
    }
}

/// Sends one request through `client`, giving up at `deadline`. An HTTP
/// transport failure asks `peer`'s keep-alive task for a new hello.
pub(crate) async fn request(
    peer: &Peer,
    client: &Client,
    method: &str,
    params: &Value,
    deadline: Deadline,
) -> Result<Value, CallError> {
    let params = raw(params)?;
    deadline
        .bound(client.request(method, params))
        .await?
        .map_err(|e| {
            if matches!(client, Client::Http(_)) && is_transport(&e) {
                peer.relink();
            }
            call_error(e, deadline)
        })
}

/// Sends one runtime event's params as a notification (WebSocket only).
pub(crate) async fn notify(
    client: &Client,
    params: &str,
    deadline: Deadline,
) -> Result<(), CallError> {
    let Client::Ws(c) = client else {
        return Err(CallError::Unavailable("HTTP carries requests only".into()));
    };
    let params = RawValue::from_string(params.to_string())
        .map_err(|e| CallError::Protocol(format!("params did not encode: {e}")))?;
    deadline
        .bound(c.notification(method::RUNTIME_EVENT, Raw(params)))
        .await?
        .map_err(|e| call_error(e, deadline))
}

/// Connects one remote hook, again after each loss.
pub(crate) struct RemoteConnector {
    config: RemoteConfig,
    transport: RemoteTransport,
}

/// A new remote peer (state Starting), its event queue's receiver, and
/// its connector. Fails only on a URL scheme that config loading would
/// have refused.
pub(crate) fn peer(
    name: &str,
    config: RemoteConfig,
    defaults: Defaults,
) -> Result<(Arc<Peer>, mpsc::Receiver<Event>, RemoteConnector), StartError> {
    let transport = config
        .transport()
        .map_err(|e| StartError::Settings(e.to_string()))?;
    let observe = match transport {
        RemoteTransport::WebSocket => config.observe_patterns(),
        RemoteTransport::Http => Vec::new(),
    };
    let url = crate::observe::redact::display_url(&config.url).into_owned();
    let (peer, events) = Peer::new(name, PeerKind::Remote { url }, observe, defaults);
    Ok((peer, events, RemoteConnector { config, transport }))
}

impl RemoteConnector {
    /// Whether it takes runtime events (WebSocket only).
    pub(crate) fn takes_events(&self) -> bool {
        self.transport == RemoteTransport::WebSocket
    }

    fn shown_url(&self) -> String {
        crate::observe::redact::display_url(&self.config.url).into_owned()
    }

    /// A connect failure: the URL shown without its password, and the
    /// client's error redacted (it may quote a URL, such as a redirect's
    /// location).
    fn failed(&self, what: &'static str, e: impl std::fmt::Display) -> StartError {
        StartError::Connect {
            what,
            url: self.shown_url(),
            reason: crate::observe::redact::redact(&e.to_string()).into_owned(),
        }
    }

    fn connect_timeout(&self, d: &Defaults) -> Duration {
        Duration::from_millis(self.config.connect_timeout_ms.unwrap_or(d.hello_timeout_ms))
    }

    /// The configured headers, `${env:NAME}` read now so that a rotated
    /// token is picked up on reconnect; marked sensitive so that no debug
    /// output of jsonrpsee or hyper prints them.
    fn headers(&self) -> Result<HeaderMap, StartError> {
        let mut map = HeaderMap::new();
        let resolved = self
            .config
            .resolved_headers(|n| std::env::var(n).ok())
            .map_err(|e| StartError::Settings(e.to_string()))?;
        for (name, value) in resolved {
            let bad =
                |e: &dyn std::fmt::Display| StartError::Settings(format!("header `{name}`: {e}"));
            let key = http::HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?;
            let mut value = HeaderValue::from_str(&value)
                .map_err(|e| bad(&format_args!("invalid value: {e}")))?;
            value.set_sensitive(true);
            map.insert(key, value);
        }
        Ok(map)
    }

    async fn connect_ws(&self, d: &Defaults) -> Result<Client, StartError> {
        let limits = Limits::of(&self.config, d);
        let client = WsClientBuilder::new()
            // One connection attempt, no redirect followed: jsonrpsee
            // counts attempts here, and would otherwise send the headers
            // (a bearer token) to wherever a 3xx points, `ws://` included.
            .max_redirections(1)
            .set_headers(self.headers()?)
            .max_request_size(limits.message)
            .max_response_size(limits.reply)
            .connection_timeout(self.connect_timeout(d))
            .request_timeout(limits.client_timeout)
            .max_concurrent_requests(MAX_QUEUED)
            .enable_ws_ping(
                PingConfig::new()
                    .ping_interval(PING_INTERVAL)
                    .inactive_limit(INACTIVE_LIMIT),
            )
            .build(&self.config.url)
            .await
            .map_err(|e| self.failed("cannot connect to", refused_redirect(e)))?;
        Ok(Client::Ws(Arc::new(client)))
    }

    fn connect_http(&self, d: &Defaults) -> Result<Client, StartError> {
        let limits = Limits::of(&self.config, d);
        let client = HttpClientBuilder::new()
            .set_headers(self.headers()?)
            .max_request_size(limits.message)
            .max_response_size(limits.reply)
            .connect_timeout(self.connect_timeout(d))
            .request_timeout(limits.client_timeout)
            .build(&self.config.url)
            .map_err(|e| self.failed("cannot use", e))?;
        Ok(Client::Http(client))
    }

    /// Connects (WebSocket) or builds the client (HTTP), then handshakes;
    /// the client and the agreed version.
    async fn dial(&self, peer: &Peer) -> Result<(Client, u32), StartError> {
        let begun = Instant::now();
        let d = &peer.defaults;
        let client = match self.transport {
            RemoteTransport::WebSocket => self.connect_ws(d).await?,
            RemoteTransport::Http => self.connect_http(d)?,
        };
        let params = hello_params(
            &peer.name,
            &self.config.intercept,
            !self.config.observe.is_empty(),
        )?;
        let budget = Duration::from_millis(d.hello_timeout_ms);
        let params = raw(&params).map_err(|e| StartError::Settings(e.to_string()))?;
        let until = begun + self.connect_timeout(d) + budget;
        let reply = match timeout_at(until, client.request(method::HELLO, params)).await {
            Err(_) => {
                return Err(StartError::HelloTimeout {
                    url: Some(self.shown_url()),
                    after: budget,
                });
            }
            Ok(Err(e)) => return Err(self.hello_failed(e)),
            Ok(Ok(v)) => v,
        };
        let (version, hello) = accept_hello(&reply)?;
        if self.transport == RemoteTransport::Http
            && hello.observe.as_ref().is_some_and(|o| !o.is_empty())
        {
            tracing::warn!(
                hook = %peer.name,
                "the hook declares `observe`, but HTTP carries requests only: it gets no runtime events (use ws:// for events)"
            );
        }
        peer.apply_hello(&hello);
        Ok((client, version))
    }

    fn hello_failed(&self, e: ClientError) -> StartError {
        StartError::HelloFailed {
            url: Some(self.shown_url()),
            reason: crate::observe::redact::redact(&e.to_string()).into_owned(),
        }
    }
}

impl Connector for RemoteConnector {
    type Live = Client;
    const TERMS: Terms = Terms {
        crash_limit: false,
        retry_at_once: true,
        reports: "reconnect reports",
        lost: "connection lost",
        retrying: "reconnecting",
    };

    async fn connect(
        &mut self,
        peer: &Peer,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Attempt<Client> {
        let dialed = tokio::select! {
            r = self.dial(peer) => r,
            _ = stopping(shutdown) => return Attempt::Stopping,
        };
        match dialed {
            Ok((client, version)) => Attempt::Up(Connected {
                link: Link::Remote(client.clone()),
                live: client,
                version,
            }),
            Err(e) => Attempt::Failed(e),
        }
    }

    async fn lost(&mut self, peer: &Peer, live: &mut Client) -> String {
        match live {
            Client::Ws(c) => c.on_disconnect().await.to_string(),
            Client::Http(_) => {
                peer.relink_asked().await;
                "a request failed in transport".into()
            }
        }
    }

    /// Dropping the last clone of a WebSocket client closes it and fails
    /// what is pending on it at once.
    async fn discard(&mut self, live: Client, _why: &str) {
        drop(live);
    }

    async fn stop(&mut self, peer: &Peer, live: Client) {
        if let Client::Ws(_) = live {
            let grace = Duration::from_millis(peer.defaults.shutdown_grace_ms);
            peer.events_forwarded(grace).await;
        }
        drop(live);
    }
}

/// The sizes and the backstop timeout a remote's clients are built with.
struct Limits {
    /// The longest request sent: `max_line_bytes`. A longer one fails at
    /// once, by the hook's policy.
    message: u32,
    /// The longest answer read: as for a process, room for an answer
    /// about as large as the longest request (a redaction of a large
    /// output), so a fail-open redactor is not failed by the size of its
    /// own answer.
    reply: u32,
    /// jsonrpsee's own request timeout is a backstop only: every call has
    /// the host's deadline already. It must outlast the longest of them.
    client_timeout: Duration,
}

impl Limits {
    fn of(config: &RemoteConfig, d: &Defaults) -> Limits {
        let max = d.max_line_bytes;
        let reply = crate::transport::connection::reply_cap(max, max);
        let longest = [
            d.approval_timeout_ms,
            d.interceptor_timeout_ms,
            d.observer_timeout_ms,
            d.hello_timeout_ms,
            config.timeout_ms.unwrap_or(0),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        Limits {
            message: u32::try_from(max).unwrap_or(u32::MAX),
            reply: u32::try_from(reply).unwrap_or(u32::MAX),
            client_timeout: Duration::from_millis(longest.saturating_add(1000)),
        }
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

fn call_error(e: ClientError, deadline: Deadline) -> CallError {
    match e {
        ClientError::Call(obj) => {
            let mut error = ErrorObject::new(obj.code().into(), obj.message());
            error.data = obj
                .data()
                .and_then(|d| serde_json::from_str::<Value>(d.get()).ok());
            CallError::Rpc(error)
        }
        ClientError::RequestTimeout => deadline.expired(),
        ClientError::ParseError(e) => CallError::Protocol(format!("invalid response: {e}")),
        other => CallError::Network(other.to_string()),
    }
}
