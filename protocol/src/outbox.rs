//! The write side of a line stream (a hook's stdin, the sidecar's and a
//! Rust SDK hook's stdout), shared by every sender. A sender that finds
//! nobody writing writes its line itself, at once, in the poll that sends
//! it: no queue, no wake-up of another task, no copy. Only what the pipe
//! does not take right away (a full pipe buffer, a line already queued
//! before it) is queued, in order, for the writer task, which owns the
//! pipe while it waits for room. So lines never interleave and keep their
//! order, and a sender's future can be dropped at any await without
//! tearing a line: the direct write never waits.

use std::io::IoSlice;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::time::{Instant, timeout_at};

/// Bytes waiting for the writer task beyond which senders wait (bounded by
/// their deadlines) instead of growing memory: a hook that stops reading
/// its stdin holds back its callers, not the host's memory. A line longer
/// than this is still taken when nothing else waits.
const QUEUE_BYTES: usize = 1 << 20;

type Pipe = Pin<Box<dyn AsyncWrite + Send>>;

/// Why a line was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The pipe broke, or it was closed on purpose.
    #[error("the stream is closed")]
    Closed,
    /// No room before the deadline: the reader is not reading.
    #[error("no room before the deadline: the other side is not reading")]
    Full,
}

/// The write side of one line stream; share it in an `Arc`.
pub struct Outbox {
    state: Mutex<State>,
    /// Wakes the writer task: something was queued, or stdin should close.
    work: Notify,
    /// Wakes senders waiting for room, and `close` waiting for the end.
    progress: Notify,
}

struct State {
    /// The pipe, when nobody is writing; the writer task takes it while it
    /// writes what is queued.
    pipe: Option<Pipe>,
    /// Bytes not yet written, in order.
    queued: Vec<u8>,
    /// No more lines are taken: stdin closes once `queued` is written.
    closing: bool,
    /// Writing failed (the reader closed its end), or the writer is done.
    over: bool,
    /// How a sender's own write failed, for the writer task to report.
    failed: Option<std::io::ErrorKind>,
}

