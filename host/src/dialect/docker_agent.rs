//! docker-agent: snake_case events and answers, hookhost's own command-hook
//! flavour before dialects. Each event carries docker-agent's contract
//! (its `pkg/hooks/events` table): what an answer may do there, and
//! whether a failure of the hook refuses whatever `on_error` says.
//!
//! Events hookhost has no stage or request for are open lifecycle names:
//! they run when the agent announces them, and their answers are logged,
//! not used (spec/dialects.md, "docker-agent").

use hookhost_protocol::Stage;

use super::Dialect;
use super::spec::{
    Caps, Casing, Event, Matching, Replaces, Rewrite, Spec, Stamp, Target, lc, with_caps,
};

/// An event that can be stopped and nothing else.
const BLOCK: Caps = Caps {
    block: true,
    ..Caps::OBSERVE
};

/// An event that can be stopped and takes context (user_prompt_submit).
const BLOCK_CONTEXT: Caps = Caps {
    context: true,
    ..BLOCK
};

/// An event that takes context and instructions (session_start).
const CONTEXT: Caps = Caps {
    context: true,
    instructions: true,
    ..Caps::OBSERVE
};

/// A security guard: a verdict, and a failure refuses.
const GUARD: Caps = Caps {
    fail_closed: true,
    decision: true,
    ..BLOCK
};

const fn stage(native: &'static str, s: Stage, caps: Caps) -> Event {
    with_caps(native, Target::Stage(s), caps)
}

const fn life(native: &'static str, canonical: &'static str, caps: Caps) -> Event {
    with_caps(native, Target::Lifecycle(canonical), caps)
}

/// docker-agent's events, with its contracts.
const EVENTS: &[Event] = &[
    stage(
        "pre_tool_use",
        Stage::BeforeTool,
        Caps {
            replaces: Replaces::ToolInput,
            ..GUARD
        },
    ),
    stage(
        "tool_guard",
        Stage::BeforeTool,
        Caps {
            metadata: true,
            ..GUARD
        },
    ),
    stage(
        "tool_input_transform",
        Stage::BeforeTool,
        Caps {
            replaces: Replaces::ToolInput,
            ..BLOCK
        },
    ),
    stage("post_tool_use", Stage::AfterTool, BLOCK),
    stage(
        "tool_response_transform",
        Stage::AfterTool,
        Caps {
            replaces: Replaces::ToolResponse,
            ..Caps::OBSERVE
        },
    ),
    stage(
        "permission_request",
        Stage::ApproveTool,
        Caps {
            decision: true,
            metadata: true,
            ..BLOCK
        },
    ),
    stage(
        "before_llm_call",
        Stage::BeforeLlm,
        Caps {
            replaces: Replaces::Messages,
            ..BLOCK
        },
    ),
    stage("after_llm_call", Stage::AfterLlm, Caps::OBSERVE),
    life("session_start", "session_start", CONTEXT),
    life("session_end", "session_end", Caps::OBSERVE),
    life("user_prompt_submit", "user_prompt_submit", BLOCK_CONTEXT),
    // A follow-up is a queued user message that starts a fresh turn with
    // its text in `prompt`: hookhost's agents announce that turn as
    // user_prompt_submit.
    life("user_followup_submit", "user_prompt_submit", BLOCK_CONTEXT),
    life(
        "user_steering_messages_submit",
        "user_steering_messages_submit",
        BLOCK_CONTEXT,
    ),
    life("turn_start", "turn_start", CONTEXT),
    life("turn_end", "turn_end", Caps::OBSERVE),
    life("stop", "stop", Caps::OBSERVE),
    // Not a docker-agent event: hookhost's, with hookhost's rules.
    lc("subagent_start", "subagent_start"),
    life("subagent_stop", "subagent_stop", Caps::OBSERVE),
    life("pre_compact", "pre_compact", BLOCK_CONTEXT),
    life("notification", "notification", Caps::OBSERVE),
    life("on_error", "on_error", Caps::OBSERVE),
    life("on_max_iterations", "on_max_iterations", Caps::OBSERVE),
    life(
        "before_compaction",
        "before_compaction",
        Caps {
            summary: true,
            ..BLOCK
        },
    ),
    life("after_compaction", "after_compaction", Caps::OBSERVE),
    life("on_user_input", "on_user_input", Caps::OBSERVE),
    life("on_agent_switch", "on_agent_switch", Caps::OBSERVE),
    life("on_session_resume", "on_session_resume", Caps::OBSERVE),
    life(
        "on_tool_approval_decision",
        "on_tool_approval_decision",
        Caps::OBSERVE,
    ),
    life("worktree_create", "worktree_create", BLOCK_CONTEXT),
];

/// docker-agent.
pub(crate) const SPEC: Spec = Spec {
    dialect: Dialect::DockerAgent,
    events: EVENTS,
    casing: Casing::Snake,
    stamp: Stamp::None,
    env: &[],
    default_timeout_ms: 60_000,
    matching: Matching::Anchored,
    rewrite: Rewrite::Merge,
    ask: true,
    tool_halt: true,
    matcher_aliases: &[],
    // Unused: each event's contract says where plain stdout is context.
    plain_context: &[],
    json_from_stderr: false,
    unusable: super::spec::takes_any,
    block_needs_reason: false,
};
