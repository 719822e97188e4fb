//! Building a [`DecisionRecord`] from a chain's outcome and its trace.

use hookhost_protocol::chain::{OnError, Outcome, StepOutcome};

use crate::chain::HookTrace;
use crate::observe::decision::DecisionRecord;

/// The record of `outcome`, with what `trace` says of each hook.
pub(crate) fn record(
    outcome: &Outcome,
    trace: &[HookTrace],
    policy: Option<String>,
) -> DecisionRecord {
    let (decision, hook, reason) = verdict(outcome, trace);
    DecisionRecord {
        decision,
        hook,
        reason,
        failed_open: failed_open(trace),
        policy,
    }
}

type Verdict = (&'static str, Option<String>, Option<String>);

fn verdict(outcome: &Outcome, trace: &[HookTrace]) -> Verdict {
    let by = |by: &String, reason: Option<&String>| (Some(by.clone()), reason.cloned());
    let (decision, (hook, reason)) = match outcome {
        Outcome::Continue { modified: true, .. } => ("modify", (first_rewrite(trace), None)),
        Outcome::Continue { .. } | Outcome::Lifecycle { .. } => ("continue", (None, None)),
        Outcome::Ask { reason, by: b, .. } => ("ask", by(b, Some(reason))),
        Outcome::Allow { reason, by: b, .. } => ("allow", by(b, reason.as_ref())),
        Outcome::Respond { by: b, .. } => ("respond", by(b, None)),
        Outcome::DenyTool { reason, by: b } => ("deny", by(b, Some(reason))),
        Outcome::Abort { reason, by: b, .. } => ("abort", by(b, Some(reason))),
        Outcome::Refused { reason, by: b } => ("refused", by(b, Some(reason))),
        Outcome::Blocked { reason, by: b } => ("blocked", by(b, Some(reason))),
    };
    (decision, hook, reason)
}

/// The first hook whose answer rewrote the call.
fn first_rewrite(trace: &[HookTrace]) -> Option<String> {
    use hookhost_protocol::Decision;
    trace
        .iter()
        .find(|t| {
            matches!(
                t.outcome,
                StepOutcome::Applied(Decision::Modify(_) | Decision::Allow { patch: Some(_), .. })
            )
        })
        .map(|t| t.hook.clone())
}

fn failed_open(trace: &[HookTrace]) -> Vec<String> {
    trace
        .iter()
        .filter(|t| {
            matches!(
                t.outcome,
                StepOutcome::Failed {
                    policy: OnError::Allow,
                    ..
                }
            )
        })
        .map(|t| t.hook.clone())
        .collect()
}
