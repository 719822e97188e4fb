//! Hook results: the wire shape per stage, and their decoding into a
//! [`Decision`] with the legality of each action checked against the stage.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::lifecycle::LifecycleEvent;
use crate::params::ToolResult;
use crate::stage::Stage;

/// What a hook tells the host to do. An empty string means `continue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
// Closed: the actions are the protocol's vocabulary; a hook cannot use a new one before a protocol version bump negotiates it.
#[allow(clippy::exhaustive_enums)]
pub enum Action {
    /// Go on unchanged.
    Continue,
    /// Go on with the params changed by the result's merge patch.
    Modify,
    /// before_tool only: skip the tool and use the result's `result`.
    Respond,
    /// before_tool only: do not run the tool; `reason` goes to the model.
    DenyTool,
    /// before_tool only: let the user decide whether the tool runs; `reason`
    /// says why. It does not stop the chain: later hooks still run, and a
    /// later deny, respond or abort wins over it.
    Ask,
    /// before_tool only: go on (with the result's `call` patch, when it
    /// has one), and the hook approves the call: the agent may run it
    /// without asking the user. A later hook that asks, denies, answers or
    /// aborts wins over it. Only a hook says this; the host never infers it
    /// from a rewrite or from silence.
    Allow,
    /// End the current turn.
    AbortTurn,
    /// Stop the whole agent loop.
    HardAbort,
}

impl Action {
    /// Every action, in the order the spec lists them.
    pub const ALL: [Action; 8] = [
        Action::Continue,
        Action::Modify,
        Action::Respond,
        Action::DenyTool,
        Action::Ask,
        Action::Allow,
        Action::AbortTurn,
        Action::HardAbort,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Continue => "continue",
            Action::Modify => "modify",
            Action::Respond => "respond",
            Action::DenyTool => "deny_tool",
            Action::Ask => "ask",
            Action::Allow => "allow",
            Action::AbortTurn => "abort_turn",
            Action::HardAbort => "hard_abort",
        }
    }

    /// Whether the action lets the chain go on to the next hook: continue,
    /// modify, ask and allow do; the others decide the verdict.
    pub fn goes_on(self) -> bool {
        matches!(
            self,
            Action::Continue | Action::Modify | Action::Ask | Action::Allow
        )
    }

    /// Whether a hook may answer this action at `stage`. approve_tool
    /// answers `{approved}`, or `continue` to leave the decision to the
    /// agent; lifecycle answers `continue` or its own `block`
    /// ([`LifecycleAction`]), never a patch, a tool answer or an abort.
    pub fn legal_at(self, stage: Stage) -> bool {
        match stage {
            Stage::ApproveTool | Stage::Lifecycle => self == Action::Continue,
            Stage::BeforeTool => true,
            Stage::BeforeLlm | Stage::AfterLlm | Stage::AfterTool => !matches!(
                self,
                Action::Respond | Action::DenyTool | Action::Ask | Action::Allow
            ),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if s.is_empty() {
            return Ok(Action::Continue);
        }
        Action::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown action {s:?} (expected continue, modify, respond, deny_tool, ask, allow, abort_turn or hard_abort)"
                ))
            })
    }
}

fn action_schema(allowed: &[Action]) -> schemars::Schema {
    let mut names: Vec<Value> = allowed.iter().map(|a| Value::from(a.as_str())).collect();
    names.push(Value::from(""));
    schemars::json_schema!({
        "type": "string",
        "enum": names,
        "description": "What the host should do; an empty string means continue."
    })
}

fn intercept_actions(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    action_schema(&[
        Action::Continue,
        Action::Modify,
        Action::AbortTurn,
        Action::HardAbort,
    ])
}

/// A present `approved` must be a boolean: `null` gets serde's own
/// "expected a boolean", not the absent field's meaning.
fn strict_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    bool::deserialize(d).map(Some)
}

fn abstain_action(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["continue", ""],
        "description": "Without `approved`: the hook leaves the decision to the agent."
    })
}

fn tool_actions(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    action_schema(&Action::ALL)
}

