//! `GET /ui/api/events`: the decisions as server-sent events. The page
//! gets the kept ones first, then each as it is answered. A comment line
//! every [`BEAT`] finds a closed page (the write fails) and checks the
//! visitor's credential again, so a revoked token ends its stream. At
//! most [`MAX_STREAMS`] streams are open at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::broadcast::error::RecvError;

use super::super::Sidecar;
use super::super::access::Access;
use super::super::http::Head;
use super::Visitor;

/// How often a quiet stream sends a comment.
const BEAT: Duration = Duration::from_secs(10);
/// Streams open at once, across pages.
pub(crate) const MAX_STREAMS: usize = 16;

/// Streams open now.
pub(crate) static OPEN: AtomicUsize = AtomicUsize::new(0);

/// Counts one open stream while it lives.
pub(crate) struct Held;

impl Held {
    /// A place for one more stream, if there is one.
    pub(crate) fn take() -> Option<Held> {
        let before = OPEN.fetch_add(1, Ordering::Relaxed);
        if before >= MAX_STREAMS {
            OPEN.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Held)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        OPEN.fetch_sub(1, Ordering::Relaxed);
    }
}

fn frame(id: u64, line: &str) -> String {
    format!("id: {id}\ndata: {line}\n\n")
}

/// Writes the stream until the page goes, the visitor's credential no
/// longer holds, or the feed ends; the connection is then closed.
pub(crate) async fn run<W: AsyncWrite + Unpin>(
    sidecar: &Sidecar,
    head: &Head,
    access: Option<&Access>,
    writer: &mut W,
    _held: Held,
) -> std::io::Result<()> {
    let (kept, mut rx) = sidecar.ui.feed.subscribe();
    let mut out = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nretry: 2000\n\n",
    );
    for (id, line) in &kept {
        out.push_str(&frame(*id, line));
    }
    writer.write_all(out.as_bytes()).await?;
    writer.flush().await?;
    loop {
        let next = tokio::time::timeout(BEAT, rx.recv()).await;
        let text = match next {
            Ok(Ok((id, line))) => frame(id, &line),
            Ok(Err(RecvError::Lagged(n))) => format!("event: lagged\ndata: {n}\n\n"),
            Ok(Err(RecvError::Closed)) => return Ok(()),
            Err(_) => {
                let still = sidecar.ui.logins.admit(head, access);
                if !matches!(still, Ok(Visitor::Known { .. })) {
                    return Ok(());
                }
                ": still here\n\n".to_string()
            }
        };
        writer.write_all(text.as_bytes()).await?;
        writer.flush().await?;
    }
}
