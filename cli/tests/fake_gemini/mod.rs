//! A fake Gemini API on loopback, enough for the real Gemini CLI to run a
//! whole session offline (`GOOGLE_GEMINI_BASE_URL` points at it).
//!
//! It answers `POST /v1beta/models/MODEL:generateContent` and
//! `:streamGenerateContent?alt=sse` (server-sent events, one
//! `data: {GenerateContentResponse}` each) and `:countTokens`. A main turn
//! that offers `run_shell_command` and has no tool result yet gets a call
//! of it with the command the test chose; any later turn gets text. Side
//! calls that ask for JSON (the model router's classifier, the next-speaker
//! check) get an object that fits the schema they send. Every request is
//! kept, path and body, for the test to read.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

/// Gemini CLI's user settings (`~/.gemini/settings.json`) for an offline
/// run: API-key auth (the base URL alone selects a gateway auth headless
/// mode refuses), no usage statistics, telemetry, updates or IDE.
pub fn offline_user_settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "ide": {"enabled": false},
    })
}

/// One request Gemini CLI sent.
#[derive(Debug, Clone)]
pub struct Request {
    /// The path with its query, e.g. `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`.
    pub path: String,
    /// The JSON body (`Null` when it was not JSON).
    pub body: Value,
}

impl Request {
    /// The `functionResponse` parts this request carries back to the
    /// model: what the tools answered.
    pub fn function_responses(&self) -> Vec<Value> {
        parts(&self.body)
            .filter_map(|p| p.get("functionResponse").cloned())
            .collect()
    }
}

/// The fake API: its base URL and what it was sent.
pub struct FakeGemini {
    /// `http://127.0.0.1:PORT`, for `GOOGLE_GEMINI_BASE_URL`.
    pub url: String,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl FakeGemini {
    /// Serves on a free loopback port until the test process ends; the
    /// model asks to run `command` with `run_shell_command`.
    pub fn start(command: &str) -> Self {
        let command = command.to_string();
        FakeGemini::start_with(Arc::new(move |body: &Value| shell_turn(body, &command)))
    }

    /// Serves like [`FakeGemini::start`], with `turn` choosing the part of
    /// each main turn (side calls that ask for JSON still get a fill).
    pub fn start_with(turn: Arc<Turn>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (kept, turn) = (kept.clone(), turn.clone());
                std::thread::spawn(move || serve(conn, &*turn, &kept));
            }
        });
        FakeGemini { url, seen }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

/// What chooses the one part of a main turn from the request body.
pub type Turn = dyn Fn(&Value) -> Value + Send + Sync;

fn serve(conn: TcpStream, turn: &Turn, kept: &Mutex<Vec<Request>>) {
    let Some((_, path, body)) = crate::common::read_http_request(&conn) else {
        return;
    };
    let request = Request { path, body };
    kept.lock().unwrap().push(request.clone());
    let (status, kind, payload) = answer(&request, turn);
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        payload.len()
    );
    let mut conn = conn;
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(payload.as_bytes());
}

/// Status line, content type and body for one request.
fn answer(request: &Request, turn: &Turn) -> (&'static str, &'static str, String) {
    let path = request.path.as_str();
    if path.contains(":countTokens") {
        return (
            "200 OK",
            "application/json",
            json!({"totalTokens": 1}).to_string(),
        );
    }
    if !path.contains(":generateContent") && !path.contains(":streamGenerateContent") {
        return ("404 Not Found", "text/plain", String::new());
    }
    let response = json!({
        "candidates": [{"content": {"role": "model", "parts": [part_for(&request.body, turn)]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    });
    if path.contains("alt=sse") {
        (
            "200 OK",
            "text/event-stream",
            format!("data: {response}\r\n\r\n"),
        )
    } else {
        ("200 OK", "application/json", response.to_string())
    }
}

/// The one part of the model's turn: JSON for a side call that asks for
/// it, else what `turn` chooses.
fn part_for(body: &Value, turn: &Turn) -> Value {
    let config = &body["generationConfig"];
    if config["responseMimeType"] == "application/json" {
        let schema = config
            .get("responseJsonSchema")
            .or_else(|| config.get("responseSchema"))
            .unwrap_or(&Value::Null);
        return json!({"text": fill(schema).to_string()});
    }
    turn(body)
}

/// The shell call on the first main turn that offers the shell tool,
/// text after.
fn shell_turn(body: &Value, command: &str) -> Value {
    let offers_shell = body["tools"].as_array().is_some_and(|tools| {
        tools.iter().any(|t| {
            t["functionDeclarations"]
                .as_array()
                .is_some_and(|d| d.iter().any(|f| f["name"] == "run_shell_command"))
        })
    });
    let answered = parts(body).any(|p| p.get("functionResponse").is_some());
    if offers_shell && !answered {
        return json!({"functionCall": {"name": "run_shell_command",
            "args": {"command": command, "description": "as asked"}}});
    }
    json!({"text": "done"})
}

/// Every part of every message of a request.
fn parts(body: &Value) -> impl Iterator<Item = &Value> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
}

/// A value that fits a Gemini response schema. Where a choice is offered
/// it takes `user` (the next-speaker check: the turn is over), else the
/// first; a score is 1 (the router's classifier: a simple task).
fn fill(schema: &Value) -> Value {
    if let Some(choices) = schema["enum"].as_array() {
        let user = choices.iter().find(|c| *c == "user");
        return user.or(choices.first()).cloned().unwrap_or(Value::Null);
    }
    let kind = schema["type"].as_str().unwrap_or("").to_ascii_lowercase();
    match kind.as_str() {
        "object" => {
            let props = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let filled: Map<String, Value> =
                props.iter().map(|(k, s)| (k.clone(), fill(s))).collect();
            Value::Object(filled)
        }
        "array" => json!([]),
        "string" => json!("fake"),
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}