/// `hook.before_llm` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BeforeLlmResult {
    /// Absent or empty means continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "intercept_actions")]
    pub action: Option<Action>,
    /// Why, for aborts; logged and shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With `modify`: a merge patch over the before_llm params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Map<String, Value>>,
}

/// `hook.after_llm` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfterLlmResult {
    /// Absent or empty means continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "intercept_actions")]
    pub action: Option<Action>,
    /// Why, for aborts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With `modify`: a merge patch over the after_llm params (new text at
    /// `response.content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Map<String, Value>>,
}

/// `hook.before_tool` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BeforeToolResult {
    /// Absent or empty means continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "tool_actions")]
    pub action: Option<Action>,
    /// Why, for deny_tool, ask, allow and aborts; a denial's reason
    /// reaches the model, an ask's or an allow's the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With `modify` or `allow`: a merge patch over the before_tool params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Map<String, Value>>,
    /// With `respond`: the tool result to use instead of running the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolResult>,
    /// Text the agent adds to the model's context, with an action that lets
    /// the chain go on (continue, modify, ask); ignored with the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

/// `hook.after_tool` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfterToolResult {
    /// Absent or empty means continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "intercept_actions")]
    pub action: Option<Action>,
    /// Why, for aborts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With `modify`: a merge patch over the after_tool params (new output
    /// at `result.for_llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// Text the agent adds to the model's context, with continue or
    /// modify; ignored with an abort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

/// `hook.approve_tool` result: `approved`, or `action: "continue"` to
/// leave the decision to the agent (which then asks the user, as it would
/// with no hook). A result with neither is a protocol error handled by the
/// hook's failure policy, never a silent allow or deny.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [{"required": ["approved"]}, {"required": ["action"]}]))]
pub struct ApproveToolResult {
    /// Whether the tool may run. `null` is not a decision: it is refused
    /// as malformed, like any other non-boolean.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "strict_bool"
    )]
    #[schemars(with = "bool")]
    pub approved: Option<bool>,
    /// `continue` (without `approved`): this hook does not decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "abstain_action")]
    pub action: Option<Action>,
    /// Why not, when refused; reaches the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a hook answers at a lifecycle event. Not an [`Action`]: `block` has
/// no meaning at the other stages, where it stays an unknown action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
// Closed: an event either proceeds or is blocked.
#[allow(clippy::exhaustive_enums)]
pub enum LifecycleAction {
    /// Let the event proceed.
    #[default]
    Continue,
    /// Stop it (only at events that can be blocked); `reason` says why.
    Block,
}

impl LifecycleAction {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleAction::Continue => "continue",
            LifecycleAction::Block => "block",
        }
    }
}

impl<'de> Deserialize<'de> for LifecycleAction {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        match s.as_ref() {
            "" | "continue" => Ok(LifecycleAction::Continue),
            "block" => Ok(LifecycleAction::Block),
            other => Err(serde::de::Error::custom(format!(
                "unknown lifecycle action {other:?} (expected continue or block)"
            ))),
        }
    }
}

fn lifecycle_actions(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["continue", "block", ""],
        "description": "What the host should do; an empty string means continue. `block` only at events that can be blocked."
    })
}

/// `hook.lifecycle` result. Which members a hook may send depends on the
/// event (see [`LifecycleEvent`]); [`decode_lifecycle_result`] checks them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LifecycleResult {
    /// Absent or empty means continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "lifecycle_actions")]
    pub action: Option<LifecycleAction>,
    /// Why, for `block`; shown to the user. At stop and subagent_stop it is
    /// the next instruction for the agent, which keeps going.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Text the agent adds to the model's context (session_start,
    /// user_prompt_submit, turn_start and pre_compact only; at pre_compact
    /// it is instructions for the compaction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// A message the agent shows the user, at any request event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// The compaction summary to use (before_compaction only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// One hook's answer, decoded and checked against its stage.
