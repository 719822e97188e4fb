//! The typed stage methods an agent calls (`before_tool` …
//! `lifecycle`): typed params in, the merged verdict out as the stage's
//! outcome type. A lifecycle event nobody waits on is not a stage: it is
//! announced (emitted, and run by the members that run for it) instead.

use std::time::SystemTime;

use hookhost_protocol::event::RuntimeEvent;
use hookhost_protocol::lifecycle::{EVENT_KIND_PREFIX, InvalidEventName, check_event_name};
use hookhost_protocol::meta::Meta;
use hookhost_protocol::params::{AfterLlmParams, AfterToolParams, BeforeLlmParams, ToolCall};
use hookhost_protocol::{LifecycleEvent, LifecycleParams, Outcome, Stage};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::dialect::origin::Origin;
use crate::outcome::{Approval, LifecycleOutcome, StageOutcome, ToolOutcome};

use super::*;

impl Host {
    /// Runs a typed stage. Params that do not serialize, or do not have
    /// the stage's shape, are refused without calling any hook: skipping
    /// every hook would let them past every guard.
    pub(super) async fn run_typed<P: Serialize + DeserializeOwned>(
        &self,
        stage: Stage,
        params: P,
    ) -> (Outcome, P) {
        let value = match serde_json::to_value(&params) {
            Ok(v) => v,
            Err(e) => {
                let reason = format!("the {stage} params did not serialize: {e}");
                return (refusal(stage, reason), params);
            }
        };
        match self.run_stage(stage, value).await {
            Ok(outcome) => (outcome, params),
            Err(e) => (refusal(stage, e.to_string()), params),
        }
    }

    /// Runs before_tool: the chain may rewrite the call, add context for
    /// the model, ask the user, answer it, deny it, or abort.
    pub async fn before_tool(&self, call: ToolCall) -> ToolOutcome<ToolCall> {
        let (outcome, original) = self.run_typed(Stage::BeforeTool, call).await;
        match outcome {
            Outcome::Continue {
                params, contexts, ..
            } => ToolOutcome::Continue {
                call: decode_or(params, original),
                contexts: texts(contexts),
            },
            Outcome::Ask {
                params,
                reason,
                contexts,
                ..
            } => ToolOutcome::Ask {
                call: decode_or(params, original),
                reason,
                contexts: texts(contexts),
            },
            Outcome::Allow {
                params,
                reason,
                by,
                contexts,
                ..
            } => ToolOutcome::Allow {
                call: decode_or(params, original),
                reason,
                by,
                contexts: texts(contexts),
            },
            Outcome::Respond { result, .. } => ToolOutcome::Respond(result),
            Outcome::DenyTool { reason, .. } | Outcome::Refused { reason, .. } => {
                ToolOutcome::Deny { reason }
            }
            Outcome::Abort { hard, reason, .. } => ToolOutcome::Abort { hard, reason },
            // Lifecycle outcomes; not reachable at before_tool.
            Outcome::Blocked { reason, .. } => ToolOutcome::Deny { reason },
            Outcome::Lifecycle { .. } => ToolOutcome::proceed(original),
        }
    }

    /// Runs before_llm.
    pub async fn before_llm(&self, request: BeforeLlmParams) -> StageOutcome<BeforeLlmParams> {
        self.stage_outcome(Stage::BeforeLlm, request).await
    }

    /// Runs after_llm.
    pub async fn after_llm(&self, response: AfterLlmParams) -> StageOutcome<AfterLlmParams> {
        self.stage_outcome(Stage::AfterLlm, response).await
    }

    /// Runs after_tool.
    pub async fn after_tool(&self, result: AfterToolParams) -> StageOutcome<AfterToolParams> {
        self.stage_outcome(Stage::AfterTool, result).await
    }

    pub(super) async fn stage_outcome<P: Serialize + DeserializeOwned>(
        &self,
        stage: Stage,
        params: P,
    ) -> StageOutcome<P> {
        let (outcome, original) = self.run_typed(stage, params).await;
        match outcome {
            Outcome::Continue {
                params, contexts, ..
            } => StageOutcome::Continue {
                params: decode_or(params, original),
                contexts: texts(contexts),
            },
            Outcome::Abort { hard, reason, .. } => StageOutcome::Abort { hard, reason },
            // Not reachable (the chain rejects allow at these stages);
            // refused rather than run as an approval nobody can give here.
            Outcome::Allow { by, .. } => StageOutcome::Abort {
                hard: false,
                reason: format!("hook `{by}` answered allow at {stage}"),
            },
            // Not reachable for these stages (the chain rejects respond,
            // deny_tool and ask there); treated as an abort rather than
            // ignored.
            Outcome::Respond { by, .. } => StageOutcome::Abort {
                hard: false,
                reason: format!("hook `{by}` answered respond at {stage}"),
            },
            Outcome::Ask { by, .. } => StageOutcome::Abort {
                hard: false,
                reason: format!("hook `{by}` answered ask at {stage}"),
            },
            Outcome::DenyTool { reason, .. }
            | Outcome::Refused { reason, .. }
            | Outcome::Blocked { reason, .. } => StageOutcome::Abort {
                hard: false,
                reason,
            },
            Outcome::Lifecycle { .. } => StageOutcome::proceed(original),
        }
    }

