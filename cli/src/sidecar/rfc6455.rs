//! The server side of RFC 6455, as much of it as the sidecar needs and no
//! more: the upgrade (checked by [`Access`] before any session exists),
//! then client frames read as their bytes arrive. A frame header can
//! announce up to 2^63 bytes in 14 bytes; nothing is allocated for what
//! has not arrived, and every byte buffered is charged to the byte budget,
//! so headers alone cannot grow memory. Unmasked client frames, reserved
//! bits and malformed control frames close the connection with 1002; a
//! message over the limit is skipped as it streams past and answered
//! -32600, and the session goes on.

use std::io;
use std::time::Duration;

use base64::Engine as _;
use sha1::{Digest as _, Sha1};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use super::MAX_REQUEST_BYTES;
use super::access::{Access, Refusal};
use super::budget::{Charge, Pool};
use super::websocket::{Reader, Writer};

/// How long a frame already begun may stall between reads.
const STALL: Duration = Duration::from_secs(30);
/// Bytes read from the socket at a time.
const CHUNK: usize = 64 * 1024;

const OP_CONTINUE: u8 = 0x0;
const OP_TEXT: u8 = 0x1;
const OP_BINARY: u8 = 0x2;
const OP_CLOSE: u8 = 0x8;
const OP_PING: u8 = 0x9;
const OP_PONG: u8 = 0xA;

/// Close codes (RFC 6455 section 7.4.1).
pub(super) const CLOSE_NORMAL: u16 = 1000;
pub(super) const CLOSE_GOING_AWAY: u16 = 1001;
pub(super) const CLOSE_PROTOCOL: u16 = 1002;
/// A text message that is not UTF-8 (RFC 6455 section 8.1).
pub(super) const CLOSE_INVALID_DATA: u16 = 1007;

/// How a connection failed at the upgrade or mid-session.
#[derive(Debug)]
pub(super) enum Fail {
    /// Not a WebSocket upgrade we serve: answered with this status.
    BadUpgrade(u16, &'static str),
    /// The access check refused it.
    Refused(Refusal),
    /// The client broke the protocol: closed with 1002.
    Protocol(&'static str),
    /// The socket failed or stalled.
    Io(io::Error),
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Fail {
        Fail::Io(e)
    }
}

/// Checks the upgrade request's head (read by the connection, which
/// routes plain requests elsewhere) and answers 101 or the refusal.
pub(super) async fn upgrade(head: &[u8], writer: &mut Writer, access: &Access) -> Result<(), Fail> {
    let checked = check_upgrade(head, access);
    let response = match &checked {
        Ok(accept) => format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        ),
        Err(Fail::BadUpgrade(status, why)) => refusal_response(*status, why),
        Err(Fail::Refused(r)) => refusal_response(r.status, &r.why),
        Err(_) => return checked.map(|_| ()),
    };
    writer.write_all(response.as_bytes()).await?;
    writer.flush().await?;
    checked.map(|_| ())
}

/// The `Sec-WebSocket-Accept` value when `head` is an upgrade we let in.
fn check_upgrade(head: &[u8], access: &Access) -> Result<String, Fail> {
    let mut slots = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut slots);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(Fail::BadUpgrade(400, "not an HTTP/1.1 request head")),
    }
    if request.method != Some("GET") || request.version != Some(1) {
        return Err(Fail::BadUpgrade(
            400,
            "a WebSocket upgrade is GET over HTTP/1.1",
        ));
    }
    let headers: Vec<(&str, &[u8])> = request.headers.iter().map(|h| (h.name, h.value)).collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    };
    let has_token = |name: &str, token: &[u8]| {
        find(name).is_some_and(|v| {
            v.split(|b| *b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
        })
    };
    if !has_token("upgrade", b"websocket") || !has_token("connection", b"upgrade") {
        return Err(Fail::BadUpgrade(400, "not a WebSocket upgrade request"));
    }
    if find("sec-websocket-version").map(<[u8]>::trim_ascii) != Some(b"13") {
        return Err(Fail::BadUpgrade(426, "only WebSocket version 13 is served"));
    }
    let Some(key) = find("sec-websocket-key").map(<[u8]>::trim_ascii) else {
        return Err(Fail::BadUpgrade(400, "no Sec-WebSocket-Key"));
    };
    access
        .check(headers.iter().copied())
        .map_err(Fail::Refused)?;
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    Ok(base64::engine::general_purpose::STANDARD.encode(sha.finalize()))
}

