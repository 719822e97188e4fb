//! Carrying out a [`Plan`]: start the new peers (all together, each
//! bounded by its handshake deadline), swap in the new set of peers,
//! build the members (reusing the unchanged ones), swap the chain, then
//! drain and stop the peers no longer needed. One at a time: the host's
//! `applying` lock is held throughout.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::plan::{self, MemberPlan, PeerKey, PeerPlan, PeerSpec, Plan};
use super::{Host, ReloadReport, StartFailure, lock};
use crate::config::{Backend, BuiltinConfig, Config, Defaults, HookSetConfig};
use crate::error::StartError;
use crate::members::command::CommandHook;
use crate::members::hook_set::{self, HookSet};
use crate::members::{Member, MemberKind};
use crate::supervise::peer::Peer;
use crate::supervise::{self, Launched};

/// What a member of the plan gets from its backend.
enum Answerer {
    /// What answers it, to build the member over.
    Built(MemberKind),
    /// Nothing built: the running member is kept, and building its
    /// builtin or group anew would only repeat (or report again) the work.
    Kept,
}

/// A running peer and what stops it.
pub(super) struct PeerSlot {
    pub(super) peer: Arc<Peer>,
    /// What it was started from and with, for the next plan.
    spec: PeerSpec,
    defaults: Defaults,
    pub(super) shutdown: tokio::sync::watch::Sender<bool>,
    pub(super) tasks: Vec<JoinHandle<()>>,
}

impl PeerSlot {
    /// Stops the peer: waits (at most `drain_within`) for its in-flight
    /// calls, then the graceful end.
    pub(super) async fn stop(self, drain_within: Duration) {
        let until = Instant::now() + drain_within;
        while self.peer.stats.in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.shutdown.send_replace(true);
        self.join().await;
    }

