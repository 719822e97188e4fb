//! The record of one step: begun before the member is called, finished
//! once the chain has judged the answer, because what the observers need
//! (the step's outcome) exists only after `Chain::step`. [`CallRecord::finish`]
//! feeds every observer, in this order, once: the circuit breaker, the
//! member's figures, the call span, the warning log, the audit log, the
//! embedder's [`Observer`] (the gateway's metrics) and the trace. To add
//! or move an observer, edit `finish` and nothing else.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use hookhost_protocol::chain::StepOutcome;
use hookhost_protocol::{OnError, Stage};
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument;

use crate::dialect::origin::Origin;
use crate::error::CallError;
use crate::members::Member;
use crate::observe::audit::{AuditLog, AuditRecord, Who};
use crate::observe::observer::{HookCall, Observer};
use crate::observe::stats::MemberStats;
use crate::observe::trace;
use crate::observe::usage::ModelUsage;
use crate::policy::breaker::Permit;
use crate::policy::budget::BudgetSpent;
use crate::policy::deadline::Deadline;

use super::admit::Admitted;

/// Why a hook's step has no answer: it was called and the call failed, or
/// the chain did not call it. Its text is the failure the hook's
/// `on_error` policy resolves, as the caller and the audit log see it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NoAnswer {
    /// It was called, and the call failed.
    #[error(transparent)]
    Call(CallError),
    /// Its `if` failed to evaluate, and its policy fails closed.
    #[error("its `if` failed to evaluate: {0}")]
    Filter(String),
    /// Not called: the chain budget was spent before its turn.
    #[error("skipped: {0}")]
    Budget(BudgetSpent),
    /// Not called: its circuit breaker is open, or half-open with a trial
    /// call in flight; the text says which.
    #[error("skipped: {0}")]
    Breaker(String),
}

impl NoAnswer {
    /// The call's error, when the hook was called.
    pub fn call_error(&self) -> Option<&CallError> {
        match self {
            NoAnswer::Call(e) => Some(e),
            _ => None,
        }
    }
}

/// One hook's part in one stage, for `--trace` output and debugging.
#[derive(Debug, Clone)]
pub struct HookTrace {
    /// The hook.
    pub hook: String,
    /// Its raw result, or how the call failed (or why it was skipped).
    pub answer: Result<Value, NoAnswer>,
    /// From sending the request to having the answer (or giving up).
    pub elapsed: Duration,
    /// What the chain did with it.
    pub outcome: StepOutcome,
}

/// Where a stage run's records go besides the member itself.
pub(crate) struct Sinks<'a> {
    /// One id per stage run, shared by its spans and audit records.
    pub(crate) request_id: String,
    /// The agent's session the run is for, for the audit log.
    pub(crate) session: Option<String>,
    /// Who the run is for (`meta`'s tenant, user and agent), for the
    /// audit log.
    pub(crate) who: Option<Arc<Who>>,
    pub(crate) audit: Option<&'a AuditLog>,
    /// The embedder's observer (`Host::set_observer`), when it set one.
    pub(crate) observer: Option<Arc<dyn Observer>>,
    /// Each hook's part, kept only when the caller asked for a trace, so
    /// the plain path (every agent call) builds none.
    pub(crate) trace: Option<&'a mut Vec<HookTrace>>,
}

/// One step in the making: its clock, its span and, once called, the
/// breaker permit whose result it owes.
pub(crate) struct CallRecord<'m> {
    member: &'m Member,
    stage: Stage,
    ts: SystemTime,
    begun: Instant,
    elapsed: Duration,
    span: tracing::Span,
    permit: Option<Permit<'m>>,
    /// What a prompt hook's model spent on the call.
    usage: Option<ModelUsage>,
}

