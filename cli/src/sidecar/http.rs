//! Plain HTTP/1.1 on the sidecar's port and on the daemon's Unix socket:
//! just what an agent's HTTP hook and `hookhost relay` need. One request
//! at a time per connection, kept alive between requests; the body is
//! sized by `Content-Length` (chunked bodies are refused with 411), capped
//! at [`MAX_REQUEST_BYTES`] and charged to the shared byte budget before it
//! is read, so no peer grows hookhost's memory by announcing a large body.
//! What each route does lives in `routes.rs`.

use std::io;
use std::time::Duration;

use hookhost::Identity;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::access::Access;
use super::budget::Charge;
use super::{MAX_REQUEST_BYTES, Sidecar};

/// The type of hookhost's own messages (errors, refusals).
const TEXT: &str = "text/plain; charset=utf-8";

/// The longest request head read.
const MAX_HEAD_BYTES: usize = 8 * 1024;
/// How long a kept-alive connection may wait for its next request, and a
/// body may stall.
const IDLE: Duration = Duration::from_secs(60);

/// One request's head, parsed.
pub(super) struct Head {
    pub(super) method: String,
    /// The path without the query.
    pub(super) path: String,
    /// The query string, without `?`.
    pub(super) query: String,
    pub(super) headers: Vec<(String, Vec<u8>)>,
    /// HTTP/1.1 without `Connection: close`.
    keep_alive: bool,
    /// The head as read, for the WebSocket upgrade's own checks.
    pub(super) raw: Vec<u8>,
}

impl Head {
    /// A header's value by name, in any case.
    pub(super) fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// Whether this is a WebSocket upgrade rather than a plain request.
    pub(super) fn is_upgrade(&self) -> bool {
        self.header("upgrade").is_some()
    }
}

/// A response: status, content type, more header lines, body.
pub(super) struct Reply {
    pub(super) status: u16,
    /// The `Content-Type`.
    pub(super) kind: &'static str,
    /// Whole header lines, each ending `\r\n`.
    pub(super) headers: String,
    pub(super) body: Vec<u8>,
}

impl Reply {
    pub(super) fn json(body: String) -> Reply {
        Reply::body("application/json", body)
    }

    /// A 200 with `body` as it is, of type `kind`.
    pub(super) fn body(kind: &'static str, body: String) -> Reply {
        Reply {
            status: 200,
            kind,
            headers: String::new(),
            body: body.into_bytes(),
        }
    }

    pub(super) fn text(status: u16, why: impl std::fmt::Display) -> Reply {
        Reply {
            status,
            kind: TEXT,
            headers: String::new(),
            body: format!("hookhost: {why}\n").into_bytes(),
        }
    }

    /// This reply with a header line `name: value` (value one line of
    /// printable ASCII).
    pub(super) fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push_str(&format!("{name}: {value}\r\n"));
        self
    }
}

/// Reads one request head; `None` at a clean end of input (or an idle
/// keep-alive connection).
pub(super) async fn read_head<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<Option<Head>, Reply> {
    let mut raw = Vec::with_capacity(1024);
    loop {
        let limit = (MAX_HEAD_BYTES + 1 - raw.len()) as u64;
        let mut bounded = (&mut *reader).take(limit);
        let read = bounded.read_until(b'\n', &mut raw);
        let n = match tokio::time::timeout(IDLE, read).await {
            Ok(Ok(n)) => n,
            Ok(Err(_)) | Err(_) if raw.is_empty() => return Ok(None),
            _ => return Err(Reply::text(408, "the request head stalled")),
        };
        if n == 0 {
            return match raw.is_empty() {
                true => Ok(None),
                false => Err(Reply::text(400, "the request head was cut short")),
            };
        }
        if raw.len() > MAX_HEAD_BYTES {
            return Err(Reply::text(431, "the request head is too long"));
        }
        if raw == b"\r\n" || raw == b"\n" {
            raw.clear(); // blank lines between kept-alive requests
        } else if raw.ends_with(b"\r\n\r\n") || raw.ends_with(b"\n\n") {
            return parse_head(&raw).map(Some);
        }
    }
}

fn parse_head(raw: &[u8]) -> Result<Head, Reply> {
    let mut slots = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut slots);
    match request.parse(raw) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(Reply::text(400, "not an HTTP/1.1 request head")),
    }
    let target = request.path.unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let headers: Vec<(String, Vec<u8>)> = request
        .headers
        .iter()
        .map(|h| (h.name.to_string(), h.value.to_vec()))
        .collect();
    let close = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("connection") && v.trim_ascii().eq_ignore_ascii_case(b"close")
    });
    Ok(Head {
        method: request.method.unwrap_or_default().to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers,
        keep_alive: request.version == Some(1) && !close,
        raw: raw.to_vec(),
    })
}

