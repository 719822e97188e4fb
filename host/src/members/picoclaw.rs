//! PicoClaw's variant of the wire, spoken to the process hooks of a
//! PicoClaw `.json` config so that a hook written for PicoClaw finds what
//! PicoClaw sent it and is understood as PicoClaw understood it
//! (spec/protocol.md section 15):
//! - `meta` carries PicoClaw's PascalCase keys (Go's `HookMeta` has no
//!   JSON tags) beside hookhost's snake_case ones, always, zero when unknown;
//! - after_tool params carry `duration`, in nanoseconds (Go's
//!   `time.Duration`), beside `duration_ms`;
//! - a payload sent with `continue` is applied, as PicoClaw's
//!   `HookManager` applies it (its `continue` and `modify` share one case);
//! - what the host added is taken out of a hook's payload again, since a
//!   PicoClaw hook sends the whole params object back;
//! - at before_llm, a change to the system messages or to the tool
//!   definitions is undone with a warning, the rest of the rewrite kept
//!   (PicoClaw's `HookManager.applyBeforeLLMControls`).

use hookhost_protocol::Stage;
use serde_json::{Map, Value};

/// PicoClaw's meta keys, each with the snake_case key it is filled from
/// (`TracePath` has none in hookhost; an agent may pass `trace_path`).
const META_KEYS: [(&str, &str); 7] = [
    ("AgentID", "agent_id"),
    ("TurnID", "turn_id"),
    ("ParentTurnID", "parent_turn_id"),
    ("SessionKey", "session_key"),
    ("Iteration", "iteration"),
    ("TracePath", "trace_path"),
    ("Source", "source"),
];

/// The params as PicoClaw would have sent them: PascalCase `meta` keys
/// and, at after_tool, `duration` in nanoseconds. Lifecycle params, which
/// PicoClaw has no stage for, are left alone.
pub(crate) fn params(stage: Stage, params: &Value) -> Value {
    let mut out = params.clone();
    let Some(obj) = out.as_object_mut().filter(|_| stage != Stage::Lifecycle) else {
        return out;
    };
    let meta = obj
        .entry("meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        for (pascal, snake) in META_KEYS {
            let zero = if pascal == "Iteration" {
                Value::from(0)
            } else {
                Value::from("")
            };
            let value = meta.get(snake).cloned().unwrap_or(zero);
            meta.insert(pascal.into(), value);
        }
    }
    if stage == Stage::AfterTool {
        let ms = obj.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
        obj.insert("duration".into(), Value::from(ms.saturating_mul(1_000_000)));
    }
    out
}

/// The hook's result as PicoClaw read it: a payload sent with `continue`
/// (or no action) becomes a `modify`, and the keys [`params`] added are
/// taken out of the payload.
/// `sent` is the params the hook was called with (before [`params`]).
pub(crate) fn answer(stage: Stage, mut result: Value, hook: &str, sent: &Value) -> Value {
    let Some(key) = stage.payload_key() else {
        return result;
    };
    let Some(obj) = result.as_object_mut() else {
        return result;
    };
    let Some(Value::Object(payload)) = obj.get_mut(key) else {
        return result;
    };
    strip_added(stage, payload);
    if stage == Stage::BeforeLlm {
        keep_system_and_tools(payload, sent, hook);
    }
    let continues = match obj.get("action") {
        None | Some(Value::Null) => true,
        Some(Value::String(a)) => a.is_empty() || a == "continue",
        Some(_) => false,
    };
    if continues {
        tracing::debug!(hook = %hook, %stage, "a payload sent with `continue` is applied, as PicoClaw applies it");
        obj.insert("action".into(), Value::from("modify"));
    }
    result
}

/// Takes the PascalCase meta keys and `duration` out of a payload.
fn strip_added(stage: Stage, payload: &mut Map<String, Value>) {
    if let Some(Value::Object(meta)) = payload.get_mut("meta") {
        for (pascal, _) in META_KEYS {
            meta.remove(pascal);
        }
        if meta.is_empty() {
            payload.remove("meta");
        }
    }
    if stage == Stage::AfterTool {
        payload.remove("duration");
    }
}

