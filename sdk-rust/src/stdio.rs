//! Serving on the process's own stdin and stdout, with the wire protected.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::hook::Hook;
use crate::server::serve_until;

/// Serves `hook` on stdin/stdout until stdin closes or SIGTERM arrives.
///
/// Before serving, the protocol's stdout is moved to a private descriptor
/// and fd 1 is pointed at stderr (fd 0 likewise moves, and fd 0 becomes
/// `/dev/null`). So a `println!` in a handler, or a library writing to
/// stdout, lands in the host's log of this hook's stderr instead of
/// corrupting a message, and a child process the hook starts cannot eat its
/// requests. The private descriptors are close-on-exec.
///
/// On end of input, or SIGTERM, requests still running get a short grace
/// period, then are abandoned, the last answers are flushed, and this
/// returns: well within the host's shutdown grace.
///
/// # Errors
///
/// When the descriptors cannot be set up, or reading stdin fails.
pub async fn serve_stdio<H: Hook>(hook: H) -> io::Result<()> {
    let (input, output) = take_stdio()?;
    let stop = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    serve_until(hook, input, output, stop).await
}

type Input = Pin<Box<dyn AsyncRead + Send>>;
type Output = Pin<Box<dyn AsyncWrite + Send>>;

/// Moves the protocol streams off fds 0 and 1 and wraps them for tokio.
fn take_stdio() -> io::Result<(Input, Output)> {
    let wire_out = dup_cloexec(1)?;
    let wire_in = dup_cloexec(0)?;
    stdout_to_stderr()?;
    if let Ok(null) = File::open("/dev/null") {
        // SAFETY: as above; `null` is open for the duration of the call.
        unsafe {
            libc::dup2(null.as_raw_fd(), 0);
        }
    }
    let input: Input = if is_fifo(&wire_in) {
        // Pipes (what the host gives a hook) go through the reactor:
        // no thread hop per read.
        Box::pin(tokio::net::unix::pipe::Receiver::from_owned_fd(wire_in)?)
    } else {
        Box::pin(tokio::fs::File::from_std(File::from(wire_in)))
    };
    let output: Output = if is_fifo(&wire_out) {
        Box::pin(tokio::net::unix::pipe::Sender::from_owned_fd(wire_out)?)
    } else {
        Box::pin(tokio::fs::File::from_std(File::from(wire_out)))
    };
    Ok((input, output))
}

/// Points fd 1 at stderr, so that a `println!` in a handler, or a library
/// writing to stdout, ends up in the log of the hook's stderr: over stdio
/// because stdout is the wire, over the network because stdout carries
/// only the listening line, which a supervisor may stop reading.
pub(crate) fn stdout_to_stderr() -> io::Result<()> {
    // SAFETY: dup2 on descriptors this process owns; fd 2 stays open.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn dup_cloexec(fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC returns a fresh descriptor or -1.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just created and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

fn is_fifo(fd: &OwnedFd) -> bool {
    // SAFETY: fstat writes into the zeroed struct we own.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd.as_raw_fd(), &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFIFO
    }
}
