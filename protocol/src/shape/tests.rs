//! The shape checks against the typed decoders they stand in for: on
//! every stage's full params, and on each field (nested ones too) replaced
//! by every kind of JSON value, or removed, the two must agree.

use serde::Deserialize;
use serde_json::{Value, json};

use super::fits;
use crate::params::{AfterLlmParams, AfterToolParams, BeforeLlmParams, LifecycleParams, ToolCall};
use crate::stage::Stage;

fn decodes(stage: Stage, params: &Value) -> bool {
    match stage {
        Stage::BeforeLlm => BeforeLlmParams::deserialize(params).is_ok(),
        Stage::AfterLlm => AfterLlmParams::deserialize(params).is_ok(),
        Stage::BeforeTool | Stage::ApproveTool => ToolCall::deserialize(params).is_ok(),
        Stage::AfterTool => AfterToolParams::deserialize(params).is_ok(),
        Stage::Lifecycle => LifecycleParams::deserialize(params).is_ok(),
    }
}

fn meta() -> Value {
    json!({
        "agent_id": "a", "session_key": "s", "turn_id": "t", "parent_turn_id": "p",
        "iteration": 3, "source": "x", "transcript_path": "/t", "cwd": "/",
        "permission_mode": "default", "model": "m", "tenant_id": "acme", "user_id": "ann", "x-own": [1]
    })
}

/// Every stage with params that set every field.
fn full() -> Vec<(Stage, Value)> {
    let call = json!({
        "meta": meta(), "tool": "shell", "arguments": {"command": "ls"},
        "tool_call_id": "c1", "channel": "cli", "chat_id": "7", "x-agent": true
    });
    let mut after_tool = call.clone();
    after_tool["result"] =
        json!({"for_llm": "ok", "for_user": "ok!", "silent": false, "is_error": true, "x": 1});
    after_tool["duration_ms"] = json!(12);
    vec![
        (Stage::BeforeTool, call.clone()),
        (Stage::ApproveTool, call),
        (Stage::AfterTool, after_tool),
        (
            Stage::BeforeLlm,
            json!({
                "meta": meta(), "model": "m",
                "messages": [{"role": "user", "content": "hi", "name": "n"}, {"role": "tool"}],
                "tools": [{"type": "function"}], "options": {"temperature": 0},
                "channel": "cli", "chat_id": "7", "x": null
            }),
        ),
        (
            Stage::AfterLlm,
            json!({
                "meta": meta(), "model": "m",
                "response": {"content": "hi", "tool_calls": [{}], "finish_reason": "stop",
                             "usage": {"in": 1}, "x": 2},
                "channel": "cli", "chat_id": "7"
            }),
        ),
        (
            Stage::Lifecycle,
            json!({"event": "session_start", "meta": meta(), "payload": {"source": "startup"}}),
        ),
    ]
}

/// What a field is replaced by: every JSON kind, and the edge numbers.
fn replacements() -> Vec<Option<Value>> {
    let mut out = vec![None];
    out.extend(
        [
            json!(null),
            json!("s"),
            json!(""),
            json!("turn_end"),
            json!("session_start"),
            json!(0),
            json!(7),
            json!(-1),
            json!(1.5),
            json!(u64::MAX),
            json!(true),
            json!({}),
            json!({"role": "user"}),
            json!({"for_llm": "x"}),
            json!([]),
            json!([{}]),
            json!([{"role": "user"}]),
            json!(["x"]),
        ]
        .map(Some),
    );
    out
}

/// Every object path inside `v` (top-level keys, and keys of nested
/// objects and of objects inside arrays), as JSON pointers.
fn paths(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = format!("{at}/{k}");
                out.push(p.clone());
                paths(child, p, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                paths(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn replaced(v: &Value, pointer: &str, with: &Option<Value>) -> Value {
    let mut v = v.clone();
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    if let Some(Value::Object(m)) = v.pointer_mut(parent) {
        match with {
            Some(new) => m.insert(key.to_string(), new.clone()),
            None => m.remove(key),
        };
    }
    v
}

#[test]
fn the_shape_checks_accept_exactly_what_the_typed_params_decode() {
    let mut compared = 0;
    for (stage, params) in full() {
        assert!(fits(stage, &params), "{stage}: {params}");
        let mut pointers = Vec::new();
        paths(&params, String::new(), &mut pointers);
        for pointer in &pointers {
            for with in replacements() {
                let v = replaced(&params, pointer, &with);
                assert_eq!(
                    fits(stage, &v),
                    decodes(stage, &v),
                    "{stage} {pointer}: {v}"
                );
                compared += 1;
            }
        }
        for whole in [
            json!(null),
            json!([]),
            json!(["shell"]),
            json!("x"),
            json!({}),
        ] {
            assert_eq!(
                fits(stage, &whole),
                decodes(stage, &whole),
                "{stage}: {whole}"
            );
        }
    }
    assert!(compared > 1000, "{compared}");
}