#[derive(Debug, Clone, PartialEq)]
// Closed: one variant per action the protocol defines; a new one comes with a protocol version bump, and every chain driver must then handle it.
#[allow(clippy::exhaustive_enums)]
pub enum Decision {
    /// Go on unchanged.
    Continue,
    /// Apply this merge patch to the params and go on.
    Modify(Map<String, Value>),
    /// Use this tool result instead of running the tool.
    Respond(ToolResult),
    /// Do not run the tool.
    DenyTool(Option<String>),
    /// Let the user decide whether the tool runs (before_tool); the chain
    /// goes on.
    Ask(Option<String>),
    /// before_tool: approve the call, so the agent need not ask the user,
    /// after applying the patch (when there is one); the chain goes on.
    Allow {
        /// A merge patch over the params, as with `modify`.
        patch: Option<Map<String, Value>>,
        /// Why; the agent may show it to the user.
        reason: Option<String>,
    },
    /// End the turn (`hard: false`) or the whole agent loop (`hard: true`).
    Abort {
        /// `hard_abort` rather than `abort_turn`.
        hard: bool,
        /// Why.
        reason: Option<String>,
    },
    /// approve_tool's answer.
    Approval {
        /// Whether the tool may run.
        approved: bool,
        /// Why not.
        reason: Option<String>,
    },
    /// A lifecycle answer, already checked against its event.
    Lifecycle {
        /// Stop the event (`action: block`).
        block: bool,
        /// Why, for a block.
        reason: Option<String>,
        /// Text for the model's context.
        additional_context: Option<String>,
        /// A message for the user.
        system_message: Option<String>,
        /// The compaction summary.
        summary: Option<String>,
    },
}

/// Why a hook's result is not acceptable. Each is a hook failure, handled
/// by that hook's `on_error` policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResultError {
    /// The result does not have the stage's shape (names the field).
    #[error("malformed {stage} result: {detail}")]
    Malformed {
        /// The stage answered.
        stage: Stage,
        /// The decoder's message, naming the field.
        detail: String,
    },
    /// An action the stage does not allow, such as `respond` at after_llm.
    #[error("action `{action}` is not allowed at {stage}")]
    IllegalAction {
        /// The stage answered.
        stage: Stage,
        /// The action the hook sent.
        action: Action,
    },
    /// `respond` without the tool result to respond with.
    #[error("action `respond` needs a `result` object with `for_llm`")]
    RespondWithoutResult,
    /// [`decode_result`] was asked for a lifecycle result, whose legality
    /// depends on the event; a caller bug, not a hook's.
    #[error(
        "a lifecycle result depends on its event: decode it with decode_lifecycle_result, not decode_result"
    )]
    LifecycleNeedsEvent,
    /// A result for a lifecycle event that is only ever a runtime event,
    /// so no hook can have been asked.
    #[error("lifecycle event `{event}` is not a request event and takes no result")]
    NotARequestEvent {
        /// The event.
        event: LifecycleEvent,
    },
    /// `block` at a lifecycle event that cannot be blocked.
    #[error("action `block` is not allowed at lifecycle event `{event}`, which cannot be blocked")]
    BlockNotAllowed {
        /// The event answered.
        event: LifecycleEvent,
    },
    /// A member the lifecycle event does not take, such as `summary` at
    /// session_start.
    #[error("field `{field}` is not allowed at lifecycle event `{event}`")]
    LifecycleFieldNotAllowed {
        /// The event answered.
        event: LifecycleEvent,
        /// The member: `additional_context` or `summary`.
        field: &'static str,
    },
}

fn malformed(stage: Stage, e: serde_json::Error) -> ResultError {
    ResultError::Malformed {
        stage,
        detail: e.to_string(),
    }
}

fn common(
    stage: Stage,
    action: Option<Action>,
    reason: Option<String>,
    patch: Option<Map<String, Value>>,
) -> Result<Decision, ResultError> {
    let action = action.unwrap_or(Action::Continue);
    if !action.legal_at(stage) {
        return Err(ResultError::IllegalAction { stage, action });
    }
    Ok(match action {
        Action::Continue => Decision::Continue,
        Action::Modify => Decision::Modify(patch.unwrap_or_default()),
        Action::DenyTool => Decision::DenyTool(reason),
        Action::Ask => Decision::Ask(reason),
        Action::Allow => Decision::Allow { patch, reason },
        Action::AbortTurn => Decision::Abort {
            hard: false,
            reason,
        },
        Action::HardAbort => Decision::Abort { hard: true, reason },
        Action::Respond => return Err(ResultError::RespondWithoutResult),
    })
}

