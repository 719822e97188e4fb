//! Chain semantics: how the answers of several hooks, called in order,
//! become one verdict for a stage.
//!
//! This is the pure part of the host, with no I/O, so the same fold runs in
//! the host, in the spec's test vectors and in anything else that wants to
//! predict what the host will decide. The driver calls [`Chain::params`]
//! for what to send the next hook, feeds its answer to [`Chain::step`], and
//! stops when told to.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::action::{
    Answer, Decision, check_lifecycle_decision, decode_answer, decode_lifecycle_result,
};
use crate::lifecycle::LifecycleEvent;
use crate::merge_patch::apply_merge_patch;
use crate::params::{
    AfterLlmParams, AfterToolParams, BeforeLlmParams, LifecycleParams, ToolCall, ToolResult,
};
use crate::stage::Stage;

/// What a hook's failure (crash, timeout, error reply, protocol violation)
/// decides. Chosen per hook, because a security gate must fail closed while
/// a logger must not take the agent down with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// Closed: a failure either fails open or fails closed.
#[allow(clippy::exhaustive_enums)]
pub enum OnError {
    /// Skip the hook; the chain goes on as if it had answered `continue`.
    Allow,
    /// Stop the chain with a refusal: deny_tool at before_tool, a refusal
    /// at approve_tool, a block at a lifecycle event that can be blocked
    /// (at one that cannot, the failure is skipped as under `Allow`),
    /// abort_turn at the other stages.
    Deny,
}

impl OnError {
    /// The default for a stage: deny for approve_tool (an approver that
    /// cannot answer has not approved), allow elsewhere, lifecycle included
    /// (a context provider that is down must not stop a session).
    pub fn default_for(stage: Stage) -> OnError {
        match stage {
            Stage::ApproveTool => OnError::Deny,
            Stage::BeforeLlm
            | Stage::AfterLlm
            | Stage::BeforeTool
            | Stage::AfterTool
            | Stage::Lifecycle => OnError::Allow,
        }
    }

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Allow => "allow",
            OnError::Deny => "deny",
        }
    }
}

impl fmt::Display for OnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the driver should call the next hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Closed: continue or stop, by definition.
#[allow(clippy::exhaustive_enums)]
pub enum Flow {
    /// Call the next hook with [`Chain::params`].
    Next,
    /// The verdict is final; call no more hooks.
    Stop,
}

/// What became of one hook's answer, for traces and audits.
#[derive(Debug, Clone, PartialEq)]
// Closed: a hook either answered or failed.
#[allow(clippy::exhaustive_enums)]
pub enum StepOutcome {
    /// The hook's decision was applied.
    Applied(Decision),
    /// The hook failed; its policy decided.
    Failed {
        /// What went wrong.
        error: String,
        /// The policy that was applied.
        policy: OnError,
    },
}

/// One hook's part in a chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The hook's name.
    pub hook: String,
    /// What happened.
    pub outcome: StepOutcome,
}

/// The merged verdict of a whole chain.
#[derive(Debug, Clone, PartialEq)]
// Closed: one verdict per kind of final action; a new one comes with a protocol version bump, and every agent adapter must then handle it.
#[allow(clippy::exhaustive_enums)]
pub enum Outcome {
    /// Go on with these params (changed by patches when `modified`). At
    /// approve_tool it means that no hook decided: the agent decides as it
    /// would with no hook (its own rules, or asking the user). It is never
    /// an approval.
    Continue {
        /// The params after every patch.
        params: Value,
        /// Whether any hook changed them.
        modified: bool,
        /// before_tool and after_tool: `additional_context` texts with the
        /// hook that sent each, in chain order.
        contexts: Vec<(String, String)>,
    },
    /// before_tool: a hook asked for the user's decision and no later hook
    /// denied, answered or aborted; the agent asks the user whether to run
    /// this call (its params after every patch, the later hooks' too).
    Ask {
        /// The params after every patch.
        params: Value,
        /// Why, from the first hook that asked; shown to the user.
        reason: String,
        /// The first hook that asked.
        by: String,
        /// `additional_context` texts with the hook that sent each, in
        /// chain order.
        contexts: Vec<(String, String)>,
    },
    /// A hook approved explicitly and none refused: at before_tool a hook
    /// answered `allow` and none asked, denied, answered or aborted, so the
    /// agent may run the call (its params after every patch) without asking
    /// the user; at approve_tool an approver approved and none refused.
    Allow {
        /// The params after every patch.
        params: Value,
        /// Whether any hook changed them.
        modified: bool,
        /// Why, from the first hook that allowed, when it said.
        reason: Option<String>,
        /// The first hook that allowed.
        by: String,
        /// `additional_context` texts with the hook that sent each, in
        /// chain order.
        contexts: Vec<(String, String)>,
    },
    /// before_tool: use this result instead of running the tool.
    Respond {
        /// The result.
        result: ToolResult,
        /// The hook that answered.
        by: String,
    },
    /// before_tool: do not run the tool.
    DenyTool {
        /// Why; reaches the model.
        reason: String,
        /// The hook that denied (or failed with `on_error = "deny"`).
        by: String,
    },
    /// End the turn or the agent loop.
    Abort {
        /// `hard_abort` rather than `abort_turn`.
        hard: bool,
        /// Why.
        reason: String,
        /// The hook that aborted.
        by: String,
    },
    /// approve_tool: refused.
    Refused {
        /// Why; the first refusal in chain order.
        reason: String,
        /// The hook that refused.
        by: String,
    },
    /// lifecycle: the event is blocked (a hook answered `block`, or failed
    /// with `on_error = "deny"` at an event that can be blocked).
    Blocked {
        /// Why; shown to the user.
        reason: String,
        /// The hook that blocked.
        by: String,
    },
    /// lifecycle: every hook ran and none blocked; what they added.
    Lifecycle {
        /// `additional_context` texts with the hook that sent each, in
        /// chain order.
        contexts: Vec<(String, String)>,
        /// `system_message` texts, in chain order.
        system_messages: Vec<String>,
        /// The first `summary` in chain order.
        summary: Option<String>,
    },
}