fn refusal_response(status: u16, why: &str) -> String {
    let reason = match status {
        401 => "Unauthorized",
        403 => "Forbidden",
        426 => "Upgrade Required",
        431 => "Request Header Fields Too Large",
        _ => "Bad Request",
    };
    let challenge = if status == 401 {
        "WWW-Authenticate: Bearer\r\n"
    } else {
        ""
    };
    let body = format!("hookhost: {why}\n");
    format!(
        "HTTP/1.1 {status} {reason}\r\n{challenge}Content-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// One message read from the client.
pub(super) enum Message {
    /// A text message, whole, in the buffer and charged.
    Text,
    /// A binary message (skipped).
    Binary,
    /// A message of at least this many bytes, over the limit (skipped).
    TooLong(usize),
    /// A message refused because the byte budget is spent (skipped).
    Busy,
    /// The client sent a close frame (answered).
    Closed,
}

/// What the reader asks the writer to send besides answers.
pub(super) enum Control {
    Pong(Vec<u8>),
    Close(u16, &'static str),
}

struct Head {
    fin: bool,
    opcode: u8,
    len: u64,
    mask: [u8; 4],
}

/// Client frames, read from one connection.
pub(super) struct Frames {
    reader: BufReader<Reader>,
    control: mpsc::Sender<Control>,
}

/// What happens to the payload of the message being read.
#[derive(Clone, Copy, PartialEq)]
enum Keep {
    Buffer,
    Skip(SkipWhy),
}

#[derive(Clone, Copy, PartialEq)]
enum SkipWhy {
    Binary,
    TooLong,
    Busy,
}

impl Frames {
    pub(super) fn new(reader: BufReader<Reader>, control: mpsc::Sender<Control>) -> Frames {
        Frames { reader, control }
    }

    /// Waits until the client has sent something (for the idle timeout).
    pub(super) async fn wait_readable(&mut self) -> io::Result<()> {
        self.reader.fill_buf().await.map(|_| ())
    }

    /// Reads the next message into `buf`, charging `pool` for what is kept.
    /// Pings are answered and pongs skipped on the way.
    pub(super) async fn next(
        &mut self,
        buf: &mut Vec<u8>,
        charge: &mut Charge,
        pool: &Pool,
    ) -> Result<Message, Fail> {
        let mut started: Option<Keep> = None;
        let mut total: usize = 0;
        loop {
            let head = self.head().await?;
            let keep = match (head.opcode, started) {
                (OP_CLOSE | OP_PING | OP_PONG, _) => {
                    if let Some(closed) = self.control_frame(&head).await? {
                        return Ok(closed);
                    }
                    continue;
                }
                (OP_TEXT, None) => Keep::Buffer,
                (OP_BINARY, None) => Keep::Skip(SkipWhy::Binary),
                (OP_CONTINUE, Some(keep)) => keep,
                (OP_CONTINUE, None) => {
                    return Err(Fail::Protocol("a continuation frame outside a message"));
                }
                (OP_TEXT | OP_BINARY, Some(_)) => {
                    return Err(Fail::Protocol("a new message inside a fragmented one"));
                }
                _ => return Err(Fail::Protocol("a reserved opcode")),
            };
            total = total.saturating_add(usize::try_from(head.len).unwrap_or(usize::MAX));
            let keep = if keep == Keep::Buffer && total > MAX_REQUEST_BYTES {
                Keep::Skip(SkipWhy::TooLong)
            } else {
                keep
            };
            let keep = self.payload(&head, keep, buf, charge, pool).await?;
            if !head.fin {
                started = Some(keep);
                continue;
            }
            return Ok(match keep {
                Keep::Buffer => Message::Text,
                Keep::Skip(SkipWhy::Binary) => Message::Binary,
                Keep::Skip(SkipWhy::TooLong) => Message::TooLong(total),
                Keep::Skip(SkipWhy::Busy) => Message::Busy,
            });
        }
    }

    async fn head(&mut self) -> Result<Head, Fail> {
        let mut two = [0u8; 2];
        self.read_exact(&mut two).await?;
        let (fin, rsv, opcode) = (two[0] & 0x80 != 0, two[0] & 0x70, two[0] & 0x0f);
        if rsv != 0 {
            return Err(Fail::Protocol("reserved bits set"));
        }
        if two[1] & 0x80 == 0 {
            return Err(Fail::Protocol("an unmasked client frame"));
        }
        let len = match two[1] & 0x7f {
            126 => {
                let mut b = [0u8; 2];
                self.read_exact(&mut b).await?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                self.read_exact(&mut b).await?;
                let len = u64::from_be_bytes(b);
                if len >> 63 != 0 {
                    return Err(Fail::Protocol("a frame length with its top bit set"));
                }
                len
            }
            n => u64::from(n),
        };
        if opcode >= OP_CLOSE && (len > 125 || !fin) {
            return Err(Fail::Protocol(
                "a control frame over 125 bytes or fragmented",
            ));
        }
        let mut mask = [0u8; 4];
        self.read_exact(&mut mask).await?;
        Ok(Head {
            fin,
            opcode,
            len,
            mask,
        })
    }

    /// Answers a ping, skips a pong; a close is echoed and ends the reading.
    async fn control_frame(&mut self, head: &Head) -> Result<Option<Message>, Fail> {
        let mut payload = vec![0u8; head.len as usize];
        self.read_exact(&mut payload).await?;
        unmask(&mut payload, head.mask, 0);
        let reply = match head.opcode {
            OP_PING => Control::Pong(payload),
            OP_CLOSE => Control::Close(CLOSE_NORMAL, ""),
            _ => return Ok(None),
        };
        let closing = matches!(reply, Control::Close(..));
        let _ = self.control.send(reply).await;
        Ok(closing.then_some(Message::Closed))
    }

    /// Reads one frame's payload: into `buf` while it is kept and the pool
    /// can pay for it, else past it. Returns what to do with the rest.
    async fn payload(
        &mut self,
        head: &Head,
        mut keep: Keep,
        buf: &mut Vec<u8>,
        charge: &mut Charge,
        pool: &Pool,
    ) -> Result<Keep, Fail> {
        if keep != Keep::Buffer {
            buf.clear();
            charge.release();
        }
        let mut offset: u64 = 0;
        let mut scratch = [0u8; 8 * 1024];
        while offset < head.len {
            let want = usize::try_from(head.len - offset).map_or(CHUNK, |r| r.min(CHUNK));
            if keep == Keep::Buffer && !pool.try_grow(charge, want) {
                keep = Keep::Skip(SkipWhy::Busy);
                buf.clear();
                charge.release();
            }
            if keep != Keep::Buffer {
                let n = want.min(scratch.len());
                self.read_exact(&mut scratch[..n]).await?;
                offset += n as u64;
                continue;
            }
            let start = buf.len();
            buf.resize(start + want, 0);
            self.read_exact(&mut buf[start..]).await?;
            unmask(&mut buf[start..], head.mask, offset);
            offset += want as u64;
        }
        Ok(keep)
    }

    async fn read_exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        match tokio::time::timeout(STALL, self.reader.read_exact(out)).await {
            Ok(r) => r.map(|_| ()),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("a frame stalled for {} s", STALL.as_secs()),
            )),
        }
    }
}

