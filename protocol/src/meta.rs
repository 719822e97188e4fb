//! `meta`: where a call comes from in the agent's run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Identifies the agent, session and turn a call belongs to, so that a hook
/// can keep per-session state or correlate a tool call with its turn.
///
/// Every field is optional: an embedding agent fills what it knows. Keys are
/// snake_case (PicoClaw's PascalCase meta keys are not part of this protocol).
/// Unknown keys are kept and passed on unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Meta {
    /// The agent instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The conversation or session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// The current turn (one user message and everything it causes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// The turn that spawned this one, for sub-agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_turn_id: Option<String>,
    /// The model/tool loop iteration inside the turn, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    /// What emitted the call (a component name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The session's transcript file, for hooks that read the conversation
    /// (Claude Code, Codex and Gemini CLI hooks get it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// The agent's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The agent's permission mode (`default`, `plan`, `acceptEdits`, ...),
    /// as the agent names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// The model the agent runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The tenant the agent works for, in a multi-tenant agent (GoClaw's
    /// tenants); what a hook's `scope.tenants` is matched against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// The person the agent acts for: what a hook's `scope.users` is
    /// matched against. A gateway sets it (with `tenant_id` and
    /// `agent_id`) from the caller's credential, never from the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Keys this version does not know; kept so nothing is lost in transit.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Meta {
    /// True when nothing at all is set, so the key can be left off the wire.
    pub fn is_empty(&self) -> bool {
        self == &Meta::default()
    }
}
