//! What the chain tells through `tracing`: a span per stage run
//! (`chain`) and per hook call (`hook.<stage>`), with the call's duration
//! and outcome filled in once the chain has judged its answer; the warning
//! for a failed hook; and the names audit and trace give each step. One
//! vocabulary for all three, so a log line, an audit record and a
//! `--trace` entry about the same call say the same word.

use hookhost_protocol::chain::StepOutcome;
use hookhost_protocol::{Decision, OnError, Stage};

use crate::error::CallError;

/// The span of one stage run: every call span of the run nests in it.
pub(crate) fn stage_span(stage: Stage, request_id: &str) -> tracing::Span {
    tracing::info_span!("chain", stage = %stage, request_id = %request_id)
}

/// The span of one hook call, named `hook.<stage>`; `duration_us` and
/// `outcome` are recorded when the call is finished.
pub(crate) fn call_span(stage: Stage, hook: &str, request_id: &str) -> tracing::Span {
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

/// Logs a hook's failure: at warn level, or at debug level for a hook
/// configured to fail quietly (`on_error = "ignore"`, any kind of hook).
pub(crate) fn log_failure(hook: &str, stage: Stage, policy: OnError, quiet: bool, error: &str) {
    if quiet {
        tracing::debug!(hook = %hook, %stage, on_error = %policy, "hook failed: {error}");
    } else {
        tracing::warn!(hook = %hook, %stage, on_error = %policy, "hook failed: {error}");
    }
}

/// The verdict a hook's step amounts to, as audit and trace name it.
/// `error` is the call's error when the hook was called; a failed step
/// without one was skipped.
pub(crate) fn outcome_name(step: &StepOutcome, error: Option<&CallError>) -> &'static str {
    match step {
        StepOutcome::Applied(d) => decision_name(d),
        StepOutcome::Failed { .. } => match error {
            Some(CallError::Timeout(_)) => "timeout",
            Some(_) => "error",
            None => "skipped",
        },
    }
}

fn decision_name(d: &Decision) -> &'static str {
    match d {
        Decision::Continue => "continue",
        Decision::Modify(_) => "modify",
        Decision::Respond(_) => "respond",
        Decision::DenyTool(_) => "deny_tool",
        Decision::Ask(_) => "ask",
        Decision::Allow { .. } => "allow",
        Decision::Abort { hard: false, .. } => "abort_turn",
        Decision::Abort { hard: true, .. } => "hard_abort",
        Decision::Approval { approved: true, .. } => "approved",
        Decision::Approval {
            approved: false, ..
        } => "refused",
        Decision::Lifecycle { block: true, .. } => "block",
        Decision::Lifecycle { block: false, .. } => "continue",
    }
}

/// The reason a hook gave for refusing (deny, abort, a refused approval,
/// a block) or for asking the user, for the audit record.
pub(crate) fn decision_reason(step: &StepOutcome) -> Option<String> {
    match step {
        StepOutcome::Applied(
            Decision::DenyTool(r)
            | Decision::Ask(r)
            | Decision::Allow { reason: r, .. }
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
