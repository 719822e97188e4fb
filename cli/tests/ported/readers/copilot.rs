//! GitHub Copilot CLI (github/docs cli-hooks-reference).

use serde_json::{Map, Value, json};

use super::{Answer, json_object, pick, trimmed};
use crate::merge;

/// The event as this agent sends it, before the case's own keys.
pub fn input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"sessionId": "6d0f4b2e-8c1a-4f3d-b5e7-9a2c4e6f8b10",
        "timestamp": 1_767_225_600_000_u64, "cwd": cwd});
    let tool = json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"});
    let transcript = "/home/dev/.copilot/session-state/ported/events.jsonl";
    let extra = match event {
        "preToolUse" | "permissionRequest" => tool,
        "postToolUse" => json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}",
            "toolResult": {"resultType": "success", "textResultForLlm": "ok"}}),
        "postToolUseFailure" => json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}",
            "error": "exit status 1"}),
        "userPromptSubmitted" => json!({"prompt": "hello"}),
        "sessionStart" => json!({"source": "new", "initialPrompt": "hello"}),
        "sessionEnd" => json!({"reason": "complete"}),
        "agentStop" => json!({"transcriptPath": transcript, "stopReason": "end_turn"}),
        "subagentStart" => json!({"transcriptPath": transcript, "agentName": "explore"}),
        "subagentStop" => json!({"transcriptPath": transcript, "agentName": "explore",
            "stopReason": "end_turn"}),
        "notification" => json!({"hook_event_name": "Notification", "message": "Shell completed",
            "title": "Shell completed", "notification_type": "shell_completed"}),
        "preCompact" => json!({"transcriptPath": transcript, "trigger": "manual",
            "customInstructions": ""}),
        "errorOccurred" => json!({"error": {"message": "boom", "name": "Error", "stack": ""},
            "errorContext": "system", "recoverable": true}),
        _ => json!({}),
    };
    merge(&mut v, &extra);
    v
}

// GitHub Copilot CLI, as documented (github/docs
// content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md):
// hook failures (non-zero exits, timeouts) are logged and skipped, except
// exit 2 at permissionRequest (a deny, stdout JSON merged in, stderr
// ignored) and at postToolUseFailure (stderr is recovery guidance, read
// like additionalContext). On
// exit 0: preToolUse permissionDecision (permission),
// permissionDecisionReason (reason), modifiedArgs (updated_input);
// permissionRequest behavior, message, interrupt; agentStop/subagentStop
// decision block + reason (continuation); notification, subagentStart and
// postToolUseFailure additionalContext (context). Other events' output is
// not processed.

pub fn read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    let json = json_object(&a.stdout);
    match (event, a.code) {
        ("permissionRequest", 2) => {
            let mut o = json.unwrap_or_default();
            o.insert("behavior".into(), json!("deny"));
            pick(&o, COPILOT_PERMISSION, &mut out);
        }
        ("postToolUseFailure", 2) => {
            // Recovery guidance reaches the assistant as additional
            // context, whichever way the hook gave it.
            if let Some(g) = trimmed(&a.stderr) {
                out.insert("context".into(), json!(g));
            }
        }
        (_, 0) => read_stdout(event, json.unwrap_or_default(), &mut out),
        _ => {}
    }
    Value::Object(out)
}

const COPILOT_PERMISSION: &[(&str, &str)] = &[
    ("behavior", "behavior"),
    ("message", "message"),
    ("interrupt", "interrupt"),
];

fn read_stdout(event: &str, o: Map<String, Value>, out: &mut Map<String, Value>) {
    match event {
        "preToolUse" => {
            pick(
                &o,
                &[
                    ("permissionDecision", "permission"),
                    ("permissionDecisionReason", "reason"),
                    ("modifiedArgs", "updated_input"),
                ],
                out,
            );
            // modifiedArgs may come as JSON text, as toolArgs does.
            if let Some(Value::String(text)) = out.get("updated_input").cloned()
                && let Ok(v) = serde_json::from_str::<Value>(&text)
            {
                out.insert("updated_input".into(), v);
            }
        }
        "permissionRequest" => pick(&o, COPILOT_PERMISSION, out),
        "agentStop" | "subagentStop" if o.get("decision") == Some(&json!("block")) => {
            let reason = o.get("reason").cloned().unwrap_or(Value::Null);
            out.insert("continuation".into(), reason);
        }
        "notification" | "subagentStart" | "postToolUseFailure" => {
            pick(&o, &[("additionalContext", "context")], out);
        }
        _ => {}
    }
}
