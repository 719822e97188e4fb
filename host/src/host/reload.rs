//! Starting, reloading and stopping the configured hooks: which processes
//! to share, which to keep across a reload, and how the removed ones are
//! drained and stopped.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hookhost_protocol::event::EventPattern;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::{Config, Defaults, ProcessConfig, RemoteTransport, SpawnKey};
use crate::members::command::CommandHook;
use crate::members::{Member, MemberKind};
use crate::supervise::hook::{HookEntry, forward_events};
use crate::supervise::remote::RemoteHook;
use crate::supervise::supervisor::{Started, supervise};

use super::*;

impl Host {
    pub(super) async fn apply(&self, config: Config) -> ReloadReport {
        let _one_at_a_time = self.inner.applying.lock().await;
        let defaults = config.defaults.clone();
        let mut plans = if config.enabled {
            plan_processes(&config)
        } else {
            BTreeMap::new()
        };
        let old_defaults = self
            .inner
            .defaults
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        // Which processes can be kept as they are.
        let (keep, to_start): (Vec<SpawnKey>, Vec<ProcessPlan>) = {
            let running = lock(&self.inner.processes);
            let mut keep = Vec::new();
            let mut start = Vec::new();
            for (key, plan) in std::mem::take(&mut plans) {
                if running.contains_key(&key) && defaults == old_defaults {
                    keep.push(key);
                } else {
                    start.push(plan);
                }
            }
            (keep, start)
        };
        // Remotes: those whose settings (and the defaults) are unchanged
        // keep their connection; the others get a new one.
        let (mut keep_remotes, mut fresh_remotes) = (Vec::new(), Vec::new());
        {
            let running = lock(&self.inner.remotes);
            for (name, c) in config
                .remotes
                .iter()
                .filter(|(_, c)| config.enabled && c.enabled)
            {
                let fingerprint = crate::members::fingerprint(c, &defaults);
                if running
                    .get(name)
                    .is_some_and(|slot| slot.fingerprint == fingerprint)
                {
                    keep_remotes.push(name.clone());
                } else {
                    fresh_remotes.push(name.clone());
                }
            }
        }
        let mut remote_failures = Vec::new();
        let connecting = start_remotes(&config, fresh_remotes, &defaults, &mut remote_failures);
        // Processes and remotes come up together; each is bounded by its
        // own handshake deadline.
        let (new_slots, started, failures) = start_processes(to_start, &defaults).await;
        let mut new_remotes = Vec::new();
        for (name, slot, rx) in connecting {
            let error = match rx.await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(_) => Some("its connector ended before the handshake".into()),
            };
            if let Some(error) = error {
                remote_failures.push(StartFailure {
                    hook: name.clone(),
                    error,
                });
            }
            new_remotes.push((name, slot));
        }
        let (remote_hooks, removed_remotes) = {
            let mut running = lock(&self.inner.remotes);
            let mut next: BTreeMap<String, RemoteSlot> = BTreeMap::new();
            for name in &keep_remotes {
                if let Some(slot) = running.remove(name) {
                    next.insert(name.clone(), slot);
                }
            }
            next.extend(new_remotes);
            let removed: Vec<RemoteSlot> = std::mem::take(&mut *running).into_values().collect();
            let hooks: BTreeMap<String, Arc<RemoteHook>> = next
                .iter()
                .map(|(k, s)| (k.clone(), s.hook.clone()))
                .collect();
            *running = next;
            (hooks, removed)
        };
        let mut removed_slots = Vec::new();
        let entries: BTreeMap<SpawnKey, Arc<HookEntry>> = {
            let mut running = lock(&self.inner.processes);
            let mut next: BTreeMap<SpawnKey, ProcessSlot> = BTreeMap::new();
            for key in &keep {
                if let Some(slot) = running.remove(key) {
                    next.insert(key.clone(), slot);
                }
            }
            for (key, slot) in new_slots {
                next.insert(key, slot);
            }
            removed_slots.extend(std::mem::take(&mut *running).into_values());
            let entries = next
                .iter()
                .map(|(k, s)| (k.clone(), s.entry.clone()))
                .collect();
            *running = next;
            entries
        };
        // Kept processes may now be shared differently: refresh what they observe.
        for entry in entries.values() {
            let mut patterns: Vec<EventPattern> = Vec::new();
            for p in config.processes.values().filter(|p| p.enabled) {
                let mut p = p.clone();
                p.dir = Some(config.hook_dir(&p));
                if entries
                    .get(&p.spawn_key())
                    .is_some_and(|e| Arc::ptr_eq(entry, e))
                {
                    for pat in p.observe_patterns() {
                        if !patterns.contains(&pat) {
                            patterns.push(pat);
                        }
                    }
                }
            }
            entry.set_observe(patterns);
        }
        lock(&self.inner.started).extend(started);
        lock(&self.inner.failures).extend(failures);
        lock(&self.inner.failures).extend(remote_failures.iter().cloned());