impl Outbox {
    /// An outbox over `pipe`; run [`Outbox::drive`] as its writer task
    /// (nothing queued is written without it).
    pub fn new<W: AsyncWrite + Send + 'static>(pipe: W) -> Arc<Outbox> {
        Arc::new(Outbox {
            state: Mutex::new(State {
                pipe: Some(Box::pin(pipe)),
                queued: Vec::new(),
                closing: false,
                over: false,
                failed: None,
            }),
            work: Notify::new(),
            progress: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Each critical section leaves the state whole; a panic inside one
        // (there is none to expect) cannot make it unusable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends `line` (a newline is added), waiting for room until
    /// `deadline`.
    pub async fn send(&self, line: &[u8], deadline: Instant) -> Result<(), SendError> {
        self.send_within(line, Some(deadline)).await
    }

    /// Sends `line`, waiting for room as long as the reader takes: for
    /// answers, whose reader (the host, an agent) gives up on its own
    /// deadlines. It fails only when the stream is closed.
    pub async fn send_when_room(&self, line: &[u8]) -> Result<(), SendError> {
        self.send_within(line, None).await
    }

    async fn send_within(&self, line: &[u8], deadline: Option<Instant>) -> Result<(), SendError> {
        loop {
            let mut progress = std::pin::pin!(self.progress.notified());
            progress.as_mut().enable();
            if let Some(sent) = self.try_send(line) {
                return sent;
            }
            let Some(at) = deadline else {
                progress.await;
                continue;
            };
            if timeout_at(at, progress).await.is_err() {
                return Err(SendError::Full);
            }
        }
    }

    /// Sends `line` now or never: a full queue refuses it.
    pub fn send_now(&self, line: &[u8]) -> Result<(), SendError> {
        self.try_send(line).unwrap_or(Err(SendError::Full))
    }

    /// Writes or queues `line` and its newline; `None` when there is no
    /// room.
    fn try_send(&self, line: &[u8]) -> Option<Result<(), SendError>> {
        let parts: [&[u8]; 2] = [line, b"\n"];
        let len = line.len() + 1;
        let mut s = self.lock();
        if s.over || s.closing {
            return Some(Err(SendError::Closed));
        }
        if !s.queued.is_empty() && s.queued.len() + len > QUEUE_BYTES {
            return None;
        }
        let written = match (s.queued.is_empty(), s.pipe.as_mut()) {
            (true, Some(pipe)) => match write_now(pipe, &parts) {
                Ok(n) => n,
                Err(e) => {
                    s.over = true;
                    s.failed = Some(e.kind());
                    drop(s);
                    self.work.notify_one();
                    return Some(Err(SendError::Closed));
                }
            },
            _ => 0,
        };
        if written < len {
            queue_rest(&mut s.queued, &parts, written);
            drop(s);
            self.work.notify_one();
        }
        Some(Ok(()))
    }

    /// Stops taking lines and has stdin closed once what is queued is
    /// written. Waits at most until `deadline` for that; whether it ended.
    pub async fn close(&self, deadline: Instant) -> bool {
        loop {
            let mut progress = std::pin::pin!(self.progress.notified());
            progress.as_mut().enable();
            {
                let mut s = self.lock();
                if s.over {
                    return true;
                }
                s.closing = true;
            }
            self.work.notify_one();
            if timeout_at(deadline, progress).await.is_err() {
                return false;
            }
        }
    }

    /// The writer task: writes what senders queued, and shuts the pipe
    /// down when asked ([`Outbox::close`]). It ends when the pipe breaks
    /// (the error) or is closed, dropping the pipe if it holds it.
    pub async fn drive(self: Arc<Outbox>) -> std::io::Result<()> {
        let mut batch = Vec::new();
        loop {
            let (mut pipe, closing) = match self.take_work(&mut batch) {
                Work::Wait => {
                    self.work.notified().await;
                    continue;
                }
                Work::Over(failed) => {
                    self.end();
                    return failed.map_or(Ok(()), |kind| Err(kind.into()));
                }
                Work::Write(pipe, closing) => (pipe, closing),
            };
            let written = async {
                pipe.write_all(&batch).await?;
                pipe.flush().await
            }
            .await;
            batch.clear();
            if written.is_err() {
                self.end();
                return written;
            }
            if closing && self.lock().queued.is_empty() {
                let _ = pipe.shutdown().await;
                break;
            }
            self.lock().pipe = Some(pipe);
            self.progress.notify_waiters();
        }
        self.end();
        Ok(())
    }

    fn end(&self) {
        self.lock().over = true;
        self.progress.notify_waiters();
    }

    /// What the writer task does next. Moves what is queued into `batch`.
    fn take_work(&self, batch: &mut Vec<u8>) -> Work {
        let mut s = self.lock();
        if s.over {
            // A direct write found the pipe broken: drop it with the task.
            s.pipe = None;
            return Work::Over(s.failed);
        }
        if s.queued.is_empty() && !s.closing {
            return Work::Wait;
        }
        let Some(pipe) = s.pipe.take() else {
            return Work::Wait;
        };
        std::mem::swap(batch, &mut s.queued);
        Work::Write(pipe, s.closing)
    }
}

/// The writer task's next step.
enum Work {
    /// Nothing to write: wait to be woken.
    Wait,
    /// The pipe broke under a sender (how), or the writer is done.
    Over(Option<std::io::ErrorKind>),
    /// Write the batch through the pipe, then close it if `true`.
    Write(Pipe, bool),
}

/// Writes what the pipe takes without waiting; how many bytes it took.
fn write_now(pipe: &mut Pipe, parts: &[&[u8]; 2]) -> std::io::Result<usize> {
    let mut cx = Context::from_waker(Waker::noop());
    let total = parts[0].len() + parts[1].len();
    let mut done = 0;
    while done < total {
        let [a, b] = rest(parts, done);
        let slices = [IoSlice::new(a), IoSlice::new(b)];
        match pipe.as_mut().poll_write_vectored(&mut cx, &slices) {
            Poll::Ready(Ok(0)) => return Err(std::io::ErrorKind::WriteZero.into()),
            Poll::Ready(Ok(n)) => done += n,
            Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Pending => return Ok(done),
        }
    }
    Ok(done)
}

/// The line and its newline after the first `skip` bytes.
fn rest<'a>(parts: &[&'a [u8]; 2], skip: usize) -> [&'a [u8]; 2] {
    let [line, end] = *parts;
    match line.get(skip..) {
        Some(left) => [left, end],
        None => [&[], end.get(skip - line.len()..).unwrap_or_default()],
    }
}

