//! One persistent hook as the rest of the host sees it, process or
//! remote alike: its state (published by its keep-alive task), what its
//! hello declared, its figures, and the two things a caller does with it:
//! send a request, offer a runtime event. Its place in the chain
//! (priority, filters, policy, breaker) belongs to the chain member that
//! uses it, a floor above; two configured process hooks with the same command, folder and
//! environment share one `Peer`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use hookhost_protocol::event::EventPattern;
use hookhost_protocol::{HelloResult, Stage};
use serde_json::Value;
#[cfg(feature = "remote")]
use tokio::sync::Notify;
use tokio::sync::{mpsc, watch};

use crate::config::Defaults;
use crate::error::CallError;
use crate::policy::deadline::Deadline;
use crate::supervise::declaration::{Declaration, Effective};
use crate::supervise::events::{self, Event};
use crate::supervise::handshake::Hello;
use crate::transport::connection::Connection;

/// Where a peer is in its life.
#[derive(Clone)]
pub(crate) enum PeerState {
    /// Starting, restarting or reconnecting; calls wait for it within
    /// their deadline.
    Starting,
    /// Handshake done; calls go through this link.
    Ready(Link),
    /// Could not start, crashed too often, or unreachable; calls fail at
    /// once (and the hook's policy decides) until a retry succeeds.
    Down(String),
    /// Shut down for good.
    Stopped,
}

/// What a ready peer is reached through; cheap to clone. A process's
/// pipe is called directly on the caller's task (no hop, no boxing).
#[derive(Clone)]
pub(crate) enum Link {
    /// JSON-RPC over a child's stdin and stdout.
    Pipe(Arc<Connection>),
    /// A WebSocket or HTTP client.
    #[cfg(feature = "remote")]
    Remote(crate::supervise::remote::Client),
}

impl Link {
    /// Requests written and not yet answered (known for a pipe only).
    pub(crate) fn unanswered(&self) -> usize {
        match self {
            Link::Pipe(conn) => conn.pending_count(),
            #[cfg(feature = "remote")]
            Link::Remote(_) => 0,
        }
    }

    /// Whether calls can still go through it (a ready state can lag
    /// behind a connection that just dropped).
    fn usable(&self) -> bool {
        match self {
            Link::Pipe(conn) => !conn.is_closed(),
            #[cfg(feature = "remote")]
            Link::Remote(client) => client.is_connected(),
        }
    }
}

/// What carries a peer, for the read model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PeerKind {
    /// A child process spoken to over stdio.
    Process,
    /// A network service; its URL as it may be shown (no password).
    #[cfg(feature = "remote")]
    Remote {
        /// The URL, password masked.
        url: String,
    },
}

/// Figures a peer accumulates over its life; shared by every member the
/// peer answers for.
#[derive(Debug, Default)]
pub(crate) struct PeerStats {
    /// Requests sent and not yet answered or given up on; reload waits for
    /// zero before stopping a peer it no longer needs.
    pub(crate) in_flight: AtomicU64,
    /// Restarts (or reconnects) after a crash, a loss or a failed start.
    pub(crate) restarts: AtomicU64,
    /// Runtime events dropped for this peer.
    pub(crate) dropped_events: AtomicU64,
}

/// The shared handle of one persistent hook.
pub(crate) struct Peer {
    /// The name of the first configured hook it answers for.
    pub(crate) name: Arc<str>,
    /// What carries it.
    pub(crate) kind: PeerKind,
    /// Stage defaults and limits.
    pub(crate) defaults: Defaults,
    state: watch::Sender<PeerState>,
    declaration: Declaration,
    /// Figures.
    pub(crate) stats: PeerStats,
    events: mpsc::Sender<Event>,
    /// Set by the event forwarder once it has handed on (or counted as
    /// lost) every event emitted before shutdown; the keep-alive task
    /// waits for it before closing the link.
    events_done: watch::Sender<bool>,
    /// A call found the link broken (an HTTP transport failure): the
    /// keep-alive task handshakes again.
    #[cfg(feature = "remote")]
    relink: Notify,
    pid: AtomicU32,
    version: AtomicU32,
    hello_us: AtomicU64,
}