        // Members, reusing unchanged ones.
        let old: BTreeMap<String, Arc<Member>> = self
            .chain()
            .iter()
            .map(|m| (m.name.to_string(), m.clone()))
            .collect();
        let mut report = ReloadReport::default();
        let mut members: Vec<Arc<Member>> = Vec::new();
        let mut take = |name: &str, fresh: Member, report: &mut ReloadReport| {
            let same = old.get(name).filter(|m| {
                m.fingerprint == fresh.fingerprint
                    && match (&m.kind, &fresh.kind) {
                        (MemberKind::Process(a), MemberKind::Process(b)) => Arc::ptr_eq(a, b),
                        (MemberKind::Remote(a), MemberKind::Remote(b)) => Arc::ptr_eq(a, b),
                        (MemberKind::Builtin(_), MemberKind::Builtin(_))
                        | (MemberKind::Command(_), MemberKind::Command(_)) => true,
                        _ => false,
                    }
            });
            match same {
                Some(m) => {
                    report.unchanged.push(name.to_string());
                    members.push(m.clone());
                }
                None => {
                    report.changed.push(name.to_string());
                    members.push(Arc::new(fresh));
                }
            }
        };
        if config.enabled {
            for (name, p) in &config.processes {
                if !p.enabled {
                    continue;
                }
                let mut resolved = p.clone();
                resolved.dir = Some(config.hook_dir(&resolved));
                let Some(entry) = entries.get(&resolved.spawn_key()) else {
                    continue;
                };
                take(
                    name,
                    Member::process(name, p, entry.clone(), &defaults),
                    &mut report,
                );
            }
            for (name, b) in &config.builtins {
                if !b.enabled {
                    continue;
                }
                let same_config = old
                    .get(name)
                    .is_some_and(|m| m.fingerprint == crate::members::fingerprint(b, &defaults));
                let built = if same_config {
                    match old.get(name).map(|m| m.kind.clone()) {
                        Some(MemberKind::Builtin(hook)) => Ok(hook),
                        _ => self
                            .inner
                            .registry
                            .build(name, &b.config)
                            .map_err(|e| e.to_string()),
                    }
                } else {
                    self.inner
                        .registry
                        .build(name, &b.config)
                        .map_err(|e| e.to_string())
                };
                if let Err(e) = &built {
                    tracing::error!(hook = %name, "builtin `{name}` cannot be built: {e}");
                    lock(&self.inner.failures).push(StartFailure {
                        hook: name.clone(),
                        error: e.clone(),
                    });
                }
                take(
                    name,
                    Member::builtin(name, b, built, &defaults),
                    &mut report,
                );
            }
        }
        for (name, c) in config
            .remotes
            .iter()
            .filter(|(_, c)| config.enabled && c.enabled)
        {
            let hook = remote_hooks.get(name).cloned().ok_or_else(|| {
                remote_failures
                    .iter()
                    .find(|f| &f.hook == name)
                    .map(|f| f.error.clone())
                    .unwrap_or_else(|| "its connector could not be built".into())
            });
            take(name, Member::remote(name, c, hook, &defaults), &mut report);
        }
        if config.enabled {
            for (name, c) in config.commands.iter().filter(|(_, c)| c.enabled) {
                match CommandHook::new(name, c, &config.command_dir(c)) {
                    Ok(hook) => take(
                        name,
                        Member::command(name, c, Arc::new(hook), &defaults),
                        &mut report,
                    ),
                    Err(e) => {
                        tracing::error!(hook = %name, "command hook `{name}` cannot be set up: {e}");
                        lock(&self.inner.failures).push(StartFailure {
                            hook: name.clone(),
                            error: e.to_string(),
                        });
                    }
                }
            }
        }
        members.sort_by(|a, b| (a.priority, &*a.name).cmp(&(b.priority, &*b.name)));
        let names: Vec<String> = members.iter().map(|m| m.name.to_string()).collect();
        report.removed = old.keys().filter(|n| !names.contains(n)).cloned().collect();
        *self.inner.chain.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(members);
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
        for slot in removed_slots {
            stop_process(slot, drain).await;
        }
        for slot in removed_remotes {
            stop_remote(slot, drain).await;
        }
        report
    }
}

/// A running process and what stops it.
pub(super) struct ProcessSlot {
    pub(super) entry: Arc<HookEntry>,
    pub(super) shutdown: watch::Sender<bool>,
    pub(super) tasks: Vec<JoinHandle<()>>,
}

/// A remote hook's connector and what stops it; `fingerprint` tells a
/// reload whether its settings changed.
pub(super) struct RemoteSlot {
    pub(super) hook: Arc<RemoteHook>,
    pub(super) fingerprint: String,
    pub(super) shutdown: watch::Sender<bool>,
    pub(super) tasks: Vec<JoinHandle<()>>,
}

/// A process to start for one or more configured hooks.
pub(super) struct ProcessPlan {
    key: SpawnKey,
    /// The first hook's name and config, with `intercept` and `observe`
    /// the union over every hook sharing the process.
    name: String,
    config: ProcessConfig,
    sharers: Vec<String>,
}

