//! What a handler answers, one type per kind of stage.
//!
//! The protocol lets `respond` and `deny_tool` appear only at before_tool,
//! and approve_tool answers `{approved, reason?}` instead of an action. The
//! host rejects anything else as a hook failure, so these types make the
//! illegal answers impossible to write: [`Verdict`] (before_llm, after_llm,
//! after_tool) has no `Respond` or `Deny`, [`ToolVerdict`] (before_tool) has
//! them, and [`Approval`] is a yes/no.
//!
//! At the lifecycle stage what is legal depends on the event, which is only
//! known at run time, so [`LifecycleVerdict`] can hold any combination and is
//! checked against the event before it is sent: an illegal one becomes an
//! error reply that names the field, never an answer the host rejects.

use hookhost_protocol::action::{
    Action, AfterLlmResult, AfterToolResult, ApproveToolResult, BeforeLlmResult, BeforeToolResult,
    Decision, LifecycleAction, LifecycleResult, ResultError, check_lifecycle_decision,
};
use hookhost_protocol::lifecycle::LifecycleEvent;
use hookhost_protocol::params::ToolResult;
use serde_json::{Map, Value};

/// A JSON Merge Patch (RFC 7386) over a stage's params: the payload of
/// `modify`.
///
/// A patch is always a JSON object, which is why this is a type of its own
/// and not a bare [`Value`]: a non-object patch would be a malformed result.
/// Name only what changes; the host keeps every field the patch does not
/// mention, and a `null` deletes one.
///
/// ```
/// use hookhost_sdk::Patch;
///
/// let patch = Patch::new().set(&["arguments", "command"], "ls -h").delete(&["arguments", "cwd"]);
/// assert_eq!(
///     serde_json::Value::Object(patch.into_map()),
///     serde_json::json!({"arguments": {"command": "ls -h", "cwd": null}})
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patch(Map<String, Value>);

impl Patch {
    /// An empty patch (`modify` with it changes nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the member at `path` (a list of object keys, outermost first)
    /// to `value`, creating the objects on the way. Keys are given one by
    /// one rather than as a dotted string because params keys may contain
    /// dots. An empty path leaves the patch unchanged.
    pub fn set(mut self, path: &[&str], value: impl Into<Value>) -> Self {
        let Some((last, parents)) = path.split_last() else {
            return self;
        };
        let mut node = &mut self.0;
        for key in parents {
            let slot = node
                .entry((*key).to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            let Value::Object(next) = slot else {
                return self;
            };
            node = next;
        }
        node.insert((*last).to_string(), value.into());
        self
    }

    /// Deletes the member at `path` (sets it to `null`, which a merge patch
    /// reads as "remove").
    pub fn delete(self, path: &[&str]) -> Self {
        self.set(path, Value::Null)
    }

    /// Whether the patch names nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The patch as a JSON object.
    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

impl From<Map<String, Value>> for Patch {
    fn from(map: Map<String, Value>) -> Self {
        Patch(map)
    }
}

impl TryFrom<Value> for Patch {
    type Error = Value;

    /// An object becomes a patch; anything else is handed back, since it
    /// cannot be one.
    fn try_from(value: Value) -> Result<Self, Value> {
        match value {
            Value::Object(map) => Ok(Patch(map)),
            other => Err(other),
        }
    }
}

/// The answer at before_llm, after_llm and after_tool: let the params pass,
/// rewrite them, or abort.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Verdict {
    /// Go on unchanged (also what every default handler answers).
    #[default]
    Continue,
    /// Apply this merge patch to the params and go on.
    Modify(Patch),
    /// End the current turn.
    Abort {
        /// Why; the host supplies a default naming the hook when absent.
        reason: Option<String>,
    },
    /// Stop the whole agent loop.
    HardAbort {
        /// Why; the host supplies a default naming the hook when absent.
        reason: Option<String>,
    },
    /// Another verdict with text for the model's context (after_tool only;
    /// the host keeps it with continue and modify). Built with
    /// [`Verdict::with_context`].
    WithContext {
        /// The verdict itself.
        verdict: Box<Verdict>,
        /// The text (`additional_context`).
        text: String,
    },
}

impl Verdict {
    /// Adds `text` for the model's context (`additional_context`), e.g.
    /// `Verdict::Continue.with_context("the test suite takes 2 minutes")`.
    /// At after_tool the host keeps it with continue and modify; the other
    /// stages take no context, and an abort drops it. Called twice, the
    /// texts are joined with a newline.
    pub fn with_context(self, text: impl Into<String>) -> Self {
        Verdict::WithContext {
            verdict: Box::new(self),
            text: text.into(),
        }
    }

