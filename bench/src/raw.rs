//! Row 1, the floor: raw lines over a pipe pair to `bench-floor`, no
//! hookhost in between.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{IN_FLIGHT, Latency, Paths, Plan, Res, Row, params};

/// The floor: raw lines over a pipe pair to `bench-floor`.
struct Floor {
    child: Child,
    w: BufWriter<ChildStdin>,
    r: BufReader<ChildStdout>,
    line: Vec<u8>,
    buf: Vec<u8>,
}

impl Floor {
    fn start(paths: &Paths) -> Res<Floor> {
        let mut child = Command::new(paths.bin("bench-floor"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let w = BufWriter::with_capacity(64 * 1024, child.stdin.take().ok_or("no stdin")?);
        let r = BufReader::with_capacity(64 * 1024, child.stdout.take().ok_or("no stdout")?);
        let mut line = serde_json::to_vec(&params())?;
        line.push(b'\n');
        Ok(Floor {
            child,
            w,
            r,
            line,
            buf: Vec::with_capacity(1024),
        })
    }

    async fn read_one(&mut self) -> Res<()> {
        self.buf.clear();
        if self.r.read_until(b'\n', &mut self.buf).await? == 0 {
            return Err("the floor child closed its stdout".into());
        }
        Ok(())
    }

    async fn call(&mut self) -> Res<()> {
        self.w.write_all(&self.line).await?;
        self.w.flush().await?;
        self.read_one().await
    }

    /// Keeps `in_flight` lines outstanding for `window`; calls per second.
    async fn pipelined(&mut self, in_flight: usize, window: Duration) -> Res<f64> {
        let start = Instant::now();
        let end = start + window;
        let (mut outstanding, mut done) = (0usize, 0u64);
        loop {
            if Instant::now() < end {
                while outstanding < in_flight {
                    self.w.write_all(&self.line).await?;
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
}

pub(super) async fn floor_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let mut f = Floor::start(paths)?;
    for _ in 0..plan.warmup {
        f.call().await?;
    }
    let mut samples = Vec::with_capacity(plan.sequential);
    for _ in 0..plan.sequential {
        let t = Instant::now();
        f.call().await?;
        samples.push(t.elapsed().as_nanos() as u64);
    }
    let mut throughput = [0.0; 3];
    for (i, n) in IN_FLIGHT.iter().enumerate() {
        throughput[i] = f.pipelined(*n, plan.window).await?;
    }
    drop(f.w);
    let _ = f.child.wait().await;
    Ok(Row {
        name: "1. floor: Rust echo child, raw pipe",
        latency: Latency::of(samples),
        throughput,
    })
}