/// Params that do not have their stage's shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {stage} params: {detail}")]
pub struct ParamsError {
    /// The stage.
    pub stage: Stage,
    /// The decoder's message, naming the field.
    pub detail: String,
}

/// Checks that `params` decodes as the stage's params type. At lifecycle
/// the event must also be a request event: the others are runtime events
/// and never run a chain.
pub fn validate_params(stage: Stage, params: &Value) -> Result<(), ParamsError> {
    lifecycle_event(stage, params).map(drop)
}

/// [`validate_params`], giving the lifecycle event at that stage. The
/// params are checked in place ([`crate::shape`]); only params that do not
/// fit are decoded, for the decoder's message naming the field.
fn lifecycle_event(stage: Stage, params: &Value) -> Result<Option<LifecycleEvent>, ParamsError> {
    if !crate::shape::fits(stage, params) {
        return Err(ParamsError {
            stage,
            detail: decode_error(stage, params),
        });
    }
    let Stage::Lifecycle = stage else {
        return Ok(None);
    };
    let event = params
        .get("event")
        .and_then(Value::as_str)
        .and_then(|name| name.parse::<LifecycleEvent>().ok());
    match event {
        Some(event) if event.is_request() => Ok(Some(event)),
        Some(event) => Err(ParamsError {
            stage,
            detail: format!(
                "event `{event}` is not a request event; it reaches hooks as the runtime event `{}`",
                event.event_kind()
            ),
        }),
        None => Err(ParamsError {
            stage,
            detail: decode_error(stage, params),
        }),
    }
}

/// Why `params` do not decode as `stage`'s typed params, in serde's words.
fn decode_error(stage: Stage, params: &Value) -> String {
    let res = match stage {
        Stage::BeforeLlm => BeforeLlmParams::deserialize(params).map(drop),
        Stage::AfterLlm => AfterLlmParams::deserialize(params).map(drop),
        Stage::BeforeTool | Stage::ApproveTool => ToolCall::deserialize(params).map(drop),
        Stage::AfterTool => AfterToolParams::deserialize(params).map(drop),
        Stage::Lifecycle => LifecycleParams::deserialize(params).map(drop),
    };
    match res {
        Err(e) => e.to_string(),
        Ok(()) => format!("they do not have the shape of {stage} params"),
    }
}

/// Fills in the members the spec says the host always sends (sections 5.2
/// to 5.5) when the caller or a patch left them out or null: `arguments`
/// (`{}`) at the tool stages, `messages` (`[]`) at before_llm and
/// `response.content` (`""`) at after_llm. Every entry point (embedding,
/// `hookhost call`, `replay`, `serve`) goes through the chain, so a hook
/// never has to guess. Params that do not have the stage's shape are left
/// as they are.
fn fill_always_sent(stage: Stage, params: &mut Value) {
    let (object, key, empty) = match stage {
        Stage::BeforeTool | Stage::ApproveTool | Stage::AfterTool => {
            (params.as_object_mut(), "arguments", json!({}))
        }
        Stage::BeforeLlm => (params.as_object_mut(), "messages", json!([])),
        Stage::AfterLlm => (
            params.get_mut("response").and_then(Value::as_object_mut),
            "content",
            json!(""),
        ),
        Stage::Lifecycle => return,
    };
    if let Some(object) = object {
        let slot = object.entry(key).or_insert(Value::Null);
        if slot.is_null() {
            *slot = empty;
        }
    }
}

