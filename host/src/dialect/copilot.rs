//! GitHub Copilot CLI and VS Code's `.github/hooks` files. An event
//! configured in camelCase (`preToolUse`) gets Copilot CLI's payload
//! (`sessionId`, `toolName`, `toolArgs` as a JSON string); one in
//! PascalCase (`PreToolUse`) gets VS Code's Claude-shaped snake_case
//! payload. Matchers are anchored.

use hookhost_protocol::Stage;

use super::Dialect;
use super::spec::{
    Caps, Casing, Event, Matching, Rewrite, Spec, Stamp, Target, after, lc, st, with_caps,
};

/// Copilot CLI's notification and subagentStart: their `additionalContext`
/// reaches the model (the notification's as a message, the sub-agent's
/// before its prompt), and nothing else is read.
const CONTEXT_ONLY: Caps = Caps {
    context: true,
    ..Caps::OBSERVE
};

/// Copilot CLI's thirteen events, then VS Code's PascalCase ones.
const EVENTS: &[Event] = &[
    lc("sessionStart", "session_start"),
    lc("sessionEnd", "session_end"),
    lc("userPromptSubmitted", "user_prompt_submit"),
    st("preToolUse", Stage::BeforeTool),
    after("postToolUse", false),
    after("postToolUseFailure", true),
    st("permissionRequest", Stage::ApproveTool),
    with_caps(
        "notification",
        Target::Lifecycle("notification"),
        CONTEXT_ONLY,
    ),
    lc("agentStop", "stop"),
    with_caps(
        "subagentStart",
        Target::Lifecycle("subagent_start"),
        CONTEXT_ONLY,
    ),
    lc("subagentStop", "subagent_stop"),
    lc("errorOccurred", "on_error"),
    lc("preCompact", "pre_compact"),
    lc("SessionStart", "session_start"),
    lc("UserPromptSubmit", "user_prompt_submit"),
    st("PreToolUse", Stage::BeforeTool),
    st("PostToolUse", Stage::AfterTool),
    lc("PreCompact", "pre_compact"),
    lc("SubagentStart", "subagent_start"),
    lc("SubagentStop", "subagent_stop"),
    lc("Stop", "stop"),
];

/// Copilot.
pub(crate) const SPEC: Spec = Spec {
    dialect: Dialect::Copilot,
    events: EVENTS,
    casing: Casing::Camel,
    stamp: Stamp::Millis,
    env: &[],
    default_timeout_ms: 30_000,
    matching: Matching::Anchored,
    rewrite: Rewrite::Replace,
    ask: true,
    tool_halt: true,
    matcher_aliases: &[],
    plain_context: &[],
    json_from_stderr: false,
    unusable: super::spec::takes_any,
    block_needs_reason: false,
};
