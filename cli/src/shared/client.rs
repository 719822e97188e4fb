//! The daemon's side door: one HTTP/1.1 request over its Unix socket,
//! blocking and without a runtime, for `hookhost relay` (which must start
//! fast) and `hookhost status`.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

use super::paths;

/// The largest answer read from the daemon.
const MAX_ANSWER_BYTES: u64 = 32 * 1024 * 1024;

/// Sends `method path` with `headers` (whole lines, each ending `\r\n`)
/// and `body`, and returns the body of a 200 answer. `Err` says why there
/// is none: nobody listening, a broken connection, another status.
pub fn request(
    socket: &Path,
    method: &str,
    path: &str,
    headers: &str,
    body: &[u8],
) -> Result<Vec<u8>, String> {
    let mut stream = connect(socket)?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n{headers}\r\n",
        body.len()
    );
    let lost = |e: std::io::Error| format!("the hookhost at {} failed: {e}", socket.display());
    stream.write_all(head.as_bytes()).map_err(lost)?;
    stream.write_all(body).map_err(lost)?;
    let mut response = Vec::new();
    stream
        .take(MAX_ANSWER_BYTES)
        .read_to_end(&mut response)
        .map_err(lost)?;
    match split_response(&response) {
        Some((200, body)) => Ok(body.to_vec()),
        Some((status, body)) => {
            let body = String::from_utf8_lossy(body);
            Err(format!("hookhost answered {status}: {}", body.trim()))
        }
        None => Err(format!(
            "the hookhost at {} gave no answer",
            socket.display()
        )),
    }
}

/// Connects to the daemon on `socket`, and makes sure it is this user's:
/// the default socket's folder must be private
/// ([`paths::check_private_dir`]), and the process that listens must run
/// as this user (`SO_PEERCRED`). A socket another user put there could
/// otherwise answer every hook.
pub fn connect(socket: &Path) -> Result<UnixStream, String> {
    if paths::in_runtime_dir(socket) {
        if let Some(dir) = socket.parent() {
            paths::check_private_dir(dir).map_err(|e| match e {
                paths::PrivateError::Io { source, .. }
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    format!("no hookhost answers at {}: {source}", socket.display())
                }
                e => format!("refusing the hookhost at {}: {e}", socket.display()),
            })?;
        }
    }
    let stream = UnixStream::connect(socket)
        .map_err(|e| format!("no hookhost answers at {}: {e}", socket.display()))?;
    let peer = peer_uid(&stream)
        .map_err(|e| format!("cannot tell who serves {}: {e}", socket.display()))?;
    let me = paths::my_uid();
    if peer != me {
        return Err(format!(
            "refusing the hookhost at {}: it runs as uid {peer}, not as you (uid {me}); \
             another user's process may have taken its place",
            socket.display()
        ));
    }
    Ok(stream)
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
fn split_response(response: &[u8]) -> Option<(u16, &[u8])> {
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
