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
    /// Host → hook: stop working on a request, notification `{id}`.
    pub const CANCEL_REQUEST: &str = "$/cancel_request";
}

/// A synchronous hook point: the host waits for the chain's verdict before
/// the agent goes on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
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
}

impl Stage {
    /// All stages, in the order the spec lists them.
    pub const ALL: [Stage; 5] = [
        Stage::BeforeLlm,
        Stage::AfterLlm,
        Stage::BeforeTool,
        Stage::AfterTool,
        Stage::ApproveTool,
    ];

    /// The snake_case name used in config and in `intercept` lists.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::BeforeLlm => "before_llm",
            Stage::AfterLlm => "after_llm",
            Stage::BeforeTool => "before_tool",
            Stage::AfterTool => "after_tool",
            Stage::ApproveTool => "approve_tool",
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
        }
    }

    /// The stage a method name calls, if any.
    pub fn from_method(method: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.method() == method)
    }

    /// The key under which a `modify` result carries its merge patch;
    /// `None` for approve_tool, which cannot modify.
    pub fn payload_key(self) -> Option<&'static str> {
        match self {
            Stage::BeforeLlm => Some("request"),
            Stage::AfterLlm => Some("response"),
            Stage::BeforeTool => Some("call"),
            Stage::AfterTool => Some("result"),
            Stage::ApproveTool => None,
        }
    }

    /// The PicoClaw hello `modes` entry that asks for this stage.
    pub fn mode(self) -> &'static str {
        match self {
            Stage::BeforeLlm | Stage::AfterLlm => "llm",
            Stage::BeforeTool | Stage::AfterTool => "tool",
            Stage::ApproveTool => "approve",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stage name that is not one of the five.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown stage {0:?} (expected one of before_llm, after_llm, before_tool, after_tool, approve_tool)"
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
