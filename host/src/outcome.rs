//! The typed verdicts the embedding API returns, one enum per kind of stage,
//! so an agent matches only on what its stage can decide.

use hookhost_protocol::params::ToolResult;

/// The verdict at before_tool.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolOutcome<P> {
    /// Run the tool with these params (rewritten when hooks modified them).
    Continue(P),
    /// Do not run the tool; use this result.
    Respond(ToolResult),
    /// Do not run the tool; tell the model why.
    Deny {
        /// Why.
        reason: String,
    },
    /// End the turn (`hard: false`) or the agent loop (`hard: true`).
    Abort {
        /// `hard_abort` rather than `abort_turn`.
        hard: bool,
        /// Why.
        reason: String,
    },
}

/// The verdict at before_llm, after_llm and after_tool.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StageOutcome<P> {
    /// Go on with these params (rewritten when hooks modified them).
    Continue(P),
    /// End the turn (`hard: false`) or the agent loop (`hard: true`).
    Abort {
        /// `hard_abort` rather than `abort_turn`.
        hard: bool,
        /// Why.
        reason: String,
    },
}

/// The verdict at approve_tool.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Approval {
    /// Every approver approved.
    Approved,
    /// One refused (or failed with `on_error = "deny"`).
    Refused {
        /// The first refusal's reason, in chain order.
        reason: String,
    },
}

/// The merged verdict of a lifecycle event.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct LifecycleOutcome {
    /// Why the event is blocked, when a hook blocked it (only blocking
    /// events: user_prompt_submit, subagent_start, pre_compact,
    /// before_compaction).
    pub blocked: Option<String>,
    /// Additional context for the model, in chain order.
    pub contexts: Vec<String>,
    /// Messages for the user, in chain order.
    pub system_messages: Vec<String>,
    /// A compaction summary (before_compaction), the first in chain order.
    pub summary: Option<String>,
}
