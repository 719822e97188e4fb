//! hookhost as a sidecar: an agent not written in Rust speaks JSON-RPC to
//! hookhost itself (`host.before_tool`, ..., `host.emit`, `host.stats`,
//! `host.reload`) and gets the merged verdicts, so it embeds hookhost
//! without linking it. `spec/sidecar.md` is the contract.
//!
//! [`serve`] runs one connection over any line stream, and
//! [`serve_websocket`] one WebSocket connection (one message per text
//! message), admitted by origin, host and token ([`Admission`]). Both feed
//! a `Session`: a task per request and one writer that
//! owns the output, so slow hooks never hold up other requests and nothing
//! but JSON-RPC reaches the output. Each returns at the end of input once
//! every request read has been answered.

mod admission;
mod budget;
mod ws;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::envelope::{DecodeError, Message, Response};
use hookhost_protocol::sidecar::{EmitParams, ReloadResult, StatsResult};
use hookhost_protocol::{ErrorObject, Id, LifecycleParams, Stage, error_code};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

pub use admission::{Admission, Refusal};
use budget::{Charge, Pool};
pub use budget::{GLOBAL_BYTES, SESSION_BYTES};

use crate::host::Host;
use crate::line_reader::{Line, LineReader};

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

/// WebSocket connections one peer address may hold at once.
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
    /// Nothing: `host.reload` is an error (an embedder serving a config it
    /// built in code).
    Nowhere,
}

/// The sidecar's view of the world: the host and where reloads come from.
pub struct Sidecar {
    host: Host,
    reload_from: ReloadFrom,
    loader: fn(&std::path::Path) -> Result<crate::Config, String>,
    /// Bytes in flight across every session ([`GLOBAL_BYTES`]).
    bytes: Pool,
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
            bytes: Pool::new(GLOBAL_BYTES),
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

/// One answer on its way out, holding the bytes its request was charged
/// until it has been written.
struct Answer {
    bytes: Vec<u8>,
    _charge: Charge,
}

/// One message read from the agent, whatever the transport.
enum Inbound<'a> {
    /// One JSON-RPC message's text, and what it was charged.
    Message(&'a [u8], Charge),
    /// A message over [`MAX_REQUEST_BYTES`], of this many bytes, skipped.
    TooLong(usize),
    /// A message skipped because [`budget::GLOBAL_BYTES`] were in flight.
    Busy,
    /// A WebSocket binary frame: not JSON-RPC text.
    Binary,
}

/// One agent connection's requests in flight and its answer queue. The
/// transport reads messages into [`Session::handle`] and writes what comes
/// out of the queue; everything else is the same over stdio and WebSocket.
struct Session {
    sidecar: Arc<Sidecar>,
    answers: mpsc::Sender<Answer>,
    running: JoinSet<()>,
    /// This session's bytes in flight ([`budget::SESSION_BYTES`]).
    bytes: Pool,
}

impl Session {
    fn new(sidecar: Arc<Sidecar>) -> (Session, mpsc::Receiver<Answer>) {
        let (answers, rx) = mpsc::channel::<Answer>(MAX_IN_FLIGHT);
        let session = Session {
            sidecar,
            answers,
            running: JoinSet::new(),
            bytes: Pool::new(budget::SESSION_BYTES),
        };
        (session, rx)
    }

    async fn reply(&self, id: Option<Id>, error: ErrorObject) {
        let bytes = response(id, Err(error));
        let _ = self
            .answers
            .send(Answer {
                bytes,
                _charge: Charge::default(),
            })
            .await;
    }