    /// Rewrite the params with `patch` (see [`Patch`]).
    pub fn modify(patch: impl Into<Patch>) -> Self {
        Verdict::Modify(patch.into())
    }

    /// End the current turn, saying why.
    pub fn abort(reason: impl Into<String>) -> Self {
        Verdict::Abort {
            reason: Some(reason.into()),
        }
    }

    /// Stop the whole agent loop, saying why.
    pub fn hard_abort(reason: impl Into<String>) -> Self {
        Verdict::HardAbort {
            reason: Some(reason.into()),
        }
    }

    /// The action, reason and patch, in the order the wire results take
    /// them, and the context text.
    fn parts(self) -> (Parts, Option<String>) {
        match self {
            Verdict::Continue => ((Some(Action::Continue), None, None), None),
            Verdict::Modify(p) => ((Some(Action::Modify), None, Some(p.into_map())), None),
            Verdict::Abort { reason } => ((Some(Action::AbortTurn), reason, None), None),
            Verdict::HardAbort { reason } => ((Some(Action::HardAbort), reason, None), None),
            Verdict::WithContext { verdict, text } => {
                let (parts, inner) = verdict.parts();
                (parts, Some(join_context(inner, text)))
            }
        }
    }

    /// The wire result at before_llm (patch under `request`).
    pub fn into_before_llm(self) -> BeforeLlmResult {
        let ((action, reason, request), _) = self.parts();
        BeforeLlmResult {
            action,
            reason,
            request,
        }
    }

    /// The wire result at after_llm (patch under `response`).
    pub fn into_after_llm(self) -> AfterLlmResult {
        let ((action, reason, response), _) = self.parts();
        AfterLlmResult {
            action,
            reason,
            response,
        }
    }

    /// The wire result at after_tool (patch under `result`), with its
    /// `additional_context`.
    pub fn into_after_tool(self) -> AfterToolResult {
        let ((action, reason, result), additional_context) = self.parts();
        AfterToolResult {
            action,
            reason,
            result,
            additional_context,
        }
    }
}

/// A wire result's action, reason and patch.
type Parts = (Option<Action>, Option<String>, Option<Map<String, Value>>);

/// An earlier context text and a later one, joined with a newline.
fn join_context(earlier: Option<String>, later: String) -> String {
    match earlier {
        Some(e) => format!("{e}\n{later}"),
        None => later,
    }
}

/// The answer at before_tool: everything a [`Verdict`] can say, plus
/// answering in the tool's place and refusing the call.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum ToolVerdict {
    /// Run the tool as called.
    #[default]
    Continue,
    /// Apply this merge patch to the call and go on.
    Modify(Patch),
    /// Do not run the tool; the agent uses this result instead.
    Respond(ToolResult),
    /// Do not run the tool; the reason reaches the model.
    Deny {
        /// Why; the host supplies a default naming the hook when absent.
        reason: Option<String>,
    },
    /// Let the user decide whether the tool runs; the reason is shown to
    /// them. The chain goes on: a later hook's deny still wins.
    Ask {
        /// Why; the host supplies a default naming the hook when absent.
        reason: Option<String>,
    },
    /// End the current turn.
    Abort {
        /// Why.
        reason: Option<String>,
    },
    /// Stop the whole agent loop.
    HardAbort {
        /// Why.
        reason: Option<String>,
    },
    /// Another verdict with text for the model's context; built with
    /// [`ToolVerdict::with_context`].
    WithContext {
        /// The verdict itself.
        verdict: Box<ToolVerdict>,
        /// The text (`additional_context`).
        text: String,
    },
}

impl ToolVerdict {
    /// Rewrite the call with `patch`, e.g. `Patch::new().set(&["arguments", "command"], "ls -h")`.
    pub fn modify(patch: impl Into<Patch>) -> Self {
        ToolVerdict::Modify(patch.into())
    }

    /// Answer for the tool: it does not run, and `result` is what it "produced".
    pub fn respond(result: ToolResult) -> Self {
        ToolVerdict::Respond(result)
    }

    /// Refuse the call; `reason` is what the model is told.
    pub fn deny(reason: impl Into<String>) -> Self {
        ToolVerdict::Deny {
            reason: Some(reason.into()),
        }
    }

    /// Ask the user whether the tool may run; `reason` is shown to them.
    /// Not a refusal: the agent runs the call if the user says yes.
    pub fn ask(reason: impl Into<String>) -> Self {
        ToolVerdict::Ask {
            reason: Some(reason.into()),
        }
    }

