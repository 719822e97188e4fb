//! The daemon's side door: one HTTP/1.1 request over its Unix socket,
//! blocking and without a runtime, for `hookhost relay` (which must start
//! fast) and `hookhost status`. Every wait (the connection, each write,
//! each read) is bounded by the caller's deadline, so a daemon that is
//! stopped, full or silent costs at most that long, with no thread
//! standing watch.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use super::paths;

/// The largest answer read from the daemon.
const MAX_ANSWER_BYTES: u64 = 32 * 1024 * 1024;

/// Why a request has no answer.
#[derive(Debug)]
pub enum Failed {
    /// The deadline passed first.
    Late,
    /// Anything else, said in a sentence: nobody listening, a broken
    /// connection, another status, another user's daemon.
    Because(String),
}

/// Sends `method path` with `headers` (whole lines, each ending `\r\n`)
/// and `body`, and returns the body of a 200 answer, by `until`.
pub fn request(
    socket: &Path,
    (method, path): (&str, &str),
    headers: &str,
    body: &[u8],
    until: Instant,
) -> Result<Vec<u8>, Failed> {
    let mut stream = connect(socket, until)?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n{headers}\r\n",
        body.len()
    );
    let lost = |e| failed(socket, "failed", e);
    for part in [head.as_bytes(), body] {
        stream.set_write_timeout(Some(left(until)?)).map_err(lost)?;
        stream.write_all(part).map_err(lost)?;
    }
    let response = read_all(&mut stream, until).map_err(lost)?;
    answer_of(socket, &response)
}

/// The body of a 200 answer.
fn answer_of(socket: &Path, response: &[u8]) -> Result<Vec<u8>, Failed> {
    let said = |why: String| Err(Failed::Because(why));
    match split_response(response) {
        Some((200, body)) => Ok(body.to_vec()),
        Some((status, body)) => {
            let body = String::from_utf8_lossy(body);
            said(format!("hookhost answered {status}: {}", body.trim()))
        }
        None => said(format!(
            "the hookhost at {} gave no answer",
            socket.display()
        )),
    }
}

/// The time left before `until`; none left is [`Failed::Late`].
fn left(until: Instant) -> Result<Duration, Failed> {
    match until.saturating_duration_since(Instant::now()) {
        Duration::ZERO => Err(Failed::Late),
        left => Ok(left),
    }
}

/// An I/O error with the socket: a timeout is [`Failed::Late`].
fn failed(socket: &Path, what: &str, e: std::io::Error) -> Failed {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Failed::Late,
        _ => Failed::Because(format!("the hookhost at {} {what}: {e}", socket.display())),
    }
}

/// Reads the whole answer (at most [`MAX_ANSWER_BYTES`]), each read
/// bounded by what is left of the time.
fn read_all(stream: &mut UnixStream, until: Instant) -> std::io::Result<Vec<u8>> {
    let mut response = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(response),
            Ok(n) if (response.len() + n) as u64 > MAX_ANSWER_BYTES => {
                return Err(std::io::Error::other("the answer is too long"));
            }
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Connects to the daemon on `socket`, and makes sure it is this user's:
/// the default socket's folder must be private
/// ([`paths::check_private_dir`]), and the process that listens must run
/// as this user (`SO_PEERCRED`). A socket another user put there could
/// otherwise answer every hook.
pub fn connect(socket: &Path, until: Instant) -> Result<UnixStream, Failed> {
    if paths::in_runtime_dir(socket) {
        if let Some(dir) = socket.parent() {
            paths::check_private_dir(dir)
                .map_err(|e| match e {
                    paths::PrivateError::Io { source, .. }
                        if source.kind() == std::io::ErrorKind::NotFound =>
                    {
                        format!("no hookhost answers at {}: {source}", socket.display())
                    }
                    e => format!("refusing the hookhost at {}: {e}", socket.display()),
                })
                .map_err(Failed::Because)?;
        }
    }
    let stream = connect_by(socket, until).map_err(|e| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Failed::Late,
        _ => Failed::Because(format!("no hookhost answers at {}: {e}", socket.display())),
    })?;
    let peer = peer_uid(&stream).map_err(|e| {
        Failed::Because(format!("cannot tell who serves {}: {e}", socket.display()))
    })?;
    let me = paths::my_uid();
    if peer != me {
        return Err(Failed::Because(format!(
            "refusing the hookhost at {}: it runs as uid {peer}, not as you (uid {me}); \
             another user's process may have taken its place",
            socket.display()
        )));
    }
    Ok(stream)
}

/// `connect(2)` to `socket`, waiting at most until `until` for a daemon
/// whose queue of connections is full: the send timeout set first bounds a
/// Unix socket's connect too (std's `UnixStream::connect` would wait for
/// ever). Refused, missing or too long a path: the error, at once.
fn connect_by(socket: &Path, until: Instant) -> std::io::Result<UnixStream> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ErrorKind::TimedOut.into());
    }
    // SAFETY: a plain socket(2); the descriptor is owned by `stream` at
    // once, so it is closed on every path.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    stream.set_write_timeout(Some(left))?;
    let (addr, len) = unix_addr(socket)?;
    loop {
        // SAFETY: `addr` is a valid sockaddr_un of `len` bytes.
        let r = unsafe { libc::connect(fd, (&raw const addr).cast(), len) };
        if r == 0 {
            return Ok(stream);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The `sockaddr_un` of a path, and its length; a path that does not fit
/// (or holds a NUL) is refused as the kernel would.
fn unix_addr(path: &Path) -> std::io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: sockaddr_un is plain old data; all zeroes is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= addr.sun_path.len() || bytes.contains(&0) {
        return Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "the socket path is too long or holds a NUL",
        ));
    }
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    let base = std::mem::offset_of!(libc::sockaddr_un, sun_path);
    Ok((addr, (base + bytes.len() + 1) as libc::socklen_t))
}

/// The uid of the process at the other end of `stream` (`SO_PEERCRED`:
/// the kernel's record of who listened, which the peer cannot forge).
fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: u32::MAX,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, which we own.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// An HTTP response's status and body (the daemon closes after one).
pub fn split_response(response: &[u8]) -> Option<(u16, &[u8])> {
    let end = response.windows(4).position(|w| w == b"\r\n\r\n")?;
    let status_line = response.split(|b| *b == b'\n').next()?;
    let status = std::str::from_utf8(status_line)
        .ok()?
        .split(' ')
        .nth(1)?
        .parse()
        .ok()?;
    Some((status, &response[end + 4..]))
}