/// The fold over one stage's hooks.
#[derive(Debug, Clone)]
pub struct Chain {
    stage: Stage,
    params: Value,
    /// The caller's params, kept from the first patch on, so that patches
    /// which cancel out report `continue`.
    original: Option<Value>,
    steps: Vec<Step>,
    outcome: Option<Outcome>,
    /// At lifecycle: the event, read from the params once, since every
    /// answer is checked against it.
    event: Option<LifecycleEvent>,
    /// What the hooks added so far (contexts at every stage that takes
    /// them; the rest at lifecycle only).
    collected: Collected,
    /// before_tool: the first hook that answered `ask`, and its reason.
    asked: Option<(String, String)>,
    /// before_tool and approve_tool: the first hook that allowed (`allow`,
    /// `approved: true`), and its reason.
    allowed: Option<(String, Option<String>)>,
}

/// What hooks added, in chain order.
#[derive(Debug, Clone, Default)]
struct Collected {
    contexts: Vec<(String, String)>,
    system_messages: Vec<String>,
    summary: Option<String>,
}

impl Collected {
    /// Adds what one lifecycle answer that did not block brought.
    fn add(
        &mut self,
        by: String,
        context: &Option<String>,
        system_message: &Option<String>,
        summary: &Option<String>,
    ) {
        if let Some(text) = context {
            self.contexts.push((by, text.clone()));
        }
        if let Some(text) = system_message {
            self.system_messages.push(text.clone());
        }
        if self.summary.is_none() {
            self.summary.clone_from(summary);
        }
    }
}

impl Chain {
    /// Starts a chain, checking the caller's params first. At lifecycle the
    /// params name the event, which decides what the hooks may answer.
    pub fn new(stage: Stage, mut params: Value) -> Result<Chain, ParamsError> {
        let event = lifecycle_event(stage, &params)?;
        fill_always_sent(stage, &mut params);
        Ok(Chain {
            stage,
            params,
            original: None,
            steps: Vec::new(),
            outcome: None,
            event,
            collected: Collected::default(),
            asked: None,
            allowed: None,
        })
    }

    /// The stage this chain runs.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The lifecycle event this chain runs (`None` at the other stages).
    pub fn event(&self) -> Option<LifecycleEvent> {
        self.event
    }

    /// What to send the next hook: the caller's params with every earlier
    /// hook's patch applied.
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// Each hook's part so far, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Whether a hook already decided the outcome.
    pub fn is_done(&self) -> bool {
        self.outcome.is_some()
    }

    /// Feeds one hook's reply: its raw JSON-RPC `result`, or a description
    /// of how it failed (error reply, timeout, crash, ...).
    pub fn step(&mut self, hook: &str, on_error: OnError, reply: Result<&Value, String>) -> Flow {
        if self.outcome.is_some() {
            return Flow::Stop;
        }
        let answer = match reply {
            Err(error) => return self.fail(hook, on_error, error),
            Ok(result) => {
                let decoded = match self.event {
                    Some(event) => decode_lifecycle_result(event, result).map(|decision| Answer {
                        decision,
                        additional_context: None,
                    }),
                    None => decode_answer(self.stage, result),
                };
                match decoded {
                    Ok(a) => a,
                    Err(e) => return self.fail(hook, on_error, e.to_string()),
                }
            }
        };
        self.apply_answer(hook, on_error, answer)
    }

    /// Feeds an already decoded decision (from an in-process hook). At
    /// lifecycle it is checked against the event first, as a hook's result
    /// would be; a lifecycle decision, or an action the stage does not
    /// allow, at another stage is a failure too.
    pub fn apply(&mut self, hook: &str, on_error: OnError, decision: Decision) -> Flow {
        let answer = Answer {
            decision,
            additional_context: None,
        };
        self.apply_answer(hook, on_error, answer)
    }

    /// [`Chain::apply`] with the answer's `additional_context`, which is
    /// kept (with the hook's name, in chain order) when the decision lets
    /// the chain go on.
    pub fn apply_answer(&mut self, hook: &str, on_error: OnError, answer: Answer) -> Flow {
        if self.outcome.is_some() {
            return Flow::Stop;
        }
        let Answer {
            decision,
            additional_context,
        } = answer;
        if let Err(error) = self.check(&decision) {
            return self.fail(hook, on_error, error);
        }
        let outcome = match self.fold(hook, &decision) {
            Ok(outcome) => outcome,
            Err(error) => return self.fail(hook, on_error, error),
        };
        if let (None, Some(text)) = (&outcome, additional_context) {
            self.collected.contexts.push((hook.to_string(), text));
        }
        self.steps.push(Step {
            hook: hook.to_string(),
            outcome: StepOutcome::Applied(decision),
        });
        match outcome {
            Some(o) => {
                self.outcome = Some(o);
                Flow::Stop
            }
            None => Flow::Next,
        }
    }

    /// Whether `decision` may be answered here: against the event at
    /// lifecycle, against the stage elsewhere.
    fn check(&self, decision: &Decision) -> Result<(), String> {
        if let Some(event) = self.event {
            return check_lifecycle_decision(event, decision).map_err(|e| e.to_string());
        }
        if matches!(decision, Decision::Lifecycle { .. }) {
            return Err(format!(
                "a lifecycle answer is not allowed at {}",
                self.stage
            ));
        }
        match decision.action() {
            Some(action) if !action.legal_at(self.stage) => Err(format!(
                "action `{action}` is not allowed at {}",
                self.stage
            )),
            _ => Ok(()),
        }
    }

