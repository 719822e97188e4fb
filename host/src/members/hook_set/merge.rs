//! docker-agent's aggregation of a group's answers into one: the strongest
//! verdict wins (halt > deny > ask > allow) with its own reason, ties going
//! to the first in group order; every `additional_context` is kept, joined
//! with newlines; rewrites compose in order, and the group answers the
//! whole rewrite as one merge patch against what it was given. A hook that
//! failed is judged by its own policy: one that fails closed is a refusal.

use hookhost_protocol::{
    Decision, LifecycleEvent, OnError, Stage, apply_merge_patch, decode_answer,
    decode_lifecycle_result, merge_patch_between,
};
use serde_json::{Map, Value, json};

use crate::error::CallError;
use crate::members::{Member, neutral};

/// A group's answers so far.
pub(super) struct Merge<'a> {
    stage: Stage,
    event: Option<LifecycleEvent>,
    /// The params the group was given.
    original: &'a Value,
    /// The params with every rewrite so far applied, once there is one:
    /// what the next hook of a pipeline sees.
    rewritten: Option<Value>,
    /// The strongest verdict yet, by rank.
    strongest: Option<(u8, Decision)>,
    contexts: Vec<String>,
    system: Vec<String>,
    summary: Option<String>,
}

/// How strong a verdict is: halt 4, deny 3, ask 2, allow (any rewrite) 0.
fn rank(d: &Decision) -> u8 {
    match d {
        Decision::Abort { .. } => 4,
        Decision::DenyTool(_) | Decision::Respond(_) => 3,
        Decision::Approval {
            approved: false, ..
        } => 3,
        Decision::Lifecycle { block: true, .. } => 3,
        Decision::Ask(_) => 2,
        // An explicit allow is kept (the weakest verdict), so the group
        // passes it on; it is never inferred from silence or a rewrite.
        Decision::Allow { .. } | Decision::Approval { approved: true, .. } => 1,
        _ => 0,
    }
}

impl<'a> Merge<'a> {
    pub(super) fn new(stage: Stage, event: Option<LifecycleEvent>, params: &'a Value) -> Self {
        Merge {
            stage,
            event,
            original: params,
            rewritten: None,
            strongest: None,
            contexts: Vec::new(),
            system: Vec::new(),
            summary: None,
        }
    }

    /// The params as rewritten so far.
    pub(super) fn params(&self) -> &Value {
        self.rewritten.as_ref().unwrap_or(self.original)
    }

    /// Adds one hook's answer, or its failure judged by its policy.
    pub(super) fn add(&mut self, hook: &Member, reply: Result<Value, CallError>) {
        let decoded = reply.and_then(|v| self.decode(&v));
        match decoded {
            Ok((d, context)) => self.decision(d, context),
            Err(e) => self.failure(hook, &e),
        }
    }

    fn decode(&self, v: &Value) -> Result<(Decision, Option<String>), CallError> {
        let bad = |e: hookhost_protocol::ResultError| CallError::Protocol(e.to_string());
        match (self.stage, self.event) {
            (Stage::Lifecycle, Some(ev)) => {
                Ok((decode_lifecycle_result(ev, v).map_err(bad)?, None))
            }
            (Stage::Lifecycle, None) => Err(CallError::Protocol("no lifecycle event".into())),
            (stage, _) => {
                let a = decode_answer(stage, v).map_err(bad)?;
                Ok((a.decision, a.additional_context))
            }
        }
    }

    fn decision(&mut self, mut d: Decision, context: Option<String>) {
        self.contexts.extend(context);
        let patch = match &mut d {
            Decision::Modify(patch) => Some(std::mem::take(patch)),
            Decision::Allow { patch, .. } => patch.take(),
            _ => None,
        };
        if let Some(patch) = patch {
            // Rewrites pipe from hook to hook; they are applied, not kept.
            let original = self.original;
            let params = self.rewritten.get_or_insert_with(|| original.clone());
            apply_merge_patch(params, &Value::Object(patch));
        }
        if matches!(d, Decision::Modify(_)) {
            // A rewrite is never a verdict (rank 0).
            return;
        }
        if let Decision::Lifecycle {
            additional_context,
            system_message,
            summary,
            ..
        } = &d
        {
            self.contexts.extend(additional_context.clone());
            self.system.extend(system_message.clone());
            if self.summary.is_none() {
                self.summary = summary.clone();
            }
        }
        let r = rank(&d);
        if r > 0 && self.strongest.as_ref().is_none_or(|(s, _)| r > *s) {
            self.strongest = Some((r, d));
        }
    }