    /// Runs approve_tool: approved when an approver approved and none
    /// refused; undecided when no hook decided (the agent then asks the
    /// user, as it would with no hook).
    pub async fn approve_tool(&self, call: ToolCall) -> Approval {
        let (outcome, _) = self.run_typed(Stage::ApproveTool, call).await;
        match outcome {
            Outcome::Allow { .. } => Approval::Approved,
            Outcome::Continue { .. } => Approval::Undecided,
            Outcome::Refused { reason, .. }
            | Outcome::DenyTool { reason, .. }
            | Outcome::Abort { reason, .. }
            | Outcome::Blocked { reason, .. } => Approval::Refused { reason },
            // Not reachable at approve_tool; refused, as an approver must
            // say yes explicitly.
            Outcome::Lifecycle { .. } => Approval::Refused {
                reason: "a lifecycle outcome at approve_tool".into(),
            },
            Outcome::Respond { by, .. } => Approval::Refused {
                reason: format!("hook `{by}` answered respond at approve_tool"),
            },
            Outcome::Ask { by, .. } => Approval::Refused {
                reason: format!("hook `{by}` answered ask at approve_tool"),
            },
        }
    }

    /// Runs a lifecycle event with no meta; see [`Host::lifecycle_with`].
    pub async fn lifecycle(
        &self,
        event: LifecycleEvent,
        payload: Map<String, Value>,
    ) -> LifecycleOutcome {
        let mut params = LifecycleParams::new(event);
        params.payload = payload;
        self.lifecycle_with(params).await
    }

    /// Runs a lifecycle event. A request event (session_start,
    /// user_prompt_submit, turn_start, stop, subagent_start,
    /// subagent_stop, pre_compact, before_compaction) goes through the
    /// chain and may be blocked or gather context, system messages and a
    /// summary; a stop is also emitted to observers and its blocks are
    /// capped per session (`meta.session_key`) by `stop_block_limit`; at
    /// subagent_stop the quality gates' verdict is in
    /// [`LifecycleOutcome::gate`]. Any
    /// other event is emitted to observers as `lifecycle.<event>` and runs
    /// the command hooks that list it, whose output is only logged.
    pub async fn lifecycle_with(&self, params: LifecycleParams) -> LifecycleOutcome {
        let event = params.event;
        if !event.is_request() {
            if event == LifecycleEvent::SessionEnd {
                self.session_ended(params.meta.session_key.as_deref().unwrap_or_default())
                    .await;
            }
            self.announce(event.as_str(), params.payload, params.meta, None)
                .await;
            return LifecycleOutcome::default();
        }
        let value = match serde_json::to_value(&params) {
            Ok(v) => v,
            Err(e) => {
                let reason = format!("the {event} params did not serialize: {e}");
                return unaskable(event, reason);
            }
        };
        let id = self.next_request_id();
        match self
            .run_gated(Stage::Lifecycle, value, None, None, id)
            .await
        {
            Ok((outcome, gate)) => LifecycleOutcome {
                gate,
                ..lifecycle_outcome(event, outcome)
            },
            Err(e) => unaskable(event, e.to_string()),
        }
    }

    /// Announces a lifecycle event by name. One of the named events runs
    /// as [`Host::lifecycle_with`] does; any other snake_case name (an
    /// agent's own event, such as Claude Code's `cwd_changed`) is
    /// observe-only: emitted as `lifecycle.<name>` and run by the command
    /// hooks that list it, whose output is only logged. A name that is not
    /// snake_case (`[a-z][a-z0-9_]{0,63}`) is refused and nothing runs.
    pub async fn lifecycle_named(
        &self,
        name: &str,
        meta: Meta,
        payload: Map<String, Value>,
    ) -> Result<LifecycleOutcome, InvalidEventName> {
        check_event_name(name)?;
        if let Ok(event) = name.parse::<LifecycleEvent>() {
            let mut params = LifecycleParams::new(event);
            params.meta = meta;
            params.payload = payload;
            return Ok(self.lifecycle_with(params).await);
        }
        let blocked = self.announce(name, payload, meta, None).await;
        Ok(LifecycleOutcome {
            blocked,
            ..LifecycleOutcome::default()
        })
    }
}