    /// Folds one legal decision in: the outcome when it stops the chain,
    /// `None` when the chain goes on, or why the hook failed.
    fn fold(&mut self, hook: &str, decision: &Decision) -> Result<Option<Outcome>, String> {
        if let Some(outcome) = ending(hook, decision) {
            return Ok(Some(outcome));
        }
        let by = hook.to_string();
        match decision {
            Decision::Approval { reason, .. } => {
                self.allowed.get_or_insert((by, reason.clone()));
            }
            Decision::Allow { patch, reason } => {
                if let Some(patch) = patch {
                    self.patch(patch)?;
                }
                self.allowed.get_or_insert((by, reason.clone()));
            }
            Decision::Modify(patch) => self.patch(patch)?,
            Decision::Ask(reason) => {
                if self.asked.is_none() {
                    self.asked = Some((by, or_default(reason, "asked", hook)));
                }
            }
            Decision::Lifecycle {
                additional_context,
                system_message,
                summary,
                ..
            } => self
                .collected
                .add(by, additional_context, system_message, summary),
            Decision::Continue
            | Decision::Respond(_)
            | Decision::DenyTool(_)
            | Decision::Abort { .. } => {}
        }
        Ok(None)
    }

    /// Applies a `modify` patch, or says why it breaks the params.
    fn patch(&mut self, patch: &Map<String, Value>) -> Result<(), String> {
        let mut next = self.params.clone();
        apply_merge_patch(&mut next, &Value::Object(patch.clone()));
        // `meta` says where the call comes from (turn, iteration); a hook
        // that could rewrite it could reset what later guards count, such
        // as max_iterations.
        if next.get("meta") != self.params.get("meta") {
            return Err("its modify patch changes `meta`, which is read-only".to_string());
        }
        if let Err(e) = validate_params(self.stage, &next) {
            return Err(format!("its modify patch breaks the params: {}", e.detail));
        }
        fill_always_sent(self.stage, &mut next);
        if next != self.params {
            let previous = std::mem::replace(&mut self.params, next);
            self.original.get_or_insert(previous);
        }
        Ok(())
    }

    fn fail(&mut self, hook: &str, policy: OnError, error: String) -> Flow {
        // A lifecycle event that cannot be blocked goes on whatever the
        // policy: there is no refusal to give.
        let blockable = self.event.is_none_or(LifecycleEvent::can_block);
        let flow = match policy {
            OnError::Allow => Flow::Next,
            OnError::Deny if !blockable => Flow::Next,
            OnError::Deny => {
                let reason = format!("hook `{hook}` failed (on_error = deny): {error}");
                self.outcome = Some(Outcome::refusal(self.stage, reason, hook.to_string()));
                Flow::Stop
            }
        };
        self.steps.push(Step {
            hook: hook.to_string(),
            outcome: StepOutcome::Failed { error, policy },
        });
        flow
    }

    /// The merged verdict, once every hook ran or one stopped the chain.
    /// At lifecycle it is [`Outcome::Blocked`] or [`Outcome::Lifecycle`].
    pub fn finish(self) -> Outcome {
        if let Some(outcome) = self.outcome {
            return outcome;
        }
        if self.event.is_some() {
            let Collected {
                contexts,
                system_messages,
                summary,
            } = self.collected;
            return Outcome::Lifecycle {
                contexts,
                system_messages,
                summary,
            };
        }
        let contexts = self.collected.contexts;
        if let Some((by, reason)) = self.asked {
            return Outcome::Ask {
                params: self.params,
                reason,
                by,
                contexts,
            };
        }
        let modified = self.original.is_some_and(|o| o != self.params);
        if let Some((by, reason)) = self.allowed {
            return Outcome::Allow {
                params: self.params,
                modified,
                reason,
                by,
                contexts,
            };
        }
        Outcome::Continue {
            params: self.params,
            modified,
            contexts,
        }
    }
}

impl Outcome {
    /// What a refusal is at `stage`: deny_tool at before_tool, a refused
    /// approval, a block at lifecycle, abort_turn elsewhere. It is what a
    /// failure under `on_error = "deny"` gives, and what a host gives for
    /// a call it cannot ask any hook about.
    pub fn refusal(stage: Stage, reason: String, by: String) -> Outcome {
        match stage {
            Stage::BeforeTool => Outcome::DenyTool { reason, by },
            Stage::ApproveTool => Outcome::Refused { reason, by },
            Stage::Lifecycle => Outcome::Blocked { reason, by },
            Stage::BeforeLlm | Stage::AfterLlm | Stage::AfterTool => Outcome::Abort {
                hard: false,
                reason,
                by,
            },
        }
    }