/// Serves plain requests on one connection, starting with `first` when
/// its head was read already (the TCP port reads it to tell an upgrade
/// from a request). `access` applies to every request: the sidecar's
/// origin, host and token rules; `None` on the Unix socket, whose
/// directory's permissions and peer check are its access check.
pub(super) async fn serve<R, W>(
    sidecar: &Sidecar,
    reader: &mut R,
    writer: &mut W,
    mut first: Option<Head>,
    access: Option<&Access>,
) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let head = match first.take() {
            Some(head) => head,
            None => match read_head(reader).await {
                Ok(Some(head)) => head,
                Ok(None) => return Ok(()),
                Err(reply) => return respond(writer, reply, false).await,
            },
        };
        #[cfg(feature = "ui")]
        if super::ui::is_ui(&head.path) {
            match console(sidecar, reader, writer, &head, access).await? {
                true => continue,
                false => return Ok(()),
            }
        }
        // A refused request's body is never read, so nothing after it on
        // this connection can be found: refusals end the connection.
        let caller = match check_access(&head, access) {
            Ok(caller) => caller,
            Err(reply) => return respond(writer, reply, false).await,
        };
        let keep = head.keep_alive;
        let reply = match read_body(sidecar, reader, &head).await {
            Ok((body, _charge)) => {
                super::routes::route(sidecar, &head, &body, caller.as_ref()).await
            }
            Err(reply) => return respond(writer, reply, false).await,
        };
        respond(writer, reply, keep).await?;
        if !keep {
            return Ok(());
        }
    }
}

/// Serves one request to the console (`ui/`, which admits it by its own
/// rules); whether the connection stays open.
#[cfg(feature = "ui")]
async fn console<R, W>(
    sidecar: &Sidecar,
    reader: &mut R,
    writer: &mut W,
    head: &Head,
    access: Option<&Access>,
) -> io::Result<bool>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let body = match read_body(sidecar, reader, head).await {
        Ok((body, _charge)) => body,
        Err(reply) => return respond(writer, reply, false).await.map(|()| false),
    };
    // Boxed: the console's futures would otherwise sit inline in every
    // connection's.
    match Box::pin(super::ui::serve(sidecar, head, &body, access)).await {
        super::ui::Served::Reply(reply) => {
            respond(writer, reply, head.keep_alive).await?;
            Ok(head.keep_alive)
        }
        super::ui::Served::Stream(held) => {
            let events = super::ui::stream_events(sidecar, head, access, writer, held);
            Box::pin(events).await.map(|()| false)
        }
    }
}

/// The caller's identity (`None` when the credential carries none).
fn check_access(head: &Head, access: Option<&Access>) -> Result<Option<Identity>, Reply> {
    let Some(access) = access else {
        return Ok(None);
    };
    let headers = head.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
    access
        .check(headers)
        .map_err(|r| Reply::text(r.status, r.why))
}

/// The body, charged to the byte budget while it is held.
async fn read_body<R: AsyncBufRead + Unpin>(
    sidecar: &Sidecar,
    reader: &mut R,
    head: &Head,
) -> Result<(Vec<u8>, Charge), Reply> {
    if head.header("transfer-encoding").is_some() {
        return Err(Reply::text(411, "send the body with a Content-Length"));
    }
    let len = match head.header("content-length") {
        None => 0,
        Some(v) => std::str::from_utf8(v)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .ok_or_else(|| Reply::text(400, "Content-Length is not a number"))?,
    };
    if len > MAX_REQUEST_BYTES {
        return Err(Reply::text(413, "the body is over 16 MiB"));
    }
    let mut charge = Charge::default();
    if !sidecar.bytes.try_grow(&mut charge, len) {
        return Err(Reply::text(503, "busy: too many bytes in flight"));
    }
    let mut body = vec![0; len];
    match tokio::time::timeout(IDLE, reader.read_exact(&mut body)).await {
        Ok(Ok(_)) => Ok((body, charge)),
        _ => Err(Reply::text(400, "the body ended before its Content-Length")),
    }
}

/// Answers a request that could not be read, and ends the connection.
pub(super) async fn refuse<W: AsyncWrite + Unpin>(writer: &mut W, reply: Reply) -> io::Result<()> {
    respond(writer, reply, false).await
}

async fn respond<W: AsyncWrite + Unpin>(
    writer: &mut W,
    reply: Reply,
    keep: bool,
) -> io::Result<()> {
    let reason = match reply.status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let challenge = match reply.status {
        401 => "WWW-Authenticate: Bearer\r\n",
        _ => "",
    };
    let connection = if keep { "keep-alive" } else { "close" };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\n{challenge}Content-Type: {}\r\nContent-Length: {}\r\n\
         Connection: {connection}\r\n{}\r\n",
        reply.status,
        reply.kind,
        reply.body.len(),
        reply.headers
    );
    let mut out = head.into_bytes();
    out.extend_from_slice(&reply.body);
    writer.write_all(&out).await?;
    writer.flush().await
}
