//! [`Host`]: what an agent embeds. It starts the configured hooks, runs
//! each stage through the chain, fans runtime events out to observers,
//! reloads a changed config, and shuts everything down.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use hookhost_protocol::chain::{ParamsError, StepOutcome};
use hookhost_protocol::event::{EventPattern, RuntimeEvent};
use hookhost_protocol::params::{AfterLlmParams, AfterToolParams, BeforeLlmParams, ToolCall};
use hookhost_protocol::stage::method;
use hookhost_protocol::{
    Chain, Decision, Flow, LifecycleEvent, LifecycleParams, OnError, Outcome, Stage,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::Instrument;

use crate::audit::{AuditLog, AuditRecord};
use crate::breaker::Admission;
use crate::builtin::BuiltinRegistry;
use crate::command::CommandHook;
use crate::config::{Config, Defaults, ProcessConfig, RemoteTransport, SpawnKey};
use crate::error::CallError;
use crate::hook::{HookEntry, forward_events};
use crate::member::{Member, MemberKind};
use crate::outcome::{Approval, LifecycleOutcome, StageOutcome, ToolOutcome};
use crate::remote::RemoteHook;
use crate::stats::{HookStats, MemberStats};
use crate::supervisor::{Started, supervise};

/// A hook that did not come up. It stays configured: a process's
/// supervisor keeps retrying with backoff, and meanwhile its `on_error`
/// policy answers for it, so a fail-closed guard that cannot start keeps
/// failing closed.
#[derive(Debug, Clone)]
pub struct StartFailure {
    /// The hook's name.
    pub hook: String,
    /// Why, with the tail of its stderr.
    pub error: String,
}

/// A hook process that came up.
#[derive(Debug, Clone)]
pub struct StartedHook {
    /// The hook's name (the first of those sharing the process).
    pub hook: String,
    /// Process id, protocol version and handshake time.
    pub info: Started,
}

/// One hook's part in one stage, for `--trace` output and debugging.
#[derive(Debug, Clone)]
pub struct HookTrace {
    /// The hook.
    pub hook: String,
    /// Its raw result, or how the call failed (or why it was skipped).
    pub answer: Result<Value, String>,
    /// From sending the request to having the answer (or giving up).
    pub elapsed: Duration,
    /// What the chain did with it.
    pub outcome: StepOutcome,
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

/// A running process and what stops it.
struct ProcessSlot {
    entry: Arc<HookEntry>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// A remote hook's connector and what stops it; `fingerprint` tells a
/// reload whether its settings changed.
struct RemoteSlot {
    hook: Arc<RemoteHook>,
    fingerprint: String,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
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
    processes: Mutex<BTreeMap<SpawnKey, ProcessSlot>>,
    /// Remote hooks by name (never shared: each has its own connection).
    remotes: Mutex<BTreeMap<String, RemoteSlot>>,
    defaults: RwLock<Defaults>,
    registry: BuiltinRegistry,
    audit: Option<AuditLog>,
    started: Mutex<Vec<StartedHook>>,
    failures: Mutex<Vec<StartFailure>>,
    event_seq: AtomicU64,
    request_seq: AtomicU64,
    /// One start or reload at a time, so two reloads cannot interleave.
    applying: tokio::sync::Mutex<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Supervisors stop their hooks gracefully if the runtime lives on;
        // if it is going away too, each process's guard SIGKILLs its group.
        let processes = self.processes.get_mut().unwrap_or_else(|p| p.into_inner());
        for slot in processes.values() {
            slot.shutdown.send_replace(true);
        }
        let remotes = self.remotes.get_mut().unwrap_or_else(|p| p.into_inner());
        for slot in remotes.values() {
            slot.shutdown.send_replace(true);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A process to start for one or more configured hooks.
struct ProcessPlan {
    key: SpawnKey,
    /// The first hook's name and config, with `intercept` and `observe`
    /// the union over every hook sharing the process.
    name: String,
    config: ProcessConfig,
    sharers: Vec<String>,
}

/// Groups the enabled process hooks by what makes them one process.
fn plan_processes(config: &Config) -> BTreeMap<SpawnKey, ProcessPlan> {
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
async fn start_processes(
    plans: Vec<ProcessPlan>,
    defaults: &Defaults,
) -> (
    Vec<(SpawnKey, ProcessSlot)>,
    Vec<StartedHook>,
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
            Ok(Ok(info)) => started.push(StartedHook { hook, info }),
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

/// Reports a remote's first connect and handshake.
type FirstAttempt = oneshot::Receiver<Result<(), String>>;

/// Starts the connectors of new remote hooks; the receivers report each
/// first attempt.
fn start_remotes(
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
        let mut tasks = vec![tokio::spawn(crate::remote::maintain(
            hook.clone(),
            shutdown.subscribe(),
            tx,
        ))];
        if hook.transport == RemoteTransport::WebSocket {
            tasks.push(tokio::spawn(crate::remote::forward_events(
                hook.clone(),
                events,
                shutdown.subscribe(),
            )));
        }
        let fingerprint = crate::member::fingerprint(c, defaults);
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
async fn stop_remote(slot: RemoteSlot, drain_within: Duration) {
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
async fn stop_process(slot: ProcessSlot, drain_within: Duration) {
    let until = Instant::now() + drain_within;
    while slot.entry.counters.in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    slot.shutdown.send_replace(true);
    for t in slot.tasks {
        let _ = t.await;
    }
}

/// What one stage run shares across its members.
struct Run<'a> {
    stage: Stage,
    request_id: String,
    chain_deadline: Instant,
    budget_ms: u64,
    trace: Option<&'a mut Vec<HookTrace>>,
}

/// A member whose verdict on a tool call guards it: one that fails closed
/// here, or a builtin (`deny_tools`, `max_iterations`).
fn is_guard(m: &Member, stage: Stage) -> bool {
    m.policy(stage) == OnError::Deny || matches!(m.kind, MemberKind::Builtin(_))
}

/// The `tool` of before_tool params.
fn tool_of(params: &Value) -> Value {
    params.get("tool").cloned().unwrap_or(Value::Null)
}

/// Whether a member takes part in this stage at all: it intercepts it,
/// and a command hook runs only for the lifecycle events it lists.
fn selected(m: &Member, stage: Stage, event: Option<LifecycleEvent>) -> bool {
    if !m.intercepts(stage) {
        return false;
    }
    match (event, &m.kind) {
        (Some(event), MemberKind::Command(c)) => c.handles(event.as_str()),
        _ => true,
    }
}

/// What a member's filters decide about one call.
enum Gate {
    /// Call it.
    Call,
    /// Filtered out (or an `if` error under `on_error = "allow"`).
    Skip,
    /// Its `if` failed to evaluate and its policy is deny: a failure of
    /// that hook, which its policy turns into a refusal.
    Fail(String),
}

/// Runs the member's `matcher` and `if`. An `if` that fails to evaluate
/// (a key the model left out, a wrong type) is the hook's failure: only
/// a hook whose policy is allow is skipped for it, so a model cannot walk
/// past a fail-closed gate by shaping the arguments.
fn filter_gate(m: &Member, stage: Stage, params: &Value) -> Gate {
    if m.filter.is_empty() {
        return Gate::Call;
    }
    match m.filter.evaluate(stage, params) {
        crate::filter::FilterVerdict::Run => Gate::Call,
        crate::filter::FilterVerdict::Skip => {
            MemberStats::bump(&m.stats.filtered);
            Gate::Skip
        }
        crate::filter::FilterVerdict::Error(e) => {
            MemberStats::bump(&m.stats.filter_errors);
            match m.policy(stage) {
                OnError::Allow => {
                    tracing::debug!(hook = %m.name, %stage, "`if` failed to evaluate, hook skipped (on_error = allow): {e}");
                    Gate::Skip
                }
                OnError::Deny => Gate::Fail(format!("its `if` failed to evaluate: {e}")),
            }
        }
    }
}

/// Logs a member's failure: at warn level, or at debug level for a hook
/// configured to fail quietly (`on_error = "ignore"`).
fn log_failure(m: &Member, stage: Stage, policy: OnError, error: &str) {
    if m.quiet_failures(stage) {
        tracing::debug!(hook = %m.name, %stage, on_error = %policy, "hook failed: {error}");
    } else {
        tracing::warn!(hook = %m.name, %stage, on_error = %policy, "hook failed: {error}");
    }
}

/// The verdict a hook's step amounts to, as audit and trace name it.
fn outcome_name(step: &StepOutcome, error: Option<&CallError>) -> &'static str {
    match step {
        StepOutcome::Applied(d) => match d {
            Decision::Continue => "continue",
            Decision::Modify(_) => "modify",
            Decision::Respond(_) => "respond",
            Decision::DenyTool(_) => "deny_tool",
            Decision::Abort { hard: false, .. } => "abort_turn",
            Decision::Abort { hard: true, .. } => "hard_abort",
            Decision::Approval { approved: true, .. } => "approved",
            Decision::Approval {
                approved: false, ..
            } => "refused",
            Decision::Lifecycle { block: true, .. } => "block",
            Decision::Lifecycle { block: false, .. } => "continue",
        },
        StepOutcome::Failed { .. } => match error {
            Some(CallError::Timeout(_)) => "timeout",
            Some(_) => "error",
            None => "skipped",
        },
    }
}

fn decision_reason(step: &StepOutcome) -> Option<String> {
    match step {
        StepOutcome::Applied(
            Decision::DenyTool(r)
            | Decision::Abort { reason: r, .. }
            | Decision::Approval { reason: r, .. }
            | Decision::Lifecycle {
                block: true,
                reason: r,
                ..
            },
        ) => r.clone(),
        _ => None,
    }
}

/// The span of one hook call, named `hook.<stage>`.
fn call_span(stage: Stage, hook: &str, request_id: &str) -> tracing::Span {
    macro_rules! span {
        ($name:literal) => {
            tracing::info_span!(
                $name,
                hook = %hook,
                stage = %stage,
                request_id = %request_id,
                duration_us = tracing::field::Empty,
                outcome = tracing::field::Empty,
            )
        };
    }
    match stage {
        Stage::BeforeLlm => span!("hook.before_llm"),
        Stage::AfterLlm => span!("hook.after_llm"),
        Stage::BeforeTool => span!("hook.before_tool"),
        Stage::AfterTool => span!("hook.after_tool"),
        Stage::ApproveTool => span!("hook.approve_tool"),
        Stage::Lifecycle => span!("hook.lifecycle"),
    }
}

impl Host {
    /// Starts every enabled hook with the shipped builtins available.
    /// See [`Host::start_with`].
    pub async fn start(config: Config) -> Host {
        Host::start_with(config, BuiltinRegistry::with_defaults()).await
    }

    /// Starts every enabled hook and waits for each handshake (each bounded
    /// by `hello_timeout_ms`); builtins come from `registry`. Hooks that
    /// fail are reported in [`Host::start_failures`] and logged; the others
    /// run. An audit file that cannot be opened is a start failure named
    /// `audit` (the host runs without it).
    pub async fn start_with(config: Config, registry: BuiltinRegistry) -> Host {
        let mut failures = Vec::new();
        let audit = match config.audit_path() {
            Some(path) if config.enabled => match AuditLog::open(&path) {
                Ok(a) => Some(a),
                Err(e) => {
                    tracing::error!("cannot open the audit log {}: {e}", path.display());
                    failures.push(StartFailure {
                        hook: "audit".into(),
                        error: format!("cannot open {}: {e}", path.display()),
                    });
                    None
                }
            },
            _ => None,
        };
        let host = Host {
            inner: Arc::new(Inner {
                chain: RwLock::new(Arc::new(Vec::new())),
                processes: Mutex::new(BTreeMap::new()),
                remotes: Mutex::new(BTreeMap::new()),
                defaults: RwLock::new(config.defaults.clone()),
                registry,
                audit,
                started: Mutex::new(Vec::new()),
                failures: Mutex::new(failures),
                event_seq: AtomicU64::new(0),
                request_seq: AtomicU64::new(0),
                applying: tokio::sync::Mutex::new(()),
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

    async fn apply(&self, config: Config) -> ReloadReport {
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
                let fingerprint = crate::member::fingerprint(c, &defaults);
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
                    .is_some_and(|m| m.fingerprint == crate::member::fingerprint(b, &defaults));
                let built = if same_config {
                    match old.get(name).map(|m| m.kind.clone()) {
                        Some(MemberKind::Builtin(hook)) => Ok(hook),
                        _ => self.inner.registry.build(name, &b.config),
                    }
                } else {
                    self.inner.registry.build(name, &b.config)
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
                            error: e,
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

    /// Hook processes that came up.
    pub fn started(&self) -> Vec<StartedHook> {
        lock(&self.inner.started).clone()
    }

    /// The chain's members in order.
    pub fn members(&self) -> Arc<Vec<Arc<Member>>> {
        self.chain()
    }

    /// The process a member runs in, if it is a process hook.
    pub fn process_of(&self, hook: &str) -> Option<Arc<HookEntry>> {
        self.chain()
            .iter()
            .find(|m| &*m.name == hook)
            .and_then(|m| match &m.kind {
                MemberKind::Process(p) => Some(p.clone()),
                _ => None,
            })
    }

    /// Per hook: calls, errors, timeouts, restarts, breaker state, dropped
    /// events, filter and skip counts, latency p50/p99.
    pub fn stats(&self) -> Vec<HookStats> {
        self.chain()
            .iter()
            .map(|m| {
                let s: &MemberStats = &m.stats;
                let (restarts, dropped) = match &m.kind {
                    MemberKind::Process(p) => (
                        p.counters.restarts.load(Ordering::Relaxed),
                        p.counters.dropped_events.load(Ordering::Relaxed),
                    ),
                    MemberKind::Remote(r) => (
                        r.counters.restarts.load(Ordering::Relaxed),
                        r.counters.dropped_events.load(Ordering::Relaxed),
                    ),
                    _ => (0, 0),
                };
                let (p50_us, p99_us) = s.percentiles();
                HookStats {
                    hook: m.name.to_string(),
                    kind: m.kind_name().to_string(),
                    calls: s.calls.load(Ordering::Relaxed),
                    errors: s.errors.load(Ordering::Relaxed),
                    timeouts: s.timeouts.load(Ordering::Relaxed),
                    restarts,
                    breaker: m.breaker.state().as_str().to_string(),
                    dropped_events: dropped,
                    filtered: s.filtered.load(Ordering::Relaxed),
                    filter_errors: s.filter_errors.load(Ordering::Relaxed),
                    breaker_skips: s.breaker_skips.load(Ordering::Relaxed),
                    budget_skips: s.budget_skips.load(Ordering::Relaxed),
                    p50_us,
                    p99_us,
                }
            })
            .collect()
    }

    /// Runs one stage over raw JSON params and returns the merged verdict;
    /// what `hookhost call` prints is `outcome.to_wire(stage)`.
    pub async fn run_stage(&self, stage: Stage, params: Value) -> Result<Outcome, ParamsError> {
        self.run_chain(stage, params, None).await
    }

    /// Like [`Host::run_stage`], also returning each hook's part: what it
    /// answered, how long it took, and what the chain made of it.
    pub async fn run_stage_traced(
        &self,
        stage: Stage,
        params: Value,
    ) -> Result<(Outcome, Vec<HookTrace>), ParamsError> {
        let mut trace = Vec::new();
        let outcome = self.run_chain(stage, params, Some(&mut trace)).await?;
        Ok((outcome, trace))
    }

    /// The chain driver. Each hook's part is recorded only when `trace` is
    /// given, so the plain path (every agent call) builds no trace.
    async fn run_chain(
        &self,
        stage: Stage,
        params: Value,
        trace: Option<&mut Vec<HookTrace>>,
    ) -> Result<Outcome, ParamsError> {
        let mut chain = Chain::new(stage, params)?;
        let members = self.chain();
        let budget_ms = self
            .inner
            .defaults
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .chain_budget_ms;
        let request_id = format!(
            "r{}",
            self.inner.request_seq.fetch_add(1, Ordering::Relaxed) + 1
        );
        let stage_span = tracing::info_span!("chain", stage = %stage, request_id = %request_id);
        let mut run = Run {
            stage,
            request_id,
            chain_deadline: Instant::now() + Duration::from_millis(budget_ms),
            budget_ms,
            trace,
        };
        async {
            // Guards called at before_tool, and the tool each one saw.
            let mut guards: Vec<(&Member, Value)> = Vec::new();
            for m in members.iter() {
                if !selected(m, stage, chain.event()) {
                    continue;
                }
                if stage == Stage::BeforeTool && is_guard(m, stage) {
                    guards.push((m, tool_of(chain.params())));
                }
                if self.gate_and_step(&mut run, m, &mut chain).await == Flow::Stop {
                    return;
                }
            }
            self.recheck_guards(&mut run, &guards, &mut chain).await;
        }
        .instrument(stage_span)
        .await;
        Ok(chain.finish())
    }

    /// Runs one member's filters, then the member (or its policy).
    async fn gate_and_step(&self, run: &mut Run<'_>, m: &Member, chain: &mut Chain) -> Flow {
        let failure = match filter_gate(m, run.stage, chain.params()) {
            Gate::Call => None,
            Gate::Skip => return Flow::Next,
            Gate::Fail(why) => Some(why),
        };
        self.step_member(run, m, chain, failure).await
    }

    /// A later hook renamed the tool: the guards that judged the old name
    /// judged a call that will not run, so each is called again on the
    /// final call, in chain order (spec/protocol.md §9). A guard that
    /// renames it once more ends the chain with a refusal, so renames
    /// cannot go round.
    async fn recheck_guards(
        &self,
        run: &mut Run<'_>,
        guards: &[(&Member, Value)],
        chain: &mut Chain,
    ) {
        let final_tool = tool_of(chain.params());
        for (m, _) in guards.iter().filter(|(_, seen)| *seen != final_tool) {
            if self.gate_and_step(run, m, chain).await == Flow::Stop {
                return;
            }
            if tool_of(chain.params()) != final_tool {
                let why = format!(
                    "hook `{}` renamed the tool again while the guards re-checked it",
                    m.name
                );
                chain.step("hookhost", OnError::Deny, Err(why));
                return;
            }
        }
    }

    /// Calls one member (unless `failure` already says why it failed) and
    /// feeds its answer to the chain, with breaker, figures, span, audit
    /// and trace.
    async fn step_member(
        &self,
        run: &mut Run<'_>,
        m: &Member,
        chain: &mut Chain,
        failure: Option<String>,
    ) -> Flow {
        let stage = run.stage;
        let ts = SystemTime::now();
        let begun = Instant::now();
        let span = call_span(stage, &m.name, &run.request_id);
        let mut permit = None;
        let reply = match failure {
            Some(why) => Err((why, None)),
            None => {
                self.call_member(run, m, chain.params(), begun, &span, &mut permit)
                    .await
            }
        };
        let elapsed = begun.elapsed();
        let policy = m.failure_policy(stage, reply.as_ref().err().and_then(|(_, e)| e.as_ref()));
        let flow = chain.step(
            &m.name,
            policy,
            reply.as_ref().map_err(|(why, _)| why.clone()),
        );
        let Some(step) = chain.steps().last() else {
            return flow;
        };
        if let Some(permit) = permit {
            // Deliberate verdicts are answers; only failures count.
            permit.record(matches!(step.outcome, StepOutcome::Failed { .. }));
        }
        let call_error = reply.as_ref().err().and_then(|(_, e)| e.as_ref());
        let outcome = outcome_name(&step.outcome, call_error);
        span.record("duration_us", elapsed.as_micros() as u64);
        span.record("outcome", outcome);
        let error = match &step.outcome {
            StepOutcome::Failed { error, .. } => {
                log_failure(m, stage, policy, error);
                Some(error.clone())
            }
            StepOutcome::Applied(_) => None,
        };
        if let Some(audit) = &self.inner.audit {
            audit.record(AuditRecord {
                ts,
                hook: m.name.to_string(),
                stage,
                request_id: run.request_id.clone(),
                duration: elapsed,
                outcome: outcome.to_string(),
                reason: decision_reason(&step.outcome),
                error,
            });
        }
        if let Some(trace) = run.trace.as_deref_mut() {
            trace.push(HookTrace {
                hook: m.name.to_string(),
                answer: reply.map_err(|(why, _)| why),
                elapsed,
                outcome: step.outcome.clone(),
            });
        }
        flow
    }

    /// Asks one member, within the chain budget and past its breaker:
    /// `Ok(answer)`, or `Err((why, the call error when it was called))`.
    async fn call_member<'m>(
        &self,
        run: &Run<'_>,
        m: &'m Member,
        params: &Value,
        begun: Instant,
        span: &tracing::Span,
        permit: &mut Option<crate::breaker::Permit<'m>>,
    ) -> Result<Value, (String, Option<CallError>)> {
        let stage = run.stage;
        if begun >= run.chain_deadline {
            MemberStats::bump(&m.stats.budget_skips);
            let why = format!(
                "skipped: the chain budget of {} ms was spent",
                run.budget_ms
            );
            return Err((why, None));
        }
        match m.breaker.admit() {
            Admission::Skip(why) => {
                MemberStats::bump(&m.stats.breaker_skips);
                Err((format!("skipped: {why}"), None))
            }
            Admission::Call(p) => {
                *permit = Some(p);
                let deadline = (begun + m.timeout(stage)).min(run.chain_deadline);
                MemberStats::bump(&m.stats.calls);
                let r = m
                    .call(stage, params, deadline, deadline - begun)
                    .instrument(span.clone())
                    .await;
                m.stats.observe(begun.elapsed());
                r.map_err(|e| {
                    MemberStats::bump(&m.stats.errors);
                    if matches!(e, CallError::Timeout(_)) {
                        MemberStats::bump(&m.stats.timeouts);
                    }
                    (e.to_string(), Some(e))
                })
            }
        }
    }

    /// Runs a typed stage. Params that do not serialize, or do not have
    /// the stage's shape, are refused without calling any hook: skipping
    /// every hook would let them through every gate.
    async fn run_typed<P: Serialize + DeserializeOwned>(
        &self,
        stage: Stage,
        params: P,
    ) -> (Outcome, P) {
        let value = match serde_json::to_value(&params) {
            Ok(v) => v,
            Err(e) => {
                let reason = format!("the {stage} params did not serialize: {e}");
                return (refusal(stage, reason), params);
            }
        };
        match self.run_stage(stage, value).await {
            Ok(outcome) => (outcome, params),
            Err(e) => (refusal(stage, e.to_string()), params),
        }
    }

    /// Runs before_tool: the chain may rewrite the call, answer it, deny
    /// it, or abort.
    pub async fn before_tool(&self, call: ToolCall) -> ToolOutcome<ToolCall> {
        let (outcome, original) = self.run_typed(Stage::BeforeTool, call).await;
        match outcome {
            Outcome::Continue { params, .. } => ToolOutcome::Continue(decode_or(params, original)),
            Outcome::Respond { result, .. } => ToolOutcome::Respond(result),
            Outcome::DenyTool { reason, .. } | Outcome::Refused { reason, .. } => {
                ToolOutcome::Deny { reason }
            }
            Outcome::Abort { hard, reason, .. } => ToolOutcome::Abort { hard, reason },
            // Lifecycle outcomes; not reachable at before_tool.
            Outcome::Blocked { reason, .. } => ToolOutcome::Deny { reason },
            Outcome::Lifecycle { .. } => ToolOutcome::Continue(original),
        }
    }

    /// Runs before_llm.
    pub async fn before_llm(&self, request: BeforeLlmParams) -> StageOutcome<BeforeLlmParams> {
        self.stage_outcome(Stage::BeforeLlm, request).await
    }

    /// Runs after_llm.
    pub async fn after_llm(&self, response: AfterLlmParams) -> StageOutcome<AfterLlmParams> {
        self.stage_outcome(Stage::AfterLlm, response).await
    }

    /// Runs after_tool.
    pub async fn after_tool(&self, result: AfterToolParams) -> StageOutcome<AfterToolParams> {
        self.stage_outcome(Stage::AfterTool, result).await
    }

    async fn stage_outcome<P: Serialize + DeserializeOwned>(
        &self,
        stage: Stage,
        params: P,
    ) -> StageOutcome<P> {
        let (outcome, original) = self.run_typed(stage, params).await;
        match outcome {
            Outcome::Continue { params, .. } => StageOutcome::Continue(decode_or(params, original)),
            Outcome::Abort { hard, reason, .. } => StageOutcome::Abort { hard, reason },
            // Not reachable for these stages (the chain rejects respond and
            // deny_tool there); treated as an abort rather than ignored.
            Outcome::Respond { by, .. } => StageOutcome::Abort {
                hard: false,
                reason: format!("hook `{by}` answered respond at {stage}"),
            },
            Outcome::DenyTool { reason, .. }
            | Outcome::Refused { reason, .. }
            | Outcome::Blocked { reason, .. } => StageOutcome::Abort {
                hard: false,
                reason,
            },
            Outcome::Lifecycle { .. } => StageOutcome::Continue(original),
        }
    }

    /// Runs approve_tool: every approver must approve.
    pub async fn approve_tool(&self, call: ToolCall) -> Approval {
        let (outcome, _) = self.run_typed(Stage::ApproveTool, call).await;
        match outcome {
            Outcome::Continue { .. } => Approval::Approved,
            Outcome::Refused { reason, .. }
            | Outcome::DenyTool { reason, .. }
            | Outcome::Abort { reason, .. }
            | Outcome::Blocked { reason, .. } => Approval::Refused { reason },
            // Not reachable at approve_tool; refused, as an approver must
            // say yes explicitly.
            Outcome::Lifecycle { .. } => Approval::Refused {
                reason: "a lifecycle outcome at approve_tool".into(),
            },
            Outcome::Respond { by, .. } => Approval::Refused {
                reason: format!("hook `{by}` answered respond at approve_tool"),
            },
        }
    }

    /// Runs a lifecycle event. A request event (session_start,
    /// user_prompt_submit, turn_start, subagent_start, pre_compact,
    /// before_compaction) goes through the chain and may be blocked or
    /// gather context, system messages and a summary. Any other event is
    /// emitted to observers as `lifecycle.<event>` and runs the command
    /// hooks that list it, whose output is only logged.
    pub async fn lifecycle(
        &self,
        event: LifecycleEvent,
        payload: Map<String, Value>,
    ) -> LifecycleOutcome {
        if !event.is_request() {
            self.emit(RuntimeEvent {
                id: self.next_event_id(),
                kind: event.event_kind(),
                time: crate::audit::rfc3339(SystemTime::now()),
                source: Some("hookhost".into()),
                scope: None,
                severity: None,
                payload: Value::Object(payload.clone()),
                extra: Map::new(),
            });
            let payload = Value::Object(payload);
            let mut running = tokio::task::JoinSet::new();
            for m in self.chain().iter() {
                if let MemberKind::Command(c) = &m.kind
                    && c.handles(event.as_str())
                {
                    let (c, payload) = (c.clone(), payload.clone());
                    running.spawn(async move { c.notify(event.as_str(), &payload).await });
                }
            }
            while running.join_next().await.is_some() {}
            return LifecycleOutcome::default();
        }
        let mut params = LifecycleParams::new(event);
        params.payload = payload;
        let value = match serde_json::to_value(&params) {
            Ok(v) => v,
            Err(e) => {
                let reason = format!("the {event} params did not serialize: {e}");
                return unaskable(event, reason);
            }
        };
        match self.run_stage(Stage::Lifecycle, value).await {
            Ok(Outcome::Blocked { reason, .. }) => LifecycleOutcome {
                blocked: Some(reason),
                ..LifecycleOutcome::default()
            },
            Ok(Outcome::Lifecycle {
                contexts,
                system_messages,
                summary,
            }) => LifecycleOutcome {
                blocked: None,
                contexts: contexts.into_iter().map(|(_, text)| text).collect(),
                system_messages,
                summary,
            },
            Ok(other) => {
                tracing::error!(%event, "unexpected lifecycle outcome {other:?}");
                LifecycleOutcome::default()
            }
            Err(e) => unaskable(event, e.to_string()),
        }
    }

    /// Hands a runtime event to every hook process that observes its
    /// kind. Never blocks: each process has a bounded queue, and a full
    /// queue drops the event for that process, counted and logged.
    pub fn emit(&self, event: RuntimeEvent) {
        let targets: Vec<Arc<HookEntry>> = lock(&self.inner.processes)
            .values()
            .filter(|s| s.entry.observes(&event.kind))
            .map(|s| s.entry.clone())
            .collect();
        let remotes: Vec<Arc<RemoteHook>> = lock(&self.inner.remotes)
            .values()
            .filter(|s| s.hook.observes(&event.kind))
            .map(|s| s.hook.clone())
            .collect();
        if targets.is_empty() && remotes.is_empty() {
            return;
        }
        // Encoded once: a remote takes the params as they are, and the
        // processes' line is built around the same text.
        let params = if remotes.is_empty() {
            None
        } else {
            match serde_json::value::to_raw_value(&event) {
                Ok(p) => Some(Arc::<serde_json::value::RawValue>::from(p)),
                Err(e) => {
                    tracing::error!(kind = %event.kind, "event did not encode ({e}); not sent");
                    return;
                }
            }
        };
        if !targets.is_empty() {
            let line = match &params {
                Some(p) => notification_line(method::RUNTIME_EVENT, &**p),
                None => notification_line(method::RUNTIME_EVENT, &event),
            };
            for entry in targets {
                entry.offer_event(&line);
            }
        }
        if let Some(params) = params {
            for hook in remotes {
                hook.offer_event(&params);
            }
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
        let slots: Vec<ProcessSlot> = std::mem::take(&mut *lock(&self.inner.processes))
            .into_values()
            .collect();
        let remotes: Vec<RemoteSlot> = std::mem::take(&mut *lock(&self.inner.remotes))
            .into_values()
            .collect();
        // Signal all first so that slow hooks stop in parallel.
        for slot in &slots {
            slot.shutdown.send_replace(true);
        }
        for slot in &remotes {
            slot.shutdown.send_replace(true);
        }
        for slot in remotes {
            for t in slot.tasks {
                let _ = t.await;
            }
        }
        for slot in slots {
            for t in slot.tasks {
                let _ = t.await;
            }
        }
        if let Some(audit) = &self.inner.audit {
            audit.close().await;
        }
    }

    /// Process ids of the hook processes running now, by hook name.
    pub fn pids(&self) -> Vec<(String, Option<u32>)> {
        self.chain()
            .iter()
            .filter_map(|m| match &m.kind {
                MemberKind::Process(p) => Some((m.name.to_string(), p.pid())),
                _ => None,
            })
            .collect()
    }
}

/// A lifecycle event whose params no hook could be asked about: blocked
/// when the event can be, as a fail-closed hook would have; otherwise it
/// goes on (there is nothing to refuse), logged.
fn unaskable(event: LifecycleEvent, reason: String) -> LifecycleOutcome {
    tracing::error!(%event, "{reason}; no hook was asked");
    LifecycleOutcome {
        blocked: event.can_block().then_some(reason),
        ..LifecycleOutcome::default()
    }
}

/// The stage's refusal, by the host itself, for params no hook could be
/// asked about: deny_tool, a refused approval, a block, or abort_turn.
fn refusal(stage: Stage, reason: String) -> Outcome {
    tracing::error!(%stage, "{reason}; refused without calling any hook");
    Outcome::refusal(stage, reason, "hookhost".to_string())
}

/// The chain validated every patched params object against the stage's
/// type, so decoding cannot fail; if it ever did, the caller's own params
/// are returned rather than anything half-made.
fn decode_or<P: DeserializeOwned>(value: Value, original: P) -> P {
    if value.is_null() {
        return original;
    }
    match serde_json::from_value(value) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!("merged params did not decode ({e}); using the caller's params");
            original
        }
    }
}

fn notification_line<T: Serialize + ?Sized>(method: &str, params: &T) -> Arc<[u8]> {
    let mut line = Vec::with_capacity(256);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    let _ = serde_json::to_writer(&mut line, method);
    line.extend_from_slice(br#","params":"#);
    let _ = serde_json::to_writer(&mut line, params);
    line.push(b'}');
    line.into()
}