    /// The verdict in the protocol's own result shape for `stage`, as one
    /// hook would have answered it: what `hookhost call` prints.
    pub fn to_wire(&self, stage: Stage) -> Value {
        match self {
            Outcome::Continue {
                params,
                modified,
                contexts,
            } => continue_wire(stage, params, *modified, contexts),
            Outcome::Ask {
                params,
                reason,
                contexts,
                ..
            } => {
                let mut obj = Map::new();
                obj.insert("action".into(), "ask".into());
                obj.insert("reason".into(), reason.clone().into());
                obj.insert("call".into(), params.clone());
                add_contexts(&mut obj, contexts);
                Value::Object(obj)
            }
            Outcome::Allow {
                params,
                modified,
                reason,
                contexts,
                ..
            } => allow_wire(stage, params, *modified, reason, contexts),
            Outcome::Respond { result, .. } => json!({"action": "respond", "result": result}),
            Outcome::DenyTool { reason, .. } => json!({"action": "deny_tool", "reason": reason}),
            Outcome::Abort { hard, reason, .. } => json!({
                "action": if *hard { "hard_abort" } else { "abort_turn" },
                "reason": reason,
            }),
            Outcome::Refused { reason, .. } => json!({"approved": false, "reason": reason}),
            Outcome::Blocked { reason, .. } => json!({"action": "block", "reason": reason}),
            Outcome::Lifecycle {
                contexts,
                system_messages,
                summary,
            } => {
                let mut obj = Map::new();
                obj.insert("action".into(), "continue".into());
                add_contexts(&mut obj, contexts);
                if !system_messages.is_empty() {
                    obj.insert("system_message".into(), system_messages.join("\n").into());
                }
                if let Some(summary) = summary {
                    obj.insert("summary".into(), summary.clone().into());
                }
                Value::Object(obj)
            }
        }
    }

    /// The hook that decided, when one did (every outcome that stopped the
    /// chain, and the first hook that asked; not continue, nor a lifecycle
    /// chain that ran to the end).
    pub fn decided_by(&self) -> Option<&str> {
        match self {
            Outcome::Continue { .. } | Outcome::Lifecycle { .. } => None,
            Outcome::Ask { by, .. }
            | Outcome::Allow { by, .. }
            | Outcome::Respond { by, .. }
            | Outcome::DenyTool { by, .. }
            | Outcome::Abort { by, .. }
            | Outcome::Refused { by, .. }
            | Outcome::Blocked { by, .. } => Some(by),
        }
    }
}

/// A continue verdict on the wire: `modify` with the whole params when a
/// hook changed them, and the contexts joined. At approve_tool it is the
/// abstention, `continue`: no hook decided.
fn continue_wire(
    stage: Stage,
    params: &Value,
    modified: bool,
    contexts: &[(String, String)],
) -> Value {
    let action = if modified && stage.payload_key().is_some() {
        "modify"
    } else {
        "continue"
    };
    with_call(action, stage, params, modified, contexts)
}

/// An allow verdict on the wire: `approved: true` at approve_tool; at
/// before_tool `allow` with its reason, the whole params when a hook
/// changed them, and the contexts joined.
fn allow_wire(
    stage: Stage,
    params: &Value,
    modified: bool,
    reason: &Option<String>,
    contexts: &[(String, String)],
) -> Value {
    let mut wire = match stage {
        Stage::ApproveTool => json!({"approved": true}),
        _ => with_call("allow", stage, params, modified, contexts),
    };
    if let (Some(reason), Some(obj)) = (reason, wire.as_object_mut()) {
        obj.insert("reason".into(), reason.clone().into());
    }
    wire
}

/// `{action}` with the stage's params under its payload key when a hook
/// changed them, and the contexts joined.
fn with_call(
    action: &str,
    stage: Stage,
    params: &Value,
    modified: bool,
    contexts: &[(String, String)],
) -> Value {
    let mut obj = Map::new();
    obj.insert("action".into(), action.into());
    if let (true, Some(key)) = (modified, stage.payload_key()) {
        obj.insert(key.into(), params.clone());
    }
    add_contexts(&mut obj, contexts);
    Value::Object(obj)
}

/// Adds `additional_context` (the texts joined with newlines, in chain
/// order) when any hook sent one.
fn add_contexts(obj: &mut Map<String, Value>, contexts: &[(String, String)]) {
    if !contexts.is_empty() {
        let texts: Vec<&str> = contexts.iter().map(|(_, t)| t.as_str()).collect();
        obj.insert("additional_context".into(), texts.join("\n").into());
    }
}

impl Answer {
    /// The canonical JSON form of the vectors: the decision's, plus
    /// `additional_context` when the answer kept one.
    pub fn to_value(&self) -> Value {
        let mut value = self.decision.to_value();
        if let (Some(text), Some(obj)) = (&self.additional_context, value.as_object_mut()) {
            obj.insert("additional_context".into(), text.clone().into());
        }
        value
    }
}

