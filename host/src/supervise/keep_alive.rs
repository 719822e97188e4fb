//! The one loop that keeps a persistent hook alive, process or remote
//! alike: connect (spawn, or dial), hello, publish Ready, wait for the
//! link to be lost or for shutdown, then restart with backoff. What
//! differs between a child process and a network service sits behind
//! [`Connector`]; the restart policy itself is [`crate::supervise::restart`].

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::error::StartError;
use crate::observe::log_budget::LogBudget;
use crate::supervise::handshake::Hello;
use crate::supervise::peer::{Link, Peer, PeerKind, PeerState};
use crate::supervise::restart::{Backoff, CrashWindow, clock_seed};

/// How one kind of peer restarts and what its reports say.
pub(crate) struct Terms {
    /// `max_restarts` losses within `restart_window_ms` mark it down
    /// until a restart succeeds (a crash-looping process).
    pub(crate) crash_limit: bool,
    /// The first retry after a loss is immediate: a server that is back
    /// (or a balancer with another instance) costs no wait.
    pub(crate) retry_at_once: bool,
    /// What its restart reports are called in the log budget's note.
    pub(crate) reports: &'static str,
    /// How a loss reads: "hook exited", "connection lost".
    pub(crate) lost: &'static str,
    /// What follows a loss: "restarting", "reconnecting".
    pub(crate) retrying: &'static str,
}

/// A peer's link once spawned or connected and handshaken.
pub(crate) struct Connected<L> {
    /// What ends the connection: a process, its pipes and tasks.
    pub(crate) live: L,
    /// What calls go through.
    pub(crate) link: Link,
    /// The protocol version agreed on.
    pub(crate) version: u32,
}

/// How one attempt to bring a peer up ended.
pub(crate) enum Attempt<L> {
    /// Up and handshaken.
    Up(Connected<L>),
    /// It failed; the peer is down until a retry succeeds.
    Failed(StartError),
    /// Shutdown came first; whatever was started is already gone.
    Stopping,
}

/// The transport seam: what the loop needs of a child process or of a
/// network service.
pub(crate) trait Connector: Send + 'static {
    /// What one live connection holds besides its link.
    type Live: Send;
    /// Its restart policy and wording.
    const TERMS: Terms;

    /// Spawns or connects, then performs the handshake, unless shutdown
    /// comes first (then it cleans up before it returns).
    fn connect(
        &mut self,
        peer: &Peer,
        shutdown: &mut watch::Receiver<bool>,
    ) -> impl Future<Output = Attempt<Self::Live>> + Send;

    /// Resolves when the live connection is lost; how it ended, for the
    /// log.
    fn lost(&mut self, peer: &Peer, live: &mut Self::Live) -> impl Future<Output = String> + Send;

    /// Ends a lost connection; what is pending on it fails with `why`.
    fn discard(&mut self, live: Self::Live, why: &str) -> impl Future<Output = ()> + Send;

    /// Ends a live connection at shutdown, after the events emitted
    /// before it are handed on.
    fn stop(&mut self, peer: &Peer, live: Self::Live) -> impl Future<Output = ()> + Send;

    /// A failed start as reported to the host (a process adds the tail of
    /// its stderr).
    fn report(&self, error: &StartError) -> StartError {
        error.clone()
    }
}

/// The loop's memory between attempts.
struct Run<C: Connector> {
    peer: Arc<Peer>,
    first: Option<oneshot::Sender<Result<Hello, StartError>>>,
    backoff: Backoff,
    crashes: CrashWindow,
    /// A crash-looping or flapping peer restarts every
    /// `restart_backoff_max_ms`, and one report per restart would flood
    /// the agent's log; past the budget they are counted and the count
    /// is said.
    reports: LogBudget,
    connector: C,
}

/// Keeps `peer` alive through `connector` until shutdown. `first` gets
/// the outcome of the first attempt.
pub(crate) async fn keep_alive<C: Connector>(
    peer: Arc<Peer>,
    connector: C,
    mut shutdown: watch::Receiver<bool>,
    first: oneshot::Sender<Result<Hello, StartError>>,
) {
    let d = &peer.defaults;
    let mut run = Run {
        backoff: Backoff::new(Duration::from_millis(d.restart_backoff_max_ms)),
        crashes: CrashWindow::new(Duration::from_millis(d.restart_window_ms), d.max_restarts),
        reports: LogBudget::about(C::TERMS.reports),
        first: Some(first),
        peer,
        connector,
    };
    while run.once(&mut shutdown).await {
        let delay = run.backoff.next_delay(clock_seed());
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stopping(&mut shutdown) => break,
        }
        if !matches!(run.peer.state(), PeerState::Down(_)) {
            run.peer.publish(PeerState::Starting);
        }
    }
    run.reports.report_held_back(&run.peer.name);
    run.peer.publish(PeerState::Stopped);
}

impl<C: Connector> Run<C> {
    /// One attempt and, when it comes up, its life. Whether to go on
    /// (after the backoff); a retry at once loops here.
    async fn once(&mut self, shutdown: &mut watch::Receiver<bool>) -> bool {
        loop {
            let begun = Instant::now();
            let up = match self.connector.connect(&self.peer, shutdown).await {
                Attempt::Stopping => return false,
                Attempt::Failed(e) => {
                    self.failed(e);
                    return true;
                }
                Attempt::Up(up) => up,
            };
            self.ready(&up, begun.elapsed());
            let up_since = Instant::now();
            let mut live = up.live;
            let lost = tokio::select! {
                why = self.connector.lost(&self.peer, &mut live) => Some(why),
                _ = stopping(shutdown) => None,
            };
            let Some(why) = lost else {
                self.connector.stop(&self.peer, live).await;
                return false;
            };
            self.connector.discard(live, &why).await;
            if !self.lost(&why, up_since.elapsed()) {
                return true;
            }
        }
    }

