//! A member of the chain: one configured hook, of any kind, with
//! everything that decides whether and how it is called: its priority,
//! filters, deadline, failure policy, circuit breaker and figures.

pub(crate) mod builtin;
pub(crate) mod command;
pub(crate) mod hook_set;
mod picoclaw;
#[cfg(feature = "remote")]
pub(crate) mod prompt;

use std::sync::Arc;
use std::time::Duration;

use hookhost_protocol::{LifecycleEvent, OnError, Stage};
use serde_json::Value;

use crate::config::{Backend, Defaults, FailurePolicy, HookSpec, QualityGate, Scope};
use crate::dialect::origin::Origin;
use crate::error::CallError;
use crate::members::builtin::BuiltinHook;
use crate::members::command::{CommandHook, Heard};
use crate::members::hook_set::HookSet;
use crate::observe::stats::MemberStats;
use crate::observe::usage::Answer;
use crate::policy::breaker::Breaker;
use crate::policy::deadline::Deadline;
use crate::policy::filter::Filter;
use crate::supervise::peer::Peer;

/// The answer of a hook (or group) that has nothing to say: `continue`,
/// at every stage. At approve_tool it decides nothing (never an
/// approval), so the agent asks the user as it would with no hook.
pub(crate) fn neutral() -> Value {
    serde_json::json!({"action": "continue"})
}

/// What answers the calls.
#[derive(Clone)]
pub(crate) enum MemberKind {
    /// A persistent hook: a process (possibly shared with other members)
    /// or a remote.
    Peer(Arc<Peer>),
    /// An in-process builtin.
    Builtin(Arc<dyn BuiltinHook>),
    /// A one-shot command, spawned per call.
    Command(Arc<CommandHook>),
    /// A docker-agent hook group: one agent file's hooks for one event,
    /// merged by docker-agent's rules.
    HookSet(Arc<HookSet>),
    /// A hook that could not be set up (a builtin not built, a remote's
    /// connector, a bad filter); every call fails with this text,
    /// so its `on_error` policy still answers for it.
    Unavailable(String),
}

/// One hook's place in the chain.
pub(crate) struct Member {
    /// The configured name.
    pub name: Arc<str>,
    /// Lower runs first; ties break by name.
    pub priority: i64,
    /// What answers.
    pub kind: MemberKind,
    /// The stages the config asks for.
    intercept: Vec<Stage>,
    /// What its failures decide, as configured; under `ignore`, those the
    /// chain lets pass are logged at debug level only.
    on_error: Option<FailurePolicy>,
    /// Stages where a failure refuses whatever `on_error` says (a
    /// docker-agent pre_tool_use or tool_guard command).
    fail_closed: Vec<Stage>,
    timeout_ms: Option<u64>,
    /// Matcher and `if` condition.
    pub filter: Filter,
    /// Opens after repeated failures.
    pub breaker: Breaker,
    /// Counters and latencies.
    pub stats: MemberStats,
    defaults: Defaults,
    /// A process hook of a PicoClaw config: spoken to in PicoClaw's
    /// variant of the wire ([`picoclaw`]).
    picoclaw: bool,
    /// The member's own settings, to tell on reload whether it changed.
    pub(crate) configured: Configured,
    /// Who it is for, as configured (its filter applies it); shown by
    /// `hookhost check`.
    pub scope: Scope,
    /// Its quality gate at subagent_stop (`block_on_failure`,
    /// `max_retries`), when it is one.
    pub quality_gate: Option<QualityGate>,
}

/// A member's spec and the defaults it was built with: equal values mean
/// an unchanged member.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Configured {
    spec: HookSpec,
    defaults: Defaults,
}

impl Configured {
    /// What a member built from `spec` under `defaults` is configured with.
    pub(crate) fn of(spec: &HookSpec, defaults: &Defaults) -> Configured {
        Configured {
            spec: spec.clone(),
            defaults: defaults.clone(),
        }
    }
}

impl MemberKind {
    /// What a built builtin (or a peer) answers with, or, when it could
    /// not be had, a member that fails every call with why.
    pub(crate) fn or_unavailable<T>(built: Result<T, String>, kind: fn(T) -> MemberKind) -> Self {
        built.map_or_else(MemberKind::Unavailable, kind)
    }
}

