//! One hook process as the rest of the host sees it: how it is spawned, its
//! current state (published by its supervisor), what it declared in hello,
//! and its counters. Its place in the chain (priority, filters, policy,
//! breaker) is a [`crate::members::Member`]; two configured hooks with the
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
use crate::error::CallError;
use crate::supervise::declaration::Declaration;
use crate::supervise::supervisor::stopping;
use crate::transport::connection::Connection;
use crate::transport::spawn::StderrTail;

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

pub use crate::supervise::declaration::Effective;

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
    /// Set by the event forwarder once it has handed on (or counted as
    /// lost) every event emitted before shutdown; the supervisor waits for
    /// it before closing the hook's stdin.
    events_done: watch::Sender<bool>,
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
        let declaration = Declaration::new(config.observe_patterns());
        let entry = Arc::new(HookEntry {
            name: name.into(),
            config,
            defaults,
            state: watch::channel(HookState::Starting).0,
            declaration,
            stderr: StderrTail::default(),
            counters: Counters::default(),
            events,
            events_done: watch::channel(false).0,
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

    /// Queues an encoded runtime event without waiting; a full queue (or
    /// one closed by shutdown) drops it, counts it and says so.
    pub(crate) fn offer_event(&self, line: &Arc<[u8]>) {
        offer(self, &self.events, line.clone());
    }

    /// Waits (at most `within`) until the event forwarder has handed on
    /// what was emitted before shutdown, so that closing stdin comes after
    /// those events and not before them.
    pub(crate) async fn events_forwarded(&self, within: Duration) {
        events_forwarded(&self.events_done, within).await;
    }
}

impl Observer for HookEntry {
    type Event = Arc<[u8]>;

    async fn deliver(
        &self,
        line: Arc<[u8]>,
        deadline: Instant,
        budget: Duration,
    ) -> Result<(), CallError> {
        let conn = self.ready(deadline, budget).await?;
        conn.notify_line(line, deadline).await
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn observer_timeout(&self) -> Duration {
        Duration::from_millis(self.defaults.observer_timeout_ms)
    }

    fn events_done(&self) -> &watch::Sender<bool> {
        &self.events_done
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

/// A hook that takes runtime events (a process, or a WebSocket remote):
/// what the one event forwarder of each needs of it.
pub(crate) trait Observer: Send + Sync + 'static {
    /// An event as this kind of hook takes it (an encoded line, params).
    type Event: Send + 'static;

    /// Hands one event on, at most until `deadline` (`budget` long).
    fn deliver(
        &self,
        event: Self::Event,
        deadline: Instant,
        budget: Duration,
    ) -> impl std::future::Future<Output = Result<(), CallError>> + Send;

    /// Its name, for the log.
    fn name(&self) -> &str;

    /// Where dropped events are counted.
    fn counters(&self) -> &Counters;

    /// How long one event may take to hand on.
    fn observer_timeout(&self) -> Duration;

    /// Set once what was emitted before shutdown is handed on (or lost
    /// and counted).
    fn events_done(&self) -> &watch::Sender<bool>;
}

/// Queues `event` without waiting; a full queue, or one closed by
/// shutdown, drops it, counts it and says so.
pub(crate) fn offer<O: Observer>(hook: &O, queue: &mpsc::Sender<O::Event>, event: O::Event) {
    match queue.try_send(event) {
        Ok(()) => {}
        Err(mpsc::error::TrySendError::Full(_)) => note_dropped(hook, "its event queue is full"),
        Err(mpsc::error::TrySendError::Closed(_)) => {
            note_dropped(hook, "the hook is shutting down")
        }
    }
}

/// Counts a dropped event; logs the first and then every hundredth, so
/// that a flood of drops cannot turn into a flood of log lines.
fn note_dropped<O: Observer>(hook: &O, why: &str) {
    let n = hook
        .counters()
        .dropped_events
        .fetch_add(1, Ordering::Relaxed)
        + 1;
    if n == 1 || n.is_multiple_of(100) {
        tracing::warn!(hook = %hook.name(), dropped_total = n, "dropped a runtime event: {why}");
    }
}

/// Waits (at most `within`) for `done`; see [`Observer::events_done`].
pub(crate) async fn events_forwarded(done: &watch::Sender<bool>, within: Duration) {
    let mut done = done.subscribe();
    let _ = tokio::time::timeout(within, done.wait_for(|d| *d)).await;
}

/// Hands queued events to the hook in order, each within the observer
/// timeout. At shutdown it first hands on what is still queued (spec
/// section 11: an event emitted before shutdown is delivered, or counted
/// and logged as lost), says so through [`Observer::events_done`] (the
/// hook's stdin or connection is closed only then), and ends.
pub(crate) async fn forward_events<O: Observer>(
    hook: Arc<O>,
    mut rx: mpsc::Receiver<O::Event>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let event = tokio::select! {
            e = rx.recv() => match e { Some(e) => e, None => break },
            _ = stopping(&mut shutdown) => break,
        };
        deliver_or_count(&*hook, event).await;
    }
    // Later emits fail at once (and are counted); what is queued is read.
    rx.close();
    let mut lost = 0u64;
    while let Some(event) = rx.recv().await {
        if !deliver_or_count(&*hook, event).await {
            lost += 1;
        }
    }
    if lost > 0 {
        tracing::warn!(hook = %hook.name(), lost, "{lost} runtime events emitted before shutdown were not delivered");
    }
    hook.events_done().send_replace(true);
}

/// Hands one event on within the observer timeout; counts and logs it as
/// dropped when that fails. Whether it was handed on.
async fn deliver_or_count<O: Observer>(hook: &O, event: O::Event) -> bool {
    let budget = hook.observer_timeout();
    let sent = hook.deliver(event, Instant::now() + budget, budget).await;
    let Err(e) = sent else { return true };
    let why = match e {
        CallError::Timeout(_) => format!(
            "the hook did not take it within observer_timeout_ms ({} ms)",
            budget.as_millis()
        ),
        other => other.to_string(),
    };
    note_dropped(hook, &why);
    false
}
