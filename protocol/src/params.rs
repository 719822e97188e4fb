//! What the host sends to each stage (`params`), and the tool result shape.
//!
//! These are the typed view an embedding agent uses. On the wire the chain
//! works on the JSON object itself (merge patches apply to it), then decodes
//! back into these types, so a patch that breaks a required field is caught
//! and blamed on the hook that sent it. Every struct keeps unknown keys in
//! `extra` so an agent's own fields pass through hooks untouched.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::lifecycle::LifecycleEvent;
use crate::meta::Meta;

fn is_false(b: &bool) -> bool {
    !*b
}

/// Reads `null` as the field's default. The host never sends `null` for an
/// optional field, but the spec asks every reader to accept it (agents and
/// other hosts do send it), so these types follow their own spec.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// What a tool produced, as the agent feeds it back to the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResult {
    /// The text the model sees.
    pub for_llm: String,
    /// A different text for the human, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_user: Option<String>,
    /// Do not show anything to the human.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub silent: bool,
    /// The tool failed; `for_llm` says why.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub is_error: bool,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolResult {
    /// A successful result with only model-facing text.
    pub fn text(for_llm: impl Into<String>) -> Self {
        Self {
            for_llm: for_llm.into(),
            ..Self::default()
        }
    }
}

/// One chat message in a model request. Only `role` is interpreted; content
/// may be a string or a provider's list of parts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LlmMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The message body.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub content: Value,
    /// Unknown keys (tool_calls, tool_call_id, ...), kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `hook.before_llm` params: the request about to go to the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BeforeLlmParams {
    /// Where the call comes from.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Meta::is_empty"
    )]
    pub meta: Meta,
    /// The model name.
    pub model: String,
    /// The conversation so far.
    #[serde(default, deserialize_with = "null_as_default")]
    pub messages: Vec<LlmMessage>,
    /// Tool definitions offered to the model, in the provider's shape.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tools: Vec<Value>,
    /// Sampling options (temperature, max_tokens, ...).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Map::is_empty"
    )]
    pub options: Map<String, Value>,
    /// The chat channel, when the agent serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The chat id inside that channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The model's answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LlmResponse {
    /// The text of the answer.
    #[serde(default, deserialize_with = "null_as_default")]
    pub content: String,
    /// Tool calls the model asked for, in the provider's shape.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tool_calls: Vec<Value>,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Token usage, in the provider's shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `hook.after_llm` params: the model's answer, before the agent acts on it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfterLlmParams {
    /// Where the call comes from.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Meta::is_empty"
    )]
    pub meta: Meta,
    /// The model that answered.
    pub model: String,
    /// The answer.
    pub response: LlmResponse,
    /// The chat channel, when the agent serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The chat id inside that channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool call: `hook.before_tool` and `hook.approve_tool` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// Where the call comes from.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Meta::is_empty"
    )]
    pub meta: Meta,
    /// The tool's name, e.g. `shell`.
    pub tool: String,
    /// The tool's arguments as the model gave them.
    #[serde(default, deserialize_with = "null_as_default")]
    pub arguments: Map<String, Value>,
    /// The model's id for this call, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The chat channel, when the agent serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The chat id inside that channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `hook.before_tool` params.
pub type BeforeToolParams = ToolCall;
/// `hook.approve_tool` params.
pub type ApproveToolParams = ToolCall;

/// `hook.after_tool` params: a tool call together with what it produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfterToolParams {
    /// Where the call comes from.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Meta::is_empty"
    )]
    pub meta: Meta,
    /// The tool's name.
    pub tool: String,
    /// The arguments it ran with.
    #[serde(default, deserialize_with = "null_as_default")]
    pub arguments: Map<String, Value>,
    /// The model's id for this call, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// What the tool produced.
    pub result: ToolResult,
    /// How long the tool ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The chat channel, when the agent serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The chat id inside that channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The names of the request events, for the schema of `event`: the other
/// events never arrive as `hook.lifecycle`.
fn request_events(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<Value> = LifecycleEvent::ALL
        .into_iter()
        .filter(|e| e.is_request())
        .map(|e| Value::from(e.as_str()))
        .collect();
    schemars::json_schema!({
        "type": "string",
        "enum": names,
        "description": "The lifecycle event; only request events are sent as hook.lifecycle."
    })
}

/// `hook.lifecycle` params: which lifecycle event happened, and its data.
///
/// `payload` stays an untyped object because each event carries different,
/// all optional, data (spec section 5.9: `source` at session_start, `prompt`
/// at user_prompt_submit, ...) and agents add their own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LifecycleParams {
    /// The event; a request event (see [`LifecycleEvent::is_request`]).
    #[schemars(schema_with = "request_events")]
    pub event: LifecycleEvent,
    /// Where the call comes from.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Meta::is_empty"
    )]
    pub meta: Meta,
    /// Event-specific data; absent means `{}`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub payload: Map<String, Value>,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl LifecycleParams {
    /// Params for `event` with no meta and an empty payload.
    pub fn new(event: LifecycleEvent) -> Self {
        Self {
            event,
            meta: Meta::default(),
            payload: Map::new(),
            extra: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lifecycle_params_keep_unknown_keys_and_default_the_payload() {
        let p: LifecycleParams =
            serde_json::from_value(json!({"event": "turn_start", "x-agent": 1}))
                .expect("valid params");
        assert_eq!(p.event, LifecycleEvent::TurnStart);
        assert!(p.payload.is_empty());
        assert_eq!(p.extra.get("x-agent"), Some(&json!(1)));
        assert_eq!(
            serde_json::to_value(&p).expect("serializes"),
            json!({"event": "turn_start", "payload": {}, "x-agent": 1})
        );
        assert_eq!(
            serde_json::to_value(LifecycleParams::new(LifecycleEvent::SessionStart))
                .expect("serializes"),
            json!({"event": "session_start", "payload": {}})
        );
    }

    #[test]
    fn lifecycle_params_need_a_known_event_and_an_object_payload() {
        let err = LifecycleParams::deserialize(json!({"payload": {}})).unwrap_err();
        assert!(err.to_string().contains("missing field `event`"), "{err}");
        let err = LifecycleParams::deserialize(json!({"event": "boot"})).unwrap_err();
        assert!(err.to_string().contains("unknown variant `boot`"), "{err}");
        let err = LifecycleParams::deserialize(json!({"event": "turn_start", "payload": [1]}))
            .unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }
}