impl Decision {
    /// A canonical JSON form, used by the test vectors so that other
    /// implementations can compare decoded results without Rust types.
    pub fn to_value(&self) -> Value {
        match self {
            Decision::Continue => json!({"action": "continue"}),
            Decision::Modify(patch) => json!({"action": "modify", "patch": patch}),
            Decision::Respond(result) => json!({"action": "respond", "result": result}),
            Decision::DenyTool(reason) => json!({"action": "deny_tool", "reason": reason}),
            Decision::Ask(reason) => json!({"action": "ask", "reason": reason}),
            Decision::Allow { patch, reason } => {
                json!({"action": "allow", "patch": patch, "reason": reason})
            }
            Decision::Abort { hard, reason } => json!({
                "action": if *hard { "hard_abort" } else { "abort_turn" },
                "reason": reason,
            }),
            Decision::Approval { approved, reason } => {
                json!({"approved": approved, "reason": reason})
            }
            Decision::Lifecycle {
                block,
                reason,
                additional_context,
                system_message,
                summary,
            } => json!({
                "action": if *block { "block" } else { "continue" },
                "reason": reason,
                "additional_context": additional_context,
                "system_message": system_message,
                "summary": summary,
            }),
        }
    }
}

/// The outcome of a decision that ends the chain (a response, a deny, an
/// abort, a refusal, a lifecycle block), with its default reason; `None`
/// for one that lets the chain go on.
fn ending(hook: &str, decision: &Decision) -> Option<Outcome> {
    let by = hook.to_string();
    Some(match decision {
        Decision::Respond(result) => Outcome::Respond {
            result: result.clone(),
            by,
        },
        Decision::DenyTool(reason) => Outcome::DenyTool {
            reason: or_default(reason, "denied", hook),
            by,
        },
        Decision::Abort { hard, reason } => Outcome::Abort {
            hard: *hard,
            reason: or_default(reason, "aborted", hook),
            by,
        },
        Decision::Approval {
            approved: false,
            reason,
        } => Outcome::Refused {
            reason: or_default(reason, "refused", hook),
            by,
        },
        Decision::Lifecycle {
            block: true,
            reason,
            ..
        } => Outcome::Blocked {
            reason: or_default(reason, "blocked", hook),
            by,
        },
        Decision::Continue
        | Decision::Allow { .. }
        | Decision::Modify(_)
        | Decision::Ask(_)
        | Decision::Approval { approved: true, .. }
        | Decision::Lifecycle { block: false, .. } => return None,
    })
}

