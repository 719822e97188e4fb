//! The sidecar over a line stream (`hookhost serve --stdio`): one JSON
//! message per line each way.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use super::budget::Charge;
use super::session::{Inbound, Session};
use super::{MAX_REQUEST_BYTES, Sidecar};
use hookhost::protocol::framing::{Line, LineReader};

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
