//! The typed verdicts the embedding API returns, one enum per kind of stage,
//! so an agent matches only on what its stage can decide.

use hookhost_protocol::params::ToolResult;

/// The verdict at before_tool.
#[derive(Debug, Clone, PartialEq)]
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
pub enum Approval {
    /// Every approver approved.
    Approved,
    /// One refused (or failed with `on_error = "deny"`).
    Refused {
        /// The first refusal's reason, in chain order.
        reason: String,
    },
}
