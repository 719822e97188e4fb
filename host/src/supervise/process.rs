//! The [`Connector`] for a hook process: spawn it (in its own group, with
//! a clean environment), start the JSON-RPC connection over its pipes,
//! handshake. The link is lost when the process exits, closes its
//! stdout, or stops reading its stdin; at shutdown stdin is closed after
//! the last event, then the signal ladder.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::stage::method;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::config::{Defaults, ProcessConfig};
use crate::error::{CallError, StartError};
use crate::policy::deadline::Deadline;
use crate::supervise::events::Event;
use crate::supervise::handshake::{accept_hello, hello_params};
use crate::supervise::keep_alive::{Attempt, Connected, Connector, Terms, stopping};
use crate::supervise::peer::{Link, Peer, PeerKind};
use crate::transport::connection::{Connection, ConnectionTasks};
use crate::transport::spawn::{self, Running, SpawnSpec, StderrTail};

/// What the spawn floor needs of a process hook's config, with its
/// folder already resolved.
pub(crate) fn spawn_spec<'a>(config: &'a ProcessConfig, dir: &'a Path) -> SpawnSpec<'a> {
    SpawnSpec {
        command: &config.command,
        dir,
        env: &config.env,
        inherit_env: &config.inherit_env,
    }
}

/// A new process peer (state Starting), its event queue's receiver, and
/// its connector. `config`'s `dir` is resolved against the config file's
/// folder.
pub(crate) fn peer(
    name: &str,
    config: ProcessConfig,
    defaults: Defaults,
) -> (Arc<Peer>, mpsc::Receiver<Event>, ProcessConnector) {
    let observe = config.observe_patterns();
    let (peer, events) = Peer::new(name, PeerKind::Process, observe, defaults);
    let connector = ProcessConnector {
        config,
        stderr: StderrTail::default(),
    };
    (peer, events, connector)
}

/// How long a lost hook's stdout is read for what it wrote before its
/// exit, once its group is killed: the pipe's buffer is read in far less.
const DRAIN_WITHIN: Duration = Duration::from_millis(250);

/// Spawns one process hook, again after each loss.
pub(crate) struct ProcessConnector {
    /// How it is spawned; `intercept` and `observe` are the union over the
    /// configured hooks sharing it, `dir` is resolved.
    config: ProcessConfig,
    /// The last lines of its stderr, for start failure reports.
    stderr: StderrTail,
}

/// A live process: the child, and the connection over its pipes.
pub(crate) struct Live {
    running: Running,
    conn: Arc<Connection>,
    tasks: ConnectionTasks,
}

impl Live {
    /// Ends a process whose handshake failed, letting its last stderr
    /// lines in for the report first.
    async fn abandon(mut self, why: &StartError, stderr_task: JoinHandle<()>) {
        self.conn.close(CallError::Unavailable(why.to_string()));
        self.running.kill().await;
        let _ = tokio::time::timeout(Duration::from_millis(200), stderr_task).await;
        self.tasks.reader.abort();
        self.tasks.writer.abort();
    }

    /// Ends it at once: pending calls fail with `why`, the group is
    /// killed, the pipe tasks end.
    async fn kill(mut self, why: CallError) {
        self.conn.close(why);
        self.running.kill().await;
        self.tasks.reader.abort();
        self.tasks.writer.abort();
    }
}

impl Connector for ProcessConnector {
    type Live = Live;
    const TERMS: Terms = Terms {
        crash_limit: true,
        retry_at_once: false,
        reports: "restart reports",
        lost: "hook exited",
        retrying: "restarting",
    };

