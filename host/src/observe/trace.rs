//! What the chain tells through `tracing`: a span per stage run (the hook
//! point) and per hook call, with the call's duration and outcome filled
//! in once the chain has judged its answer; the warning for a failed
//! hook; and the names audit and trace give each step. One vocabulary for
//! all three, so a log line, an audit record and a `--trace` entry about
//! the same call say the same word.
//!
//! The spans' fields are named for OpenTelemetry, which a subscriber such
//! as `hookhost serve --otlp` exports them to: the GenAI conventions'
//! guardrail attributes (semantic-conventions-genai,
//! `docs/gen-ai/gen-ai-guardrails.md`: span `apply_guardrail {component}`,
//! `gen_ai.guardrail.{component.name, source, result.type, result.value,
//! result.reason}`, results kept native, untranslated) for a hook call;
//! `execute_hook {event}` with `gen_ai.operation.name = execute_hook`
//! (what Copilot emits for its hooks; no convention names a hook point
//! yet) and `gen_ai.conversation.id` for the session at the hook point;
//! `hookhost.*` where no convention fits. `otel.name` and `otel.status_code`
//! are what `tracing-opentelemetry` reads as the span's name and status.
//! Fields that cost a string (names, the redacted reason) are filled only
//! when a subscriber takes the span.

use std::time::Duration;

use hookhost_protocol::chain::{Outcome, StepOutcome};
use hookhost_protocol::{Decision, OnError, Stage};
use serde_json::Value;
use tracing::field::Empty;

use crate::dialect::origin::Origin;
use crate::error::CallError;
use crate::observe::redact::redact;

/// The span of one stage run (a hook point): every call span of the run
/// nests in it. [`describe_stage`] and [`record_verdict`] fill the rest.
pub(crate) fn stage_span(stage: Stage, request_id: &str) -> tracing::Span {
    tracing::info_span!(
        "chain",
        otel.name = Empty,
        "gen_ai.operation.name" = "execute_hook",
        "hookhost.stage" = %stage,
        "hookhost.request_id" = %request_id,
        "hookhost.event" = Empty,
        "hookhost.dialect" = Empty,
        "gen_ai.conversation.id" = Empty,
        "hookhost.tenant" = Empty,
        "hookhost.decision" = Empty,
    )
}

/// Names the hook point's span after the agent's event (or the stage) and
/// records the dialect, session and tenant the run is for.
pub(crate) fn describe_stage(
    span: &tracing::Span,
    stage: Stage,
    params: &Value,
    origin: Option<&Origin>,
) {
    if span.is_disabled() {
        return;
    }
    let event = origin.map_or(stage.as_str(), Origin::event_name);
    span.record("otel.name", format!("execute_hook {event}").as_str());
    if let Some(origin) = origin {
        span.record("hookhost.event", event);
        span.record("hookhost.dialect", origin.dialect().as_str());
    }
    let meta = &params["meta"];
    if let Some(session) = meta["session_key"].as_str() {
        span.record("gen_ai.conversation.id", session);
    }
    if let Some(tenant) = meta["tenant_id"].as_str() {
        span.record("hookhost.tenant", tenant);
    }
}

/// Records the hook point's merged verdict on its span, in the words of
/// the decision record (`X-Hookhost-Decision`).
pub(crate) fn record_verdict(span: &tracing::Span, outcome: &Outcome) {
    let verdict = match outcome {
        Outcome::Continue { modified: true, .. } => "modify",
        Outcome::Continue { .. } | Outcome::Lifecycle { .. } => "continue",
        Outcome::Ask { .. } => "ask",
        Outcome::Allow { .. } => "allow",
        Outcome::Respond { .. } => "respond",
        Outcome::DenyTool { .. } => "deny",
        Outcome::Abort { .. } => "abort",
        Outcome::Refused { .. } => "refused",
        Outcome::Blocked { .. } => "blocked",
    };
    span.record("hookhost.decision", verdict);
}

