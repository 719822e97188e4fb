//! Gemini CLI: its own event names, a top-level `decision`, a rewrite that
//! is the whole new input, timeouts in milliseconds, and JSON read from
//! stderr when stdout is empty.

use hookhost_protocol::Stage;

use super::Dialect;
use super::spec::{Casing, EnvValue, Event, Matching, Rewrite, Spec, Stamp, lc, st};

/// Gemini CLI's eleven events.
const EVENTS: &[Event] = &[
    lc("SessionStart", "session_start"),
    lc("SessionEnd", "session_end"),
    lc("BeforeAgent", "user_prompt_submit"),
    lc("AfterAgent", "stop"),
    st("BeforeModel", Stage::BeforeLlm),
    st("AfterModel", Stage::AfterLlm),
    lc("BeforeToolSelection", "before_tool_selection"),
    st("BeforeTool", Stage::BeforeTool),
    st("AfterTool", Stage::AfterTool),
    lc("PreCompress", "pre_compact"),
    lc("Notification", "notification"),
];

/// Gemini CLI.
pub(crate) const SPEC: Spec = Spec {
    dialect: Dialect::GeminiCli,
    events: EVENTS,
    casing: Casing::Snake,
    stamp: Stamp::Iso,
    env: &[
        ("GEMINI_PROJECT_DIR", EnvValue::ProjectDir),
        ("CLAUDE_PROJECT_DIR", EnvValue::ProjectDir),
        ("GEMINI_SESSION_ID", EnvValue::SessionId),
        ("GEMINI_CWD", EnvValue::Cwd),
        // storage.getPlansDir(): a folder under ~/.gemini/tmp named by its
        // project registry (hookRunner.ts, gemini-cli 5411f113).
        ("GEMINI_PLANS_DIR", EnvValue::FromAgent),
    ],
    default_timeout_ms: 60_000,
    matching: Matching::RegexTools,
    // Gemini's docs say `hookSpecificOutput.tool_input` merges over the
    // arguments, but its scheduler (0.61.0, and upstream's own test of it)
    // builds the call from `tool_input` alone: a key the hook leaves out is
    // gone. A hook must reach here the call it reaches in Gemini.
    rewrite: Rewrite::Replace,
    ask: true,
    tool_halt: true,
    matcher_aliases: &[],
    plain_context: &[],
    json_from_stderr: true,
    unusable: super::spec::takes_any,
    block_needs_reason: false,
};