impl Member {
    /// The member of `spec`, answered by `kind` (what its backend built).
    /// The one constructor: every setting is read from the spec here, and
    /// what a backend decides itself (its stages, its deadline, where it
    /// fails closed) is asked of it.
    pub(crate) fn new(spec: &HookSpec, kind: MemberKind, defaults: &Defaults) -> Member {
        let s = &spec.settings;
        let intercept = stages(spec, &kind);
        let fail_closed = spec.backend.fail_closed(&intercept);
        let timeout_ms = deadline_ms(spec, &kind, &intercept);
        let matcher = s
            .matcher
            .as_deref()
            .filter(|_| spec.backend.filters_by_matcher());
        let (kind, filter) = with_filter(kind, matcher, s.condition.as_deref(), &s.scope);
        // A fail-closed hook's open breaker would refuse every call for the
        // cool-down, which anyone able to make it fail could trigger: off
        // unless the config turns it on.
        let fails_closed = intercept.iter().any(|st| {
            fail_closed.contains(st) || FailurePolicy::resolve(s.on_error, *st) == OnError::Deny
        });
        let mut breaker = s.breaker();
        breaker.enabled = Some(breaker.enabled.unwrap_or(!fails_closed));
        Member {
            name: spec.name.as_str().into(),
            priority: s.priority,
            kind,
            intercept,
            on_error: s.on_error,
            fail_closed,
            timeout_ms,
            filter,
            breaker: Breaker::new(&spec.name, &breaker, defaults),
            stats: MemberStats::default(),
            defaults: defaults.clone(),
            picoclaw: matches!(&spec.backend, Backend::Process(p) if p.picoclaw),
            configured: Configured::of(spec, defaults),
            scope: s.scope.clone(),
            quality_gate: s.quality_gate(),
        }
    }

    /// A builtin's member, for the chain's tests: [`Member::new`] with
    /// `built`, or a member that fails every call with why.
    #[cfg(test)]
    pub(crate) fn builtin(
        name: &str,
        config: &crate::config::BuiltinConfig,
        built: Result<Arc<dyn BuiltinHook>, String>,
        defaults: &Defaults,
    ) -> Member {
        let kind = MemberKind::or_unavailable(built, MemberKind::Builtin);
        Member::new(&HookSpec::builtin(name, config), kind, defaults)
    }

    /// Shares what must agree across a gateway's replicas through
    /// `store`: a prompt hook's session spend and cache, and the breaker of
    /// a hook every replica calls alike (remote, webhook, prompt). A
    /// process hook's breaker stays its own: each replica has its process.
    pub(crate) fn share(&self, store: &Arc<dyn crate::policy::shared::StateStore>) {
        match &self.kind {
            MemberKind::Command(c) => c.share(store),
            MemberKind::HookSet(s) => s.share(store),
            _ => {}
        }
        use crate::config::HookKind;
        if matches!(
            self.kind(),
            HookKind::Remote | HookKind::Webhook | HookKind::Prompt
        ) {
            self.breaker.share(store);
        }
    }

    /// Its kind's name (`process`, `remote`, `builtin`, `command`,
    /// `webhook`, `prompt`, `hook_set`), from its backend.
    pub(crate) fn kind_name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// Its kind, from its backend ([`Backend::kind`]).
    pub(crate) fn kind(&self) -> crate::config::HookKind {
        self.configured.spec.backend.kind()
    }

    /// Whether it is called at `stage`: the config asks for it and, for a
    /// peer, its hello declared it.
    pub(crate) fn intercepts(&self, stage: Stage) -> bool {
        self.intercept.contains(&stage)
            && match &self.kind {
                MemberKind::Peer(p) => p.declares(stage),
                MemberKind::Builtin(_)
                | MemberKind::Command(_)
                | MemberKind::HookSet(_)
                | MemberKind::Unavailable(_) => true,
            }
    }

    /// The stages it is called for now.
    pub(crate) fn stages(&self) -> Vec<Stage> {
        Stage::ALL
            .into_iter()
            .filter(|s| self.intercepts(*s))
            .collect()
    }

    /// Whether it takes part in lifecycle `event`: a command hook runs
    /// only for the events it lists; every other kind sees them all.
    pub(crate) fn handles_event(&self, event: LifecycleEvent) -> bool {
        match &self.kind {
            MemberKind::Command(c) => c.handles(event.as_str()),
            MemberKind::HookSet(s) => s.handles(event.as_str()),
            _ => true,
        }
    }

