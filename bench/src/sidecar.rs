//! Row 6, the sidecar: `hookhost serve --stdio` driven as an agent in
//! another language would drive it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};

use super::probe::memory_of;
use super::raw::exits_after_eof;
use super::{Paths, Plan, Res, Row, SIDECAR_ROW, Target, measure, params};

/// What row 6 measures besides latency and throughput.
#[derive(Default)]
pub(super) struct SidecarFigures {
    /// From spawning `hookhost serve` to the first answer (it starts every
    /// hook before it reads a request), in ms.
    pub(super) ready_ms: f64,
    /// The sidecar process's `VmHWM` after the row (its hook not counted).
    pub(super) hwm_kib: u64,
}

/// An agent's side of `hookhost serve --stdio`: one writer task owns the
/// child's stdin, one reader task its stdout, and answers find their
/// caller by id, so any number of calls can be in flight.
pub(super) struct SidecarClient {
    next_id: AtomicU64,
    lines: mpsc::Sender<Vec<u8>>,
    /// Callers waiting for an answer.
    pending: Waiting,
}

/// Callers waiting, by id; `None` once the reader has stopped.
type Waiting = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>>;

/// A response line, as far as the client reads it.
#[derive(serde::Deserialize)]
struct Answer {
    id: Option<u64>,
    result: Option<Value>,
    error: Option<Value>,
}

/// A request line; borrows the params, as an agent serializing its own
/// object per call would.
#[derive(serde::Serialize)]
struct Request<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'static str,
    params: &'a Value,
}

impl SidecarClient {
    /// Takes over the child's pipes.
    fn start(stdin: ChildStdin, stdout: ChildStdout) -> SidecarClient {
        let (lines, mut rx) = mpsc::channel::<Vec<u8>>(1024);
        tokio::spawn(async move {
            let mut w = BufWriter::with_capacity(64 * 1024, stdin);
            while let Some(line) = rx.recv().await {
                w.write_all(&line).await?;
                // Flush once nothing else is queued: a burst goes out in
                // one write, a lone call at once.
                if rx.is_empty() {
                    w.flush().await?;
                }
            }
            // Dropping the writer closes stdin: the sidecar's end of input.
            w.flush().await?;
            Ok::<(), std::io::Error>(())
        });
        let pending: Waiting = Arc::new(Mutex::new(Some(HashMap::new())));
        let waiting = pending.clone();
        tokio::spawn(async move {
            let mut r = BufReader::with_capacity(64 * 1024, stdout);
            let mut buf = Vec::with_capacity(1024);
            loop {
                buf.clear();
                match r.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let Ok(answer) = serde_json::from_slice::<Answer>(&buf) else {
                    eprintln!(
                        "hookhost-bench: the sidecar wrote a line that is not a response: {}",
                        String::from_utf8_lossy(&buf).trim_end()
                    );
                    break;
                };
                let Some(id) = answer.id else {
                    eprintln!(
                        "hookhost-bench: the sidecar answered without an id: {:?}",
                        answer.error
                    );
                    break;
                };
                let caller = lock(&waiting).as_mut().and_then(|m| m.remove(&id));
                if let Some(caller) = caller {
                    let _ = caller.send(answer);
                }
            }
            // Everyone still waiting learns that no answer will come.
            lock(&waiting).take();
        });
        SidecarClient {
            next_id: AtomicU64::new(1),
            lines,
            pending,
        }
    }

    /// One request; its `result`.
    pub(super) async fn call(&self, method: &'static str, params: &Value) -> Res<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut line = serde_json::to_vec(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })?;
        line.push(b'\n');
        let (tx, rx) = oneshot::channel();
        lock(&self.pending)
            .as_mut()
            .ok_or("the sidecar closed its stdout")?
            .insert(id, tx);
        self.lines
            .send(line)
            .await
            .map_err(|_| "the sidecar's stdin is closed")?;
        let answer = rx
            .await
            .map_err(|_| "the sidecar closed its stdout before answering")?;
        match (answer.result, answer.error) {
            (Some(result), None) => Ok(result),
            (_, error) => Err(format!("the sidecar answered an error: {error:?}").into()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes a config whose one hook is row 2's, in a fresh folder; the
/// folder's path.
pub(super) fn sidecar_config(paths: &Paths) -> Res<PathBuf> {
    let dir = std::env::temp_dir().join(format!("hookhost-bench-sidecar-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    write_hook_config(paths, &dir)?;
    Ok(dir)
}

/// Writes `DIR/hooks.json`, whose one hook is row 2's: the sidecar's and
/// the daemon's (rows 6, 9 and 10).
pub(super) fn write_hook_config(paths: &Paths, dir: &Path) -> Res<()> {
    // JSON rather than TOML: the same loader, and no quoting of paths to
    // get right. The hook runs in the bench folder, as in row 2.
    let config = json!({
        "hooks": {
            "processes": {
                "bench": {
                    "enabled": true,
                    "command": [paths.bin("bench-hook")],
                    "dir": paths.bench_dir,
                    "intercept": ["before_tool"]
                }
            }
        }
    });
    std::fs::write(dir.join("hooks.json"), serde_json::to_vec_pretty(&config)?)?;
    Ok(())
}

/// Spawns `hookhost serve -c CONFIG --stdio`; its stderr stays ours.
pub(super) fn spawn_sidecar(paths: &Paths, config: &Path) -> Res<(Child, SidecarClient)> {
    let mut child = Command::new(paths.hookhost.clone())
        .arg("serve")
        .arg("-c")
        .arg(config)
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    Ok((child, SidecarClient::start(stdin, stdout)))
}

/// Ends the session as an agent would: end of input, then the exit.
pub(super) async fn stop_sidecar(child: Child, target: Target) -> Res<()> {
    // The last clone of the client: its writer closes the sidecar's stdin.
    drop(target);
    exits_after_eof(child, "the sidecar", Duration::from_secs(10)).await
}

pub(super) async fn sidecar_row(
    paths: &Paths,
    plan: Plan,
    figures: &mut SidecarFigures,
) -> Res<Row> {
    let dir = sidecar_config(paths)?;
    let result = async {
        let params = Arc::new(params());
        let t = Instant::now();
        let (child, client) = spawn_sidecar(paths, &dir.join("hooks.json"))?;
        let pid = child.id().ok_or("the sidecar has no pid")?;
        let target = Target::Sidecar(Arc::new(client), params);
        target.call().await?;
        figures.ready_ms = t.elapsed().as_secs_f64() * 1e3;
        let row = measure(
            SIDECAR_ROW,
            &target,
            plan.warmup,
            plan.sequential,
            plan.window,
        )
        .await;
        figures.hwm_kib = memory_of(&format!("/proc/{pid}/status")).1;
        let stopped = stop_sidecar(child, target).await;
        let row = row?;
        stopped?;
        Ok(row)
    }
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}
