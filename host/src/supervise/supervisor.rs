//! The task that keeps one hook process running: spawn, handshake, watch
//! for a crash, restart with backoff, and stop it gracefully at shutdown.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hookhost_protocol::{
    HelloParams, HelloResult, PROTOCOL_VERSION, hello::HostInfo, stage::method,
};
use serde::Deserialize;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::error::CallError;
use crate::observe::log_budget::LogBudget;
use crate::supervise::hook::{HookEntry, HookState};
use crate::transport::connection::{Connection, ConnectionTasks};
use crate::transport::spawn::{self as process, Running};

/// A process that stays up this long resets the backoff.
pub(crate) const STABLE_AFTER: Duration = Duration::from_secs(60);

/// What the first start reported, for `Host::start`.
#[derive(Debug, Clone)]
pub struct Started {
    /// The process id.
    pub pid: u32,
    /// The protocol version agreed on.
    pub version: u32,
    /// How long spawn plus handshake took.
    pub hello_time: Duration,
}

struct Live {
    running: Running,
    conn: Arc<Connection>,
    tasks: ConnectionTasks,
}

/// Runs until shutdown. `first` gets the outcome of the first start.
pub(crate) async fn supervise(
    entry: Arc<HookEntry>,
    mut shutdown: watch::Receiver<bool>,
    first: oneshot::Sender<Result<Started, String>>,
) {
    let mut first = Some(first);
    let mut attempt: u32 = 0;
    let mut crashes = Crashes::new(&entry);
    loop {
        let begun = Instant::now();
        let started = match start(&entry, &mut shutdown).await {
            Err(StartError::Stopping) => break,
            Err(StartError::Failed(why)) => Err(why),
            Ok(live) => Ok(live),
        };
        match started {
            Ok((mut live, version)) => {
                let info = Started {
                    pid: live.running.pid,
                    version,
                    hello_time: begun.elapsed(),
                };
                tracing::info!(
                    hook = %entry.name,
                    pid = info.pid,
                    hello_ms = info.hello_time.as_millis() as u64,
                    "hook ready"
                );
                entry.set_pid(info.pid);
                entry
                    .state
                    .send_replace(HookState::Ready(live.conn.clone()));
                if let Some(tx) = first.take() {
                    let _ = tx.send(Ok(info));
                }
                let up_since = Instant::now();
                let ended = tokio::select! {
                    status = live.running.wait() => format!("{status}"),
                    _ = live.conn.stdout_closed() => {
                        pipe_lost(&mut live, CallError::Closed, "closed its stdout").await
                    }
                    // The writer ends only when writing failed: the hook
                    // closed its stdin or is dying; no request reaches it.
                    _ = &mut live.tasks.writer => {
                        pipe_lost(&mut live, CallError::StdinClosed, "closed its stdin").await
                    }
                    _ = stopping(&mut shutdown) => {
                        stop(&entry, live).await;
                        break;
                    }
                };
                live.conn.close(CallError::Crashed(ended.clone()));
                live.running.kill().await;
                live.tasks.reader.abort();
                live.tasks.writer.abort();
                if up_since.elapsed() >= STABLE_AFTER {
                    attempt = 0;
                }
                crashes.note(&entry, &ended);
            }
            Err(why) => {
                let tail = entry.stderr.text();
                let report = if tail.is_empty() {
                    why.clone()
                } else {
                    format!("{why}; its stderr ended with:\n{tail}")
                };
                crashes
                    .reports
                    .error(&entry.name, format_args!("hook failed to start: {report}"));
                entry.state.send_replace(HookState::Failed(why));
                if let Some(tx) = first.take() {
                    let _ = tx.send(Err(report));
                }
            }
        }
        let delay = backoff(
            attempt,
            Duration::from_millis(entry.defaults.restart_backoff_max_ms),
        );
        attempt = attempt.saturating_add(1);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stopping(&mut shutdown) => break,
        }
        if !matches!(entry.state(), HookState::Failed(_)) {
            entry.state.send_replace(HookState::Starting);
        }
    }
    crashes.reports.report_held_back(&entry.name);
    entry.state.send_replace(HookState::Stopped);
}

/// Recent crashes of one hook, for `max_restarts`, and the budget of its
/// restart reports: a crash-looping hook restarts every
/// `restart_backoff_max_ms`, and one report per restart would flood the
/// agent's log; past the budget they are counted and the count is said.
struct Crashes {
    times: VecDeque<Instant>,
    window: Duration,
    reports: LogBudget,
}