/// Decodes a hook's `result` for `stage`.
///
/// `modify` without a patch is an empty patch (the params stay as they
/// are), as PicoClaw treats it. A payload sent with any other action is
/// ignored. `additional_context` is dropped here; [`decode_answer`] keeps it.
///
/// At [`Stage::Lifecycle`] this is always [`ResultError::LifecycleNeedsEvent`]:
/// what a lifecycle answer may say depends on the event, so use
/// [`decode_lifecycle_result`] (the [`Chain`](crate::chain::Chain) does).
pub fn decode_result(stage: Stage, result: &Value) -> Result<Decision, ResultError> {
    decode_answer(stage, result).map(|a| a.decision)
}

/// One hook's decoded answer at a stage other than lifecycle, with the
/// text it adds to the model's context.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// What the hook decided.
    pub decision: Decision,
    /// Its `additional_context` (before_tool and after_tool), kept only
    /// when the decision lets the chain go on: a verdict that stops the
    /// chain has no context to add to.
    pub additional_context: Option<String>,
}

/// [`decode_result`], keeping the result's `additional_context`.
pub fn decode_answer(stage: Stage, result: &Value) -> Result<Answer, ResultError> {
    if stage == Stage::Lifecycle {
        return Err(ResultError::LifecycleNeedsEvent);
    }
    if !result.is_object() {
        return Err(ResultError::Malformed {
            stage,
            detail: format!("a result must be a JSON object, got {}", type_name(result)),
        });
    }
    let (decision, context) = decode_stage(stage, result)?;
    let additional_context = context.filter(|_| decision.goes_on());
    Ok(Answer {
        decision,
        additional_context,
    })
}

/// The stage's result type decoded, with its `additional_context`.
fn decode_stage(stage: Stage, result: &Value) -> Result<(Decision, Option<String>), ResultError> {
    let malformed = |e| malformed(stage, e);
    match stage {
        Stage::BeforeLlm => {
            let r = BeforeLlmResult::deserialize(result).map_err(malformed)?;
            Ok((common(stage, r.action, r.reason, r.request)?, None))
        }
        Stage::AfterLlm => {
            let r = AfterLlmResult::deserialize(result).map_err(malformed)?;
            Ok((common(stage, r.action, r.reason, r.response)?, None))
        }
        Stage::AfterTool => {
            let r = AfterToolResult::deserialize(result).map_err(malformed)?;
            let d = common(stage, r.action, r.reason, r.result)?;
            Ok((d, r.additional_context))
        }
        Stage::BeforeTool => {
            let r = BeforeToolResult::deserialize(result).map_err(malformed)?;
            let d = match (r.action, r.result) {
                (Some(Action::Respond), Some(res)) => Decision::Respond(res),
                (Some(Action::Respond), None) => return Err(ResultError::RespondWithoutResult),
                (action, _) => common(stage, action, r.reason, r.call)?,
            };
            Ok((d, r.additional_context))
        }
        Stage::ApproveTool => {
            let r = ApproveToolResult::deserialize(result).map_err(malformed)?;
            Ok((approval(r)?, None))
        }
        Stage::Lifecycle => Err(ResultError::LifecycleNeedsEvent),
    }
}

/// An approve_tool result as a decision: an approval or refusal, or (with
/// `action: "continue"` and no `approved`) no decision at all.
fn approval(r: ApproveToolResult) -> Result<Decision, ResultError> {
    let stage = Stage::ApproveTool;
    match (r.approved, r.action) {
        (Some(approved), _) => Ok(Decision::Approval {
            approved,
            reason: r.reason,
        }),
        (None, Some(Action::Continue)) => Ok(Decision::Continue),
        (None, Some(action)) => Err(ResultError::IllegalAction { stage, action }),
        (None, None) => Err(ResultError::Malformed {
            stage,
            detail: "missing field `approved` (or `action: \"continue\"` to leave the decision to the agent)".into(),
        }),
    }
}

