//! One hook process as the rest of the host sees it: how it is spawned, its
//! current state (published by its supervisor), what it declared in hello,
//! and its counters. Its place in the chain (priority, filters, policy,
//! breaker) is a [`crate::member::Member`]; two configured hooks with the
//! same command, folder and environment share one `HookEntry`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use hookhost_protocol::event::EventPattern;
use hookhost_protocol::{HelloResult, Stage};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, timeout_at};

use crate::config::{Defaults, ProcessConfig};
use crate::connection::Connection;
use crate::declaration::Declaration;
use crate::error::CallError;
use crate::process::StderrTail;
use crate::supervisor::stopping;

/// Where a hook is in its life.
#[derive(Clone)]
pub enum HookState {
    /// Starting or restarting; calls wait for it within their deadline.
    Starting,
    /// Handshake done; calls go through.
    Ready(Arc<Connection>),
    /// Could not start, or crashed too often; calls fail at once (and the
    /// hook's policy decides) until a later restart succeeds.
    Failed(String),
    /// Shut down for good.
    Stopped,
}

pub use crate::declaration::Effective;

/// Counters a process accumulates over the host's life.
#[derive(Debug, Default)]
pub struct Counters {
    /// Requests sent and not yet answered or given up on; reload waits for
    /// zero before stopping a process it no longer needs.
    pub in_flight: AtomicU64,
    /// Restarts after a crash or failed start.
    pub restarts: AtomicU64,
    /// Runtime events dropped for this hook.
    pub dropped_events: AtomicU64,
}

/// The shared handle of one hook process.
pub struct HookEntry {
    /// The name of the first configured hook that uses this process.
    pub name: Arc<str>,
    /// How it is spawned; `intercept` and `observe` are the union over the
    /// configured hooks sharing it.
    pub config: ProcessConfig,
    /// Stage defaults and limits.
    pub defaults: Defaults,
    pub(crate) state: watch::Sender<HookState>,
    declaration: Declaration,
    /// The last lines of its stderr.
    pub stderr: StderrTail,
    /// Counters.
    pub counters: Counters,
    pub(crate) events: mpsc::Sender<Arc<[u8]>>,
    pid: AtomicU32,
}

impl HookEntry {
    /// A new entry in state Starting, with its event queue's receiver.
    pub(crate) fn new(
        name: &str,
        config: ProcessConfig,
        defaults: Defaults,
    ) -> (Arc<HookEntry>, mpsc::Receiver<Arc<[u8]>>) {
        let (events, rx) = mpsc::channel(defaults.event_queue);
        let declaration = Declaration::new(config.intercept.clone(), config.observe_patterns());
        let entry = Arc::new(HookEntry {
            name: name.into(),
            config,
            defaults,
            state: watch::channel(HookState::Starting).0,
            declaration,
            stderr: StderrTail::default(),
            counters: Counters::default(),
            events,
            pid: AtomicU32::new(0),
        });
        (entry, rx)
    }

    /// What it is called for now.
    pub fn effective(&self) -> Effective {
        self.declaration.effective()
    }

    /// Records a hello declaration and narrows config by it; config may
    /// narrow, never widen.
    pub(crate) fn apply_hello(&self, hello: &HelloResult) {
        self.declaration.apply_hello(hello);
    }

    /// Replaces the configured observe list (after a reload changed the
    /// hooks that share this process).
    pub(crate) fn set_observe(&self, patterns: Vec<EventPattern>) {
        self.declaration.set_observe(patterns);
    }

    /// Whether the process declared `stage` (true when it declared nothing).
    pub fn declares(&self, stage: Stage) -> bool {
        self.declaration.declares(stage)
    }

    /// Whether it is called at `stage` (config narrowed by hello).
    pub fn intercepts(&self, stage: Stage) -> bool {
        self.declaration.intercepts(stage)
    }

    /// Whether it wants events of `kind`.
    pub fn observes(&self, kind: &str) -> bool {
        self.declaration.observes(kind)
    }

    /// The process id of the latest start (0 before the first).
    pub fn pid(&self) -> Option<u32> {
        Some(self.pid.load(Ordering::Relaxed)).filter(|p| *p != 0)
    }

