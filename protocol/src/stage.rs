//! Stages (the synchronous hook points) and the method names of the protocol.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Method names on the wire.
pub mod method {
    /// Handshake, host → hook, request.
    pub const HELLO: &str = "hook.hello";
    /// Runtime event, host → hook, notification.
    pub const RUNTIME_EVENT: &str = "hook.runtime_event";
    /// Before the model is called.
    pub const BEFORE_LLM: &str = "hook.before_llm";
    /// After the model answered.
    pub const AFTER_LLM: &str = "hook.after_llm";
    /// Before a tool runs.
    pub const BEFORE_TOOL: &str = "hook.before_tool";
    /// After a tool ran.
    pub const AFTER_TOOL: &str = "hook.after_tool";
    /// Whether a tool may run at all.
    pub const APPROVE_TOOL: &str = "hook.approve_tool";
    /// A lifecycle event the agent waits on (session start, prompt, ...).
    pub const LIFECYCLE: &str = "hook.lifecycle";
    /// Host → hook: stop working on a request, notification `{id}`.
    pub const CANCEL_REQUEST: &str = "$/cancel_request";
}

/// A synchronous hook point: the host waits for the chain's verdict before
/// the agent goes on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
// Closed: a new stage is a new method, which needs a protocol version bump.
#[allow(clippy::exhaustive_enums)]
pub enum Stage {
    /// The request about to go to the model; may be rewritten or aborted.
    BeforeLlm,
    /// The model's answer; may be rewritten or aborted.
    AfterLlm,
    /// A tool call about to run; may be rewritten, answered, denied, aborted.
    BeforeTool,
    /// A tool's result; may be rewritten or aborted.
    AfterTool,
    /// A yes/no gate on a tool call; every approver must say yes.
    ApproveTool,
    /// A lifecycle event the agent waits on (`params.event` says which); may
    /// be blocked or add context, as far as the event allows.
    Lifecycle,
}

impl Stage {
    /// All stages, in the order the spec lists them (lifecycle last, as it
    /// was added last).
    pub const ALL: [Stage; 6] = [
        Stage::BeforeLlm,
        Stage::AfterLlm,
        Stage::BeforeTool,
        Stage::AfterTool,
        Stage::ApproveTool,
        Stage::Lifecycle,
    ];

    /// The snake_case name used in config and in `intercept` lists.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::BeforeLlm => "before_llm",
            Stage::AfterLlm => "after_llm",
            Stage::BeforeTool => "before_tool",
            Stage::AfterTool => "after_tool",
            Stage::ApproveTool => "approve_tool",
            Stage::Lifecycle => "lifecycle",
        }
    }

    /// The JSON-RPC method that calls this stage.
    pub fn method(self) -> &'static str {
        match self {
            Stage::BeforeLlm => method::BEFORE_LLM,
            Stage::AfterLlm => method::AFTER_LLM,
            Stage::BeforeTool => method::BEFORE_TOOL,
            Stage::AfterTool => method::AFTER_TOOL,
            Stage::ApproveTool => method::APPROVE_TOOL,
            Stage::Lifecycle => method::LIFECYCLE,
        }
    }

    /// The stage a method name calls, if any.
    pub fn from_method(method: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.method() == method)
    }

    /// The key under which a `modify` result carries its merge patch;
    /// `None` for approve_tool and lifecycle, which cannot modify.
    pub fn payload_key(self) -> Option<&'static str> {
        match self {
            Stage::BeforeLlm => Some("request"),
            Stage::AfterLlm => Some("response"),
            Stage::BeforeTool => Some("call"),
            Stage::AfterTool => Some("result"),
            Stage::ApproveTool | Stage::Lifecycle => None,
        }
    }

    /// The PicoClaw hello `modes` entry that asks for this stage.
    pub fn mode(self) -> &'static str {
        match self {
            Stage::BeforeLlm | Stage::AfterLlm => "llm",
            Stage::BeforeTool | Stage::AfterTool => "tool",
            Stage::ApproveTool => "approve",
            Stage::Lifecycle => "lifecycle",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stage name that is not one of the six.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown stage {0:?} (expected one of before_llm, after_llm, before_tool, after_tool, approve_tool, lifecycle)"
)]
pub struct UnknownStage(pub String);

impl FromStr for Stage {
    type Err = UnknownStage;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Stage::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| UnknownStage(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_is_a_stage_of_its_own() {
        assert_eq!(Stage::ALL.last(), Some(&Stage::Lifecycle));
        assert_eq!(Stage::Lifecycle.as_str(), "lifecycle");
        assert_eq!(Stage::Lifecycle.method(), "hook.lifecycle");
        assert_eq!(
            Stage::from_method(method::LIFECYCLE),
            Some(Stage::Lifecycle)
        );
        assert_eq!(Stage::Lifecycle.mode(), "lifecycle");
        assert_eq!(Stage::Lifecycle.payload_key(), None);
        assert_eq!("lifecycle".parse::<Stage>(), Ok(Stage::Lifecycle));
        let err = "lifecycles".parse::<Stage>().unwrap_err().to_string();
        assert!(err.contains("approve_tool, lifecycle)"), "{err}");
    }

    #[test]
    fn names_and_methods_round_trip() {
        for s in Stage::ALL {
            assert_eq!(s.as_str().parse::<Stage>(), Ok(s));
            assert_eq!(Stage::from_method(s.method()), Some(s));
            assert_eq!(s.method(), format!("hook.{s}"));
        }
    }
}
