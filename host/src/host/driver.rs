//! The chain driver: runs one stage through the members in order,
//! applying the per-call policies (intercept, filter, budget, breaker,
//! deadline, on_error) and recording each step (stats, span, audit, trace).

use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use hookhost_protocol::chain::{ParamsError, StepOutcome};
use hookhost_protocol::{Chain, Decision, Flow, LifecycleEvent, OnError, Outcome, Stage};
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument;

use crate::error::CallError;
use crate::members::{Member, MemberKind};
use crate::observe::audit::AuditRecord;
use crate::observe::stats::MemberStats;
use crate::policy::breaker::Admission;

use super::*;

impl Host {
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
    pub(super) async fn run_chain(
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
    pub(super) async fn gate_and_step(
        &self,
        run: &mut Run<'_>,
        m: &Member,
        chain: &mut Chain,
    ) -> Flow {
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
    pub(super) async fn recheck_guards(
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
    pub(super) async fn step_member(
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
    pub(super) async fn call_member<'m>(
        &self,
        run: &Run<'_>,
        m: &'m Member,
        params: &Value,
        begun: Instant,
        span: &tracing::Span,
        permit: &mut Option<crate::policy::breaker::Permit<'m>>,
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
}

/// What one stage run shares across its members.
pub(super) struct Run<'a> {
    stage: Stage,
    request_id: String,
    chain_deadline: Instant,
    budget_ms: u64,
    trace: Option<&'a mut Vec<HookTrace>>,
}

/// A member whose verdict on a tool call guards it: one that fails closed
/// here, or a builtin (`deny_tools`, `max_iterations`).
pub(super) fn is_guard(m: &Member, stage: Stage) -> bool {
    m.policy(stage) == OnError::Deny || matches!(m.kind, MemberKind::Builtin(_))
}

/// The `tool` of before_tool params.
pub(super) fn tool_of(params: &Value) -> Value {
    params.get("tool").cloned().unwrap_or(Value::Null)
}

/// Whether a member takes part in this stage at all: it intercepts it,
/// and a command hook runs only for the lifecycle events it lists.
pub(super) fn selected(m: &Member, stage: Stage, event: Option<LifecycleEvent>) -> bool {
    if !m.intercepts(stage) {
        return false;
    }
    match (event, &m.kind) {
        (Some(event), MemberKind::Command(c)) => c.handles(event.as_str()),
        _ => true,
    }
}

/// What a member's filters decide about one call.
pub(super) enum Gate {
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
pub(super) fn filter_gate(m: &Member, stage: Stage, params: &Value) -> Gate {
    if m.filter.is_empty() {
        return Gate::Call;
    }
    match m.filter.evaluate(stage, params) {
        crate::policy::filter::FilterVerdict::Run => Gate::Call,
        crate::policy::filter::FilterVerdict::Skip => {
            MemberStats::bump(&m.stats.filtered);
            Gate::Skip
        }
        crate::policy::filter::FilterVerdict::Error(e) => {
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
pub(super) fn log_failure(m: &Member, stage: Stage, policy: OnError, error: &str) {
    if m.quiet_failures(stage) {
        tracing::debug!(hook = %m.name, %stage, on_error = %policy, "hook failed: {error}");
    } else {
        tracing::warn!(hook = %m.name, %stage, on_error = %policy, "hook failed: {error}");
    }
}

/// The verdict a hook's step amounts to, as audit and trace name it.
pub(super) fn outcome_name(step: &StepOutcome, error: Option<&CallError>) -> &'static str {
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

pub(super) fn decision_reason(step: &StepOutcome) -> Option<String> {
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
pub(super) fn call_span(stage: Stage, hook: &str, request_id: &str) -> tracing::Span {
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