/// The span of one hook call, named `hook.<stage>` (`apply_guardrail
/// <hook>` in OpenTelemetry); the result fields are recorded when the
/// call is finished ([`record_call`]).
pub(crate) fn call_span(stage: Stage, hook: &str, request_id: &str) -> tracing::Span {
    macro_rules! span {
        ($name:literal) => {
            tracing::info_span!(
                $name,
                otel.name = Empty,
                otel.status_code = Empty,
                "gen_ai.operation.name" = "apply_guardrail",
                "gen_ai.guardrail.component.name" = %hook,
                "gen_ai.guardrail.source" = %stage,
                "hookhost.request_id" = %request_id,
                "gen_ai.guardrail.result.type" = Empty,
                "gen_ai.guardrail.result.value" = Empty,
                "gen_ai.guardrail.result.reason" = Empty,
                "hookhost.duration_us" = Empty,
                "hookhost.failed_open" = Empty,
            )
        };
    }
    let span = match stage {
        Stage::BeforeLlm => span!("hook.before_llm"),
        Stage::AfterLlm => span!("hook.after_llm"),
        Stage::BeforeTool => span!("hook.before_tool"),
        Stage::AfterTool => span!("hook.after_tool"),
        Stage::ApproveTool => span!("hook.approve_tool"),
        Stage::Lifecycle => span!("hook.lifecycle"),
    };
    if !span.is_disabled() {
        span.record("otel.name", format!("apply_guardrail {hook}").as_str());
    }
    span
}

/// Records a finished call on its span: its outcome (the hook's own
/// verdict, as audit names it), the reason it gave (redacted, as the
/// audit log redacts it), its duration and, for a failed call, whether
/// its policy let the chain go on (failed open) and an error status.
pub(crate) fn record_call(
    span: &tracing::Span,
    step: &StepOutcome,
    outcome: &str,
    elapsed: Duration,
) {
    span.record("hookhost.duration_us", elapsed.as_micros() as u64);
    span.record("gen_ai.guardrail.result.type", "decision");
    span.record("gen_ai.guardrail.result.value", outcome);
    if span.is_disabled() {
        return;
    }
    if let Some(reason) = decision_reason(step) {
        span.record("gen_ai.guardrail.result.reason", redact(&reason).as_ref());
    }
    if let StepOutcome::Failed { policy, .. } = step {
        span.record("hookhost.failed_open", *policy == OnError::Allow);
        span.record("otel.status_code", "ERROR");
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, SubscriberExt};

    use super::*;

    /// Every field recorded on any span, as `(name, value)`.
    #[derive(Clone, Default)]
    struct Fields(Arc<Mutex<Vec<(String, String)>>>);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let value = format!("{value:?}").trim_matches('"').to_string();
            self.0
                .lock()
                .unwrap()
                .push((field.name().to_string(), value));
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Fields {
        fn on_new_span(
            &self,
            a: &tracing::span::Attributes<'_>,
            _: &tracing::Id,
            _: Context<'_, S>,
        ) {
            a.record(&mut self.clone());
        }
        fn on_record(&self, _: &tracing::Id, r: &tracing::span::Record<'_>, _: Context<'_, S>) {
            r.record(&mut self.clone());
        }
    }

    fn recorded(step: &StepOutcome, outcome: &str) -> Vec<(String, String)> {
        let fields = Fields::default();
        let subscriber = tracing_subscriber::registry().with(fields.clone());
        tracing::subscriber::with_default(subscriber, || {
            let span = call_span(Stage::BeforeTool, "guard", "r-1");
            record_call(&span, step, outcome, Duration::from_micros(412));
        });
        fields.0.lock().unwrap().clone()
    }

    fn has(fields: &[(String, String)], name: &str, value: &str) -> bool {
        fields.iter().any(|(n, v)| n == name && v == value)
    }

    #[test]
    fn a_call_span_names_the_guardrail_its_verdict_and_the_redacted_reason() {
        let why = "token sk-abcdefghijklmnopqrstuvwxyz".to_string();
        let step = StepOutcome::Applied(Decision::DenyTool(Some(why)));
        let fields = recorded(&step, "deny_tool");
        for (name, value) in [
            ("otel.name", "apply_guardrail guard"),
            ("gen_ai.operation.name", "apply_guardrail"),
            ("gen_ai.guardrail.component.name", "guard"),
            ("gen_ai.guardrail.source", "before_tool"),
            ("gen_ai.guardrail.result.value", "deny_tool"),
            ("gen_ai.guardrail.result.reason", "token [REDACTED]"),
            ("hookhost.duration_us", "412"),
        ] {
            assert!(has(&fields, name, value), "{name}={value} in {fields:?}");
        }
        assert!(!fields.iter().any(|(n, _)| n == "hookhost.failed_open"));
    }

    #[test]
    fn a_failed_call_says_whether_it_failed_open() {
        for (policy, open) in [(OnError::Allow, "true"), (OnError::Deny, "false")] {
            let error = "timed out".to_string();
            let fields = recorded(&StepOutcome::Failed { error, policy }, "timeout");
            assert!(has(&fields, "hookhost.failed_open", open), "{fields:?}");
            assert!(has(&fields, "otel.status_code", "ERROR"), "{fields:?}");
        }
    }
}
