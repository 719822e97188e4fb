//! hookhost as a sidecar: an agent not written in Rust speaks JSON-RPC to
//! hookhost itself (`host.before_tool`, ..., `host.emit`, `host.stats`,
//! `host.reload`) and gets the merged verdicts, so it embeds hookhost
//! without linking it. `spec/sidecar.md` is the contract.
//!
//! [`serve`] runs one connection over any line stream, and
//! [`serve_websocket`] one WebSocket connection (one message per text
//! frame). Both feed a `Session`: a task per request and one writer that
//! owns the output, so slow hooks never hold up other requests and nothing
//! but JSON-RPC reaches the output. Each returns at the end of input once
//! every request read has been answered.

use std::path::PathBuf;
use std::sync::Arc;

use hookhost_protocol::envelope::{DecodeError, Message, Response};
use hookhost_protocol::sidecar::{EmitParams, ReloadResult, StatsResult};
use hookhost_protocol::{ErrorObject, Id, LifecycleParams, Stage, error_code};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::compat::TokioAsyncReadCompatExt;

use crate::host::Host;
use crate::line_reader::{Line, LineReader};

/// The longest request (line or WebSocket message) accepted; a longer one
/// is answered -32600.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Requests served at once; past this the sidecar stops reading until one
/// is answered, so an agent that floods requests (or stops reading its
/// answers) meets backpressure instead of growing hookhost's memory.
pub const MAX_IN_FLIGHT: usize = 1024;

/// How long a new WebSocket connection may take to send its upgrade
/// request; one that sends nothing does not hold a session open.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// WebSocket connections served at once by `hookhost serve --listen`; one
/// more is closed at once (and logged), so a connection flood cannot grow
/// hookhost's memory without bound.
pub const MAX_CONNECTIONS: usize = 1024;

/// Server error: `host.reload` found the config invalid (hooks unchanged).
pub const RELOAD_FAILED: i64 = -32000;

/// What `host.reload` re-reads.
#[derive(Debug, Clone)]
pub enum ReloadFrom {
    /// The config file the sidecar was started with, through the same
    /// loader (strict keys, preflight, builtins).
    File(PathBuf),
    /// Nothing: `host.reload` is an error (an embedder serving a config it
    /// built in code).
    Nowhere,
}

/// The sidecar's view of the world: the host and where reloads come from.
pub struct Sidecar {
    host: Host,
    reload_from: ReloadFrom,
    loader: fn(&std::path::Path) -> Result<crate::Config, String>,
}

impl Sidecar {
    /// Serves `host`; `loader` reads the config for `host.reload` (the CLI
    /// passes the one that also checks builtins).
    pub fn new(
        host: Host,
        reload_from: ReloadFrom,
        loader: fn(&std::path::Path) -> Result<crate::Config, String>,
    ) -> Arc<Sidecar> {
        Arc::new(Sidecar {
            host,
            reload_from,
            loader,
        })
    }

