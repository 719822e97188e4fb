//! The real Claude Code, driven offline: the pinned binary, a fake
//! Anthropic Messages API on loopback (streaming server-sent events) whose
//! turns a test chooses, and a `claude -p` run with nothing from the
//! machine's environment but `PATH`.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// The assistant's next turn for a request body: its content blocks and
/// its stop reason.
pub type Reply = fn(&Value) -> (Value, &'static str);

/// Every request body the fake model was sent.
pub type Seen = Arc<Mutex<Vec<Value>>>;

/// The pinned Claude Code binary.
pub fn claude() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/node_modules/.bin/claude");
    assert!(
        bin.exists(),
        "{} is missing: run `npm ci --prefix cli/tests/agents` (scripts/test does)",
        bin.display()
    );
    bin
}

/// Whether a tool result is among the request's messages: the model has
/// seen its tool call answered.
pub fn answered(body: &Value) -> bool {
    body["messages"].as_array().is_some_and(|messages| {
        messages.iter().any(|m| {
            m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|p| p["type"] == "tool_result"))
        })
    })
}

/// Whether the request offers the Bash tool.
pub fn has_bash(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "Bash"))
}

/// One Bash tool call as the assistant's turn.
pub fn bash_call(command: &str) -> (Value, &'static str) {
    let call = json!({"type": "tool_use", "id": "toolu_01", "name": "Bash",
        "input": {"command": command, "description": "as asked"}});
    (json!([call]), "tool_use")
}

/// A plain text turn that ends it.
pub fn done() -> (Value, &'static str) {
    (json!([{"type": "text", "text": "done"}]), "end_turn")
}

/// The scenario tests' model: a Bash call for the scenario the prompt
/// names (`SCENARIO-CLEAN`: `rm -rf build`; `SCENARIO-WRITE`: `echo
/// original > out.txt`), then text.
pub fn scenario(body: &Value) -> (Value, &'static str) {
    let text = body["messages"].to_string();
    if !has_bash(body) || answered(body) {
        return done();
    }
    if text.contains("SCENARIO-CLEAN") {
        return bash_call("rm -rf build");
    }
    if text.contains("SCENARIO-WRITE") {
        return bash_call("echo original > out.txt");
    }
    done()
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

fn answer(mut stream: TcpStream, body: &Value, reply: &ReplyWith) {
    let (content, stop) = reply(body);
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

/// A reply that may hold state of its own (a closure): what
/// [`fake_model_with`] answers with.
pub type ReplyWith = dyn Fn(&Value) -> (Value, &'static str) + Send + Sync;

/// A fake Anthropic API on loopback answering with `reply`; returns its
/// base URL and every request body it got.
pub fn fake_model(reply: Reply) -> (String, Seen) {
    fake_model_with(Arc::new(reply))
}

/// [`fake_model`] with a closure: a test whose turns depend on data it
/// holds (the differential harness's cases).
pub fn fake_model_with(reply: Arc<ReplyWith>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let (kept, reply) = (kept.clone(), reply.clone());
            std::thread::spawn(move || {
                let Some((_, path, body)) = crate::common::read_http_request(&conn) else {
                    return;
                };
                if path.starts_with("/v1/messages") {
                    kept.lock().unwrap().push(body.clone());
                    answer(conn, &body, &*reply);
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

/// `claude -p PROMPT --output-format json --allowedTools Bash` in
/// `project`, with `home` as its HOME and `model` as its API.
pub fn run(project: &Path, home: &Path, model: &str, prompt: &str) -> Output {
    command(project, home, model, prompt)
        .args(["--allowedTools", "Bash"])
        .output()
        .unwrap()
}

/// `claude -p PROMPT --output-format json` in `project`, with `home` as
/// its HOME and `model` as its API, in the default permission mode: a
/// call that needs the user's permission is refused (there is nobody to
/// ask), unless a hook or a rule allows it.
pub fn command(project: &Path, home: &Path, model: &str, prompt: &str) -> Command {
    let mut command = Command::new(claude());
    command
        .args(["-p", prompt, "--output-format", "json"])
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", model)
        .env("ANTHROPIC_API_KEY", "sk-test-offline")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    command
}

/// Claude's `--output-format json` result.
pub fn result(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "claude's output is not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The tool results the model was sent, in order.
pub fn tool_results(seen: &Seen) -> Vec<Value> {
    seen.lock()
        .unwrap()
        .iter()
        .flat_map(|b| b["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["type"] == "tool_result")
        .collect()
}
