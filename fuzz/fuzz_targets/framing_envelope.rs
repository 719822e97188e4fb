//! Framing and envelope decoding, as a hook's stdout reaches the host.
//!
//! Proves, for any bytes: `LineReader` yields exactly the lines a plain
//! split on `\n` gives (one trailing `\r` trimmed), skips every line longer
//! than the cap as `TooLong(its length)` and never returns one, and then
//! stays at EOF; every complete line goes through `Message::decode` as
//! `Connection::dispatch` does without panicking; a decoded message
//! re-encodes to a line that decodes to the same message; and the -32601
//! answer the host gives a hook's request decodes as an error response
//! with that request's id.
//!
//! Input: byte 0 sets the read buffer's size (1..=256 bytes, so lines
//! straddle refills), byte 1 the line cap (1..=4081 bytes), the rest is the
//! stream.
#![no_main]

use hookhost_protocol::framing::{Line, LineReader};
use hookhost_protocol::envelope::{DecodeError, Message, Response};
use hookhost_protocol::{ErrorObject, error_code};
use libfuzzer_sys::fuzz_target;

/// The reference framing: split on `\n`, no empty piece after the last one.
fn expected(mut rest: &[u8], max: usize) -> Vec<Result<&[u8], usize>> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (seg, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        out.push(if seg.len() > max {
            Err(seg.len())
        } else {
            Ok(seg.strip_suffix(b"\r").unwrap_or(seg))
        });
        rest = next;
    }
    out
}

fn envelope(line: &[u8]) {
    // Connection::dispatch ignores blank lines before decoding.
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let msg = match Message::decode(line) {
        Ok(msg) => msg,
        Err(DecodeError::Parse(_)) => return,
        Err(DecodeError::Invalid { reason, .. }) => {
            assert!(!reason.is_empty());
            return;
        }
        // A kind of decode error added later: nothing to re-encode.
        Err(_) => return,
    };
    let again = Message::decode(&msg.encode()).expect("an encoded message decodes");
    assert_eq!(msg, again, "re-encoding changed the message");
    if let Message::Request(req) = msg {
        let reply = Message::Response(Response {
            id: Some(req.id.clone()),
            payload: Err(ErrorObject::new(
                error_code::METHOD_NOT_FOUND,
                format!("the host offers no method {:?}", req.method),
            )),
        });
        match Message::decode(&reply.encode()) {
            Ok(Message::Response(r)) => {
                assert_eq!(r.id, Some(req.id));
                assert_eq!(
                    r.payload.map_err(|e| e.code),
                    Err(error_code::METHOD_NOT_FOUND)
                );
            }
            other => panic!("the -32601 answer decodes as {other:?}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [buf_size, cap, stream @ ..] = data else {
        return;
    };
    let buf_size = 1 + usize::from(*buf_size);
    let max = 1 + usize::from(*cap) * 16;
    let want = expected(stream, max);
    let reader = tokio::io::BufReader::with_capacity(buf_size, stream);
    let mut reader = LineReader::new(reader, max);
    let mut buf = Vec::new();
    futures::executor::block_on(async {
        for (i, line) in want.iter().enumerate() {
            match reader.next(&mut buf).await.expect("in-memory read") {
                Line::Complete => {
                    assert!(buf.len() <= max, "line {i} is over the cap");
                    assert_eq!(Ok(buf.as_slice()), *line, "line {i}");
                    envelope(&buf);
                }
                Line::TooLong(n) => assert_eq!(Err(n), *line, "line {i}"),
                Line::Eof => panic!("EOF after {i} lines, expected {}", want.len()),
            }
        }
        for _ in 0..2 {
            let got = reader.next(&mut buf).await.expect("in-memory read");
            assert_eq!(got, Line::Eof, "a line after the last one");
        }
    });
});