    /// Publishes Ready and reports the first start.
    fn ready(&mut self, up: &Connected<C::Live>, took: Duration) {
        let hello = Hello {
            version: up.version,
            took,
        };
        self.peer.record_hello(hello);
        let hello_ms = took.as_millis() as u64;
        match &self.peer.kind {
            PeerKind::Process => {
                let pid = self.peer.pid().unwrap_or(0);
                tracing::info!(hook = %self.peer.name, pid, hello_ms, "hook ready");
            }
            #[cfg(feature = "remote")]
            PeerKind::Remote { url } => {
                tracing::info!(hook = %self.peer.name, url = %url, hello_ms, "remote hook ready");
            }
        }
        self.peer.publish(PeerState::Ready(up.link.clone()));
        if let Some(tx) = self.first.take() {
            let _ = tx.send(Ok(hello));
        }
    }

    /// Reports a failed attempt and marks the peer down.
    fn failed(&mut self, error: StartError) {
        let report = self.connector.report(&error);
        if self.first.is_some() {
            self.reports.error(
                &self.peer.name,
                format_args!("hook failed to start: {report}"),
            );
        } else {
            self.reports
                .warn(&self.peer.name, format_args!("restart failed: {report}"));
        }
        self.peer.publish(PeerState::Down(error.to_string()));
        if let Some(tx) = self.first.take() {
            let _ = tx.send(Err(report));
        }
    }

    /// Counts a loss after `up` of uptime, reports it (within the budget)
    /// and publishes the next state: Starting, or Down once it was lost
    /// too often within the crash window. Whether to retry at once.
    fn lost(&mut self, ended: &str, up: Duration) -> bool {
        self.backoff.lost_after(up);
        self.peer.stats.restarts.fetch_add(1, Ordering::Relaxed);
        let terms = &C::TERMS;
        let name = &self.peer.name;
        let down = if terms.crash_limit {
            self.crashes.note(Instant::now())
        } else {
            None
        };
        if let Some(why) = down {
            let lost = terms.lost;
            self.reports
                .error(name, format_args!("{lost} ({ended}); {why}"));
            self.peer.publish(PeerState::Down(why));
            return false;
        }
        let (lost, retrying) = (terms.lost, terms.retrying);
        self.reports
            .warn(name, format_args!("{lost} ({ended}); {retrying}"));
        self.peer.publish(PeerState::Starting);
        if terms.retry_at_once && self.backoff.is_fresh() {
            self.backoff.skip();
            return true;
        }
        false
    }
}

/// Resolves once shutdown is requested (or the host is gone).
pub(crate) async fn stopping(rx: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns must not live across an await.
    let _ = rx.wait_for(|s| *s).await.map(|_| ());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Defaults, ProcessConfig};
    use crate::observe::log_budget::capture::Captured;
    use crate::supervise::{launch, process};

    /// A hook that answers hello and exits soon after, every time.
    fn crash_looping_hook() -> ProcessConfig {
        let script = r#"read line; echo '{"jsonrpc":"2.0","id":1,"result":{"version":1}}'; sleep 0.02; exit 3"#;
        let command = ["sh", "-c", script].map(String::from).to_vec();
        ProcessConfig::new(command, vec![hookhost_protocol::Stage::BeforeTool])
    }

    #[tokio::test]
    async fn a_crash_loop_logs_a_few_restarts_and_counts_the_rest() {
        let (log, _guard) = Captured::start();
        let defaults = Defaults {
            restart_backoff_max_ms: 2,
            max_restarts: 10_000,
            ..Default::default()
        };
        let (peer, _events, connector) = process::peer("looper", crash_looping_hook(), defaults);
        let launched = launch(&peer, connector, None);
        let until = Instant::now() + Duration::from_secs(10);
        while peer.stats.restarts.load(Ordering::Relaxed) < 25 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        launched.shutdown.send_replace(true);
        for t in launched.tasks {
            let _ = t.await;
        }
        let restarts = peer.stats.restarts.load(Ordering::Relaxed);
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

    #[tokio::test]
    async fn a_hook_that_crashes_max_restarts_times_is_marked_down() {
        // Delays of 25, 50, 100 ms, then 200 ms while it is down: long
        // enough to see.
        let defaults = Defaults {
            restart_backoff_max_ms: 5_000,
            max_restarts: 3,
            restart_window_ms: 60_000,
            ..Default::default()
        };
        let (peer, _events, connector) = process::peer("looper", crash_looping_hook(), defaults);
        let launched = launch(&peer, connector, None);
        assert!(launched.first.await.unwrap().is_ok());
        let until = Instant::now() + Duration::from_secs(10);
        let mut why = None;
        while why.is_none() && Instant::now() < until {
            if let PeerState::Down(w) = peer.state() {
                why = Some(w);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let why = why.expect("never marked down");
        assert!(why.starts_with("crashed 3 times within 60 s"), "{why}");
        launched.shutdown.send_replace(true);
        for t in launched.tasks {
            let _ = t.await;
        }
        assert!(matches!(peer.state(), PeerState::Stopped));
    }
}