impl Crashes {
    fn new(entry: &HookEntry) -> Crashes {
        Crashes {
            times: VecDeque::new(),
            window: Duration::from_millis(entry.defaults.restart_window_ms),
            reports: LogBudget::about("restart reports"),
        }
    }

    /// Counts a crash, reports it (within the budget) and publishes the
    /// next state: Starting, or Failed once it crashed `max_restarts`
    /// times within the window.
    fn note(&mut self, entry: &HookEntry, ended: &str) {
        let now = Instant::now();
        self.times.push_back(now);
        while self
            .times
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.window)
        {
            self.times.pop_front();
        }
        entry.counters.restarts.fetch_add(1, Ordering::Relaxed);
        if self.times.len() as u32 >= entry.defaults.max_restarts {
            let why = format!(
                "crashed {} times within {} s; skipped until a restart succeeds",
                self.times.len(),
                self.window.as_secs()
            );
            self.reports
                .error(&entry.name, format_args!("hook exited ({ended}); {why}"));
            entry.state.send_replace(HookState::Failed(why));
        } else {
            self.reports.warn(
                &entry.name,
                format_args!("hook exited ({ended}); restarting"),
            );
            entry.state.send_replace(HookState::Starting);
        }
    }
}

/// A live hook lost one of its pipes. One that is exiting closes them
/// first, and its exit status follows within a moment and says more. One
/// still running after that is useless: what is pending fails now with
/// `pending` (not after the wait below), and it gets a last chance to
/// report a status before it is killed. Returns how it ended, for the log.
async fn pipe_lost(live: &mut Live, pending: CallError, what: &str) -> String {
    if let Ok(status) = tokio::time::timeout(Duration::from_millis(20), live.running.wait()).await {
        return format!("{status}");
    }
    live.conn.close(pending);
    match tokio::time::timeout(Duration::from_millis(180), live.running.wait()).await {
        Ok(status) => format!("{status}"),
        Err(_) => format!("{what} but kept running; killed"),
    }
}

/// Why a start did not give a live hook.
enum StartError {
    /// It failed; the text says why.
    Failed(String),
    /// Shutdown came first; the process (if any) is already gone.
    Stopping,
}

/// Spawns the process and performs the handshake. A shutdown during the
/// handshake kills the process and waits for it here: dropping it would
/// only send the signal, and `Host::shutdown` could return while it lived.
async fn start(
    entry: &Arc<HookEntry>,
    shutdown: &mut watch::Receiver<bool>,
) -> Result<(Live, u32), StartError> {
    // Host::start resolved the folder against the config file's.
    let dir = entry
        .config
        .dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let (running, pipes) =
        process::spawn(&entry.config, &dir).map_err(|e| StartError::Failed(e.to_string()))?;
    let stderr_task = tokio::spawn(process::drain_stderr(
        entry.name.clone(),
        pipes.stderr,
        entry.stderr.clone(),
    ));
    let (conn, tasks) = Connection::start(
        entry.name.clone(),
        pipes.stdin,
        pipes.stdout,
        entry.defaults.max_line_bytes,
    );
    let mut live = Live {
        running,
        conn,
        tasks,
    };
    // A hook that dies during the handshake fails it at once, with its
    // exit status, rather than after the whole hello timeout.
    let shaken = tokio::select! {
        r = hello(entry, &live.conn) => r,
        status = live.running.wait() => Err(format!("exited during the handshake ({status})")),
        _ = stopping(shutdown) => {
            live.conn.close(CallError::Unavailable("the host is shutting down".into()));
            live.running.kill().await;
            live.tasks.reader.abort();
            live.tasks.writer.abort();
            return Err(StartError::Stopping);
        }
    };
    match shaken {
        Ok(version) => Ok((live, version)),
        Err(why) => {
            live.conn.close(CallError::Unavailable(why.clone()));
            live.running.kill().await;
            // Let the last stderr lines in, for the report.
            let _ = tokio::time::timeout(Duration::from_millis(200), stderr_task).await;
            live.tasks.reader.abort();
            live.tasks.writer.abort();
            Err(StartError::Failed(why))
        }
    }
}

async fn hello(entry: &HookEntry, conn: &Connection) -> Result<u32, String> {
    let params = hello_params(
        &entry.name,
        &entry.config.intercept,
        !entry.config.observe.is_empty(),
    )?;
    let budget = Duration::from_millis(entry.defaults.hello_timeout_ms);
    let reply = conn
        .request(method::HELLO, &params, Instant::now() + budget, budget)
        .await
        .map_err(|e| match e {
            CallError::Timeout(_) => {
                format!("no answer to hook.hello within {} ms", budget.as_millis())
            }
            other => format!("hook.hello failed: {other}"),
        })?;
    let (version, result) = accept_hello(&reply)?;
    entry.apply_hello(&result);
    Ok(version)
}