    /// Adds `text` for the model's context (`additional_context`), e.g.
    /// `ToolVerdict::Continue.with_context("/tmp is cleared at boot")`. The
    /// host keeps it with continue, modify and ask, and drops it when the
    /// verdict stops the chain. Called twice, the texts are joined with a
    /// newline.
    pub fn with_context(self, text: impl Into<String>) -> Self {
        ToolVerdict::WithContext {
            verdict: Box::new(self),
            text: text.into(),
        }
    }

    /// End the current turn, saying why.
    pub fn abort(reason: impl Into<String>) -> Self {
        ToolVerdict::Abort {
            reason: Some(reason.into()),
        }
    }

    /// Stop the whole agent loop, saying why.
    pub fn hard_abort(reason: impl Into<String>) -> Self {
        ToolVerdict::HardAbort {
            reason: Some(reason.into()),
        }
    }

    /// The wire result (patch under `call`, tool result under `result`).
    pub fn into_result(self) -> BeforeToolResult {
        let mut out = BeforeToolResult::default();
        match self {
            ToolVerdict::Continue => out.action = Some(Action::Continue),
            ToolVerdict::Modify(p) => {
                out.action = Some(Action::Modify);
                out.call = Some(p.into_map());
            }
            ToolVerdict::Respond(r) => {
                out.action = Some(Action::Respond);
                out.result = Some(r);
            }
            ToolVerdict::Deny { reason } => {
                out.action = Some(Action::DenyTool);
                out.reason = reason;
            }
            ToolVerdict::Ask { reason } => {
                out.action = Some(Action::Ask);
                out.reason = reason;
            }
            ToolVerdict::WithContext { verdict, text } => {
                out = verdict.into_result();
                out.additional_context = Some(join_context(out.additional_context, text));
            }
            ToolVerdict::Abort { reason } => {
                out.action = Some(Action::AbortTurn);
                out.reason = reason;
            }
            ToolVerdict::HardAbort { reason } => {
                out.action = Some(Action::HardAbort);
                out.reason = reason;
            }
        }
        out
    }
}

impl From<Verdict> for ToolVerdict {
    /// Every [`Verdict`] is also legal at before_tool, so shared logic can
    /// answer one and convert.
    fn from(v: Verdict) -> Self {
        match v {
            Verdict::Continue => ToolVerdict::Continue,
            Verdict::Modify(p) => ToolVerdict::Modify(p),
            Verdict::Abort { reason } => ToolVerdict::Abort { reason },
            Verdict::HardAbort { reason } => ToolVerdict::HardAbort { reason },
            Verdict::WithContext { verdict, text } => ToolVerdict::WithContext {
                verdict: Box::new(ToolVerdict::from(*verdict)),
                text,
            },
        }
    }
}

/// The answer at approve_tool: yes, no, or no decision (the default), in
/// which case the agent decides as it would with no hook, usually by asking
/// the user. A hook approves only by saying so.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Approval {
    /// No decision: `{"action": "continue"}` (the default answer).
    #[default]
    Abstain,
    /// The tool may run.
    Approve,
    /// The tool may not run.
    Refuse {
        /// Why; reaches the model. The host supplies a default when absent.
        reason: Option<String>,
    },
}

impl Approval {
    /// Let the tool run.
    pub fn approve() -> Self {
        Approval::Approve
    }

    /// Leave the decision to the agent (and so to the user).
    pub fn abstain() -> Self {
        Approval::Abstain
    }

    /// Refuse the tool, saying why.
    pub fn refuse(reason: impl Into<String>) -> Self {
        Approval::Refuse {
            reason: Some(reason.into()),
        }
    }

    /// The wire result: `{approved, reason?}`, or `{"action": "continue"}`
    /// for no decision.
    pub fn into_result(self) -> ApproveToolResult {
        match self {
            Approval::Abstain => ApproveToolResult {
                action: Some(Action::Continue),
                ..ApproveToolResult::default()
            },
            Approval::Approve => ApproveToolResult {
                approved: Some(true),
                ..ApproveToolResult::default()
            },
            Approval::Refuse { reason } => ApproveToolResult {
                approved: Some(false),
                reason,
                ..ApproveToolResult::default()
            },
        }
    }
}

