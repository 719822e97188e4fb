//! Gemini CLI (google-gemini/gemini-cli `packages/core/src/hooks`).

use serde_json::{Map, Value, json};

use super::{Answer, trimmed};
use crate::merge;

/// The event as this agent sends it, before the case's own keys.
pub fn input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"session_id": "s-ported", "transcript_path": "/tmp/ported-transcript.json",
        "cwd": cwd, "hook_event_name": event, "timestamp": "2026-01-01T00:00:00.000Z"});
    let request =
        json!({"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "hello"}]});
    let extra = match event {
        "BeforeTool" => json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"}}),
        "AfterTool" => json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"},
            "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}}),
        "BeforeAgent" => json!({"prompt": "hello"}),
        "AfterAgent" => {
            json!({"prompt": "hello", "prompt_response": "hi", "stop_hook_active": false})
        }
        "BeforeModel" | "BeforeToolSelection" => json!({"llm_request": request}),
        "AfterModel" => json!({"llm_request": request, "llm_response":
            {"candidates": [{"content": {"role": "model", "parts": ["hi"]}, "finishReason": "STOP"}]}}),
        "SessionStart" => json!({"source": "startup"}),
        "SessionEnd" => json!({"reason": "exit"}),
        "PreCompress" => json!({"trigger": "manual"}),
        "Notification" => {
            json!({"notification_type": "ToolPermission", "message": "m", "details": {}})
        }
        _ => json!({}),
    };
    merge(&mut v, &extra);
    v
}

// Gemini CLI: hookRunner.ts (stdout || stderr, JSON or plain text by exit
// code), hookAggregator.ts (the event's merge, here of the relay's one
// output) and the accessors of types.ts the callers read. Outcome keys:
// block (isBlockingDecision: getEffectiveReason), ask, stop
// (shouldStopExecution: getEffectiveReason), system_message (unless
// suppressOutput), context, tool_input, tail_tool_call, clear_context,
// llm_request, llm_response, tool_config.

fn hook_output(a: &Answer) -> Option<Map<String, Value>> {
    let text = trimmed(&a.stdout).or_else(|| trimmed(&a.stderr))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => {
            let v = match v {
                Value::String(s) => serde_json::from_str::<Value>(&s).ok()?,
                v => v,
            };
            match v {
                Value::Object(o) => Some(o),
                Value::Array(_) => Some(Map::new()),
                _ => None,
            }
        }
        Err(_) => {
            let code = if a.code == -1 { 0 } else { a.code };
            Some(match code {
                0 => json!({"decision": "allow", "systemMessage": text}),
                1 => json!({"decision": "allow", "systemMessage": format!("Warning: {text}")}),
                _ => json!({"decision": "deny", "reason": text}),
            })
            .and_then(|v| v.as_object().cloned())
        }
    }
}

/// hookAggregator's merge of one output for `event`.
fn merge_one(event: &str, o: Map<String, Value>) -> Map<String, Value> {
    match event {
        "BeforeTool" | "AfterTool" | "BeforeAgent" | "AfterAgent" | "SessionStart" => {
            let mut m = o.clone();
            let decision = o.get("decision").and_then(Value::as_str);
            let blocking_or_ask = matches!(decision, Some("block" | "deny" | "ask"));
            if !blocking_or_ask && o.get("continue") != Some(&json!(false)) {
                m.insert("decision".into(), json!("allow"));
            }
            if o.get("continue") != Some(&json!(false)) {
                m.insert("continue".into(), json!(true));
                m.remove("stopReason");
            }
            m
        }
        "BeforeToolSelection" => {
            let tc = o
                .get("hookSpecificOutput")
                .and_then(|h| h.get("toolConfig"))
                .cloned()
                .unwrap_or(Value::Null);
            let mode = match tc.get("mode").and_then(Value::as_str) {
                Some("NONE") => "NONE",
                Some("ANY") => "ANY",
                _ => "AUTO",
            };
            let mut names: Vec<String> = if mode == "NONE" {
                Vec::new()
            } else {
                tc.get("allowedFunctionNames")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            names.sort();
            names.dedup();
            json!({"hookSpecificOutput": {"hookEventName": "BeforeToolSelection",
                "toolConfig": {"mode": mode, "allowedFunctionNames": names}}})
            .as_object()
            .cloned()
            .unwrap()
        }
        _ => o,
    }
}

pub fn read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    let Some(o) = hook_output(a) else {
        return Value::Object(out);
    };
    let m = merge_one(event, o);
    let s = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let reason = || {
        s("stopReason")
            .or(s("reason"))
            .unwrap_or("No reason provided")
            .to_string()
    };
    match s("decision") {
        Some("block" | "deny") => {
            out.insert("block".into(), json!(reason()));
        }
        Some("ask") => {
            out.insert("ask".into(), json!(true));
        }
        _ => {}
    }
    if m.get("continue") == Some(&json!(false)) {
        out.insert("stop".into(), json!(reason()));
    }
    if let Some(msg) = s("systemMessage")
        && m.get("suppressOutput") != Some(&json!(true))
    {
        out.insert("system_message".into(), json!(msg));
    }
    specific(event, m.get("hookSpecificOutput"), &mut out);
    // Every caller checks shouldStopExecution before the decision
    // (client.ts, coreToolHookTriggers.ts, hook-utils.ts): a stop hides it.
    if out.contains_key("stop") {
        out.remove("block");
        out.remove("ask");
    }
    Value::Object(out)
}

fn specific(event: &str, hso: Option<&Value>, out: &mut Map<String, Value>) {
    let Some(h) = hso.and_then(Value::as_object) else {
        return;
    };
    if let Some(c) = h.get("additionalContext").and_then(Value::as_str) {
        out.insert(
            "context".into(),
            json!(c.replace('<', "&lt;").replace('>', "&gt;")),
        );
    }
    let obj = |k: &str| h.get(k).filter(|v| v.is_object()).cloned();
    match event {
        "BeforeTool" => {
            if let Some(v) = obj("tool_input") {
                out.insert("tool_input".into(), v);
            }
        }
        "AfterTool" => {
            if let Some(v) = obj("tailToolCallRequest") {
                out.insert("tail_tool_call".into(), v);
            }
        }
        "AfterAgent" if h.get("clearContext") == Some(&json!(true)) => {
            out.insert("clear_context".into(), json!(true));
        }
        "BeforeModel" => {
            for k in ["llm_request", "llm_response"] {
                if let Some(v) = h.get(k).filter(|v| !v.is_null()) {
                    out.insert(k.into(), v.clone());
                }
            }
        }
        "AfterModel" => {
            let parts = h.get("llm_response").and_then(|r| {
                r.pointer("/candidates/0/content/parts")
                    .and_then(Value::as_array)
                    .filter(|p| !p.is_empty())
            });
            if parts.is_some() {
                out.insert("llm_response".into(), h["llm_response"].clone());
            }
        }
        "BeforeToolSelection" => {
            if let Some(v) = h.get("toolConfig") {
                out.insert("tool_config".into(), v.clone());
            }
        }
        _ => {}
    }
}
