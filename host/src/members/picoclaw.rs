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
//!   PicoClaw hook sends the whole params object back.

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
pub(crate) fn answer(stage: Stage, mut result: Value, hook: &str) -> Value {
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
        );
        assert_eq!(
            got,
            json!({"action": "modify", "result": {"meta": {"session_key": "s"}, "result": {"for_llm": "ipc:x"}}})
        );
        let bare = answer(
            Stage::BeforeLlm,
            json!({"request": {"model": "m", "meta": {"TurnID": ""}}}),
            "h",
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
            assert_eq!(answer(stage, kept.clone(), "h"), kept);
        }
    }
}
