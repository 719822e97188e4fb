//! Rows 1 and 13: a child driven over a raw pipe pair by the harness
//! itself, no hookhost in between.
//!
//! 1. the floor: `bench-floor` echoes each line back;
//! 13. the Rust SDK alone: `bench-hook` (row 2's hook) spawned by the
//!     harness, the `hook.hello` exchange done by hand, then before_tool
//!     request lines, the params pre-encoded once and a fresh integer id
//!     per line, each answer matched to its request by id and checked to
//!     be `continue`.
//!
//! Both are driven the same way ([`Pipe`]): sequential calls for latency,
//! then 1, 8 and 64 lines kept outstanding for throughput.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{IN_FLIGHT, Latency, Paths, Plan, Res, Row, params};

pub(super) const FLOOR_ROW: &str = "1. floor: Rust echo child, raw pipe";
pub(super) const SDK_ROW: &str = "13. Rust SDK hook alone: raw pipe driver → `bench-hook`";

/// What one kind of child is sent and what it must answer.
pub(super) trait Wire {
    /// The next request line, newline included.
    fn request(&mut self) -> &[u8];
    /// Checks one answer line (newline included).
    fn answer(&mut self, line: &[u8]) -> Res<()>;
}

/// `bench-floor --ack`'s answer to every line (as in `bench_floor.rs`).
pub(super) const ACK: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":\"continue\"}}\n";

/// The floor's: the same line every time, echoed back (or, from
/// `bench-floor --ack`, answered [`ACK`]).
pub(super) struct Echo {
    line: Vec<u8>,
    /// How long each answer must be.
    answer: usize,
}

impl Echo {
    /// Echoes of `params` serialized as one line.
    pub(super) fn of(params: &Value) -> Res<Echo> {
        let mut line = serde_json::to_vec(params)?;
        line.push(b'\n');
        let answer = line.len();
        Ok(Echo { line, answer })
    }

    /// `params` as one line, each answered [`ACK`] (`bench-floor --ack`).
    pub(super) fn acked(params: &Value) -> Res<Echo> {
        let echo = Echo::of(params)?;
        Ok(Echo {
            answer: ACK.len(),
            ..echo
        })
    }
}

impl Wire for Echo {
    fn request(&mut self) -> &[u8] {
        &self.line
    }

    fn answer(&mut self, line: &[u8]) -> Res<()> {
        if line.len() == self.answer {
            return Ok(());
        }
        Err(format!(
            "the floor answered {} bytes to a {}-byte line, not {}",
            line.len(),
            self.line.len(),
            self.answer
        )
        .into())
    }
}

/// Row 13's: `hook.before_tool` requests with fresh integer ids around
/// params encoded once; answers matched by id.
struct BeforeTool {
    /// The line up to the id.
    head: Vec<u8>,
    /// The line after the id: method, params, newline.
    tail: Vec<u8>,
    line: Vec<u8>,
    next_id: u64,
    outstanding: HashSet<u64>,
}

/// An answer line, as far as the driver reads it.
#[derive(serde::Deserialize)]
struct RawAnswer {
    id: Option<u64>,
    result: Option<Action>,
    error: Option<Value>,
}

#[derive(serde::Deserialize)]
struct Action {
    action: String,
}

impl BeforeTool {
    fn new(params: &Value) -> Res<BeforeTool> {
        let mut tail = b",\"method\":\"hook.before_tool\",\"params\":".to_vec();
        serde_json::to_writer(&mut tail, params)?;
        tail.extend_from_slice(b"}\n");
        Ok(BeforeTool {
            head: b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec(),
            tail,
            line: Vec::with_capacity(512),
            // Id 0 was the hello's.
            next_id: 1,
            outstanding: HashSet::with_capacity(128),
        })
    }
}

impl Wire for BeforeTool {
    fn request(&mut self) -> &[u8] {
        let id = self.next_id;
        self.next_id += 1;
        self.outstanding.insert(id);
        self.line.clear();
        self.line.extend_from_slice(&self.head);
        // Writing to a Vec cannot fail.
        let _ = write!(self.line, "{id}");
        self.line.extend_from_slice(&self.tail);
        &self.line
    }

    fn answer(&mut self, line: &[u8]) -> Res<()> {
        let answer: RawAnswer = serde_json::from_slice(line)
            .map_err(|e| format!("bench-hook wrote a line that is not a response ({e})"))?;
        let id = answer.id.ok_or("bench-hook answered without an id")?;
        if !self.outstanding.remove(&id) {
            return Err(format!("bench-hook answered id {id}, which is not outstanding").into());
        }
        match (answer.result, answer.error) {
            (Some(r), None) if r.action == "continue" => Ok(()),
            (Some(r), None) => Err(format!("expected continue, got {}", r.action).into()),
            (_, error) => Err(format!("bench-hook answered an error: {error:?}").into()),
        }
    }
}

/// A child on a pipe pair, driven line by line.
pub(super) struct Pipe<W> {
    child: Child,
    w: BufWriter<ChildStdin>,
    r: BufReader<ChildStdout>,
    wire: W,
    buf: Vec<u8>,
}