    /// A failed hook: a refusal when its policy denies, else nothing (the
    /// failure was logged where it happened).
    fn failure(&mut self, hook: &Member, error: &CallError) {
        if hook.failure_policy(self.stage, Some(error)) == OnError::Allow {
            tracing::debug!(hook = %hook.name, "hook failed; its policy goes on: {error}");
            return;
        }
        let reason = Some(format!("hook `{}` failed: {error}", hook.name));
        let refusal = match self.stage {
            Stage::BeforeTool => Decision::DenyTool(reason),
            Stage::ApproveTool => Decision::Approval {
                approved: false,
                reason,
            },
            Stage::Lifecycle if self.event.is_some_and(LifecycleEvent::can_block) => {
                Decision::Lifecycle {
                    block: true,
                    reason,
                    additional_context: None,
                    system_message: None,
                    summary: None,
                }
            }
            Stage::Lifecycle => return,
            _ => Decision::Abort {
                hard: false,
                reason,
            },
        };
        self.decision(refusal, None);
    }

    /// The group's one answer.
    pub(super) fn finish(self) -> Value {
        let context = (!self.contexts.is_empty()).then(|| self.contexts.join("\n"));
        if self.stage == Stage::Lifecycle {
            return self.lifecycle(context);
        }
        let rewrite = self
            .rewritten
            .as_ref()
            .and_then(|p| merge_patch_between(self.original, p))
            .zip(self.stage.payload_key());
        let mut out = match (&self.strongest, rewrite) {
            (Some((_, Decision::Allow { reason, .. })), rewrite) => {
                let mut out = json!({"action": "allow", "reason": reason});
                if let (Some((patch, key)), Some(obj)) = (rewrite, out.as_object_mut()) {
                    obj.insert(key.into(), patch);
                }
                out
            }
            (Some((_, d)), _) => d.to_value(),
            (None, Some((patch, key))) => json!({"action": "modify", key: patch}),
            (None, None) => neutral(),
        };
        let carries = matches!(self.stage, Stage::BeforeTool | Stage::AfterTool);
        let goes_on = self.strongest.as_ref().is_none_or(|(r, _)| *r < 3);
        if let (Some(c), true, true, Some(obj)) = (context, carries, goes_on, out.as_object_mut()) {
            obj.insert("additional_context".into(), Value::from(c));
        }
        out
    }

    fn lifecycle(&self, context: Option<String>) -> Value {
        let mut out = Map::new();
        if let Some((_, Decision::Lifecycle { reason, .. })) = &self.strongest {
            out.insert("action".into(), Value::from("block"));
            out.extend(reason.clone().map(|r| ("reason".into(), Value::from(r))));
        }
        let event = self.event;
        if event.is_some_and(LifecycleEvent::takes_context) {
            out.extend(context.map(|c| ("additional_context".into(), Value::from(c))));
        }
        if !self.system.is_empty() {
            out.insert("system_message".into(), Value::from(self.system.join("\n")));
        }
        if event.is_some_and(LifecycleEvent::takes_summary) {
            out.extend(
                self.summary
                    .clone()
                    .map(|s| ("summary".into(), Value::from(s))),
            );
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From docker-agent pkg/hooks/executor.go strongerDecision (covered by
    /// hooks_test.go's aggregation cases): deny beats ask beats allow, and a
    /// tie keeps the first reason.
    #[test]
    fn the_strongest_verdict_wins_and_ties_keep_the_first_reason() {
        let params = json!({"tool": "bash", "arguments": {}});
        let mut m = Merge::new(Stage::BeforeTool, None, &params);
        m.decision(Decision::Ask(Some("ask-1".into())), None);
        m.decision(Decision::DenyTool(Some("deny-1".into())), Some("c1".into()));
        m.decision(Decision::Ask(Some("ask-2".into())), Some("c2".into()));
        m.decision(Decision::DenyTool(Some("deny-2".into())), None);
        assert_eq!(
            m.finish(),
            json!({"action": "deny_tool", "reason": "deny-1"})
        );
    }
}
