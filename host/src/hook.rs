//! One configured process hook as the rest of the host sees it: its
//! settings, its current state (published by its supervisor), what it
//! turned out to intercept and observe, and its counters.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use hookhost_protocol::event::{EventPattern, intersect_patterns};
use hookhost_protocol::{HelloResult, OnError, Stage};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, timeout_at};

use crate::config::{Defaults, ProcessConfig};
use crate::connection::Connection;
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

/// What the hook gets called for: config narrowed by its hello declaration.
#[derive(Debug, Clone, Default)]
pub struct Effective {
    /// Stages it is called for.
    pub intercept: Vec<Stage>,
    /// Event kinds forwarded to it.
    pub observe: Vec<EventPattern>,
}

/// Counters a hook accumulates over the host's life.
#[derive(Debug, Default)]
pub struct Counters {
    /// Calls made.
    pub calls: AtomicU64,
    /// Calls that failed (any [`CallError`]).
    pub errors: AtomicU64,
    /// Calls that timed out.
    pub timeouts: AtomicU64,
    /// Restarts after a crash or failed start.
    pub restarts: AtomicU64,
    /// Runtime events dropped for this hook.
    pub dropped_events: AtomicU64,
}

/// The shared handle of one process hook.
pub struct HookEntry {
    /// The name in the config.
    pub name: Arc<str>,
    /// Its settings.
    pub config: ProcessConfig,
    /// Stage defaults and limits.
    pub defaults: Defaults,
    pub(crate) state: watch::Sender<HookState>,
    effective: RwLock<Effective>,
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
        let effective = Effective {
            intercept: config.intercept.clone(),
            observe: config.observe_patterns(),
        };
        let entry = Arc::new(HookEntry {
            name: name.into(),
            config,
            defaults,
            state: watch::channel(HookState::Starting).0,
            effective: RwLock::new(effective),
            stderr: StderrTail::default(),
            counters: Counters::default(),
            events,
            pid: AtomicU32::new(0),
        });
        (entry, rx)
    }

    /// What it is called for now.
    pub fn effective(&self) -> Effective {
        self.effective
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Narrows config by a hello declaration; config may narrow, never widen.
    pub(crate) fn apply_hello(&self, hello: &HelloResult) {
        let intercept = match &hello.intercept {
            None => self.config.intercept.clone(),
            Some(declared) => self
                .config
                .intercept
                .iter()
                .copied()
                .filter(|s| declared.contains(s))
                .collect(),
        };
        let declared_observe: Option<Vec<EventPattern>> = hello.observe.as_ref().map(|list| {
            list.iter()
                .filter_map(|p| EventPattern::parse(p).ok())
                .collect()
        });
        let observe =
            intersect_patterns(declared_observe.as_deref(), &self.config.observe_patterns());
        let mut e = self.effective.write().unwrap_or_else(|p| p.into_inner());
        *e = Effective { intercept, observe };
    }

    /// Whether it is called at `stage`.
    pub fn intercepts(&self, stage: Stage) -> bool {
        self.effective
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .intercept
            .contains(&stage)
    }

    /// Whether it wants events of `kind`.
    pub fn observes(&self, kind: &str) -> bool {
        self.effective
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .observe
            .iter()
            .any(|p| p.matches(kind))
    }

    /// The policy for a failure at `stage`.
    pub fn policy(&self, stage: Stage) -> OnError {
        self.config.policy(stage)
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
        let mut rx = self.state.subscribe();
        loop {
            let current = rx.borrow_and_update().clone();
            match current {
                HookState::Ready(conn) if !conn.is_closed() => return Ok(conn),
                HookState::Ready(_) | HookState::Starting => {}
                HookState::Failed(why) => return Err(CallError::Unavailable(why)),
                HookState::Stopped => {
                    return Err(CallError::Unavailable("the host is shutting down".into()));
                }
            }
            match timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(CallError::Unavailable("its supervisor ended".into())),
                Err(_) => return Err(CallError::Timeout(budget)),
            }
        }
    }

    /// Calls the hook at `stage` with `params`, within its deadline.
    pub async fn call(&self, stage: Stage, params: &Value) -> Result<Value, CallError> {
        let budget = self.config.timeout(stage, &self.defaults);
        let deadline = Instant::now() + budget;
        self.counters.calls.fetch_add(1, Ordering::Relaxed);
        let result = match self.ready(deadline, budget).await {
            Ok(conn) => conn.request(stage.method(), params, deadline, budget).await,
            Err(e) => Err(e),
        };
        if let Err(e) = &result {
            self.counters.errors.fetch_add(1, Ordering::Relaxed);
            if matches!(e, CallError::Timeout(_)) {
                self.counters.timeouts.fetch_add(1, Ordering::Relaxed);
            }
        }
        result
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
