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

use crate::action::{Decision, decode_result};
use crate::merge_patch::apply_merge_patch;
use crate::params::{AfterLlmParams, AfterToolParams, BeforeLlmParams, ToolCall, ToolResult};
use crate::stage::Stage;

/// What a hook's failure (crash, timeout, error reply, protocol violation)
/// decides. Chosen per hook, because a security gate must fail closed while
/// a logger must not take the agent down with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// Skip the hook; the chain goes on as if it had answered `continue`.
    Allow,
    /// Stop the chain with a refusal: deny_tool at before_tool, a refusal
    /// at approve_tool, abort_turn at the other stages.
    Deny,
}

impl OnError {
    /// The default for a stage: deny for approve_tool (an approver that
    /// cannot answer has not approved), allow elsewhere.
    pub fn default_for(stage: Stage) -> OnError {
        match stage {
            Stage::ApproveTool => OnError::Deny,
            _ => OnError::Allow,
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
pub enum Flow {
    /// Call the next hook with [`Chain::params`].
    Next,
    /// The verdict is final; call no more hooks.
    Stop,
}

/// What became of one hook's answer, for traces and audits.
#[derive(Debug, Clone, PartialEq)]
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
pub enum Outcome {
    /// Go on with these params (changed by patches when `modified`). At
    /// approve_tool this means every approver approved.
    Continue {
        /// The params after every patch.
        params: Value,
        /// Whether any hook changed them.
        modified: bool,
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

/// Checks that `params` decodes as the stage's params type.
pub fn validate_params(stage: Stage, params: &Value) -> Result<(), ParamsError> {
    let res = match stage {
        Stage::BeforeLlm => BeforeLlmParams::deserialize(params).map(drop),
        Stage::AfterLlm => AfterLlmParams::deserialize(params).map(drop),
        Stage::BeforeTool | Stage::ApproveTool => ToolCall::deserialize(params).map(drop),
        Stage::AfterTool => AfterToolParams::deserialize(params).map(drop),
    };
    res.map_err(|e| ParamsError {
        stage,
        detail: e.to_string(),
    })
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
}

impl Chain {
    /// Starts a chain, checking the caller's params first.
    pub fn new(stage: Stage, params: Value) -> Result<Chain, ParamsError> {
        validate_params(stage, &params)?;
        Ok(Chain {
            stage,
            params,
            original: None,
            steps: Vec::new(),
            outcome: None,
        })
    }

    /// The stage this chain runs.
    pub fn stage(&self) -> Stage {
        self.stage
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
        let decision = match reply {
            Err(error) => return self.fail(hook, on_error, error),
            Ok(result) => match decode_result(self.stage, result) {
                Ok(d) => d,
                Err(e) => return self.fail(hook, on_error, e.to_string()),
            },
        };
        self.apply(hook, on_error, decision)
    }

    /// Feeds an already decoded decision (from an in-process hook).
    pub fn apply(&mut self, hook: &str, on_error: OnError, decision: Decision) -> Flow {
        if self.outcome.is_some() {
            return Flow::Stop;
        }
        let by = hook.to_string();
        let outcome = match &decision {
            Decision::Continue => None,
            Decision::Modify(patch) => {
                let mut next = self.params.clone();
                apply_merge_patch(&mut next, &Value::Object(patch.clone()));
                if let Err(e) = validate_params(self.stage, &next) {
                    return self.fail(
                        hook,
                        on_error,
                        format!("its modify patch breaks the params: {}", e.detail),
                    );
                }
                if next != self.params {
                    let previous = std::mem::replace(&mut self.params, next);
                    self.original.get_or_insert(previous);
                }
                None
            }
            Decision::Respond(result) => Some(Outcome::Respond {
                result: result.clone(),
                by,
            }),
            Decision::DenyTool(reason) => Some(Outcome::DenyTool {
                reason: reason
                    .clone()
                    .unwrap_or_else(|| format!("denied by hook `{hook}`")),
                by,
            }),
            Decision::Abort { hard, reason } => Some(Outcome::Abort {
                hard: *hard,
                reason: reason
                    .clone()
                    .unwrap_or_else(|| format!("aborted by hook `{hook}`")),
                by,
            }),
            Decision::Approval { approved: true, .. } => None,
            Decision::Approval {
                approved: false,
                reason,
            } => Some(Outcome::Refused {
                reason: reason
                    .clone()
                    .unwrap_or_else(|| format!("refused by hook `{hook}`")),
                by,
            }),
        };
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

    fn fail(&mut self, hook: &str, policy: OnError, error: String) -> Flow {
        let flow = match policy {
            OnError::Allow => Flow::Next,
            OnError::Deny => {
                let reason = format!("hook `{hook}` failed (on_error = deny): {error}");
                let by = hook.to_string();
                self.outcome = Some(match self.stage {
                    Stage::BeforeTool => Outcome::DenyTool { reason, by },
                    Stage::ApproveTool => Outcome::Refused { reason, by },
                    _ => Outcome::Abort {
                        hard: false,
                        reason,
                        by,
                    },
                });
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
    pub fn finish(self) -> Outcome {
        let modified = self.original.is_some_and(|o| o != self.params);
        self.outcome.unwrap_or(Outcome::Continue {
            params: self.params,
            modified,
        })
    }
}

impl Outcome {
    /// The verdict in the protocol's own result shape for `stage`, as one
    /// hook would have answered it: what `hookhost call` prints.
    pub fn to_wire(&self, stage: Stage) -> Value {
        match self {
            Outcome::Continue { params, modified } => {
                if stage == Stage::ApproveTool {
                    return json!({"approved": true});
                }
                match (modified, stage.payload_key()) {
                    (true, Some(key)) => {
                        let mut obj = Map::new();
                        obj.insert("action".into(), "modify".into());
                        obj.insert(key.into(), params.clone());
                        Value::Object(obj)
                    }
                    _ => json!({"action": "continue"}),
                }
            }
            Outcome::Respond { result, .. } => json!({"action": "respond", "result": result}),
            Outcome::DenyTool { reason, .. } => json!({"action": "deny_tool", "reason": reason}),
            Outcome::Abort { hard, reason, .. } => json!({
                "action": if *hard { "hard_abort" } else { "abort_turn" },
                "reason": reason,
            }),
            Outcome::Refused { reason, .. } => json!({"approved": false, "reason": reason}),
        }
    }

    /// The hook that decided, when one did (every outcome but continue).
    pub fn decided_by(&self) -> Option<&str> {
        match self {
            Outcome::Continue { .. } => None,
            Outcome::Respond { by, .. }
            | Outcome::DenyTool { by, .. }
            | Outcome::Abort { by, .. }
            | Outcome::Refused { by, .. } => Some(by),
        }
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
            Decision::Abort { hard, reason } => json!({
                "action": if *hard { "hard_abort" } else { "abort_turn" },
                "reason": reason,
            }),
            Decision::Approval { approved, reason } => {
                json!({"approved": approved, "reason": reason})
            }
        }
    }
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
}
