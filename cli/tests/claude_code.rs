//! The real Claude Code (`@anthropic-ai/claude-code`, pinned in
//! `tests/agents/package.json`, installed by scripts/test with `npm ci`)
//! runs a whole session offline against a fake Anthropic Messages API on
//! loopback, with `hookhost relay` as its PreToolUse command hook. The
//! relay runs the Claude-format hooks of `examples/dialects/claude-code/`
//! through hookhost's chain, and Claude Code must act on the answer: the
//! tool call is refused with the hook's reason, or runs rewritten.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// The pinned Claude Code binary.
fn claude() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/node_modules/.bin/claude");
    assert!(
        bin.exists(),
        "{} is missing: run `npm ci --prefix cli/tests/agents` (scripts/test does)",
        bin.display()
    );
    bin
}

/// The assistant's turn the fake model gives: a Bash call for the
/// scenario named in the prompt, or, once a tool result came back, text.
fn reply_for(body: &Value) -> (Value, &'static str) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = serde_json::to_string(&messages).unwrap();
    let answered = messages.iter().any(|m| {
        m["content"]
            .as_array()
            .is_some_and(|c| c.iter().any(|p| p["type"] == "tool_result"))
    });
    let has_bash = body["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "Bash"));
    let command = if text.contains("SCENARIO-RM") {
        "rm -rf build"
    } else {
        "npm install"
    };
    if has_bash && !answered && text.contains("SCENARIO-") {
        let call = json!({"type": "tool_use", "id": "toolu_01", "name": "Bash",
            "input": {"command": command, "description": "as asked"}});
        return (json!([call]), "tool_use");
    }
    (json!([{"type": "text", "text": "done"}]), "end_turn")
}

/// The Messages API's server-sent events for one assistant turn.
fn sse(content: &Value, stop: &str) -> String {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null,
        "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    ];
    for (i, block) in content.as_array().unwrap().iter().enumerate() {
        let (start, delta) = match block["type"].as_str() {
            Some("text") => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            ),
            _ => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            ),
        };
        events.push(json!({"type": "content_block_start", "index": i, "content_block": start}));
        events.push(json!({"type": "content_block_delta", "index": i, "delta": delta}));
        events.push(json!({"type": "content_block_stop", "index": i}));
    }
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": 1}}),
    );
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// One HTTP request: its path and JSON body.
fn read_request(stream: &TcpStream) -> Option<(String, Value)> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 || h == "\r\n" {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some((path, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

fn answer(mut stream: TcpStream, body: &Value) {
    let (content, stop) = reply_for(body);
    let (kind, payload) = if body["stream"] == true {
        ("text/event-stream", sse(&content, stop))
    } else {
        let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}});
        ("application/json", message.to_string())
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        payload.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(payload.as_bytes());
}

/// A fake Anthropic API on loopback; every request body it got is kept.
fn fake_model() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let kept = kept.clone();
            std::thread::spawn(move || {
                let Some((path, body)) = read_request(&conn) else {
                    return;
                };
                if path.starts_with("/v1/messages") {
                    kept.lock().unwrap().push(body.clone());
                    answer(conn, &body);
                } else {
                    let _ = (&conn).write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    );
                }
            });
        }
    });
    (url, seen)
}

/// A project whose only hook is `hookhost relay`, importing the Claude
/// example hooks; runs `claude -p PROMPT` in it and returns its JSON result
/// and the tool results the model was sent.
fn session(prompt: &str) -> (Value, Vec<Value>) {
    let dir = common::scratch();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/dialects/claude-code");
    let hooks = dir.join("hooks.toml");
    let import = examples
        .join(".claude/settings.json")
        .canonicalize()
        .unwrap();
    std::fs::write(
        &hooks,
        format!(
            "[hooks.import]\nclaude-code = {:?}\n",
            import.display().to_string()
        ),
    )
    .unwrap();
    let relay = format!(
        "'{}' relay --dialect claude-code -c '{}'",
        common::HOOKHOST,
        hooks.display()
    );
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": relay, "timeout": 30}]}]}});
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    std::fs::write(project.join(".claude/settings.json"), settings.to_string()).unwrap();
    let (url, seen) = fake_model();
    let out = Command::new(claude())
        .args([
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ])
        .current_dir(&project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "sk-test-offline")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "claude's output is not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let results = seen
        .lock()
        .unwrap()
        .iter()
        .flat_map(|b| b["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["type"] == "tool_result")
        .collect();
    (result, results)
}

fn text_of(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn claude_code_refuses_the_call_a_relayed_hook_denies() {
    let (result, tool_results) = session("SCENARIO-RM: clean the build folder");
    assert_eq!(result["is_error"], false, "{result}");
    let denied = result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        denied
            .iter()
            .any(|d| d["tool_input"]["command"] == "rm -rf build"),
        "{result}"
    );
    let sent = tool_results
        .first()
        .unwrap_or_else(|| panic!("no tool result reached the model: {result}"));
    assert_eq!(sent["is_error"], true, "{sent}");
    assert!(
        text_of(sent).contains("Blocked: 'rm -rf' is not allowed"),
        "{sent}"
    );
}

#[test]
fn claude_code_runs_the_call_a_relayed_hook_rewrote() {
    let (result, tool_results) = session("SCENARIO-NPM: install the dependencies");
    let sent = tool_results
        .first()
        .unwrap_or_else(|| panic!("no tool result reached the model: {result}"));
    // The example hook turned `npm install` into `npm ci`, and that is what
    // ran: in an empty folder npm ci says it needs a lockfile.
    let text = text_of(sent);
    assert!(text.contains("npm ci"), "the rewritten command ran: {sent}");
    let denied = result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(denied.is_empty(), "{result}");
}
