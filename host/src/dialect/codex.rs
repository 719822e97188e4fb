//! OpenAI Codex CLI: Claude Code's format with fewer events, `ask` and
//! `continue: false` refused at PreToolUse (Codex 0.169.0, driven by
//! cli/tests/codex.rs, runs the tool when either is in the answer), its
//! own reading of a matcher, and `apply_patch` as its edit tool, which
//! `Edit` and `Write` matchers select too.

use hookhost_protocol::Stage;

use super::Dialect;
use super::spec::{Caps, Casing, Event, Matching, Rewrite, Spec, Stamp, Target, lc, st, with_caps};

/// Codex's events (the documented ten, and four its source adds).
const EVENTS: &[Event] = &[
    lc("SessionStart", "session_start"),
    // Context only: Codex reads no block here, not even `continue: false`
    // (codex-rs/hooks/src/events/subagent_start.rs).
    with_caps(
        "SubagentStart",
        Target::Lifecycle("subagent_start"),
        Caps {
            context: true,
            ..Caps::OBSERVE
        },
    ),
    st("PreToolUse", Stage::BeforeTool),
    st("PermissionRequest", Stage::ApproveTool),
    st("PostToolUse", Stage::AfterTool),
    lc("PreCompact", "pre_compact"),
    lc("PostCompact", "after_compaction"),
    lc("UserPromptSubmit", "user_prompt_submit"),
    lc("SubagentStop", "subagent_stop"),
    lc("Stop", "stop"),
    lc("Interrupt", "interrupt"),
    lc("SessionEnd", "session_end"),
    lc("StopFailure", "stop_failure"),
    // Newer than the pinned 0.169.0: each hook's trimmed stdout is text of
    // the thread's user instructions, in place of the user's own
    // AGENTS.md; a failed hook adds nothing
    // (codex-rs/hooks/src/events/user_instructions.rs, openai/codex
    // 935c40c). Install leaves it out (`TAKES_OVER`).
    with_caps(
        "UserInstructions",
        Target::Lifecycle("user_instructions"),
        Caps {
            context: true,
            literal: true,
            ..Caps::OBSERVE
        },
    ),
];

/// Codex.
pub(crate) const SPEC: Spec = Spec {
    dialect: Dialect::Codex,
    events: EVENTS,
    casing: Casing::Snake,
    stamp: Stamp::None,
    env: &[],
    default_timeout_ms: 600_000,
    matching: Matching::CodexList,
    rewrite: Rewrite::Replace,
    ask: false,
    tool_halt: false,
    matcher_aliases: &[("apply_patch", &["Edit", "Write"])],
    plain_context: &["session_start", "user_prompt_submit", "subagent_start"],
    json_from_stderr: false,
    unusable: super::codex_answers::unusable,
    block_needs_reason: true,
};