/// The answer at a lifecycle event: go on, or block it, and optionally add
/// context for the model, a message for the user, or the compaction summary.
///
/// Start from one constructor and add the rest with the `with_*` methods:
///
/// ```
/// use hookhost_sdk::{LifecycleEvent, LifecycleVerdict};
///
/// let v = LifecycleVerdict::context("The repo uses tabs.").with_system_message("rules loaded");
/// assert!(v.clone().into_result(LifecycleEvent::SessionStart).is_ok());
/// // turn_start takes context, but no summary:
/// assert!(v.with_summary("s").into_result(LifecycleEvent::TurnStart).is_err());
/// ```
///
/// Which event allows what is in [`LifecycleEvent::can_block`],
/// [`LifecycleEvent::takes_context`] and [`LifecycleEvent::takes_summary`];
/// `system_message` is allowed at every request event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LifecycleVerdict {
    /// `Some` when blocking, with the reason if one was given.
    block: Option<Option<String>>,
    additional_context: Option<String>,
    system_message: Option<String>,
    summary: Option<String>,
}

impl LifecycleVerdict {
    /// Let the event go on, adding nothing (also the default handler's answer).
    pub fn continue_() -> Self {
        Self::default()
    }

    /// Block the event (only where it can be blocked), saying why. At stop
    /// and subagent_stop a block means "keep going" and `reason` is the
    /// agent's next instruction: look at the payload's `stop_hook_active`
    /// (the previous stop was blocked) before blocking again; the host
    /// overrides a block after `stop_block_limit` in a row.
    pub fn block(reason: impl Into<String>) -> Self {
        Self::default().with_block(reason)
    }

    /// Go on, adding `text` to the model's context.
    pub fn context(text: impl Into<String>) -> Self {
        Self::default().with_context(text)
    }

    /// Go on, showing `text` to the user.
    pub fn system_message(text: impl Into<String>) -> Self {
        Self::default().with_system_message(text)
    }

    /// Go on, with `text` as the compaction summary (before_compaction).
    pub fn summary(text: impl Into<String>) -> Self {
        Self::default().with_summary(text)
    }

    /// Also block the event, saying why.
    pub fn with_block(mut self, reason: impl Into<String>) -> Self {
        self.block = Some(Some(reason.into()));
        self
    }

    /// Also add `text` to the model's context.
    pub fn with_context(mut self, text: impl Into<String>) -> Self {
        self.additional_context = Some(text.into());
        self
    }

    /// Also show `text` to the user.
    pub fn with_system_message(mut self, text: impl Into<String>) -> Self {
        self.system_message = Some(text.into());
        self
    }

    /// Also supply the compaction summary.
    pub fn with_summary(mut self, text: impl Into<String>) -> Self {
        self.summary = Some(text.into());
        self
    }

    /// Whether this verdict blocks the event.
    pub fn is_block(&self) -> bool {
        self.block.is_some()
    }

    /// The verdict as the protocol's decision, unchecked.
    pub fn to_decision(&self) -> Decision {
        Decision::Lifecycle {
            block: self.block.is_some(),
            reason: self.block.clone().flatten(),
            additional_context: self.additional_context.clone(),
            system_message: self.system_message.clone(),
            summary: self.summary.clone(),
        }
    }

