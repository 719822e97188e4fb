//! The embedder's own observer ([`Observer`]): it sees every finished
//! hook call once ([`HookCall`]) and every answered event's decision
//! ([`AnsweredEvent`]), so an embedder can keep whatever figures it
//! wants (the gateway's Prometheus `/metrics`) without the library taking
//! a metrics dependency or choosing a format for everyone.

use std::time::Duration;

use hookhost_protocol::Stage;

use crate::observe::decision::DecisionRecord;

/// What the host tells an [`Observer`] of one finished step of a chain:
/// a call made, or a hook the chain skipped. Every field is a name from
/// config (the hook) or from a fixed set (the stage, the outcome), never
/// from an event's content, so an observer may use them as metric labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookCall<'a> {
    /// The hook's configured name.
    pub hook: &'a str,
    /// The stage it was called at.
    pub stage: Stage,
    /// What became of the step, as the audit log spells it: the hook's
    /// decision (`continue`, `deny_tool`, `allow`, …), or `error`,
    /// `timeout` or `skipped` when it gave none.
    pub outcome: &'static str,
    /// From sending the request to having the answer (or giving up); near
    /// zero for a skipped hook.
    pub elapsed: Duration,
    /// Whether the hook was called: false when its breaker, the chain
    /// budget or a failed `if` skipped it.
    pub called: bool,
    /// Whether the call failed (a timeout included), as
    /// [`HookStats`](crate::HookStats)' `errors` counts.
    pub failed: bool,
    /// Whether the call timed out.
    pub timed_out: bool,
}

/// What the host tells an [`Observer`] of one event answered by
/// [`Host::answer_foreign`](crate::Host::answer_foreign) or
/// [`Host::answer_foreign_recorded`](crate::Host::answer_foreign_recorded),
/// once, after its answer is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnsweredEvent<'a> {
    /// The agent whose event it was, as
    /// [`Dialect::as_str`](crate::Dialect::as_str) names it
    /// (`claude-code`, `codex`, …).
    pub dialect: &'static str,
    /// What decided it. Its `decision` is one of a fixed set of words;
    /// its `hook` a configured name; its `reason` is a hook's free text.
    pub record: &'a DecisionRecord,
}

/// An embedder's observer, registered with
/// [`Host::set_observer`](crate::Host::set_observer): called on the
/// caller's task right after each step and each answer, so it must be
/// quick and must not block (count, do not write files). Both methods
/// default to doing nothing, so more may be added without breaking it.
pub trait Observer: Send + Sync {
    /// One hook's step finished (after the breaker, the figures, the
    /// span, the log and the audit record have seen it).
    fn hook_called(&self, call: &HookCall<'_>) {
        let _ = call;
    }

    /// One foreign event was answered.
    fn event_answered(&self, event: &AnsweredEvent<'_>) {
        let _ = event;
    }
}
