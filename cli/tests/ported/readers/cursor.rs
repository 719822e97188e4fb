//! Cursor (https://cursor.com/docs/agent/hooks).

use serde_json::{Map, Value, json};

use super::{Answer, json_object, pick};
use crate::merge;

/// The event as this agent sends it, before the case's own keys.
pub fn input(event: &str, cwd: &str) -> Value {
    let mut v = json!({"conversation_id": "c-ported", "generation_id": "g-1", "model": "claude-4.5-sonnet",
        "hook_event_name": event, "cursor_version": "2.4.0", "workspace_roots": [cwd],
        "user_email": null, "transcript_path": null});
    let extra = match event {
        "preToolUse" => json!({"tool_name": "Shell", "tool_input": {"command": "ls"},
            "tool_use_id": "t-1", "cwd": cwd}),
        "postToolUse" => json!({"tool_name": "Shell", "tool_input": {"command": "ls"},
            "tool_output": "{\"output\":\"ok\"}", "tool_use_id": "t-1", "cwd": cwd, "duration": 5}),
        "beforeShellExecution" => json!({"command": "ls", "cwd": cwd, "sandbox": false}),
        "afterShellExecution" => json!({"command": "ls", "output": "ok", "duration": 5}),
        "beforeMCPExecution" => json!({"tool_name": "get_issue", "tool_input": "{\"id\":1}",
            "command": "npx issues-mcp"}),
        "beforeReadFile" => {
            json!({"file_path": format!("{cwd}/a.txt"), "content": "x", "attachments": []})
        }
        "afterFileEdit" => json!({"file_path": format!("{cwd}/a.txt"), "edits": []}),
        "beforeSubmitPrompt" => json!({"prompt": "hello", "attachments": []}),
        "stop" => json!({"status": "completed", "loop_count": 0}),
        "sessionStart" => json!({"session_id": "c-ported", "is_background_agent": false,
            "composer_mode": "agent"}),
        _ => json!({}),
    };
    merge(&mut v, &extra);
    v
}

// Cursor, as documented (https://cursor.com/docs/agent/hooks): exit 2 is a
// deny; any other non-zero exit is a failed hook (the relay's own entry
// is what the agent reads, so a failure shows as `failed`); on exit 0 the
// JSON keys the event reads: permission, user_message, agent_message
// (before* and preToolUse), updated_input (preToolUse),
// additional_context (context), continue (beforeSubmitPrompt),
// followup_message (followup; stop and subagentStop read only this).

fn keys(event: &str) -> &'static [(&'static str, &'static str)] {
    match event {
        "beforeShellExecution" | "beforeMCPExecution" => &[
            ("permission", "permission"),
            ("user_message", "user_message"),
            ("agent_message", "agent_message"),
        ],
        "beforeReadFile" => &[("permission", "permission")],
        "preToolUse" => &[
            ("permission", "permission"),
            ("user_message", "user_message"),
            ("agent_message", "agent_message"),
            ("updated_input", "updated_input"),
        ],
        "postToolUse" | "postToolUseFailure" | "sessionStart" => {
            &[("additional_context", "context")]
        }
        "beforeSubmitPrompt" => &[("continue", "continue"), ("user_message", "user_message")],
        "stop" | "subagentStop" => &[("followup_message", "followup")],
        _ => &[],
    }
}

pub fn read(event: &str, a: &Answer) -> Value {
    let mut out = Map::new();
    match a.code {
        0 => {
            if let Some(o) = json_object(&a.stdout) {
                pick(&o, keys(event), &mut out);
            }
        }
        2 => {
            out.insert("permission".into(), json!("deny"));
        }
        code => {
            out.insert("failed".into(), json!(code));
        }
    }
    Value::Object(out)
}
