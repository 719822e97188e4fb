//! The sidecar over a line stream (`hookhost serve --stdio`): one JSON
//! message per line each way.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};

use super::budget::Charge;
use super::session::{Inbound, Session};
use super::{MAX_REQUEST_BYTES, Sidecar};
use hookhost::protocol::framing::{Line, LineReader};
use hookhost::protocol::outbox::Outbox;

/// How long the last answers may take to be written once input ends.
const WRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves one connection until `input` ends, then waits for every request
/// read so far to be answered and written. The host is not shut down here.
pub async fn serve<R, W>(sidecar: Arc<Sidecar>, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let pool = sidecar.bytes.clone();
    let out = Outbox::new(output);
    let writer = tokio::spawn(out.clone().drive());
    let mut session = Session::over_lines(sidecar, out.clone());
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
    // Every answer is written or queued: have the queue written, then the
    // stream closed; the writer has then ended, and its result says
    // whether writing failed.
    if !out.close(tokio::time::Instant::now() + WRITE_WAIT).await {
        writer.abort();
        return Err(std::io::Error::other(
            "the agent stopped reading its answers",
        ));
    }
    writer.await.map_err(std::io::Error::other)?
}