/// Groups the enabled process hooks by what makes them one process.
pub(super) fn plan_processes(config: &Config) -> BTreeMap<SpawnKey, ProcessPlan> {
    let mut plans: BTreeMap<SpawnKey, ProcessPlan> = BTreeMap::new();
    for (name, p) in &config.processes {
        if !p.enabled {
            continue;
        }
        let mut p = p.clone();
        p.dir = Some(config.hook_dir(&p));
        let key = p.spawn_key();
        match plans.get_mut(&key) {
            Some(plan) => {
                for s in &p.intercept {
                    if !plan.config.intercept.contains(s) {
                        plan.config.intercept.push(*s);
                    }
                }
                for o in &p.observe {
                    if !plan.config.observe.contains(o) {
                        plan.config.observe.push(o.clone());
                    }
                }
                plan.sharers.push(name.clone());
            }
            None => {
                plans.insert(
                    key.clone(),
                    ProcessPlan {
                        key,
                        name: name.clone(),
                        config: p,
                        sharers: vec![name.clone()],
                    },
                );
            }
        }
    }
    for plan in plans.values() {
        if plan.sharers.len() > 1 {
            tracing::info!(
                hooks = ?plan.sharers,
                "hooks {:?} share one process (same command, dir and env)",
                plan.sharers
            );
        }
    }
    plans
}

/// Starts the planned processes together and waits for each first hello.
pub(super) async fn start_processes(
    plans: Vec<ProcessPlan>,
    defaults: &Defaults,
) -> (
    Vec<(SpawnKey, ProcessSlot)>,
    Vec<(String, Started)>,
    Vec<StartFailure>,
) {
    let mut pending = Vec::new();
    for plan in plans {
        let (shutdown, _) = watch::channel(false);
        let (entry, events) = HookEntry::new(&plan.name, plan.config, defaults.clone());
        let (tx, rx) = oneshot::channel();
        let tasks = vec![
            tokio::spawn(supervise(entry.clone(), shutdown.subscribe(), tx)),
            tokio::spawn(forward_events(entry.clone(), events, shutdown.subscribe())),
        ];
        pending.push((
            plan.key,
            plan.name,
            ProcessSlot {
                entry,
                shutdown,
                tasks,
            },
            rx,
        ));
    }
    let mut slots = Vec::new();
    let mut started = Vec::new();
    let mut failures = Vec::new();
    for (key, hook, slot, rx) in pending {
        match rx.await {
            Ok(Ok(info)) => started.push((hook, info)),
            Ok(Err(error)) => failures.push(StartFailure { hook, error }),
            Err(_) => failures.push(StartFailure {
                hook,
                error: "its supervisor ended before the handshake".into(),
            }),
        }
        slots.push((key, slot));
    }
    (slots, started, failures)
}

/// Starts the connectors of new remote hooks; the receivers report each
/// first attempt.
pub(super) fn start_remotes(
    config: &Config,
    fresh: Vec<String>,
    defaults: &Defaults,
    failures: &mut Vec<StartFailure>,
) -> Vec<(String, RemoteSlot, FirstAttempt)> {
    let mut pending = Vec::new();
    for name in fresh {
        let Some(c) = config.remotes.get(&name) else {
            continue;
        };
        let (hook, events) = match RemoteHook::new(&name, c.clone(), defaults.clone()) {
            Ok(h) => h,
            Err(e) => {
                // Only a config built in code, which skipped
                // `Config::parse`, gets here; its member fails every call.
                failures.push(StartFailure {
                    hook: name.clone(),
                    error: e,
                });
                continue;
            }
        };
        let (shutdown, _) = watch::channel(false);
        let (tx, rx) = oneshot::channel();
        let mut tasks = vec![tokio::spawn(crate::supervise::remote::maintain(
            hook.clone(),
            shutdown.subscribe(),
            tx,
        ))];
        if hook.transport == RemoteTransport::WebSocket {
            tasks.push(tokio::spawn(crate::supervise::remote::forward_events(
                hook.clone(),
                events,
                shutdown.subscribe(),
            )));
        }
        let fingerprint = crate::members::fingerprint(c, defaults);
        pending.push((
            name,
            RemoteSlot {
                hook,
                fingerprint,
                shutdown,
                tasks,
            },
            rx,
        ));
    }
    pending
}

/// Stops one remote: waits (bounded) for its in-flight calls, then closes
/// its connection.
pub(super) async fn stop_remote(slot: RemoteSlot, drain_within: Duration) {
    let until = Instant::now() + drain_within;
    while slot.hook.counters.in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    slot.shutdown.send_replace(true);
    for t in slot.tasks {
        let _ = t.await;
    }
}

/// Stops one process: waits (bounded) for its in-flight calls, then the
/// graceful ladder.
pub(super) async fn stop_process(slot: ProcessSlot, drain_within: Duration) {
    let until = Instant::now() + drain_within;
    while slot.entry.counters.in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    slot.shutdown.send_replace(true);
    for t in slot.tasks {
        let _ = t.await;
    }
}
