//! The typed verdicts the embedding API returns, one enum per kind of stage,
//! so an agent matches only on what its stage can decide.

use hookhost_protocol::params::ToolResult;

/// The verdict at before_tool.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolOutcome<P> {
    /// Run the tool with these params (rewritten when hooks modified them),
    /// subject to the agent's own permission rules: no hook approved it.
    Continue {
        /// The call to run.
        call: P,
        /// Text the hooks added for the model's context (their
        /// `additional_context`), in chain order; the agent adds it after
        /// the tool's result.
        contexts: Vec<String>,
    },
    /// A hook asked for the user's decision and no later hook denied,
    /// answered or aborted: the agent asks the user whether to run this
    /// call, and runs it only on a yes. Never a deny: the user decides.
    Ask {
        /// The call the user is asked about (every patch applied).
        call: P,
        /// Why, from the first hook that asked; shown to the user.
        reason: String,
        /// Text the hooks added for the model's context, in chain order.
        contexts: Vec<String>,
    },
    /// A hook allowed the call explicitly (`allow`) and no hook asked,
    /// denied, answered or aborted: the agent may run it without its own
    /// prompt. Only a hook's `allow` gives this; a rewrite alone, or no
    /// hook at all, is [`ToolOutcome::Continue`], after which the agent
    /// applies its own permission rules as it would without hookhost.
    Allow {
        /// The call to run (every patch applied).
        call: P,
        /// Why, from the first hook that allowed, when it said.
        reason: Option<String>,
        /// The first hook that allowed.
        by: String,
        /// Text the hooks added for the model's context, in chain order.
        contexts: Vec<String>,
    },
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
    Continue {
        /// The params to go on with.
        params: P,
        /// Text the hooks added for the model's context (their
        /// `additional_context`, after_tool only), in chain order.
        contexts: Vec<String>,
    },
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
    /// An approver approved and none refused.
    Approved,
    /// No hook decided (none listens at approve_tool, or each left the
    /// decision to the agent): the agent decides as it would with no hook,
    /// usually by asking the user. Never an approval.
    Undecided,
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
    /// events: user_prompt_submit, stop, subagent_start, subagent_stop,
    /// pre_compact, before_compaction). At stop and subagent_stop it is
    /// the agent's next instruction: the agent keeps going with it.
    pub blocked: Option<String>,
    /// Additional context for the model, in chain order (at pre_compact,
    /// instructions for the compaction).
    pub contexts: Vec<String>,
    /// Messages for the user, in chain order.
    pub system_messages: Vec<String>,
    /// A compaction summary (before_compaction), the first in chain order.
    pub summary: Option<String>,
    /// At subagent_stop, what the quality gates (hooks that set
    /// `block_on_failure` or `max_retries`) made of the sub-agent's
    /// result; `None` when no gate took part, at every other event, and
    /// when a hook that is no gate blocked. When it is
    /// [`GateOutcome::Retry`], `blocked` holds the same feedback.
    pub gate: Option<GateOutcome>,
}

/// What GoClaw's quality gate decided at `subagent_stop`, so the agent
/// knows whether to send the sub-agent back or accept its result, and
/// whether that result failed a check on the way (the wire says only
/// block or continue; this is the embedding API's fuller answer).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GateOutcome {
    /// Every gate that ran passed: accept the result.
    Passed,
    /// A gate failed: send the sub-agent back with `feedback` (also in
    /// `LifecycleOutcome::blocked`). This is blocked attempt `attempt` of
    /// at most `max_retries` in a row for this sub-agent.
    Retry {
        /// The gate that failed.
        hook: String,
        /// Its reason: what the sub-agent is told to fix.
        feedback: String,
        /// This blocked attempt's number, from 1.
        attempt: u32,
        /// The gate's `max_retries`.
        max_retries: u32,
    },
    /// A gate failed once more after `max_retries` retries (or the host's
    /// `stop_block_limit` was reached first): accept the result, knowing
    /// it failed the check; the host logged a warning.
    Exhausted {
        /// The gate that failed.
        hook: String,
        /// Its last reason.
        feedback: String,
        /// Blocked attempts in a row, this one included.
        attempts: u32,
    },
    /// A gate with `block_on_failure = false` failed: accept the result;
    /// the failure was logged and the chain went on to the later hooks.
    /// The first such failure, when several gates failed.
    FailedOpen {
        /// The gate that failed.
        hook: String,
        /// Its reason.
        feedback: String,
    },
}

impl<P> ToolOutcome<P> {
    /// A plain go-ahead with no added context: what a chain with no hooks
    /// gives.
    pub fn proceed(call: P) -> Self {
        ToolOutcome::Continue {
            call,
            contexts: Vec::new(),
        }
    }
}

impl<P> StageOutcome<P> {
    /// A plain go-ahead with no added context.
    pub fn proceed(params: P) -> Self {
        StageOutcome::Continue {
            params,
            contexts: Vec::new(),
        }
    }
}