impl Host {
    /// An ended session's counts (stops and quality gates) are dropped.
    pub(super) async fn session_ended(&self, session: &str) {
        self.inner.stops.session_ended(session).await;
    }

    /// Emits `lifecycle.<name>` with `payload` to the observers; `meta`,
    /// when it says anything, is the event's scope.
    pub(super) fn emit_lifecycle(&self, name: &str, payload: Value, meta: Meta) {
        self.emit(RuntimeEvent {
            id: self.next_event_id(),
            kind: format!("{EVENT_KIND_PREFIX}{name}"),
            time: hookhost_protocol::time::rfc3339(SystemTime::now()),
            source: Some("hookhost".into()),
            scope: (!meta.is_empty()).then_some(meta),
            severity: None,
            payload,
            extra: Map::new(),
        });
    }
}

impl Host {
    /// A lifecycle event nobody waits on: emitted to observers as
    /// `lifecycle.<event>`, and run by every member that has a run for it
    /// (the command hooks that list it), all at once; their output is only
    /// logged, but for a block at an event the agent lets a hook block:
    /// the first in chain order is the event's answer.
    pub(super) async fn announce(
        &self,
        event: &str,
        payload: Map<String, Value>,
        meta: Meta,
        origin: Option<Arc<Origin>>,
    ) -> Option<String> {
        // The hooks get the meta too (the session, the cwd): their input
        // and their variables (GEMINI_SESSION_ID) are built from it.
        let mut sent = payload.clone();
        if let Ok(m) = serde_json::to_value(&meta) {
            sent.insert("meta".into(), m);
        }
        let (payload, sent) = (Value::Object(payload), Value::Object(sent));
        self.emit_lifecycle(event, payload, meta);
        let mut running = tokio::task::JoinSet::new();
        for (place, m) in self.chain().iter().enumerate() {
            if let Some(notification) = m.notification(event, &sent, origin.clone()) {
                running.spawn(async move { (place, notification.await) });
            }
        }
        let mut ended = Vec::new();
        while let Some(done) = running.join_next().await {
            ended.extend(done.ok());
        }
        // In chain order, whichever finished first.
        ended.sort_by_key(|(place, _)| *place);
        if let Some(o) = &origin {
            for (_, (_, heard)) in &ended {
                if let Some(h) = heard {
                    o.note(h.spec, h.event, &h.reply);
                }
            }
        }
        ended.into_iter().find_map(|(_, (block, _))| block)
    }
}

/// The typed outcome of a lifecycle chain's verdict.
fn lifecycle_outcome(event: LifecycleEvent, outcome: Outcome) -> LifecycleOutcome {
    match outcome {
        Outcome::Blocked { reason, .. } => LifecycleOutcome {
            blocked: Some(reason),
            ..LifecycleOutcome::default()
        },
        Outcome::Lifecycle {
            contexts,
            system_messages,
            summary,
        } => LifecycleOutcome {
            blocked: None,
            contexts: texts(contexts),
            system_messages,
            summary,
            gate: None,
        },
        other => {
            tracing::error!(%event, "unexpected lifecycle outcome {other:?}");
            LifecycleOutcome::default()
        }
    }
}

/// The texts of `(hook, text)` contexts, in chain order.
fn texts(contexts: Vec<(String, String)>) -> Vec<String> {
    contexts.into_iter().map(|(_, text)| text).collect()
}

/// A lifecycle event whose params no hook could be asked about: blocked
/// when the event can be, as a fail-closed hook would have; otherwise it
/// goes on (there is nothing to refuse), logged.
pub(super) fn unaskable(event: LifecycleEvent, reason: String) -> LifecycleOutcome {
    tracing::error!(%event, "{reason}; no hook was asked");
    LifecycleOutcome {
        blocked: event.can_block().then_some(reason),
        ..LifecycleOutcome::default()
    }
}

/// The stage's refusal, by the host itself, for params no hook could be
/// asked about: deny_tool, a refused approval, a block, or abort_turn.
pub(super) fn refusal(stage: Stage, reason: String) -> Outcome {
    tracing::error!(%stage, "{reason}; refused without calling any hook");
    Outcome::refusal(stage, reason, "hookhost".to_string())
}

/// The chain validated every patched params object against the stage's
/// type, so decoding cannot fail; if it ever did, the caller's own params
/// are returned rather than anything half-made.
pub(super) fn decode_or<P: DeserializeOwned>(value: Value, original: P) -> P {
    if value.is_null() {
        return original;
    }
    match serde_json::from_value(value) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!("merged params did not decode ({e}); using the caller's params");
            original
        }
    }
}
