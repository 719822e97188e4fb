//! GoClaw's quality gate at `subagent_stop`: a hook that judges a
//! sub-agent's result. When it blocks, its reason is the feedback the
//! sub-agent retries with, at most `max_retries` times; after that the
//! result is let through and the failure recorded. With
//! `block_on_failure = false` a block is only logged and the chain goes
//! on. spec/protocol.md §5.9 "Quality gates".
//!
//! Two parts, applied by the chain where it states the order of its
//! policies (`chain/mod.rs`): per step, [`GateLog::hear`] lets a soft
//! gate's block through; after the run, [`retries`] counts the blocks per
//! session and sub-agent and decides retry or exhausted
//! ([`QualityGate::judge`], pure).

pub(crate) mod retries;

use serde_json::Value;

/// A hook's gate settings, present when it sets `block_on_failure` or
/// `max_retries`. A hook with neither is no quality gate: its block at
/// `subagent_stop` keeps the sub-agent going, capped only by
/// `stop_block_limit`, as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QualityGate {
    /// A block sends the sub-agent back with the feedback (`true`, the
    /// default), or is only logged (`false`).
    pub block_on_failure: bool,
    /// How many blocked attempts are sent back for a retry (default 0).
    pub max_retries: u32,
}

/// What one more blocked attempt of a gate means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// Send it back: this is blocked attempt `attempt` (from 1), within
    /// `max_retries`.
    Retry {
        /// This blocked attempt's number, from 1.
        attempt: u32,
    },
    /// The retries are used up: let the result through.
    Exhausted {
        /// Blocked attempts in a row, this one included.
        attempts: u32,
    },
}

impl QualityGate {
    /// The gate the two config keys describe, `None` when neither is set.
    pub fn from_keys(block_on_failure: Option<bool>, max_retries: Option<u32>) -> Option<Self> {
        if block_on_failure.is_none() && max_retries.is_none() {
            return None;
        }
        Some(QualityGate {
            block_on_failure: block_on_failure.unwrap_or(true),
            max_retries: max_retries.unwrap_or(0),
        })
    }

    /// A block after `before` blocked attempts in a row: a retry while
    /// the attempts stay within `max_retries`, else exhausted.
    pub fn judge(self, before: u32) -> Judgement {
        let attempt = before.saturating_add(1);
        if attempt <= self.max_retries {
            Judgement::Retry { attempt }
        } else {
            Judgement::Exhausted { attempts: attempt }
        }
    }
}

/// The quality gates' part in a subagent_stop run: whether one was
/// asked, and the blocks of `block_on_failure = false` gates, which were
/// logged and let the chain go on.
#[derive(Debug, Default)]
pub(crate) struct GateLog {
    /// A gate was called (or failed without being called).
    pub(crate) asked: bool,
    /// `(hook, reason)` of each soft gate's block, in chain order.
    pub(crate) failed_open: Vec<(String, String)>,
}

impl GateLog {
    /// A quality gate's answer at subagent_stop (`hook`'s, whose `gate`
    /// it is): noted as asked, and a `block_on_failure = false` gate's
    /// block is logged, kept for the outcome and turned into `continue`
    /// (the answer the chain judges in its place), so the later hooks
    /// still judge the result (GoClaw: "non-blocking failures are logged
    /// but do not interrupt the flow"). `answer` is `None` when the gate
    /// gave none: its failure stays with its `on_error`.
    pub(crate) fn hear(
        &mut self,
        hook: &str,
        gate: QualityGate,
        answer: Option<&Value>,
    ) -> Option<Value> {
        self.asked = true;
        let answer = answer?;
        if gate.block_on_failure || answer.get("action").and_then(Value::as_str) != Some("block") {
            return None;
        }
        let reason = answer
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        tracing::warn!(hook = %hook, "quality gate failed at subagent_stop (block_on_failure = false): the result is let through: {reason}");
        self.failed_open
            .push((hook.to_string(), reason.to_string()));
        Some(serde_json::json!({"action": "continue"}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From GoClaw docs/hooks-quality-gates "Hook Config Fields":
    /// `max_retries` is how many times to retry after a blocking failure,
    /// 0 = no retry.
    #[test]
    fn max_retries_blocks_are_retried_then_the_result_passes() {
        let gate = QualityGate::from_keys(None, Some(2)).unwrap();
        assert!(gate.block_on_failure);
        assert_eq!(gate.judge(0), Judgement::Retry { attempt: 1 });
        assert_eq!(gate.judge(1), Judgement::Retry { attempt: 2 });
        assert_eq!(gate.judge(2), Judgement::Exhausted { attempts: 3 });
        let no_retry = QualityGate::from_keys(Some(true), None).unwrap();
        assert_eq!(no_retry.judge(0), Judgement::Exhausted { attempts: 1 });
        assert_eq!(
            no_retry.judge(u32::MAX),
            Judgement::Exhausted { attempts: u32::MAX }
        );
    }

    #[test]
    fn a_hook_with_neither_key_is_no_gate() {
        assert_eq!(QualityGate::from_keys(None, None), None);
        let soft = QualityGate::from_keys(Some(false), None).unwrap();
        assert_eq!((soft.block_on_failure, soft.max_retries), (false, 0));
    }
}