impl Peer {
    /// A new peer in state Starting that takes events matching `observe`,
    /// with its event queue's receiver.
    pub(crate) fn new(
        name: &str,
        kind: PeerKind,
        observe: Vec<EventPattern>,
        defaults: Defaults,
    ) -> (Arc<Peer>, mpsc::Receiver<Event>) {
        let (events, rx) = mpsc::channel(defaults.event_queue);
        let peer = Arc::new(Peer {
            name: name.into(),
            kind,
            defaults,
            state: watch::channel(PeerState::Starting).0,
            declaration: Declaration::new(observe),
            stats: PeerStats::default(),
            events,
            events_done: watch::channel(false).0,
            #[cfg(feature = "remote")]
            relink: Notify::new(),
            pid: AtomicU32::new(0),
            version: AtomicU32::new(0),
            hello_us: AtomicU64::new(0),
        });
        (peer, rx)
    }

    /// What it is called for now.
    pub(crate) fn effective(&self) -> Effective {
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

    /// Whether its hello declared `stage` (true when it declared nothing).
    pub(crate) fn declares(&self, stage: Stage) -> bool {
        self.declaration.declares(stage)
    }

    /// Whether it wants events of `kind`.
    pub(crate) fn observes(&self, kind: &str) -> bool {
        self.declaration.observes(kind)
    }

    /// The process id of the latest start, for a process peer.
    pub(crate) fn pid(&self) -> Option<u32> {
        Some(self.pid.load(Ordering::Relaxed)).filter(|p| *p != 0)
    }

    pub(crate) fn set_pid(&self, pid: u32) {
        self.pid.store(pid, Ordering::Relaxed);
    }

    /// What the latest successful hello reported (none before the first).
    pub(crate) fn hello(&self) -> Option<Hello> {
        let version = self.version.load(Ordering::Relaxed);
        (version != 0).then(|| Hello {
            version,
            took: Duration::from_micros(self.hello_us.load(Ordering::Relaxed)),
        })
    }

    pub(crate) fn record_hello(&self, hello: Hello) {
        self.hello_us
            .store(hello.took.as_micros() as u64, Ordering::Relaxed);
        self.version.store(hello.version, Ordering::Relaxed);
    }

    /// Where it is in its life now.
    pub(crate) fn state(&self) -> PeerState {
        self.state.borrow().clone()
    }

    /// Publishes a new state (the keep-alive task's job).
    pub(crate) fn publish(&self, state: PeerState) {
        self.state.send_replace(state);
    }

    /// Asks the keep-alive task for a new handshake.
    #[cfg(feature = "remote")]
    pub(crate) fn relink(&self) {
        self.relink.notify_one();
    }

    /// Resolves when a call asked for a new handshake.
    #[cfg(feature = "remote")]
    pub(crate) async fn relink_asked(&self) {
        self.relink.notified().await;
    }

    /// Waits until the peer is ready, at most until `deadline`.
    pub(crate) async fn ready(&self, deadline: Deadline) -> Result<Link, CallError> {
        let mut rx = self.state.subscribe();
        loop {
            let current = rx.borrow_and_update().clone();
            match current {
                PeerState::Ready(link) if link.usable() => return Ok(link),
                PeerState::Ready(_) | PeerState::Starting => {}
                PeerState::Down(why) => return Err(CallError::Unavailable(why)),
                PeerState::Stopped => {
                    return Err(CallError::Unavailable("the host is shutting down".into()));
                }
            }
            if deadline.bound(rx.changed()).await?.is_err() {
                return Err(CallError::Unavailable("its supervisor ended".into()));
            }
        }
    }

    /// Sends one request once the peer is ready, waiting at most until
    /// `deadline`.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Deadline,
    ) -> Result<Value, CallError> {
        let _in_flight = InFlight::enter(&self.stats.in_flight);
        match self.ready(deadline).await? {
            Link::Pipe(conn) => conn.request(method, params, deadline).await,
            #[cfg(feature = "remote")]
            Link::Remote(client) => {
                crate::supervise::remote::request(self, &client, method, params, deadline).await
            }
        }
    }

    /// Queues an encoded runtime event without waiting; a full queue (or
    /// one closed by shutdown) drops it, counts it and says so.
    pub(crate) fn offer_event(&self, event: &Event) {
        match self.events.try_send(event.clone()) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                events::note_dropped(self, "its event queue is full")
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                events::note_dropped(self, "the hook is shutting down")
            }
        }
    }

    /// Says that what was emitted before shutdown is handed on (or lost
    /// and counted).
    pub(crate) fn events_forwarded_now(&self) {
        self.events_done.send_replace(true);
    }

    /// Waits (at most `within`) until the event forwarder has handed on
    /// what was emitted before shutdown, so that closing the link comes
    /// after those events and not before them.
    pub(crate) async fn events_forwarded(&self, within: Duration) {
        let mut done = self.events_done.subscribe();
        let _ = tokio::time::timeout(within, done.wait_for(|d| *d)).await;
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