impl Decision {
    /// Whether the chain goes on after it: continue, modify, ask, allow,
    /// an approval, or a lifecycle answer that does not block.
    pub fn goes_on(&self) -> bool {
        match self {
            Decision::Continue
            | Decision::Modify(_)
            | Decision::Ask(_)
            | Decision::Allow { .. } => true,
            Decision::Approval { approved, .. } => *approved,
            Decision::Lifecycle { block, .. } => !*block,
            Decision::Respond(_) | Decision::DenyTool(_) | Decision::Abort { .. } => false,
        }
    }

    /// The stage action it stands for, when it is one (not an approval or
    /// a lifecycle answer).
    pub fn action(&self) -> Option<Action> {
        Some(match self {
            Decision::Continue => Action::Continue,
            Decision::Modify(_) => Action::Modify,
            Decision::Respond(_) => Action::Respond,
            Decision::DenyTool(_) => Action::DenyTool,
            Decision::Ask(_) => Action::Ask,
            Decision::Allow { .. } => Action::Allow,
            Decision::Abort { hard: false, .. } => Action::AbortTurn,
            Decision::Abort { hard: true, .. } => Action::HardAbort,
            Decision::Approval { .. } | Decision::Lifecycle { .. } => return None,
        })
    }
}

/// Decodes a hook's `hook.lifecycle` result for `event`, always into
/// [`Decision::Lifecycle`], and checks it against the event.
///
/// An action of the other stages (`modify`, `deny_tool`, ...) is an
/// [`ResultError::IllegalAction`] at lifecycle, like any action a stage does
/// not allow; an unknown one is malformed. `reason` without `block` is
/// ignored. A `null` member counts as absent.
pub fn decode_lifecycle_result(
    event: LifecycleEvent,
    result: &Value,
) -> Result<Decision, ResultError> {
    let stage = Stage::Lifecycle;
    if !event.is_request() {
        return Err(ResultError::NotARequestEvent { event });
    }
    let Some(obj) = result.as_object() else {
        return Err(ResultError::Malformed {
            stage,
            detail: format!("a result must be a JSON object, got {}", type_name(result)),
        });
    };
    // An action of the other stages gets the same error it gets wherever it
    // is not allowed, rather than "unknown".
    if let Some(action) = obj.get("action").and_then(|a| Action::deserialize(a).ok())
        && !action.legal_at(stage)
    {
        return Err(ResultError::IllegalAction { stage, action });
    }
    let r = LifecycleResult::deserialize(result).map_err(|e| malformed(stage, e))?;
    let decision = Decision::Lifecycle {
        block: r.action == Some(LifecycleAction::Block),
        reason: r.reason,
        additional_context: r.additional_context,
        system_message: r.system_message,
        summary: r.summary,
    };
    check_lifecycle_decision(event, &decision)?;
    Ok(decision)
}

/// Checks that `decision` is something a hook may answer at `event`: a
/// [`Decision::Lifecycle`] (or [`Decision::Continue`]) that blocks only a
/// blocking event and carries `additional_context` and `summary` only where
/// the event takes them. Used on decoded results, on in-process hooks'
/// decisions, and by SDKs before they send an answer.
pub fn check_lifecycle_decision(
    event: LifecycleEvent,
    decision: &Decision,
) -> Result<(), ResultError> {
    let stage = Stage::Lifecycle;
    if !event.is_request() {
        return Err(ResultError::NotARequestEvent { event });
    }
    let illegal = |action| Err(ResultError::IllegalAction { stage, action });
    match decision {
        Decision::Continue => Ok(()),
        Decision::Modify(_) => illegal(Action::Modify),
        Decision::Respond(_) => illegal(Action::Respond),
        Decision::DenyTool(_) => illegal(Action::DenyTool),
        Decision::Ask(_) => illegal(Action::Ask),
        Decision::Allow { .. } => illegal(Action::Allow),
        Decision::Abort { hard: false, .. } => illegal(Action::AbortTurn),
        Decision::Abort { hard: true, .. } => illegal(Action::HardAbort),
        Decision::Approval { .. } => Err(ResultError::Malformed {
            stage,
            detail: "an approval (`approved`) is not a lifecycle answer".into(),
        }),
        Decision::Lifecycle {
            block,
            additional_context,
            summary,
            ..
        } => {
            if *block && !event.can_block() {
                return Err(ResultError::BlockNotAllowed { event });
            }
            if additional_context.is_some() && !event.takes_context() {
                return Err(ResultError::LifecycleFieldNotAllowed {
                    event,
                    field: "additional_context",
                });
            }
            if summary.is_some() && !event.takes_summary() {
                return Err(ResultError::LifecycleFieldNotAllowed {
                    event,
                    field: "summary",
                });
            }
            Ok(())
        }
    }
}