    /// Its run for a lifecycle event nobody waits on (session_end,
    /// turn_end, an agent's own event such as `cwd_changed`, ...), when it
    /// has one: only a command hook that lists the event runs for it, and
    /// its output is only logged, except a block at an event its agent
    /// lets a hook block, which the run gives back as the reason. The
    /// event is a name, because the vocabulary of such events is open.
    /// Owned, so the host can run every such hook at once.
    pub(crate) fn notification(
        &self,
        event: &str,
        payload: &Value,
        origin: Option<Arc<Origin>>,
    ) -> Option<impl std::future::Future<Output = (Option<String>, Option<Heard>)> + Send + 'static>
    {
        let runner = match &self.kind {
            MemberKind::Command(c) if c.handles(event) => Notified::Command(c.clone()),
            MemberKind::HookSet(s) if s.handles(event) => Notified::HookSet(s.clone()),
            _ => return None,
        };
        let (payload, event) = (payload.clone(), event.to_string());
        Some(async move {
            match runner {
                Notified::Command(c) => c.notify_from(&event, &payload, origin.as_deref()).await,
                Notified::HookSet(s) => (s.notify(&event, &payload).await, None),
            }
        })
    }

    /// Whether it is a command hook written for the agent event `origin`
    /// answers (its dialect, its event), at this call.
    pub(crate) fn is_own_hook(&self, origin: &Origin, stage: Stage, params: &Value) -> bool {
        matches!(&self.kind, MemberKind::Command(c) if c.is_own_hook(origin, stage, params))
    }

    /// Whether it is a command hook that makes `origin`'s event run its
    /// own hooks in sequence ([`CommandHook::makes_sequential`]).
    pub(crate) fn makes_sequential(&self, origin: &Origin, stage: Stage, params: &Value) -> bool {
        matches!(&self.kind, MemberKind::Command(c) if c.makes_sequential(origin, stage, params))
    }

    /// Whether it is a project's command the user has not trusted, which
    /// never runs (`config::trust`).
    pub(crate) fn is_untrusted(&self) -> bool {
        matches!(&self.kind, MemberKind::Command(c) if c.untrusted().is_some())
    }

    /// Whether its verdict on a tool call guards that call: it fails
    /// closed at `stage`, or it is a builtin (`deny_tools`,
    /// `max_iterations`). Guards are asked again when a later hook renames
    /// the tool.
    pub(crate) fn is_guard(&self, stage: Stage) -> bool {
        self.policy(stage) == OnError::Deny || matches!(self.kind, MemberKind::Builtin(_))
    }

    /// The policy for a failure at `stage`: refuse where it fails closed
    /// (a docker-agent guard), else its `on_error`, else the stage's default.
    pub(crate) fn policy(&self, stage: Stage) -> OnError {
        if self.fail_closed.contains(&stage) {
            return OnError::Deny;
        }
        FailurePolicy::resolve(self.on_error, stage)
    }

    /// The policy for one failure. A command hook with no `on_error` that
    /// could not even be spawned (out of descriptors or processes, its
    /// program gone) fails closed where a refusal exists: that guard never
    /// ran, and exhausting descriptors is something an attacker can do.
    /// docker-agent's default `warn` still covers a hook that ran and failed,
    /// and a docker-agent hook's start failure too, as docker-agent decides
    /// it (its guards refuse anyway).
    pub(crate) fn failure_policy(&self, stage: Stage, error: Option<&CallError>) -> OnError {
        let unspawned = matches!(&self.kind, MemberKind::Command(c) if !c.start_failure_follows_on_error())
            && matches!(
                error,
                Some(CallError::Unavailable(_) | CallError::Untrusted(_))
            );
        let refusable = matches!(
            stage,
            Stage::BeforeTool | Stage::ApproveTool | Stage::Lifecycle
        );
        if self.on_error.is_none() && unspawned && refusable {
            return OnError::Deny;
        }
        self.policy(stage)
    }

    /// Whether a failure that its policy lets pass is logged only at debug
    /// level: `on_error = "ignore"`, of any kind of hook, is meant to be
    /// quiet.
    pub(crate) fn quiet_failures(&self, stage: Stage) -> bool {
        self.on_error.is_some_and(FailurePolicy::is_quiet) && self.policy(stage) == OnError::Allow
    }