/// Appends what is left of `parts` after `written` bytes.
fn queue_rest(queued: &mut Vec<u8>, parts: &[&[u8]; 2], written: usize) {
    for slice in rest(parts, written) {
        queued.extend_from_slice(slice);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

    use super::*;

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    /// An outbox over a pipe that holds only `room` bytes, its writer
    /// running; the hook's end of the pipe.
    fn outbox(room: usize) -> (Arc<Outbox>, tokio::io::DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(room);
        let out = Outbox::new(ours);
        tokio::spawn(out.clone().drive());
        (out, theirs)
    }

    #[tokio::test]
    async fn lines_from_many_senders_arrive_whole_and_each_senders_in_order() {
        let (out, theirs) = outbox(64);
        let mut senders = Vec::new();
        for s in 0..8 {
            let out = out.clone();
            senders.push(tokio::spawn(async move {
                for i in 0..50 {
                    let line = format!("{s}:{i}:{}", "x".repeat(40 + 7 * i));
                    out.send(line.as_bytes(), soon(5000)).await.expect("sent");
                }
            }));
        }
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(theirs).lines();
            let mut got = Vec::new();
            while let Some(line) = lines.next_line().await.expect("read") {
                got.push(line);
            }
            got
        });
        for s in senders {
            s.await.expect("sender");
        }
        assert!(out.close(soon(5000)).await, "closed in time");
        let got = reader.await.expect("reader");
        assert_eq!(got.len(), 400);
        for s in 0..8 {
            let mine: Vec<&String> = got
                .iter()
                .filter(|l| l.starts_with(&format!("{s}:")))
                .collect();
            for (i, line) in mine.iter().enumerate() {
                assert_eq!(**line, format!("{s}:{i}:{}", "x".repeat(40 + 7 * i)));
            }
        }
    }

    #[tokio::test]
    async fn a_hook_that_does_not_read_holds_senders_back_until_their_deadline() {
        let (out, _theirs) = outbox(64);
        let line = vec![b'x'; 1024];
        // Fill the queue; once the writer has taken it as its batch (and
        // is stuck writing it), fill it again. What waits stays bounded.
        let (mut taken, mut refused) = (0, 0);
        while refused < 2 {
            match out.send(&line, soon(50)).await {
                Ok(()) => taken += line.len() + 1,
                Err(e) => {
                    assert_eq!(e, SendError::Full);
                    refused += 1;
                }
            }
            assert!(taken <= 3 * QUEUE_BYTES, "the queue grows without bound");
        }
        assert!(
            taken >= 2 * (QUEUE_BYTES - line.len()),
            "only {taken} bytes"
        );
        assert_eq!(out.send_now(b"more"), Err(SendError::Full));
        assert!(!out.close(soon(50)).await, "the writer is stuck");
    }

    #[tokio::test]
    async fn close_writes_what_was_queued_then_ends_stdin_and_refuses_more() {
        let (out, mut theirs) = outbox(16);
        for i in 0..10 {
            out.send(format!("line {i}").as_bytes(), soon(5000))
                .await
                .expect("sent");
        }
        let reader = tokio::spawn(async move {
            let mut all = String::new();
            theirs.read_to_string(&mut all).await.expect("read to EOF");
            all
        });
        assert!(out.close(soon(5000)).await);
        let all = reader.await.expect("reader");
        let want: String = (0..10).map(|i| format!("line {i}\n")).collect();
        assert_eq!(all, want);
        assert_eq!(out.send(b"late", soon(100)).await, Err(SendError::Closed));
    }

    #[tokio::test]
    async fn a_closed_pipe_fails_the_sender_and_ends_the_writer() {
        let (ours, theirs) = tokio::io::duplex(64);
        let out = Outbox::new(ours);
        let writer = tokio::spawn(out.clone().drive());
        drop(theirs);
        assert_eq!(out.send(b"hello", soon(1000)).await, Err(SendError::Closed));
        tokio::time::timeout(Duration::from_secs(5), writer)
            .await
            .expect("the writer ended")
            .expect("no panic")
            .expect_err("the pipe broke");
    }

    #[test]
    fn the_rest_of_a_line_after_a_partial_write() {
        let parts: [&[u8]; 2] = [b"abc", b"\n"];
        assert_eq!(rest(&parts, 0), [&b"abc"[..], b"\n"]);
        assert_eq!(rest(&parts, 2), [&b"c"[..], b"\n"]);
        assert_eq!(rest(&parts, 3), [&b""[..], b"\n"]);
        assert_eq!(rest(&parts, 4), [&b""[..], b""]);
    }
}