/// PicoClaw lets a before_llm hook rewrite the request but not the system
/// prompt or the tools the model is offered: when the system messages
/// (each with its position) or the tool definitions differ from what the
/// hook was sent, that part is put back and a warning names the hook;
/// the model, the other messages and the options stay as the hook set
/// them. As in PicoClaw, a changed system prompt puts back the whole
/// message list. Compared as Go decodes them: unknown keys and empty
/// values do not count, and an empty tool list is no tool list.
fn keep_system_and_tools(payload: &mut Map<String, Value>, sent: &Value, hook: &str) {
    type Seen = fn(&Value) -> Vec<Value>;
    let checks: [(&str, Seen, &str); 2] = [
        ("messages", system_messages, "the system prompt"),
        ("tools", tool_definitions, "the tool definitions"),
    ];
    for (key, seen, what) in checks {
        let before = sent.get(key).unwrap_or(&Value::Null);
        if payload
            .get(key)
            .is_some_and(|after| seen(after) != seen(before))
        {
            tracing::warn!(
                hook = %hook,
                "hook `{hook}` attempted to modify {what}; preserving the original {key}, as PicoClaw does"
            );
            payload.remove(key);
        }
    }
}

/// The keys of PicoClaw's `providers.Message` (its JSON tags).
const MESSAGE_KEYS: [&str; 10] = [
    "role",
    "content",
    "model_name",
    "created_at",
    "media",
    "attachments",
    "reasoning_content",
    "system_parts",
    "tool_calls",
    "tool_call_id",
];

/// Each system message with its index, as Go sees it.
fn system_messages(messages: &Value) -> Vec<Value> {
    let Some(list) = messages.as_array() else {
        return Vec::new();
    };
    list.iter()
        .enumerate()
        .filter(|(_, m)| m.get("role").and_then(Value::as_str) == Some("system"))
        .map(|(i, m)| {
            let known = MESSAGE_KEYS
                .iter()
                .filter_map(|k| Some((k.to_string(), go_value(m.get(*k)?)?)))
                .collect::<Map<_, _>>();
            serde_json::json!([i, known])
        })
        .collect()
}

/// The tool definitions as Go's `providers.ToolDefinition` holds them.
fn tool_definitions(tools: &Value) -> Vec<Value> {
    let Some(list) = tools.as_array() else {
        return Vec::new();
    };
    let text = |v: &Value, k: &str| Value::from(v.get(k).and_then(Value::as_str).unwrap_or(""));
    list.iter()
        .map(|t| {
            let f = t.get("function").unwrap_or(&Value::Null);
            let parameters = f.get("parameters").map_or(Value::Null, go_numbers);
            serde_json::json!([
                text(t, "type"),
                text(f, "name"),
                text(f, "description"),
                parameters
            ])
        })
        .collect()
}