    /// Re-reads the config and applies it; the report or why not.
    pub async fn reload(&self) -> Result<Value, ErrorObject> {
        let ReloadFrom::File(path) = &self.reload_from else {
            return Err(ErrorObject::new(
                RELOAD_FAILED,
                "this sidecar was not started from a config file",
            ));
        };
        let config = (self.loader)(path).map_err(|e| ErrorObject::new(RELOAD_FAILED, e))?;
        let report = self.host.reload(config).await;
        wire(&ReloadResult {
            unchanged: report.unchanged,
            changed: report.changed,
            removed: report.removed,
        })
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

    /// A request event runs the chain; any other is emitted and runs the
    /// command hooks that list it.
    async fn lifecycle(&self, params: Value) -> Result<Value, ErrorObject> {
        let p = LifecycleParams::deserialize(&params).map_err(|e| {
            ErrorObject::new(
                error_code::INVALID_PARAMS,
                format!("invalid lifecycle params: {e}"),
            )
        })?;
        if p.event.is_request() {
            let outcome = self
                .host
                .run_stage(Stage::Lifecycle, params)
                .await
                .map_err(|e| ErrorObject::new(error_code::INVALID_PARAMS, e.to_string()))?;
            return Ok(outcome.to_wire(Stage::Lifecycle));
        }
        self.host.lifecycle(p.event, p.payload).await;
        Ok(json!({"action": "continue"}))
    }

    /// `host.emit`: `id` and `time` may be left out; the host fills them.
    fn emit(&self, params: Value) -> Result<(), String> {
        let p = EmitParams::deserialize(&params).map_err(|e| e.to_string())?;
        let event = p.into_event(
            || self.host.next_event_id(),
            || crate::audit::rfc3339(std::time::SystemTime::now()),
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

fn response(id: Option<Id>, payload: Result<Value, ErrorObject>) -> Vec<u8> {
    Message::Response(Response { id, payload }).encode()
}

/// One message read from the agent, whatever the transport.
enum Inbound<'a> {
    /// One JSON-RPC message's text.
    Message(&'a [u8]),
    /// A message over [`MAX_REQUEST_BYTES`], of this many bytes, skipped.
    TooLong(usize),
    /// A WebSocket binary frame: not JSON-RPC text.
    Binary,
}

/// One agent connection's requests in flight and its answer queue. The
/// transport reads messages into [`Session::handle`] and writes what comes
/// out of the queue; everything else is the same over stdio and WebSocket.
struct Session {
    sidecar: Arc<Sidecar>,
    answers: mpsc::Sender<Vec<u8>>,
    running: JoinSet<()>,
}

impl Session {
    fn new(sidecar: Arc<Sidecar>) -> (Session, mpsc::Receiver<Vec<u8>>) {
        let (answers, rx) = mpsc::channel::<Vec<u8>>(MAX_IN_FLIGHT);
        let session = Session {
            sidecar,
            answers,
            running: JoinSet::new(),
        };
        (session, rx)
    }

    async fn reply(&self, id: Option<Id>, error: ErrorObject) {
        let _ = self.answers.send(response(id, Err(error))).await;
    }

    /// Starts a request, applies a notification, or answers an error; then
    /// waits while [`MAX_IN_FLIGHT`] requests are running.
    async fn handle(&mut self, inbound: Inbound<'_>) {
        match inbound {
            Inbound::TooLong(n) => {
                let e = ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    format!("a {n}-byte message is longer than {MAX_REQUEST_BYTES} bytes"),
                );
                self.reply(None, e).await;
            }
            Inbound::Binary => {
                let e = ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    "a binary frame: send each message as one text frame",
                );
                self.reply(None, e).await;
            }
            Inbound::Message(m) if m.iter().all(u8::is_ascii_whitespace) => {}
            Inbound::Message(m) => match Message::decode(m) {
                Ok(Message::Request(req)) => {
                    let (sidecar, tx) = (self.sidecar.clone(), self.answers.clone());
                    self.running.spawn(async move {
                        let params = req.params.unwrap_or(Value::Null);
                        let reply = sidecar.call(&req.method, params).await;
                        let _ = tx.send(response(Some(req.id), reply)).await;
                    });
                }
                Ok(Message::Notification(n)) if n.method == "host.emit" => {
                    if let Err(e) = self.sidecar.emit(n.params.unwrap_or(Value::Null)) {
                        tracing::warn!("host.emit: skipped an invalid event: {e}");
                    }
                }
                Ok(Message::Notification(n)) => {
                    tracing::warn!(method = %n.method, "ignored a notification the sidecar does not know");
                }
                Ok(Message::Response(_)) => {
                    tracing::warn!("ignored a response: the sidecar sends no requests");
                }
                Err(DecodeError::Parse(e)) => {
                    let e = ErrorObject::new(error_code::PARSE_ERROR, format!("not JSON: {e}"));
                    self.reply(None, e).await;
                }
                Err(DecodeError::Invalid { reason, id }) => {
                    let e = ErrorObject::new(error_code::INVALID_REQUEST, reason);
                    self.reply(id, e).await;
                }
            },
        }
        // Reap finished requests so the set does not grow with the session.
        while self.running.try_join_next().is_some() {}
        while self.running.len() >= MAX_IN_FLIGHT {
            self.running.join_next().await;
        }
    }

    /// Waits for every request read so far to be answered, then closes the
    /// answer queue, which ends the writer once it has written them.
    async fn finish(mut self) {
        while self.running.join_next().await.is_some() {}
    }
}

/// Serves one connection until `input` ends, then waits for every request
/// read so far to be answered and written. The host is not shut down here.
pub async fn serve<R, W>(sidecar: Arc<Sidecar>, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut session, mut rx) = Session::new(sidecar);
    let writer = tokio::spawn(async move {
        let mut out = BufWriter::new(output);
        while let Some(line) = rx.recv().await {
            out.write_all(&line).await?;
            out.write_all(b"\n").await?;
            // Flush once the queue is empty, not per line, so a burst of
            // answers goes out in one write.
            if rx.is_empty() {
                out.flush().await?;
            }
        }
        out.flush().await
    });
    let mut reader = LineReader::new(
        BufReader::with_capacity(64 * 1024, input),
        MAX_REQUEST_BYTES,
    );
    let mut buf = Vec::new();
    loop {
        match reader.next(&mut buf).await? {
            Line::Eof => break,
            Line::TooLong(n) => session.handle(Inbound::TooLong(n)).await,
            Line::Complete => session.handle(Inbound::Message(&buf)).await,
        }
    }
    session.finish().await;
    writer.await.map_err(std::io::Error::other)?
}

/// Serves one WebSocket connection (already accepted on TCP): performs the
/// upgrade, then treats each text frame as one message, exactly as
/// [`serve`] treats a line. Returns when the agent closes the connection
/// (or it fails) and every request read has been answered; answers that
/// can no longer be delivered are dropped.
pub async fn serve_websocket(sidecar: Arc<Sidecar>, stream: TcpStream) -> Result<(), WsError> {
    let peer = stream.peer_addr().ok();
    let _ = stream.set_nodelay(true);
    let mut server = soketto::handshake::Server::new(BufReader::new(stream).compat());
    let key = match tokio::time::timeout(HANDSHAKE_TIMEOUT, server.receive_request()).await {
        Ok(Ok(request)) => request.key(),
        Ok(Err(e)) => return Err(WsError::Handshake(e.to_string())),
        Err(_) => {
            return Err(WsError::Handshake(format!(
                "no upgrade request within {} s",
                HANDSHAKE_TIMEOUT.as_secs()
            )));
        }
    };
    let accept = soketto::handshake::server::Response::Accept {
        key,
        protocol: None,
    };
    server
        .send_response(&accept)
        .await
        .map_err(|e| WsError::Handshake(e.to_string()))?;
    let mut builder = server.into_builder();
    builder.set_max_message_size(MAX_REQUEST_BYTES);
    builder.set_max_frame_size(MAX_REQUEST_BYTES);
    let (mut sender, mut receiver) = builder.finish();
    tracing::debug!(?peer, "sidecar: WebSocket session opened");

    let (mut session, mut rx) = Session::new(sidecar);
    let writer = tokio::spawn(async move {
        while let Some(answer) = rx.recv().await {
            let text = String::from_utf8_lossy(&answer);
            sender.send_text(text.as_ref()).await?;
            if rx.is_empty() {
                sender.flush().await?;
            }
        }
        sender.close().await
    });
    let mut buf = Vec::new();
    let ended = loop {
        buf.clear();
        match receiver.receive_data(&mut buf).await {
            Ok(soketto::Data::Text(_)) => session.handle(Inbound::Message(&buf)).await,
            Ok(soketto::Data::Binary(_)) => session.handle(Inbound::Binary).await,
            Err(soketto::connection::Error::MessageTooLarge { current, .. }) => {
                session.handle(Inbound::TooLong(current)).await
            }
            Err(soketto::connection::Error::Closed) => break Ok(()),
            Err(e) => break Err(WsError::Connection(e.to_string())),
        }
    };
    session.finish().await;
    let _ = writer.await;
    tracing::debug!(?peer, "sidecar: WebSocket session closed");
    ended
}

/// How a WebSocket session ended early.
#[derive(Debug, thiserror::Error)]
pub enum WsError {
    /// The upgrade request was not a valid WebSocket handshake.
    #[error("WebSocket handshake failed: {0}")]
    Handshake(String),
    /// The connection failed mid-session.
    #[error("WebSocket connection failed: {0}")]
    Connection(String),
}