    /// Its own deadline at `stage`.
    pub(crate) fn timeout(&self, stage: Stage) -> Duration {
        self.timeout_ms
            .map(Duration::from_millis)
            .unwrap_or_else(|| self.defaults.stage_timeout(stage))
    }

    /// Calls it, giving up at `deadline`; the answer carries what a
    /// prompt hook's model spent. `origin` is the agent's own event
    /// when the run answers one: a command hook of that agent reads the
    /// event as the agent sent it, and notes what it says beyond the
    /// verdict (`dialect::origin`).
    pub(crate) async fn call(
        &self,
        stage: Stage,
        params: &Value,
        deadline: Deadline,
        origin: Option<&Origin>,
    ) -> Answer {
        match &self.kind {
            MemberKind::HookSet(s) => s.call(stage, params, deadline).await.into(),
            MemberKind::Command(c) => c.call_from(stage, params, deadline.at(), origin).await,
            _ => self.call_one(stage, params, deadline).await.into(),
        }
    }

    /// Calls a member that is one hook (not a group): what a group calls
    /// its own hooks with, so the two calls do not recurse.
    pub(crate) async fn call_one(
        &self,
        stage: Stage,
        params: &Value,
        deadline: Deadline,
    ) -> Result<Value, CallError> {
        match &self.kind {
            MemberKind::Peer(p) if self.picoclaw => {
                let sent = picoclaw::params(stage, params);
                let answer = p.request(stage.method(), &sent, deadline).await?;
                Ok(picoclaw::answer(stage, answer, &self.name, params))
            }
            MemberKind::Peer(p) => p.request(stage.method(), params, deadline).await,
            MemberKind::Builtin(b) => deadline
                .bound(b.call(stage, params))
                .await?
                .map_err(CallError::Builtin),
            MemberKind::Command(c) => c.call(stage, params, deadline.at()).await,
            MemberKind::HookSet(_) => Err(CallError::Unavailable(
                "a hook group inside a hook group".into(),
            )),
            MemberKind::Unavailable(why) => Err(CallError::Unavailable(why.clone())),
        }
    }
}

/// What runs for a lifecycle event nobody waits on.
enum Notified {
    Command(Arc<CommandHook>),
    HookSet(Arc<HookSet>),
}

/// The stages it is called for: what answers it offers (a builtin what
/// it implements, a group its event's stage, anything else every stage)
/// narrowed to what its config asks for.
fn stages(spec: &HookSpec, kind: &MemberKind) -> Vec<Stage> {
    let offered = match kind {
        MemberKind::Builtin(built) => built.intercepts(),
        MemberKind::HookSet(set) => set.stages(),
        _ => Stage::ALL.to_vec(),
    };
    match spec.backend.intercept() {
        Some(asked) => offered.into_iter().filter(|s| asked.contains(s)).collect(),
        None => offered,
    }
}

/// Its own deadline: a command hook's `timeout` (its dialect's default
/// when unset), a group's (its hooks' together), else `timeout_ms` (the
/// stage's default when unset). Always bounded by the chain budget.
fn deadline_ms(spec: &HookSpec, kind: &MemberKind, stages: &[Stage]) -> Option<u64> {
    let ms = |d: Duration| Some(d.as_millis().min(u64::MAX as u128) as u64);
    match (&spec.backend, kind) {
        (Backend::Command { config, .. }, _) => ms(config.timeout()),
        (_, MemberKind::HookSet(set)) => {
            ms(set.timeout(stages.first().copied().unwrap_or(Stage::Lifecycle)))
        }
        _ => spec.settings.timeout_ms,
    }
}

/// Compiles the filters; a config built in code can skip `Config::parse`'s
/// validation, and then a bad filter makes the member fail every call
/// (its policy decides) rather than run unfiltered.
fn with_filter(
    kind: MemberKind,
    matcher: Option<&str>,
    condition: Option<&str>,
    scope: &Scope,
) -> (MemberKind, Filter) {
    match Filter::new(matcher, condition) {
        Ok(f) => (kind, f.scoped(scope)),
        Err(e) => (
            MemberKind::Unavailable(format!("invalid filter: {e}")),
            Filter::default(),
        ),
    }
}

#[cfg(test)]
mod command_tests;