/// A value as a Go struct field holds it: `None` for what decodes to the
/// zero value (null, "", 0, false, [], {}), numbers as f64.
fn go_value(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Bool(b) => b.then(|| v.clone()),
        Value::String(s) => (!s.is_empty()).then(|| v.clone()),
        Value::Number(n) => n.as_f64().filter(|f| *f != 0.0).map(Value::from),
        Value::Array(a) => {
            let items: Vec<Value> = a
                .iter()
                .map(|x| go_value(x).unwrap_or(Value::Null))
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(o) => {
            let kept: Map<String, Value> = o
                .iter()
                .filter_map(|(k, x)| Some((k.clone(), go_value(x)?)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
    }
}

/// A `map[string]any` as Go decodes it: every number an f64.
fn go_numbers(v: &Value) -> Value {
    match v {
        Value::Number(n) => n.as_f64().map_or(Value::Null, Value::from),
        Value::Array(a) => Value::Array(a.iter().map(go_numbers).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| (k.clone(), go_numbers(x))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// From PicoClaw pkg/agent/events.go HookMeta (no JSON tags, so its
    /// keys are PascalCase and always present) and hooks.go
    /// ToolResultHookResponse (`duration`, a time.Duration: nanoseconds).
    #[test]
    fn meta_gets_the_pascal_case_keys_and_after_tool_a_duration_in_ns() {
        let sent = params(
            Stage::AfterTool,
            &json!({"meta": {"session_key": "s1", "iteration": 2}, "tool": "x",
                    "result": {"for_llm": ""}, "duration_ms": 12}),
        );
        assert_eq!(
            sent["meta"],
            json!({"session_key": "s1", "iteration": 2, "AgentID": "", "TurnID": "",
                   "ParentTurnID": "", "SessionKey": "s1", "Iteration": 2, "TracePath": "",
                   "Source": ""})
        );
        assert_eq!(sent["duration"], 12_000_000);
        assert_eq!(sent["duration_ms"], 12);
        let before = params(Stage::BeforeTool, &json!({"tool": "x"}));
        assert_eq!(before["meta"]["Iteration"], 0);
        assert!(before.get("duration").is_none());
        let lifecycle = json!({"event": "stop"});
        assert_eq!(params(Stage::Lifecycle, &lifecycle), lifecycle);
    }

    /// From PicoClaw pkg/agent/hooks.go HookManager.BeforeTool (and the
    /// other stages): `continue` and `modify` share one case, so a payload
    /// sent with `continue` is applied; and TestAgentLoop_MountProcessHook_ToolRewrite's
    /// helper, which sends the whole params object back.
    #[test]
    fn a_payload_with_continue_is_applied_and_the_added_keys_are_taken_out() {
        let got = answer(
            Stage::AfterTool,
            json!({"action": "continue", "result": {"meta": {"SessionKey": "s", "session_key": "s"},
                   "result": {"for_llm": "ipc:x"}, "duration": 5}}),
            "h",
            &json!({}),
        );
        assert_eq!(
            got,
            json!({"action": "modify", "result": {"meta": {"session_key": "s"}, "result": {"for_llm": "ipc:x"}}})
        );
        let bare = answer(
            Stage::BeforeLlm,
            json!({"request": {"model": "m", "meta": {"TurnID": ""}}}),
            "h",
            &json!({}),
        );
        assert_eq!(bare, json!({"action": "modify", "request": {"model": "m"}}));
        for kept in [
            json!({"action": "continue"}),
            json!({"action": "abort_turn", "reason": "r", "call": {"tool": "x"}}),
            json!({"approved": true}),
        ] {
            let stage = if kept.get("approved").is_some() {
                Stage::ApproveTool
            } else {
                Stage::BeforeTool
            };
            assert_eq!(answer(stage, kept.clone(), "h", &json!({})), kept);
        }
    }

    /// PicoClaw pkg/agent/hooks.go applyBeforeLLMControls: the system
    /// messages (with their positions) and the tools are put back with a
    /// warning; what Go would decode alike (an empty field left out, 1 for
    /// 1.0) is no change.
    #[test]
    fn before_llm_puts_back_the_system_prompt_and_tools_with_a_warning() {
        use crate::observe::log_budget::capture::Captured;
        let (log, _guard) = Captured::start();
        let sent = json!({"model": "m", "messages": [
                {"role": "system", "content": "sys", "reasoning_content": ""},
                {"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "t", "description": "d",
                "parameters": {"type": "object", "maxItems": 1}}}]});
        let same = json!({"action": "modify", "request": {"model": "x",
            "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
                         {"role": "user", "content": "more"}],
            "tools": [{"type": "function", "function": {"name": "t", "description": "d",
                "parameters": {"type": "object", "maxItems": 1.0}}}]}});
        assert_eq!(answer(Stage::BeforeLlm, same.clone(), "h", &sent), same);
        assert!(!log.text().contains("WARN"), "{}", log.text());
        let moved = json!({"action": "modify", "request": {"model": "x",
            "messages": [{"role": "user", "content": "first"}, {"role": "system", "content": "sys"}],
            "tools": null}});
        assert_eq!(
            answer(Stage::BeforeLlm, moved, "h", &sent),
            json!({"action": "modify", "request": {"model": "x"}})
        );
        let text = log.text();
        assert!(
            text.contains("attempted to modify the system prompt"),
            "{text}"
        );
        assert!(
            text.contains("attempted to modify the tool definitions"),
            "{text}"
        );
    }
}
