//! docker-agent: snake_case events and answers, hookhost's own command-hook
//! flavour before dialects; the lifecycle names are hookhost's.

use hookhost_protocol::Stage;

use super::Dialect;
use super::spec::{Casing, Event, Matching, Rewrite, Spec, Stamp, lc, st};

/// docker-agent's events.
const EVENTS: &[Event] = &[
    st("pre_tool_use", Stage::BeforeTool),
    st("post_tool_use", Stage::AfterTool),
    st("permission_request", Stage::ApproveTool),
    st("before_llm_call", Stage::BeforeLlm),
    st("after_llm_call", Stage::AfterLlm),
    lc("session_start", "session_start"),
    lc("session_end", "session_end"),
    lc("user_prompt_submit", "user_prompt_submit"),
    lc("turn_start", "turn_start"),
    lc("turn_end", "turn_end"),
    lc("stop", "stop"),
    lc("subagent_start", "subagent_start"),
    lc("subagent_stop", "subagent_stop"),
    lc("pre_compact", "pre_compact"),
    lc("notification", "notification"),
    lc("on_error", "on_error"),
    lc("on_max_iterations", "on_max_iterations"),
    lc("before_compaction", "before_compaction"),
    lc("after_compaction", "after_compaction"),
    lc("on_user_input", "on_user_input"),
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
    plain_context: &["session_start", "after_tool"],
    json_from_stderr: false,
};
