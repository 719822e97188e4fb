//! The HTTP route's floor (a row of the harness): the smallest HTTP/1.1
//! server on hookhost's own stack (tokio's multi-threaded runtime, one task
//! per kept-alive connection, the head read line by line and the body by
//! its `Content-Length`, as `hookhost serve` reads them) that answers every
//! request with the bytes the Claude Code route answers an allow with:
//! status 200, JSON `{}`. No chain, no JSON parsing: what is left is the
//! cost of the stack itself.
//!
//! Prints `listening on ws://ADDR` (as `hookhost serve --listen` does, so
//! the harness starts both alike) and serves until killed.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// The answer `hookhost serve` gives an allowed Claude Code event.
const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
Content-Length: 2\r\nConnection: keep-alive\r\n\r\n{}";

fn main() -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        println!("listening on ws://{}", listener.local_addr()?);
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            tokio::spawn(async move {
                let _ = serve(stream).await;
            });
        }
    })
}

/// Answers every request on one connection until the peer closes it.
async fn serve(stream: TcpStream) -> io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::with_capacity(16 * 1024, read);
    let mut line = Vec::with_capacity(256);
    let mut body = Vec::with_capacity(1024);
    loop {
        let mut len = 0;
        loop {
            line.clear();
            if read.read_until(b'\n', &mut line).await? == 0 {
                return Ok(());
            }
            if line == b"\r\n" {
                break;
            }
            if let Some(value) = content_length(&line) {
                len = value;
            }
        }
        body.resize(len, 0);
        read.read_exact(&mut body).await?;
        write.write_all(ANSWER).await?;
    }
}

/// The value of a `Content-Length` header line.
fn content_length(line: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(line).ok()?;
    let (name, value) = text.split_once(':')?;
    if !name.eq_ignore_ascii_case("content-length") {
        return None;
    }
    value.trim().parse().ok()
}