/// A short name for a JSON value's type, for error messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_or_absent_action_is_continue() {
        assert_eq!(
            decode_result(Stage::BeforeTool, &json!({})),
            Ok(Decision::Continue)
        );
        assert_eq!(
            decode_result(Stage::AfterLlm, &json!({"action": ""})),
            Ok(Decision::Continue)
        );
    }

    #[test]
    fn respond_at_after_llm_is_an_illegal_action() {
        assert_eq!(
            decode_result(Stage::AfterLlm, &json!({"action": "respond"})),
            Err(ResultError::IllegalAction {
                stage: Stage::AfterLlm,
                action: Action::Respond
            })
        );
    }

    #[test]
    fn approval_without_approved_names_the_field() {
        let err = decode_result(Stage::ApproveTool, &json!({})).unwrap_err();
        assert!(
            err.to_string().contains("missing field `approved`"),
            "{err}"
        );
    }

    fn lifecycle(block: bool) -> Decision {
        Decision::Lifecycle {
            block,
            reason: None,
            additional_context: None,
            system_message: None,
            summary: None,
        }
    }

    #[test]
    fn decode_result_refuses_lifecycle_and_points_to_the_event_aware_decoder() {
        let err = decode_result(Stage::Lifecycle, &json!({})).unwrap_err();
        assert_eq!(err, ResultError::LifecycleNeedsEvent);
        assert!(err.to_string().contains("decode_lifecycle_result"), "{err}");
    }

    #[test]
    fn lifecycle_results_decode_with_every_member() {
        use LifecycleEvent::*;
        assert_eq!(
            decode_lifecycle_result(TurnStart, &json!({})),
            Ok(lifecycle(false))
        );
        assert_eq!(
            decode_lifecycle_result(TurnStart, &json!({"action": ""})),
            Ok(lifecycle(false))
        );
        assert_eq!(
            decode_lifecycle_result(
                UserPromptSubmit,
                &json!({"action": "block", "reason": "no", "system_message": "m"})
            ),
            Ok(Decision::Lifecycle {
                block: true,
                reason: Some("no".into()),
                additional_context: None,
                system_message: Some("m".into()),
                summary: None,
            })
        );
        assert_eq!(
            decode_lifecycle_result(
                BeforeCompaction,
                &json!({"summary": "s", "action": "block"})
            ),
            Ok(Decision::Lifecycle {
                block: true,
                reason: None,
                additional_context: None,
                system_message: None,
                summary: Some("s".into()),
            })
        );
        assert_eq!(
            decode_lifecycle_result(
                SessionStart,
                &json!({"additional_context": "c", "summary": null})
            ),
            Ok(Decision::Lifecycle {
                block: false,
                reason: None,
                additional_context: Some("c".into()),
                system_message: None,
                summary: None,
            })
        );
    }

    #[test]
    fn lifecycle_legality_names_event_and_field() {
        use LifecycleEvent::*;
        let err = |e, v| decode_lifecycle_result(e, &v).unwrap_err();
        assert_eq!(
            err(TurnStart, json!({"action": "block"})),
            ResultError::BlockNotAllowed { event: TurnStart }
        );
        let e = err(Stop, json!({"additional_context": "c"}));
        assert_eq!(
            e.to_string(),
            "field `additional_context` is not allowed at lifecycle event `stop`"
        );
        let e = err(SessionStart, json!({"summary": "s"}));
        assert_eq!(
            e.to_string(),
            "field `summary` is not allowed at lifecycle event `session_start`"
        );
        assert_eq!(
            err(SessionEnd, json!({})),
            ResultError::NotARequestEvent { event: SessionEnd }
        );
        assert_eq!(
            err(TurnStart, json!({"action": "modify"})),
            ResultError::IllegalAction {
                stage: Stage::Lifecycle,
                action: Action::Modify
            }
        );
        let e = err(TurnStart, json!({"action": "explode"})).to_string();
        assert!(e.contains("unknown lifecycle action \"explode\""), "{e}");
        let e = err(TurnStart, json!({"additional_context": 5})).to_string();
        assert!(
            e.starts_with("malformed lifecycle result: invalid type"),
            "{e}"
        );
        let e = err(TurnStart, json!([])).to_string();
        assert!(e.contains("must be a JSON object"), "{e}");
    }

    #[test]
    fn only_continue_is_a_legal_action_at_lifecycle() {
        for a in Action::ALL {
            assert_eq!(a.legal_at(Stage::Lifecycle), a == Action::Continue, "{a}");
        }
        assert_eq!(
            check_lifecycle_decision(LifecycleEvent::TurnStart, &Decision::Continue),
            Ok(())
        );
        assert!(
            check_lifecycle_decision(LifecycleEvent::TurnStart, &Decision::DenyTool(None)).is_err()
        );
    }

    #[test]
    fn unknown_action_is_malformed_and_named() {
        let err = decode_result(Stage::BeforeTool, &json!({"action": "explode"})).unwrap_err();
        assert!(
            err.to_string().contains("unknown action \"explode\""),
            "{err}"
        );
    }

    #[test]
    fn stop_blocks_and_pre_compact_takes_compaction_instructions() {
        use LifecycleEvent::*;
        for event in [Stop, SubagentStop] {
            let d = decode_lifecycle_result(event, &json!({"action": "block", "reason": "go on"}));
            assert_eq!(
                d,
                Ok(Decision::Lifecycle {
                    block: true,
                    reason: Some("go on".into()),
                    additional_context: None,
                    system_message: None,
                    summary: None,
                })
            );
        }
        let d =
            decode_lifecycle_result(PreCompact, &json!({"additional_context": "keep the plan"}));
        assert!(
            matches!(d, Ok(Decision::Lifecycle { additional_context: Some(ref c), .. }) if c == "keep the plan"),
            "{d:?}"
        );
    }

    #[test]
    fn ask_is_a_before_tool_action_with_its_reason() {
        assert_eq!(
            decode_result(
                Stage::BeforeTool,
                &json!({"action": "ask", "reason": "rm?"})
            ),
            Ok(Decision::Ask(Some("rm?".into())))
        );
        for stage in [Stage::BeforeLlm, Stage::AfterLlm, Stage::AfterTool] {
            assert_eq!(
                decode_result(stage, &json!({"action": "ask"})),
                Err(ResultError::IllegalAction {
                    stage,
                    action: Action::Ask
                })
            );
        }
        assert!(!Action::Ask.legal_at(Stage::Lifecycle));
    }

    #[test]
    fn additional_context_is_kept_only_with_actions_that_go_on() {
        let answer = |stage, v: Value| decode_answer(stage, &v).map(|a| a.additional_context);
        let ctx = Some("c".to_string());
        for action in ["continue", "modify", "ask", ""] {
            let v = json!({"action": action, "additional_context": "c"});
            assert_eq!(answer(Stage::BeforeTool, v), Ok(ctx.clone()), "{action}");
        }
        let v = json!({"action": "modify", "additional_context": "c"});
        assert_eq!(answer(Stage::AfterTool, v), Ok(ctx.clone()));
        let v = json!({"action": "deny_tool", "additional_context": "c"});
        assert_eq!(answer(Stage::BeforeTool, v), Ok(None));
        let v = json!({"action": "abort_turn", "additional_context": "c"});
        assert_eq!(answer(Stage::AfterTool, v), Ok(None));
        let e = decode_answer(Stage::BeforeTool, &json!({"additional_context": 5})).unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
    }
}
