//! Floor 5, the chain driver: runs one stage through the members in chain
//! order. Every policy is stated once, in one of these places, which
//! apply them in this order:
//! - before a lifecycle run: [`stops::Stops::before`] (a new prompt
//!   resets the session's counts; a stop is told its `loop_count`);
//! - before each call: [`admit::admit`] (intercept, event list, filter,
//!   budget, breaker);
//! - the answer: a soft quality gate's block is let through
//!   ([`GateLog::hear`]), then the pure `protocol::Chain` fold judges it
//!   (which applies `on_error`);
//! - after each call: [`record::CallRecord::finish`] (breaker, figures,
//!   span, log, audit, the embedder's observer, trace);
//! - after a stop's run: [`stops::Stops::after`] (the quality gates'
//!   retries at subagent_stop, then `stop_block_limit`).
//!
//! The policies' logic is in `policy/`; the loop here only strings them
//! together. It runs on the caller's task: no channel hop, no boxed
//! future per member.

mod admit;
mod record;
mod stops;

use std::sync::Arc;

use hookhost_protocol::chain::StepOutcome;
use hookhost_protocol::{Chain, Flow, LifecycleEvent, OnError, Outcome, Stage};
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument;

use crate::dialect::origin::Origin;
use crate::members::Member;
use crate::observe::trace;
use crate::policy::budget::ChainBudget;
pub(crate) use crate::policy::quality_gate::GateLog;

use admit::Admission;
use record::CallRecord;
pub(crate) use record::Sinks;
pub use record::{HookTrace, NoAnswer};
pub(crate) use stops::Stops;

/// What one stage run shares across its members.
pub(crate) struct Run<'a> {
    pub(crate) stage: Stage,
    pub(crate) budget: ChainBudget,
    pub(crate) sinks: Sinks<'a>,
    /// What the quality gates did at subagent_stop.
    pub(crate) gates: GateLog,
    /// The agent's own event, when the run answers one (`hookhost relay`):
    /// what its own command hooks read, and what they add to the answer.
    pub(crate) origin: Option<&'a Origin>,
}

/// Runs `chain` through `members` in order and returns the merged verdict.
pub(crate) async fn run(run: &mut Run<'_>, members: &[Arc<Member>], mut chain: Chain) -> Outcome {
    let span = trace::stage_span(run.stage, &run.sinks.request_id);
    trace::describe_stage(&span, run.stage, chain.params(), run.origin);
    walk(run, members, &mut chain)
        .instrument(span.clone())
        .await;
    let outcome = chain.finish();
    trace::record_verdict(&span, &outcome);
    outcome
}

/// The driver loop: every member in order, until one stops the chain;
/// then the guards are asked again if the tool was renamed after them.
async fn walk(run: &mut Run<'_>, members: &[Arc<Member>], chain: &mut Chain) {
    // Guards called at before_tool, and the tool each one saw.
    let mut guards: Vec<(&Member, Value)> = Vec::new();
    if let Some(origin) = run.origin {
        let params = chain.params();
        origin.set_sequential(
            members
                .iter()
                .any(|m| m.makes_sequential(origin, run.stage, params)),
        );
    }
    for (place, m) in members.iter().enumerate() {
        let admission = admit::admit(m, run.stage, chain, &run.budget);
        if matches!(admission, Admission::Absent) {
            continue;
        }
        if run.stage == Stage::BeforeTool && m.is_guard(run.stage) {
            guards.push((m, tool_of(chain.params())));
        }
        if step(run, m, admission, chain).await == Flow::Stop {
            if let Some(origin) = run.origin {
                let rest = &members[place + 1..];
                if origin.later_answer_wins() {
                    origin.verdict_by_own(own_all_along(run, m, rest, chain, origin));
                }
                hear_the_rest(run, rest, chain, origin).await;
            }
            return;
        }
    }
    recheck_guards(run, &guards, chain).await;
}

