//! Cursor: camelCase event names, some of them for one kind of tool
//! (`beforeShellExecution`), `permission` answers, `followup_message` at
//! stop, `failClosed` and `loop_limit` per hook.

use hookhost_protocol::Stage;

use super::Dialect;
use super::spec::{Casing, Event, Matching, Rewrite, Spec, Stamp, after, for_tools, lc, st};

/// Cursor's agent events, and the Tab and app events as open names.
const EVENTS: &[Event] = &[
    lc("sessionStart", "session_start"),
    lc("sessionEnd", "session_end"),
    st("preToolUse", Stage::BeforeTool),
    after("postToolUse", false),
    after("postToolUseFailure", true),
    lc("subagentStart", "subagent_start"),
    lc("subagentStop", "subagent_stop"),
    for_tools("beforeShellExecution", Stage::BeforeTool, &["shell"]),
    for_tools("afterShellExecution", Stage::AfterTool, &["shell"]),
    for_tools("beforeMCPExecution", Stage::BeforeTool, &["mcp"]),
    for_tools("afterMCPExecution", Stage::AfterTool, &["mcp"]),
    for_tools("beforeReadFile", Stage::BeforeTool, &["read"]),
    for_tools("afterFileEdit", Stage::AfterTool, &["edit", "write"]),
    lc("beforeSubmitPrompt", "user_prompt_submit"),
    lc("preCompact", "pre_compact"),
    lc("stop", "stop"),
    lc("afterAgentResponse", "after_agent_response"),
    lc("afterAgentThought", "after_agent_thought"),
    lc("beforeTabFileRead", "before_tab_file_read"),
    lc("afterTabFileEdit", "after_tab_file_edit"),
    lc("workspaceOpen", "workspace_open"),
];

/// Cursor.
pub(crate) const SPEC: Spec = Spec {
    dialect: Dialect::Cursor,
    events: EVENTS,
    casing: Casing::Snake,
    stamp: Stamp::None,
    env: &[],
    default_timeout_ms: 60_000,
    matching: Matching::ClaudeList,
    rewrite: Rewrite::Replace,
    ask: true,
    tool_halt: true,
    matcher_aliases: &[],
    plain_context: &[],
    json_from_stderr: false,
    unusable: super::spec::takes_any,
    block_needs_reason: false,
};