    /// Whether requests of this session are still running.
    fn busy(&mut self) -> bool {
        while self.running.try_join_next().is_some() {}
        !self.running.is_empty()
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
            Inbound::Busy => {
                let e = ErrorObject::new(
                    BUSY,
                    format!(
                        "hookhost is busy: requests in flight hold {} bytes; send it again",
                        budget::GLOBAL_BYTES
                    ),
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
            Inbound::Message(m, _) if m.iter().all(u8::is_ascii_whitespace) => {}
            Inbound::Message(m, charge) => self.message(m, charge).await,
        }
        // Reap finished requests so the set does not grow with the session.
        while self.running.try_join_next().is_some() {}
        while self.running.len() >= MAX_IN_FLIGHT {
            self.running.join_next().await;
        }
    }

    async fn message(&mut self, m: &[u8], mut charge: Charge) {
        match Message::decode(m) {
            Ok(Message::Request(req)) => {
                // Backpressure by bytes: wait for this session's earlier
                // requests to be answered before taking more of its input.
                self.bytes.grow(&mut charge, m.len()).await;
                let (sidecar, tx) = (self.sidecar.clone(), self.answers.clone());
                self.running.spawn(async move {
                    let params = req.params.unwrap_or(Value::Null);
                    let reply = sidecar.call(&req.method, params).await;
                    let bytes = response(Some(req.id), reply);
                    let _ = tx
                        .send(Answer {
                            bytes,
                            _charge: charge,
                        })
                        .await;
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
    let pool = sidecar.bytes.clone();
    let (mut session, mut rx) = Session::new(sidecar);
    let writer = tokio::spawn(async move {
        let mut out = BufWriter::new(output);
        while let Some(answer) = rx.recv().await {
            out.write_all(&answer.bytes).await?;
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
            Line::Complete => {
                let mut charge = Charge::default();
                let inbound = if pool.try_grow(&mut charge, buf.len()) {
                    Inbound::Message(&buf, charge)
                } else {
                    Inbound::Busy
                };
                session.handle(inbound).await
            }
        }
    }
    session.finish().await;
    writer.await.map_err(std::io::Error::other)?
}

/// How `hookhost serve --listen` treats each WebSocket connection.
#[derive(Debug, Clone)]
pub struct WsOptions {
    admission: Admission,
    idle_timeout: Option<Duration>,
}

impl WsOptions {
    /// Admits what `admission` admits; closes a connection idle for
    /// [`IDLE_TIMEOUT`].
    pub fn new(admission: Admission) -> WsOptions {
        WsOptions {
            admission,
            idle_timeout: Some(IDLE_TIMEOUT),
        }
    }

    /// Closes a connection that sent nothing and has nothing in flight
    /// for this long (`None`: never).
    pub fn idle_timeout(mut self, idle: Option<Duration>) -> WsOptions {
        self.idle_timeout = idle;
        self
    }
}

/// Serves one WebSocket connection (already accepted on TCP): performs the
/// upgrade if `options` admit it, then treats each text message as one
/// message, exactly as [`serve`] treats a line. Returns when the agent
/// closes the connection (or it fails, idles out, or breaks the protocol)
/// and every request read has been answered; answers that can no longer be
/// delivered are dropped.
pub async fn serve_websocket(
    sidecar: Arc<Sidecar>,
    stream: TcpStream,
    options: &WsOptions,
) -> Result<(), WsError> {
    let peer = stream.peer_addr().ok();
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::with_capacity(16 * 1024, read);
    match tokio::time::timeout(
        HANDSHAKE_TIMEOUT,
        ws::upgrade(&mut read, &mut write, &options.admission),
    )
    .await
    {
        Ok(Ok(())) => {}
        Ok(Err(ws::Fail::Refused(r))) => return Err(WsError::Refused(r.status, r.why)),
        Ok(Err(e)) => return Err(WsError::Handshake(format!("{e:?}"))),
        Err(_) => {
            return Err(WsError::Handshake(format!(
                "no upgrade request within {} s",
                HANDSHAKE_TIMEOUT.as_secs()
            )));
        }
    }
    tracing::debug!(?peer, "sidecar: WebSocket session opened");
    let pool = sidecar.bytes.clone();
    let (mut session, answers) = Session::new(sidecar);
    let (control_tx, control_rx) = mpsc::channel(8);
    let writer = tokio::spawn(write_ws(write, answers, control_rx));
    let mut frames = ws::Frames::new(read, control_tx.clone());
    let ended = read_ws(&mut frames, &mut session, &pool, options.idle_timeout).await;
    let close = match &ended {
        Ok(()) | Err(WsError::Connection(_)) => None,
        Err(WsError::Idle) => Some((ws::CLOSE_GOING_AWAY, "idle")),
        Err(_) => Some((ws::CLOSE_PROTOCOL, "protocol error")),
    };
    if let Some((code, why)) = close {
        let _ = control_tx.send(ws::Control::Close(code, why)).await;
    }
    drop((frames, control_tx));
    session.finish().await;
    let _ = writer.await;
    tracing::debug!(?peer, "sidecar: WebSocket session closed");
    ended
}

/// Reads messages into the session until the agent closes, idles out, or
/// the connection fails.
async fn read_ws(
    frames: &mut ws::Frames,
    session: &mut Session,
    pool: &Pool,
    idle: Option<Duration>,
) -> Result<(), WsError> {
    let mut buf = Vec::new();
    loop {
        if let Some(idle) = idle {
            match tokio::time::timeout(idle, frames.wait_readable()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(WsError::Connection(e.to_string())),
                Err(_) if session.busy() => continue,
                Err(_) => return Err(WsError::Idle),
            }
        }
        buf.clear();
        let mut charge = Charge::default();
        let inbound = match frames.next(&mut buf, &mut charge, pool).await {
            Ok(ws::Message::Text) => Inbound::Message(&buf, charge),
            Ok(ws::Message::Binary) => Inbound::Binary,
            Ok(ws::Message::TooLong(n)) => Inbound::TooLong(n),
            Ok(ws::Message::Busy) => Inbound::Busy,
            Ok(ws::Message::Closed) => return Ok(()),
            Err(ws::Fail::Protocol(why)) => return Err(WsError::Protocol(why)),
            Err(ws::Fail::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(WsError::Connection(format!("{e:?}"))),
        };
        session.handle(inbound).await;
    }
}

/// The one writer of a WebSocket connection: answers as text frames,
/// pongs and the close frame. After a close nothing more is written and
/// answers still coming are dropped.
async fn write_ws(
    write: OwnedWriteHalf,
    mut answers: mpsc::Receiver<Answer>,
    mut control: mpsc::Receiver<ws::Control>,
) -> std::io::Result<()> {
    let mut out = BufWriter::new(write);
    let mut closed = false;
    let mut control_open = true;
    loop {
        tokio::select! {
            biased;
            c = control.recv(), if control_open => match c {
                Some(_) if closed => {}
                Some(ws::Control::Pong(p)) => ws::write_pong(&mut out, &p).await?,
                Some(ws::Control::Close(code, why)) => {
                    closed = true;
                    ws::write_close(&mut out, code, why).await?;
                }
                None => control_open = false,
            },
            a = answers.recv() => match a {
                Some(_) if closed => {}
                Some(answer) => {
                    ws::write_text(&mut out, &answer.bytes).await?;
                    if answers.is_empty() {
                        out.flush().await?;
                    }
                }
                None => break,
            },
        }
    }
    if !closed {
        ws::write_close(&mut out, ws::CLOSE_NORMAL, "").await?;
    }
    out.shutdown().await
}

/// How a WebSocket session ended early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WsError {
    /// The upgrade request was not a valid WebSocket handshake.
    #[error("WebSocket handshake failed: {0}")]
    Handshake(String),
    /// The upgrade was refused (origin, host or token): the HTTP status
    /// sent, and why.
    #[error("WebSocket upgrade refused with {0}: {1}")]
    Refused(u16, String),
    /// The agent broke RFC 6455; the connection was closed with 1002.
    #[error("WebSocket protocol error: {0}; closed with 1002")]
    Protocol(&'static str),
    /// Nothing was sent or in flight for the idle timeout; closed with 1001.
    #[error("WebSocket connection idle; closed with 1001")]
    Idle,
    /// The connection failed mid-session.
    #[error("WebSocket connection failed: {0}")]
    Connection(String),
}