/// Once the verdict is in, the agent's own hooks that did not run yet
/// still run, as the agent runs every hook of an event: what they say
/// beside the verdict (their reasons, messages, own keys) reaches the
/// agent through `origin`; the verdict stays as it is. Each call is
/// recorded like any other (breaker, figures, span, audit, trace), with
/// the outcome its answer would have as a step of its own.
async fn hear_the_rest(run: &mut Run<'_>, rest: &[Arc<Member>], chain: &Chain, origin: &Origin) {
    let own = rest
        .iter()
        .filter(|m| m.is_own_hook(origin, run.stage, chain.params()));
    for m in own {
        let Admission::Call(a) = admit::admit(m, run.stage, chain, &run.budget) else {
            continue;
        };
        let mut record = CallRecord::begin(m, run.stage, &run.sinks, a.begun);
        let reply = record.call(a, chain.params(), Some(origin)).await;
        let error = reply.as_ref().err().and_then(NoAnswer::call_error);
        let policy = m.failure_policy(run.stage, error);
        let outcome = heard(run.stage, chain, &m.name, policy, &reply);
        record.finish(&outcome, policy, reply, &mut run.sinks);
    }
}

/// A heard hook's answer as a step of its own: judged by a chain of its
/// own from the same params, since the run's chain has its verdict and
/// takes no more steps.
fn heard(
    stage: Stage,
    chain: &Chain,
    hook: &str,
    policy: OnError,
    reply: &Result<Value, NoAnswer>,
) -> StepOutcome {
    let judged = Chain::new(stage, chain.params().clone()).map(|mut alone| {
        alone.step(hook, policy, reply.as_ref().map_err(ToString::to_string));
        alone.steps().last().map(|s| s.outcome.clone())
    });
    match judged {
        Ok(Some(outcome)) => outcome,
        Ok(None) | Err(_) => StepOutcome::Failed {
            error: "its answer could not be judged apart from the chain".into(),
            policy,
        },
    }
}

/// Whether the verdict is the agent's own hooks' alone: `stopper` gave it
/// as its answer (not as the policy for a failure, which stays hookhost's),
/// it is one of them, and every member after it that takes part in this
/// stage is one too, so nothing of hookhost's is left unasked. Only
/// then may the agent's rule for its own hooks' answers (a later allow
/// wins, at Copilot CLI's permissionRequest) decide in place of the
/// chain's first refusal.
fn own_all_along(
    run: &Run<'_>,
    stopper: &Member,
    rest: &[Arc<Member>],
    chain: &Chain,
    origin: &Origin,
) -> bool {
    let own = |m: &Member| m.is_own_hook(origin, run.stage, chain.params());
    let answered = chain
        .steps()
        .last()
        .is_some_and(|s| matches!(s.outcome, StepOutcome::Applied(_)));
    answered && own(stopper) && rest.iter().all(|m| !m.intercepts(run.stage) || own(m))
}

/// One member's step: the call admission allowed (or the failure it
/// decided), the chain's judgement, and the record of both.
async fn step<'m>(
    run: &mut Run<'_>,
    m: &'m Member,
    admission: Admission<'m>,
    chain: &mut Chain,
) -> Flow {
    let (mut record, admitted) = match admission {
        Admission::Absent | Admission::Pass => return Flow::Next,
        Admission::Skip(why) => (
            CallRecord::begin(m, run.stage, &run.sinks, Instant::now()),
            Err(why),
        ),
        Admission::Call(a) => (CallRecord::begin(m, run.stage, &run.sinks, a.begun), Ok(a)),
    };
    let reply = match admitted {
        Ok(a) => record.call(a, chain.params(), run.origin).await,
        Err(why) => record.skip(why),
    };
    let reply = hear_gate(&mut run.gates, m, chain, reply); // soft quality gate
    let error = reply.as_ref().err().and_then(NoAnswer::call_error);
    let policy = m.failure_policy(run.stage, error);
    let flow = chain.step(&m.name, policy, reply.as_ref().map_err(ToString::to_string));
    if let Some(last) = chain.steps().last() {
        record.finish(&last.outcome, policy, reply, &mut run.sinks);
    }
    flow
}

