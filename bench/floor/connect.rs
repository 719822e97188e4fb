//! The relay's floor (a row of the harness): the smallest program that
//! does the outward part of what `hookhost relay` does per call. It reads
//! the event on stdin to its end, connects to the Unix socket named by its
//! one argument, and exits 0 (1 if the connection fails). The harness
//! builds it with `rustc -O -C target-feature=+crt-static`: a static
//! executable, the cheapest start a native program gets on this machine.

use std::io::Read;
use std::os::unix::net::UnixStream;

fn main() {
    let mut event = Vec::new();
    let read = std::io::stdin().read_to_end(&mut event);
    let socket = std::env::args_os().nth(1);
    let connected = socket.map(UnixStream::connect);
    if read.is_err() || !matches!(connected, Some(Ok(_))) {
        std::process::exit(1);
    }
}
