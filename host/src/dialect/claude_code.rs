//! Claude Code: the format the field settled on. Qwen Code and Factory
//! speak it too; their differences (Qwen's timeouts in milliseconds and
//! `QWEN_PROJECT_DIR`, Factory's `FACTORY_PROJECT_DIR`) are named in
//! spec/dialects.md.

use hookhost_protocol::Stage;

use super::Dialect;
use super::spec::{
    Casing, EnvValue, Event, Matching, Rewrite, Spec, Stamp, after, lc, lc_blocks, st,
};

/// Claude Code's events (the 31 of its August 2026 reference). Those it
/// lets a hook block without hookhost's protocol waiting on them
/// (`decision: "block"` or exit 2 at UserPromptExpansion, PostToolBatch,
/// TaskCreated, TaskCompleted, ConfigChange) are `lc_blocks` rows.
pub(crate) const EVENTS: &[Event] = &[
    lc("SessionStart", "session_start"),
    lc("Setup", "setup"),
    lc("UserPromptSubmit", "user_prompt_submit"),
    lc_blocks("UserPromptExpansion", "user_prompt_expansion"),
    st("PreToolUse", Stage::BeforeTool),
    st("PermissionRequest", Stage::ApproveTool),
    lc("PermissionDenied", "permission_denied"),
    after("PostToolUse", false),
    after("PostToolUseFailure", true),
    lc_blocks("PostToolBatch", "post_tool_batch"),
    lc("Notification", "notification"),
    lc("MessageDisplay", "message_display"),
    lc("SubagentStart", "subagent_start"),
    lc("SubagentStop", "subagent_stop"),
    lc_blocks("TaskCreated", "task_created"),
    lc_blocks("TaskCompleted", "task_completed"),
    lc("Stop", "stop"),
    lc("StopFailure", "stop_failure"),
    lc("TeammateIdle", "teammate_idle"),
    lc("InstructionsLoaded", "instructions_loaded"),
    lc_blocks("ConfigChange", "config_change"),
    lc("CwdChanged", "cwd_changed"),
    lc("DirectoryAdded", "directory_added"),
    lc("FileChanged", "file_changed"),
    lc("WorktreeCreate", "worktree_create"),
    lc("WorktreeRemove", "worktree_remove"),
    lc("PreCompact", "pre_compact"),
    lc("PostCompact", "after_compaction"),
    lc("Elicitation", "elicitation"),
    lc("ElicitationResult", "elicitation_result"),
    lc("SessionEnd", "session_end"),
];

/// Claude Code.
pub(crate) const SPEC: Spec = Spec {
    dialect: Dialect::ClaudeCode,
    events: EVENTS,
    casing: Casing::Snake,
    stamp: Stamp::None,
    env: &[
        ("CLAUDE_PROJECT_DIR", EnvValue::ProjectDir),
        // The file a SessionStart, Setup, CwdChanged or FileChanged hook
        // writes `export` lines to, for the session's later Bash calls:
        // only the agent knows which.
        ("CLAUDE_ENV_FILE", EnvValue::FromAgent),
    ],
    default_timeout_ms: 600_000,
    matching: Matching::ClaudeList,
    rewrite: Rewrite::Replace,
    ask: true,
    tool_halt: true,
    matcher_aliases: &[],
    plain_context: &["session_start", "user_prompt_submit", "pre_compact"],
    json_from_stderr: false,
    unusable: super::spec::takes_any,
    block_needs_reason: false,
};
