//! [`Host`]: what an agent embeds. It starts the configured hooks, runs
//! each stage through the chain, fans runtime events out to observers,
//! reloads a changed config, and shuts everything down.

mod apply;
mod decision;
mod driver;
mod foreign;
mod identity;
mod info;
mod plan;
mod stages;

use apply::PeerSlot;
use plan::PeerKey;

pub use crate::chain::HookTrace;
pub use crate::observe::decision::DecisionRecord;
pub use foreign::ForeignEvent;
pub use identity::Identity;
pub use info::{HookInfo, HookStatus};

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use hookhost_protocol::event::RuntimeEvent;

use crate::config::{Config, Defaults};
use crate::error::StartError;
use crate::members::Member;
use crate::members::builtin::BuiltinRegistry;
use crate::observe::audit::{AuditFigures, AuditLog, DEFAULT_QUEUE};
use crate::observe::observer::Observer;
use crate::observe::stats::HookStats;
use crate::policy::shared::StateStore;
use crate::supervise::events::Event;
use crate::supervise::peer::Peer;

/// A hook that did not come up. It stays configured: a process's
/// supervisor keeps retrying with backoff, and meanwhile its `on_error`
/// policy answers for it, so a fail-closed guard that cannot start keeps
/// failing closed.
#[derive(Debug, Clone)]
pub struct StartFailure {
    /// The hook's name.
    pub hook: String,
    /// Why, with the tail of its stderr for a process.
    pub error: StartError,
}

/// What [`Host::reload`] did, by hook name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Hooks whose settings and process stayed as they were.
    pub unchanged: Vec<String>,
    /// Hooks that are new or whose settings changed (a new process when
    /// their command, folder or environment changed).
    pub changed: Vec<String>,
    /// Hooks no longer configured.
    pub removed: Vec<String>,
}

/// The hook host. Cheap to clone; all clones share the same hooks.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

