//! A fake model provider on loopback, speaking both APIs a prompt hook
//! uses (OpenAI chat completions at `/v1/chat/completions`, Anthropic
//! Messages at `/v1/messages`), answering each request with the next of a
//! scripted list of [`Answer`]s (the last one repeats), and keeping every
//! request it was sent.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// One HTTP request as the fake server read it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `POST`, ...
    pub method: String,
    /// The request target.
    pub path: String,
    /// Header names lower-cased, with their values.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`null` when it is not JSON).
    pub body: Value,
}

impl Request {
    /// The value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one HTTP/1.1 request, its body sized by `Content-Length`.
pub fn read_request(stream: &TcpStream) -> Option<Request> {
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let (method, path) = (words.next()?.to_string(), words.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0usize);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// One HTTP/1.1 request read by a fake server: its method, path and JSON
/// body (`null` when the body is not JSON).
pub fn read_http_request(stream: &TcpStream) -> Option<(String, String, Value)> {
    read_request(stream).map(|r| (r.method, r.path, r.body))
}

/// What the fake provider answers one request with.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The forced `decide` call, in the API of the request's path, with
    /// usage of 100 prompt and 20 answer tokens.
    Decide(&'static str, &'static str),
    /// Free text and no tool call (usage 100 + 20).
    Text(&'static str),
    /// A 200 whose body is these bytes.
    Raw(String),
    /// A status with a `Retry-After` header when given, and an error body.
    Status(u16, Option<&'static str>),
    /// Reads the request and never answers.
    Hang,
}

/// A running fake provider.
pub struct FakeProvider {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl FakeProvider {
    /// Starts serving `script` on a free loopback port.
    pub fn start(script: Vec<Answer>) -> FakeProvider {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
        let log = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let Some(req) = read_request(&conn) else {
                    continue;
                };
                let n = {
                    let mut log = log.lock().unwrap();
                    log.push(req.clone());
                    log.len() - 1
                };
                let answer = script.get(n).or(script.last()).cloned();
                let answer = answer.unwrap_or(Answer::Status(500, None));
                std::thread::spawn(move || respond(conn, &req, answer));
            }
        });
        FakeProvider { url, seen }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

fn respond(mut conn: TcpStream, req: &Request, answer: Answer) {
    let anthropic = req.path.ends_with("/messages");
    let (status, extra, body) = match answer {
        Answer::Decide(decision, reason) => {
            let args = json!({"decision": decision, "reason": reason});
            (200, String::new(), tool_call(anthropic, &args).to_string())
        }
        Answer::Text(text) => (200, String::new(), text_answer(anthropic, text).to_string()),
        Answer::Raw(body) => (200, String::new(), body),
        Answer::Status(code, retry) => {
            let extra = retry.map_or(String::new(), |r| format!("Retry-After: {r}\r\n"));
            (
                code,
                extra,
                json!({"error": {"message": "scripted"}}).to_string(),
            )
        }
        Answer::Hang => {
            std::thread::sleep(Duration::from_secs(600));
            return;
        }
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body.as_bytes());
}

fn tool_call(anthropic: bool, args: &Value) -> Value {
    match anthropic {
        true => json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "decide", "input": args}],
            "usage": {"input_tokens": 100, "output_tokens": 20}}),
        false => json!({"object": "chat.completion", "choices": [{"index": 0,
            "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "decide", "arguments": args.to_string()}}]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}}),
    }
}

fn text_answer(anthropic: bool, text: &str) -> Value {
    match anthropic {
        true => json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 100, "output_tokens": 20}}),
        false => json!({"object": "chat.completion", "choices": [{"index": 0,
            "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}}),
    }
}