/// A quality gate's answer at subagent_stop, heard by [`GateLog::hear`]:
/// a `block_on_failure = false` gate's block is judged as `continue`.
fn hear_gate(
    log: &mut GateLog,
    m: &Member,
    chain: &Chain,
    reply: Result<Value, NoAnswer>,
) -> Result<Value, NoAnswer> {
    let Some(gate) = m.quality_gate else {
        return reply;
    };
    if chain.event() != Some(LifecycleEvent::SubagentStop) {
        return reply;
    }
    match log.hear(&m.name, gate, reply.as_ref().ok()) {
        Some(instead) => Ok(instead),
        None => reply,
    }
}

/// A later hook renamed the tool: the guards that judged the old name
/// judged a call that will not run, so each is called again on the final
/// call, in chain order (spec/protocol.md §9). A guard that renames it
/// once more ends the chain with a refusal, so renames cannot go round.
async fn recheck_guards(run: &mut Run<'_>, guards: &[(&Member, Value)], chain: &mut Chain) {
    if guards.is_empty() {
        return; // every stage but before_tool, and chains without guards
    }
    let final_tool = tool_of(chain.params());
    for (m, _) in guards.iter().filter(|(_, seen)| *seen != final_tool) {
        let admission = admit::admit(m, run.stage, chain, &run.budget);
        if step(run, m, admission, chain).await == Flow::Stop {
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

/// The `tool` of before_tool params.
fn tool_of(params: &Value) -> Value {
    params.get("tool").cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use serde_json::json;

    use super::*;
    use crate::config::{BuiltinConfig, Defaults};
    use crate::error::CallError;
    use crate::policy::budget::BudgetSpent;

    fn member(name: &str, config: Value) -> Arc<Member> {
        let config: BuiltinConfig = serde_json::from_value(config).unwrap();
        let built = Err("not built".to_string());
        Arc::new(Member::builtin(name, &config, built, &Defaults::default()))
    }

    async fn traced(members: &[Arc<Member>], budget_ms: u64) -> (Outcome, Vec<HookTrace>) {
        let mut trace = Vec::new();
        let mut stage_run = Run {
            stage: Stage::BeforeLlm,
            budget: ChainBudget::start(budget_ms),
            sinks: Sinks {
                request_id: "r1".into(),
                session: None,
                who: None,
                audit: None,
                observer: None,
                trace: Some(&mut trace),
            },
            gates: GateLog::default(),
            origin: None,
        };
        let chain = Chain::new(Stage::BeforeLlm, json!({"model": "m", "messages": []})).unwrap();
        let outcome = run(&mut stage_run, members, chain).await;
        (outcome, trace)
    }

    #[tokio::test]
    async fn each_step_is_traced_with_why_it_had_no_answer() {
        let members = [
            member("a", json!({"on_error": "allow"})),
            member("b", json!({"on_error": "allow"})),
        ];
        let (outcome, trace) = traced(&members, 10_000).await;
        assert!(matches!(outcome, Outcome::Continue { .. }), "{outcome:?}");
        assert_eq!(trace.len(), 2);
        assert_eq!(
            trace[0].answer,
            Err(NoAnswer::Call(CallError::Unavailable("not built".into())))
        );
        assert_eq!(members[0].stats.calls.load(Relaxed), 1);
        assert_eq!(members[0].stats.errors.load(Relaxed), 1);
    }

    #[tokio::test]
    async fn a_spent_budget_is_a_failure_its_policy_answers() {
        let members = [member("a", json!({"on_error": "deny"}))];
        let (outcome, trace) = traced(&members, 0).await;
        assert_eq!(
            trace[0].answer,
            Err(NoAnswer::Budget(BudgetSpent { budget_ms: 0 }))
        );
        assert!(matches!(outcome, Outcome::Abort { .. }), "{outcome:?}");
        assert_eq!(members[0].stats.calls.load(Relaxed), 0);
    }
}