/// The `hook.hello` params for a hook configured with `intercept` (and
/// some `observe` list when `observes`): the modes it will be used in.
pub(crate) fn hello_params(
    name: &str,
    intercept: &[hookhost_protocol::Stage],
    observes: bool,
) -> Result<serde_json::Value, String> {
    let mut modes: Vec<String> = Vec::new();
    if observes {
        modes.push("observe".into());
    }
    for s in intercept {
        let m = s.mode().to_string();
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    let params = HelloParams {
        name: name.to_string(),
        version: PROTOCOL_VERSION,
        modes,
        host: Some(HostInfo {
            name: "hookhost".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
    };
    serde_json::to_value(&params).map_err(|e| e.to_string())
}

/// Reads a hello answer and agrees on the version, or says why not.
pub(crate) fn accept_hello(reply: &serde_json::Value) -> Result<(u32, HelloResult), String> {
    let result =
        HelloResult::deserialize(reply).map_err(|e| format!("invalid hook.hello result: {e}"))?;
    let version = result
        .negotiate(PROTOCOL_VERSION)
        .map_err(|e| format!("handshake refused: {e}"))?;
    Ok((version, result))
}

/// Graceful stop: let the events emitted before shutdown reach the
/// writer, close stdin (after them), then the signal ladder.
async fn stop(entry: &HookEntry, mut live: Live) {
    let grace = Duration::from_millis(entry.defaults.shutdown_grace_ms);
    entry.events_forwarded(grace).await;
    live.conn
        .close_stdin(&live.tasks, grace.min(Duration::from_millis(100)))
        .await;
    live.running.stop(grace).await;
    live.conn
        .close(CallError::Unavailable("the host is shutting down".into()));
    live.tasks.writer.abort();
    live.tasks.reader.abort();
}

/// Exponential backoff with jitter: about 25 ms first, doubling, capped at
/// `max` (`restart_backoff_max_ms`).
pub(crate) fn backoff(attempt: u32, max: Duration) -> Duration {
    let base = Duration::from_millis(25).saturating_mul(1u32 << attempt.min(16));
    let base = base.min(max);
    // ±25% jitter from the clock's low bits; no need for a real RNG here.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = (nanos % 500) as f64 / 1000.0 - 0.25;
    base.mul_f64(1.0 + jitter)
}

/// Resolves once shutdown is requested (or the host is gone).
pub(crate) async fn stopping(rx: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns must not live across an await.
    let _ = rx.wait_for(|s| *s).await.map(|_| ());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::log_budget::capture::Captured;

    /// A hook that answers hello and exits soon after, every time.
    fn crash_looping_hook() -> crate::config::ProcessConfig {
        let script = r#"read line; echo '{"jsonrpc":"2.0","id":1,"result":{"version":1}}'; sleep 0.02; exit 3"#;
        let command = ["sh", "-c", script].map(String::from).to_vec();
        crate::config::ProcessConfig::new(command, vec![hookhost_protocol::Stage::BeforeTool])
    }

    #[tokio::test]
    async fn a_crash_loop_logs_a_few_restarts_and_counts_the_rest() {
        let (log, _guard) = Captured::start();
        let defaults = crate::config::Defaults {
            restart_backoff_max_ms: 2,
            max_restarts: 10_000,
            ..Default::default()
        };
        let (entry, _events) = HookEntry::new("looper", crash_looping_hook(), defaults);
        let (stop, shutdown) = watch::channel(false);
        let (tx, _first) = oneshot::channel();
        let task = tokio::spawn(supervise(entry.clone(), shutdown, tx));
        let until = Instant::now() + Duration::from_secs(10);
        while entry.counters.restarts.load(Ordering::Relaxed) < 25 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.send_replace(true);
        let _ = task.await;
        let restarts = entry.counters.restarts.load(Ordering::Relaxed);
        assert!(restarts >= 25, "only {restarts} restarts");
        let text = log.text();
        let logged = text.lines().filter(|l| l.contains("restarting")).count() as u64;
        assert!(
            logged <= u64::from(crate::observe::log_budget::PER_WINDOW),
            "{logged} restart warnings:\n{text}"
        );
        let held = restarts - logged;
        assert!(
            text.contains(&format!("{held} more restart reports were held back")),
            "{text}"
        );
    }
}