struct Inner {
    /// Members in chain order: priority, then name, across kinds. Swapped
    /// whole on reload; a stage run keeps the snapshot it started with.
    chain: RwLock<Arc<Vec<Arc<Member>>>>,
    /// The persistent hooks: processes by spawn key (shared by the hooks
    /// with the same command, folder and environment), remotes by name.
    peers: Mutex<BTreeMap<PeerKey, PeerSlot>>,
    defaults: RwLock<Defaults>,
    registry: BuiltinRegistry,
    audit: Option<AuditLog>,
    failures: Mutex<Vec<StartFailure>>,
    event_seq: AtomicU64,
    request_seq: AtomicU64,
    /// One start or reload at a time, so two reloads cannot interleave.
    applying: tokio::sync::Mutex<()>,
    /// The stop policies' counts per session: blocked stops in a row
    /// (`stop_block_limit`) and the quality gates' retries.
    stops: crate::chain::Stops,
    /// The store a gateway's replicas share state through
    /// (`Host::share_state`); every member built is given it.
    shared: crate::policy::shared::Slot,
    /// What the config in force came from, when the embedder says
    /// (`Host::set_policy`): on every decision record.
    policy: RwLock<Option<String>>,
    /// The embedder's observer (`Host::set_observer`): kept across
    /// reloads, since it belongs to the embedder, not to a config.
    observer: RwLock<Option<Arc<dyn Observer>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Supervisors stop their hooks gracefully if the runtime lives on;
        // if it is going away too, each process's guard SIGKILLs its group.
        let peers = self.peers.get_mut().unwrap_or_else(|p| p.into_inner());
        for slot in peers.values() {
            slot.shutdown.send_replace(true);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Host {
    /// Names the policy the config in force came from (a signed bundle's
    /// version and digest), for every [`DecisionRecord`] from now on;
    /// `None` when it came from a plain file. Set it with each reload.
    pub fn set_policy(&self, policy: Option<String>) {
        *self.inner.policy.write().unwrap_or_else(|p| p.into_inner()) = policy;
    }

    /// The policy [`Host::set_policy`] named.
    pub fn policy(&self) -> Option<String> {
        self.inner
            .policy
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Registers the embedder's observer: from now on it sees every
    /// finished hook call and every answered foreign event (see
    /// [`Observer`]), across reloads, until replaced. The library keeps
    /// no metrics of its own beyond [`Host::stats`]; this is where an
    /// embedder keeps its own (the gateway's Prometheus `/metrics`).
    pub fn set_observer(&self, observer: Arc<dyn Observer>) {
        *self
            .inner
            .observer
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }

    /// The observer [`Host::set_observer`] registered, for one run.
    fn observer(&self) -> Option<Arc<dyn Observer>> {
        self.inner
            .observer
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Starts every enabled hook with the shipped builtins available.
    /// See [`Host::start_with`].
    pub async fn start(config: Config) -> Host {
        Host::start_with(config, BuiltinRegistry::with_defaults()).await
    }

    /// Starts every enabled hook and waits for each handshake (each bounded
    /// by `hello_timeout_ms`); builtins come from `registry`. Hooks that
    /// fail are reported in [`Host::start_failures`] and logged; the others
    /// run. An audit log that cannot be opened is a start failure named
    /// `audit` (the host runs without it).
    pub async fn start_with(config: Config, registry: BuiltinRegistry) -> Host {
        let mut failures = Vec::new();
        let audit = if config.enabled {
            open_audit(&config, &mut failures)
        } else {
            None
        };
        let host = Host {
            inner: Arc::new(Inner {
                chain: RwLock::new(Arc::new(Vec::new())),
                peers: Mutex::new(BTreeMap::new()),
                defaults: RwLock::new(config.defaults.clone()),
                registry,
                audit,
                failures: Mutex::new(failures),
                event_seq: AtomicU64::new(0),
                request_seq: AtomicU64::new(0),
                applying: tokio::sync::Mutex::new(()),
                stops: crate::chain::Stops::default(),
                shared: crate::policy::shared::Slot::new(),
                policy: RwLock::new(None),
                observer: RwLock::new(None),
            }),
        };
        host.apply(config).await;
        host
    }

    /// Applies a changed config: unchanged hooks keep running (same
    /// process, same breaker and figures), changed ones restart, removed
    /// ones shut down once their in-flight calls complete. Calls already
    /// running finish on the chain they started with. The audit path is
    /// read only at start.
    pub async fn reload(&self, config: Config) -> ReloadReport {
        self.apply(config).await
    }

    fn chain(&self) -> Arc<Vec<Arc<Member>>> {
        self.inner
            .chain
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Hooks that did not come up (at start or at a reload).
    pub fn start_failures(&self) -> Vec<StartFailure> {
        lock(&self.inner.failures).clone()
    }

    /// Every configured hook as it is now, in chain order: kind, status,
    /// pid or url, stages, observes, hello time and figures.
    pub fn hooks(&self) -> Vec<HookInfo> {
        self.chain().iter().map(|m| info::hook_info(m)).collect()
    }

    /// Shares what must agree across a gateway's replicas through
    /// `store`: the stop policies' counts per session (a stop's blocks in
    /// a row, a quality gate's retries), prompt hooks' session spend and
    /// cached decisions, and the breakers of remote, webhook and prompt
    /// hooks; `false` if a store was already given (it stays). Give it
    /// before serving; members a reload builds are given it too.
    pub fn share_state(&self, store: Arc<dyn StateStore>) -> bool {
        if self.inner.shared.set(store.clone()).is_err() {
            return false;
        }
        for member in self.chain().iter() {
            member.share(&store);
        }
        self.inner.stops.share(store)
    }

    /// The audit log's figures (written, lost, dropped on a full queue,
    /// queued now), when there is one: what `status` and `/metrics` show,
    /// so that an audit store falling behind is seen, not discovered.
    pub fn audit_figures(&self) -> Option<AuditFigures> {
        self.inner.audit.as_ref().map(AuditLog::figures)
    }

    /// Per hook: calls, errors, timeouts, restarts, breaker state, dropped
    /// events, filter and skip counts, latency p50/p99.
    pub fn stats(&self) -> Vec<HookStats> {
        self.chain().iter().map(|m| info::stats_of(m)).collect()
    }

    /// Hands a runtime event to every persistent hook that observes its
    /// kind. Never blocks: each has a bounded queue, and a full queue
    /// drops the event for that hook, counted and logged.
    pub fn emit(&self, event: RuntimeEvent) {
        let targets: Vec<Arc<Peer>> = lock(&self.inner.peers)
            .values()
            .filter(|s| s.peer.observes(&event.kind))
            .map(|s| s.peer.clone())
            .collect();
        if targets.is_empty() {
            return;
        }
        // Encoded once: a process takes the line, a remote the params in it.
        let encoded = match Event::encode(&event) {
            Ok(e) => e,
            Err(e) => {
                tracing::error!(kind = %event.kind, "event did not encode ({e}); not sent");
                return;
            }
        };
        for peer in targets {
            peer.offer_event(&encoded);
        }
    }

    /// A fresh event id, unique within this host, for callers that build
    /// events without ids of their own.
    pub fn next_event_id(&self) -> String {
        let n = self.inner.event_seq.fetch_add(1, Ordering::Relaxed) + 1;
        format!("evt-{}-{n}", std::process::id())
    }

    /// Stops every hook: close stdin, wait, SIGTERM the group, wait,
    /// SIGKILL; then flushes the audit log. Returns when all is done. Calls
    /// made afterwards resolve by each hook's policy.
    pub async fn shutdown(&self) {
        let slots: Vec<PeerSlot> = std::mem::take(&mut *lock(&self.inner.peers))
            .into_values()
            .collect();
        // Signal all first so that slow hooks stop in parallel.
        for slot in &slots {
            slot.shutdown.send_replace(true);
        }
        for slot in slots {
            slot.join().await;
        }
        if let Some(audit) = &self.inner.audit {
            audit.close().await;
        }
    }
}

/// Opens the audit log `config` names, or records why not in `failures`.
fn open_audit(config: &Config, failures: &mut Vec<StartFailure>) -> Option<AuditLog> {
    let opened = match config.audit_store()? {
        Ok(store) => {
            let queue = config.audit.as_ref().and_then(|a| a.queue);
            AuditLog::open(&store, queue.unwrap_or(DEFAULT_QUEUE))
                .map_err(|e| (store.to_string(), e))
        }
        Err(why) => Err(("[hooks.audit]".to_string(), std::io::Error::other(why))),
    };
    match opened {
        Ok(log) => Some(log),
        Err((path, e)) => {
            tracing::error!("cannot open the audit log {path}: {e}");
            failures.push(StartFailure {
                hook: "audit".into(),
                error: StartError::Audit {
                    path,
                    source: Arc::new(e),
                },
            });
            None
        }
    }
}