    /// Spawns the process and performs the handshake. A shutdown during
    /// the handshake kills the process and waits for it here: dropping it
    /// would only send the signal, and `Host::shutdown` could return while
    /// it lived.
    async fn connect(
        &mut self,
        peer: &Peer,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Attempt<Live> {
        let dir = self.config.dir.clone().unwrap_or_else(|| ".".into());
        let (running, pipes) = match spawn::spawn(&spawn_spec(&self.config, &dir)) {
            Ok(spawned) => spawned,
            Err(e) => return Attempt::Failed(spawn_failed(e)),
        };
        let stderr_task = tokio::spawn(spawn::drain_stderr(
            peer.name.clone(),
            pipes.stderr,
            self.stderr.clone(),
        ));
        let (conn, tasks) = Connection::start(
            peer.name.clone(),
            pipes.stdin,
            pipes.stdout,
            peer.defaults.max_line_bytes,
        );
        let mut live = Live {
            running,
            conn,
            tasks,
        };
        // A hook that dies during the handshake fails it at once, with its
        // exit status, rather than after the whole hello timeout.
        let shaken = tokio::select! {
            r = hello(&self.config, peer, &live.conn) => r,
            status = live.running.wait() => Err(StartError::ExitedDuringHello { status }),
            _ = stopping(shutdown) => {
                live.kill(CallError::Unavailable("the host is shutting down".into())).await;
                return Attempt::Stopping;
            }
        };
        let shaken = match shaken {
            Err(StartError::HelloFailed { .. }) => exit_instead(&mut live, shaken).await,
            other => other,
        };
        match shaken {
            Ok(version) => {
                peer.set_pid(live.running.pid);
                Attempt::Up(Connected {
                    link: Link::Pipe(live.conn.clone()),
                    live,
                    version,
                })
            }
            Err(why) => {
                live.abandon(&why, stderr_task).await;
                Attempt::Failed(why)
            }
        }
    }

    async fn lost(&mut self, _peer: &Peer, live: &mut Live) -> String {
        tokio::select! {
            status = live.running.wait() => format!("{status}"),
            _ = live.conn.stdout_closed() => {
                pipe_lost(live, CallError::Closed, "closed its stdout").await
            }
            // The writer ends only when writing failed: the hook closed
            // its stdin or is dying; no request reaches it.
            _ = &mut live.tasks.writer => {
                pipe_lost(live, CallError::StdinClosed, "closed its stdin").await
            }
        }
    }

    /// Ends a lost process. Its stdout is read to its end first (after
    /// SIGKILL to what is left of its group, so that no process of it
    /// holds the pipe open; the group is reaped afterwards): a hook that
    /// writes its answer and exits at once raced the exit watcher, and
    /// that answer was dropped as a crash.
    async fn discard(&mut self, live: Live, why: &str) {
        live.running.signal_kill();
        if !live.conn.drain(DRAIN_WITHIN).await {
            tracing::debug!(hook = %live.conn.hook(), "its stdout did not end within {DRAIN_WITHIN:?} of its exit");
        }
        live.kill(CallError::Crashed(why.to_string())).await;
    }

    /// Graceful stop: let the events emitted before shutdown reach the
    /// writer, close stdin (after them), then the signal ladder.
    async fn stop(&mut self, peer: &Peer, mut live: Live) {
        let grace = Duration::from_millis(peer.defaults.shutdown_grace_ms);
        peer.events_forwarded(grace).await;
        live.conn
            .close_stdin(&live.tasks, grace.min(Duration::from_millis(100)))
            .await;
        live.running.stop(grace).await;
        live.conn
            .close(CallError::Unavailable("the host is shutting down".into()));
        live.tasks.writer.abort();
        live.tasks.reader.abort();
    }

    fn report(&self, error: &StartError) -> StartError {
        error.clone().with_stderr(self.stderr.text())
    }
}

fn spawn_failed(e: spawn::SpawnError) -> StartError {
    StartError::Spawn {
        program: e.program,
        dir: e.dir,
        source: Arc::new(e.source),
    }
}

/// Sends `hook.hello` and records what it declared; the agreed version.
async fn hello(config: &ProcessConfig, peer: &Peer, conn: &Connection) -> Result<u32, StartError> {
    let params = hello_params(&peer.name, &config.intercept, !config.observe.is_empty())?;
    let budget = Duration::from_millis(peer.defaults.hello_timeout_ms);
    let reply = conn
        .request(method::HELLO, &params, Deadline::after(budget))
        .await
        .map_err(|e| match e {
            CallError::Timeout(_) => StartError::HelloTimeout {
                url: None,
                after: budget,
            },
            other => StartError::HelloFailed {
                url: None,
                reason: other.to_string(),
            },
        })?;
    if config.picoclaw && reply.get("ok") == Some(&serde_json::Value::Bool(false)) {
        tracing::warn!(
            hook = %peer.name,
            "hook `{}` answered hello with ok: false; PicoClaw never reads the hello result and \
             would have called it anyway, hookhost does not call a hook that refused \
             (spec/protocol.md section 15)",
            peer.name
        );
    }
    let (version, result) = accept_hello(&reply)?;
    peer.apply_hello(&result);
    Ok(version)
}

/// A hello that failed on a pipe: a hook that is exiting closes its pipes
/// first, and its exit status, which follows within a moment, says more.
async fn exit_instead(live: &mut Live, failed: Result<u32, StartError>) -> Result<u32, StartError> {
    match tokio::time::timeout(Duration::from_millis(200), live.running.wait()).await {
        Ok(status) => Err(StartError::ExitedDuringHello { status }),
        Err(_) => failed,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervise::launch;

    /// A hook that answers hello, answers the one request it gets, and
    /// exits the moment that answer is written.
    fn answers_then_exits() -> ProcessConfig {
        let script = r#"read l; echo '{"jsonrpc":"2.0","id":1,"result":{"version":1}}'; read l; echo '{"jsonrpc":"2.0","id":2,"result":{"action":"allow","n":42}}'; exit 0"#;
        let command = ["sh", "-c", script].map(String::from).to_vec();
        ProcessConfig::new(command, vec![hookhost_protocol::Stage::BeforeTool])
    }

    /// One hook's life: start it, send one request, stop it; the answer.
    async fn one_call() -> Result<serde_json::Value, CallError> {
        let defaults = Defaults {
            restart_backoff_max_ms: 5_000,
            ..Default::default()
        };
        let (peer, _events, connector) = peer("quick", answers_then_exits(), defaults);
        let launched = launch(&peer, connector, None);
        let started = launched.first.await;
        assert!(matches!(started, Ok(Ok(_))), "the hook did not start");
        let budget = Duration::from_secs(5);
        let params = serde_json::json!({});
        let answer = peer
            .request("hook.before_tool", &params, Deadline::after(budget))
            .await;
        launched.shutdown.send_replace(true);
        for t in launched.tasks {
            let _ = t.await;
        }
        answer
    }

    /// The answer a hook wrote just before it exited is read and
    /// delivered: the exit is not taken for a crash of the calls its
    /// stdout still answers. Run many times at once, since the exit and
    /// the last line race.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answer_written_just_before_exit_is_not_lost() {
        let runs: Vec<_> = (0..40).map(|_| tokio::spawn(one_call())).collect();
        let mut lost = Vec::new();
        for run in runs {
            match run.await.expect("the run panicked") {
                Ok(answer) => assert_eq!(answer["n"], 42, "{answer}"),
                Err(e) => lost.push(e.to_string()),
            }
        }
        assert!(
            lost.is_empty(),
            "{} of 40 answers lost: {lost:?}",
            lost.len()
        );
    }
}