impl<W: Wire> Pipe<W> {
    /// Spawns `program` with `args`, its stdin and stdout ours.
    pub(super) fn spawn(program: &Path, args: &[&str], wire: W) -> Res<Pipe<W>> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let w = BufWriter::with_capacity(64 * 1024, child.stdin.take().ok_or("no stdin")?);
        let r = BufReader::with_capacity(64 * 1024, child.stdout.take().ok_or("no stdout")?);
        Ok(Pipe {
            child,
            w,
            r,
            wire,
            buf: Vec::with_capacity(1024),
        })
    }

    /// Reads one line into `buf`.
    async fn read_line(&mut self) -> Res<()> {
        self.buf.clear();
        if self.r.read_until(b'\n', &mut self.buf).await? == 0 {
            return Err("the child closed its stdout".into());
        }
        Ok(())
    }

    async fn read_one(&mut self) -> Res<()> {
        self.read_line().await?;
        self.wire.answer(&self.buf)
    }

    async fn call(&mut self) -> Res<()> {
        self.w.write_all(self.wire.request()).await?;
        self.w.flush().await?;
        self.read_one().await
    }

    /// `n` sequential calls, each timed, in nanoseconds.
    pub(super) async fn samples(&mut self, n: usize) -> Res<Vec<u64>> {
        super::samples(self, n).await
    }

    /// Keeps `in_flight` lines outstanding for `window`; calls per second.
    async fn pipelined(&mut self, in_flight: usize, window: Duration) -> Res<f64> {
        let start = Instant::now();
        let end = start + window;
        let (mut outstanding, mut done) = (0usize, 0u64);
        loop {
            if Instant::now() < end {
                while outstanding < in_flight {
                    self.w.write_all(self.wire.request()).await?;
                    outstanding += 1;
                }
                self.w.flush().await?;
            }
            if outstanding == 0 {
                break;
            }
            self.read_one().await?;
            outstanding -= 1;
            done += 1;
            // Take every answer that is already here before refilling.
            while outstanding > 0 && self.r.buffer().contains(&b'\n') {
                self.read_one().await?;
                outstanding -= 1;
                done += 1;
            }
        }
        Ok(done as f64 / start.elapsed().as_secs_f64())
    }

    /// Closes the child's stdin; it must exit 0 within 5 s.
    pub(super) async fn close(self) -> Res<()> {
        let Pipe { child, w, .. } = self;
        drop(w);
        exits_after_eof(child, "the child", Duration::from_secs(5)).await
    }
}

impl<W: Wire> super::Call for Pipe<W> {
    async fn call_once(&mut self) -> Res<()> {
        self.call().await
    }
}

/// Waits for `child`, whose stdin was just closed, to exit 0 within
/// `grace`; kills it if it does not.
pub(super) async fn exits_after_eof(mut child: Child, who: &str, grace: Duration) -> Res<()> {
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(status) => match status? {
            s if s.success() => Ok(()),
            s => Err(format!("{who} exited with {s}").into()),
        },
        Err(_) => {
            let _ = child.kill().await;
            let s = grace.as_secs();
            Err(format!("{who} did not exit within {s} s of end of input").into())
        }
    }
}

/// A warm-up, sequential latency, then throughput at each in-flight level;
/// the child is closed after.
async fn pipe_row<W: Wire>(name: &'static str, mut pipe: Pipe<W>, plan: Plan) -> Res<Row> {
    for _ in 0..plan.warmup {
        pipe.call().await?;
    }
    let latency = Latency::of(pipe.samples(plan.sequential).await?);
    let mut throughput = [0.0; 3];
    for (i, n) in IN_FLIGHT.iter().enumerate() {
        throughput[i] = pipe.pipelined(*n, plan.window).await?;
    }
    pipe.close().await?;
    Ok(Row {
        name,
        latency,
        throughput,
    })
}

/// Row 1.
pub(super) async fn floor_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let pipe = Pipe::spawn(&paths.bin("bench-floor"), &[], Echo::of(&params())?)?;
    pipe_row(FLOOR_ROW, pipe, plan).await
}

/// Row 13.
pub(super) async fn sdk_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let mut pipe = Pipe::spawn(&paths.bin("bench-hook"), &[], BeforeTool::new(&params())?)?;
    hello(&mut pipe).await?;
    pipe_row(SDK_ROW, pipe, plan).await
}

/// The handshake as the host does it (spec/protocol.md §4): `hook.hello`
/// with id 0 before anything else; the answer must declare before_tool.
async fn hello(pipe: &mut Pipe<BeforeTool>) -> Res<()> {
    let request = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "hook.hello",
        "params": {"name": "bench", "version": 1, "host": {"name": "hookhost-bench", "version": "0"}}
    });
    let mut line = serde_json::to_vec(&request)?;
    line.push(b'\n');
    pipe.w.write_all(&line).await?;
    pipe.w.flush().await?;
    let read = tokio::time::timeout(Duration::from_secs(5), pipe.read_line()).await;
    read.map_err(|_| "bench-hook did not answer hook.hello within 5 s")??;
    let answer: Value = serde_json::from_slice(&pipe.buf)?;
    let declared = &answer["result"]["intercept"];
    if answer["id"] == 0
        && declared
            .as_array()
            .is_some_and(|a| a.contains(&json!("before_tool")))
    {
        return Ok(());
    }
    Err(format!("bench-hook's hello answer does not declare before_tool: {answer}").into())
}
