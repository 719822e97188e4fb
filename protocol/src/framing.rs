//! Reads `\n`-terminated lines with a hard cap, skipping over-long lines
//! instead of buffering them or giving up on the stream.
//!
//! tokio-util's codecs stop the stream after a decode error, and an
//! unbounded reader lets one hook exhaust the host's memory; here a line
//! past the cap is discarded up to its newline and reported, and reading
//! goes on with the next line.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One read from the stream.
#[derive(Debug, PartialEq, Eq)]
// Closed: a read yields a line, an over-long line, or the end.
#[allow(clippy::exhaustive_enums)]
pub enum Line {
    /// A complete line (without `\n` and a trailing `\r`) is in the buffer.
    Complete,
    /// A line longer than the cap was skipped; its length in bytes.
    TooLong(usize),
    /// The stream ended.
    Eof,
}

/// A line reader over any buffered async stream.
pub struct LineReader<R> {
    inner: R,
    max: Arc<AtomicUsize>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Wraps `inner`, accepting lines of at most `max` bytes.
    pub fn new(inner: R, max: usize) -> Self {
        Self::with_limit(inner, Arc::new(AtomicUsize::new(max)))
    }

    /// Wraps `inner` with a cap someone else may move while lines are
    /// read (a connection raises it while a large request is in flight, so
    /// the answer to it always fits); it is read afresh for every chunk.
    pub fn with_limit(inner: R, max: Arc<AtomicUsize>) -> Self {
        Self { inner, max }
    }

    /// Reads the next line into `buf` (cleared first).
    pub async fn next(&mut self, buf: &mut Vec<u8>) -> std::io::Result<Line> {
        buf.clear();
        let mut skipped: Option<usize> = None;
        loop {
            let avail = self.inner.fill_buf().await?;
            if avail.is_empty() {
                return Ok(match skipped {
                    Some(n) => Line::TooLong(n),
                    None if !buf.is_empty() => {
                        trim_cr(buf);
                        Line::Complete
                    }
                    None => Line::Eof,
                });
            }
            let newline = memchr::memchr(b'\n', avail);
            let chunk = newline.unwrap_or(avail.len());
            match &mut skipped {
                Some(n) => *n += chunk,
                None if buf.len() + chunk > self.max.load(Ordering::Relaxed) => {
                    skipped = Some(buf.len() + chunk);
                    buf.clear();
                    buf.shrink_to(64 * 1024);
                }
                None => buf.extend_from_slice(&avail[..chunk]),
            }
            let consumed = newline.map_or(chunk, |i| i + 1);
            self.inner.consume(consumed);
            if newline.is_some() {
                return Ok(match skipped {
                    Some(n) => Line::TooLong(n),
                    None => {
                        trim_cr(buf);
                        Line::Complete
                    }
                });
            }
        }
    }
}

fn trim_cr(buf: &mut Vec<u8>) {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Result<String, usize>> {
        let mut r = LineReader::new(tokio::io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        loop {
            match r.next(&mut buf).await.expect("in-memory read") {
                Line::Complete => out.push(Ok(String::from_utf8_lossy(&buf).into_owned())),
                Line::TooLong(n) => out.push(Err(n)),
                Line::Eof => return out,
            }
        }
    }

    #[tokio::test]
    async fn an_over_long_line_is_skipped_and_reading_goes_on() {
        let got = lines(b"ok\r\n0123456789abcdef\nnext\nlast-without-newline", 8).await;
        assert_eq!(
            got,
            vec![Ok("ok".into()), Err(16), Ok("next".into()), Err(20)]
        );
        let got = lines(b"short-at-eof", 100).await;
        assert_eq!(got, vec![Ok("short-at-eof".into())]);
    }

    #[tokio::test]
    async fn empty_lines_are_lines() {
        assert_eq!(
            lines(b"\n\na\n", 8).await,
            vec![Ok(String::new()), Ok(String::new()), Ok("a".into())]
        );
    }
}