fn unmask(bytes: &mut [u8], mask: [u8; 4], offset: u64) {
    for (i, b) in bytes.iter_mut().enumerate() {
        *b ^= mask[((offset + i as u64) % 4) as usize];
    }
}

/// Writes one unmasked server frame.
pub(super) async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut BufWriter<W>,
    opcode: u8,
    payload: &[u8],
) -> io::Result<()> {
    let len = payload.len();
    w.write_u8(0x80 | opcode).await?;
    if len < 126 {
        w.write_u8(len as u8).await?;
    } else if let Ok(short) = u16::try_from(len) {
        w.write_u8(126).await?;
        w.write_u16(short).await?;
    } else {
        w.write_u8(127).await?;
        w.write_u64(len as u64).await?;
    }
    w.write_all(payload).await
}

/// Writes a close frame with its code and reason.
pub(super) async fn write_close<W: AsyncWrite + Unpin>(
    w: &mut BufWriter<W>,
    code: u16,
    why: &str,
) -> io::Result<()> {
    let mut payload = code.to_be_bytes().to_vec();
    payload.extend_from_slice(&why.as_bytes()[..why.len().min(123)]);
    write_frame(w, OP_CLOSE, &payload).await?;
    w.flush().await
}

/// Writes a text frame.
pub(super) async fn write_text<W: AsyncWrite + Unpin>(
    w: &mut BufWriter<W>,
    text: &[u8],
) -> io::Result<()> {
    write_frame(w, OP_TEXT, text).await
}

/// Writes a pong.
pub(super) async fn write_pong<W: AsyncWrite + Unpin>(
    w: &mut BufWriter<W>,
    payload: &[u8],
) -> io::Result<()> {
    write_frame(w, OP_PONG, payload).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_key_is_rfc_6455s_example() {
        let head = b"GET /chat HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUpgrade: websocket\r\n\
            Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
            Sec-WebSocket-Version: 13\r\n\r\n";
        let accept = check_upgrade(head, &Access::new().loopback_host(true));
        assert_eq!(accept.ok().as_deref(), Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    }

    #[test]
    fn a_request_that_is_not_an_upgrade_is_a_400() {
        let head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        assert!(matches!(
            check_upgrade(head, &Access::new()),
            Err(Fail::BadUpgrade(400, _))
        ));
        let post = b"POST / HTTP/1.1\r\nHost: x\r\n\r\n";
        assert!(matches!(
            check_upgrade(post, &Access::new()),
            Err(Fail::BadUpgrade(400, _))
        ));
    }

    #[test]
    fn a_masked_payload_unmasks_across_chunk_offsets() {
        let mask = [1, 2, 3, 4];
        let plain = b"hello, world".to_vec();
        let mut masked = plain.clone();
        unmask(&mut masked, mask, 0);
        let (a, b) = masked.split_at_mut(5);
        unmask(a, mask, 0);
        unmask(b, mask, 5);
        assert_eq!(masked, plain);
    }
}