/// The hook's reason, or "`verb` by hook `hook`" when it gave none.
fn or_default(reason: &Option<String>, verb: &str, hook: &str) -> String {
    reason
        .clone()
        .unwrap_or_else(|| format!("{verb} by hook `{hook}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> Value {
        json!({"tool": "shell", "arguments": {"command": "ls"}})
    }

    #[test]
    fn patches_compose_across_hooks() {
        let mut c = Chain::new(Stage::BeforeTool, call()).expect("valid params");
        let a = json!({"action": "modify", "call": {"arguments": {"command": "ls -h"}}});
        let b = json!({"action": "modify", "call": {"arguments": {"cwd": "/tmp"}}});
        assert_eq!(c.step("a", OnError::Allow, Ok(&a)), Flow::Next);
        assert_eq!(c.params()["arguments"]["command"], "ls -h");
        assert_eq!(c.step("b", OnError::Allow, Ok(&b)), Flow::Next);
        assert_eq!(
            c.finish().to_wire(Stage::BeforeTool),
            json!({"action": "modify", "call": {"tool": "shell", "arguments": {"command": "ls -h", "cwd": "/tmp"}}})
        );
    }

    #[test]
    fn a_patch_that_deletes_a_required_field_is_the_hooks_failure() {
        let mut c = Chain::new(Stage::BeforeTool, call()).expect("valid params");
        let bad = json!({"action": "modify", "call": {"tool": null}});
        assert_eq!(c.step("bad", OnError::Deny, Ok(&bad)), Flow::Stop);
        let Outcome::DenyTool { reason, by } = c.finish() else {
            panic!("expected a denial")
        };
        assert_eq!(by, "bad");
        assert!(reason.contains("missing field `tool`"), "{reason}");
    }

    fn lifecycle(event: &str) -> Chain {
        Chain::new(Stage::Lifecycle, json!({"event": event, "payload": {}})).expect("valid params")
    }

    #[test]
    fn lifecycle_chain_reads_its_event_and_rejects_runtime_only_events() {
        assert_eq!(
            lifecycle("turn_start").event(),
            Some(LifecycleEvent::TurnStart)
        );
        assert_eq!(
            Chain::new(Stage::BeforeTool, call()).map(|c| c.event()),
            Ok(None)
        );
        let err = Chain::new(Stage::Lifecycle, json!({"event": "session_end"})).unwrap_err();
        assert!(
            err.to_string()
                .contains("event `session_end` is not a request event"),
            "{err}"
        );
        assert!(err.to_string().contains("`lifecycle.session_end`"), "{err}");
        assert!(Chain::new(Stage::Lifecycle, json!({"payload": {}})).is_err());
        assert_eq!(OnError::default_for(Stage::Lifecycle), OnError::Allow);
    }

    #[test]
    fn lifecycle_block_stops_the_chain_with_a_default_reason() {
        let mut c = lifecycle("user_prompt_submit");
        let ctx = json!({"additional_context": "a"});
        assert_eq!(c.step("first", OnError::Allow, Ok(&ctx)), Flow::Next);
        let block = json!({"action": "block"});
        assert_eq!(c.step("gate", OnError::Allow, Ok(&block)), Flow::Stop);
        let out = c.finish();
        assert_eq!(out.decided_by(), Some("gate"));
        assert_eq!(
            out.to_wire(Stage::Lifecycle),
            json!({"action": "block", "reason": "blocked by hook `gate`"})
        );
    }

    #[test]
    fn lifecycle_answers_are_collected_in_chain_order() {
        let mut c = lifecycle("before_compaction");
        let answers = [
            ("a", json!({"system_message": "m1", "summary": "first"})),
            ("b", json!({"summary": "second", "system_message": "m2"})),
        ];
        for (hook, answer) in &answers {
            assert_eq!(c.step(hook, OnError::Allow, Ok(answer)), Flow::Next);
        }
        let out = c.finish();
        assert_eq!(
            out,
            Outcome::Lifecycle {
                contexts: vec![],
                system_messages: vec!["m1".into(), "m2".into()],
                summary: Some("first".into()),
            }
        );
        assert_eq!(out.decided_by(), None);
        assert_eq!(
            out.to_wire(Stage::Lifecycle),
            json!({"action": "continue", "system_message": "m1\nm2", "summary": "first"})
        );

        let mut c = lifecycle("session_start");
        c.step(
            "x",
            OnError::Allow,
            Ok(&json!({"additional_context": "one"})),
        );
        c.step("y", OnError::Allow, Ok(&json!({})));
        c.step(
            "z",
            OnError::Allow,
            Ok(&json!({"additional_context": "two"})),
        );
        let out = c.finish();
        let Outcome::Lifecycle { contexts, .. } = &out else {
            panic!("expected a lifecycle outcome: {out:?}")
        };
        assert_eq!(
            contexts,
            &[("x".into(), "one".into()), ("z".into(), "two".into())]
        );
        assert_eq!(
            out.to_wire(Stage::Lifecycle),
            json!({"action": "continue", "additional_context": "one\ntwo"})
        );
    }

    #[test]
    fn lifecycle_deny_policy_blocks_only_where_blocking_is_allowed() {
        let mut c = lifecycle("pre_compact");
        assert_eq!(
            c.step("h", OnError::Deny, Err("crashed".into())),
            Flow::Stop
        );
        assert_eq!(
            c.finish(),
            Outcome::Blocked {
                reason: "hook `h` failed (on_error = deny): crashed".into(),
                by: "h".into(),
            }
        );

        let mut c = lifecycle("turn_start");
        assert_eq!(
            c.step("h", OnError::Deny, Err("crashed".into())),
            Flow::Next
        );
        assert_eq!(
            c.steps()[0].outcome,
            StepOutcome::Failed {
                error: "crashed".into(),
                policy: OnError::Deny
            }
        );
        // An illegal answer is a failure of its own hook, skipped here too.
        let block = json!({"action": "block"});
        assert_eq!(c.step("g", OnError::Deny, Ok(&block)), Flow::Next);
        assert_eq!(
            c.finish().to_wire(Stage::Lifecycle),
            json!({"action": "continue"})
        );
    }

    #[test]
    fn in_process_decisions_are_checked_against_the_event_and_stage() {
        let mut c = lifecycle("turn_start");
        let summary = Decision::Lifecycle {
            block: false,
            reason: None,
            additional_context: None,
            system_message: None,
            summary: Some("s".into()),
        };
        assert_eq!(c.apply("b", OnError::Allow, summary.clone()), Flow::Next);
        assert_eq!(
            c.apply("m", OnError::Allow, Decision::Modify(Map::new())),
            Flow::Next
        );
        assert!(matches!(
            &c.steps()[0].outcome,
            StepOutcome::Failed { error, .. } if error.contains("field `summary`")
        ));
        assert!(matches!(c.steps()[1].outcome, StepOutcome::Failed { .. }));
        assert_eq!(
            c.finish().to_wire(Stage::Lifecycle),
            json!({"action": "continue"})
        );

        let mut c = Chain::new(
            Stage::AfterTool,
            json!({"tool": "t", "result": {"for_llm": ""}}),
        )
        .expect("valid params");
        assert_eq!(c.apply("b", OnError::Deny, summary), Flow::Stop);
        let Outcome::Abort { reason, .. } = c.finish() else {
            panic!("expected an abort")
        };
        assert!(reason.contains("not allowed at after_tool"), "{reason}");
    }

    #[test]
    fn lifecycle_decisions_have_a_canonical_form() {
        let d = Decision::Lifecycle {
            block: true,
            reason: Some("r".into()),
            additional_context: None,
            system_message: None,
            summary: None,
        };
        assert_eq!(
            d.to_value(),
            json!({"action": "block", "reason": "r", "additional_context": null,
                "system_message": null, "summary": null})
        );
    }

    #[test]
    fn a_failing_approver_refuses_by_default_policy() {
        let mut c = Chain::new(Stage::ApproveTool, call()).expect("valid params");
        let policy = OnError::default_for(Stage::ApproveTool);
        assert_eq!(c.step("gate", policy, Err("timed out".into())), Flow::Stop);
        assert_eq!(
            c.finish().to_wire(Stage::ApproveTool)["approved"],
            json!(false)
        );
    }

    #[test]
    fn ask_goes_on_and_a_later_deny_wins() {
        let mut c = Chain::new(Stage::BeforeTool, call()).expect("valid params");
        let ask = json!({"action": "ask", "reason": "rm?"});
        assert_eq!(c.step("asker", OnError::Allow, Ok(&ask)), Flow::Next);
        let deny = json!({"action": "deny_tool", "reason": "no"});
        assert_eq!(c.step("gate", OnError::Allow, Ok(&deny)), Flow::Stop);
        let out = c.finish();
        assert_eq!(out.decided_by(), Some("gate"));
        assert_eq!(
            out.to_wire(Stage::BeforeTool),
            json!({"action": "deny_tool", "reason": "no"})
        );
    }

    #[test]
    fn the_first_ask_is_kept_with_later_patches_and_contexts() {
        let mut c = Chain::new(Stage::BeforeTool, call()).expect("valid params");
        let answers = [
            ("a", json!({"action": "ask", "additional_context": "one"})),
            ("b", json!({"action": "ask", "reason": "second"})),
            (
                "m",
                json!({"action": "modify", "call": {"arguments": {"command": "ls -h"}},
                    "additional_context": "two"}),
            ),
        ];
        for (hook, answer) in &answers {
            assert_eq!(c.step(hook, OnError::Allow, Ok(answer)), Flow::Next);
        }
        let out = c.finish();
        assert_eq!(out.decided_by(), Some("a"));
        assert_eq!(
            out.to_wire(Stage::BeforeTool),
            json!({"action": "ask", "reason": "asked by hook `a`",
                "call": {"tool": "shell", "arguments": {"command": "ls -h"}},
                "additional_context": "one\ntwo"})
        );
    }

    #[test]
    fn contexts_ride_on_continue_and_are_dropped_by_a_stop() {
        let params = json!({"tool": "t", "result": {"for_llm": "x"}});
        let mut c = Chain::new(Stage::AfterTool, params.clone()).expect("valid params");
        c.step(
            "a",
            OnError::Allow,
            Ok(&json!({"additional_context": "one"})),
        );
        c.step("b", OnError::Allow, Ok(&json!({})));
        c.step(
            "c",
            OnError::Allow,
            Ok(&json!({"additional_context": "two"})),
        );
        let out = c.finish();
        let Outcome::Continue { contexts, .. } = &out else {
            panic!("expected continue: {out:?}")
        };
        assert_eq!(
            contexts,
            &[("a".into(), "one".into()), ("c".into(), "two".into())]
        );
        assert_eq!(
            out.to_wire(Stage::AfterTool),
            json!({"action": "continue", "additional_context": "one\ntwo"})
        );

        let mut c = Chain::new(Stage::AfterTool, params).expect("valid params");
        c.step(
            "a",
            OnError::Allow,
            Ok(&json!({"additional_context": "one"})),
        );
        c.step("b", OnError::Allow, Ok(&json!({"action": "abort_turn"})));
        assert_eq!(
            c.finish().to_wire(Stage::AfterTool),
            json!({"action": "abort_turn", "reason": "aborted by hook `b`"})
        );
    }

    #[test]
    fn an_in_process_ask_outside_before_tool_is_the_hooks_failure() {
        let params = json!({"tool": "t", "result": {"for_llm": "x"}});
        let mut c = Chain::new(Stage::AfterTool, params).expect("valid params");
        assert_eq!(
            c.apply("h", OnError::Allow, Decision::Ask(None)),
            Flow::Next
        );
        assert!(matches!(
            &c.steps()[0].outcome,
            StepOutcome::Failed { error, .. } if error.contains("action `ask` is not allowed at after_tool")
        ));
        assert_eq!(c.finish().decided_by(), None);
    }

    #[test]
    fn stop_is_a_request_event_whose_block_is_the_next_instruction() {
        let mut c = lifecycle("stop");
        let block = json!({"action": "block", "reason": "run the tests first"});
        assert_eq!(c.step("judge", OnError::Allow, Ok(&block)), Flow::Stop);
        assert_eq!(
            c.finish().to_wire(Stage::Lifecycle),
            json!({"action": "block", "reason": "run the tests first"})
        );
    }
}
