//! A fake OpenAI Responses API on loopback, as the Codex CLI reads it
//! (`wire_api = "responses"`, streaming server-sent events), so a real
//! Codex session runs offline. The first turn answers with one tool call;
//! every request that carries a tool's output gets a final assistant
//! message. Every request body is kept for the test to read.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// The call id of the one tool call the fake model makes.
pub const CALL_ID: &str = "call_hookhost_1";

/// A running fake model.
pub struct FakeModel {
    /// What a `model_providers` entry's `base_url` names.
    pub base_url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeModel {
    /// Serves on an ephemeral loopback port until the test process ends;
    /// `first` is the output item of the first turn.
    pub fn start(first: Value) -> FakeModel {
        FakeModel::start_with(Arc::new(move |body: &Value| {
            let answered = items(body).iter().any(is_tool_output);
            match answered {
                false => first.clone(),
                true => json!({"type": "message", "role": "assistant", "id": "msg_hookhost",
                    "content": [{"type": "output_text", "text": "Done."}]}),
            }
        }))
    }

    /// Serves like [`FakeModel::start`], with `reply` choosing the output
    /// item of each turn from the request body.
    pub fn start_with(reply: Arc<Reply>) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = requests.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (kept, reply) = (kept.clone(), reply.clone());
                std::thread::spawn(move || serve(conn, &kept, &*reply));
            }
        });
        FakeModel { base_url, requests }
    }

    /// Every request body so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// A Codex `config.toml` for an offline session: `model`, served by the
/// fake at `base_url` (key in `HOOKHOST_TEST_OPENAI_KEY`), no retries, no
/// analytics, no update check, no plugins (they resolve github.com and
/// chatgpt.com at start).
pub fn offline_config(model: &str, base_url: &str) -> String {
    format!(
        r#"model = "{model}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake model on loopback"
base_url = "{base_url}"
wire_api = "responses"
env_key = "HOOKHOST_TEST_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

# Plugins resolve github.com and chatgpt.com at start; offline, nothing may.
[features]
plugins = false
"#
    )
}

/// An `exec_command` call (Codex's shell tool; its hooks call it `Bash`).
/// `login: false`: a login shell reads /etc/profile, which resets `PATH`
/// on Debian, and the tests put stand-ins for npm on `PATH`.
pub fn exec_command(cmd: &str) -> Value {
    let arguments = json!({"cmd": cmd, "login": false}).to_string();
    json!({"type": "function_call", "id": "fc_hookhost_1", "call_id": CALL_ID,
        "name": "exec_command", "arguments": arguments})
}

/// An `apply_patch` call, the freeform tool Codex offers a model it has
/// metadata for.
pub fn apply_patch(patch: &str) -> Value {
    json!({"type": "custom_tool_call", "id": "ctc_hookhost_1", "call_id": CALL_ID,
        "name": "apply_patch", "input": patch})
}

/// The input items of a request.
pub fn items(request: &Value) -> Vec<Value> {
    request["input"].as_array().cloned().unwrap_or_default()
}

/// The text of a message or tool output item.
pub fn text(item: &Value) -> String {
    let content = item.get("output").or(item.get("content"));
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether the item is a tool's output (`function_call_output`,
/// `custom_tool_call_output`).
pub fn is_tool_output(item: &Value) -> bool {
    item["type"]
        .as_str()
        .is_some_and(|t| t.ends_with("_output"))
}

/// What chooses the output item of a turn from the request body.
pub type Reply = dyn Fn(&Value) -> Value + Send + Sync;

fn serve(conn: TcpStream, kept: &Mutex<Vec<Value>>, reply: &Reply) {
    let Some((method, path, body)) = crate::common::read_http_request(&conn) else {
        return;
    };
    if method != "POST" || !path.ends_with("/responses") {
        respond(conn, "404 Not Found", "text/plain", "");
        return;
    }
    kept.lock().unwrap().push(body.clone());
    let item = reply(&body);
    respond(conn, "200 OK", "text/event-stream", &sse(item));
}

/// One response as the events Codex acts on: created, the finished output
/// item, completed (with the usage it reads).
fn sse(item: Value) -> String {
    let usage = json!({"input_tokens": 1, "input_tokens_details": null,
        "output_tokens": 1, "output_tokens_details": null, "total_tokens": 2});
    [
        json!({"type": "response.created", "response": {"id": "resp_hookhost"}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": "resp_hookhost", "usage": usage}}),
    ]
    .iter()
    .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
    .collect()
}

fn respond(mut stream: TcpStream, status: &str, kind: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}
