//! The sidecar's TCP port (`hookhost serve --listen`): a request without
//! `Upgrade` is plain HTTP (`http.rs`: an agent's HTTP hook); otherwise
//! the WebSocket upgrade, then one JSON message per text message, a
//! reader feeding the session and one writer for answers, pongs and the
//! close.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use super::access::Access;
use super::budget::{Charge, Pool};
use super::http;
use super::rfc6455 as ws;
use super::session::{Answer, Inbound, Session};
use super::{HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, Sidecar};

/// The read side of a connection: a TCP stream's, or a TLS session's.
pub type Reader = Box<dyn AsyncRead + Unpin + Send>;

/// The write side of a connection.
pub type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// How `hookhost serve --listen` treats each WebSocket connection.
#[derive(Debug, Clone)]
pub struct WsOptions {
    access: Access,
    idle_timeout: Option<Duration>,
}

impl WsOptions {
    /// Lets in what `access` lets in; closes a connection idle for
    /// [`IDLE_TIMEOUT`].
    pub fn new(access: Access) -> WsOptions {
        WsOptions {
            access,
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
/// upgrade if `options` let it in, then treats each text message as one
/// message, exactly as [`serve`](super::serve) treats a line. Returns when the agent
/// closes the connection (or it fails, idles out, or breaks the protocol)
/// and every request read has been answered; answers that can no longer be
/// delivered are dropped.
///
/// Calls `checked` once the connection's first request head passes
/// the access check (origin, host, token): the point from which `hookhost serve`
/// counts it as an agent's rather than a stranger's.
pub async fn serve_websocket(
    sidecar: Arc<Sidecar>,
    (read, mut write): (Reader, Writer),
    options: &WsOptions,
    checked: &(dyn Fn() + Sync),
) -> Result<(), WsError> {
    let mut read = BufReader::with_capacity(16 * 1024, read);
    let head = first_head(&mut read, &mut write).await?;
    let headers = head.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
    let caller = options.access.check(headers);
    if caller.is_ok() {
        checked();
    }
    if !head.is_upgrade() {
        let access = Some(&options.access);
        return http::serve(&sidecar, &mut read, &mut write, Some(head), access)
            .await
            .map_err(|e| WsError::Connection(e.to_string()));
    }
    match ws::upgrade(&head.raw, &mut write, &options.access).await {
        Ok(()) => {}
        Err(ws::Fail::Refused(r)) => return Err(WsError::Refused(r.status, r.why)),
        Err(e) => return Err(WsError::Handshake(format!("{e:?}"))),
    }
    tracing::debug!("sidecar: WebSocket session opened");
    let pool = sidecar.bytes.clone();
    let (mut session, answers) = Session::new(sidecar, caller.ok().flatten());
    let (control_tx, control_rx) = mpsc::channel(8);
    let writer = tokio::spawn(write_ws(write, answers, control_rx));
    let mut frames = ws::Frames::new(read, control_tx.clone());
    let ended = read_ws(&mut frames, &mut session, &pool, options.idle_timeout).await;
    let close = match &ended {
        Ok(()) | Err(WsError::Connection(_)) => None,
        Err(WsError::Idle) => Some((ws::CLOSE_GOING_AWAY, "idle")),
        Err(WsError::InvalidUtf8) => Some((ws::CLOSE_INVALID_DATA, "text is not UTF-8")),
        Err(_) => Some((ws::CLOSE_PROTOCOL, "protocol error")),
    };
    if let Some((code, why)) = close {
        let _ = control_tx.send(ws::Control::Close(code, why)).await;
    }
    drop((frames, control_tx));
    session.finish().await;
    let _ = writer.await;
    tracing::debug!("sidecar: WebSocket session closed");
    ended
}

/// The connection's first request head, within [`HANDSHAKE_TIMEOUT`]; a
/// head that cannot be read is answered with why, and ends the connection.
async fn first_head(
    read: &mut BufReader<Reader>,
    write: &mut Writer,
) -> Result<http::Head, WsError> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, http::read_head(read)).await {
        Ok(Ok(Some(head))) => Ok(head),
        Ok(Ok(None)) => Err(WsError::Handshake("closed before a request".into())),
        Ok(Err(reply)) => {
            let why = String::from_utf8_lossy(&reply.body).trim().to_string();
            let _ = http::refuse(write, reply).await;
            Err(WsError::Handshake(why))
        }
        Err(_) => Err(WsError::Handshake(format!(
            "no request within {} s",
            HANDSHAKE_TIMEOUT.as_secs()
        ))),
    }
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
            Ok(ws::Message::Text) if std::str::from_utf8(&buf).is_err() => {
                return Err(WsError::InvalidUtf8);
            }
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
    write: Writer,
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
    /// A text message was not UTF-8 (RFC 6455 section 8.1); the connection
    /// was closed with 1007.
    #[error("WebSocket text message is not UTF-8; closed with 1007")]
    InvalidUtf8,
    /// Nothing was sent or in flight for the idle timeout; closed with 1001.
    #[error("WebSocket connection idle; closed with 1001")]
    Idle,
    /// The connection failed mid-session.
    #[error("WebSocket connection failed: {0}")]
    Connection(String),
}