    pub(crate) fn set_pid(&self, pid: u32) {
        self.pid.store(pid, Ordering::Relaxed);
    }

    /// Where it is in its life now.
    pub fn state(&self) -> HookState {
        self.state.borrow().clone()
    }

    /// Waits until the hook is ready, at most until `deadline`.
    pub(crate) async fn ready(
        &self,
        deadline: Instant,
        budget: Duration,
    ) -> Result<Arc<Connection>, CallError> {
        wait_for_state(
            &self.state,
            deadline,
            budget,
            "its supervisor ended",
            |state| match state {
                HookState::Ready(conn) if !conn.is_closed() => Some(Ok(conn)),
                HookState::Ready(_) | HookState::Starting => None,
                HookState::Failed(why) => Some(Err(CallError::Unavailable(why))),
                HookState::Stopped => Some(Err(CallError::Unavailable(
                    "the host is shutting down".into(),
                ))),
            },
        )
        .await
    }

    /// Sends one request once the process is ready, waiting at most until
    /// `deadline` (`budget` is that wait's length, for the timeout message).
    pub async fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Instant,
        budget: Duration,
    ) -> Result<Value, CallError> {
        let _in_flight = InFlight::enter(&self.counters.in_flight);
        match self.ready(deadline, budget).await {
            Ok(conn) => conn.request(method, params, deadline, budget).await,
            Err(e) => Err(e),
        }
    }

    /// Queues an encoded runtime event without waiting; a full queue drops
    /// it, counts it and says so.
    pub(crate) fn offer_event(&self, line: &Arc<[u8]>) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.events.try_send(line.clone()) {
            self.note_dropped_event("its event queue is full");
        }
    }

    pub(crate) fn note_dropped_event(&self, why: &str) {
        let n = self.counters.dropped_events.fetch_add(1, Ordering::Relaxed) + 1;
        // The first drop and then every hundredth, so that a flood cannot
        // turn into a flood of log lines.
        if n == 1 || n.is_multiple_of(100) {
            tracing::warn!(hook = %self.name, dropped_total = n, "dropped a runtime event: {why}");
        }
    }
}

/// Waits on a state published by a supervisor (a process's or a remote's)
/// until `settle` gives an answer for it, or `deadline` passes; `None`
/// means "not yet" (starting, reconnecting). `ended` says why there is no
/// answer when the publisher is gone.
pub(crate) async fn wait_for_state<S: Clone, T>(
    state: &watch::Sender<S>,
    deadline: Instant,
    budget: Duration,
    ended: &str,
    settle: impl Fn(S) -> Option<Result<T, CallError>>,
) -> Result<T, CallError> {
    let mut rx = state.subscribe();
    loop {
        let current = rx.borrow_and_update().clone();
        if let Some(answer) = settle(current) {
            return answer;
        }
        match timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(CallError::Unavailable(ended.into())),
            Err(_) => return Err(CallError::Timeout(budget)),
        }
    }
}

/// Counts a request as in flight until dropped, even when its caller's
/// future is dropped mid-way.
struct InFlight<'a>(&'a AtomicU64);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a AtomicU64) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Hands queued events to the hook in order, each within the observer
/// timeout; ends when the host shuts down.
pub(crate) async fn forward_events(
    entry: Arc<HookEntry>,
    mut rx: mpsc::Receiver<Arc<[u8]>>,
    mut shutdown: watch::Receiver<bool>,
) {
    let budget = Duration::from_millis(entry.defaults.observer_timeout_ms);
    loop {
        let line = tokio::select! {
            line = rx.recv() => match line { Some(l) => l, None => return },
            _ = stopping(&mut shutdown) => return,
        };
        let deadline = Instant::now() + budget;
        let sent = match entry.ready(deadline, budget).await {
            Ok(conn) => conn.notify_line(line, deadline).await,
            Err(e) => Err(e),
        };
        if let Err(e) = sent {
            let why = match e {
                CallError::Timeout(_) => format!(
                    "the hook did not take it within observer_timeout_ms ({} ms)",
                    budget.as_millis()
                ),
                other => other.to_string(),
            };
            entry.note_dropped_event(&why);
        }
    }
}