impl<'m> CallRecord<'m> {
    /// Starts the record of `member`'s step, its clock running from `begun`.
    pub(crate) fn begin(
        member: &'m Member,
        stage: Stage,
        sinks: &Sinks<'_>,
        begun: Instant,
    ) -> CallRecord<'m> {
        CallRecord {
            member,
            stage,
            ts: SystemTime::now(),
            begun,
            elapsed: Duration::ZERO,
            span: trace::call_span(stage, &member.name, &sinks.request_id),
            permit: None,
            usage: None,
        }
    }

    /// Makes the admitted call in the record's span, and stops the clock.
    pub(crate) async fn call(
        &mut self,
        admitted: Admitted<'m>,
        params: &Value,
        origin: Option<&Origin>,
    ) -> Result<Value, NoAnswer> {
        self.permit = Some(admitted.permit);
        MemberStats::bump(&self.member.stats.calls);
        let deadline = Deadline::between(admitted.begun, admitted.deadline);
        let answer = self
            .member
            .call(self.stage, params, deadline, origin)
            .instrument(self.span.clone())
            .await;
        self.usage = answer.usage;
        self.elapsed = self.begun.elapsed();
        answer.reply.map_err(NoAnswer::Call)
    }

    /// The step fails without a call, for `why`.
    pub(crate) fn skip(&mut self, why: NoAnswer) -> Result<Value, NoAnswer> {
        self.elapsed = self.begun.elapsed();
        Err(why)
    }

    /// Feeds every observer the finished step, in this order: breaker,
    /// figures, span, warning log, audit, the embedder's observer, trace.
    pub(crate) fn finish(
        self,
        step: &StepOutcome,
        policy: OnError,
        reply: Result<Value, NoAnswer>,
        sinks: &mut Sinks<'_>,
    ) {
        let m = self.member;
        let error = reply.as_ref().err().and_then(NoAnswer::call_error);
        let failure = match step {
            StepOutcome::Failed { error, .. } => Some(error.as_str()),
            StepOutcome::Applied(_) => None,
        };
        let called = self.permit.is_some();
        if let Some(permit) = self.permit {
            // Deliberate verdicts are answers; only failures count.
            permit.record(failure.is_some());
        }
        if called {
            count(&m.stats, self.elapsed, error);
        }
        let outcome = trace::outcome_name(step, error);
        trace::record_call(&self.span, step, outcome, self.elapsed);
        if let Some(failure) = failure {
            let quiet = m.quiet_failures(self.stage);
            trace::log_failure(&m.name, self.stage, policy, quiet, failure);
        }
        if let Some(audit) = sinks.audit {
            audit.record(AuditRecord {
                ts: self.ts,
                hook: m.name.to_string(),
                stage: self.stage,
                request_id: sinks.request_id.clone(),
                session: sinks.session.clone(),
                who: sinks.who.clone(),
                duration: self.elapsed,
                outcome: outcome.to_string(),
                reason: trace::decision_reason(step),
                error: failure.map(str::to_string),
                model: self.usage,
                decision: None,
            });
        }
        if let Some(observer) = &sinks.observer {
            let at = (m, self.stage, self.elapsed);
            observer.hook_called(&seen(at, outcome, called, error));
        }
        if let Some(steps) = sinks.trace.as_deref_mut() {
            steps.push(HookTrace {
                hook: m.name.to_string(),
                answer: reply,
                elapsed: self.elapsed,
                outcome: step.clone(),
            });
        }
    }
}

/// A finished step as the embedder's observer sees it.
fn seen<'m>(
    (m, stage, elapsed): (&'m Member, Stage, Duration),
    outcome: &'static str,
    called: bool,
    error: Option<&CallError>,
) -> HookCall<'m> {
    HookCall {
        hook: &m.name,
        stage,
        outcome,
        elapsed,
        called,
        failed: error.is_some(),
        timed_out: matches!(error, Some(CallError::Timeout(_))),
    }
}

/// A made call's figures: its latency, and whether it failed or timed out.
fn count(stats: &MemberStats, elapsed: Duration, error: Option<&CallError>) {
    stats.observe(elapsed);
    if let Some(e) = error {
        MemberStats::bump(&stats.errors);
        if matches!(e, CallError::Timeout(_)) {
            MemberStats::bump(&stats.timeouts);
        }
    }
}
