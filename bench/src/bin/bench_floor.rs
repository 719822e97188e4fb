//! The floor of the comparison: echoes each line of stdin back on stdout,
//! with no JSON-RPC and no parsing. A batch of lines that arrived together
//! is answered with one write, so pipelined callers are not held back.
//!
//! With `--ack` it answers each line with the short line `ACK` below
//! instead of echoing it: the floor for large requests whose answers stay
//! small, as a hook's do.

use std::io::{BufRead, BufReader, BufWriter, Write};

/// `--ack`'s answer, about the size of a hook's `continue`.
const ACK: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":\"continue\"}}\n";

fn main() -> std::io::Result<()> {
    let ack = std::env::args().skip(1).any(|a| a == "--ack");
    let stdin = std::io::stdin().lock();
    let mut input = BufReader::with_capacity(64 * 1024, stdin);
    let mut output = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        output.write_all(if ack { ACK } else { &line })?;
        // Flush only when nothing more is already buffered.
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}