    /// Waits for its tasks (after shutdown was signalled).
    pub(super) async fn join(self) {
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

/// The peers after a start: the new ones, and why some did not come up.
struct Started {
    slots: Vec<(PeerKey, PeerSlot)>,
    failures: Vec<StartFailure>,
}

impl Host {
    /// Applies `config`: see [`Host::reload`].
    pub(super) async fn apply(&self, mut config: Config) -> ReloadReport {
        let _one_at_a_time = self.inner.applying.lock().await;
        config.skip_unknown_builtins(|name| self.inner.registry.contains(name));
        let plan = plan::plan(&self.running(), &config);
        let defaults = &config.defaults;
        let started = start_peers(&plan.start, defaults).await;
        lock(&self.inner.failures).extend(started.failures.iter().cloned());
        let (peers, removed) = self.swap_peers(&plan, started.slots);
        for (key, peer) in &peers {
            let observe = plan.observe.get(key).cloned().unwrap_or_default();
            if matches!(key, PeerKey::Process(_)) {
                peer.set_observe(observe);
            }
        }
        let report = self.swap_chain(&plan, &config, &peers, &started.failures);
        *self
            .inner
            .defaults
            .write()
            .unwrap_or_else(|p| p.into_inner()) = defaults.clone();
        let drain = Duration::from_millis(
            defaults
                .approval_timeout_ms
                .max(defaults.interceptor_timeout_ms),
        );
        for slot in removed {
            slot.stop(drain).await;
        }
        report
    }

    /// What runs now, for the planner.
    fn running(&self) -> plan::Running {
        let slots = lock(&self.inner.peers);
        let peers = slots
            .iter()
            .map(|(k, s)| {
                let running = plan::RunningPeer {
                    spec: s.spec.clone(),
                    defaults: s.defaults.clone(),
                };
                (k.clone(), running)
            })
            .collect();
        let key_of = |p: &Arc<Peer>| {
            slots
                .iter()
                .find(|(_, s)| Arc::ptr_eq(&s.peer, p))
                .map(|(k, _)| k.clone())
        };
        let members = self
            .chain()
            .iter()
            .map(|m| {
                let peer = match &m.kind {
                    MemberKind::Peer(p) => key_of(p),
                    _ => None,
                };
                let running = plan::RunningMember {
                    configured: m.configured.clone(),
                    peer,
                    usable: !matches!(m.kind, MemberKind::Unavailable(_)),
                };
                (m.name.to_string(), running)
            })
            .collect();
        plan::Running { peers, members }
    }

    /// Installs the kept and new peers; the peers now running and the
    /// slots to stop.
    fn swap_peers(
        &self,
        plan: &Plan,
        fresh: Vec<(PeerKey, PeerSlot)>,
    ) -> (BTreeMap<PeerKey, Arc<Peer>>, Vec<PeerSlot>) {
        let mut running = lock(&self.inner.peers);
        let mut next: BTreeMap<PeerKey, PeerSlot> = BTreeMap::new();
        for key in &plan.keep {
            if let Some(slot) = running.remove(key) {
                next.insert(key.clone(), slot);
            }
        }
        next.extend(fresh);
        let removed = std::mem::take(&mut *running).into_values().collect();
        let peers = next
            .iter()
            .map(|(k, s)| (k.clone(), s.peer.clone()))
            .collect();
        *running = next;
        (peers, removed)
    }

    /// Builds the members (reusing the unchanged ones) and swaps the chain.
    fn swap_chain(
        &self,
        plan: &Plan,
        config: &Config,
        peers: &BTreeMap<PeerKey, Arc<Peer>>,
        failures: &[StartFailure],
    ) -> ReloadReport {
        let old: BTreeMap<String, Arc<Member>> = self
            .chain()
            .iter()
            .map(|m| (m.name.to_string(), m.clone()))
            .collect();
        let mut report = ReloadReport {
            removed: plan.removed.clone(),
            ..ReloadReport::default()
        };
        let mut members: Vec<Arc<Member>> = Vec::new();
        for m in &plan.members {
            let kept = old.get(&m.spec.name).filter(|_| m.reuse);
            let Some(member) = self.member(m, kept, config, peers, failures) else {
                continue;
            };
            match kept.filter(|k| Arc::ptr_eq(k, &member)) {
                Some(_) => report.unchanged.push(m.spec.name.clone()),
                None => report.changed.push(m.spec.name.clone()),
            }
            members.push(member);
        }
        members.sort_by(|a, b| plan::chain_order(config.format, a, b));
        *self.inner.chain.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(members);
        report
    }

    /// One member of the new chain: `kept` when the plan reuses it, else
    /// built from its spec; none for a hook whose peer is gone or whose
    /// command cannot be set up.
    fn member(
        &self,
        m: &MemberPlan,
        kept: Option<&Arc<Member>>,
        config: &Config,
        peers: &BTreeMap<PeerKey, Arc<Peer>>,
        failures: &[StartFailure],
    ) -> Option<Arc<Member>> {
        match (
            self.answerer(m, kept.is_some(), config, peers, failures)?,
            kept,
        ) {
            (_, Some(k)) => Some(k.clone()),
            (Answerer::Built(kind), None) => {
                let member = Member::new(&m.spec, kind, &config.defaults);
                if let Some(store) = self.inner.shared.get() {
                    member.share(store);
                }
                Some(Arc::new(member))
            }
            (Answerer::Kept, None) => None,
        }
    }

    /// What answers a hook, by its backend: the one place a kind of hook
    /// is built. `None` when the member cannot be had at all (its peer is
    /// gone, its command cannot be set up: checked for a kept member too).
    fn answerer(
        &self,
        m: &MemberPlan,
        kept: bool,
        config: &Config,
        peers: &BTreeMap<PeerKey, Arc<Peer>>,
        failures: &[StartFailure],
    ) -> Option<Answerer> {
        let name = m.spec.name.as_str();
        #[cfg(not(feature = "remote"))]
        let _ = failures;
        let kind = match &m.spec.backend {
            Backend::Process(_) => MemberKind::Peer(peers.get(m.peer.as_ref()?)?.clone()),
            #[cfg(feature = "remote")]
            Backend::Remote(_) => {
                let peer = m.peer.as_ref().and_then(|k| peers.get(k)).cloned();
                MemberKind::or_unavailable(
                    peer.ok_or_else(|| unbuilt(name, failures)),
                    MemberKind::Peer,
                )
            }
            #[cfg(not(feature = "remote"))]
            Backend::Remote(_) => return None,
            Backend::Command {
                config: c,
                tool_names,
            } => {
                let dir = config.command_dir(c);
                let hook = CommandHook::new(name, c, &dir, tool_names.clone()).map_err(|e| {
                    tracing::error!(hook = %name, "command hook `{name}` cannot be set up: {e}");
                    self.failed(name, e);
                });
                MemberKind::Command(Arc::new(hook.ok()?))
            }
            _ if kept => return Some(Answerer::Kept),
            Backend::Builtin(b) => self.builtin(name, b),
            Backend::HookSet {
                config: c,
                tool_names,
            } => MemberKind::HookSet(Arc::new(self.hook_set(
                name,
                c,
                tool_names,
                &config.defaults,
            )?)),
        };
        Some(Answerer::Built(kind))
    }

    /// A builtin's answerer; one that cannot be built fails every call (its
    /// policy answers) and is reported.
    fn builtin(&self, name: &str, b: &BuiltinConfig) -> MemberKind {
        let built = self.inner.registry.build(name, &b.config).map_err(|e| {
            tracing::error!(hook = %name, "builtin `{name}` cannot be built: {e}");
            let why = e.to_string();
            self.failed(name, e);
            why
        });
        MemberKind::or_unavailable(built, MemberKind::Builtin)
    }

    /// A docker-agent hook group; one whose command cannot be set up is
    /// reported and left out, as a lone command hook is.
    fn hook_set(
        &self,
        name: &str,
        c: &HookSetConfig,
        tool_names: &Arc<BTreeMap<String, String>>,
        defaults: &Defaults,
    ) -> Option<HookSet> {
        let tools = hook_set::Tools {
            registry: &self.inner.registry,
            tool_names,
            defaults,
        };
        HookSet::build(name, c, &tools)
            .map_err(|why| {
                tracing::error!(hook = %name, "hook group `{name}` cannot be set up: {why}");
                self.failed(name, std::io::Error::other(why));
            })
            .ok()
    }

    /// Reports a builtin or command hook that could not be built.
    fn failed(&self, hook: &str, error: impl std::error::Error + Send + Sync + 'static) {
        lock(&self.inner.failures).push(StartFailure {
            hook: hook.to_string(),
            error: StartError::Build {
                source: Arc::new(error),
            },
        });
    }
}

/// Why a remote has no peer: its start failure, as its calls will say.
#[cfg(feature = "remote")]
fn unbuilt(name: &str, failures: &[StartFailure]) -> String {
    failures
        .iter()
        .find(|f| f.hook == name)
        .map(|f| f.error.to_string())
        .unwrap_or_else(|| "its connector could not be built".into())
}

/// Starts the planned peers together and waits for each first hello.
async fn start_peers(plans: &[PeerPlan], defaults: &Defaults) -> Started {
    let mut pending = Vec::new();
    let mut failures = Vec::new();
    for plan in plans {
        match launch(plan, defaults) {
            Ok(launched) => pending.push((plan, launched)),
            // Only a config built in code, which skipped `Config::parse`,
            // gets here; its member fails every call.
            Err(error) => failures.push(StartFailure {
                hook: plan.name.clone(),
                error,
            }),
        }
    }
    let mut slots = Vec::new();
    for (plan, (peer, launched)) in pending {
        let first = launched.first.await.unwrap_or(Err(StartError::Abandoned));
        if let Err(error) = first {
            failures.push(StartFailure {
                hook: plan.name.clone(),
                error,
            });
        }
        let slot = PeerSlot {
            peer,
            spec: plan.spec.clone(),
            defaults: defaults.clone(),
            shutdown: launched.shutdown,
            tasks: launched.tasks,
        };
        slots.push((plan.key.clone(), slot));
    }
    Started { slots, failures }
}

/// Starts the tasks of one planned peer.
fn launch(plan: &PeerPlan, defaults: &Defaults) -> Result<(Arc<Peer>, Launched), StartError> {
    match &plan.spec {
        PeerSpec::Process(config) => {
            let (peer, events, connector) =
                supervise::process::peer(&plan.name, config.clone(), defaults.clone());
            let launched = supervise::launch(&peer, connector, Some(events));
            Ok((peer, launched))
        }
        #[cfg(feature = "remote")]
        PeerSpec::Remote(config) => {
            let (peer, events, connector) =
                supervise::remote::peer(&plan.name, config.clone(), defaults.clone())?;
            let events = connector.takes_events().then_some(events);
            let launched = supervise::launch(&peer, connector, events);
            Ok((peer, launched))
        }
    }
}