    /// The wire result for `event`, checked first with the host's own rules
    /// so that an answer the event forbids fails here, naming the field.
    ///
    /// # Errors
    ///
    /// `block`, `additional_context` or `summary` where `event` does not
    /// allow it, or an event that is not a request event.
    pub fn into_result(self, event: LifecycleEvent) -> Result<LifecycleResult, ResultError> {
        check_lifecycle_decision(event, &self.to_decision())?;
        let (action, reason) = match self.block {
            Some(reason) => (LifecycleAction::Block, reason),
            None => (LifecycleAction::Continue, None),
        };
        Ok(LifecycleResult {
            action: Some(action),
            reason,
            additional_context: self.additional_context,
            system_message: self.system_message,
            summary: self.summary,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lifecycle_verdicts_combine_and_are_checked_against_the_event() {
        use LifecycleEvent::*;
        let ok = |v: LifecycleVerdict, e| wire(v.into_result(e).expect("legal here"));
        assert_eq!(
            ok(LifecycleVerdict::continue_(), TurnStart),
            json!({"action": "continue"})
        );
        assert_eq!(
            ok(
                LifecycleVerdict::block("secret").with_system_message("m"),
                UserPromptSubmit
            ),
            json!({"action": "block", "reason": "secret", "system_message": "m"})
        );
        assert_eq!(
            ok(
                LifecycleVerdict::summary("s").with_block("later"),
                BeforeCompaction
            ),
            json!({"action": "block", "reason": "later", "summary": "s"})
        );
        assert_eq!(
            ok(LifecycleVerdict::context("c"), SessionStart),
            json!({"action": "continue", "additional_context": "c"})
        );
        let err = |v: LifecycleVerdict, e| v.into_result(e).unwrap_err().to_string();
        assert!(
            err(LifecycleVerdict::block("no"), TurnStart).contains("`block` is not allowed"),
            "block at turn_start"
        );
        assert_eq!(
            err(LifecycleVerdict::context("c"), Stop),
            "field `additional_context` is not allowed at lifecycle event `stop`"
        );
        assert_eq!(
            ok(LifecycleVerdict::context("keep the plan"), PreCompact),
            json!({"action": "continue", "additional_context": "keep the plan"})
        );
        assert_eq!(
            ok(LifecycleVerdict::block("run the tests first"), Stop),
            json!({"action": "block", "reason": "run the tests first"})
        );
        assert_eq!(
            err(LifecycleVerdict::summary("s"), SessionStart),
            "field `summary` is not allowed at lifecycle event `session_start`"
        );
        assert!(err(LifecycleVerdict::continue_(), SessionEnd).contains("not a request event"));
        assert!(LifecycleVerdict::block("x").is_block());
        assert!(!LifecycleVerdict::system_message("x").is_block());
    }

    fn wire<T: serde::Serialize>(t: T) -> Value {
        serde_json::to_value(t).unwrap()
    }

    #[test]
    fn verdicts_put_the_patch_under_the_stage_key() {
        let p = || Patch::new().set(&["options", "temperature"], 0);
        assert_eq!(
            wire(Verdict::modify(p()).into_before_llm()),
            json!({"action": "modify", "request": {"options": {"temperature": 0}}})
        );
        assert_eq!(
            wire(Verdict::modify(p()).into_after_llm()),
            json!({"action": "modify", "response": {"options": {"temperature": 0}}})
        );
        assert_eq!(
            wire(Verdict::modify(p()).into_after_tool()),
            json!({"action": "modify", "result": {"options": {"temperature": 0}}})
        );
        assert_eq!(
            wire(ToolVerdict::modify(p()).into_result()),
            json!({"action": "modify", "call": {"options": {"temperature": 0}}})
        );
    }

    #[test]
    fn every_constructor_has_its_wire_shape() {
        assert_eq!(
            wire(Verdict::Continue.into_after_tool()),
            json!({"action": "continue"})
        );
        assert_eq!(
            wire(Verdict::abort("no").into_before_llm()),
            json!({"action": "abort_turn", "reason": "no"})
        );
        assert_eq!(
            wire(Verdict::hard_abort("stop").into_after_llm()),
            json!({"action": "hard_abort", "reason": "stop"})
        );
        assert_eq!(
            wire(ToolVerdict::deny("bad").into_result()),
            json!({"action": "deny_tool", "reason": "bad"})
        );
        assert_eq!(
            wire(ToolVerdict::respond(ToolResult::text("hi")).into_result()),
            json!({"action": "respond", "result": {"for_llm": "hi"}})
        );
        assert_eq!(
            wire(Approval::approve().into_result()),
            json!({"approved": true})
        );
        assert_eq!(
            wire(Approval::refuse("nope").into_result()),
            json!({"approved": false, "reason": "nope"})
        );
    }

    #[test]
    fn patch_set_replaces_a_non_object_on_the_way() {
        let p = Patch::from(json!({"a": 1}).as_object().cloned().unwrap()).set(&["a", "b"], true);
        assert_eq!(Value::Object(p.into_map()), json!({"a": {"b": true}}));
        assert!(Patch::try_from(json!([1])).is_err());
        assert!(Patch::new().set(&[], 1).is_empty());
    }

    #[test]
    fn ask_and_context_have_their_wire_shape() {
        assert_eq!(
            wire(ToolVerdict::ask("deletes files").into_result()),
            json!({"action": "ask", "reason": "deletes files"})
        );
        let patch = Patch::new().set(&["arguments", "command"], "ls -h");
        assert_eq!(
            wire(
                ToolVerdict::modify(patch)
                    .with_context("one")
                    .with_context("two")
                    .into_result()
            ),
            json!({"action": "modify", "call": {"arguments": {"command": "ls -h"}},
                "additional_context": "one\ntwo"})
        );
        assert_eq!(
            wire(ToolVerdict::ask("r").with_context("c").into_result()),
            json!({"action": "ask", "reason": "r", "additional_context": "c"})
        );
        assert_eq!(
            wire(Verdict::Continue.with_context("c").into_after_tool()),
            json!({"action": "continue", "additional_context": "c"})
        );
        assert_eq!(
            wire(ToolVerdict::from(Verdict::Continue.with_context("c")).into_result()),
            json!({"action": "continue", "additional_context": "c"})
        );
        // The other stages take no context: it is left off their wire result.
        assert_eq!(
            wire(Verdict::Continue.with_context("c").into_before_llm()),
            json!({"action": "continue"})
        );
    }
}
