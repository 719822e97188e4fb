//! GoClaw's quality gates at `subagent_stop`, counted per session and
//! sub-agent: a gate's block sends the sub-agent back with the reason as
//! feedback (the block stands) until it has blocked `max_retries` times in
//! a row; the next block is overridden, the result let through and the
//! failure logged. A result that passes resets the count. What one block
//! means is decided by [`QualityGate::judge`]; a `block_on_failure =
//! false` gate's block was already let through during the run
//! ([`GateLog::hear`]). Applied after a subagent_stop's chain by
//! `chain/stops.rs`. spec/protocol.md §5.9 "Quality gates".

use hookhost_protocol::{LifecycleEvent, Outcome, Stage};
use serde_json::Value;

use super::{GateLog, Judgement, QualityGate};
use crate::outcome::GateOutcome;
use crate::policy::session::{BlockCounts, SessionKey, label};

/// The most sub-agents counted at once; past it the least recently used
/// count is forgotten (it starts afresh); `stop_block_limit` still caps
/// each session's loop.
#[cfg(test)]
const MAX_COUNTED: usize = crate::policy::session::MAX_COUNTS;

/// The key of one count: the session and the sub-agent, both hashed to a
/// fixed size (the ids come from the agent).
type GateKey = (SessionKey, SessionKey);

/// Blocked attempts in a row, by (session, sub-agent).
pub(crate) type GateCounts = BlockCounts<SessionKey>;

/// A subagent_stop being run: whose result it is (hashed), and short
/// labels of the session and sub-agent for the log.
#[derive(Debug)]
pub(crate) struct GateRun {
    pub(crate) key: GateKey,
    labels: (String, String),
}

impl GateRun {
    /// The run's key, when `params` are a subagent_stop's: the session
    /// (`meta.session_key`, `""` when absent) and the sub-agent (the
    /// payload's `agent_id`, else its `agent_type`, else `""`: Claude
    /// Code's SubagentStop carries both).
    pub(crate) fn of(stage: Stage, params: &Value) -> Option<GateRun> {
        if stage != Stage::Lifecycle {
            return None;
        }
        let event = params.get("event").and_then(Value::as_str)?;
        if event != LifecycleEvent::SubagentStop.as_str() {
            return None;
        }
        let session = text(params.pointer("/meta/session_key")).unwrap_or_default();
        let payload = params.get("payload");
        let agent = text(payload.and_then(|p| p.get("agent_id")))
            .or_else(|| text(payload.and_then(|p| p.get("agent_type"))))
            .unwrap_or_default();
        Some(GateRun {
            key: (SessionKey::of(session), SessionKey::of(agent)),
            labels: (label(session), label(agent)),
        })
    }
}

impl GateCounts {
    /// After a subagent_stop's chain: what its gates decided, and the
    /// outcome with an exhausted gate's block overridden. `gate_of` names
    /// the quality gate of a hook, `None` for a hook that is no gate.
    pub(crate) fn judge(
        &self,
        run: &GateRun,
        outcome: Outcome,
        log: GateLog,
        gate_of: impl Fn(&str) -> Option<QualityGate>,
    ) -> (Outcome, Option<GateOutcome>) {
        let Outcome::Blocked { reason, by } = &outcome else {
            self.reset(&run.key);
            let gate = match log.failed_open.into_iter().next() {
                Some((hook, feedback)) => Some(GateOutcome::FailedOpen { hook, feedback }),
                None => log.asked.then_some(GateOutcome::Passed),
            };
            return (outcome, gate);
        };
        let Some(gate) = gate_of(by) else {
            return (outcome, None); // a hook that is no gate: a plain block
        };
        let (hook, feedback) = (by.clone(), reason.clone());
        self.gate_blocked(run, gate, hook, feedback, outcome)
    }

    /// A gate blocked: a retry within `max_retries` keeps the block; an
    /// exhausted gate, or one that does not block on failure (its
    /// failure under a deny policy ends here), lets the result through.
    fn gate_blocked(
        &self,
        run: &GateRun,
        gate: QualityGate,
        hook: String,
        feedback: String,
        blocked: Outcome,
    ) -> (Outcome, Option<GateOutcome>) {
        if !gate.block_on_failure {
            self.reset(&run.key);
            warn_passed(&run.labels, &hook, "block_on_failure = false", &feedback);
            return (passed(), Some(GateOutcome::FailedOpen { hook, feedback }));
        }
        match gate.judge(self.count(&run.key)) {
            Judgement::Retry { attempt } => {
                self.set(run.key, attempt);
                let max_retries = gate.max_retries;
                let retry = GateOutcome::Retry {
                    hook,
                    feedback,
                    attempt,
                    max_retries,
                };
                (blocked, Some(retry))
            }
            Judgement::Exhausted { attempts } => {
                self.reset(&run.key);
                let why = format!(
                    "failed {attempts} times in a row (max_retries = {})",
                    gate.max_retries
                );
                warn_passed(&run.labels, &hook, &why, &feedback);
                let exhausted = GateOutcome::Exhausted {
                    hook,
                    feedback,
                    attempts,
                };
                (passed(), Some(exhausted))
            }
        }
    }

    /// `stop_block_limit` overrode a block the gate meant as a retry: the
    /// retries end here too, and the count with them.
    pub(crate) fn overridden(
        &self,
        run: &GateRun,
        gate: Option<GateOutcome>,
    ) -> Option<GateOutcome> {
        match gate {
            Some(GateOutcome::Retry {
                hook,
                feedback,
                attempt,
                ..
            }) => {
                self.reset(&run.key);
                Some(GateOutcome::Exhausted {
                    hook,
                    feedback,
                    attempts: attempt,
                })
            }
            other => other,
        }
    }
}

/// A string member, if `v` is one.
fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

/// The outcome of a subagent_stop that goes through.
fn passed() -> Outcome {
    Outcome::Lifecycle {
        contexts: Vec::new(),
        system_messages: Vec::new(),
        summary: None,
    }
}

/// The warning that records a failed gate whose result is let through.
fn warn_passed(key: &(String, String), hook: &str, why: &str, feedback: &str) {
    let (session, agent) = key;
    tracing::warn!(
        hook = %hook,
        session = %session,
        subagent = %agent,
        "quality gate {why}: the sub-agent's result is let through: {feedback}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Sub-agent and session ids are the agent's: each count is a
    /// fixed-size key, and the table holds at most `MAX_COUNTED`.
    #[test]
    fn the_gate_table_is_bounded_and_keeps_no_id() {
        let counts = GateCounts::default();
        let huge = "a".repeat(4096);
        for i in 0..MAX_COUNTED + 300 {
            let params = json!({"event": "subagent_stop", "meta": {"session_key": format!("{i}")},
                "payload": {"agent_id": huge}});
            let run = GateRun::of(Stage::Lifecycle, &params).expect("a subagent_stop");
            assert!(run.labels.1.len() < 100);
            counts.set(run.key, 1);
        }
        assert_eq!(counts.len(), MAX_COUNTED);
        let one = (SessionKey::of("0"), SessionKey::of(&huge));
        counts.set(one, 1);
        counts.reset_session(SessionKey::of("0"));
        assert_eq!(counts.count(&one), 0);
    }
}
